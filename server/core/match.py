"""One table's match, sans-IO: its seats and tokens, its states, the history and its sequence numbers, and the
journal records. No trio, no sockets, no clock: every call takes ``now`` in integer ms.

Its one entry is ``apply(record)``: every input is a typed journal record (``server.core.records``: join, leave,
start, cmd, tick, pause, unpause, close), and an input applied is an input journaled. Out come the records
(``take_records``) and the events numbered since the last look (``take_events``). The live table, recovery,
replay files (``Match.replay``: ``apply`` of each record) and ``parsimonia simulate`` all drive this one entry,
so what a journal replays to is what was played.

Failure is a state, as in h11: a refusal (``IllegalAction``, a malformed command) changes nothing and is answered;
any other exception from the rules stops the match with reason ``server_error``, its record kept, so a replay
stops there the same way.
"""

from __future__ import annotations

import secrets
import string
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Callable, Final, Literal, Protocol

from protocol.errors import ProtocolError
from protocol.messages import Answer
from protocol.schema import SchemaError
from protocol.values import Command, Options, Result, Value
from server.core.engine_views import EngineViews
from server.games import Event, Game, IllegalAction, game_class
from server.core.records import (CloseRecord, CmdRecord, EndRecord, Input, JoinRecord, LeaveRecord, PauseRecord,
                                   RawRecord, Record, StartRecord, TableRecord, TickRecord, UnpauseRecord, kind_of,
                                   typed)

WAITING: Final = "waiting"
RUNNING: Final = "running"
OVER: Final = "over"
State = Literal["waiting", "running", "over"]
ANSWERS_KEPT = 256  # per seat: the answers to commands sent with a key, for a command sent again
TOKEN_ALPHABET = string.ascii_letters + string.digits  # never a leading "-": tokens go on command lines
TOKEN_LENGTH = 32  # about 190 bits

Numbered = tuple[int, int, Event]  # (seq, server ms, event)


class Subscriber(Protocol):
    def send(self, frame: bytes) -> None: ...


class ReplayMismatch(Exception):
    """A journal does not replay: a recorded command is refused, or the result differs."""


def new_token() -> str:
    return "".join(secrets.choice(TOKEN_ALPHABET) for _ in range(TOKEN_LENGTH))


def _replayable(result: Result | None) -> Result | None:
    """A result without what the journal does not hold (refused commands leave no record)."""
    return None if result is None else {k: v for k, v in result.items() if k != "rejected"}


@dataclass(frozen=True, slots=True)
class Refusal:
    """A refused command's answer as kept for its key: data, never the exception itself (an exception raised
    again grows its traceback with each raise). ``error()`` is a fresh one, the same for the client."""

    code: str
    message: str
    reason: str | None = None

    @classmethod
    def of(cls, err: ProtocolError) -> "Refusal":
        return cls(err.code, err.message, err.reason)

    def error(self) -> ProtocolError:
        return ProtocolError(self.code, self.message, reason=self.reason)


@dataclass
class Seat:
    index: int
    name: str
    token: str
    key: str | None = None  # the client's join key, if it gave one: the same join again gets this seat back
    # act key -> its answer: the ok's fields, or the refusal (kept in memory only: a refused command is not
    # journaled, so after a restart it is judged afresh)
    answers: dict[str, Answer | Refusal] = field(default_factory=dict)
    # the session's (server.core.session): who holds the seat now, whether it wants views, whether anyone ever held it
    sub: Subscriber | None = None
    views: bool = True
    connected: bool = False

    def remember(self, key: str, answer: Answer | Refusal) -> None:
        if len(self.answers) >= ANSWERS_KEPT:
            del self.answers[next(iter(self.answers))]  # the oldest
        self.answers[key] = answer


class Match:
    def __init__(self, table_id: str, game: str, seat_count: int, seed: int, time_scale: float = 1.0,
                 options: Options | None = None) -> None:
        """``ValueError`` for options the game refuses, ``KeyError`` for an unknown game."""
        self.id = table_id
        self.game_name = game
        self.cls: type[Game] = game_class(game)
        if not self.cls.MIN_SEATS <= seat_count <= self.cls.MAX_SEATS:
            raise ValueError(f"{self.cls.TITLE} takes {self.cls.MIN_SEATS} to {self.cls.MAX_SEATS} players")
        self.seat_count = seat_count
        self.seed = seed
        self.seeded = False  # its creator chose the seed, so may know the deck: said in its summary, views, result
        self.time_scale = time_scale
        self.options = dict(options or {})
        self.checked_options = self.cls.check_options(self.options, time_scale)
        self.static = self.cls.from_options(seat_count, 0, self.checked_options, 0).static()
        self.seats: list[Seat] = []
        self.history: list[Numbered] = []
        self.seq = 0
        self.engine: Game | None = None
        self.views = EngineViews()  # its views of the state as it is now, each built once
        self.state: State = WAITING
        self.started_at = 0
        self.paused_at: int | None = None
        self.held = False  # paused as a hold for the players (a tournament's), not by the organiser's hand
        self.actions = 0
        self.rejected = 0
        self.result: Result | None = None
        self.failure: Exception | None = None  # what stopped the match with server_error
        self.on_event: Callable[[Event], None] | None = None  # e.g. the runtime's log of notable events
        self._records: list[Record] = []  # journaled since the last take_records
        self._end: EndRecord | None = None  # the result the input being applied ended the game with
        self._events: list[Numbered] = []  # numbered since the last take_events

    # ------------------------------------------------------------------ what comes out

    def header(self) -> TableRecord:
        """The journal's first record: everything needed to make this match again (``Match.of``)."""
        return TableRecord(self.id, self.game_name, self.seat_count, self.seed, self.time_scale, self.options,
                           self.seeded)

    @classmethod
    def of(cls, head: TableRecord) -> "Match":
        """The match a journal's header describes, before any input; ``ValueError``/``KeyError`` as ``Match``."""
        match = cls(head.id, head.game, head.seats, head.seed, head.time_scale, head.options)
        match.seeded = head.seeded
        return match

    def take_records(self) -> list[Record]:
        records, self._records = self._records, []
        return records

    def take_events(self) -> list[Numbered]:
        events, self._events = self._events, []
        return events

    def next_deadline(self) -> int | None:
        if self.engine is None or self.paused_at is not None or self.state == OVER:
            return None
        return self.engine.next_deadline()

    # ------------------------------------------------------------------ the one entry

    def apply(self, record: Input) -> Answer:
        """The match's only input: ``record`` applied and journaled, the views it changed marked stale; what it
        made (``_made``: its first event's seq, how many events, what it created). A refusal (``ProtocolError``:
        ``illegal_action`` with the game's reason, ``table_full``, ``bad_field``) changes nothing and journals
        nothing. An ``EndRecord`` (a replay's) is only checked against the result reached (``ReplayMismatch``)."""
        if isinstance(record, EndRecord):
            _check_end(self, record)
            return _made(self.seq, self.seq, {})
        before, self._end = self.seq, None
        self.views.changed()  # before the change: a look while its events are numbered sees what it made
        created = self._take(record)  # raises a refusal before anything changes
        self._records.append(record)
        if self._end is not None:  # the input ended the game: its result follows it
            self._records.append(self._end)
        return _made(before, self.seq, created)

    def _take(self, record: Input) -> dict[str, int]:
        """What ``record`` changes; what it created (an auction's id), if anything."""
        if isinstance(record, CmdRecord):
            return self._command(record)
        if isinstance(record, TickRecord):
            self._tick(record.at)
        elif isinstance(record, JoinRecord):
            self.seats = sorted([*self.seats, _new_seat(self, record)], key=lambda s: s.index)
        elif isinstance(record, LeaveRecord):
            self.seats = [s for s in self.seats if s.index != record.seat]
        elif isinstance(record, StartRecord):
            self.engine = self.cls.from_options(self.seat_count, self.seed, self.checked_options, record.at)
            self.state, self.started_at = RUNNING, record.at
            seats: list[Value] = [{"seat": s.index, "name": s.name} for s in self.seats]
            self._publish([Event("game_started", record.at, {"seats": seats})], record.at)
        elif isinstance(record, PauseRecord):
            self._pause(record.at, record.hold)
        elif isinstance(record, UnpauseRecord):  # or a ResumeRecord: its older name
            self._unpause(record.at)
        elif isinstance(record, CloseRecord):
            self._close(record.at, record.ended)
        return {}

    # ------------------------------------------------------------------ typed convenience: each an ``apply``

    def join(self, name: str, token: str | None = None, key: str | None = None) -> Seat:
        """Seat ``name`` in the lowest free seat (``table_full`` if there is none)."""
        record = JoinRecord(name, token or new_token(), key)
        self.apply(record)
        return next(s for s in self.seats if s.token == record.token)

    def act(self, seat: int, command: Command, now: int, key: str | None = None) -> Answer:
        """A seat's command; what its ``ok`` says, or ``ProtocolError`` if refused."""
        return self.apply(CmdRecord(now, seat, command, key))

    # ------------------------------------------------------------------ what each input does

    def _command(self, record: CmdRecord) -> dict[str, int]:
        """A seat's command, if it may come now and the rules take it."""
        if self.state == OVER:
            raise ProtocolError("illegal_action", "the game has ended", reason="game_over")
        if self.engine is None:
            raise ProtocolError("illegal_action", "the game has not started", reason="not_started")
        if self.paused_at is not None:
            raise ProtocolError("illegal_action", "the table's clocks are paused", reason="paused")
        at, seat = record.at, record.seat
        try:
            events = self.engine.apply(seat, record.command, at)  # a refusal raises before anything changes
        except SchemaError as exc:  # malformed: not a move the rules refused
            raise ProtocolError.from_schema(exc) from None
        except IllegalAction as exc:
            self.rejected += 1
            raise ProtocolError("illegal_action", exc.message, reason=exc.code) from None
        except Exception as exc:  # the rules broke: this match stops, with reason server_error
            self.failure = exc
            self._finish(at, ended="server_error")
            return {}
        self.actions += 1
        before = self.seq
        self._publish(events, at)
        created = self.cls.created(events)
        if record.key is not None:
            next(s for s in self.seats if s.index == seat).remember(record.key, _made(before, self.seq, created))
        return created

    def _tick(self, at: int) -> None:
        """The deadlines due at ``at`` fire."""
        assert self.engine is not None
        try:
            events = self.engine.advance(at)
        except Exception as exc:
            self.failure = exc
            self._finish(at, ended="server_error")
            return
        self._publish(events, at)

    def _pause(self, at: int, hold: bool) -> None:
        """The clocks stop; ``hold``: they wait for the players (a tournament's table), nobody paused them."""
        if self.state != RUNNING or self.paused_at is not None:
            raise ProtocolError("bad_field", f"table: {self.id} is not running with its clocks going")
        self.paused_at = at
        self.held = hold
        self._publish([Event("paused", at, {"hold": True} if hold else {})], at)

    def _unpause(self, at: int) -> None:
        if self.paused_at is None:
            raise ProtocolError("bad_field", f"table: {self.id} is not paused")
        assert self.engine is not None
        self.engine.shift(at - self.paused_at)
        self.paused_at = None
        self.held = False
        self._publish([Event("unpaused", at, {"deadline": self.engine.next_deadline()})], at)

    def _close(self, at: int, ended: str) -> None:
        """The organiser ends the table (or it expired): a running game stops where it is, with no winner."""
        if self.state == OVER:
            raise ProtocolError("bad_field", f"table: {self.id} has already ended")
        if self.engine is None:
            self.engine = self.cls.from_options(self.seat_count, self.seed, self.checked_options, at)
            self.started_at = at
        self._finish(at, ended=ended)

    # ------------------------------------------------------------------ the end, and the history

    def _finish(self, at: int, ended: str | None = None) -> None:
        """The game is over: by its own rules, or ``ended`` ("closed" by the organiser, "server_error")
        with no winner."""
        assert self.engine is not None
        self.state = OVER
        self.paused_at = None
        self.held = False
        base = self.engine.result()
        if ended is not None:
            base = {**base, "over": True, "reason": ended, "winners": []}
        self.result = {**base, "actions": self.actions, "rejected": self.rejected,
                       "game_ms": at - self.started_at, "digest": self.engine.digest()}
        if self.seeded:
            self.result["seeded"] = True
        self._end = EndRecord(at, self.result)  # journaled by ``apply``, after the input that ended the game
        self._append(Event("result", at, {"result": self.result}), at)

    def _append(self, event: Event, at: int) -> None:
        self.seq += 1
        numbered = (self.seq, at, event)
        self.history.append(numbered)
        self._events.append(numbered)
        if self.on_event is not None:
            self.on_event(event)

    def _publish(self, events: list[Event], at: int) -> None:
        """Number each event; the game's own end follows the events that made it."""
        if not events:
            return
        assert self.engine is not None
        for event in events:
            self._append(event, at)
        if self.engine.over and self.state != OVER:
            self._finish(at)

    def retire(self, keep: int = 1) -> None:
        """A finished match keeps only its last ``keep`` events (the result): enough to answer a late
        watch, view or resume, without the memory of the whole game."""
        assert self.state == OVER
        del self.history[:-keep]

    # ------------------------------------------------------------------ replay

    @classmethod
    def replay(cls, records: Sequence[Record | RawRecord]) -> "Match":
        """The match a journal describes, reached through the same steps it took live: ``apply`` of each record
        after the header, in order.

        Raises ``ReplayMismatch`` when a recorded input is refused or a recorded result differs."""
        try:
            head = typed(records[0])
            if not isinstance(head, TableRecord):
                raise ValueError(f"a {kind_of(head)} record")
            match = cls.of(head)
        except (KeyError, ValueError) as exc:
            raise ReplayMismatch(f"record 1 (table) does not describe a table: {exc}") from None
        for n, stored in enumerate(records[1:], start=2):
            try:
                record = typed(stored)
                if isinstance(record, TableRecord):
                    raise ValueError("a second table record")
                match.apply(record)
            except ReplayMismatch as exc:
                raise ReplayMismatch(f"record {n}: {exc}") from None
            except Exception as exc:  # whatever a bad journal makes fail, it is that journal's problem
                kind = stored.get("k") if isinstance(stored, dict) else kind_of(stored)
                raise ReplayMismatch(f"record {n} ({kind}) does not replay: {exc!r}") from None
        match._records.clear()
        match._events.clear()
        return match



def _new_seat(match: Match, record: JoinRecord) -> Seat:
    """The lowest free seat: seat numbers never change once given (one freed by a leave before the start is
    reused). ``table_full`` if there is none."""
    taken = {s.index for s in match.seats}
    if match.state != WAITING or len(taken) >= match.seat_count:
        raise ProtocolError("table_full", "every seat at this table is taken")
    return Seat(next(i for i in range(match.seat_count) if i not in taken), record.name, record.token, record.key)


def _check_end(match: Match, record: EndRecord) -> None:
    """A replay reached the recorded end: the same result (but for what a replay cannot count), adopted."""
    if _replayable(match.result) != _replayable(record.result):
        raise ReplayMismatch(f"the replay ended with {match.result}, the journal says {record.result}")
    _adopt_result(match, record.result)


def _adopt_result(match: Match, recorded: Result) -> None:
    """The result as it was recorded, with what a replay cannot count (refused commands): a table recovered
    after its end tells its seats the result they would have been told. The dict is the one the result event
    holds, so the event says it too."""
    assert match.result is not None
    match.result.update(recorded)
    rejected = recorded.get("rejected")
    if isinstance(rejected, int):
        match.rejected = rejected


def _made(before: int, after: int, created: dict[str, int]) -> Answer:
    """What an ``ok`` says a command made: the seq of its first event (the table's seq when it made none), how
    many events it made, and the ids of what it created (an auction), if any."""
    answer: Answer = {"seq": before + 1 if after > before else before, "events": after - before}
    if created:
        answer["created"] = created
    return answer
