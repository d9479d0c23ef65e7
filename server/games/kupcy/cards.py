"""The cards of a Kupcy game, read from a deck file the organiser can replace.

A deck file is JSON: ``{"cards": [{"kind": k, ...}, ...]}``; a card's id is its position in the list.
``goods`` and ``money`` cards have an ``origin`` and a face ``value``; a ``merchant`` has an ``origin`` (its
face value is 0: it is worth what it doubles); a ``charter`` names its effect (``charter``), looked up in the
table's charter effects (``charters.py``). A table takes the document itself as its ``deck`` option.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources as package_files
from typing import Any

from protocol.schema import Enum, Int, List, Record, SchemaError, Str
from protocol.values import ReadMap

from server.games.fields import int_or_none, maps_field, str_field, str_or_none

GOODS, MONEY, CHARTER, MERCHANT = "goods", "money", "charter", "merchant"
KINDS = (GOODS, MONEY, CHARTER, MERCHANT)
ORIGINS = ("rus", "byzantium", "arabia", "west")  # red, blue, yellow, green

_CARD = Record({"kind": Enum(KINDS)}, {"origin": Enum(ORIGINS), "value": Int(1, 99), "charter": Str(40, 1)})
DECK_FILE = Record({"cards": List(_CARD, 1000)}, {"name": Str(200), "note": Str(2000)})


@dataclass(frozen=True)
class Card:
    id: int
    kind: str
    origin: str | None  # None for a charter
    value: int  # face value; 0 for a charter or a merchant
    charter: str | None = None  # the effect's name, for a charter

    @property
    def priced(self) -> bool:
        """Goods and money: the cards with a face value, that count for the score and as a price."""
        return self.kind in (GOODS, MONEY)

    def to_wire(self) -> list:
        return [self.id, self.kind, self.origin, self.value, self.charter]


def _card(i: int, doc: ReadMap) -> Card:
    kind = str_field(doc, "kind")
    needs = {GOODS: {"origin", "value"}, MONEY: {"origin", "value"}, MERCHANT: {"origin"}, CHARTER: {"charter"}}[kind]
    if set(doc) - {"kind"} != needs:
        raise ValueError(f"bad deck file: card {i} ({kind}) must have exactly {', '.join(sorted(needs))}")
    return Card(i, kind, str_or_none(doc, "origin"), int_or_none(doc, "value") or 0, str_or_none(doc, "charter"))


@dataclass(frozen=True)
class Deck:
    cards: tuple[Card, ...]

    @classmethod
    def from_data(cls, data: Any) -> "Deck":
        try:
            doc = DECK_FILE.check(data, "deck")
        except SchemaError as exc:
            raise ValueError(f"bad deck file: {exc}") from exc
        cards = tuple(_card(i, c) for i, c in enumerate(maps_field(doc, "cards")))
        if not any(c.kind == GOODS for c in cards):
            raise ValueError("bad deck file: it needs at least one goods card")
        return cls(cards)

    @classmethod
    def default(cls) -> "Deck":
        """The 90 cards of the rules (``default_deck.json``), read once per process."""
        return _default_deck()

    @cached_property
    def wire(self) -> tuple[list, ...]:
        """The card table as sent in the static view: ``[id, kind, origin, value, charter]`` per card."""
        return tuple(c.to_wire() for c in self.cards)

    def charter_names(self) -> set[str]:
        return {c.charter for c in self.cards if c.charter is not None}


@cache
def _default_deck() -> Deck:
    text = package_files.files(__package__).joinpath("default_deck.json").read_text(encoding="utf-8")
    return Deck.from_data(json.loads(text))
