"""Players' auctions (the seller picks the winner), bids, commitments across concurrent auctions, the
tourists-card bidding restriction, and gifts."""

from __future__ import annotations

from .conftest import MIN, R, T, Table, cover, make_table, profit, start_turns


def _opening_auction(table: Table, seat: int = 0, start_price: int = 10) -> tuple[int, int]:
    card = table.g.hands[seat][0]
    return table.open_auction(seat, card, start_price), card


# ------------------------------------------------------------------ closing


def test_seller_may_pick_any_bidder_who_pays_own_highest_bid(table: Table) -> None:
    g = table.g
    a, card = _opening_auction(table)
    table.bid(1, a, 20)
    table.bid(2, a, 30)
    table.bid(1, a, 40)
    table.bid(2, a, 50)
    table.close(0, a, 1)  # not the highest bidder
    assert g.dollars == [1040, 960, 1000]
    assert card in g.hands[1] and a not in g.auctions
    closed = table.last("auction_closed").data
    assert closed["outcome"] == "sold" and closed["winner"] == 1 and closed["price"] == 40


def test_seller_may_close_with_no_sale(table: Table) -> None:
    g = table.g
    a, card = _opening_auction(table)
    table.bid(1, a, 20)
    table.close(0, a, None)
    assert card in g.hands[0] and g.dollars == [1000] * 3 and g.committed(1) == 0
    assert table.last("auction_closed").data["outcome"] == "no_sale"


def test_close_naming_a_non_bidder_refused(table: Table) -> None:
    a, _ = _opening_auction(table)
    table.bid(1, a, 20)
    table.refuse(0, "not_a_bidder", "close", auction=a, winner=2)
    table.refuse(0, "not_a_bidder", "close", auction=a, winner=0)


def test_close_with_the_price_the_seller_saw_sells_at_it(table: Table) -> None:
    a, card = _opening_auction(table)
    table.bid(1, a, 20)
    table.do(0, "close", auction=a, winner=1, price=20)
    assert card in table.g.hands[1] and table.g.dollars == [1020, 980, 1000]
    assert table.last("auction_closed").data["price"] == 20


def test_close_with_a_price_no_longer_bid_refused(table: Table) -> None:
    a, _ = _opening_auction(table)
    table.bid(1, a, 20)
    table.bid(2, a, 25)
    table.bid(1, a, 30)  # the seller's "Sell to 1 for $20" is stale now
    table.refuse(0, "price_changed", "close", auction=a, winner=1, price=20)
    table.refuse(0, "price_changed", "close", auction=a, winner=2, price=30)
    assert a in table.g.auctions and table.g.dollars == [1000] * 3
    table.refuse(0, "price_without_winner", "close", auction=a, winner=None, price=30)
    table.do(0, "close", auction=a, winner=2, price=25)
    assert table.last("auction_closed").data["price"] == 25


def test_close_by_anyone_but_the_seller_refused(table: Table) -> None:
    a, _ = _opening_auction(table)
    table.bid(1, a, 20)
    table.refuse(1, "not_seller", "close", auction=a, winner=1)
    table.refuse(2, "not_seller", "close", auction=a, winner=None)


def test_close_of_auction_not_open_refused(table: Table) -> None:
    a, _ = _opening_auction(table)
    table.close(0, a, None)
    table.refuse(0, "no_such_auction", "close", auction=a, winner=None)
    table.refuse(1, "no_such_auction", "bid", auction=a, amount=50)
    table.refuse(1, "no_such_auction", "bid", auction=999, amount=50)


def test_quiet_time_sells_to_highest_bidder(table: Table) -> None:
    g = table.g
    a, card = _opening_auction(table)
    table.at(1000)
    table.bid(1, a, 60)
    table.at(2000)
    table.bid(2, a, 50 + 20)
    table.at(2000 + 30_000 - 1)
    assert a in g.auctions
    table.at(2000 + 30_000)
    assert a not in g.auctions and card in g.hands[2]
    assert g.dollars == [1070, 1000, 930]
    assert table.last("auction_closed").data["reason"] == "quiet"


def test_a_pause_moves_an_open_auctions_times_with_its_quiet_time(table: Table) -> None:
    g = table.g
    a, _ = _opening_auction(table)
    table.at(1000)
    table.bid(1, a, 60)
    assert [v["closes_at"] for v in g.public_view()["auctions"]] == [1000 + 30_000]
    g.shift(5000)  # the table was paused 5 s (or the server was down)
    table.t = g.now
    view = {v["id"]: v for v in g.public_view()["auctions"]}[a]
    assert view["closes_at"] == 1000 + 5000 + 30_000 == g.next_deadline()
    assert view["opened_at"] == 0 == table.last("auction_opened").at  # history: the pause does not move it
    table.at(1000 + 5000 + 30_000 - 1)
    assert a in g.auctions
    table.at(1000 + 5000 + 30_000)
    closed = table.last("auction_closed")
    assert closed.data["reason"] == "quiet" and closed.at == view["closes_at"]


def test_each_bid_restarts_quiet_time(table: Table) -> None:
    g = table.g
    a, _ = _opening_auction(table)
    assert g.auctions[a].closes_at == 30_000
    table.at(25_000)
    table.bid(1, a, 11)
    assert g.auctions[a].closes_at == 55_000 and g.next_deadline() == 55_000
    table.at(50_000)
    table.bid(2, a, 12)
    table.at(79_999)
    assert a in g.auctions
    table.at(80_000)
    assert a not in g.auctions


def test_auction_without_bids_closes_at_quiet_time_with_no_sale(table: Table) -> None:
    g = table.g
    a, card = _opening_auction(table)
    table.at(30_000)
    assert a not in g.auctions and card in g.hands[0]
    assert table.last("auction_closed").data["outcome"] == "no_sale"


# ------------------------------------------------------------------ bids


def test_bid_equal_to_start_price_rejected(table: Table) -> None:
    a, _ = _opening_auction(table, start_price=10)
    table.refuse(1, "bid_too_low", "bid", auction=a, amount=10)
    table.refuse(1, "bid_too_low", "bid", auction=a, amount=3)
    table.bid(1, a, 11)


def test_bid_above_zero_start_price_accepted() -> None:
    t = make_table(3)
    a, _ = _opening_auction(t, start_price=0)
    t.bid(1, a, 1)
    assert t.g.auctions[a].high() == (1, 1)


def test_bid_below_current_rejected(table: Table) -> None:
    a, _ = _opening_auction(table, start_price=10)
    table.bid(1, a, 50)
    table.refuse(2, "bid_too_low", "bid", auction=a, amount=40)
    table.refuse(2, "bid_too_low", "bid", auction=a, amount=50)  # equal is not higher
    table.refuse(1, "bid_too_low", "bid", auction=a, amount=50)  # nor for the high bidder
    table.bid(2, a, 51)


def test_seller_cannot_bid_in_own_auction(table: Table) -> None:
    a, _ = _opening_auction(table)
    table.refuse(0, "own_auction", "bid", auction=a, amount=20)


def test_bid_more_than_own_dollars_refused(table: Table) -> None:
    a, _ = _opening_auction(table)
    table.refuse(1, "not_enough_dollars", "bid", auction=a, amount=1001)
    table.bid(1, a, 1000)


def test_open_bids_across_concurrent_auctions_may_not_exceed_dollars(table: Table) -> None:
    g = table.g
    a, _ = _opening_auction(table, seat=0)
    b, _ = _opening_auction(table, seat=1)
    table.bid(2, a, 600)
    table.refuse(2, "over_committed", "bid", auction=b, amount=401)
    table.bid(2, b, 400)
    assert g.committed(2) == 1000 and g.free_dollars(2) == 0


def test_raising_own_bid_counts_only_the_new_amount(table: Table) -> None:
    g = table.g
    a, _ = _opening_auction(table, seat=0)
    b, _ = _opening_auction(table, seat=1)
    table.bid(2, a, 300)
    table.bid(2, b, 400)
    table.bid(1, a, 301)
    table.bid(2, a, 600)  # 600 + 400 = 1000: the earlier 300 no longer counts
    assert g.committed(2) == 1000
    table.refuse(2, "over_committed", "bid", auction=a, amount=601)


def test_outbid_bid_stays_committed_because_seller_may_still_pick_it(table: Table) -> None:
    g = table.g
    a, _ = _opening_auction(table, seat=0)
    b, _ = _opening_auction(table, seat=1)
    table.bid(2, a, 600)
    table.bid(1, a, 700)
    assert g.committed(2) == 600
    table.refuse(2, "over_committed", "bid", auction=b, amount=500)


def test_commitment_released_when_auction_closes(table: Table) -> None:
    g = table.g
    a, _ = _opening_auction(table, seat=0)
    b, _ = _opening_auction(table, seat=1)
    table.bid(2, a, 900)
    table.close(0, a, None)
    assert g.committed(2) == 0
    table.bid(2, b, 1000)


def test_winner_pays_from_committed_dollars_and_may_bid_rest(table: Table) -> None:
    g = table.g
    a, _ = _opening_auction(table, seat=0)
    b, _ = _opening_auction(table, seat=1)
    table.bid(2, a, 700)
    table.close(0, a, 2)
    assert g.dollars[2] == 300 and g.committed(2) == 0
    table.refuse(2, "not_enough_dollars", "bid", auction=b, amount=301)
    table.bid(2, b, 300)


def test_start_price_above_bank_refused(table: Table) -> None:
    start_turns(table, {0: [R(2, 0), R(3, 0)]}, draws=(T(2, 2),))
    table.refuse(0, "start_price_too_high", "auction_drawn", start_price=7761)
    table.do(0, "auction_drawn", start_price=7760)


# ------------------------------------------------------------------ what is sold


def test_resource_card_carrying_tourists_card_sold_with_it(table: Table) -> None:
    g = table.g
    start_turns(table, {0: [R(2, 0), R(3, 0)], 1: [R(4, 0), R(4, 1)]}, draws=(T(2, 2),))
    table.do(0, "pair", resource=R(2, 0))
    a = table.open_auction(0, R(2, 0), 0)
    assert g.on == {R(2, 0): T(2, 2)}  # it travels with its card
    table.bid(1, a, 70)
    before = g.dollars[0]
    table.close(0, a, 1)
    assert R(2, 0) in g.hands[1] and g.on == {R(2, 0): T(2, 2)}
    assert g.dollars[1] == 930 and g.dollars[0] == before + 70  # no profit is paid for a transfer


def test_bought_covered_card_makes_full_set_of_buyer_without_other_cards(table: Table) -> None:
    g = table.g
    start_turns(table, {0: [R(2, 0), R(3, 0)], 1: []}, draws=(T(2, 2),))
    table.do(0, "pair", resource=R(2, 0))
    a = table.open_auction(0, R(2, 0), 0)
    table.bid(1, a, 5)
    table.close(0, a, 1)
    assert g.hands[1] == [R(2, 0)] and g.aside == [T(2, 2)] and g.on == {}
    assert table.last("tourists_cleared").data == {"seat": 1, "cards": [T(2, 2)]}


# ------------------------------------------------------------------ tourists cards


def test_tourists_card_bid_needs_free_resource_card_of_its_type(table: Table) -> None:
    g = table.g
    cover(g, R(2, 5), T(2, 5))
    start_turns(table, {0: [R(3, 0)], 1: [R(4, 0)], 2: [R(2, 5), R(4, 1)]}, draws=(T(2, 2),), rest=None)
    a = table.auction_drawn(0, 0)
    table.refuse(1, "no_free_resource_of_type", "bid", auction=a, amount=10)  # no type-2 card
    table.refuse(2, "no_free_resource_of_type", "bid", auction=a, amount=10)  # its type-2 card is covered


# ------------------------------------------------------------------ gifts


def test_give_dollars_to_another_player(table: Table) -> None:
    g = table.g
    table.do(0, "give", to=2, amount=250)
    assert g.dollars == [750, 1000, 1250]
    assert table.last("gift").data == {"seat": 0, "to": 2, "amount": 250}


def test_give_allowed_at_any_time_even_off_turn(table: Table) -> None:
    g = table.g
    start_turns(table)
    table.at(MIN)
    table.do(2, "give", to=0, amount=1000)
    assert g.dollars == [2000, 1000, 0]


def test_give_committed_dollars_refused(table: Table) -> None:
    g = table.g
    a, _ = _opening_auction(table, seat=0)
    table.bid(1, a, 700)
    table.refuse(1, "dollars_committed", "give", to=2, amount=301)
    table.do(1, "give", to=2, amount=300)
    assert g.dollars[1] == 700 and g.committed(1) == 700


def test_give_more_than_held_refused(table: Table) -> None:
    table.refuse(0, "dollars_committed", "give", to=1, amount=1001)


def test_give_to_self_or_absent_seat_refused(table: Table) -> None:
    table.refuse(0, "no_such_seat", "give", to=0, amount=1)
    table.refuse(0, "no_such_seat", "give", to=3, amount=1)


def test_give_to_player_who_quit_refused(table: Table) -> None:
    table.do(2, "quit")
    table.refuse(0, "not_in_game", "give", to=2, amount=1)
