"""The game-independent open-outcry auction: bids, minimum bid, quiet time, withdrawals, commitments."""

from __future__ import annotations

import pytest

from server.games.machines.auction import HIGHEST_WINS, SELLER_PICKS, OpenAuction, committed
from server.games.base import IllegalAction
from server.games.machines.timers import Timers


def make(seller=0, starter=0, start_price=10, quiet_ms=1000, rule=SELLER_PICKS, opened_at=5000, id=1, timers=None):
    timers = Timers() if timers is None else timers
    return OpenAuction(id, seller, starter, (42,), start_price, quiet_ms, rule, opened_at, ("auction", id), timers)


def refused(auction, seat, amount):
    with pytest.raises(IllegalAction) as info:
        auction.bid(seat, amount, 6000)
    return info.value.code


def test_quiet_time_counts_from_the_opening_until_the_first_bid():
    a = make()
    assert a.closes_at == 6000 == a.timers.get(("auction", 1))


def test_each_bid_restarts_quiet_time():
    a = make()
    a.bid(1, 11, 5400)
    assert a.closes_at == 6400
    a.bid(2, 12, 6300)
    assert a.closes_at == 7300


def test_minimum_bid_is_above_start_price_then_above_the_high_bid():
    a = make(start_price=10)
    assert a.min_bid() == 11
    a.bid(1, 30, 5001)
    assert a.min_bid() == 31
    assert make(start_price=0).min_bid() == 1


def test_a_bid_at_the_start_price_or_the_high_bid_is_too_low():
    a = make(start_price=10)
    assert refused(a, 1, 10) == "bid_too_low"
    a.bid(1, 11, 5001)
    assert refused(a, 2, 11) == "bid_too_low"
    assert a.bids == {1: 11}
    assert a.closes_at == 6001


def test_the_seller_cannot_bid():
    a = make(seller=0, starter=0)
    assert refused(a, 0, 100) == "own_auction"
    assert a.bids == {} and not a.contested
    assert a.closes_at == 6000


def test_in_a_company_auction_everyone_may_bid_the_starter_too():
    a = make(seller=None, starter=2, rule=HIGHEST_WINS)
    a.bid(2, 50, 5001)
    a.bid(0, 51, 5002)
    assert a.high() == (0, 51) and a.bids == {2: 50, 0: 51}


def test_check_bid_changes_nothing():
    a = make()
    a.check_bid(1, 11)
    assert a.bids == {} and a.closes_at == 6000


def test_high_is_the_best_standing_bid_and_bidders_keep_their_own_highest():
    a = make()
    assert a.high() is None
    a.bid(1, 11, 5001)
    a.bid(2, 15, 5002)
    a.bid(1, 20, 5003)
    assert a.high() == (1, 20)
    assert a.bids == {1: 20, 2: 15}


def test_withdraw_lets_the_next_highest_bid_stand():
    a = make()
    a.bid(1, 11, 5001)
    a.bid(2, 15, 5002)
    a.withdraw(2)
    assert a.high() == (1, 11)
    assert a.min_bid() == 12
    a.withdraw(2)  # twice, or a seat that never bid: harmless
    a.withdraw(4)
    a.withdraw(1)
    assert a.high() is None and a.min_bid() == 11


def test_contested_remembers_a_bid_after_it_is_withdrawn():
    a = make()
    assert not a.contested
    a.bid(1, 11, 5001)
    a.withdraw(1)
    assert a.high() is None and a.contested


def test_a_bid_by_the_starter_alone_does_not_contest_a_house_auction():
    a = make(seller=None, rule=HIGHEST_WINS)
    a.bid(0, 11, 5001)
    assert a.high() == (0, 11) and not a.contested
    a.bid(1, 12, 5002)
    assert a.contested


def test_commitment_is_the_sum_of_own_highest_bids_even_when_outbid():
    a, b = make(id=1), make(id=2)
    a.bid(1, 11, 5001)
    a.bid(1, 40, 5002)
    a.bid(2, 41, 5003)  # seat 1 outbid here, still committed
    b.bid(1, 100, 5004)
    assert committed([a, b], 1) == 140
    assert committed([a, b], 2) == 41
    assert committed([a, b], 3) == 0
    assert committed([], 1) == 0


def test_view_shows_bids_high_and_times():
    a = make(seller=0, starter=0, start_price=10)
    a.bid(2, 15, 5100)
    a.bid(1, 20, 5200)
    assert a.to_view() == {
        "id": 1,
        "seller": 0,
        "starter": 0,
        "lot": [42],
        "rule": SELLER_PICKS,
        "start_price": 10,
        "bids": [[1, 20], [2, 15]],
        "high_bidder": 1,
        "high": 20,
        "min_bid": 21,
        "opened_at": 5000,
        "closes_at": 6200,
    }


def test_its_quiet_time_is_the_timer_it_set_so_a_shift_of_the_timers_moves_closes_at_alone():
    timers = Timers()
    a = make(timers=timers)
    a.bid(1, 11, 5400)
    assert timers.get(("auction", 1)) == a.closes_at == 6400
    timers.shift(700)
    assert a.closes_at == 7100 and a.to_view()["closes_at"] == 7100
    assert a.opened_at == 5000  # when it opened stays history


def test_closes_at_is_none_once_its_timer_is_gone():
    a = make()
    a.timers.cancel(("auction", 1))
    assert a.closes_at is None


def test_view_of_an_auction_without_bids():
    view = make().to_view()
    assert view["bids"] == [] and view["high_bidder"] is None and view["high"] is None
    assert view["min_bid"] == 11
