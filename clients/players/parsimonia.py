"""The ``greedy`` reference player: a reasoned, short-sighted Parsimonia strategy.

* Pairs the drawn card with its most profitable free resource card; auctions it when it cannot.
* Places a tourists card it bought on its most profitable free resource card of that type, at once.
* Values a lot by what it would earn: a lone tourists card is worth the profits the Company pays at once
  (capped by what the Company still holds); a free resource card half of its expected pairing profit.
  It bids the minimum while the price is under ``bid_share`` of that value and it is not the high bidder.
* Sells surplus: free resource cards beyond ``keep_per_type`` of one type, one auction at a time.
* Takes Company cards through Company auctions.
* As a seller it accepts the highest bid once it reaches its reserve, else lets quiet time decide.
"""

from __future__ import annotations

import random
from typing import Any

from .base import with_value

AVG_TOURIST_BONUS = 7.5  # mean of the default decks' 0/5/10/15 step within a type


def priced(view: dict[str, Any], close: dict[str, Any]) -> dict[str, Any]:
    """A ``close`` that sells carrying the winner's bid as this view shows it (``price``): if the bid has moved
    by the time it arrives, the server refuses it (``price_changed``) rather than sell for another price."""
    if close.get("winner") is None:
        return close
    auction = next((a for a in view.get("auctions", ()) if a["id"] == close.get("auction")), None)
    bid = None if auction is None else next((amount for seat, amount in auction["bids"] if seat == close["winner"]),
                                            None)
    return close if bid is None else {**close, "price": bid}


class GreedyPlayer:
    def __init__(self, seed: int, bid_share: float = 0.7, keep_per_type: int = 3) -> None:
        self.rng = random.Random(seed)
        self.bid_share = bid_share
        self.keep_per_type = keep_per_type

    # -- reading the view

    def _setup(self, view: dict[str, Any]) -> None:
        self.me = view["seat"]
        if view["cards"] is not getattr(self, "_cards_seen", None):
            self._cards_seen = view["cards"]
            self.card = {c[0]: c for c in view["cards"]}  # id -> [id, kind, type, profit]
        self.mine = view["players"][self.me]
        self.company_dollars = view["company"]["dollars"]

    def _type(self, card: int) -> int:
        return self.card[card][2]

    def _profit(self, card: int) -> int:
        return self.card[card][3]

    def _free(self, card_type: int | None = None) -> list[int]:
        return [r for r, t in self.mine["resources"] if t is None and (card_type is None or self._type(r) == card_type)]

    def value(self, auction: dict[str, Any]) -> float:
        card = auction["lot"][0]
        bank = min(1.0, self.company_dollars / 1000)
        if auction["lot_kind"] == "tourists":
            free = self._free(self._type(card))
            if not free:
                return 0.0
            return min(self.company_dollars, self._profit(card) + max(self._profit(r) for r in free))
        pairing = self._profit(card) + 10 * self._type(card) + AVG_TOURIST_BONUS
        covered = any(r == card and t is not None for r, t in self.mine["resources"])
        return pairing * bank * (0.25 if covered else 0.5)

    def _surplus(self) -> list[int]:
        by_type: dict[int, list[int]] = {}
        for r in self._free():
            by_type.setdefault(self._type(r), []).append(r)
        out = []
        for cards in by_type.values():
            cards.sort(key=self._profit)
            out += cards[: max(0, len(cards) - self.keep_per_type)]
        return out

    # -- choosing

    def act(self, view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any] | None:
        self._setup(view)
        by_type: dict[str, list[dict[str, Any]]] = {}
        for t in legal:
            by_type.setdefault(t["type"], []).append(t)
        for choose in (self._settle_drawn, self._place_bought, self._close, self._bid, self._sell):
            command = choose(view, by_type)
            if command is not None:
                return command
        return None

    def _place_bought(self, view: dict[str, Any], legal: dict[str, list]) -> dict[str, Any] | None:
        """A bought tourists card goes on the free card of its type that pays the most (at once)."""
        if legal.get("place_bought"):
            return max(legal["place_bought"], key=lambda t: (self._profit(t["resource"]), -t["resource"]))
        return None

    def _settle_drawn(self, view: dict[str, Any], legal: dict[str, list]) -> dict[str, Any] | None:
        if legal.get("pair"):
            return max(legal["pair"], key=lambda t: self._profit(t["resource"]))
        if legal.get("auction_drawn"):
            return with_value(legal["auction_drawn"][0], "start_price", 0)
        if legal.get("place"):
            return min(legal["place"], key=lambda t: self._profit(t["resource"]))
        return None

    def _close(self, view: dict[str, Any], legal: dict[str, list]) -> dict[str, Any] | None:
        auctions = {a["id"]: a for a in view["auctions"]}
        for t in legal.get("close", []):
            a = auctions[t["auction"]]
            if t["winner"] is not None and t["winner"] == a["high_bidder"] and a["high"] >= self._reserve(a):
                return priced(view, t)
        return None

    def _reserve(self, auction: dict[str, Any]) -> float:
        card = auction["lot"][0]
        if auction["lot_kind"] == "tourists":
            return self._profit(card) / 2
        return (self._profit(card) + 10 * self._type(card)) / 2

    def _bid(self, view: dict[str, Any], legal: dict[str, list]) -> dict[str, Any] | None:
        auctions = {a["id"]: a for a in view["auctions"]}
        best: tuple[float, dict[str, Any]] | None = None
        for t in legal.get("bid", []):
            a = auctions[t["auction"]]
            if a["high_bidder"] == self.me:
                continue
            amount = t["amount"]["min"]
            surplus = self.bid_share * self.value(a) - amount
            command = with_value(t, "amount", amount)
            if surplus >= 0 and command is not None and (best is None or surplus > best[0]):
                best = (surplus, command)
        return best[1] if best else None

    def _sell(self, view: dict[str, Any], legal: dict[str, list]) -> dict[str, Any] | None:
        if legal.get("company_auction"):
            return with_value(legal["company_auction"][0], "start_price", 0)
        selling = any(a["seller"] == self.me for a in view["auctions"])
        if not selling:
            auctionable = {t["card"]: t for t in legal.get("auction", [])}
            surplus = [c for c in self._surplus() if c in auctionable] if auctionable else []
            if surplus:
                card = surplus[0]
                price = int((self._profit(card) + 10 * self._type(card)) / 4)
                return with_value(auctionable[card], "start_price", price)
            if legal.get("ready"):
                return legal["ready"][0]
        if legal.get("end_turn"):
            return legal["end_turn"][0]
        return None
