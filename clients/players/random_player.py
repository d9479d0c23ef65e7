"""The ``random`` reference player: uniform over its legal commands (bids and auctions included), with
uniform amounts. It never quits or votes to end, which would only cut every game short. A Parsimonia sale carries the
price it saw (``parsimonia.priced``).

It stays an opponent a person can play: a starting price is never above what the richest other player could pay
(their dollars not committed to bids), and it keeps at most ``MAX_OWN_AUCTIONS`` auctions of its own cards open."""

from __future__ import annotations

import random
from typing import Any

from .base import fill, is_range
from .parsimonia import priced

SKIPPED = {"quit", "vote_end"}
MAX_OWN_AUCTIONS = 2  # auctions of its own hand it keeps open at once (a drawn card's is the turn's, always allowed)


def payable(view: dict[str, Any], template: dict[str, Any]) -> dict[str, Any]:
    """``template`` with a ``start_price`` range capped at the most another active player could pay now."""
    price = template.get("start_price")
    players = view.get("players")
    if not is_range(price) or not isinstance(players, list):
        return template
    others = [p for i, p in enumerate(players) if i != view.get("seat") and p.get("active", True)]
    most = max((p.get("dollars", 0) - p.get("committed", 0) for p in others), default=price["min"])
    return {**template, "start_price": {"min": price["min"], "max": max(price["min"], min(price["max"], most))}}


class RandomPlayer:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def act(self, view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any] | None:
        choices = [t for t in legal if t["type"] not in SKIPPED]
        own = sum(a.get("seller") == view.get("seat") for a in view.get("auctions", ()))
        if own >= MAX_OWN_AUCTIONS:
            choices = [t for t in choices if t["type"] != "auction"]
        if not choices:
            return None
        command = fill(payable(view, self.rng.choice(choices)), self.rng)
        return priced(view, command) if command["type"] == "close" else command
