"""The SQLite store: what is written reads back, results count once, and a restarted director knows where it was."""

from __future__ import annotations

import sqlite3
from dataclasses import replace

import pytest

from server.tournament.roster import Entrant, Roster
from server.tournament.store import Store, StoreError

ROSTER = Roster(
    name="Test cup",
    entrants=(Entrant("Ada"), *(Entrant(f"bot-{i}", ("parsimonia", "bot", "greedy", "{token}")) for i in range(1, 8))),
    rounds=2,
    table_size=4,
    options={"game_ms": 1200000, "quiet_floor_ms": 5000, "grace_ms": 250},  # as read: Ada is a person
)


def result(scores: list[int], winners: list[int]) -> dict:
    return {"scores": scores, "winners": winners, "reason": "clock", "turns": 9}


@pytest.fixture
def path(tmp_path):
    return tmp_path / "data" / "tournament.sqlite"


def play_round_one(store: Store) -> None:
    store.start_round(1, [[1, 2, 3, 4], [5, 6, 7, 8]], [101, 102])
    store.table_started(1, 1, "t1", ["k1", "k2", "k3", "k4"])
    store.table_started(1, 2, "t2", ["k5", "k6", "k7", "k8"])
    store.record_result("t1", result([900, 500, 500, 100], [0]))


def test_a_new_store_holds_the_roster_seed_and_entrants_in_roster_order(path):
    with Store(path) as store:
        snap = store.begin(ROSTER, seed=42)
    assert snap.roster == ROSTER and snap.seed == 42 and snap.seeded and snap.state == "running"
    assert [(e.id, e.name, e.kind) for e in snap.entrants][:2] == [(1, "Ada", "human"), (2, "bot-1", "bot")]
    assert snap.entrants[1].bot == ("parsimonia", "bot", "greedy", "{token}")
    assert (snap.current_round, snap.between_rounds, snap.rounds_left) == (0, True, 2)


def test_without_a_seed_the_tournament_gets_a_random_one_and_random_table_seeds(tmp_path):
    snaps = []
    for run in ("a", "b"):
        with Store(tmp_path / run / "t.sqlite") as store:
            snaps.append(store.begin(ROSTER, seed=None))
    assert not any(s.seeded for s in snaps) and snaps[0].seed != snaps[1].seed
    assert snaps[0].table_seeds(1, 2) != snaps[0].table_seeds(1, 2)  # drawn anew, not derived


def test_with_a_seed_the_table_seeds_are_reproducible_in_the_same_directory_only(tmp_path):
    seeds, seatings = [], []
    for run in ("a", "a", "b"):  # the directory's secret is made once, in a
        with Store(tmp_path / run / f"t{len(seeds)}.sqlite") as store:
            snap = store.begin(ROSTER, seed=7)
            seeds.append(snap.table_seeds(1, 2, store.secret()))
            seatings.append(snap.next_tables())
    assert seeds[0] == seeds[1] and len(set(seeds[0])) == 2
    assert seeds[2] != seeds[0]  # another directory, another secret: other decks
    assert seatings[0] == seatings[1] == seatings[2]  # the roster seed alone makes the seating


def test_the_seeds_of_a_round_are_stored_with_it_and_kept_on_resuming(path):
    with Store(path) as store:
        store.begin(ROSTER, seed=None)
        store.start_round(1, [[1, 2, 3, 4], [5, 6, 7, 8]], [11, 2**63 - 1])
        with pytest.raises(StoreError, match="2 tables, 1 seeds"):
            store.start_round(2, [[1, 2, 3, 4], [5, 6, 7, 8]], [1])
    with Store(path) as store:
        snap = store.begin(ROSTER, seed=None)
    assert [t.seed for t in snap.unfinished_tables()] == [11, 2**63 - 1]


def test_a_file_written_before_table_seeds_opens_with_its_seed_kept_as_the_organisers(path):
    with Store(path) as store:
        store.begin(ROSTER, seed=5)
    old = sqlite3.connect(path)  # as the first files were: without the two columns
    old.executescript("ALTER TABLE tournament DROP COLUMN seeded; ALTER TABLE game_table DROP COLUMN seed;")
    old.close()
    with Store(path) as store:
        snap = store.begin(ROSTER, seed=None)
        secret = store.secret()
        store.start_round(1, [[1, 2, 3, 4], [5, 6, 7, 8]], snap.table_seeds(1, 2, secret))
        tables = store.load().rounds[0].tables
    assert (snap.seed, snap.seeded) == (5, True)
    assert [t.seed for t in tables] == snap.table_seeds(1, 2, secret)


def test_a_held_table_and_the_entrants_seen_at_it_read_back_until_its_clocks_start(path):
    with Store(path) as store:
        store.begin(ROSTER, seed=1)
        store.start_round(1, [[2, 1, 3, 4], [5, 6, 7, 8]], [101, 102])
        store.table_started(1, 1, "t1", ["k1", "k2", "k3", "k4"], held=True, watched=True)
        store.table_started(1, 2, "t2", ["k5", "k6", "k7", "k8"])  # nobody watches who connects
    with Store(path) as store:
        first, second = store.load().rounds[0].tables
        assert (first.held, first.seen, first.no_show(1), first.no_show(0)) == (
            True, (False,) * 4, True, True)  # humans and bots alike
        assert (second.held, second.seen, second.no_show(0)) == (False, (None,) * 4, None)
        store.seat_seen("t1", 1)
        store.seat_seen("t1", 0)
        store.seat_seen("t2", 0)  # not watched: stays not known
        store.clocks_started("t1")
    with Store(path) as store:
        first, second = store.load().rounds[0].tables
    assert (first.held, first.seen, first.no_show(1)) == (False, (True, True, False, False), False)
    assert second.seen == (None,) * 4


def test_a_no_show_forfeits_last_at_the_table_with_no_points_whatever_the_score(path):
    """Ada never connected: her seat's score (a stand-in's, say) was the best, yet she gets nothing (#38)."""
    with Store(path) as store:
        store.begin(ROSTER, seed=1)
        store.start_round(1, [[1, 2, 3, 4], [5, 6, 7, 8]], [101, 102])
        store.table_started(1, 1, "t1", ["k1", "k2", "k3", "k4"], watched=True)
        for seat in (1, 2, 3):
            store.seat_seen("t1", seat)
        store.record_result("t1", result([900, 500, 300, 100], [0]))
        table = store.load().rounds[0].tables[0]
        snap = store.load()
    game = table.game_result()
    assert game.forfeits == (0,)
    assert game.places_and_points(ROSTER.points) == ([4, 1, 2, 3], [0, 6, 3, 1])
    points = {s.name: s.points for s in snap.standings()}
    assert (points["Ada"], points["bot-1"], points["bot-2"], points["bot-3"]) == (0, 6, 3, 1)
    assert [s.name for s in snap.standings() if s.games][-1] == "Ada"


def test_a_game_that_ended_unseen_forfeits_nobody(path):
    """A director that was down while a table played out cannot tell a no-show: its unseen seats become not
    known, and keep their points."""
    with Store(path) as store:
        store.begin(ROSTER, seed=1)
        store.start_round(1, [[1, 2, 3, 4], [5, 6, 7, 8]], [101, 102])
        store.table_started(1, 1, "t1", ["k1", "k2", "k3", "k4"], watched=True)
        store.seat_seen("t1", 1)
        store.record_result("t1", result([900, 500, 300, 100], [0]), seen_known=False)
        table = store.load().rounds[0].tables[0]
    assert table.seen == (None, True, None, None) and table.game_result().forfeits == ()
    assert table.game_result().places_and_points(ROSTER.points)[1] == [6, 3, 1, 0]


def test_a_seat_replaced_by_the_organiser_reads_back_after_reopening(path):
    with Store(path) as store:
        store.begin(ROSTER, seed=1)
        play_round_one(store)
        store.seat_replaced("t2", 2)
    with Store(path) as store:
        second = store.load().rounds[0].tables[1]
    assert second.stand_ins == (False, False, True, False) and second.stand_in(2) and not second.stand_in(0)


def test_tables_seats_tokens_and_results_read_back_after_reopening(path):
    with Store(path) as store:
        store.begin(ROSTER, seed=42)
        play_round_one(store)
    with Store(path) as store:
        snap = store.load()
    (rnd,) = snap.rounds
    first, second = rnd.tables
    assert (rnd.number, rnd.finished) == (1, False)
    assert (first.seats, first.server_table, first.state) == ((1, 2, 3, 4), "t1", "finished")
    assert first.tokens == ("k1", "k2", "k3", "k4")
    assert first.result == result([900, 500, 500, 100], [0])
    assert (second.state, second.result, second.game_result()) == ("running", None, None)
    assert first.game_result().scores == (900, 500, 500, 100) and first.game_result().winners == (0,)


def test_recording_a_result_twice_counts_it_once(path):
    with Store(path) as store:
        store.begin(ROSTER, seed=1)
        play_round_one(store)
        assert store.record_result("t1", result([0, 0, 0, 999], [3])) is False
        snap = store.load()
    ada = next(s for s in snap.standings() if s.name == "Ada")
    assert (ada.points, ada.score, ada.games) == (6, 900, 1)
    assert snap.rounds[0].tables[0].result["scores"] == [900, 500, 500, 100]


def test_a_result_without_dollars_is_ranked_by_its_scores_and_an_old_one_by_its_dollars(path):
    with Store(path) as store:
        store.begin(ROSTER, seed=1)
        store.start_round(1, [[1, 2, 3, 4], [5, 6, 7, 8]], [101, 102])
        store.table_started(1, 1, "t1", ["k1", "k2", "k3", "k4"])
        store.table_started(1, 2, "t2", ["k5", "k6", "k7", "k8"])
        assert store.record_result("t1", {"scores": [1, 4, 2, 3], "winners": [1], "reason": "market_closed"})
        assert store.record_result("t2", {"dollars": [10, 40, 30, 20], "winners": [1], "reason": "clock"})
        snap = store.load()
    assert [t.game_result().scores for t in snap.rounds[0].tables] == [(1, 4, 2, 3), (10, 40, 30, 20)]
    by_name = {s.name: (s.points, s.score) for s in snap.standings()}
    assert by_name["bot-1"] == (6, 4) and by_name["Ada"] == (0, 1) and by_name["bot-5"] == (6, 40)


def test_a_restarted_director_sees_the_round_in_play_and_its_running_tables(path):
    with Store(path) as store:
        store.begin(ROSTER, seed=1)
        play_round_one(store)
    with Store(path) as store:
        snap = store.begin(ROSTER, seed=999)  # resuming keeps the stored seed
    assert (snap.seed, snap.current_round, snap.between_rounds, snap.rounds_left) == (1, 1, False, 1)
    [running] = snap.unfinished_tables()
    assert (running.position, running.server_table, running.tokens) == (2, "t2", ("k5", "k6", "k7", "k8"))


def test_a_round_finishes_with_its_last_result_and_the_next_may_begin(path):
    with Store(path) as store:
        store.begin(ROSTER, seed=1)
        play_round_one(store)
        with pytest.raises(StoreError):
            store.start_round(2, [[1, 5, 2, 6], [3, 7, 4, 8]], [201, 202])  # round 1 still running
        store.record_result("t2", result([1, 2, 3, 4], [3]))
        snap = store.load()
        assert snap.between_rounds and snap.rounds[0].finished and snap.unfinished_tables() == []
        tables = snap.next_tables()
        store.start_round(2, tables, snap.table_seeds(2, len(tables), store.secret()))
        snap = store.load()
    assert snap.current_round == 2 and not snap.between_rounds
    assert [t.state for t in snap.unfinished_tables()] == ["pending", "pending"]
    assert sorted(e for t in snap.rounds[1].tables for e in t.seats) == list(range(1, 9))


def test_pending_tables_of_a_round_survive_a_crash_before_they_exist_on_the_server(path):
    with Store(path) as store:
        store.begin(ROSTER, seed=1)
        store.start_round(1, [[1, 2, 3, 4], [5, 6, 7, 8]], [101, 102])
    with Store(path) as store:
        snap = store.load()
    assert [(t.position, t.state, t.server_table, t.tokens) for t in snap.unfinished_tables()] == [
        (1, "pending", None, (None,) * 4), (2, "pending", None, (None,) * 4)]


def test_history_for_pairing_holds_every_seated_table(path):
    with Store(path) as store:
        store.begin(ROSTER, seed=1)
        play_round_one(store)
        history = store.load().history()
    assert history.meetings(1, 4) == 1 and history.meetings(1, 5) == 0 and history.seat_count(5, 0) == 1


def test_a_dropped_entrant_stays_in_the_standings_but_is_not_paired_again(path):
    with Store(path) as store:
        store.begin(ROSTER, seed=1)
        play_round_one(store)
        store.record_result("t2", result([1, 2, 3, 4], [3]))
        store.drop(8)
        with pytest.raises(StoreError):
            store.drop(8)
        snap = store.load()
    assert snap.entrant(8).dropped_after == 1 and snap.entrant(8).dropped
    assert next(s for s in snap.standings() if s.entrant == 8).dropped
    assert sorted(e for t in snap.next_tables() for e in t) == list(range(1, 8))


def test_a_file_with_another_roster_is_refused(path):
    with Store(path) as store:
        store.begin(ROSTER, seed=1)
    other = Roster("Other cup", ROSTER.entrants, rounds=3)
    with Store(path) as store, pytest.raises(StoreError, match="another roster"):
        store.begin(other, seed=1)


def test_a_typo_in_names_or_bot_commands_is_fixed_mid_event_and_the_entrants_keep_their_places(path):
    with Store(path) as store:
        store.begin(ROSTER, seed=1)
        store.start_round(1, [[1, 2, 3, 4], [5, 6, 7, 8]], [101, 102])
    fixed = list(ROSTER.entrants)
    fixed[0] = Entrant("Ada Lovelace")
    fixed[1] = Entrant("bot-2", ("parsimonia", "bot", "random", "{token}"))  # swaps names with bot-2 ...
    fixed[2] = Entrant("bot-1", ROSTER.entrants[2].bot)  # ... which takes bot-1's
    with Store(path) as store:
        snap = store.begin(replace(ROSTER, entrants=tuple(fixed)), seed=1)
        assert store.renamed == [("Ada", "Ada Lovelace"), ("bot-1", "bot-2"), ("bot-2", "bot-1")]
    assert [(e.id, e.name) for e in snap.entrants[:3]] == [(1, "Ada Lovelace"), (2, "bot-2"), (3, "bot-1")]
    assert snap.entrant(2).bot == ("parsimonia", "bot", "random", "{token}")
    assert snap.rounds[0].tables[0].seats == (1, 2, 3, 4) and snap.roster.entrants == tuple(fixed)
    with Store(path) as store:
        assert store.begin(replace(ROSTER, entrants=tuple(fixed)), seed=1) == snap and store.renamed == []
        turned = (Entrant("Ada Lovelace", ("x", "{token}")), *fixed[1:])  # a human made a bot: not a typo
        with pytest.raises(StoreError, match="only entrants' names and bot commands may change"):
            store.begin(replace(ROSTER, entrants=turned), seed=1)
        with pytest.raises(StoreError, match="another roster"):
            store.begin(replace(ROSTER, entrants=tuple(fixed[:-1])), seed=1)


def test_changes_that_do_not_fit_the_state_are_refused(path):
    with Store(path) as store:
        store.begin(ROSTER, seed=1)
        with pytest.raises(StoreError):
            store.start_round(2, [[1, 2, 3, 4], [5, 6, 7, 8]], [201, 202])  # round 1 first
        store.start_round(1, [[1, 2, 3, 4], [5, 6, 7, 8]], [101, 102])
        with pytest.raises(StoreError):
            store.table_started(1, 1, "t1", ["only one token"])
        store.table_started(1, 1, "t1", ["a", "b", "c", "d"])
        with pytest.raises(StoreError):
            store.table_started(1, 1, "t9", ["a", "b", "c", "d"])  # already running
        with pytest.raises(StoreError):
            store.record_result("t404", result([1], [0]))
        with pytest.raises(StoreError):
            store.record_result("t1", {"reason": "clock"})
        assert store.load().rounds[0].tables[0].tokens == ("a", "b", "c", "d")


def test_the_tournament_state_is_kept(path):
    with Store(path) as store:
        store.begin(ROSTER, seed=1)
        store.set_state("paused")
    with Store(path) as store:
        assert store.load().state == "paused"
