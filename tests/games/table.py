"""The driver every engine's scenario tests share: a game plus a clock, its invariants checked after each step.

``at`` advances the clock (firing what is due), ``do`` applies a command at the table's time, ``refuse`` asserts
a command is refused with a given code and that the snapshot (and digest) did not change. A game's own test
helpers subclass it and set ``check``, the function holding the game to its invariants.
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar

import pytest

from server.games.base import Event, Game, IllegalAction


class EngineTable:
    check: ClassVar[Callable[[Any], None]]

    def __init__(self, game: Game) -> None:
        self.g: Any = game
        self.t = game.now
        self.log: list[Event] = []
        type(self).check(game)

    def at(self, t: int) -> list[Event]:
        assert t >= self.t
        self.t = t
        events = self.g.advance(t)
        self.log += events
        type(self).check(self.g)
        return events

    def wait(self, ms: int) -> list[Event]:
        return self.at(self.t + ms)

    def do(self, seat: int, kind: str, **fields: Any) -> list[Event]:
        self.at(self.t)
        events = self.g.apply(seat, {"type": kind, **fields}, self.t)
        self.log += events
        type(self).check(self.g)
        return events

    def refuse(self, seat: int, code: str, kind: str, **fields: Any) -> IllegalAction:
        """Assert the command is refused with ``code`` and that nothing at all changed."""
        self.at(self.t)
        before, digest = self.g.snapshot(), self.g.digest()
        with pytest.raises(IllegalAction) as info:
            self.g.apply(seat, {"type": kind, **fields}, self.t)
        assert info.value.code == code, info.value.message
        assert self.g.snapshot() == before and self.g.digest() == digest
        return info.value

    def events(self, kind: str) -> list[Event]:
        return [e for e in self.log if e.type == kind]

    def last(self, kind: str) -> Event:
        found = self.events(kind)
        assert found, f"no {kind} event"
        return found[-1]
