"""Exports: the JSON document, the CSV files and the replay copies, in a fixed order."""

from __future__ import annotations

import csv
import json

import pytest

from server.tournament.export import tournament_document, write_exports
from server.tournament.roster import Entrant, Roster
from server.tournament.store import Snapshot, Store

ROSTER = Roster("Export cup", (Entrant("Ada"), *(Entrant(n, ("bot", "{token}")) for n in ("Bo", "Cy", "Di"))),
                rounds=2, table_size=2, points=(6, 3, 0, 0, 0, 0))


@pytest.fixture
def snapshot(tmp_path) -> Snapshot:
    with Store(tmp_path / "t.sqlite") as store:
        store.begin(ROSTER, seed=1)
        store.start_round(1, [[1, 2], [3, 4]], [101, 102])
        store.table_started(1, 1, "t1", ["a", "b"], watched=True)
        store.table_started(1, 2, "t2", ["c", "d"])  # who connected is not known: nobody forfeits
        store.seat_seen("t1", 0)  # Ada played round 1 ...
        store.seat_seen("t1", 1)
        store.record_result("t1", {"scores": [700, 700], "winners": [0, 1], "reason": "clock"})
        store.record_result("t2", {"scores": [100, 900], "winners": [1], "reason": "agreement"})
        store.start_round(2, [[1, 4], [2, 3]], [201, 202])
        store.table_started(2, 1, "t3", ["e", "f"], watched=True)  # ... and has not connected in round 2 yet
        return store.load()


def test_the_document_has_standings_and_every_round_with_places_and_points(snapshot):
    doc = tournament_document(snapshot)
    assert (doc["name"], doc["format"], doc["state"], doc["rounds_planned"]) == ("Export cup", "swiss", "running", 2)
    assert [(e["name"], e["points"], e["score"], e["games"], e["kind"]) for e in doc["entrants"]] == [
        ("Di", 6, 900, 1, "bot"), ("Ada", 4.5, 700, 1, "human"), ("Bo", 4.5, 700, 1, "bot"), ("Cy", 3, 100, 1, "bot")]
    first, second = doc["rounds"]
    assert first["finished"] and not second["finished"]
    shared = first["tables"][0]
    assert (shared["server_table"], shared["reason"], shared["replay"]) == ("t1", "clock", "replays/t1.journal")
    assert [(s["name"], s["place"], s["points"], s["no_show"]) for s in shared["seats"]] == [
        ("Ada", 1, 4.5, False), ("Bo", 1, 4.5, False)]
    running, pending = second["tables"]
    assert (running["state"], running["reason"], running["replay"]) == ("running", None, None)
    assert running["seats"][0] == {"seat": 0, "name": "Ada", "score": None, "place": None, "points": None,
                                   "no_show": True}
    assert (pending["state"], pending["server_table"]) == ("pending", None)


def test_the_document_is_plain_json(snapshot):
    doc = tournament_document(snapshot)
    assert json.loads(json.dumps(doc)) == doc


def test_write_exports_writes_json_and_csv_files_in_standings_and_game_order(snapshot, tmp_path):
    out = tmp_path / "export"
    written = write_exports(snapshot, out)
    assert [p.name for p in written] == ["tournament.json", "standings.csv", "results.csv"]
    assert json.loads((out / "tournament.json").read_text()) == tournament_document(snapshot)
    with (out / "standings.csv").open() as f:
        standings = list(csv.DictReader(f))
    assert [(r["rank"], r["name"], r["points"]) for r in standings] == [
        ("1", "Di", "6"), ("2", "Ada", "4.5"), ("2", "Bo", "4.5"), ("4", "Cy", "3")]
    with (out / "results.csv").open() as f:
        results = list(csv.DictReader(f))
    assert [(r["round"], r["table"], r["server_table"], r["seat"], r["name"], r["score"], r["place"], r["points"],
             r["no_show"]) for r in results] == [
        ("1", "1", "t1", "0", "Ada", "700", "1", "4.5", "False"),
        ("1", "1", "t1", "1", "Bo", "700", "1", "4.5", "False"),
        ("1", "2", "t2", "0", "Cy", "100", "2", "3", ""), ("1", "2", "t2", "1", "Di", "900", "1", "6", "")]


def test_writing_the_same_tournament_twice_gives_the_same_bytes(snapshot, tmp_path):
    write_exports(snapshot, tmp_path / "a")
    write_exports(snapshot, tmp_path / "b")
    for name in ("tournament.json", "standings.csv", "results.csv"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_finished_games_replay_files_are_copied_beside_the_exports(snapshot, tmp_path):
    replays = tmp_path / "server-data" / "replays"
    replays.mkdir(parents=True)
    (replays / "t1.journal").write_bytes(b"journal of t1")
    (replays / "t3.journal").write_bytes(b"t3 is still being played")
    written = write_exports(snapshot, tmp_path / "export", replays=replays)
    assert (tmp_path / "export" / "replays" / "t1.journal").read_bytes() == b"journal of t1"
    assert not (tmp_path / "export" / "replays" / "t2.journal").exists()  # no such file on the server
    assert not (tmp_path / "export" / "replays" / "t3.journal").exists()  # not finished
    assert written[-1] == tmp_path / "export" / "replays" / "t1.journal"


def test_a_no_show_is_last_at_the_table_with_no_points_in_the_exports(tmp_path):
    """Bea never opened her link: no points, last place, in the document and in results.csv (#38)."""
    roster = Roster("No-show cup", (Entrant("Ada"), Entrant("Bea"), Entrant("Cy", ("bot", "{token}"))), rounds=2,
                    table_size=3)
    with Store(tmp_path / "t.sqlite") as store:
        store.begin(roster, seed=1)
        store.start_round(1, [[2, 1, 3]], [101])
        store.table_started(1, 1, "t1", ["b", "a", "c"], watched=True)
        store.seat_seen("t1", 1)
        store.seat_seen("t1", 2)
        store.record_result("t1", {"scores": [1000, 800, 1200], "winners": [2], "reason": "clock"})
        doc = tournament_document(store.load())
    seats = doc["rounds"][0]["tables"][0]["seats"]
    assert [(s["name"], s["place"], s["points"], s["no_show"]) for s in seats] == [
        ("Bea", 3, 0, True), ("Ada", 2, 3, False), ("Cy", 1, 6, False)]
    assert [(e["name"], e["points"]) for e in doc["entrants"]] == [("Cy", 6), ("Ada", 3), ("Bea", 0)]
