"""The session layer around a match: subscribers as opaque keys, the frames each audience is given."""

from __future__ import annotations

import pytest

from server.match import Match
from server.session import Session
from tests.toy_game import Sealed, toy  # noqa: F401 (the fixture)

pytestmark = pytest.mark.usefixtures("toy")


class Keeper:
    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def send(self, frame: bytes) -> None:
        self.frames.append(frame)


def test_spectators_of_a_step_share_one_encoded_view_frame():
    session = Session(Match("t1", Sealed.NAME, 2, seed=7))
    watchers = [Keeper(), Keeper(), Keeper()]
    for watcher in watchers:
        session.step(0, "watch", watcher, {"table": "t1"})
    session.take_frames()
    players = [Keeper(), Keeper()]
    for i, player in enumerate(players):
        session.step(0, "join", player, {"table": "t1", "name": f"p{i}"})
    sent = session.take_frames()
    last = {id(sub): frame for sub, frame in sent}
    views = [last[id(w)] for w in watchers]
    assert views[0] is views[1] is views[2]  # the same bytes object, built once
    assert last[id(players[0])] != last[id(players[1])]  # each seat its own


def test_the_session_sends_nothing_itself_and_knows_no_socket():
    session = Session(Match("t1", Sealed.NAME, 2, seed=7))
    player = Keeper()
    session.step(0, "join", player, {"table": "t1", "name": "p0", "id": 1})
    assert player.frames == [] and [sub for sub, _ in session.take_frames()] == [player, player]
