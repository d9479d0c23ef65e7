"""The ranking's ties, the Secret Festival at the end, the majorities by player count and their ties, the winner."""

from __future__ import annotations

import pytest

from server.games.tulips.festival import Festival
from server.games.tulips.scoring import majority_awards, majority_ranks

from .conftest import Table, card, make_table, to_bouquet


def test_a_tie_goes_to_the_variety_that_just_grew():
    f = Festival()
    f.open((0, "pink", 4), (1, "blue", 3))
    f.add(2, "blue", 1)
    assert f.ranking() == [["blue", 4], ["pink", 4]]
    f.add(3, "pink", 2)
    assert f.ranking() == [["pink", 6], ["blue", 4]]


def test_a_new_variety_enters_at_the_first_place_it_equals_or_beats_and_pushes_the_rest_down():
    f = Festival()
    f.open((0, "pink", 4), (1, "blue", 2))
    f.add(2, "orange", 2)
    assert f.order == ["pink", "orange", "blue"]
    assert f.place("purple") == 4 and f.place("blue") == 3
    f.add(3, "purple", 4)
    assert f.order == ["purple", "pink", "orange", "blue"] and f.place("blue") == 4


def test_a_variety_below_the_4th_place_counts_as_4th():
    f = Festival()
    f.open((0, "a", 9), (1, "b", 8))
    for i, v in enumerate("cde"):
        f.add(2 + i, v, 5 - i)
    assert f.order == ["a", "b", "c", "d", "e"] and f.place("e") == 4


@pytest.mark.parametrize(("players", "ranks"), [(2, 1), (3, 2), (4, 2), (5, 3), (6, 3)])
def test_the_majorities_scored_depend_on_the_player_count(players, ranks):
    assert majority_ranks(players) == ranks
    holdings = [(players - s, 0) for s in range(players)]  # seat 0 most, then 1, ...
    assert majority_awards(1, holdings, ranks) == [(s, (15, 10, 5)[s]) for s in range(ranks)]


def test_the_rulebooks_tie_example_tied_on_count_values_6_and_4_score_10_and_7():
    assert majority_awards(2, [(2, 4), (2, 6), (1, 4)], 2) == [(1, 10), (0, 7)]


def test_equal_count_and_value_share_the_rank_and_the_next_player_takes_the_rank_after_them():
    assert majority_awards(1, [(2, 5), (2, 5), (1, 4)], 2) == [(0, 15), (1, 15)]
    assert majority_awards(1, [(2, 5), (2, 5), (1, 4), (1, 2)], 3) == [(0, 15), (1, 15), (2, 5)]
    assert majority_awards(3, [(1, 3), (3, 6), (3, 6), (3, 6)], 3) == [(1, 5), (2, 5), (3, 5)]


def test_a_player_without_the_variety_takes_no_majority():
    assert majority_awards(1, [(0, 0), (1, 2), (0, 0)], 2) == [(1, 15)]
    assert majority_awards(1, [(0, 0), (0, 0)], 1) == []


def played_out(players: int = 3, **cfg) -> Table:
    """A table whose every card is played by the clock's default; stops before the last action."""
    t = make_table(players, first_seat=0, action_ms=100, **cfg)
    t.choose_all()
    while len(t.g.deck) > 0 or len(t.g.done) == 0:
        t.at(t.g.next_deadline())
    return t


def test_the_secret_festival_adds_five_cards_one_at_a_time_re_ranking_after_each():
    t = played_out(3)
    g = t.g
    pile = [c for c, _ in g.secret]
    assert len(pile) > 5
    t.at(g.next_deadline())
    shown = t.events("secret_revealed")
    assert len(shown) == 5 and [e.data["card"] for e in shown] == g.revealed
    assert all(e.audience is None for e in shown)
    assert g.festival.cards[-5:] == g.revealed
    for e in shown:  # every event carries the ranking after that card
        totals = dict(e.data["ranking"])
        assert [totals[v] for v, _ in e.data["ranking"]] == sorted(totals.values(), reverse=True)
    assert shown[-1].data["ranking"] == g.festival.ranking()
    assert len(g.secret) == len(pile) + 1 - 5  # the last card drawn went face down by default


def test_after_the_reveal_the_public_view_keeps_how_many_cards_each_seat_put_face_down():
    t = played_out(3)
    g = t.g
    put = [len(g.secret_of(s)) for s in range(3)]
    put[g.current] += 1  # the last card drawn goes face down by default
    t.at(g.next_deadline())
    assert g.over and len(g.revealed) == 5
    assert [p["secret"] for p in g.public_view()["players"]] == put
    assert [len(g.secret_of(s)) for s in range(3)] != put  # the face-down piles did shrink


def test_with_five_or_fewer_secret_cards_all_of_them_are_added():
    t = make_table(2, first_seat=0, action_ms=100)
    t.choose_all()
    while not t.g.over:  # never keep-then-secret: give, then keep
        t.do(t.g.current, "give", to=1 - t.g.current)
        t.do(t.g.current, "keep")
    assert len(t.events("secret_revealed")) == 2 and t.g.secret == []


def test_majorities_are_scored_for_the_top_three_varieties_and_the_winner_has_most_points():
    t = played_out(3)
    g = t.g
    t.at(g.next_deadline())
    majorities = t.events("majority")
    assert [e.data["place"] for e in majorities] == [1, 2, 3]
    assert [e.data["variety"] for e in majorities] == g.festival.order[:3]
    end = t.last("game_ended").data
    assert end["points"] == g.points and end["winners"] == list(g.outcome().winners)
    result = g.result()
    assert result["reason"] == "festival" and result["scores"] == g.points and result["over"]
    best = max(g.points)
    assert all(g.points[w] == best for w in result["winners"])


def test_the_winner_tie_goes_to_the_bigger_bouquet_then_is_shared():
    t = make_table(3)
    g = t.g
    g.points = [20, 20, 12]
    to_bouquet(g, 0, card(g, "pink", 2))
    assert g._ranked_winners() == (0,)
    to_bouquet(g, 1, card(g, "blue", 3))
    assert g._ranked_winners() == (0, 1)
