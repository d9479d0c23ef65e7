"""The options of a Gift of Tulips table (its clocks, the deck, the cards removed unseen, the first player) and
the ``Config`` built from them.

The rulebook has no clocks: ``choose_ms`` and ``action_ms`` are the project's, so that no table waits forever
(every duration is integer ms and shrinks with the table's time scale). ``removed`` is the rulebook's count of
cards removed unseen, by player count, so that every player gets the same number of turns; ``deck`` is a deck
document (``deck.DECK_FILE``), None for the rulebook's deck.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import TypedDict, cast

from protocol.schema import Int, List, Nullable
from protocol.values import Options, Value

from server.games.base import Option
from server.games.fields import int_field, int_or_none, ints_field, list_field

from .deck import DECK_FILE, Deck

MIN_PLAYERS, MAX_PLAYERS = 2, 6
REMOVED = (18, 4, 6, 14, 10)  # cards removed unseen with 2, 3, 4, 5, 6 players (the rulebook)
_DURATION = Int(1, 24 * 60 * 60_000)

OPTIONS: dict[str, Option] = {
    "choose_ms": Option(_DURATION, 60_000, "time for the set-up choice (which dealt card goes in the bouquet)",
                        duration=True),
    "action_ms": Option(_DURATION, 30_000, "time for one action on a drawn card", duration=True),
    "deck": Option(Nullable(DECK_FILE), None, "a deck document; nil for the rulebook's deck"),
    "removed": Option(List(Int(0, 10_000), MAX_PLAYERS - MIN_PLAYERS + 1), list(REMOVED),
                      "cards removed unseen at set-up with 2, 3, 4, 5, 6 players"),
    "first_seat": Option(Nullable(Int(0, MAX_PLAYERS - 1)), None, "the starting player; nil: drawn with the seed"),
}


def check_option_values(options: Options) -> None:
    """Checks across options: the deck is sound and ``removed`` has a count for every table size."""
    if len(list_field(options, "removed")) != MAX_PLAYERS - MIN_PLAYERS + 1:
        raise ValueError(f"removed needs {MAX_PLAYERS - MIN_PLAYERS + 1} counts, for 2 to 6 players")
    if options["deck"] is not None:
        Deck.from_data(options["deck"])


class WireConfig(TypedDict):
    """A Gift of Tulips table's options on the wire (``static()["config"]``), the deck aside."""

    choose_ms: int
    action_ms: int
    removed: list[int]  # the cards taken out, for each table size from 2 players
    first_seat: int | None  # None: drawn with the seed


def config_value(view: WireConfig) -> Mapping[str, Value]:
    """``view`` as a ``Value``: every field of ``WireConfig`` is one (mypy sees a TypedDict as a map of object)."""
    return cast("Mapping[str, Value]", view)


@dataclass(frozen=True)
class Config:
    choose_ms: int = OPTIONS["choose_ms"].int_default
    action_ms: int = OPTIONS["action_ms"].int_default
    removed: tuple[int, ...] = REMOVED
    first_seat: int | None = None
    deck: Deck = field(default_factory=Deck.default, compare=False)

    @classmethod
    def from_options(cls, options: Options) -> "Config":
        """From options already checked (``Tulips.check_options``: defaults filled in, durations scaled)."""
        deck = Deck.default() if options["deck"] is None else Deck.from_data(options["deck"])
        return cls(int_field(options, "choose_ms"), int_field(options, "action_ms"),
                   tuple(ints_field(options, "removed")), int_or_none(options, "first_seat"), deck)

    def removed_for(self, players: int) -> int:
        return self.removed[players - MIN_PLAYERS]

    def check_table(self, players: int) -> int:
        """The number of turns each of ``players`` gets; ``ValueError`` if this deck cannot seat them fairly."""
        if self.first_seat is not None and self.first_seat >= players:
            raise ValueError(f"first_seat {self.first_seat} is not at a table of {players}")
        cards = len(self.deck.in_play(players))
        left = cards - self.removed_for(players) - 2 - 2 * players
        if left < 2 * players or left % (2 * players):
            raise ValueError(f"a deck of {cards} cards less {self.removed_for(players)} removed, 2 festival tulips "
                             f"and 2 dealt to each of {players} players leaves {left}: not a whole number of "
                             f"turns of 2 cards each")
        return left // (2 * players)

    def to_wire(self) -> WireConfig:
        """The numbers (the deck goes out as the card table, ``static()["cards"]``)."""
        return {"choose_ms": self.choose_ms, "action_ms": self.action_ms, "removed": list(self.removed),
                "first_seat": self.first_seat}
