"""The ``greedy`` reference player for Kupcy: reasoned and short-sighted.

* Worth: a goods or money card is worth its face value, twice that while the player owns its origin's
  merchant; a merchant is worth what it doubles plus ``merchant_hope``.
* The ship it wants: its merchants first (no warehouse charter reaches them there), one strong card (value
  ``strong`` or more) to win goods with, then its cheapest cards: every offer goes to the seller, win or lose.
* Offers: for goods it values above the card, its cheapest strong enough; its merchant of the goods' origin
  only when the goods are worth more than what the merchant doubles; else its cheapest card.
* Pays charters with the cards it misses least, keeps drawn cards where its wanted ship says, and in the last
  round sells the goods card it values least (every other player pays a card for it).
"""

from __future__ import annotations

import random
from typing import Any

MERCHANT, MONEY, GOODS = "merchant", "money", "goods"


class KupcyGreedyPlayer:
    def __init__(self, seed: int, strong: int = 6, merchant_hope: int = 6) -> None:
        self.rng = random.Random(seed)
        self.strong = strong
        self.merchant_hope = merchant_hope

    # -- reading the view

    def _setup(self, view: dict[str, Any]) -> None:
        if view["cards"] is not getattr(self, "_cards_seen", None):
            self._cards_seen = view["cards"]
            self.card = {c[0]: c for c in view["cards"]}  # id -> [id, kind, origin, value, charter]
        me = view["players"][view["seat"]]
        self.ship = list(view["ship"])
        self.warehouse = list(me["warehouse"])
        self.owned = self.ship + self.warehouse + ([view["drawn"]] if view.get("drawn") is not None else [])
        self.merchants = {self.card[c][2] for c in self.owned if self.card[c][1] == MERCHANT}

    def kind(self, card: int) -> str:
        return self.card[card][1]

    def value(self, card: int) -> int:
        return self.card[card][3]

    def worth(self, card: int) -> int:
        _, kind, origin, value, _ = self.card[card]
        if kind == MERCHANT:
            return self.merchant_hope + sum(self.value(c) for c in self.owned
                                            if self.kind(c) != MERCHANT and self.card[c][2] == origin)
        return value * (2 if origin in self.merchants else 1)

    def wanted_ship(self, cards: list[int], size: int) -> list[int]:
        merchants = [c for c in cards if self.kind(c) == MERCHANT]
        priced = sorted((c for c in cards if self.kind(c) != MERCHANT), key=lambda c: (self.worth(c), c))
        strong = [c for c in priced if self.value(c) >= self.strong]
        chosen = merchants[:size] + strong[-1:]
        chosen += [c for c in priced if c not in chosen]
        return chosen[:size]

    # -- choosing

    def act(self, view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any] | None:
        if not legal:
            return None
        self._setup(view)
        by_type: dict[str, list[dict[str, Any]]] = {}
        for t in legal:
            by_type.setdefault(t["type"], []).append(t)
        for kind, choose in (("split", self._split), ("offer", self._offer), ("keep", self._keep),
                             ("pay", self._pay), ("sell", self._sell)):
            if kind in by_type:
                return choose(view, by_type[kind])
        if "load" in by_type or "unload" in by_type:
            return self._stow(view, by_type)
        return None

    def _split(self, view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
        ship = self.wanted_ship(self.ship, len(self.ship) - len(legal[0]["warehouse"]))
        warehouse = sorted(c for c in self.ship if c not in ship)
        return next((t for t in legal if t["warehouse"] == warehouse), legal[0])

    def _offer(self, view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
        goods = view["market"]["goods"]
        wanted = self.worth(goods)
        cards = [t["card"] for t in legal]
        joker = [c for c in cards if self.kind(c) == MERCHANT]
        priced = sorted((c for c in cards if self.kind(c) != MERCHANT), key=lambda c: (self.worth(c), c))
        if joker and (not priced or self.value(goods) > self.worth(joker[0])):
            return {"type": "offer", "card": joker[0]}
        strong = [c for c in priced if self.value(c) >= self.strong and self.worth(c) < wanted]
        pick = strong[0] if strong else (priced[0] if priced else joker[0])
        return {"type": "offer", "card": pick}

    def _keep(self, view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
        wanted = self.wanted_ship(self.ship + [view["drawn"]], len(self.ship))
        if view["drawn"] in wanted:
            out = next(c for c in self.ship if c not in wanted)
            return {"type": "keep", "where": "ship", "out": out}
        return {"type": "keep", "where": "warehouse", "out": None}

    def _pay(self, view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
        cards = sorted((t["card"] for t in legal), key=lambda c: (self.kind(c) == MERCHANT, self.worth(c), c))
        due = view["debt"]["worth"]
        if due is not None:
            covering = [c for c in cards if self.value(c) >= due]
            return {"type": "pay", "card": covering[0] if covering else cards[-1]}
        return {"type": "pay", "card": cards[0]}

    def _sell(self, view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
        sales = [t for t in legal if t["type"] == "sell"]
        return min(sales, key=lambda t: (self.worth(t["card"]), t["card"])) if sales else legal[0]

    def _stow(self, view: dict[str, Any], legal: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
        me = view["players"][view["seat"]]
        size = min(5, me["owned"])
        wanted = self.wanted_ship(self.owned, size)
        loads = [t for t in legal.get("load", []) if t["card"] in wanted]
        spare = [t for t in legal.get("unload", []) if t["card"] not in wanted]
        missing = [c for c in wanted if c in self.warehouse]
        if spare and len(missing) > size - len(self.ship):
            return spare[0]
        if loads:
            return loads[0]
        if legal.get("load"):
            return legal["load"][0]
        return spare[0] if spare else legal["unload"][0]
