"""The auction views kept between rounds send what fresh ones would: after every step of random games and of
the legal-actions scenarios, each kept auction view equals a fresh ``auction_view``, and ``public_view`` packs
to the very bytes of one built without anything kept. (What ``legal_actions`` offers is held to the engine by
``test_legal.py``.)"""

from __future__ import annotations

import random
from typing import Any

import msgpack
import pytest

from server.games import IllegalAction, new_game
from server.games.parsimonia import Parsimonia

from .conftest import Table, check_invariants, make_table
from .test_legal import STATES
from .test_properties import TABLES


def pack(value: Any) -> bytes:
    return msgpack.packb(value, use_bin_type=True)  # as protocol.frames packs a view


def fresh_public_view(g: Parsimonia) -> dict[str, Any]:
    """``public_view`` with every auction's view built anew."""
    return {**g.public_view(), "auctions": [g.auction_view(a) for a in g.auctions.values()]}


def check_views(g: Parsimonia) -> None:
    # first what the last step left kept (before public_view refills it): a stale view shows here
    assert set(g._auction_views) <= set(g.auctions), "a closed auction's view is still kept"
    for auction_id, kept in g._auction_views.items():
        assert pack(kept) == pack(g.auction_view(g.auctions[auction_id])), f"auction {auction_id}: stale view"
    assert pack(g.public_view()) == pack(fresh_public_view(g))
    assert set(g._auction_views) == set(g.auctions)


def fill(template: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A command from a template: a bid mostly at its minimum (long auctions), any other range uniform."""
    out = {}
    for key, value in template.items():
        if isinstance(value, dict):
            low = template["type"] == "bid" and rng.random() < 0.7
            value = value["min"] if low else rng.randint(value["min"], value["max"])
        out[key] = value
    return out


def play(players: int, seed: int, options: dict[str, Any], time_scale: float, steps: int,
         check: Any) -> Parsimonia:
    """Random legal play, mostly bids (a rare quit or vote to end included), checked after every command and
    deadline."""
    g = new_game("parsimonia", players, seed, options, time_scale)
    assert isinstance(g, Parsimonia)
    rng = random.Random(seed)
    now = 0
    check(g)
    for _ in range(steps):
        if g.over:
            break
        deadline = g.next_deadline()
        if deadline is not None and (deadline <= now or rng.random() < 0.05):
            now = max(now, deadline)
            g.advance(now)
            check(g)
            continue
        seat = rng.randrange(players)
        legal = [t for t in g.legal_actions(seat) if t["type"] not in ("quit", "vote_end") or rng.random() < 0.01]
        bids = [t for t in legal if t["type"] == "bid"]
        if legal:
            try:
                g.apply(seat, fill(rng.choice(bids if bids and rng.random() < 0.8 else legal), rng), now)
            except IllegalAction:
                pass
            check(g)
        now += rng.randint(0, g.cfg.quiet_ms // 10)
    return g


@pytest.mark.parametrize("options,time_scale", TABLES)
@pytest.mark.parametrize("players", [2, 6])
def test_views_match_the_plain_ones(options, time_scale, players):
    for seed in (1, 2):
        play(players, seed, options, time_scale, 600, check_views)


def test_a_bid_shows_in_the_next_public_view():
    g = new_game("parsimonia", 3, 7)
    card = g.hands[0][0]
    g.apply(0, {"type": "auction", "card": card, "start_price": 0}, 1)
    [auction] = g.public_view()["auctions"]
    assert g.public_view()["auctions"][0] is auction  # unchanged: kept
    g.apply(1, {"type": "bid", "auction": auction["id"], "amount": 5}, 2)
    [after] = g.public_view()["auctions"]
    assert after["bids"] == [[1, 5]] and after["min_bid"] == 6 and after["closes_at"] == 2 + g.cfg.quiet_ms
    assert auction["bids"] == []  # the view sent before is not changed


@pytest.mark.parametrize("state", STATES, ids=lambda f: f.__name__)
def test_views_match_the_plain_ones_through_the_scenarios(state, monkeypatch):
    """The legal-actions scenarios (a lapse, a quit, a turn's own auctions ...), views checked by step."""

    def check(g: Parsimonia) -> None:
        check_invariants(g)
        check_views(g)

    monkeypatch.setattr(Table, "check", staticmethod(check))
    check(state().g)


def test_a_quitter_s_bids_leave_the_next_public_view():
    t = make_table(3)
    a = t.open_auction(0, t.g.hands[0][0])
    t.bid(1, a, 10)
    t.bid(2, a, 20)
    assert t.g.public_view()["auctions"][0]["bids"] == [[1, 10], [2, 20]]
    t.do(2, "quit")
    [view] = t.g.public_view()["auctions"]
    assert view["bids"] == [[1, 10]] and view["high_bidder"] == 1 and view["min_bid"] == 11
