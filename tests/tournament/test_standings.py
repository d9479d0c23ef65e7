"""Standings: places and points at a table, then the order of the entrants with its tie-breaks."""

from __future__ import annotations

from fractions import Fraction

from server.tournament.standings import (GameResult, compute_standings, finishing_places, number, place_points,
                                         result_scores, table_points)

POINTS = (6, 3, 1, 0, 0, 0)
NAMES = {1: "Ada", 2: "Bo", 3: "Cy", 4: "Di"}


def game(round_: int, seats: tuple[int, ...], scores: tuple[int, ...], winners: tuple[int, ...]) -> GameResult:
    return GameResult(round_, f"t{round_}{seats[0]}", seats, scores, winners)


def test_winners_take_first_place_and_the_rest_follow_by_score():
    assert finishing_places([500, 900, 700, 300], [1]) == [3, 1, 2, 4]


def test_equal_scores_share_a_place_and_the_next_place_is_skipped():
    assert finishing_places([900, 400, 400, 100], [0]) == [1, 2, 2, 4]
    assert place_points([1, 2, 2, 4], POINTS) == [6, 2, 2, 0]  # 2nd and 3rd split: (3 + 1) / 2


def test_shared_wins_share_the_points_of_the_places_they_cover():
    places = finishing_places([800, 800, 300, 100], [0, 1])
    assert places == [1, 1, 3, 4]
    assert place_points(places, POINTS) == [Fraction(9, 2), Fraction(9, 2), 1, 0]


def test_a_three_way_tie_splits_into_thirds_exactly():
    points = place_points(finishing_places([500, 500, 500], [0, 1, 2]), POINTS)
    assert points == [Fraction(10, 3)] * 3 and sum(points) == 10
    assert number(points[0]) == 3.3333 and number(Fraction(9, 2)) == 4.5 and number(Fraction(6)) == 6


def test_a_game_without_winners_is_placed_by_score_alone():
    assert finishing_places([100, 300, 300], []) == [3, 1, 1]


def test_places_beyond_the_points_list_score_nothing():
    assert place_points([1, 2, 3], (5,)) == [5, 0, 0]


def test_standings_total_points_score_and_games_and_order_by_points():
    results = [game(1, (1, 2), (900, 100), (0,)), game(1, (3, 4), (500, 400), (0,)),
               game(2, (1, 3), (200, 800), (1,)), game(2, (2, 4), (600, 600), (0, 1))]
    table = compute_standings(NAMES, results, POINTS)
    assert [(s.name, s.points, s.score, s.games) for s in table] == [
        ("Cy", 12, 1300, 2), ("Ada", 9, 1100, 2), ("Di", Fraction(15, 2), 1000, 2), ("Bo", Fraction(15, 2), 700, 2)]
    assert [s.rank for s in table] == [1, 2, 3, 4]


def test_level_points_are_split_by_total_score():
    results = [game(1, (1, 2), (300, 300), (0, 1)), game(2, (1, 2), (100, 900), (0, 1))]
    assert [s.name for s in compute_standings({1: "Ada", 2: "Bo"}, results, POINTS)] == ["Bo", "Ada"]


def test_level_points_and_score_are_split_by_opponents_points():
    # Ada and Bo both win one game with $500; Bo beat Cy (who then won again), Ada beat Di (who did not)
    results = [game(1, (1, 4), (500, 100), (0,)), game(1, (2, 3), (500, 100), (0,)),
               game(2, (3, 4), (100, 0), (0,))]
    table = compute_standings(NAMES, results, POINTS)
    ada, bo = (next(s for s in table if s.name == n) for n in ("Ada", "Bo"))
    assert (ada.points, ada.score, bo.points, bo.score) == (6, 500, 6, 500)
    assert (ada.opponents_points, bo.opponents_points) == (6, 9)  # Di: 3 + 3; Cy: 3 + 6
    assert [(s.rank, s.name) for s in table] == [(1, "Cy"), (2, "Bo"), (3, "Ada"), (4, "Di")]


def test_entrants_equal_on_every_tie_break_share_a_rank_and_go_by_name():
    results = [game(1, (2, 1), (400, 400), (0, 1))]
    table = compute_standings({1: "Zed", 2: "Amy", 3: "Max"}, results, POINTS)
    assert [(s.rank, s.name) for s in table] == [(1, "Amy"), (1, "Zed"), (3, "Max")]


def test_dropped_entrants_stay_in_the_standings_flagged():
    results = [game(1, (1, 2), (100, 900), (1,))]
    table = compute_standings({1: "Ada", 2: "Bo"}, results, POINTS, dropped={2})
    assert [(s.name, s.dropped, s.points) for s in table] == [("Bo", True, 6), ("Ada", False, 3)]


def test_a_standing_as_a_dict_has_plain_numbers():
    s = compute_standings({1: "Ada", 2: "Bo"}, [game(1, (1, 2), (5, 5), (0, 1))], POINTS)[0]
    assert s.to_dict() == {"rank": 1, "name": "Ada", "points": 4.5, "score": 5, "games": 1,
                           "opponents_points": 4.5, "dropped": False}


def test_a_result_gives_its_scores_and_an_older_one_its_dollars():
    assert result_scores({"scores": [3, 1], "dollars": [900, 100], "winners": [0]}) == (3, 1)
    assert result_scores({"scores": [0, 7], "winners": [1]}) == (0, 7)  # a game without dollars
    assert result_scores({"dollars": [900, 100], "winners": [0]}) == (900, 100)  # stored before `scores`
    assert result_scores({"winners": [0]}) is None


def test_a_forfeited_seat_is_last_with_no_points_and_the_others_are_placed_among_themselves():
    """A no-show (never connected) earns nothing, whatever the seat scored (#38)."""
    assert finishing_places([900, 500, 700, 300], [0], forfeits=[0]) == [4, 2, 1, 3]
    places, points = table_points([900, 500, 700, 300], [0], POINTS, forfeits=[0])
    assert (places, points) == ([4, 2, 1, 3], [0, 3, 6, 1])
    assert table_points([500, 500, 900], [2], POINTS, forfeits=[0, 1]) == ([2, 2, 1], [0, 0, 6])


def test_a_no_show_earns_no_points_and_stands_below_everyone_who_played():
    """Bea never showed up in three rounds; Ada played and lost every game: Ada is above her."""
    results = [GameResult(r, f"t{r}", (1, 2, 3), (800, 1000, 900), (1,), forfeits=(1,)) for r in (1, 2, 3)]
    table = compute_standings({1: "Ada", 2: "Bea", 3: "Cy"}, results, (6, 3, 1))
    assert [(s.name, s.points) for s in table] == [("Cy", 18), ("Ada", 9), ("Bea", 0)]
