"""Who is connected to which seat, and which tables' clocks wait for their players.

The director reads the server's admin ``connections`` listing every second or so and hands the seats it finds
to ``SeatWatch.update``, which says who arrived, who left, and which held tables may start: a table is created
with its clocks paused, and starts once every seat is connected, or once every seat still missing has had its
grace (``Roster.human_grace_s`` for a human, ``Roster.bot_grace_s`` for a bot), whichever comes first. A table
is ``observed`` once an update has seen it: from then on a seat never connected is known to be a no-show.
Times are trio's clock, in seconds.
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
    start: list[tuple[str, list[str]]]  # held tables whose clocks may run, with the players still missing
    seen: list[Seat] = field(default_factory=list)  # every followed seat (a human's or a bot's) newly connected


@dataclass
class SeatWatch:
    grace_s: float  # how long a held table waits for a human
    bot_grace_s: float = 0.0  # ... and for a bot
    humans: dict[str, dict[int, str]] = field(default_factory=dict)  # table -> seat -> name, of followed tables
    bots: dict[str, dict[int, str]] = field(default_factory=dict)  # ... their bots
    waiting: dict[str, float] = field(default_factory=dict)  # held table -> when it starts at the latest
    connected: set[Seat] = field(default_factory=set)  # at the last update, every seat
    observed: set[str] = field(default_factory=set)  # followed tables an update has seen
    _until: dict[str, dict[int, float]] = field(default_factory=dict)  # held table -> seat -> end of its wait

    def follow(self, table: str, humans: Mapping[int, str], held: bool, now: float,
               bots: Mapping[int, str] | None = None) -> None:
        """Watch ``table``'s seats; ``held``: its clocks wait for them, each its kind's grace from ``now`` at most."""
        self.humans[table] = dict(humans)
        self.bots[table] = dict(bots or {})
        if held:
            self._until[table] = {**{seat: now + self.grace_s for seat in humans},
                                  **{seat: now + self.bot_grace_s for seat in self.bots[table]}}
            self.waiting[table] = max(self._until[table].values(), default=now)

    def forget(self, table: str) -> None:
        for seats in (self.humans, self.bots, self.waiting, self._until):
            seats.pop(table, None)
        self.observed.discard(table)

    def start(self, table: str) -> None:
        """The organiser starts a held table now."""
        self.waiting.pop(table, None)
        self._until.pop(table, None)

    def missing(self, table: str) -> list[str]:
        """The players of ``table`` who are not connected, by seat."""
        seats = {**self.humans.get(table, {}), **self.bots.get(table, {})}
        return [name for seat, name in sorted(seats.items()) if (table, seat) not in self.connected]

    def update(self, connected: set[Seat], now: float) -> Changes:
        """Take the seats connected now; the held tables that may start leave ``waiting``."""
        before, self.connected = self.connected, set(connected)
        human = {(t, s): name for t, seats in self.humans.items() for s, name in seats.items()}
        followed = set(human) | {(t, s) for t, seats in self.bots.items() for s in seats}
        arrived = [(t, s, human[t, s]) for t, s in sorted(self.connected - before) if (t, s) in human]
        left = [(t, s, human[t, s]) for t, s in sorted(before - self.connected) if (t, s) in human]
        # newly connected, or already there when the update first sees the table
        seen = sorted((t, s) for t, s in self.connected & followed if (t, s) not in before or t not in self.observed)
        start = []
        for table, until in sorted(self._until.items()):
            if all((table, seat) in self.connected or now >= end for seat, end in until.items()):
                self.start(table)
                start.append((table, self.missing(table)))
        self.observed |= set(self.humans)
        return Changes(arrived, left, start, seen)
