"""The ``random`` reference player: uniform over its legal commands (bids and auctions included), with
uniform amounts. It never quits or votes to end, which would only cut every game short. A Parsimonia sale carries the
price it saw (``parsimonia.priced``)."""

from __future__ import annotations

import random
from typing import Any

from .base import fill
from .parsimonia import priced

SKIPPED = {"quit", "vote_end"}


class RandomPlayer:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def act(self, view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any] | None:
        choices = [t for t in legal if t["type"] not in SKIPPED]
        if not choices:
            return None
        command = fill(self.rng.choice(choices), self.rng)
        return priced(view, command) if command["type"] == "close" else command
