"""What a charter does, as data the organiser can replace (the ``charters`` option).

An effect names the ``zone`` it strikes (``ship`` or ``warehouse``) and how cards are ``take``n from it:

* ``random``: ``count`` cards at random (or a ``share`` ``[num, den]`` of the zone, rounded up);
* ``all``: every card of the zone;
* ``highest``: the ``count`` most valuable cards (face value; the lower id first among equals);
* ``origin``: every card of the origin whose cards are worth most in the zone (the first in ``ORIGINS``
  among equals; nothing when no card there has a face value);
* ``choice``: the player pays ``count`` cards (or a ``share`` of the zone, rounded up) of their choice;
* ``worth``: the player pays cards of their choice worth at least a ``share`` of the zone's face value,
  rounded up.

Every card taken or paid leaves the game. ``default_charters.json`` holds the project's effects.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources as package_files
from typing import Any, Mapping

from protocol.schema import AnyMap, Enum, Int, List, Record, SchemaError
from protocol.values import Map, Value

from server.games.fields import int_or_none, ints_field, str_field
from server.games.machines.rng import Rng

from .cards import ORIGINS, Card

SHIP, WAREHOUSE = "ship", "warehouse"
AT_ONCE = ("random", "all", "highest", "origin")
CHOSEN = ("choice", "worth")
EFFECT = Record({"zone": Enum((SHIP, WAREHOUSE)), "take": Enum(AT_ONCE + CHOSEN)},
                {"count": Int(1, 1000), "share": List(Int(1, 1000), 2)})
CHARTERS_FILE = AnyMap(64)


@dataclass(frozen=True)
class Effect:
    zone: str
    take: str
    count: int | None = None
    share: tuple[int, int] | None = None

    @classmethod
    def from_data(cls, name: str, data: Any) -> "Effect":
        try:
            doc = EFFECT.check(data, f"charters.{name}")
        except SchemaError as exc:
            raise ValueError(f"bad charter effect: {exc}") from exc
        parts = ints_field(doc, "share") if "share" in doc else None
        if parts is not None and (len(parts) != 2 or parts[0] > parts[1]):
            raise ValueError(f"bad charter effect {name!r}: share is [num, den] with num <= den")
        share = None if parts is None else (parts[0], parts[1])
        if doc["take"] in ("all", "origin") and (share or "count" in doc):
            raise ValueError(f"bad charter effect {name!r}: {doc['take']!r} takes no count or share")
        if doc["take"] == "worth" and share is None:
            raise ValueError(f"bad charter effect {name!r}: 'worth' needs a share")
        if "count" in doc and share is not None:
            raise ValueError(f"bad charter effect {name!r}: a count or a share, not both")
        return cls(str_field(doc, "zone"), str_field(doc, "take"), int_or_none(doc, "count"), share)

    @property
    def chosen(self) -> bool:
        return self.take in CHOSEN

    def how_many(self, zone_size: int) -> int:
        """The number of cards a ``random``, ``highest`` or ``choice`` effect takes from a zone this big."""
        if self.share is not None:
            num, den = self.share
            return min(zone_size, -(-zone_size * num // den))
        return min(zone_size, self.count or 1)

    def worth_due(self, zone_value: int) -> int:
        """What a ``worth`` effect asks for: the share of the zone's face value, rounded up."""
        assert self.share is not None
        num, den = self.share
        return -(-zone_value * num // den)

    def taken(self, zone: list[int], cards: Mapping[int, Card], rng: Rng) -> list[int]:
        """The cards an at-once effect takes from ``zone`` (in zone order)."""
        if self.take == "all":
            return list(zone)
        if self.take == "random":
            pool = list(zone)
            picked = [pool.pop(rng.below(len(pool))) for _ in range(self.how_many(len(zone)))]
            return [c for c in zone if c in picked]
        if self.take == "highest":
            ranked = sorted(zone, key=lambda c: (-cards[c].value, c))[: self.how_many(len(zone))]
            return [c for c in zone if c in ranked]
        worth = {o: sum(cards[c].value for c in zone if cards[c].origin == o) for o in ORIGINS}
        best = max(ORIGINS, key=lambda o: (worth[o], -ORIGINS.index(o)))
        return [c for c in zone if cards[c].origin == best] if worth[best] > 0 else []


def effects_from(data: Mapping[str, Any] | None) -> dict[str, Effect]:
    """The project's effects with the organiser's (``charters`` option) put over them by name."""
    merged: dict[str, Value] = {**default_effect_data(), **(data or {})}
    return {name: Effect.from_data(name, doc) for name, doc in merged.items()}


@cache
def _default_text() -> str:
    return package_files.files(__package__).joinpath("default_charters.json").read_text(encoding="utf-8")


def default_effect_data() -> dict[str, Map]:
    """The project's charter effects, as the ``charters`` option gives them: each effect's document by name."""
    return json.loads(_default_text())
