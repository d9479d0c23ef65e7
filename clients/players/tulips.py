"""The ``greedy`` Gift of Tulips player: it weighs each legal action by the points it scores now and by how it
moves the end-game majorities as the festival stands.

* Reads only its view: the card table (``cards``), the points tables (``scoring``), the festival ranking, every
  bouquet, and its own drawn card and dealt pair.
* A position's majority standing is the majority points this seat would score if the game ended now, less the
  mean of the other seats'; an action is worth its points now plus ``weight`` times the change in that standing
  (a card given away counts against it through the receiver).
* A card added face down reaches the festival only perhaps: it is worth ``secret_share`` of the same card added
  face up, and hides it from the others.
* Set-up: the pair is split the way that leaves the best standing.
"""

from __future__ import annotations

import random
from typing import Any

Holdings = list[dict[str, list[int]]]  # seat -> variety -> [count, value]


def ranked_after(ranking: list[list[Any]], variety: str, value: int) -> list[list[Any]]:
    """The festival ranking once a card of ``variety`` and ``value`` is added: ties go to the grown variety."""
    totals = {v: t for v, t in ranking}
    total = totals.get(variety, 0) + value
    rest = [[v, t] for v, t in ranking if v != variety]
    at = next((i for i, (_, t) in enumerate(rest) if t <= total), len(rest))
    return rest[:at] + [[variety, total]] + rest[at:]


def majority_points(order: list[str], holdings: Holdings, scoring: dict[str, Any]) -> list[int]:
    """What each seat would score in majorities with the festival ranked ``order``."""
    out = [0] * len(holdings)
    ranks = scoring["majority_ranks"]
    for place, variety in enumerate(order[: len(scoring["majority"])]):
        held = [tuple(h.get(variety, (0, 0))) for h in holdings]
        seats = sorted((s for s in range(len(held)) if held[s][0]), key=lambda s: (-held[s][0], -held[s][1]))
        for i, seat in enumerate(seats):
            rank = next(j for j in range(i + 1) if held[seats[j]] == held[seat])
            if rank < ranks:
                out[seat] += scoring["majority"][place][rank]
    return out


class TulipsGreedy:
    def __init__(self, seed: int, weight: float = 0.6, secret_share: float = 0.4) -> None:
        self.rng = random.Random(seed)
        self.weight = weight
        self.secret_share = secret_share

    def act(self, view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any] | None:
        if not legal:
            return None
        self.me, self.scoring = view["seat"], view["scoring"]
        self.card = {c[0]: (c[1], c[2]) for c in view["cards"]}
        self.ranking = view["festival"]["ranking"]
        self.holdings = self._holdings(view["players"])
        drawn = view.get("drawn")
        worth = {id(t): self._worth(t, drawn, view) for t in legal}
        best = max(worth.values())
        return self.rng.choice([t for t in legal if worth[id(t)] == best])

    def _holdings(self, players: list[dict[str, Any]]) -> Holdings:
        out: Holdings = [{} for _ in players]
        for p in players:
            for card in p["bouquet"]:
                variety, value = self.card[card]
                held = out[p["seat"]].setdefault(variety, [0, 0])
                held[0] += 1
                held[1] += value
        return out

    def standing(self, ranking: list[list[Any]], holdings: Holdings) -> float:
        points = majority_points([v for v, _ in ranking], holdings, self.scoring)
        others = [p for s, p in enumerate(points) if s != self.me]
        return points[self.me] - sum(others) / max(1, len(others))

    def _with(self, seat: int, card: int) -> Holdings:
        variety, value = self.card[card]
        out = [{v: list(h) for v, h in held.items()} for held in self.holdings]
        held = out[seat].setdefault(variety, [0, 0])
        held[0] += 1
        held[1] += value
        return out

    def _place(self, variety: str) -> int:
        order = [v for v, _ in self.ranking]
        return min(order.index(variety) + 1, 4) if variety in order else 4

    def _worth(self, template: dict[str, Any], drawn: int | None, view: dict[str, Any]) -> float:
        now = self.standing(self.ranking, self.holdings)
        kind = template["type"]
        if kind == "choose":
            keep = template["bouquet"]
            other = next(c for c in view["hand"] if c != keep)
            kept = self._with(self.me, keep)
            base = self.standing(self.ranking, kept)
            return base - now + self.secret_share * (self.standing(self._festival_with(other), kept) - base)
        assert drawn is not None
        variety, value = self.card[drawn]
        if kind == "keep":
            gain = self.scoring["keep"][self._place(variety) - 1]
            return gain + self.weight * (self.standing(self.ranking, self._with(self.me, drawn)) - now)
        if kind == "give":
            gain = value + self.scoring["give_bonus"][self._place(variety) - 1]
            return gain + self.weight * (self.standing(self.ranking, self._with(template["to"], drawn)) - now)
        shift = self.weight * (self.standing(self._festival_with(drawn), self.holdings) - now)
        return self.secret_share * shift if template["secret"] else shift

    def _festival_with(self, card: int) -> list[list[Any]]:
        variety, value = self.card[card]
        return ranked_after(self.ranking, variety, value)
