"""Quitting (everything goes back to the Company) and Company auctions (highest bid wins; free to the
starter when nobody else bids)."""

from __future__ import annotations

from .conftest import MIN, R, T, Table, cover, make_table, profit, set_hands, start_turns


def company_table(players: int = 4) -> Table:
    """The last seat quits in the opening holding R(2,0) (carrying T(2,5)), R(3,0) and R(3,1); then seat 0
    pairs its drawn card and is in the main step of turn 1."""
    t = make_table(players)
    g = t.g
    last = players - 1
    cover(g, R(2, 0), T(2, 5))
    set_hands(g, {0: [R(1, 0), R(5, 0)], last: [R(2, 0), R(3, 0), R(3, 1)]}, rest=1)
    t.do(last, "quit")
    start_turns(t, draws=(T(1, 1),))
    t.do(0, "pair", resource=R(1, 0))
    assert g.step == "main"
    return t


# ------------------------------------------------------------------ quitting


def test_quit_returns_cards_and_dollars_to_company(table: Table) -> None:
    g = table.g
    hand = list(g.hands[1])
    company = g.company_dollars
    table.do(0, "give", to=1, amount=100)
    table.do(1, "quit")
    assert g.active == [True, False, True]
    assert g.hands[1] == [] and g.dollars[1] == 0
    assert g.company_cards == hand and g.company_dollars == company + 1100
    assert table.last("player_quit").data == {"seat": 1, "dollars": 1100, "cards": hand}


def test_quit_cancels_quitters_auctions_and_lots_go_to_company(table: Table) -> None:
    g = table.g
    card = g.hands[0][0]
    a = table.open_auction(0, card, 0)
    table.bid(1, a, 50)
    table.do(0, "quit")
    assert a not in g.auctions and card in g.company_cards
    assert g.dollars[1] == 1000 and g.committed(1) == 0
    assert table.last("auction_closed").data["outcome"] == "cancelled"


def test_quit_withdraws_quitters_bids_and_next_highest_stands(table: Table) -> None:
    g = table.g
    card = g.hands[0][0]
    a = table.open_auction(0, card, 0)
    table.bid(1, a, 50)
    table.bid(2, a, 60)
    table.do(2, "quit")
    assert g.auctions[a].high() == (1, 50)
    table.wait(30_000)
    assert card in g.hands[1] and g.dollars[1] == 950 and g.dollars[0] == 1050


def test_quit_on_own_turn_sends_undecided_drawn_card_to_company_and_passes_turn(table: Table) -> None:
    g = table.g
    start_turns(table, draws=(T(2, 2),))
    table.at(MIN)
    table.do(0, "quit")
    assert T(2, 2) in g.company_cards and g.drawn != T(2, 2)
    assert g.current == 1 and g.step == "decide" and table.last("turn_started").at == MIN
    assert table.last("turn_ended").data == {"seat": 0, "turn": 1, "reason": "quit"}


def test_quit_during_own_drawn_card_auction_cancels_it(table: Table) -> None:
    g = table.g
    start_turns(table, {0: [R(3, 0)], 1: [R(2, 0), R(4, 0)]}, draws=(T(2, 2),))
    a = table.auction_drawn(0, 0)
    table.bid(1, a, 30)
    table.do(0, "quit")
    assert a not in g.auctions and T(2, 2) in g.company_cards and R(2, 0) not in g.on
    assert g.dollars[1] == 1000 and g.current == 1


def test_quit_while_choosing_placement_sends_drawn_card_to_company(table: Table) -> None:
    g = table.g
    start_turns(table, {0: [R(2, 0), R(2, 3), R(3, 0)]}, draws=(T(2, 2),))
    a = table.auction_drawn(0, 0)
    table.close(0, a, None)
    assert g.step == "place"
    table.do(0, "quit")
    assert T(2, 2) in g.company_cards and g.on == {}
    assert sorted(g.company_cards) == sorted([R(2, 0), R(2, 3), R(3, 0), T(2, 2)])
    assert g.current == 1


def test_quit_after_turn_time_while_own_auction_runs_ends_turn_once(table: Table) -> None:
    g = table.g
    start_turns(table, {0: [R(2, 0), R(3, 0)]}, draws=(T(2, 2),))
    table.do(0, "pair", resource=R(2, 0))
    table.at(4 * MIN + 50_000)
    a = table.open_auction(0, R(3, 0), 0)
    table.at(5 * MIN)
    assert g.turn_over and g.current == 0
    table.at(5 * MIN + 5_000)
    table.do(0, "quit")
    assert a not in g.auctions and R(3, 0) in g.company_cards
    assert g.current == 1 and table.last("turn_started").at == 5 * MIN + 5_000
    assert [e.data["turn"] for e in table.events("turn_ended")] == [1]


def test_player_who_quit_cannot_act(table: Table) -> None:
    g = table.g
    a = table.open_auction(0, g.hands[0][0], 0)
    table.do(1, "quit")
    table.refuse(1, "not_in_game", "bid", auction=a, amount=5)
    table.refuse(1, "not_in_game", "ready")
    table.refuse(1, "not_in_game", "quit")
    table.refuse(1, "not_in_game", "vote_end", agree=True)
    assert g.legal_actions(1) == []


def test_quitting_when_one_player_is_left_ends_game() -> None:
    t = make_table(2)
    g = t.g
    card = g.hands[0][0]
    a = t.open_auction(0, card, 0)
    t.bid(1, a, 500)
    t.do(1, "quit")
    assert g.over and g.end_reason == "last_player"
    assert g.result()["winners"] == [0]
    assert a not in g.auctions and card in g.hands[0] and g.dollars[0] == 1000
    assert g.next_deadline() is None


def test_quitting_when_two_players_are_left_does_not_end_game() -> None:
    t = make_table(3)
    t.do(1, "quit")
    assert not t.g.over


# ------------------------------------------------------------------ Company auctions


def test_company_auction_highest_bidder_wins_and_pays_company() -> None:
    t = company_table()
    g = t.g
    company = g.company_dollars
    a = t.company_auction(0, R(3, 0), 10)
    assert g.auctions[a].seller is None and g.auctions[a].starter == 0
    t.bid(1, a, 20)
    t.bid(2, a, 30)
    t.bid(1, a, 35)
    t.wait(30_000)
    assert R(3, 0) in g.hands[1] and R(3, 0) not in g.company_cards
    assert g.dollars[1] == 965 and g.dollars[2] == 1000 and g.company_dollars == company + 35
    assert g.dollars[0] == 1000 + profit(1, 0) + profit(1, 1)  # the starter gets nothing


def test_company_auction_free_to_starter_if_nobody_else_bids() -> None:
    t = company_table()
    g = t.g
    company = g.company_dollars
    before = g.dollars[0]
    t.company_auction(0, R(3, 1), 50)
    t.wait(30_000)
    assert R(3, 1) in g.hands[0] and g.dollars[0] == before and g.company_dollars == company
    closed = t.last("auction_closed").data
    assert closed["winner"] == 0 and closed["price"] == 0


def test_company_auction_starter_may_bid_and_pays_the_company() -> None:
    t = company_table()
    g = t.g
    company = g.company_dollars
    a = t.company_auction(0, R(3, 0), 0)
    t.bid(0, a, 5)
    t.bid(1, a, 6)
    t.bid(0, a, 7)
    assert g.committed(0) == 7
    t.wait(30_000)
    assert R(3, 0) in g.hands[0] and g.company_dollars == company + 7
    assert t.last("auction_closed").data["price"] == 7 and g.dollars[1] == 1000


def test_company_auction_free_to_starter_who_bid_alone() -> None:
    t = company_table()
    g = t.g
    company = g.company_dollars
    before = g.dollars[0]
    a = t.company_auction(0, R(3, 0), 0)
    t.bid(0, a, 5)
    t.bid(0, a, 9)
    t.wait(30_000)
    assert R(3, 0) in g.hands[0] and g.dollars[0] == before and g.company_dollars == company
    closed = t.last("auction_closed").data
    assert closed["outcome"] == "sold" and closed["winner"] == 0 and closed["price"] == 0


def test_company_auction_is_not_free_to_the_starter_once_someone_bid() -> None:
    t = company_table()
    g = t.g
    a = t.company_auction(0, R(3, 0), 0)
    t.bid(1, a, 5)
    t.do(1, "quit")  # the only bid is withdrawn
    assert g.auctions[a].bids == {}
    t.wait(30_000)
    assert R(3, 0) in g.company_cards and t.last("auction_closed").data["outcome"] == "no_sale"


def test_company_auction_cannot_be_closed_by_starter_or_anyone() -> None:
    t = company_table()
    a = t.company_auction(0, R(3, 0), 0)
    t.bid(1, a, 5)
    t.refuse(0, "cannot_pick_winner", "close", auction=a, winner=1)
    t.refuse(0, "cannot_pick_winner", "close", auction=a, winner=None)
    t.refuse(1, "cannot_pick_winner", "close", auction=a, winner=1)


def test_company_auction_bids_follow_the_auction_rules() -> None:
    t = company_table()
    a = t.company_auction(0, R(3, 0), 10)
    t.refuse(1, "bid_too_low", "bid", auction=a, amount=10)
    t.bid(1, a, 11)
    t.refuse(2, "bid_too_low", "bid", auction=a, amount=11)
    t.refuse(2, "not_enough_dollars", "bid", auction=a, amount=1001)


def test_company_auction_only_on_own_turn_after_drawn_card_is_settled() -> None:
    t = make_table(3)
    t.do(2, "quit")
    card = t.g.company_cards[0]
    start_turns(t, {0: [R(1, 0), R(5, 0)]}, draws=(T(1, 1),), rest=1)
    t.refuse(0, "wrong_step", "company_auction", card=card, start_price=0)
    t.refuse(1, "not_your_turn", "company_auction", card=card, start_price=0)
    t.do(0, "pair", resource=R(1, 0))
    t.refuse(1, "not_your_turn", "company_auction", card=card, start_price=0)
    t.company_auction(0, card, 0)


def test_company_auction_of_card_company_does_not_hold_refused() -> None:
    t = company_table()
    g = t.g
    t.refuse(0, "not_company_card", "company_auction", card=g.hands[1][0], start_price=0)
    t.refuse(0, "not_company_card", "company_auction", card=R(5, 0), start_price=0)  # the starter's own
    t.refuse(0, "not_company_card", "company_auction", card=g.deck[0], start_price=0)


def test_company_resource_card_is_sold_with_its_tourists_card() -> None:
    t = company_table()
    g = t.g
    a = t.company_auction(0, R(2, 0), 0)
    t.bid(2, a, 40)
    t.wait(30_000)
    assert R(2, 0) in g.hands[2] and g.on[R(2, 0)] == T(2, 5)
    assert g.dollars[2] == 960  # a transfer, no profit


def test_company_auction_outliving_turn_then_next_turn() -> None:
    t = company_table()
    g = t.g
    t.at(4 * MIN + 50_000)
    a = t.company_auction(0, R(3, 0), 0)
    t.at(5 * MIN)
    assert g.turn_over and g.current == 0
    t.at(5 * MIN + 10_000)
    t.bid(1, a, 5)
    t.at(5 * MIN + 40_000)
    assert R(3, 0) in g.hands[1] and g.current == 1
    assert t.last("turn_started").at == 5 * MIN + 40_000


def _two_lone_tourists_with_company() -> Table:
    """Five players; seats 0 and 1 quit on their turns holding drawn T(2,2) and T(2,3); seat 2 is in its
    main step. Seats 3 and 4 each hold one free type-2 card."""
    t = make_table(5)
    g = t.g
    set_hands(g, {0: [R(1, 0)], 1: [R(1, 1)], 2: [R(3, 0), R(3, 1)], 3: [R(2, 0), R(4, 0)],
                  4: [R(2, 1), R(4, 1)]}, rest=None)
    start_turns(t, draws=(T(2, 2), T(2, 3), T(3, 2)))
    t.do(0, "quit")
    t.do(1, "quit")
    assert g.current == 2 and g.drawn == T(3, 2)
    assert T(2, 2) in g.company_cards and T(2, 3) in g.company_cards
    t.do(2, "pair", resource=R(3, 0))
    return t


def test_company_lone_tourists_card_bid_needs_free_card_of_its_type() -> None:
    t = _two_lone_tourists_with_company()
    g = t.g
    a = t.company_auction(2, T(2, 2), 0)
    set_hands(g, {4: [R(4, 1)]}, rest=None)  # seat 4 gives up its type-2 card
    t.refuse(4, "no_free_resource_of_type", "bid", auction=a, amount=5)
    t.bid(3, a, 5)


def test_a_tourists_bid_lapses_when_its_bidder_loses_room_for_the_card() -> None:
    t = _two_lone_tourists_with_company()
    g = t.g
    t.at(1000)
    a = t.company_auction(2, T(2, 2), 0)
    b = t.company_auction(2, T(2, 3), 0)
    t.bid(3, a, 100)
    t.at(2000)
    t.bid(4, b, 50)
    t.bid(3, b, 100)
    assert g.committed(3) == 200 and g.auctions[b].min_bid() == 101
    company = g.company_dollars
    t.at(31_000)  # a closes: seat 3 pays 100 and its only free type-2 card is covered, with profit
    assert g.on[R(2, 0)] == T(2, 2)
    assert g.dollars[3] == 1000 - 100 + profit(2, 0) + profit(2, 2)
    assert g.company_dollars == company + 100 - profit(2, 0) - profit(2, 2)
    # seat 3 can no longer take T(2,3): its bid lapses, commits nothing and no longer sets the minimum
    assert t.last("bid_lapsed").data == {"auction": b, "seat": 3, "amount": 100, "min_bid": 51}
    assert g.auctions[b].bids == {4: 50} and g.committed(3) == 0 and g.auctions[b].min_bid() == 51
    assert not [x for x in g.legal_actions(3) if x["type"] == "bid"]
    t.refuse(3, "no_free_resource_of_type", "bid", auction=b, amount=200)
    t.at(32_000)  # b: seat 4 wins at its own bid
    assert g.on[R(2, 1)] == T(2, 3)
    assert g.dollars[4] == 1000 - 50 + profit(2, 1) + profit(2, 3)
    assert g.dollars[3] == 1000 - 100 + profit(2, 0) + profit(2, 2)


def test_a_company_tourists_card_whose_bids_all_lapsed_is_not_free_to_the_starter() -> None:
    t = _two_lone_tourists_with_company()
    g = t.g
    set_hands(g, {2: [R(3, 0), R(3, 1), R(2, 7)]}, rest=None)  # the starter could take a type-2 card
    t.at(1000)
    a = t.company_auction(2, T(2, 2), 0)
    b = t.company_auction(2, T(2, 3), 0)
    t.bid(3, a, 10)
    t.at(2000)
    t.bid(3, b, 10)
    t.at(31_000)  # a goes to seat 3, whose bid for b lapses
    assert g.auctions[b].bids == {} and g.on[R(2, 0)] == T(2, 2)
    t.at(32_000)
    closed = t.last("auction_closed").data
    assert closed["auction"] == b and closed["outcome"] == "no_sale"
    assert T(2, 3) in g.company_cards and R(2, 7) not in g.on


def test_company_lone_tourists_card_free_to_eligible_starter_with_profit() -> None:
    t = _two_lone_tourists_with_company()
    g = t.g
    set_hands(g, {2: [R(3, 0), R(3, 1), R(2, 7)]}, rest=None)
    before = g.dollars[2]
    t.company_auction(2, T(2, 2), 0)
    t.wait(30_000)
    assert g.on[R(2, 7)] == T(2, 2)
    assert g.dollars[2] == before + profit(2, 7) + profit(2, 2)


def test_company_lone_tourists_card_stays_with_company_if_starter_cannot_take_it() -> None:
    t = _two_lone_tourists_with_company()
    g = t.g
    a = t.company_auction(2, T(2, 2), 0)  # seat 2 has no type-2 card, nobody bids
    t.wait(30_000)
    assert a not in g.auctions and T(2, 2) in g.company_cards
    assert t.last("auction_closed").data["outcome"] == "no_sale"


def test_company_pays_profit_of_bought_tourists_card_only_from_what_it_holds() -> None:
    t = _two_lone_tourists_with_company()
    g = t.g
    a = t.company_auction(2, T(2, 2), 0)
    t.bid(3, a, 10)
    g.dollars[2] += g.company_dollars  # the bank runs dry: only the price paid will be in it
    g.company_dollars = 0
    t.wait(30_000)
    placed = t.last("card_placed").data
    assert placed["profit"] == profit(2, 0) + profit(2, 2) and placed["paid"] == 10
    assert g.dollars[3] == 1000 and g.company_dollars == 0
