"""The trading operation: sealed offers, the comparison, tie re-bids among the tied only, where the cards go."""

from __future__ import annotations

from .conftest import ARB, BYZ, RUS, WEST, G, K, M, start

# Seat 0 draws Rus goods 9; seats 1 and 2 offer. Every seat has a 5-card ship and a 2-card warehouse.
SHIPS = {
    0: [G(WEST, 3), G(WEST, 4), G(WEST, 5), G(WEST, 6), G(WEST, 7)],
    1: [G(BYZ, 3), G(BYZ, 5), M(RUS, 4), K(RUS), G(ARB, 7)],
    2: [G(ARB, 3), G(ARB, 5), M(BYZ, 4), K(BYZ), G(ARB, 7, 1)],
}
WAREHOUSES = {0: [G(WEST, 8), G(WEST, 9)], 1: [G(BYZ, 8), G(BYZ, 9)], 2: [G(ARB, 8), G(ARB, 9)]}
GOODS = G(RUS, 9)


def trade(**kw):
    return start(3, {**SHIPS, **kw.pop("ships", {})}, {**WAREHOUSES, **kw.pop("warehouses", {})},
                 (GOODS,) + kw.pop("draws", ()), **kw)


def test_a_drawn_goods_card_opens_a_trade_for_every_other_player():
    t = trade()
    opened = t.last("trade_opened")
    assert opened.data["seller"] == 0 and opened.data["goods"] == GOODS and opened.data["seats"] == [1, 2]
    assert t.g.step == "trade" and t.g.market.sealed.pending == [1, 2]


def test_the_highest_value_wins_and_every_offer_goes_to_the_seller():
    t = trade()
    t.offer(1, G(BYZ, 5))
    t.offer(2, G(ARB, 3))
    closed = t.last("trade_closed")
    assert closed.data["winner"] == 1 and sorted(closed.data["to_seller"]) == sorted([G(BYZ, 5), G(ARB, 3)])
    assert GOODS in t.g.warehouses[1]
    assert {G(BYZ, 5), G(ARB, 3)} <= set(t.g.warehouses[0])


def test_an_offer_is_sealed_until_every_offer_is_in():
    t = trade()
    [made] = t.offer(1, G(BYZ, 5))
    assert made.audience == {1} and made.redacted == {"seat": 1}
    assert made.wire_for(2) == {"type": "offer_made", "at": made.at, "seat": 1}
    assert made.wire_for(None) == {"type": "offer_made", "at": made.at, "seat": 1}
    assert t.g.public_view()["market"]["offers"] == []
    assert t.g.public_view()["market"]["chosen"] == [1]
    assert t.g.private_view(1)["sealed"] == G(BYZ, 5) and t.g.private_view(2)["sealed"] is None


def test_a_second_offer_and_an_offer_from_the_seller_are_refused():
    t = trade()
    t.offer(1, G(BYZ, 5))
    t.refuse(1, "already_chosen", "offer", card=G(BYZ, 3))
    t.refuse(0, "no_choice_owed", "offer", card=G(WEST, 3))


def test_a_card_not_in_the_ship_or_a_merchant_of_another_origin_cannot_be_offered():
    t = trade()
    t.refuse(2, "cannot_offer", "offer", card=K(BYZ))
    t.refuse(2, "cannot_offer", "offer", card=G(ARB, 8))  # in the warehouse
    t.refuse(2, "cannot_offer", "offer", card=G(BYZ, 3))  # seat 1's


def test_a_merchant_of_the_goods_origin_beats_every_price_and_is_shuffled_back_into_the_deck():
    t = trade()
    t.offer(1, K(RUS))
    t.offer(2, G(ARB, 7, 1))
    closed = t.last("trade_closed")
    assert closed.data["winner"] == 1 and closed.data["to_deck"] == [K(RUS)]
    assert closed.data["to_seller"] == [G(ARB, 7, 1)]
    assert K(RUS) in t.g.deck and K(RUS) not in t.g.owned(0)


def test_among_equal_values_money_of_the_goods_origin_wins():
    t = trade(ships={2: [G(ARB, 3), G(ARB, 5), G(RUS, 4), K(BYZ), G(ARB, 7, 1)]})
    t.offer(1, M(RUS, 4))
    t.offer(2, G(RUS, 4))
    assert t.last("trade_closed").data["winner"] == 1


def test_a_tie_is_re_bid_sealed_by_the_tied_players_only():
    t = start(4, {**SHIPS, 3: [G(RUS, 3), G(RUS, 4), G(RUS, 5), M(ARB, 1), M(ARB, 2)]},
              {**WAREHOUSES, 3: [G(RUS, 6), G(RUS, 7)]}, (GOODS,))
    t.offer(1, G(ARB, 7))
    t.offer(2, G(ARB, 7, 1))
    t.offer(3, M(ARB, 1))
    rebid = t.last("rebid")
    assert rebid.data["seats"] == [1, 2] and rebid.data["round"] == 2
    t.refuse(3, "no_choice_owed", "offer", card=M(ARB, 2))
    [made] = t.offer(2, G(ARB, 5))
    assert made.audience == {2} and made.data["round"] == 2
    t.offer(1, G(BYZ, 3))
    closed = t.last("trade_closed")
    assert closed.data["winner"] == 2
    assert sorted(closed.data["to_seller"]) == sorted([G(ARB, 7), G(ARB, 7, 1), M(ARB, 1), G(ARB, 5), G(BYZ, 3)])
    assert [o[2] for o in closed_rounds(t)] == [1, 1, 1, 2, 2]


def closed_rounds(t):
    return [[s, c, e.data["round"]] for e in t.events("offers_revealed") for s, c in e.data["offers"]]


def test_a_tied_player_with_no_card_left_drops_out_and_the_lone_one_left_wins():
    t = trade(ships={1: [G(ARB, 7)], 2: [G(ARB, 7, 1), G(ARB, 3), G(ARB, 4), G(ARB, 5), G(ARB, 6)]},
              warehouses={1: []})
    t.offer(1, G(ARB, 7))
    t.offer(2, G(ARB, 7, 1))
    closed = t.last("trade_closed")
    assert closed.data["winner"] == 2 and not t.events("rebid")


def test_when_no_tied_player_can_offer_again_the_goods_stay_with_the_seller():
    t = trade(ships={1: [G(ARB, 7)], 2: [G(ARB, 7, 1)]}, warehouses={1: [], 2: []})
    t.offer(1, G(ARB, 7))
    t.offer(2, G(ARB, 7, 1))
    closed = t.last("trade_closed")
    assert closed.data["winner"] is None and GOODS in t.g.warehouses[0]
    assert {G(ARB, 7), G(ARB, 7, 1)} <= set(t.g.warehouses[0])


def test_at_the_bid_deadline_the_lowest_ship_card_is_offered_and_never_the_merchant():
    t = trade()
    t.offer(2, G(ARB, 5))
    t.timeout("bid")
    revealed = t.last("offers_revealed")
    assert dict(map(tuple, revealed.data["offers"]))[1] == G(BYZ, 3) and revealed.data["defaulted"] == [1]


def test_a_ship_with_nothing_to_offer_takes_no_part():
    t = trade(ships={1: [K(WEST)]}, warehouses={1: []})
    assert t.last("trade_opened").data["seats"] == [2]


def test_with_nobody_to_offer_the_goods_stay_with_the_seller_at_once():
    t = trade(ships={1: [], 2: []}, warehouses={1: [], 2: []})
    closed = t.last("trade_closed")
    assert closed.data["winner"] is None and GOODS in t.g.warehouses[0]
    assert t.g.market is None or t.g.market.goods != GOODS  # the next player's turn has begun


def test_after_a_trade_the_bidders_stow_their_ships_back_to_five():
    t = trade()
    t.offer(1, G(BYZ, 5))
    t.offer(2, G(ARB, 3))
    assert t.g.step == "stow" and t.g.stowing == {1, 2}
    t.do(1, "load", card=GOODS)
    assert t.g.stowing == {2}
    t.refuse(1, "not_stowing", "load", card=G(BYZ, 8))
