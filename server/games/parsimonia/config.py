"""Time controls and money of a Parsimonia table: the seed's values by default, all configurable."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from protocol.schema import Int, Record, SchemaError

from .deck import Deck

MINUTE = 60_000

# Dollar cards: 20 of each of $1, $2, $5, $10, $20, $50, $100, $200 = the Company's whole supply.
DEFAULT_BANK = 20 * (1 + 2 + 5 + 10 + 20 + 50 + 100 + 200)

_DURATION = Int(1, 7 * 24 * 60 * MINUTE)
OPTIONS = Record(
    {},
    {
        "opening_ms": _DURATION,
        "turn_ms": _DURATION,
        "game_ms": _DURATION,
        "quiet_ms": _DURATION,
        "start_dollars": Int(0, 1_000_000_000),
        "bank": Int(0, 1_000_000_000),
    },
)
_TIMES = ("opening_ms", "turn_ms", "game_ms", "quiet_ms")


@dataclass(frozen=True)
class Config:
    opening_ms: int = 15 * MINUTE
    turn_ms: int = 5 * MINUTE
    game_ms: int = 120 * MINUTE
    quiet_ms: int = 30_000
    start_dollars: int = 1000
    bank: int = DEFAULT_BANK
    deck: Deck = field(default_factory=Deck.default, compare=False)

    @classmethod
    def from_options(cls, options: Any = None, time_scale: float = 1.0, deck: Deck | None = None) -> "Config":
        """Build from a wire ``options`` map; ``time_scale`` > 1 shrinks every duration by that factor."""
        try:
            checked = OPTIONS.check(options or {}, "options")
        except SchemaError as exc:
            raise ValueError(str(exc)) from exc
        if not 0 < time_scale < float("inf"):
            raise ValueError("time_scale must be a positive number")
        cfg = replace(cls(), **checked) if deck is None else replace(cls(deck=deck), **checked)
        scaled = {k: max(1, round(getattr(cfg, k) / time_scale)) for k in _TIMES}
        return replace(cfg, **scaled)

    def to_wire(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "deck"}
