"""A turn, in order: the draw, pairing or auctioning the drawn card, forced placement, full sets, the
main step, the turn clock and auctions that outlive it, the deck running out."""

from __future__ import annotations

from server.games.parsimonia import Config, Parsimonia

from .conftest import MIN, SEED, R, T, Table, cover, make_table, profit, start_turns, tiny_deck

# ------------------------------------------------------------------ the draw


def test_turn_begins_with_automatic_draw_from_top_of_deck(table: Table) -> None:
    g = table.g
    top = g.deck[-1]
    table.finish_opening()
    assert g.current == 0 and g.step == "decide" and g.drawn == top
    assert len(g.deck) == 59
    assert table.last("card_drawn").data == {"seat": 0, "card": top}


def test_end_turn_passes_to_next_player_who_draws(table: Table) -> None:
    g = table.g
    start_turns(table, {0: [R(1, 0), R(2, 0)]}, draws=(T(1, 0), T(3, 0)))
    table.do(0, "pair", resource=R(1, 0))
    table.at(MIN)
    table.do(0, "end_turn")
    assert g.current == 1 and g.turn == 2 and g.drawn == T(3, 0) and g.step == "decide"
    assert g.timers.get("turn") == MIN + 5 * MIN
    assert table.last("turn_ended").data == {"seat": 0, "turn": 1, "reason": "ended"}


def test_turn_order_wraps_and_skips_players_who_quit() -> None:
    t = make_table(4)
    g = t.g
    t.do(2, "quit")
    t.finish_opening()
    seen = [g.current]
    for _ in range(4):
        t.wait(5 * MIN)
        seen.append(g.current)
    assert seen == [0, 1, 3, 0, 1]


def test_turn_timeout_passes_turn_at_its_deadline(table: Table) -> None:
    g = table.g
    start_turns(table)
    table.at(5 * MIN - 1)
    assert g.current == 0
    table.at(5 * MIN)
    assert g.current == 1 and table.last("turn_ended").data["reason"] == "timeout"
    assert table.last("turn_started").at == 5 * MIN


def test_draw_reshuffles_aside_pile_when_deck_is_empty() -> None:
    # two players, one resource card each, one tourists card: it is paired, cleared aside, then redrawn
    g = Parsimonia(2, SEED, Config(deck=tiny_deck([1, 1], [1])))
    t = Table(g)
    t.finish_opening()
    assert g.drawn == 2 and g.deck == []
    t.do(0, "pair", resource=g.hands[0][0])
    assert g.aside == [2] and g.on == {}  # a full set: cleared
    t.do(0, "end_turn")
    assert t.last("deck_reshuffled").data == {"count": 1}
    assert g.current == 1 and g.drawn == 2 and g.aside == [] and g.step == "decide"


def test_no_draw_when_deck_and_aside_pile_are_empty() -> None:
    g = Parsimonia(2, SEED, Config(deck=tiny_deck([1, 1, 1, 1], [1])))
    t = Table(g)
    t.finish_opening()
    t.do(0, "pair", resource=g.hands[0][0])  # one of two cards covered: no full set
    assert g.deck == [] and g.aside == []
    t.do(0, "end_turn")
    assert g.current == 1 and g.drawn is None and g.step == "main"
    assert t.last("no_card_drawn").data == {"seat": 1}
    t.do(1, "end_turn")
    assert g.current == 0


# ------------------------------------------------------------------ pairing


def test_pair_pays_both_profits_from_company(table: Table) -> None:
    g = table.g
    start_turns(table, {0: [R(2, 1), R(3, 0)]}, draws=(T(2, 2),))
    company = g.company_dollars
    table.do(0, "pair", resource=R(2, 1))
    gain = profit(2, 1) + profit(2, 2)
    assert gain == 55
    assert g.dollars[0] == 1000 + gain and g.company_dollars == company - gain
    assert g.on == {R(2, 1): T(2, 2)} and g.drawn is None and g.step == "main"
    assert table.last("card_placed").data["paid"] == gain


def test_pair_with_resource_card_of_other_type_refused(table: Table) -> None:
    start_turns(table, {0: [R(2, 1), R(3, 0)]}, draws=(T(2, 2),))
    table.refuse(0, "cannot_pair", "pair", resource=R(3, 0))


def test_pair_with_resource_card_already_carrying_tourists_card_refused(table: Table) -> None:
    cover(table.g, R(2, 0), T(2, 5))
    start_turns(table, {0: [R(2, 0), R(2, 1)]}, draws=(T(2, 2),))
    table.refuse(0, "cannot_pair", "pair", resource=R(2, 0))
    table.do(0, "pair", resource=R(2, 1))


def test_pair_with_another_players_card_refused(table: Table) -> None:
    start_turns(table, {0: [R(3, 0)], 1: [R(2, 0)]}, draws=(T(2, 2),))
    table.refuse(0, "cannot_pair", "pair", resource=R(2, 0))


def test_pair_by_player_not_on_turn_refused(table: Table) -> None:
    start_turns(table, {0: [R(3, 0)], 1: [R(2, 0)]}, draws=(T(2, 2),))
    table.refuse(1, "not_your_turn", "pair", resource=R(2, 0))


def test_steps_cannot_be_taken_out_of_order(table: Table) -> None:
    start_turns(table, {0: [R(2, 0), R(3, 0)]}, draws=(T(2, 2),))
    # before the drawn card is settled: no resource or Company auction, no end of turn, no place
    table.refuse(0, "wrong_step", "auction", card=R(3, 0), start_price=0)
    table.refuse(0, "wrong_step", "end_turn")
    table.refuse(0, "wrong_step", "place", resource=R(2, 0))
    table.refuse(0, "wrong_step", "company_auction", card=R(3, 0), start_price=0)
    table.do(0, "pair", resource=R(2, 0))
    # after it: the drawn card cannot be handled again
    table.refuse(0, "wrong_step", "pair", resource=R(2, 0))
    table.refuse(0, "wrong_step", "auction_drawn", start_price=0)


def test_only_current_player_may_start_auctions(table: Table) -> None:
    start_turns(table, {0: [R(2, 0), R(3, 0)], 1: [R(4, 0)]}, draws=(T(2, 2),))
    table.do(0, "pair", resource=R(2, 0))
    table.refuse(1, "not_your_turn", "auction", card=R(4, 0), start_price=0)
    table.refuse(1, "not_your_turn", "auction_drawn", start_price=0)
    table.refuse(1, "not_your_turn", "end_turn")


# ------------------------------------------------------------------ auctioning the drawn card


def test_unsold_drawn_card_with_one_candidate_placed_without_profit(table: Table) -> None:
    g = table.g
    start_turns(table, {0: [R(2, 0), R(3, 0)]}, draws=(T(2, 2),))
    a = table.auction_drawn(0, 0)
    table.close(0, a, None)
    assert g.on == {R(2, 0): T(2, 2)} and g.step == "main"
    assert g.dollars == [1000, 1000, 1000]
    assert table.last("card_placed").data["paid"] == 0


def test_unsold_drawn_card_with_several_candidates_player_chooses_with_place(table: Table) -> None:
    g = table.g
    start_turns(table, {0: [R(2, 0), R(2, 3), R(3, 0)]}, draws=(T(2, 2),))
    a = table.auction_drawn(0, 0)
    table.close(0, a, None)
    assert g.step == "place" and g.drawn == T(2, 2)
    table.refuse(0, "wrong_step", "end_turn")
    table.refuse(0, "cannot_place", "place", resource=R(3, 0))  # a card of its type must be used
    table.refuse(1, "not_your_turn", "place", resource=R(2, 3))
    table.do(0, "place", resource=R(2, 3))
    assert g.on == {R(2, 3): T(2, 2)} and g.step == "main" and g.drawn is None
    assert g.dollars[0] == 1000


def test_unsold_drawn_card_without_free_card_of_its_type_goes_on_any_free_card(table: Table) -> None:
    g = table.g
    cover(g, R(2, 0), T(2, 5))
    start_turns(table, {0: [R(2, 0), R(3, 0), R(4, 0)]}, draws=(T(2, 2),))
    a = table.auction_drawn(0, 0)
    table.close(0, a, None)
    assert g.step == "place"
    table.refuse(0, "cannot_place", "place", resource=R(2, 0))  # it carries a tourists card
    table.do(0, "place", resource=R(4, 0))
    assert g.on[R(4, 0)] == T(2, 2) and g.dollars[0] == 1000


def test_unsold_drawn_card_with_one_free_card_of_other_type_placed_there(table: Table) -> None:
    g = table.g
    start_turns(table, {0: [R(3, 0), R(5, 0)]}, draws=(T(2, 2),))
    cover(g, R(5, 0), T(5, 5))
    a = table.auction_drawn(0, 0)
    table.close(0, a, None)
    # R(3,0) was the only free card: the placement fills the last gap, a full set is cleared
    assert g.step == "main"
    assert sorted(table.last("tourists_cleared").data["cards"]) == sorted([T(2, 2), T(5, 5)])
    assert sorted(g.aside) == sorted([T(2, 2), T(5, 5)]) and g.on == {}


def test_unsold_drawn_card_of_player_without_resource_cards_goes_aside(table: Table) -> None:
    g = table.g
    start_turns(table, {0: []}, draws=(T(2, 2),))
    a = table.auction_drawn(0, 0)
    table.close(0, a, None)
    assert g.aside == [T(2, 2)] and g.step == "main"
    assert table.last("card_aside").data == {"seat": 0, "card": T(2, 2)}


def test_drawn_card_auction_without_bids_closes_at_quiet_time_as_no_sale(table: Table) -> None:
    g = table.g
    start_turns(table, {0: [R(2, 0), R(3, 0)]}, draws=(T(2, 2),))
    table.at(MIN)
    table.auction_drawn(0, 0)
    table.at(MIN + 30_000)
    assert table.last("auction_closed").data["outcome"] == "no_sale"
    assert g.on == {R(2, 0): T(2, 2)} and g.step == "main"


def test_drawn_card_auction_quiet_time_sells_to_highest_bidder(table: Table) -> None:
    g = table.g
    start_turns(table, {0: [R(3, 0)], 1: [R(2, 0), R(4, 0)], 2: [R(2, 1), R(4, 1)]}, draws=(T(2, 2),),
                rest=None)
    a = table.auction_drawn(0, 0)
    table.bid(1, a, 10)
    table.bid(2, a, 20)
    table.wait(30_000)
    assert g.on == {R(2, 1): T(2, 2)}
    assert g.dollars[2] == 1000 - 20 + profit(2, 1) + profit(2, 2)
    assert g.dollars[0] == 1020


def test_timeout_before_deciding_counts_as_no_sale(table: Table) -> None:
    g = table.g
    start_turns(table, {0: [R(2, 3), R(2, 0), R(3, 0)]}, draws=(T(2, 2),))
    table.at(5 * MIN)
    # no choice was made: the least profitable candidate takes it, without profit
    assert g.on == {R(2, 0): T(2, 2)} and g.dollars[0] == 1000
    assert g.current == 1


def test_timeout_while_choosing_placement_uses_least_profitable_candidate(table: Table) -> None:
    g = table.g
    start_turns(table, {0: [R(3, 2), R(3, 1), R(4, 0)]}, draws=(T(3, 0),))
    a = table.auction_drawn(0, 0)
    table.close(0, a, None)
    assert g.step == "place"
    table.at(5 * MIN)
    assert g.on == {R(3, 1): T(3, 0)} and g.current == 1


def test_timeout_without_free_card_of_type_uses_least_profitable_free_card(table: Table) -> None:
    g = table.g
    start_turns(table, {0: [R(4, 3), R(3, 2), R(5, 0)]}, draws=(T(2, 2),))
    table.at(5 * MIN)
    assert g.on == {R(3, 2): T(2, 2)} and g.dollars[0] == 1000


def test_timeout_without_resource_cards_puts_drawn_card_aside(table: Table) -> None:
    g = table.g
    start_turns(table, {0: []}, draws=(T(2, 2),))
    table.at(5 * MIN)
    assert g.aside == [T(2, 2)] and g.current == 1


# ------------------------------------------------------------------ full sets


def test_full_set_cleared_to_aside_when_every_resource_card_is_covered(table: Table) -> None:
    g = table.g
    cover(g, R(3, 0), T(3, 1))
    start_turns(table, {0: [R(2, 0), R(3, 0)], 1: [R(3, 2), R(3, 3)]}, draws=(T(2, 2),))
    cover(g, R(3, 2), T(3, 3))  # another player's covered card is not part of seat 0's set
    table.do(0, "pair", resource=R(2, 0))
    assert sorted(g.aside) == sorted([T(2, 2), T(3, 1)])
    assert g.on == {R(3, 2): T(3, 3)}
    assert g.hands[0] == [R(2, 0), R(3, 0)]  # the resource cards stay
    assert table.last("tourists_cleared").data["seat"] == 0
    assert g.dollars[0] == 1000 + profit(2, 0) + profit(2, 2)  # profit was paid first


def test_full_set_not_cleared_while_a_resource_card_is_up_for_auction(table: Table) -> None:
    g = table.g
    start_turns(table, {0: [R(2, 0), R(3, 0)]}, draws=(T(2, 2),))
    table.do(0, "pair", resource=R(2, 0))
    a = table.open_auction(0, R(3, 0), 0)
    assert g.on == {R(2, 0): T(2, 2)}  # the one card held is covered, but one is on sale
    table.bid(1, a, 10)
    table.close(0, a, None)
    assert g.on == {R(2, 0): T(2, 2)} and g.aside == []  # back: R(3,0) is free again


def test_full_set_cleared_when_last_free_card_is_sold(table: Table) -> None:
    g = table.g
    start_turns(table, {0: [R(2, 0), R(3, 0)]}, draws=(T(2, 2),))
    table.do(0, "pair", resource=R(2, 0))
    a = table.open_auction(0, R(3, 0), 0)
    table.bid(1, a, 10)
    table.close(0, a, 1)
    assert g.aside == [T(2, 2)] and R(2, 0) not in g.on
    assert R(3, 0) in g.hands[1]


# ------------------------------------------------------------------ the main step and the turn clock


def test_main_step_player_may_auction_resource_cards_and_end_turn(table: Table) -> None:
    g = table.g
    start_turns(table, {0: [R(2, 0), R(3, 0), R(4, 0)]}, draws=(T(2, 2),))
    table.do(0, "pair", resource=R(2, 0))
    a = table.open_auction(0, R(3, 0), 10)
    b = table.open_auction(0, R(4, 0), 10)
    table.bid(1, a, 11)
    table.bid(2, b, 12)
    table.close(0, a, 1)
    table.close(0, b, 2)
    table.do(0, "end_turn")
    assert R(3, 0) in g.hands[1] and R(4, 0) in g.hands[2] and g.current == 1


def test_end_turn_waits_for_own_open_auctions(table: Table) -> None:
    g = table.g
    start_turns(table, {0: [R(2, 0), R(3, 0)]}, draws=(T(2, 2),))
    table.do(0, "pair", resource=R(2, 0))
    a = table.open_auction(0, R(3, 0), 0)
    table.bid(1, a, 5)
    table.do(0, "end_turn")
    assert g.turn_over and g.current == 0 and g.turn == 1
    table.refuse(0, "turn_over", "auction", card=R(2, 0), start_price=0)
    table.wait(10_000)
    table.close(0, a, 1)
    assert g.current == 1 and table.last("turn_started").at == 10_000


def test_auction_outliving_turn_next_turn_waits_and_seller_may_still_close(table: Table) -> None:
    g = table.g
    start_turns(table, {0: [R(2, 0), R(3, 0), R(4, 0)]}, draws=(T(2, 2),))
    table.do(0, "pair", resource=R(2, 0))
    table.at(4 * MIN + 40_000)
    a = table.open_auction(0, R(3, 0), 0)
    table.at(4 * MIN + 50_000)
    table.bid(1, a, 25)
    table.at(5 * MIN)
    assert g.turn_over and g.current == 0
    assert table.last("turn_ended").data["reason"] == "timeout"
    assert len(table.events("turn_started")) == 1
    # the player's time is up: nothing new, but their auction goes on
    table.refuse(0, "turn_over", "auction", card=R(4, 0), start_price=0)
    table.refuse(0, "turn_over", "end_turn")
    table.refuse(0, "turn_over", "company_auction", card=R(4, 0), start_price=0)
    table.at(5 * MIN + 10_000)
    table.bid(2, a, 30)
    table.at(5 * MIN + 20_000)
    table.close(0, a, 1)
    assert g.dollars[1] == 975 and g.dollars[0] == 1000 + profit(2, 0) + profit(2, 2) + 25
    assert g.current == 1 and table.last("turn_started").at == 5 * MIN + 20_000
    assert g.timers.get("turn") == 10 * MIN + 20_000


def test_auction_outliving_turn_closed_by_quiet_time_then_next_turn(table: Table) -> None:
    g = table.g
    start_turns(table, {0: [R(2, 0), R(3, 0)]}, draws=(T(2, 2),))
    table.do(0, "pair", resource=R(2, 0))
    table.at(4 * MIN + 50_000)
    a = table.open_auction(0, R(3, 0), 0)
    table.at(5 * MIN + 5_000)
    table.bid(2, a, 40)
    table.at(5 * MIN + 34_999)
    assert g.current == 0
    table.at(5 * MIN + 35_000)
    assert R(3, 0) in g.hands[2] and g.current == 1


def test_drawn_card_auction_outliving_turn_unsold_placed_by_default(table: Table) -> None:
    g = table.g
    start_turns(table, {0: [R(2, 3), R(2, 0), R(3, 0)]}, draws=(T(2, 2),))
    table.at(4 * MIN + 50_000)
    a = table.auction_drawn(0, 0)
    table.at(5 * MIN)
    assert g.turn_over and g.current == 0
    table.at(5 * MIN + 10_000)
    table.close(0, a, None)  # two candidates, but the turn is over: no choice is offered
    assert g.on == {R(2, 0): T(2, 2)} and g.dollars[0] == 1000
    assert g.current == 1 and g.step == "decide" and table.last("turn_started").at == 5 * MIN + 10_000


def test_drawn_card_auction_outliving_turn_may_still_be_sold(table: Table) -> None:
    g = table.g
    start_turns(table, {0: [R(3, 0)], 1: [R(2, 0)]}, draws=(T(2, 2),))
    table.at(4 * MIN + 50_000)
    a = table.auction_drawn(0, 0)
    table.bid(1, a, 15)
    table.at(5 * MIN + 5_000)
    table.close(0, a, 1)
    assert T(2, 2) in g.aside and g.on == {}  # R(2,0) was seat 1's only card: a full set, cleared
    assert g.dollars[1] == 1000 - 15 + profit(2, 0) + profit(2, 2)
    assert g.dollars[0] == 1015 and g.current == 1


def test_company_pays_profit_only_from_what_it_holds() -> None:
    t = make_table(3, bank=3000 + 30)
    g = t.g
    start_turns(t, {0: [R(2, 1), R(3, 0), R(4, 0)]}, draws=(T(2, 2), T(3, 0), T(3, 1), T(4, 0)))
    t.do(0, "pair", resource=R(2, 1))
    placed = t.last("card_placed").data
    assert placed["profit"] == 55 and placed["paid"] == 30
    assert g.dollars[0] == 1030 and g.company_dollars == 0
    t.do(0, "end_turn")
    t.wait(5 * MIN)  # seat 1's turn times out
    t.wait(5 * MIN)  # seat 2's too
    assert g.current == 0 and g.drawn == T(4, 0)
    t.do(0, "pair", resource=R(4, 0))
    assert t.last("card_placed").data["paid"] == 0 and g.dollars[0] == 1030
