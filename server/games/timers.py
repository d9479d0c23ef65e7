"""Deadline bookkeeping shared by the engines: named deadlines in integer ms.

Every clock of a game (game clock, opening, turn, each auction's quiet time, a sealed-bid window) is a
named deadline here. ``due(now)`` hands them out in time order, ties in the order they were set, so an
engine that fires them one by one is deterministic. ``shift`` moves them all (a paused table, downtime).
"""

from __future__ import annotations

from typing import Hashable


class Timers:
    def __init__(self) -> None:
        self._due: dict[Hashable, tuple[int, int]] = {}
        self._seq = 0

    def set(self, key: Hashable, at_ms: int) -> None:
        self._seq += 1
        self._due[key] = (at_ms, self._seq)

    def cancel(self, key: Hashable) -> None:
        self._due.pop(key, None)

    def get(self, key: Hashable) -> int | None:
        entry = self._due.get(key)
        return None if entry is None else entry[0]

    def __contains__(self, key: Hashable) -> bool:
        return key in self._due

    def next(self) -> tuple[int, Hashable] | None:
        """The earliest ``(due_ms, key)``, or None when nothing is pending."""
        if not self._due:
            return None
        key = min(self._due, key=self._due.__getitem__)
        return self._due[key][0], key

    def pop_next_due(self, now_ms: int) -> tuple[int, Hashable] | None:
        """Remove and return the earliest deadline if it is due at ``now_ms``."""
        nxt = self.next()
        if nxt is None or nxt[0] > now_ms:
            return None
        del self._due[nxt[1]]
        return nxt

    def shift(self, delta_ms: int) -> None:
        self._due = {k: (at + delta_ms, seq) for k, (at, seq) in self._due.items()}

    def snapshot(self) -> list[list]:
        return [[repr(k), at] for k, (at, _) in sorted(self._due.items(), key=lambda kv: kv[1])]
