"""Parsimonia in words for watch and the bots' lines: an auction that opens reads as an opening, not a sale."""

from __future__ import annotations

from clients.words.parsimonia import describe

STATIC = {"cards": [[36, "resource", 4, 55]]}


def test_an_opened_auction_reads_as_an_auction_opening_with_its_start_price_and_quiet_time():
    auction = {"id": 154, "seller": 0, "lot": [36], "start_price": 5778, "rule": "highest", "closes_at": 13_000}
    line = describe({"type": "auction_opened", "at": 5_000, "auction": auction}, STATIC, ["Ada", "Bob"])
    assert line == ("Ada opens auction 154 for type-4 resource ($55), bids from $5778 "
                    "(highest bid wins; it closes after 0:08 with no bid)")
    assert "sells" not in line
