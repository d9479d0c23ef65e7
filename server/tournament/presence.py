"""Who is connected to which seat, and which tables' clocks wait for their human players.

The director reads the server's admin ``connections`` listing every second or so and hands the seats it finds
to ``SeatWatch.update``, which says who arrived, who left, and which held tables may start: a table with
humans is created with its clocks paused, and starts once every human seat is connected, or once its grace
is over (``Roster.human_grace_s``), whichever comes first. Times are trio's clock, in seconds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

Seat = tuple[str, int]  # (server table, seat)


def connected_seats(listing: Iterable[Mapping[str, Any]]) -> set[Seat]:
    """The seats held by the connections of an admin ``connections`` reply."""
    return {(seat["table"], seat["seat"]) for conn in listing for seat in conn.get("seats", ())}


@dataclass(frozen=True)
class Changes:
    arrived: list[tuple[str, int, str]]  # (table, seat, name) of humans newly connected
    left: list[tuple[str, int, str]]  # ... and of humans no longer connected
    start: list[tuple[str, list[str]]]  # held tables whose clocks may run, with the humans still missing


@dataclass
class SeatWatch:
    grace_s: float
    humans: dict[str, dict[int, str]] = field(default_factory=dict)  # table -> seat -> name, of followed tables
    waiting: dict[str, float] = field(default_factory=dict)  # held table -> when it starts at the latest
    connected: set[Seat] = field(default_factory=set)  # at the last update, every seat (bots' too)

    def follow(self, table: str, humans: Mapping[int, str], held: bool, now: float) -> None:
        """Watch ``table``'s human seats; ``held``: its clocks wait for them, ``grace_s`` from ``now`` at most."""
        self.humans[table] = dict(humans)
        if held:
            self.waiting[table] = now + self.grace_s

    def forget(self, table: str) -> None:
        self.humans.pop(table, None)
        self.waiting.pop(table, None)

    def missing(self, table: str) -> list[str]:
        """The humans of ``table`` who are not connected, by seat."""
        return [name for seat, name in sorted(self.humans.get(table, {}).items())
                if (table, seat) not in self.connected]

    def update(self, connected: set[Seat], now: float) -> Changes:
        """Take the seats connected now; the held tables that may start leave ``waiting``."""
        before, self.connected = self.connected, set(connected)
        human = {(t, s): name for t, seats in self.humans.items() for s, name in seats.items()}
        arrived = [(t, s, human[t, s]) for t, s in sorted(self.connected - before) if (t, s) in human]
        left = [(t, s, human[t, s]) for t, s in sorted(before - self.connected) if (t, s) in human]
        start = []
        for table, until in sorted(self.waiting.items()):
            missing = self.missing(table)
            if not missing or now >= until:
                del self.waiting[table]
                start.append((table, missing))
        return Changes(arrived, left, start)
