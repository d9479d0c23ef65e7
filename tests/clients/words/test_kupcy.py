"""Kupcy in words for watch and the bots' lines: cards by name, money by its coin, as the page says."""

from __future__ import annotations

from clients.words.kupcy import card_name, summary
from tests.games.kupcy.conftest import ARB, G, M, RUS, make_game


def test_money_is_named_by_its_coin_as_the_page_names_it():
    static = make_game(3).static()
    assert card_name(static, M(ARB, 1)) == "Arabian dirham 1"
    assert card_name(static, M(RUS, 5)) == "Rus grivna 5"
    assert card_name(static, G(RUS, 3)) == "Rus goods 3"


def test_the_summary_names_the_market_goods_when_the_view_carries_the_cards():
    g = make_game(3)
    view = {**g.public_view(), "phase": "turns", "turn": 4, "current": 0, "step": "trade",
            "market": {"goods": G(RUS, 3), "seller": 0, "round": 1, "chosen": [1], "seats": [1, 2]}}
    names = ["ann", "bob", "cy"]
    assert "  market: Rus goods 3 from ann, round 1, 1/2 offers in" in summary({**g.static(), **view}, names)
    assert "  market: card 0 from ann, round 1, 1/2 offers in" in summary(view, names)  # no card table
