"""Where a Parsimonia table stands: the game's phase and, during turns, the step of the current turn.

Both are ``StrEnum``s, so their wire values are plain strings in views, snapshots and events.
"""

from __future__ import annotations

from enum import StrEnum


class Phase(StrEnum):
    OPENING = "opening"  # players may auction their resource cards, concurrently
    OPENING_CLOSING = "opening_closing"  # the opening is over; its last auctions are still running
    TURNS = "turns"
    OVER = "over"


class Step(StrEnum):
    """The steps of a turn, in order (the seed: they may not be switched)."""

    DECIDE = "decide"  # the drawn card waits: pair it or auction it
    DRAWN_AUCTION = "drawn_auction"  # the drawn card is up for auction
    PLACE = "place"  # the drawn card went unsold and the player chooses where it goes
    MAIN = "main"  # the player may auction resource cards, start Company auctions, end the turn
