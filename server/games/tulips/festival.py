"""The festival: the face-up stacks of tulips and the ranking of their varieties.

A variety's total is the sum of the values in its stack. When a card is added, its variety moves up to the
first place whose variety has a total equal to or lower than its new one, pushing those below down: ties go to
the variety that just grew. Places are 1.. in ranking order; a variety with no card in the festival, or ranked
beyond the last scoring place, counts as the last place (4th) for keep and give.
"""

from __future__ import annotations

from typing import Any
from protocol.values import Snapshot

PLACES = 4


class Festival:
    def __init__(self) -> None:
        self.cards: list[int] = []  # in the order they were added
        self.totals: dict[str, int] = {}
        self.order: list[str] = []  # varieties, 1st place first

    def open(self, first: tuple[int, str, int], second: tuple[int, str, int]) -> None:
        """The two revealed tulips ``(card, variety, value)`` of different varieties: the higher value takes 1st
        place; equal values, the first revealed."""
        (c1, v1, x1), (c2, v2, x2) = first, second
        assert v1 != v2 and not self.cards
        self.cards = [c1, c2]
        self.totals = {v1: x1, v2: x2}
        self.order = [v2, v1] if x2 > x1 else [v1, v2]

    def add(self, card: int, variety: str, value: int) -> None:
        self.cards.append(card)
        total = self.totals.get(variety, 0) + value
        self.totals[variety] = total
        if variety in self.order:
            self.order.remove(variety)
        at = next((i for i, v in enumerate(self.order) if self.totals[v] <= total), len(self.order))
        self.order.insert(at, variety)

    def place(self, variety: str) -> int:
        """1..4: the variety's place for keep and give (unranked, or below 4th: 4th)."""
        if variety not in self.order:
            return PLACES
        return min(self.order.index(variety) + 1, PLACES)

    def top(self, places: int) -> list[str]:
        return self.order[:places]

    def ranking(self) -> list[list[Any]]:
        """``[[variety, total], ...]``, 1st place first."""
        return [[v, self.totals[v]] for v in self.order]

    def snapshot(self) -> Snapshot:
        return {"cards": list(self.cards), "ranking": self.ranking()}
