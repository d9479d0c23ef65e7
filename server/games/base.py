"""The contract every game engine keeps (version 2).

An engine is a pure, deterministic, sans-IO state machine:

* time enters only as integer milliseconds passed to ``apply`` and ``advance``;
* randomness comes from an ``Rng`` seeded in the engine's state;
* ``apply(seat, command, now_ms)`` returns the events the command caused, or raises ``IllegalAction`` (or
  ``SchemaError``) and leaves the state exactly as it was;
* ``advance(now_ms)`` fires every deadline due by ``now_ms``, each at its own time; ``next_deadline()`` says
  when next.

A game declares its shape as class data (``NAME``, ``COMMANDS``, ``OPTIONS``, ``HANDLERS``, ``DEADLINES``...).
What a seat may see comes in three parts, the common ones built once per step: ``static()``, ``public_view()``,
``private_view(seat)``. An ``Event`` with an ``audience`` reaches the other seats ``redacted``, or as its
sequence number alone. The game ends with a typed ``Outcome``.

A seed and the log of ``apply`` and ``advance`` calls replay to the same state.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Hashable

from protocol.schema import Record, SchemaError, Spec
from protocol.views import player_view
from protocol.values import (Command, EventData, LegalAction, Map, Options, Result, Snapshot, Value, ViewPart,
                             WireEvent)

from .fields import as_int
from server.games.machines.timers import Timers


class IllegalAction(Exception):
    """A well-formed command that the rules refuse. ``code`` is stable and machine-readable."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Event:
    """Something that happened at ``at`` ms.

    ``audience`` None = everyone; otherwise only those seats see ``data``. The others (and spectators)
    see ``redacted`` (a map of fields, same ``type``) when it is given, or an empty event."""

    type: str
    at: int
    data: EventData
    audience: frozenset[int] | None = None
    redacted: EventData | None = None

    def visible_to(self, seat: int | None) -> bool:
        return self.audience is None or (seat is not None and seat in self.audience)

    def to_wire(self) -> WireEvent:
        return {"type": self.type, "at": self.at, **self.data}

    def redacted_wire(self) -> WireEvent:
        """What a seat outside the audience gets: the redacted form, or an empty map."""
        if self.redacted is None:
            return {}
        return {"type": self.type, "at": self.at, **self.redacted}

    def wire_for(self, seat: int | None) -> WireEvent:
        return self.to_wire() if self.visible_to(seat) else self.redacted_wire()


@dataclass(frozen=True)
class Outcome:
    """How a game ended. ``scores`` is by seat (higher is better); ``detail`` is the game's own."""

    reason: str | None  # None: the game has not ended (scores as they stand)
    winners: tuple[int, ...]
    scores: tuple[int, ...]
    detail: Map = field(default_factory=dict)

    def to_wire(self) -> Map:
        return {"reason": self.reason, "winners": list(self.winners), "scores": list(self.scores), **self.detail}


@dataclass(frozen=True)
class Option:
    """One table option: its schema, its default, what it means. ``duration``: integer ms that the
    table's time scale divides (a time control)."""

    spec: Spec
    default: Value
    doc: str
    duration: bool = False

    @property
    def int_default(self) -> int:
        """The default of an integer option (a config's field default)."""
        return as_int(self.default, self.doc)


def parse_command(catalogue: dict[str, Record], raw: Any) -> Command:
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


def deadline_kind(key: Hashable) -> Hashable:
    """A deadline key is a name, or a tuple whose first item names its kind (``("auction", 3)``)."""
    return key[0] if isinstance(key, tuple) else key


class Game(ABC):
    """Base of every engine.

    Subclasses set the class data below and implement the abstract methods. ``HANDLERS`` maps a command
    type to the method that carries it out (called as ``handler(self, seat, **fields)``); ``DEADLINES``
    maps a deadline kind to the method that fires it (``handler(self, key)``). After every command and
    every deadline, ``_settle`` runs once: the one place where consequences that follow from the state
    (an auction phase ending, the next turn starting, the game ending) are worked out."""

    NAME: ClassVar[str]
    TITLE: ClassVar[str]
    MIN_SEATS: ClassVar[int]
    MAX_SEATS: ClassVar[int]
    COMMANDS: ClassVar[dict[str, Record]]
    OPTIONS: ClassVar[dict[str, Option]] = {}
    HANDLERS: ClassVar[dict[str, Callable[..., None]]]
    DEADLINES: ClassVar[dict[Hashable, Callable[..., None]]]
    # event type -> the field naming what it made (an int id, or a map with an "id"): the ``ok`` to the command
    # that caused it says ``created: {field: id}``, so a client need not match the event's fields to its command
    CREATES: ClassVar[dict[str, str]] = {}

    def __init__(self, players: int, seed: int, start_ms: int = 0) -> None:
        if not self.MIN_SEATS <= players <= self.MAX_SEATS:
            raise ValueError(f"{self.TITLE} takes {self.MIN_SEATS} to {self.MAX_SEATS} players")
        self.n = players
        self.seed = seed
        self.now = start_ms
        self.timers = Timers()
        self._events: list[Event] = []
        self._at = start_ms

    # ------------------------------------------------------------------ options and creation

    @classmethod
    def check_options(cls, options: Any = None, time_scale: float = 1.0) -> Options:
        """Every option with its default filled in and durations scaled; ``ValueError`` if one is bad."""
        if options is None:
            options = {}
        if not isinstance(options, dict):
            raise ValueError("options must be a map")
        unknown = sorted(set(options) - set(cls.OPTIONS), key=str)
        if unknown:
            known = ", ".join(cls.OPTIONS) or "none"
            raise ValueError(f"options.{unknown[0]}: unknown field ({cls.NAME}'s options: {known})")
        if not isinstance(time_scale, (int, float)) or not 0 < time_scale < float("inf"):
            raise ValueError("time_scale must be a positive number")
        out: Options = {}
        for name, option in cls.OPTIONS.items():
            if name in options:
                try:
                    value = option.spec.check(options[name], f"options.{name}")
                except SchemaError as exc:
                    raise ValueError(str(exc)) from None
            else:
                value = option.default
            if option.duration:
                value = max(1, round(value / time_scale))
            out[name] = value
        cls._check_option_values(out)
        return out

    @classmethod
    def _check_option_values(cls, options: Options) -> None:
        """Checks across options (e.g. the bank covers the starting money); raise ``ValueError``."""

    @classmethod
    def create(cls, players: int, seed: int, options: Any = None, time_scale: float = 1.0,
               start_ms: int = 0) -> "Game":
        """An engine from wire options. ``ValueError`` for bad options or a seat count out of range."""
        return cls.from_options(players, seed, cls.check_options(options, time_scale), start_ms)

    @classmethod
    @abstractmethod
    def from_options(cls, players: int, seed: int, options: Options, start_ms: int) -> "Game":
        """An engine from options already checked by ``check_options``."""

    @classmethod
    def parse(cls, raw: Any) -> Command:
        return parse_command(cls.COMMANDS, raw)

    # ------------------------------------------------------------------ driving

    def apply(self, seat: int, command: Command, now_ms: int) -> list[Event]:
        """Apply a command from ``seat`` at ``now_ms``.

        Raises ``SchemaError`` for a malformed command and ``IllegalAction`` for one the rules refuse;
        either way nothing changes."""
        parsed = self.parse(command)
        self._enter(now_ms)
        if not 0 <= seat < self.n:
            raise IllegalAction("no_such_seat", f"seat {seat} is not at this table")
        self._at = now_ms
        self._check_seat(seat)
        handler = self.HANDLERS[parsed["type"]]  # type: ignore[index]  # parse_command put a str there
        try:
            handler(self, seat, **{k: v for k, v in parsed.items() if k != "type"})
        except IllegalAction:
            if self._events:  # handlers check everything before they change anything
                raise AssertionError(f"a refused {parsed['type']!r} emitted events") from None
            raise
        self._settle()
        self.now = now_ms
        return self._take_events()

    def advance(self, now_ms: int) -> list[Event]:
        """Fire every deadline due at or before ``now_ms``, in time order, each at its own time."""
        if now_ms < self.now:
            raise ValueError(f"time went backwards: {now_ms} < {self.now}")
        while (due := self.timers.pop_next_due(now_ms)) is not None:
            self._at, key = due
            self.DEADLINES[deadline_kind(key)](self, key)
            self._settle()
        self.now = now_ms
        return self._take_events()

    def next_deadline(self) -> int | None:
        nxt = self.timers.next()
        return None if nxt is None else nxt[0]

    def shift(self, delta_ms: int) -> None:
        """Move every clock of the game ``delta_ms`` later: time that passed while the table was paused
        (or the server was down) counts for nobody. ``now`` moves with it. Every deadline lives in ``timers``
        alone (the shared machines and the views read them there), so nothing else has to move."""
        if delta_ms < 0:
            raise ValueError("clocks only move forward")
        self.timers.shift(delta_ms)
        self.now += delta_ms

    def _enter(self, now_ms: int) -> None:
        if now_ms < self.now:
            raise ValueError(f"time went backwards: {now_ms} < {self.now}")
        deadline = self.next_deadline()
        if deadline is not None and now_ms >= deadline:
            raise ValueError(f"advance({now_ms}) must run before a command at {now_ms} (deadline {deadline})")

    def _check_seat(self, seat: int) -> None:
        """Refuse any command from ``seat`` now (the game is over, the seat has left); raise ``IllegalAction``."""

    def _settle(self) -> None:
        """Work out what follows from the state after a command or a deadline."""

    def _emit(self, kind: str, audience: frozenset[int] | None = None, redacted: EventData | None = None,
              **data: Value) -> None:
        self._events.append(Event(kind, self._at, data, audience, redacted))

    @classmethod
    def created(cls, events: list[Event]) -> dict[str, int]:
        """The ids ``events`` made, by kind (``CREATES``)."""
        made: dict[str, int] = {}
        for event in events:
            kind = cls.CREATES.get(event.type)
            if kind is not None:
                value = event.data[kind]
                made[kind] = value["id"] if isinstance(value, dict) else value  # type: ignore[assignment]  # an id
        return made

    def _take_events(self) -> list[Event]:
        events, self._events = self._events, []
        return events

    # ------------------------------------------------------------------ what a seat may see and do

    def static(self) -> ViewPart:
        """What never changes during the game (sent once, when a client joins, watches or resumes)."""
        return {}

    @abstractmethod
    def public_view(self) -> ViewPart:
        """What everyone at the table, spectators included, may see now."""

    def private_view(self, seat: int) -> ViewPart:
        """What only ``seat`` may see now (its keys differ from the public view's)."""
        return {}

    def view(self, seat: int | None) -> ViewPart:
        """The whole view of ``seat`` (None: a spectator), as a player is given it."""
        private = self.private_view(seat) if seat is not None else None
        return player_view(self.static(), self.public_view(), private, seat)

    @abstractmethod
    def legal_actions(self, seat: int) -> list[LegalAction]:
        """Command templates: an integer field given as ``{"min": a, "max": b}`` may take any value in it."""

    # ------------------------------------------------------------------ the end

    @abstractmethod
    def outcome(self) -> Outcome | None:
        """How the game ended, or None while it goes on."""

    @property
    def over(self) -> bool:
        return self.outcome() is not None

    def standing(self) -> Outcome:
        """The outcome, or the scores as they stand (reason None) while the game goes on."""
        done = self.outcome()
        return done if done is not None else self._standing()

    @abstractmethod
    def _standing(self) -> Outcome:
        """Scores as they stand now, for a game stopped before its end (reason ``None``, no winners)."""

    def result(self) -> Result:
        """The outcome on the wire: ``game``, ``seed``, ``players``, ``over`` and ``Outcome.to_wire()``."""
        outcome = self.standing()
        return {"game": self.NAME, "seed": self.seed, "players": self.n, "over": self.over, **outcome.to_wire()}

    @abstractmethod
    def snapshot(self) -> Snapshot:
        """The whole state, hidden parts included, as JSON-able data (for digests and tests)."""

    def digest(self) -> str:
        return canonical_digest(self.snapshot())
