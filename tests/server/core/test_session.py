"""The session layer around a match: subscribers as opaque keys, the frames each audience is given."""

from __future__ import annotations

import gc
import tracemalloc
from typing import Any, Callable

import pytest

from server.core import session as session_module
from server.games import Event
from server.core.match import Match
from server.core.session import Session
from tests.server.conftest import step
from tests.server.conftest import step as table_step
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
        step(session, 0, "watch", watcher, {"table": "t1"})
    session.take_frames()
    players = [Keeper(), Keeper()]
    for i, player in enumerate(players):
        step(session, 0, "join", player, {"table": "t1", "name": f"p{i}"})
    sent = session.take_frames()
    last = {id(sub): frame for sub, frame in sent}
    views = [last[id(w)] for w in watchers]
    assert views[0] is views[1] is views[2]  # the same bytes object, built once
    assert last[id(players[0])] != last[id(players[1])]  # each seat its own


def test_the_session_sends_nothing_itself_and_knows_no_socket():
    session = Session(Match("t1", Sealed.NAME, 2, seed=7))
    player = Keeper()
    step(session, 0, "join", player, {"table": "t1", "name": "p0", "id": 1})
    assert player.frames == [] and [sub for sub, _ in session.take_frames()] == [player, player]


# ---------------------------------------------------------------------- no memory kept per request


def _growth(request: Callable[[], None], times: int = 3000) -> int:
    """The bytes still allocated after ``times`` more requests than a warm-up made (tracemalloc)."""
    for _ in range(300):  # the warm-up: dicts and caches at their size
        request()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(times):
            request()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def test_every_request_repeated_thousands_of_times_keeps_no_memory_per_request():
    """A refused command resent under its key is refused again from data, not by raising the first refusal's
    exception again (each raise grew its traceback: about 3 KB a resend, never given back)."""
    session = Session(Match("t1", Sealed.NAME, 2, seed=7, options={"choose_ms": 10**9}))
    seated, other, stranger, watcher = Keeper(), Keeper(), Keeper(), Keeper()
    now = 0

    def step(kind: str, sub: Keeper, **msg: Any) -> None:
        nonlocal now
        now += 1
        table_step(session, now, kind, sub, {"table": "t1", "id": 1, **msg})
        session.match.take_records()  # as the table does: records to the journal, frames to their connections
        session.take_frames()
        del session.match.history[:]  # what the history keeps is bounded on its own (test_a_live_table_keeps...)
        session_module.forget_old_events(session)

    step("join", seated, name="p0", key="j0")
    step("join", other, name="p1")
    token = session.match.seats[0].token
    step("act", seated, command={"type": "choose", "value": 5}, key="applied")
    refused = session.match.rejected
    requests: dict[str, Callable[[], None]] = {
        "act refused under its key": lambda: step("act", seated, command={"type": "choose", "value": 6}, key="no"),
        "act refused": lambda: step("act", seated, command={"type": "choose", "value": 6}),
        "act applied, resent": lambda: step("act", seated, command={"type": "choose", "value": 5}, key="applied"),
        "act malformed": lambda: step("act", seated, command={"type": "choose", "value": 500}, key="bad"),
        "act unseated": lambda: step("act", stranger, command={"type": "choose", "value": 1}),
        "join again": lambda: step("join", seated, name="p0"),
        "join again by key": lambda: step("join", stranger, name="p0", key="j0"),
        "join full": lambda: step("join", watcher, name="late"),
        "resume": lambda: step("resume", seated, token=token, last_seq=session.match.seq),
        "bad token": lambda: step("resume", stranger, token="x" * 32, last_seq=0),
        "view": lambda: step("view", seated),
        "watch": lambda: step("watch", watcher),
        "leave": lambda: (step("watch", watcher), step("leave", watcher)),
        "detach": lambda: (step("detach", other), step("resume", other, token=session.match.seats[1].token,
                                                           last_seq=session.match.seq)),
        "pause and unpause": lambda: (step("pause_clocks", watcher), step("unpause_clocks", watcher)),
        "unpause refused": lambda: step("unpause_clocks", watcher),
        "expire": lambda: session.expire(now),
    }
    for name, request in requests.items():
        assert _growth(request) < 16 * 1024, name  # the leak was 3000 x 3 KB
    assert session.match.state == "running"
    assert session.match.rejected - refused == 2 * 3300  # each refusal counted, again each time it came


def test_a_live_tables_events_in_memory_are_bounded_in_bytes_and_a_recovered_ones_too(monkeypatch):
    """Gifts sent as fast as allowed kept every event a live table made (up to 4,000): the history is bounded
    in bytes as well as in count, also when a recovered match comes back with all its events replayed."""
    monkeypatch.setattr(session_module, "HISTORY_BYTES", 20_000)
    session = Session(Match("t1", "parsimonia", 2, seed=3))
    seats = [Keeper(), Keeper()]
    records = [session.match.header()]
    for i, seat in enumerate(seats):
        step(session, 0, "join", seat, {"table": "t1", "name": f"p{i}"})
    for n in range(1, 3001):
        command = {"type": "give", "to": 1 - n % 2, "amount": 1}
        step(session, n, "act", seats[n % 2], {"table": "t1", "command": command})
        records += session.match.take_records()
        session.take_frames()
        session_module.forget_old_events(session)
        assert session.history_bytes <= 2 * 20_000
    assert session.match.seq == 3001 and session.match.history[-1][0] == 3001  # the latest kept, the oldest gone
    assert 20_000 // 500 < len(session.match.history) < 2 * 20_000 // session_module.EVENT_BYTES
    # what it counts is at least what the events hold (tracemalloc: ~430 bytes a gift event)
    gc.collect()
    tracemalloc.start()
    kept = [(seq, at, Event(e.type, e.at, dict(e.data))) for seq, at, e in session.match.history]
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert held <= session.history_bytes, (held, session.history_bytes, len(kept))

    recovered = Session(Match.replay(records))
    assert len(recovered.match.history) == 3001
    session_module.forget_old_events(recovered)
    assert recovered.history_bytes <= 20_000 and recovered.match.history[-1][0] == 3001
