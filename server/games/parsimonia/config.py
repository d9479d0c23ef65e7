"""The options of a Parsimonia table (time controls, money, the deck) and the ``Config`` built from them.

The defaults are the seed's values (the quiet time and the deck are the project's). Every duration is in
integer ms and shrinks with the table's time scale, the quiet time no further than its floor; ``deck`` is a
deck file's document (``deck.DECK_FILE``), None for the project's deck.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from importlib import resources
from typing import TypedDict

from protocol.schema import Int, Nullable
from protocol.values import Options

from server.games.base import Option
from server.games.fields import int_field

from .deck import DECK_FILE, Deck

MINUTE = 60_000

# Dollar cards: 20 of each of $1, $2, $5, $10, $20, $50, $100, $200 = the Company's whole supply.
DEFAULT_BANK = 20 * (1 + 2 + 5 + 10 + 20 + 50 + 100 + 200)

_DURATION = Int(1, 7 * 24 * 60 * MINUTE)
_MONEY = Int(0, 1_000_000_000)

OPTIONS: dict[str, Option] = {
    "opening_ms": Option(_DURATION, 15 * MINUTE, "how long the opening auctions may last", duration=True),
    "turn_ms": Option(_DURATION, 5 * MINUTE, "how long a turn lasts", duration=True),
    "game_ms": Option(_DURATION, 120 * MINUTE, "the game clock, from the table's start", duration=True),
    "quiet_ms": Option(_DURATION, 30_000, "an auction with no new bid for this long closes itself; "
                       "also the time a buyer has to choose where a bought tourists card goes", duration=True),
    "quiet_floor_ms": Option(Int(0, 7 * 24 * 60 * MINUTE), 0, "the time scale never makes the quiet time shorter "
                             "than this (nor than quiet_ms itself): a floor for people, who cannot bid in 1 s"),
    "grace_ms": Option(Int(0, 60_000), 0, "not scaled: an auction's quiet time closes it this long after its "
                       "deadline, and a bid received meanwhile counts (for the network's delay)"),
    "start_dollars": Option(_MONEY, 1000, "each player's starting dollars, taken from the bank"),
    "bank": Option(_MONEY, DEFAULT_BANK, "the Company's whole supply of dollars"),
    "deck": Option(Nullable(DECK_FILE), None, "a deck file's document; nil for the project's deck"),
}


HUMAN_QUIET_FLOOR_MS = 5000  # a quiet time people can still bid in: the floor of the presets and human rosters
HUMAN_GRACE_MS = 250  # the grace of rosters with people: a bid sent at the deadline is not lost on its way

class Preset(TypedDict):
    """A named set of clocks: a title to show and the options it sets (durations in ms)."""

    title: str
    options: dict[str, int]


# Named clocks for tables with people (``presets.json``, which the web page's lobby offers too): each a title
# and the options it sets, every one with a quiet time the time scale cannot make shorter than 5 s.
PRESETS: dict[str, Preset] = json.loads(resources.files(__package__).joinpath("presets.json").read_text())


def preset_options(name: str) -> dict[str, int]:
    """The options of preset ``name``; ``ValueError`` naming the presets there are."""
    if name not in PRESETS:
        raise ValueError(f"no preset {name!r}: the presets are {', '.join(PRESETS)}")
    return dict(PRESETS[name]["options"])


def check_option_values(options: Options, min_seats: int) -> None:
    """Checks across options: the bank pays the smallest table's starting dollars; the deck is sound."""
    bank, start_dollars = int_field(options, "bank"), int_field(options, "start_dollars")
    if start_dollars * min_seats > bank:
        raise ValueError(f"the bank ({bank}) cannot pay {min_seats} players {start_dollars} starting dollars each")
    if options["deck"] is not None:
        Deck.from_data(options["deck"])


_WHEN_SET = ("quiet_floor_ms", "grace_ms")  # published in the static config only when not 0


@dataclass(frozen=True)
class Config:
    opening_ms: int = OPTIONS["opening_ms"].int_default
    turn_ms: int = OPTIONS["turn_ms"].int_default
    game_ms: int = OPTIONS["game_ms"].int_default
    quiet_ms: int = OPTIONS["quiet_ms"].int_default
    quiet_floor_ms: int = OPTIONS["quiet_floor_ms"].int_default
    grace_ms: int = OPTIONS["grace_ms"].int_default
    start_dollars: int = OPTIONS["start_dollars"].int_default
    bank: int = OPTIONS["bank"].int_default
    deck: Deck = field(default_factory=Deck.default, compare=False)

    @classmethod
    def from_options(cls, options: Options) -> "Config":
        """From options already checked (``Parsimonia.check_options``: defaults filled in, durations scaled)."""
        deck = Deck.default() if options["deck"] is None else Deck.from_data(options["deck"])
        return cls(**{name: int_field(options, name) for name in options if name != "deck"}, deck=deck)

    def to_wire(self) -> dict[str, int]:
        """The numbers (the deck goes out as the card table, ``static()["cards"]``); ``quiet_floor_ms`` and
        ``grace_ms`` only when set (a table without them is described as before they existed)."""
        return {f.name: getattr(self, f.name) for f in fields(self)
                if f.name != "deck" and (f.name not in _WHEN_SET or getattr(self, f.name))}
