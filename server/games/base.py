"""The contract every game engine keeps.

An engine is a pure, deterministic state machine (the sans-IO style of h11 and python-chess):

* time enters only as integer milliseconds passed to ``apply`` and ``advance``;
* randomness comes from an ``Rng`` whose seed lives in the engine's state;
* ``apply(seat, command, now_ms)`` either returns the events the command caused or raises
  ``IllegalAction`` and leaves the state exactly as it was;
* ``advance(now_ms)`` fires every deadline due at or before ``now_ms``, each at its own due time;
* ``next_deadline()`` tells the runtime when to call ``advance`` next;
* ``view(seat)`` is all that seat may see (``None`` = a spectator), ``legal_actions(seat)`` what it may send.

A command is a plain map with a ``type`` field, checked against the game's ``COMMANDS`` catalogue before
any rule runs. The same maps travel over the wire, so a bot in process and a bot over a socket are alike.
A seed plus the log of ``(now_ms, seat, command)`` and ``advance`` calls replays to the same state.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

from protocol.schema import Record, SchemaError


class IllegalAction(Exception):
    """A well-formed command that the rules refuse. ``code`` is stable and machine-readable."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Event:
    """Something that happened at ``at`` ms. ``audience`` None = everyone, else only those seats."""

    type: str
    at: int
    data: dict[str, Any]
    audience: frozenset[int] | None = None

    def visible_to(self, seat: int | None) -> bool:
        return self.audience is None or (seat is not None and seat in self.audience)

    def to_wire(self) -> dict[str, Any]:
        return {"type": self.type, "at": self.at, **self.data}


def parse_command(catalogue: dict[str, Record], raw: Any) -> dict[str, Any]:
    """Check a raw command map against a game's catalogue; raise ``SchemaError`` if it does not fit."""
    if not isinstance(raw, dict):
        raise SchemaError("bad_field", "command", "expected a map")
    kind = raw.get("type")
    if not isinstance(kind, str) or kind not in catalogue:
        raise SchemaError("unknown_command", "command.type", f"unknown command type {kind!r}")
    body = {k: v for k, v in raw.items() if k != "type"}
    return {"type": kind, **catalogue[kind].check(body, "command")}


def canonical_digest(state: Any) -> str:
    """SHA-256 of a JSON-able state in canonical form (sorted keys, no spaces)."""
    text = json.dumps(state, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class Game(ABC):
    """Base of every engine. Subclasses set ``NAME``, ``MIN_SEATS``, ``MAX_SEATS`` and ``COMMANDS``."""

    NAME: ClassVar[str]
    MIN_SEATS: ClassVar[int]
    MAX_SEATS: ClassVar[int]
    COMMANDS: ClassVar[dict[str, Record]]

    def __init__(self) -> None:
        self.now = 0

    @classmethod
    def parse(cls, raw: Any) -> dict[str, Any]:
        return parse_command(cls.COMMANDS, raw)

    def _enter(self, now_ms: int) -> None:
        if now_ms < self.now:
            raise ValueError(f"time went backwards: {now_ms} < {self.now}")
        deadline = self.next_deadline()
        if deadline is not None and now_ms >= deadline:
            raise ValueError(f"advance({now_ms}) must run before a command at {now_ms} (deadline {deadline})")

    def apply(self, seat: int, command: dict[str, Any], now_ms: int) -> list[Event]:
        """Apply a command from ``seat`` at ``now_ms``.

        Raises ``SchemaError`` for a malformed command and ``IllegalAction`` for one the rules refuse;
        either way nothing changes."""
        self._enter(now_ms)
        events = self._apply(seat, self.parse(command), now_ms)
        self.now = now_ms
        return events

    @abstractmethod
    def _apply(self, seat: int, command: dict[str, Any], now_ms: int) -> list[Event]: ...

    @abstractmethod
    def advance(self, now_ms: int) -> list[Event]: ...

    @abstractmethod
    def next_deadline(self) -> int | None: ...

    @abstractmethod
    def shift(self, delta_ms: int) -> None:
        """Move every clock of the game ``delta_ms`` later: time that passed while the table was paused
        (or the server was down) counts for nobody. ``now`` moves with it."""

    @abstractmethod
    def legal_actions(self, seat: int) -> list[dict[str, Any]]:
        """Command templates: an integer field given as ``{"min": a, "max": b}`` may take any value in it."""

    @abstractmethod
    def view(self, seat: int | None) -> dict[str, Any]: ...

    @property
    @abstractmethod
    def over(self) -> bool: ...

    @abstractmethod
    def result(self) -> dict[str, Any]: ...

    @abstractmethod
    def snapshot(self) -> dict[str, Any]:
        """The whole state, hidden parts included, as JSON-able data (for digests and tests)."""

    def digest(self) -> str:
        return canonical_digest(self.snapshot())
