"""One table's match, sans-IO: its seats and tokens, its states, the history and its sequence numbers, and the
journal records. No trio, no sockets, no clock: every call takes ``now`` in integer ms.

Inputs go in (``join``, ``leave``, ``start``, ``act``, ``tick``, ``pause``, ``unpause``, ``close``); out come the
journal records (``take_records``) and the events numbered since the last look (``take_events``). The session
turns the events into frames; the live table, recovery, replay files (``Match.replay``, a fold over the records)
and ``parsimonia simulate`` all drive this one class, so what a journal replays to is what was played.

Failure is a state, as in h11: a refusal (``IllegalAction``, a malformed command) changes nothing and is answered;
any other exception from the rules stops the match with reason ``server_error``, and its record is kept, so a
replay stops at the same point the same way.
"""

from __future__ import annotations

import secrets
import string
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from protocol.errors import ProtocolError
from protocol.messages import Answer
from protocol.schema import SchemaError
from protocol.values import Command, Options, Result
from server.engine_views import EngineViews
from server.games import Event, Game, IllegalAction, game_class
from server.journal_format import AtRecord, CloseRecord, CmdRecord, JoinRecord, Record, TableRecord

WAITING, RUNNING, OVER = "waiting", "running", "over"
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
    # the session's (server.session): who holds the seat now, whether it wants views, whether anyone ever held it
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
        self.state = WAITING
        self.started_at = 0
        self.paused_at: int | None = None
        self.held = False  # paused as a hold for the players (a tournament's), not by the organiser's hand
        self.actions = 0
        self.rejected = 0
        self.result: Result | None = None
        self.failure: Exception | None = None  # what stopped the match with server_error
        self.on_event: Callable[[Event], None] | None = None  # e.g. the runtime's log of notable events
        self._records: list[Record] = []
        self._events: list[Numbered] = []  # numbered since the last take_events

    # ------------------------------------------------------------------ what comes out

    def header(self) -> TableRecord:
        """The journal's first record: everything needed to make this match again."""
        head: TableRecord = {"k": "table", "id": self.id, "game": self.game_name, "seats": self.seat_count,
                             "seed": self.seed, "time_scale": self.time_scale, "options": self.options}
        if self.seeded:
            head["seeded"] = True
        return head

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

    # ------------------------------------------------------------------ inputs (each journaled)

    def join(self, name: str, now: int, token: str | None = None, key: str | None = None) -> Seat:
        """Seat ``name`` in the lowest free seat: seat numbers never change once given (a seat freed by
        ``leave`` before the start is reused)."""
        taken = {s.index for s in self.seats}
        seat = Seat(next(i for i in range(self.seat_count) if i not in taken), name, token or new_token(), key)
        self.seats.append(seat)
        self.seats.sort(key=lambda s: s.index)
        record: JoinRecord = {"k": "join", "name": name, "token": seat.token}
        if key is not None:
            record["key"] = key
        self._records.append(record)
        return seat

    def leave(self, index: int) -> None:
        self.seats = [s for s in self.seats if s.index != index]
        self._records.append({"k": "leave", "seat": index})

    def start(self, at: int) -> None:
        self.engine = self.cls.from_options(self.seat_count, self.seed, self.checked_options, at)
        self.views.changed()
        self.state = RUNNING
        self.started_at = at
        self._records.append({"k": "start", "at": at})
        seats = [{"seat": s.index, "name": s.name} for s in self.seats]
        self._publish([Event("game_started", at, {"seats": seats})], at)

    def act(self, seat: int, command: Command, now: int, key: str | None = None) -> Answer:
        """A seat's command; what its ``ok`` says (``_made``), or ``ProtocolError`` (``illegal_action`` with
        the game's reason) if refused."""
        if self.state == OVER:
            raise ProtocolError("illegal_action", "the game has ended", reason="game_over")
        if self.engine is None:
            raise ProtocolError("illegal_action", "the game has not started", reason="not_started")
        if self.paused_at is not None:
            raise ProtocolError("illegal_action", "the table's clocks are paused", reason="paused")
        try:
            return self.command(now, seat, command, key)
        except SchemaError as exc:  # malformed: not a move the rules refused
            raise ProtocolError.from_schema(exc) from None
        except IllegalAction as exc:
            self.rejected += 1
            raise ProtocolError("illegal_action", exc.message, reason=exc.code) from None

    def command(self, at: int, seat: int, command: Command, key: str | None = None) -> Answer:
        """Apply a seat's command (``act`` checked it may come now); what its ``ok`` says."""
        assert self.engine is not None
        record: CmdRecord = {"k": "cmd", "at": at, "seat": seat, "command": command}
        if key is not None:
            record["key"] = key
        try:
            events = self.engine.apply(seat, command, at)  # a refusal raises before anything changes
        except (IllegalAction, SchemaError):
            raise
        except Exception as exc:
            self.views.changed()
            self._records.append(record)
            before = self.seq
            self._fail(at, exc)
            return _made(before, self.seq, {})
        self.views.changed()
        self._records.append(record)
        self.actions += 1
        before = self.seq
        self._publish(events, at)
        answer = _made(before, self.seq, self.cls.created(events))
        if key is not None:
            next(s for s in self.seats if s.index == seat).remember(key, answer)
        return answer

    def tick(self, at: int) -> None:
        """The deadlines due at ``at`` fire."""
        assert self.engine is not None
        self._records.append({"k": "tick", "at": at})
        try:
            events = self.engine.advance(at)
        except Exception as exc:
            self.views.changed()
            self._fail(at, exc)
            return
        self.views.changed()
        self._publish(events, at)

    def pause(self, at: int, hold: bool = False) -> None:
        """The clocks stop; ``hold``: they wait for the players (a tournament's table), nobody paused them."""
        if self.state != RUNNING or self.paused_at is not None:
            raise ProtocolError("bad_field", f"table: {self.id} is not running with its clocks going")
        self.paused_at = at
        self.held = hold
        record: AtRecord = {"k": "pause", "at": at}
        if hold:
            record["hold"] = True
        self._records.append(record)
        self._publish([Event("paused", at, {"hold": True} if hold else {})], at)

    def unpause(self, at: int) -> None:
        if self.paused_at is None:
            raise ProtocolError("bad_field", f"table: {self.id} is not paused")
        assert self.engine is not None
        self.engine.shift(at - self.paused_at)
        self.views.changed()
        self.paused_at = None
        self.held = False
        self._records.append({"k": "unpause", "at": at})
        self._publish([Event("unpaused", at, {"deadline": self.engine.next_deadline()})], at)

    def close(self, at: int, ended: str = "closed") -> None:
        """The organiser ends the table (or it expired): a running game stops where it is, with no winner."""
        if self.state == OVER:
            raise ProtocolError("bad_field", f"table: {self.id} has already ended")
        record: CloseRecord = {"k": "close", "at": at}
        if ended != "closed":
            record["ended"] = ended
        self._records.append(record)
        if self.engine is None:
            self.engine = self.cls.from_options(self.seat_count, self.seed, self.checked_options, at)
            self.views.changed()
            self.started_at = at
        self._finish(at, ended=ended)

    # ------------------------------------------------------------------ the end, and the history

    def _fail(self, at: int, exc: Exception) -> None:
        """The rules raised something other than a refusal: this match stops, with reason server_error."""
        self.failure = exc
        self._finish(at, ended="server_error")

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
        self._records.append({"k": "end", "at": at, "result": self.result})
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
    def replay(cls, records: list[Record]) -> "Match":
        """The match a journal describes, reached through the same steps it took live: a fold of the records.

        Raises ``ReplayMismatch`` when a recorded command is refused or a recorded result differs."""
        head = records[0]
        try:
            match = cls(head["id"], head["game"], head["seats"], head["seed"], head["time_scale"], head["options"])
        except (KeyError, ValueError) as exc:
            raise ReplayMismatch(f"record 1 (table) does not describe a table: {exc}") from None
        match.seeded = head.get("seeded") is True
        for n, record in enumerate(records[1:], start=2):
            kind = record["k"]
            if kind == "end":
                if _replayable(match.result) != _replayable(record["result"]):
                    raise ReplayMismatch(f"record {n}: the replay ended with {match.result}, "
                                         f"the journal says {record['result']}")
                _adopt_result(match, record["result"])
                continue
            try:
                REPLAY_STEPS[kind](match, record)
            except Exception as exc:  # whatever a bad journal makes fail, it is that journal's problem
                raise ReplayMismatch(f"record {n} ({kind}) does not replay: {exc!r}") from None
        match._records.clear()
        match._events.clear()
        return match


def _adopt_result(match: Match, recorded: Result) -> None:
    """The result as it was recorded, with what a replay cannot count (refused commands): a table recovered
    after its end tells its seats the result they would have been told. The dict is the one the result event
    holds, so the event says it too."""
    assert match.result is not None
    match.result.update(recorded)
    match.rejected = recorded.get("rejected", match.rejected)


def _made(before: int, after: int, created: dict[str, int]) -> Answer:
    """What an ``ok`` says a command made: the seq of its first event (the table's seq when it made none), how
    many events it made, and the ids of what it created (an auction), if any."""
    answer: Answer = {"seq": before + 1 if after > before else before, "events": after - before}
    if created:
        answer["created"] = created
    return answer


REPLAY_STEPS: dict[str, Callable[[Match, Any], object]] = {  # kind -> its input, given the record
    "join": lambda m, r: m.join(r["name"], r.get("at", 0), r["token"], r.get("key")),
    "leave": lambda m, r: m.leave(r["seat"]),
    "start": lambda m, r: m.start(r["at"]),
    "cmd": lambda m, r: m.command(r["at"], r["seat"], r["command"], r.get("key")),
    "tick": lambda m, r: m.tick(r["at"]),
    "pause": lambda m, r: m.pause(r["at"], r.get("hold", False)),
    "unpause": lambda m, r: m.unpause(r["at"]),
    "resume": lambda m, r: m.unpause(r["at"]),  # journals written before the rename
    "close": lambda m, r: m.close(r["at"], r.get("ended", "closed")),
}
