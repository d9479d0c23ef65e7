"""The sans-IO match, driven through its session (server/core/session.py) with list-backed subscribers and integer
time, and replayed from its records: no sockets, no trio."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgpack
import pytest

from protocol import messages
from protocol.errors import ProtocolError
from server.games import GAMES
from server.storage.journal_format import (CmdRecord, EndRecord, JoinRecord, PauseRecord, Record, StartRecord, TickRecord,
                                   UnpauseRecord, decode_record, kind_of)
from server.core.match import OVER, RUNNING, TOKEN_ALPHABET, WAITING, Match, ReplayMismatch
from server.core.session import REPLAY_LIMIT, Session
from tests.server.conftest import step
from tests.toy_game import Sealed, toy  # noqa: F401 (the fixture)


class Inbox:
    """A subscriber that keeps every frame, decoded and checked against the protocol's catalogue."""

    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []

    def send(self, frame: bytes) -> None:
        self.frames.append(messages.check_server(msgpack.unpackb(frame, raw=False)))

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [f for f in self.frames if f["type"] == kind]

    def events(self) -> list[dict[str, Any]]:
        return [f["event"] for f in self.of("event")]


pytestmark = pytest.mark.usefixtures("toy")


def deliver(match: Match) -> None:
    for sub, frame in match.take_frames():
        sub.send(frame)


def request(match: Match, sub: Inbox, kind: str, now: int = 0, **msg: Any) -> None:
    step(match, now, kind, sub, {"table": match.match.id, **msg})
    deliver(match)


def seated(players: int = 2, **options: Any) -> tuple[Match, list[Inbox]]:
    match = Session(Match("t1", Sealed.NAME, players, seed=7, options=options))
    subs = [Inbox() for _ in range(players)]
    for i, sub in enumerate(subs):
        request(match, sub, "join", name=f"p{i}", id=1)
    return match, subs


def test_the_last_join_starts_the_match_and_everyone_gets_static_and_a_view():
    match, subs = seated(3)
    assert match.match.state == RUNNING
    joined = subs[0].of("joined")[0]
    assert joined["game"] == Sealed.NAME and joined["static"] == {} and joined["seat"] == 0
    for seat, sub in enumerate(subs):
        view = sub.of("view")[-1]
        assert view["seat"] == seat and view["private"] == {"mine": None}
        assert [s["name"] for s in view["view"]["seats"]] == ["p0", "p1", "p2"]
        assert view["legal"] == [{"type": "choose", "value": {"min": 0, "max": 100}}]


def test_tokens_are_long_and_never_look_like_an_option():
    match, _ = seated(6)
    for seat in match.match.seats:
        assert len(seat.token) == 32 and set(seat.token) <= set(TOKEN_ALPHABET) and not seat.token.startswith("-")


def test_a_private_event_reaches_its_seat_whole_and_the_others_redacted():
    match, subs = seated(3)
    watcher = Inbox()
    request(match, watcher, "watch", id=2)
    request(match, subs[1], "act", 100, id=3, command={"type": "choose", "value": 42})
    mine = subs[1].events()[-1]
    assert mine == {"type": "chose", "at": 100, "seat": 1, "value": 42}
    for other in (subs[0], subs[2], watcher):
        assert other.events()[-1] == {"type": "chose", "at": 100, "seat": 1}
        assert all(42 not in (f.get("view", {}).get("numbers") or []) for f in other.of("view"))
    assert subs[1].of("view")[-1]["private"] == {"mine": 42}
    assert subs[0].of("view")[-1]["private"] == {"mine": None}
    assert "private" not in watcher.of("view")[-1]


def test_the_acknowledgement_comes_before_the_events_it_caused():
    match, subs = seated(2)
    subs[0].frames.clear()
    request(match, subs[0], "act", 50, id=9, command={"type": "choose", "value": 1})
    kinds = [f["type"] for f in subs[0].frames]
    assert kinds == ["ok", "event", "view"] and subs[0].frames[0]["re"] == 9


def test_a_refused_command_is_answered_and_changes_nothing():
    match, subs = seated(2)
    request(match, subs[0], "act", 10, id=1, command={"type": "choose", "value": 5})
    before, seq = match.match.engine.digest(), match.match.seq
    request(match, subs[0], "act", 20, id=2, command={"type": "choose", "value": 6})
    error = subs[0].of("error")[-1]
    assert error["code"] == "illegal_action" and error["reason"] == "already_chosen" and error["re"] == 2
    assert match.match.engine.digest() == before and match.match.seq == seq and match.match.rejected == 1


def test_the_deadline_gives_the_default_and_the_game_ends_with_a_typed_result():
    match, subs = seated(2, choose_ms=1000)
    request(match, subs[0], "act", 10, id=1, command={"type": "choose", "value": 5})
    assert match.next_deadline() == 1000
    step(match, 1000)
    deliver(match)
    assert match.match.state == OVER
    result = subs[1].events()[-1]["result"]
    assert result["winners"] == [0] and result["scores"] == [5, 0] and result["reason"] == "revealed"
    assert result["game_ms"] == 1000 and result["actions"] == 1


def test_a_resume_replays_the_missed_events_then_a_view_and_tells_the_old_connection():
    match, subs = seated(2)
    token = match.match.seats[0].token
    request(match, subs[1], "act", 10, id=1, command={"type": "choose", "value": 3})
    back = Inbox()
    request(match, back, "resume", 20, id=5, token=token, last_seq=1)
    kinds = [f["type"] for f in back.frames]
    assert kinds == ["resumed", "event", "view"]
    assert back.frames[1]["seq"] == 2 and back.frames[1]["event"] == {"type": "chose", "at": 10, "seat": 1}
    assert subs[0].of("error")[-1]["code"] == "not_seated"
    assert match.seat_of(back).index == 0 and match.seat_of(subs[0]) is None


def test_a_resume_too_far_behind_gets_only_a_view_and_is_told_to_page_the_rest():
    match, subs = seated(2)
    match.match.seq += REPLAY_LIMIT + 5  # as if many events had passed
    back = Inbox()
    request(match, back, "resume", 20, token=match.match.seats[0].token, last_seq=0)
    assert [f["type"] for f in back.frames] == ["resumed", "view"]
    assert back.frames[0]["capped"] is True and back.frames[0]["replayed"] == 0


def test_a_bad_token_is_refused():
    match, _ = seated(2)
    back = Inbox()
    request(match, back, "resume", 20, id=3, token="nope", last_seq=0)
    assert back.frames[-1]["code"] == "bad_token"


def test_a_seat_left_before_the_start_is_freed_and_reused():
    match = Session(Match("t1", Sealed.NAME, 3, seed=1))
    a, b, c = Inbox(), Inbox(), Inbox()
    request(match, a, "join", name="a")
    request(match, b, "join", name="b")
    request(match, a, "leave")
    assert match.match.state == WAITING and [s.index for s in match.match.seats] == [1]
    request(match, c, "join", name="c")
    assert match.seat_of(c).index == 0


def test_pause_stops_the_clocks_and_unpause_shifts_them():
    match, subs = seated(2, choose_ms=1000)
    admin = Inbox()
    request(match, admin, "pause_clocks", 100, id=1)
    assert match.next_deadline() is None and admin.frames[-1]["type"] == "ok"
    request(match, subs[0], "act", 200, id=2, command={"type": "choose", "value": 1})
    assert subs[0].of("error")[-1]["reason"] == "paused"
    request(match, admin, "unpause_clocks", 600, id=3)
    assert match.next_deadline() == 1500
    assert [e["type"] for e in subs[1].events()][-2:] == ["paused", "unpaused"]


def test_a_paused_view_says_when_the_clocks_stopped_and_whether_they_are_held_for_the_players():
    """A page opened while paused draws each deadline minus ``paused_at``: the view's own ``time`` moves on."""
    match, subs = seated(2, choose_ms=1000)
    admin, late = Inbox(), Inbox()
    request(match, admin, "pause_clocks", 100, id=1, hold=True)
    assert subs[0].events()[-1] == {"type": "paused", "at": 100, "hold": True}
    request(match, late, "watch", 40_100, id=2)  # opened 40 s later
    view = late.of("view")[-1]
    assert view["time"] == 40_100 and view["view"]["paused_at"] == 100 and view["view"]["held"] is True
    records = [match.match.header(), *match.match.take_records()]
    assert Session(Match.replay(records)).public_view()["held"] is True  # a restart keeps it a hold
    request(match, admin, "unpause_clocks", 50_000, id=3)
    request(match, admin, "pause_clocks", 50_100, id=4)  # the organiser's own pause
    view = late.of("view")[-1]["view"]
    assert view["paused_at"] == 50_100 and "held" not in view and late.events()[-1] == {"type": "paused", "at": 50_100}
    request(match, admin, "unpause_clocks", 50_200, id=5)
    view = late.of("view")[-1]["view"]
    assert view["paused"] is False and "paused_at" not in view and "held" not in view


def test_after_a_pause_in_a_tulips_set_up_every_view_shows_the_set_up_deadline_the_timer_fires():
    match = Session(Match("t1", "gift-of-tulips", 3, seed=7))
    subs = [Inbox() for _ in range(3)]
    for i, sub in enumerate(subs):
        request(match, sub, "join", name=f"p{i}", id=1)
    admin = Inbox()
    request(match, admin, "pause_clocks", 1000, id=2)
    request(match, admin, "unpause_clocks", 6000, id=3)
    assert match.next_deadline() == 65_000
    for sub in subs:
        view = sub.of("view")[-1]["view"]
        assert view["setup"]["deadline"] == view["deadlines"]["setup"] == 65_000


def test_the_organiser_closes_a_table_with_no_winner():
    match, subs = seated(2)
    request(match, Inbox(), "close_table", 10, id=1)
    result = match.match.result
    assert match.match.state == OVER and result["reason"] == "closed" and result["winners"] == []


def test_a_replay_of_the_records_reaches_the_same_match():
    match, subs = seated(3, choose_ms=5000)
    records = [match.match.header()]
    request(match, subs[2], "act", 10, command={"type": "choose", "value": 9})
    request(match, subs[0], "act", 20, command={"type": "choose", "value": 9})
    request(match, subs[0], "act", 25, command={"type": "choose", "value": 1})  # refused: leaves no record
    request(match, subs[1], "act", 30, command={"type": "choose", "value": 99})
    records += match.match.take_records()
    assert isinstance(records[-1], EndRecord)
    again = Session(Match.replay(records))
    # refusals leave no record: the replay counts none, then takes the count from the recorded result, so that
    # a table recovered after its end tells its seats the result they would have been told
    assert match.match.result["rejected"] == 1 and again.match.result == match.match.result
    assert again.match.rejected == 1
    played = [(s, e.to_wire()) for s, _, e in match.match.history]
    assert [(s, e.to_wire()) for s, _, e in again.match.history] == played
    unfinished = Session(Match.replay(records[:-1]))
    assert {**unfinished.match.result, "rejected": 1} == match.match.result  # without the end record, only what replays
    assert [s.token for s in again.match.seats] == [s.token for s in match.match.seats]


KEY = "a-client-chosen-join-key"


def test_a_join_sent_again_with_its_key_gets_the_same_seat_back_even_once_the_match_started():
    match = Session(Match("t1", Sealed.NAME, 2, seed=7))
    first, other = Inbox(), Inbox()
    request(match, first, "join", name="p0", id=1, key=KEY)  # its `joined` is lost with the connection
    request(match, other, "join", name="p1", id=1)  # the last seat: the match starts
    assert match.match.state == RUNNING
    again = Inbox()
    request(match, again, "join", name="p0", id=2, key=KEY)
    joined = again.of("joined")[0]
    assert joined["seat"] == 0 and joined["token"] == first.of("joined")[0]["token"] and joined["re"] == 2
    assert [e["type"] for e in again.events()] == [e["type"] for e in other.events()]  # the events so far
    assert again.of("view")[-1]["seat"] == 0
    assert [f["code"] for f in first.of("error")] == ["not_seated"]  # the old connection is told


def test_a_join_with_another_key_is_a_new_join_and_the_key_survives_a_replay():
    match = Session(Match("t1", Sealed.NAME, 2, seed=7))
    records = [match.match.header()]
    request(match, Inbox(), "join", name="p0", key=KEY)
    request(match, Inbox(), "join", name="p1")
    stranger = Inbox()
    request(match, stranger, "join", name="p2", id=3, key="another-key-of-sixteen")
    assert [f["code"] for f in stranger.of("error")] == ["table_full"]
    records += match.match.take_records()
    recovered = Session(Match.replay(records))
    back = Inbox()
    request(recovered, back, "join", name="p0", key=KEY)
    assert back.of("joined")[0]["token"] == match.match.seats[0].token


def test_ok_says_which_events_the_command_made():
    match, subs = seated(3, choose_ms=5000)
    before = match.match.seq
    request(match, subs[0], "act", 10, id=4, command={"type": "choose", "value": 9})
    ok = subs[0].of("ok")[-1]
    assert ok == {"type": "ok", "re": 4, "seq": before + 1, "events": 1}
    (chose,) = [f for f in subs[0].of("event") if f["seq"] == ok["seq"]]
    assert chose["event"] == {"type": "chose", "at": 10, "seat": 0, "value": 9}


def test_a_command_sent_again_with_its_key_gets_its_first_answer_and_changes_nothing():
    match, subs = seated(3, choose_ms=5000)
    request(match, subs[0], "act", 10, id=4, key="k1", command={"type": "choose", "value": 9})
    first = subs[0].of("ok")[-1]
    seq, records = match.match.seq, match.match.take_records()
    request(match, subs[0], "act", 11, id=5, key="k1", command={"type": "choose", "value": 9})
    assert subs[0].of("ok")[-1] == {**first, "re": 5}
    assert match.match.seq == seq and match.match.take_records() == [] and match.match.actions == 1
    # a refused command sent again with its key is refused again, the same way, however the table moved on
    request(match, subs[0], "act", 12, id=6, key="k2", command={"type": "choose", "value": 3})
    request(match, subs[0], "act", 13, id=7, key="k2", command={"type": "choose", "value": 3})
    refusals = [f for f in subs[0].of("error") if f.get("re") in (6, 7)]
    assert [(f["code"], f["reason"]) for f in refusals] == [("illegal_action", "already_chosen")] * 2
    assert records[-1] == CmdRecord(10, 0, {"type": "choose", "value": 9}, key="k1")


def test_a_commands_key_answers_the_same_after_a_replay():
    match, subs = seated(3, choose_ms=5000)
    records = [match.match.header(), *match.match.take_records()]
    request(match, subs[1], "act", 10, id=4, key="bid-1", command={"type": "choose", "value": 9})
    first = subs[1].of("ok")[-1]
    records += match.match.take_records()
    recovered = Session(Match.replay(records))
    back = Inbox()
    request(recovered, back, "resume", id=1, token=match.match.seats[1].token, last_seq=recovered.match.seq)
    request(recovered, back, "act", 20, id=9, key="bid-1", command={"type": "choose", "value": 9})
    assert back.of("ok")[-1] == {**first, "re": 9} and recovered.match.seq == match.match.seq


def test_a_seat_keeps_the_answers_of_its_last_256_keys():
    match, subs = seated(2, choose_ms=5000)
    seat = match.match.seats[0]
    for n in range(300):
        seat.remember(f"k{n}", {"seq": n, "events": 0})
    assert len(seat.answers) == 256 and "k43" not in seat.answers and "k44" in seat.answers


def test_a_resume_says_what_follows_and_when_the_server_lost_events_the_client_saw():
    match, subs = seated(3, choose_ms=5000)
    request(match, subs[0], "act", 10, command={"type": "choose", "value": 9})
    seq = match.match.seq
    back = Inbox()
    request(match, back, "resume", id=1, token=match.match.seats[0].token, last_seq=seq - 1)
    assert {k: back.of("resumed")[0][k] for k in ("last_seq", "replayed")} == {"last_seq": seq, "replayed": 1}
    assert "lost" not in back.of("resumed")[0] and "capped" not in back.of("resumed")[0]
    ahead = Inbox()
    request(match, ahead, "resume", id=1, token=match.match.seats[0].token, last_seq=seq + 3)
    resumed = ahead.of("resumed")[0]
    assert (resumed["last_seq"], resumed["replayed"], resumed["lost"]) == (seq, 0, 3)


def test_every_refused_input_changes_and_journals_nothing():
    match = Match("t1", Sealed.NAME, 2, seed=7)
    match.join("p0")
    match.join("p1")
    match.take_records()
    refused = [CmdRecord(1, 0, {"type": "choose", "value": 1}), PauseRecord(1), UnpauseRecord(1),
               JoinRecord("p2", "x" * 32)]
    codes = []
    for record in refused:
        with pytest.raises(ProtocolError) as err:
            match.apply(record)
        codes.append(err.value.code)
    assert codes == ["illegal_action", "bad_field", "bad_field", "table_full"]
    match.apply(StartRecord(5))
    match.apply(CmdRecord(6, 0, {"type": "choose", "value": 1}))
    seq, digest = match.seq, match.engine.digest()
    with pytest.raises(ProtocolError) as err:
        match.apply(CmdRecord(7, 0, {"type": "choose", "value": 2}))  # the rules refuse it
    assert (err.value.code, err.value.reason) == ("illegal_action", "already_chosen")
    assert match.take_records() == [StartRecord(5), CmdRecord(6, 0, {"type": "choose", "value": 1})]
    assert match.seq == seq and match.engine.digest() == digest and len(match.seats) == 2


def test_views_looked_at_while_an_inputs_events_are_numbered_show_what_the_input_made():
    """As a replay's steps look (server.runtime.replay_steps): each event's views, built as it is numbered."""
    match = Match("t1", Sealed.NAME, 2, seed=7, options={"choose_ms": 1000})
    looks: list[bool] = []

    def look(event: Any) -> None:
        if match.engine is not None:
            looks.append(match.views.public(match.engine) == match.engine.public_view() and
                         match.views.private(match.engine, 0) == match.engine.private_view(0))

    match.on_event = look
    match.join("p0")
    match.join("p1")
    for record in (StartRecord(0), CmdRecord(5, 0, {"type": "choose", "value": 4}), TickRecord(1000)):
        match.apply(record)
        look(None)  # as a round of views does between two inputs: the views are kept until the next change
    assert len(looks) >= 6 and all(looks)


def test_an_unpause_that_an_older_journal_calls_resume_replays_as_an_unpause():
    match = Match("t1", Sealed.NAME, 2, seed=7)
    records: list[Record] = [match.header(), JoinRecord("p0", "a" * 32), JoinRecord("p1", "b" * 32), StartRecord(0),
                             PauseRecord(10)]
    older = msgpack.packb({"k": "resume", "at": 40})
    replayed = Match.replay([*records, decode_record(older)])
    assert replayed.paused_at is None and replayed.next_deadline() == Match.replay(
        [*records, UnpauseRecord(40)]).next_deadline()
    assert isinstance(decode_record(older), UnpauseRecord)


def test_a_journal_with_a_refused_command_does_not_replay():
    match, subs = seated(2)
    records = [match.match.header(), *match.match.take_records(),
               CmdRecord(5, 0, {"type": "choose", "value": 1}), CmdRecord(6, 0, {"type": "choose", "value": 2})]
    with pytest.raises(ReplayMismatch, match="record 6"):
        Match.replay(records)


class Broken(Sealed):
    """Changes its state, then fails: a bug in the rules."""

    NAME = "toy-broken"

    def _choose(self, seat: int, value: int) -> None:
        self.choices[seat] = value
        if value == 13:
            raise RuntimeError("unlucky")

    HANDLERS = {"choose": _choose}


@pytest.fixture
def broken() -> Iterator[None]:
    GAMES[Broken.NAME] = Broken
    yield
    del GAMES[Broken.NAME]


def test_a_failing_rule_stops_that_match_with_server_error_and_the_replay_agrees(broken):
    match = Session(Match("t9", Broken.NAME, 2, seed=3))
    subs = [Inbox(), Inbox()]
    for i, sub in enumerate(subs):
        request(match, sub, "join", name=f"p{i}")
    records = [match.match.header()]
    request(match, subs[0], "act", 10, id=4, command={"type": "choose", "value": 13})
    assert match.match.state == OVER and match.match.result["reason"] == "server_error"
    assert isinstance(match.match.failure, RuntimeError)
    assert subs[1].events()[-1]["type"] == "result"
    records += match.match.take_records()
    assert [kind_of(r) for r in records][-2:] == ["cmd", "end"]
    again = Session(Match.replay(records))
    assert again.match.result == match.match.result  # the digest of the half-changed state, reproduced


def test_a_retired_match_still_answers_watch_and_resume_with_the_result():
    match, subs = seated(2, choose_ms=100)
    step(match, 100)
    match.take_frames()
    match.match.retire()
    assert len(match.match.history) == 1
    late = Inbox()
    request(match, late, "resume", 500, token=match.match.seats[1].token, last_seq=0)
    assert [f["type"] for f in late.frames] == ["resumed", "event", "view"]
    assert late.frames[1]["event"]["type"] == "result" and late.frames[1]["seq"] == match.match.seq
    assert late.frames[2]["view"]["result"]["reason"] == "revealed"


def test_bad_options_and_seat_counts_are_refused_before_anyone_joins():
    with pytest.raises(ValueError, match="options.speed: unknown field"):
        Match("t1", Sealed.NAME, 2, 1, options={"speed": 3})
    with pytest.raises(ValueError, match="2 to 6"):
        Match("t1", Sealed.NAME, 9, 1)


def test_the_time_scale_shrinks_the_durations():
    match = Session(Match("t1", Sealed.NAME, 2, 1, time_scale=10, options={"choose_ms": 5000}))
    assert match.match.checked_options == {"choose_ms": 500}
