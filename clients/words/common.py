"""What every game's words module (``clients.games.words_for``) and the watch tool share: clock readings and seat
names."""

from __future__ import annotations

from collections.abc import Sequence


def clock(ms: int) -> str:
    """``ms`` as m:ss (h:mm:ss from an hour), never negative."""
    s = max(0, ms) // 1000
    return f"{s // 3600}:{s // 60 % 60:02}:{s % 60:02}" if s >= 3600 else f"{s // 60}:{s % 60:02}"


def seat_name(names: Sequence[str], seat: int | None, none: str = "nobody") -> str:
    """The name of ``seat`` (``none`` for no seat, "seat N" for one without a name)."""
    if seat is None:
        return none
    return names[seat] if 0 <= seat < len(names) else f"seat {seat}"
