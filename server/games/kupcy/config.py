"""The options of a Kupcy table (its three clocks, the deck, the charter effects) and the ``Config`` built from them.

The seed gives no clocks; the defaults are the project's (``docs/rules/kupcy.md``). Every duration is in integer
ms and shrinks with the table's time scale. ``deck`` is a deck file's document (``cards.DECK_FILE``), None for the
rules' 90 cards; ``charters`` maps charter names to effects (``charters.EFFECT``), put over the project's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypedDict, cast

from protocol.schema import Int, Nullable
from protocol.values import Options, Value

from server.games.base import Option
from server.games.fields import int_field, map_or_none

from .cards import DECK_FILE, Deck
from .charters import CHARTERS_FILE, Effect, default_effect_data, effects_from

_DURATION = Int(1, 7 * 24 * 3600 * 1000)

OPTIONS: dict[str, Option] = {
    "decide_ms": Option(_DURATION, 60_000, "time for a decision: the opening split, where a drawn card goes, "
                        "which cards a charter takes, the last round's sale", duration=True),
    "bid_ms": Option(_DURATION, 30_000, "time to make a sealed offer (each tie re-bid round has it again)",
                     duration=True),
    "stow_ms": Option(_DURATION, 20_000, "time to bring the ship back to 5 cards", duration=True),
    "deck": Option(Nullable(DECK_FILE), None, "a deck file's document; nil for the rules' 90 cards"),
    "charters": Option(Nullable(CHARTERS_FILE), None, "charter effects by name, over the project's; nil for none"),
}


def check_option_values(options: Options) -> None:
    """The deck and the effects are sound, and every charter of the deck has an effect."""
    Config.from_options(options)


class Clocks(TypedDict):
    """A Kupcy table's clocks on the wire (``static()["config"]``), in ms."""

    decide_ms: int
    bid_ms: int
    stow_ms: int


def clocks_value(view: Clocks) -> Mapping[str, Value]:
    """``view`` as a ``Value``: every field of ``Clocks`` is one (mypy sees a TypedDict as a map of object)."""
    return cast("Mapping[str, Value]", view)


@dataclass(frozen=True)
class Config:
    decide_ms: int = OPTIONS["decide_ms"].int_default
    bid_ms: int = OPTIONS["bid_ms"].int_default
    stow_ms: int = OPTIONS["stow_ms"].int_default
    deck: Deck = field(default_factory=Deck.default, compare=False)
    effects: dict[str, Effect] = field(default_factory=lambda: effects_from(None), compare=False)
    effect_data: Mapping[str, Value] = field(default_factory=default_effect_data, compare=False)

    def __post_init__(self) -> None:
        missing = sorted(self.deck.charter_names() - set(self.effects))
        if missing:
            raise ValueError(f"charter {missing[0]!r} of the deck has no effect (give it one in 'charters')")

    @classmethod
    def from_options(cls, options: Options) -> "Config":
        """From options already checked (defaults filled in, durations scaled)."""
        deck = Deck.default() if options["deck"] is None else Deck.from_data(options["deck"])
        data: dict[str, Value] = {**default_effect_data(), **(map_or_none(options, "charters") or {})}
        return cls(int_field(options, "decide_ms"), int_field(options, "bid_ms"), int_field(options, "stow_ms"),
                   deck, effects_from(data), data)

    def to_wire(self) -> Clocks:
        """The clocks (the deck goes out as the card table, the effects as ``charters``)."""
        return {"decide_ms": self.decide_ms, "bid_ms": self.bid_ms, "stow_ms": self.stow_ms}
