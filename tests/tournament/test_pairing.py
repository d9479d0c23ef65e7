"""Pairing: balanced table sizes, Swiss rounds, round-robin pods and the first-player rotation."""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations

import pytest
from hypothesis import given, settings, strategies as st

from server.tournament.pairing import History, next_round, round_robin_round, swiss_round, table_sizes


def play(tables: list[list[int]], history: History) -> None:
    for table in tables:
        history.add(table)


def seat0_counts(history: History, entrants: list[int]) -> list[int]:
    return [history.seat_count(e, 0) for e in entrants]


@pytest.mark.parametrize(
    ("players", "preferred", "sizes"),
    [(12, 4, [4, 4, 4]), (13, 4, [5, 4, 4]), (7, 6, [4, 3]), (2, 2, [2]), (2, 6, [2]), (3, 2, [3]), (5, 4, [5]),
     (6, 4, [3, 3]), (10, 4, [4, 3, 3]), (17, 6, [6, 6, 5])],
)
def test_table_sizes_are_balanced_around_the_preferred_size(players, preferred, sizes):
    assert table_sizes(players, preferred) == sizes


@given(st.integers(2, 300), st.integers(2, 6))
def test_table_sizes_seat_everyone_at_balanced_tables_of_two_to_six(players, preferred):
    sizes = table_sizes(players, preferred)
    assert sum(sizes) == players
    assert all(2 <= s <= 6 for s in sizes) and max(sizes) - min(sizes) <= 1
    assert sizes == sorted(sizes, reverse=True)
    if players >= preferred:
        # within one of the preferred size, unless too few players for two such tables (7 at 5: 4 + 3)
        assert all(abs(s - preferred) <= 1 for s in sizes) or len(sizes) == 1 or preferred == 6 \
            or players < 2 * (preferred - 1)


@pytest.mark.parametrize(("players", "preferred"), [(1, 4), (0, 2), (8, 1), (8, 7)])
def test_table_sizes_refuse_a_lone_player_or_a_size_outside_two_to_six(players, preferred):
    with pytest.raises(ValueError):
        table_sizes(players, preferred)


def test_a_first_swiss_round_seats_tables_straight_down_the_standings():
    tables = swiss_round(list(range(1, 13)), History(), [4, 4, 4])
    assert [sorted(t) for t in tables] == [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]
    assert [t[0] for t in tables] == [1, 5, 9]  # level on seats: the better standing goes first


def test_swiss_separates_entrants_who_met_with_the_smallest_move_down_the_standings():
    history = History.from_tables([[1, 2]])
    tables = swiss_round(list(range(1, 9)), history, [2, 2, 2, 2])
    assert [sorted(t) for t in tables] == [[1, 3], [2, 4], [5, 6], [7, 8]]


def test_swiss_repeats_a_meeting_only_when_it_cannot_be_avoided():
    # 12 at tables of 4: round 2 must put two former tablemates together at each table, never more.
    history = History()
    play(swiss_round(list(range(12)), history, [4, 4, 4]), history)
    round2 = swiss_round(list(range(12)), history, [4, 4, 4])
    assert [sum(history.meetings(a, b) for a, b in combinations(t, 2)) for t in round2] == [1, 1, 1]


def test_the_entrant_who_has_gone_first_least_gets_seat_zero_then_each_seat_goes_to_whoever_sat_there_least():
    history = History.from_tables([[1, 2, 3], [2, 1, 3], [3, 2, 1]])
    # seat 0: 4 never had it; seat 1: 3 never had it; seat 2: 2 never had it
    assert swiss_round([1, 2, 3, 4], history, [4]) == [[4, 3, 2, 1]]


def test_a_tie_for_a_seat_goes_to_the_better_standing():
    history = History.from_tables([[3, 2, 1]])
    assert swiss_round([1, 2, 3], history, [3]) == [[1, 3, 2]]
    assert swiss_round([2, 1, 3], history, [3]) == [[2, 1, 3]]


@settings(max_examples=40, deadline=None)
@given(st.integers(4, 24), st.integers(2, 6), st.integers(1, 6), st.randoms(use_true_random=False))
def test_swiss_seats_everyone_once_and_rotates_seat_zero_fairly(players, preferred, rounds, rnd):
    entrants = list(range(100, 100 + players))
    sizes = table_sizes(players, preferred)
    history = History()
    for _ in range(rounds):
        order = entrants[:]
        rnd.shuffle(order)  # any standings
        tables = swiss_round(order, history, sizes)
        assert sorted(len(t) for t in tables) == sorted(sizes)
        assert sorted(e for t in tables for e in t) == entrants
        play(tables, history)
        counts = seat0_counts(history, entrants)
        assert max(counts) - min(counts) <= 1


@settings(max_examples=20, deadline=None)
@given(st.integers(2, 4), st.integers(1, 3), st.randoms(use_true_random=False))
def test_swiss_needs_no_repeat_meeting_in_three_rounds_with_more_tables_than_seats(size, extra_tables, rnd):
    entrants = list(range((size + extra_tables) * size))
    history = History()
    for _ in range(3):
        order = entrants[:]
        rnd.shuffle(order)
        play(swiss_round(order, history, [size] * (size + extra_tables)), history)
    assert max(history.met.values()) == 1


def test_swiss_spreads_unavoidable_repeats_over_many_rounds():
    # 12 at tables of 4 for 8 rounds, standings unchanged: 144 seated pairs over 66 pairs (2.2 each)
    entrants = list(range(12))
    history = History()
    for _ in range(8):
        play(swiss_round(entrants, history, [4, 4, 4]), history)
    assert {history.meetings(a, b) for a, b in combinations(entrants, 2)} <= {1, 2, 3, 4}


@pytest.mark.parametrize(("players", "rounds"), [(4, 3), (6, 5), (8, 7)])
def test_a_round_robin_of_two_seat_tables_pairs_everyone_with_everyone_once(players, rounds):
    entrants = list(range(1, players + 1))
    history = History()
    for played in range(rounds):
        play(round_robin_round(entrants, history, [2] * (players // 2), rounds - played, seed=3), history)
    assert {history.meetings(a, b) for a, b in combinations(entrants, 2)} == {1}


@pytest.mark.parametrize(("players", "size", "rounds", "best"), [(8, 4, 3, 60), (6, 3, 5, 70), (8, 4, 7, 252)])
def test_a_round_robin_spreads_meetings_as_evenly_as_the_best_schedule(players, size, rounds, best):
    # best: the least sum over pairs of meetings squared (a pair that never met counting 1), found by brute force
    entrants = list(range(players))
    history = History()
    for played in range(rounds):
        play(round_robin_round(entrants, history, table_sizes(players, size), rounds - played, seed=1), history)
    assert sum(max(1, history.meetings(a, b) ** 2) for a, b in combinations(entrants, 2)) == best


@settings(max_examples=15, deadline=None)
@given(st.integers(3, 9), st.integers(2, 6), st.integers(1, 4), st.integers(0, 2**32))
def test_round_robin_seats_everyone_once_and_rotates_seat_zero(players, preferred, rounds, seed):
    entrants = list(range(players))
    sizes = table_sizes(players, preferred)
    history = History()
    for played in range(rounds):
        tables = round_robin_round(entrants, history, sizes, rounds - played, seed)
        assert sorted(len(t) for t in tables) == sorted(sizes)
        assert sorted(e for t in tables for e in t) == entrants
        play(tables, history)
        counts = seat0_counts(history, entrants)
        assert max(counts) - min(counts) <= 1


def test_round_robin_replans_around_an_entrant_who_dropped():
    entrants = list(range(1, 9))
    history = History()
    play(round_robin_round(entrants, history, [2, 2, 2, 2], 7, seed=1), history)
    left = entrants[:-2]  # two drop after round 1: 6 left for 5 more rounds
    for played in range(5):
        play(round_robin_round(left, history, [2, 2, 2], 5 - played, seed=1), history)
    assert all(history.meetings(a, b) >= 1 for a, b in combinations(left, 2))
    assert max(history.meetings(a, b) for a, b in combinations(left, 2)) <= 2


def test_next_round_is_deterministic_for_a_seed_and_shuffles_round_one_by_it():
    entrants = list(range(1, 17))
    first = next_round("swiss", entrants, History(), 4, 3, seed=5)
    assert first == next_round("swiss", entrants, History(), 4, 3, seed=5)
    assert first != next_round("swiss", entrants, History(), 4, 3, seed=6)
    assert sorted(e for t in first for e in t) == entrants


def test_next_round_plays_round_robin_pods_for_a_small_field_or_when_asked():
    history = History()
    entrants = list(range(1, 7))
    for played in range(5):
        play(next_round("swiss", entrants, history, 3, 5 - played, seed=2), history)  # 6 <= 2 * 3
    assert Counter(history.meetings(a, b) for a, b in combinations(entrants, 2)) in (
        Counter({2: 8, 1: 4, 3: 2, 4: 1}), Counter({1: 5, 2: 5, 3: 5}))  # the optimum spreads (brute force)
    rr = next_round("round_robin", list(range(1, 21)), History(), 4, 3, seed=2)
    assert sorted(len(t) for t in rr) == [4] * 5


def test_a_pairing_refuses_an_entrant_listed_twice_or_sizes_that_do_not_fit():
    with pytest.raises(ValueError):
        swiss_round([1, 1, 2, 3], History(), [4])
    with pytest.raises(ValueError):
        swiss_round([1, 2, 3], History(), [4])
    with pytest.raises(ValueError):
        round_robin_round([1, 2, 3, 4, 5, 6, 7], History(), [7], 1, 0)


def test_swiss_seats_a_big_field_for_several_rounds_without_a_repeat_meeting():
    entrants = list(range(60))
    history = History()
    rnd = random.Random(0)
    for _ in range(5):
        rnd.shuffle(entrants)
        play(swiss_round(entrants, history, table_sizes(60, 4)), history)
    assert max(history.met.values()) == 1
