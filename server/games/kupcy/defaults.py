"""The choices the table makes for a player whose time ran out (each is documented in ``docs/rules/kupcy.md``).

They all follow one order, "the card missed least": goods and money by face value, the lower id first, and
merchants last of all.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from .cards import Card

SHIP_SIZE = 5
WAREHOUSE_AT_START = 2


def least_missed(ids: Iterable[int], cards: Mapping[int, Card]) -> list[int]:
    return sorted(ids, key=lambda c: (not cards[c].priced, cards[c].value, c))


def default_split(hand: list[int], cards: Mapping[int, Card]) -> list[int]:
    """The opening split: the two cards missed least go to the warehouse."""
    return sorted(least_missed(hand, cards)[:WAREHOUSE_AT_START])


def default_offer(offerable: list[int], cards: Mapping[int, Card]) -> int:
    """A sealed offer not made in time: the lowest-value card (a merchant only when nothing else can go)."""
    return least_missed(offerable, cards)[0]


def default_pay(payable: list[int], cards: Mapping[int, Card]) -> int:
    """A charter's payment not made in time, one card at a time: the card missed least."""
    return least_missed(payable, cards)[0]


def default_load(warehouse: list[int], cards: Mapping[int, Card]) -> int:
    """Stowing not done in time, one card at a time: the warehouse card missed least goes into the ship."""
    return least_missed(warehouse, cards)[0]
