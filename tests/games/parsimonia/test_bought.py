"""A tourists card bought at auction: its buyer chooses the free resource card of its type it goes on
(``place_bought``), on their turn or not, by a deadline; the default is the most profitable one."""

from __future__ import annotations

from .conftest import R, T, Table, cover, make_table, profit, start_turns

QUIET = 30_000


def owed_table(free_type_2: list[int] | None = None, draws: tuple[int, ...] = (T(2, 1),)) -> Table:
    """Seat 0 auctions its drawn T(2,1) and sells it to seat 1 for 30; seat 1 holds R(2,2) covered, R(4,0)
    and the given free type-2 cards (by default R(2,0), R(2,3), R(2,1): profits 20, 35, 25)."""
    free = [R(2, 0), R(2, 3), R(2, 1)] if free_type_2 is None else free_type_2
    t = make_table(3)
    cover(t.g, R(2, 2), T(2, 6))
    start_turns(t, {0: [R(3, 0)], 1: [*free, R(2, 2), R(4, 0)]}, draws=draws)
    a = t.auction_drawn(0, 5)
    t.bid(1, a, 30)
    t.close(0, a, 1)
    return t


def test_the_buyer_of_a_tourists_card_owes_a_choice_with_a_deadline() -> None:
    t = owed_table()
    g = t.g
    assert g.bought == {T(2, 1): 1} and g.step == "main" and g.current == 0
    assert t.last("placement_owed").data == {"seat": 1, "card": T(2, 1), "deadline": QUIET}
    assert g.public_view()["bought"] == [{"card": T(2, 1), "seat": 1, "deadline": QUIET}]
    assert g.room_for(1, 2) == 2  # three free type-2 cards, one held for the owed card
    offered = [x for x in g.legal_actions(1) if x["type"] == "place_bought"]
    assert offered == [{"type": "place_bought", "card": T(2, 1), "resource": r} for r in (R(2, 0), R(2, 3), R(2, 1))]
    assert not [x for x in g.legal_actions(0) if x["type"] == "place_bought"]


def test_the_buyer_chooses_the_resource_card_off_turn_and_is_paid_its_profit() -> None:
    t = owed_table()
    g = t.g
    company = g.company_dollars
    t.wait(1000)
    t.do(1, "place_bought", card=T(2, 1), resource=R(2, 0))
    gain = profit(2, 0) + profit(2, 1)
    assert g.on[R(2, 0)] == T(2, 1) and g.bought == {}
    assert g.dollars[1] == 1000 - 30 + gain and g.company_dollars == company - gain
    assert t.last("card_placed").data["reason"] == "bought"
    assert g.timers.get(("bought", T(2, 1))) is None


def test_an_unchosen_bought_card_goes_on_the_most_profitable_free_card_at_its_deadline() -> None:
    t = owed_table()
    g = t.g
    t.at(QUIET - 1)
    assert g.bought
    t.at(QUIET)
    assert g.on[R(2, 3)] == T(2, 1) and g.bought == {}  # R(2,3) pays 35, the best free type-2 card
    assert g.dollars[1] == 1000 - 30 + profit(2, 3) + profit(2, 1)


def test_a_buyer_with_one_free_card_of_the_type_has_the_card_placed_at_once() -> None:
    t = owed_table([R(2, 0)])
    g = t.g
    assert g.on[R(2, 0)] == T(2, 1) and g.bought == {} and not t.events("placement_owed")
    assert g.dollars[1] == 1000 - 30 + profit(2, 0) + profit(2, 1)


def test_an_owed_card_is_placed_at_once_when_the_buyer_has_no_choice_left() -> None:
    t = owed_table([R(2, 0), R(2, 3)], draws=(T(2, 1), T(2, 5)))
    g = t.g
    t.do(0, "end_turn")
    assert g.current == 1 and g.drawn == T(2, 5) and g.bought == {T(2, 1): 1}  # the next turn does not wait
    t.do(1, "pair", resource=R(2, 3))
    assert g.on[R(2, 3)] == T(2, 5) and g.on[R(2, 0)] == T(2, 1) and g.bought == {}
    placed = [e.data["tourist"] for e in t.events("card_placed")]
    assert placed[-2:] == [T(2, 5), T(2, 1)]


def test_place_bought_refused_for_a_card_not_owed_or_a_wrong_resource_card() -> None:
    t = owed_table()
    t.refuse(2, "not_bought", "place_bought", card=T(2, 1), resource=R(2, 0))
    t.refuse(1, "not_bought", "place_bought", card=T(2, 6), resource=R(2, 0))
    t.refuse(1, "cannot_place", "place_bought", card=T(2, 1), resource=R(2, 2))  # covered
    t.refuse(1, "cannot_place", "place_bought", card=T(2, 1), resource=R(4, 0))  # another type
    t.refuse(1, "cannot_place", "place_bought", card=T(2, 1), resource=R(3, 0))  # not the buyer's


def test_a_bought_card_still_owed_when_the_game_ends_is_placed_by_default_and_paid() -> None:
    t = owed_table()
    g = t.g
    for seat in range(3):
        t.do(seat, "vote_end", agree=True)
    assert g.over and g.on[R(2, 3)] == T(2, 1) and g.bought == {}
    assert g.dollars[1] == 1000 - 30 + profit(2, 3) + profit(2, 1)
    assert t.log[-1].type == "game_ended" and t.log[-1].data["dollars"] == g.dollars


def test_a_buyer_who_quits_returns_the_owed_card_to_the_company() -> None:
    t = owed_table()
    g = t.g
    t.do(1, "quit")
    assert g.bought == {} and T(2, 1) in g.company_cards and g.next_deadline() != QUIET
    assert T(2, 1) in t.last("player_quit").data["cards"]
