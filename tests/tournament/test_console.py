"""The organiser's screen: standings by score, and every running seat's presence with the humans' tokens."""

from __future__ import annotations

import pytest

from server.tournament.console import progress, render_standings, render_tables, seat_line
from server.tournament.export import tournament_document
from server.tournament.presence import SeatWatch
from server.tournament.roster import Entrant, Roster
from server.tournament.store import Snapshot, Store

ROSTER = Roster("Console cup", (Entrant("Ada"), Entrant("bot-1", ("bot", "{token}")), Entrant("Bo"),
                                Entrant("bot-2", ("bot", "{token}"))), rounds=2, table_size=2)


@pytest.fixture
def snapshot(tmp_path) -> Snapshot:
    with Store(tmp_path / "t.sqlite") as store:
        store.begin(ROSTER, seed=1)
        store.start_round(1, [[1, 2], [3, 4]], [1, 2])
        store.table_started(1, 1, "t1", ["ada-token", "b1-token"], held=True)
        store.table_started(1, 2, "t2", ["bo-token", "b2-token"])
        return store.load()


def test_the_standings_table_has_a_score_column(snapshot):
    lines = render_standings(tournament_document(snapshot)).splitlines()
    assert lines[0] == "Console cup: round 1 of 2, 0 of 2 tables finished"
    assert lines[1].split() == ["#", "name", "points", "score", "games"]


def test_every_running_seat_shows_its_presence_and_every_human_their_token(snapshot):
    watch = SeatWatch(grace_s=300)
    watch.follow("t1", {0: "Ada"}, held=True, now=0)
    watch.update({("t1", 1), ("t2", 0)}, now=10)
    text = render_tables(snapshot, watch, now=10.5)
    assert text.splitlines() == [
        "table t1 (round 1, table 1)  (clocks held for its players: at most 290 s more)",
        "  seat 0  Ada                      human not connected  token ada-token",
        "  seat 1  bot-1                    bot   connected",
        "table t2 (round 1, table 2)",
        "  seat 0  Bo                       human connected      token bo-token",
        "  seat 1  bot-2                    bot   not connected",
    ]
    assert seat_line(snapshot, snapshot.rounds[0].tables[1], 0, watch) == \
        "Bo: table t2, seat 0, token bo-token (connected)"
    assert seat_line(snapshot, snapshot.rounds[0].tables[1], 0, watch, "ws://192.168.1.20:8765") == \
        "Bo: table t2, seat 0, token bo-token (connected): http://192.168.1.20:8765/#t2/bo-token"


def test_without_the_admin_token_presence_is_unknown(snapshot):
    assert "Ada                      human presence unknown  token ada-token" in render_tables(snapshot, None, 0)


def test_the_heading_says_which_round_is_being_played_not_only_the_rounds_finished(snapshot, tmp_path):
    """Not "after round 0 of 2" while round 1 is being played (#38)."""
    doc = tournament_document(snapshot)
    assert progress({**doc, "rounds": []}) == "before round 1 of 2"
    assert progress(doc) == "round 1 of 2, 0 of 2 tables finished"
    with Store(tmp_path / "other.sqlite") as store:
        store.begin(ROSTER, seed=1)
        store.start_round(1, [[1, 2], [3, 4]], [1, 2])
        store.table_started(1, 1, "t1", ["a", "b"])
        store.table_started(1, 2, "t2", ["c", "d"])
        store.record_result("t1", {"scores": [1, 2], "winners": [1]})
        assert progress(tournament_document(store.load())) == "round 1 of 2, 1 of 2 tables finished"
        store.record_result("t2", {"scores": [1, 2], "winners": [1]})
        assert progress(tournament_document(store.load())) == "after round 1 of 2"
