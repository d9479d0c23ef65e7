"""Where a Gift of Tulips table stands, and the three actions of a turn.

Both are ``StrEnum``s, so their wire values are plain strings in views, snapshots and events.
"""

from __future__ import annotations

from enum import StrEnum


class Phase(StrEnum):
    SETUP = "setup"  # every player chooses, sealed, which dealt card goes in the bouquet
    TURNS = "turns"  # draw-act-draw-act, seat after seat
    OVER = "over"  # the Secret Festival is revealed and the majorities scored


class Action(StrEnum):
    """A turn takes two of them, different ones, one per drawn card."""

    KEEP = "keep"
    GIVE = "give"
    ADD = "add"  # face up to the festival or face down to the Secret Festival: the same action
