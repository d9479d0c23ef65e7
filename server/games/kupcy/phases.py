"""Where a Kupcy table stands: the game's phase and, during a turn, the step that waits for someone.

Both are ``StrEnum``s, so their wire values are plain strings in views, snapshots and events.
"""

from __future__ import annotations

from enum import StrEnum


class Phase(StrEnum):
    SPLIT = "split"  # every player splits the 7 cards dealt into ship (5) and warehouse (2), sealed
    TURNS = "turns"  # turns with the draw, clockwise, until the last card is drawn and resolved
    FINAL = "final"  # the last round: each player in turn may run one more trading operation
    OVER = "over"


class Step(StrEnum):
    """What the current turn waits for (None: nothing; the table moves on at once)."""

    KEEP = "keep"  # the drawer puts the drawn money or merchant in the ship or the warehouse
    PAY = "pay"  # the drawer pays the cards a charter asks for, of their choice
    TRADE = "trade"  # a trading operation: the sealed offers (and tie re-bids) are being made
    STOW = "stow"  # players bring their ships back to 5
    SELL = "sell"  # the last round: the player may sell a goods card of their own, or pass
