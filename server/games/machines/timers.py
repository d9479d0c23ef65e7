"""Deadline bookkeeping shared by the engines: named deadlines in integer ms, on a heap.

Every clock of a game (game clock, opening, turn, each auction's quiet time, a sealed-bid window) is a
named deadline here. ``pop_next_due(now)`` hands them out in time order, ties in the order they were set,
so an engine that fires them one by one is deterministic. ``shift`` moves them all (a paused table,
downtime): this is the one place a game's deadlines are kept, so the machines and views read them from here and
a shift moves nothing else (``shifted``, the total so far, tells a cache of views built from them when they
moved). Setting a key again replaces its deadline; stale heap entries are skipped when they surface.
"""

from __future__ import annotations

import heapq
from typing import Hashable


class Timers:
    def __init__(self) -> None:
        self._due: dict[Hashable, tuple[int, int]] = {}  # key -> (at, seq): the live entry
        self._heap: list[tuple[int, int, Hashable]] = []
        self._seq = 0
        self.shifted = 0  # ms moved by ``shift`` so far

    def set(self, key: Hashable, at_ms: int) -> None:
        self._seq += 1
        self._due[key] = (at_ms, self._seq)
        heapq.heappush(self._heap, (at_ms, self._seq, key))
        if len(self._heap) > 4 * len(self._due) + 64:
            self._rebuild()

    def cancel(self, key: Hashable) -> None:
        self._due.pop(key, None)

    def get(self, key: Hashable) -> int | None:
        entry = self._due.get(key)
        return None if entry is None else entry[0]

    def __contains__(self, key: Hashable) -> bool:
        return key in self._due

    def __len__(self) -> int:
        return len(self._due)

    def _top(self) -> tuple[int, int, Hashable] | None:
        heap = self._heap
        while heap:
            at, seq, key = heap[0]
            if self._due.get(key) == (at, seq):
                return heap[0]
            heapq.heappop(heap)  # cancelled or set again since
        return None

    def next(self) -> tuple[int, Hashable] | None:
        """The earliest ``(due_ms, key)``, or None when nothing is pending."""
        top = self._top()
        return None if top is None else (top[0], top[2])

    def pop_next_due(self, now_ms: int) -> tuple[int, Hashable] | None:
        """Remove and return the earliest deadline if it is due at ``now_ms``."""
        top = self._top()
        if top is None or top[0] > now_ms:
            return None
        heapq.heappop(self._heap)
        del self._due[top[2]]
        return top[0], top[2]

    def shift(self, delta_ms: int) -> None:
        self.shifted += delta_ms
        self._due = {k: (at + delta_ms, seq) for k, (at, seq) in self._due.items()}
        self._rebuild()

    def _rebuild(self) -> None:
        self._heap = [(at, seq, k) for k, (at, seq) in self._due.items()]
        heapq.heapify(self._heap)

    def snapshot(self) -> list[list]:
        return [[repr(k), at] for k, (at, _) in sorted(self._due.items(), key=lambda kv: kv[1])]
