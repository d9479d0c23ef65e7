"""The tulip cards of a game, from a deck document the organiser can replace (the ``deck`` option).

A deck document is ``{"cards": [{"variety": v, "value": x, "copies": k, "five_six": b}, ...]}``: ``k`` cards of
variety ``v`` and value ``x``; ``five_six`` marks the cards used only with 5 or 6 players. Card ids follow the
document: the first entry's copies are 0..k-1, and so on. The varieties rank in the order they first appear
(only for display: the festival ranks them by their stacks). ``DEFAULT_DECK`` is the rulebook's deck as the
project reads it: every variety x value 6 times in the base deck, twice in the 5/6 set.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property
from typing import Any, NotRequired, TypedDict

from protocol.schema import Bool, Int, List, Record, SchemaError, Str

from server.games.fields import bool_field, int_field, maps_field, str_field

VARIETIES = ("pink", "blue", "orange", "purple")
VALUES = (2, 3, 4)

_ENTRY = Record({"variety": Str(40, 1), "value": Int(1, 99), "copies": Int(1, 1000)}, {"five_six": Bool()})
class DeckEntry(TypedDict):
    """One kind of card in a deck document: how many ``copies`` of ``variety`` at ``value``."""

    variety: str
    value: int
    copies: int
    five_six: NotRequired[bool]  # only with 5 or 6 players


class DeckDocument(TypedDict):
    """A deck file (``DECK_FILE``): its cards, a name and a note."""

    cards: list[DeckEntry]
    name: NotRequired[str]
    note: NotRequired[str]


DECK_FILE = Record({"cards": List(_ENTRY, 1000)}, {"name": Str(200), "note": Str(2000)})

DEFAULT_DECK: DeckDocument = {
    "name": "Gift of Tulips",
    "note": "72 base cards (6 of every variety x value) and 24 cards for 5-6 players (2 of each).",
    "cards": [DeckEntry(variety=v, value=x, copies=6) for v in VARIETIES for x in VALUES]
    + [DeckEntry(variety=v, value=x, copies=2, five_six=True) for v in VARIETIES for x in VALUES],
}


@dataclass(frozen=True)
class Card:
    id: int
    variety: str
    value: int
    five_six: bool

    def to_wire(self) -> list:
        return [self.id, self.variety, self.value, self.five_six]


@dataclass(frozen=True)
class Deck:
    cards: tuple[Card, ...]

    @classmethod
    def from_data(cls, data: Any) -> "Deck":
        try:
            doc = DECK_FILE.check(data, "deck")
        except SchemaError as exc:
            raise ValueError(f"bad deck file: {exc}") from exc
        cards: list[Card] = []
        for entry in maps_field(doc, "cards"):
            for _ in range(int_field(entry, "copies")):
                cards.append(Card(len(cards), str_field(entry, "variety"), int_field(entry, "value"),
                                  bool_field(entry, "five_six", False)))
        if len(cards) > 10_000:
            raise ValueError("bad deck file: more than 10000 cards")
        if len({c.variety for c in cards}) < 2:
            raise ValueError("bad deck file: the festival needs at least two varieties")
        return cls(tuple(cards))

    @classmethod
    def default(cls) -> "Deck":
        return _default_deck()

    @cached_property
    def varieties(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.variety for c in self.cards))

    @cached_property
    def wire(self) -> tuple[list, ...]:
        """The card table as sent in the static view: ``[id, variety, value, five_six]`` per card."""
        return tuple(c.to_wire() for c in self.cards)

    def in_play(self, players: int) -> list[int]:
        """The ids of the cards a table of ``players`` plays with: the 5/6 cards only with 5 or more."""
        return [c.id for c in self.cards if players >= 5 or not c.five_six]


@cache
def _default_deck() -> Deck:
    return Deck.from_data(DEFAULT_DECK)
