"""The cards of a Parsimonia game, read from a deck file the organiser can replace.

A deck file is JSON: ``{"resources": [{"type": t, "profit": p}, ...], "tourists": [...]}``. Card ids are
given in file order: resource cards first (0..R-1), then tourists cards (R..R+T-1). A table takes the
document itself as its ``deck`` option (``DECK_FILE`` is its schema), so a table's options say everything.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources as package_files
from typing import Any

from protocol.schema import Int, List, Record, SchemaError, Str

from server.games.fields import int_field, maps_field

RESOURCE = "resource"
TOURISTS = "tourists"

_CARD = Record({"type": Int(1, 99), "profit": Int(0, 1_000_000)})
DECK_FILE = Record(
    {"resources": List(_CARD, 1000), "tourists": List(_CARD, 1000)},
    {"name": Str(200), "note": Str(2000)},
)


@dataclass(frozen=True)
class Card:
    id: int
    kind: str
    type: int
    profit: int

    def to_wire(self) -> list:
        return [self.id, self.kind, self.type, self.profit]


@dataclass(frozen=True)
class Deck:
    cards: tuple[Card, ...]

    @classmethod
    def from_data(cls, data: Any) -> "Deck":
        try:
            doc = DECK_FILE.check(data, "deck")
        except SchemaError as exc:
            raise ValueError(f"bad deck file: {exc}") from exc
        if not doc["resources"] or not doc["tourists"]:
            raise ValueError("bad deck file: both decks need at least one card")
        cards = [Card(i, RESOURCE, int_field(c, "type"), int_field(c, "profit"))
                 for i, c in enumerate(maps_field(doc, "resources"))]
        base = len(cards)
        cards += [Card(base + i, TOURISTS, int_field(c, "type"), int_field(c, "profit"))
                  for i, c in enumerate(maps_field(doc, "tourists"))]
        return cls(tuple(cards))

    @classmethod
    def load(cls, path: str) -> "Deck":
        with open(path, encoding="utf-8") as f:
            return cls.from_data(json.load(f))

    @classmethod
    def default(cls) -> "Deck":
        """The project's deck (``default_deck.json``), read once per process."""
        return _default_deck()

    @cached_property
    def wire(self) -> tuple[list, ...]:
        """The card table as sent in views, built once: ``[id, kind, type, profit]`` per card."""
        return tuple(c.to_wire() for c in self.cards)

    @cached_property
    def tourists_types(self) -> dict[int, int]:
        """Tourists card id -> its type, built once (the rules ask it of every open auction's lot)."""
        return {c.id: c.type for c in self.cards if c.kind == TOURISTS}

    def ids(self, kind: str) -> list[int]:
        return [c.id for c in self.cards if c.kind == kind]


@cache
def _default_deck() -> Deck:
    text = package_files.files(__package__).joinpath("default_deck.json").read_text(encoding="utf-8")
    return Deck.from_data(json.loads(text))
