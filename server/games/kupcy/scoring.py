"""The score: the face value of the goods and money a player owns, each merchant doubling its origin's."""

from __future__ import annotations

from typing import Iterable, Mapping

from .cards import MERCHANT, ORIGINS, Card


def score(owned: Iterable[int], cards: Mapping[int, Card]) -> int:
    held = [cards[c] for c in owned]
    total = 0
    for origin in ORIGINS:
        face = sum(c.value for c in held if c.priced and c.origin == origin)
        merchants = sum(1 for c in held if c.kind == MERCHANT and c.origin == origin)
        total += face * 2 ** merchants
    return total
