"""A trading operation: the goods on the market, the sealed offers round by round, and who wins.

The comparison (``leaders``) is the rules' alone: a merchant of the goods' origin beats every price; else
the highest face value; among equal values a money card of the goods' origin. More than one leader is a tie,
re-bid sealed among the tied seats only (a new ``SealedChoice`` per round).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from protocol.values import Snapshot

from server.games.machines.sealed import SealedChoice, SealedView

from .cards import MERCHANT, MONEY, Card

BID = "bid"  # the deadline of the current round's sealed offers


def leaders(offers: Mapping[int, int], goods: Card, cards: Mapping[int, Card]) -> list[int]:
    """The seats whose offers (seat -> card) compare best: one is the winner, several a tie."""
    jokers = [s for s, c in offers.items() if cards[c].kind == MERCHANT]
    if jokers:
        return sorted(jokers)
    top = max(cards[c].value for c in offers.values())
    best = [s for s, c in offers.items() if cards[c].value == top]
    home = [s for s in best if cards[offers[s]].kind == MONEY and cards[offers[s]].origin == goods.origin]
    return sorted(home or best)


class MarketView(SealedView):
    """A market as everyone sees it: the goods on sale, the revealed offers (``[seat, card, round]``) and the
    sealed round's public part."""

    seller: int
    goods: int
    last_round: bool
    round: int
    offers: list[list[int]]


@dataclass
class Market:
    seller: int
    goods: int
    last_round: bool  # an operation of the last round (the seller sold a card of their own)
    sealed: SealedChoice  # the current round's offers
    round: int = 1
    offered: list[list[int]] = field(default_factory=list)  # [seat, card, round] of every revealed offer

    def to_view(self) -> MarketView:
        return {"seller": self.seller, "goods": self.goods, "last_round": self.last_round, "round": self.round,
                "offers": [list(o) for o in self.offered], **self.sealed.to_view()}

    def snapshot(self) -> Snapshot:
        return {"seller": self.seller, "goods": self.goods, "last_round": self.last_round, "round": self.round,
                "offered": [list(o) for o in self.offered], "sealed": self.sealed.snapshot()}
