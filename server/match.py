"""One table's match, sans-IO: seats and tokens, the history and its sequence numbers, journal records,
redaction and views. No trio, no sockets, no clock: every call takes ``now`` in integer ms.

Requests and deadlines go in (``step``); journal records (``take_records``) and frames for subscribers
(``take_frames``) come out. The live table (``server.table``), recovery and replay files (``Match.replay``)
and ``parsimonia simulate`` all drive this one class, so what a journal replays to is what was played.

A subscriber is anything with ``send(frame: bytes)`` (a WebSocket connection, a list in a test, an
in-process client); it is never called from here: the frames meant for it are handed out with it.

Failure is a state, as in h11: a refusal (``IllegalAction``, a malformed command) changes nothing and is
answered; any other exception from the rules stops the match with reason ``server_error``. The record of
the command that raised is kept, so a replay fails at the same point and stops the same way.
"""

from __future__ import annotations

import hmac
import secrets
import string
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from protocol import messages
from protocol.codec import encode
from protocol.errors import ProtocolError
from protocol.frames import ViewFrames, event_frame
from protocol.schema import SchemaError
from protocol.views import player_view
from server.engine_views import EngineViews
from server.games import Event, Game, IllegalAction, game_class

WAITING, RUNNING, OVER = "waiting", "running", "over"
REPLAY_LIMIT = 2000  # a resume further behind than this gets a fresh view instead of the events
ANSWERS_KEPT = 256  # per seat: the answers to commands sent with a key, for a command sent again
TOKEN_ALPHABET = string.ascii_letters + string.digits  # never a leading "-": tokens go on command lines
TOKEN_LENGTH = 32  # about 190 bits


class Subscriber(Protocol):
    def send(self, frame: bytes) -> None: ...


class ReplayMismatch(Exception):
    """A journal does not replay: a recorded command is refused, or the result differs."""


def new_token() -> str:
    return "".join(secrets.choice(TOKEN_ALPHABET) for _ in range(TOKEN_LENGTH))


def _replayable(result: dict[str, Any] | None) -> dict[str, Any] | None:
    """A result without what the journal does not hold (refused commands leave no record)."""
    return None if result is None else {k: v for k, v in result.items() if k != "rejected"}


@dataclass
class Seat:
    index: int
    name: str
    token: str
    key: str | None = None  # the client's join key, if it gave one: the same join again gets this seat back
    sub: Subscriber | None = None
    views: bool = True
    connected: bool = False  # has ever been held by a connection
    # act key -> its answer: the ok's fields, or the refusal (kept in memory only: a refused command is not
    # journaled, so after a restart it is judged afresh)
    answers: dict[str, dict[str, Any] | ProtocolError] = field(default_factory=dict)

    def remember(self, key: str, answer: dict[str, Any] | ProtocolError) -> None:
        if len(self.answers) >= ANSWERS_KEPT:
            del self.answers[next(iter(self.answers))]  # the oldest
        self.answers[key] = answer


class Match:
    def __init__(self, table_id: str, game: str, seat_count: int, seed: int, time_scale: float = 1.0,
                 options: dict[str, Any] | None = None) -> None:
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
        self.spectators: dict[Subscriber, bool] = {}  # subscriber -> wants views
        self.history: list[tuple[int, int, Event]] = []  # (seq, server ms, event)
        self.seq = 0
        self.engine: Game | None = None
        self.views = EngineViews()  # its views of the state as it is now, each built once
        self.state = WAITING
        self.started_at = 0
        self.paused_at: int | None = None
        self.actions = 0
        self.rejected = 0
        self.result: dict[str, Any] | None = None
        self.failure: Exception | None = None  # what stopped the match with server_error
        self.on_event: Callable[[Event], None] | None = None  # e.g. the runtime's log of notable events
        self._records: list[dict[str, Any]] = []
        self._frames: list[tuple[Subscriber, bytes]] = []
        self._views_due = False

    # ------------------------------------------------------------------ what the shell reads

    def header(self) -> dict[str, Any]:
        """The journal's first record: everything needed to make this match again."""
        head = {"k": "table", "id": self.id, "game": self.game_name, "seats": self.seat_count, "seed": self.seed,
                "time_scale": self.time_scale, "options": self.options}
        return {**head, "seeded": True} if self.seeded else head

    def take_records(self) -> list[dict[str, Any]]:
        records, self._records = self._records, []
        return records

    def take_frames(self) -> list[tuple[Subscriber, bytes]]:
        frames, self._frames = self._frames, []
        return frames

    @property
    def views_due(self) -> bool:
        """Whether a round of views is owed: something changed since the last ``flush_views``, and someone
        wants views (a bot that asked for events only costs no round)."""
        return self._views_due and (any(s.views and s.sub is not None for s in self.seats)
                                    or any(self.spectators.values()))

    def next_deadline(self) -> int | None:
        if self.engine is None or self.paused_at is not None or self.state == OVER:
            return None
        return self.engine.next_deadline()

    def summary(self) -> dict[str, Any]:
        summary = {"table": self.id, "game": self.game_name, "seats": self.seat_count, "taken": len(self.seats),
                   "state": self.state, "spectators": len(self.spectators), "paused": self.paused_at is not None}
        return {**summary, "seeded": True} if self.seeded else summary

    def seat_of(self, sub: Subscriber) -> Seat | None:
        return next((s for s in self.seats if s.sub is sub), None)

    # ------------------------------------------------------------------ driving

    def step(self, now: int, kind: str | None = None, sub: Subscriber | None = None,
             msg: dict[str, Any] | None = None) -> None:
        """Fire the deadlines due at ``now``, then handle one request (if any), then send fresh views."""
        self.tick(now)
        if kind is not None:
            assert sub is not None and msg is not None
            self.handle(kind, sub, msg, now)
        self.flush_views(now)

    def tick(self, now: int) -> None:
        deadline = self.next_deadline()
        if deadline is not None and deadline <= now:
            self._do_tick(now)

    def handle(self, kind: str, sub: Subscriber, msg: dict[str, Any], now: int) -> None:
        """One request from ``sub``; a refusal is answered to it with an ``error`` frame."""
        re = msg.get("id")
        try:
            REQUESTS[kind](self, sub, msg, now)
        except ProtocolError as err:
            self._send(sub, encode(messages.error(err, re=re, table=self.id)))

    def detach(self, sub: Subscriber) -> None:
        """A subscriber went away: a seat stays in the game (its clock keeps running), a spectator is gone."""
        self.spectators.pop(sub, None)
        for seat in self.seats:
            if seat.sub is sub:
                seat.sub = None

    def flush_views(self, now: int, only: Subscriber | None = None, re: int | None = None) -> None:
        """Send a fresh view to every subscriber that wants views (if the step changed anything), or to
        ``only``. The public part is built and encoded once."""
        targets = [(only, self._seat_index(only))] if only is not None else []
        if self._views_due:
            self._views_due = False
            targets = [(s.sub, s.index) for s in self.seats if s.sub is not None and s.views]
            targets += [(sub, None) for sub, views in self.spectators.items() if views]
            if only is not None and all(t[0] is not only for t in targets):
                targets.append((only, self._seat_index(only)))
        if not targets:
            return
        frames = ViewFrames(self.id, self.seq, now, self.public_view())
        for target, seat in targets:
            assert target is not None
            private = self.views.private(self.engine, seat) if seat is not None and self.engine is not None else None
            if seat is not None and private is None:
                private = {}
            legal = self.legal(seat)
            self._send(target, frames.for_seat(seat, private, legal, re if target is only else None))

    # ------------------------------------------------------------------ what seats see

    def public_view(self) -> dict[str, Any]:
        if self.engine is None:
            body: dict[str, Any] = {"game": self.game_name, "phase": "waiting"}
        else:
            body = dict(self.views.public(self.engine))  # a copy: the table's own fields go in it
            if self.result is not None:
                body["result"] = self.result
        body["seats"] = [{"seat": s.index, "name": s.name, "connected": s.sub is not None} for s in self.seats]
        body["seat_count"] = self.seat_count
        body["paused"] = self.paused_at is not None
        if self.seeded:
            body["seeded"] = True
        return body

    def legal(self, seat: int | None) -> list[dict[str, Any]]:
        if seat is None or self.engine is None or self.paused_at is not None or self.state != RUNNING:
            return []
        return self.views.legal(self.engine, seat)

    def player_view(self, seat: int | None) -> dict[str, Any]:
        """The whole view as a player is given it (the in-process form of a ``view`` frame)."""
        private = self.views.private(self.engine, seat) if seat is not None and self.engine is not None else None
        return player_view(self.static, self.public_view(), private, seat)

    def _seat_index(self, sub: Subscriber | None) -> int | None:
        seat = self.seat_of(sub) if sub is not None else None
        return None if seat is None else seat.index

    # ------------------------------------------------------------------ requests

    def _on_join(self, sub: Subscriber, msg: dict[str, Any], now: int) -> None:
        if self.seat_of(sub) is not None:
            raise ProtocolError("already_seated", "this connection already holds a seat here")
        key = msg.get("key")
        again = None if key is None else self._seat_holding("key", key)
        if again is not None:  # the same join sent again (its `joined` was lost with a connection): the same seat
            self._reattach(again, sub, msg, now, "joined", last_seq=0, token=again.token)
            return
        if self.state != WAITING or len(self.seats) >= self.seat_count:
            raise ProtocolError("table_full", "every seat at this table is taken")
        seat = self.join(msg["name"], now, key=key)
        seat.sub, seat.views, seat.connected = sub, msg.get("views", True), True
        self._send(sub, encode(messages.reply("joined", msg.get("id"), table=self.id, seat=seat.index,
                                              token=seat.token, game=self.game_name, static=self.static)))
        if len(self.seats) == self.seat_count:
            self.start(now)
        self._views_due = True

    def _on_watch(self, sub: Subscriber, msg: dict[str, Any], now: int) -> None:
        self.spectators[sub] = msg.get("views", True)
        self._send(sub, encode(messages.reply("watching", msg.get("id"), table=self.id, game=self.game_name,
                                              static=self.static)))
        self.flush_views(now, only=sub)

    def _on_leave(self, sub: Subscriber, msg: dict[str, Any], now: int) -> None:
        seat = self.seat_of(sub)
        if seat is None and sub not in self.spectators:
            raise ProtocolError("not_seated", "this connection neither holds a seat nor watches here")
        self.spectators.pop(sub, None)
        if seat is not None and self.state == WAITING:
            self._do_leave(seat.index)
            self._views_due = True
        elif seat is not None:
            seat.sub = None  # the seat stays in the game; quitting is the game's own command
        self._send(sub, encode(messages.reply("left", msg.get("id"), table=self.id)))

    def _on_resume(self, sub: Subscriber, msg: dict[str, Any], now: int) -> None:
        seat = self._seat_holding("token", msg["token"])
        if seat is None:
            raise ProtocolError("bad_token", "that token holds no seat at this table")
        self._reattach(seat, sub, msg, now, "resumed", last_seq=msg["last_seq"])

    def _seat_holding(self, secret: str, value: str) -> Seat | None:
        """The seat whose ``token`` or join ``key`` is ``value``, compared in constant time (as bytes:
        compare_digest refuses str with non-ASCII characters, and a client may send any)."""
        wanted = value.encode()
        for seat in self.seats:
            held = getattr(seat, secret)
            if held is not None and hmac.compare_digest(held.encode(), wanted):
                return seat
        return None

    def _reattach(self, seat: Seat, sub: Subscriber, msg: dict[str, Any], now: int, reply: str, last_seq: int,
                  **fields: Any) -> None:
        """``seat`` held by ``sub`` again (a resume, or a join sent again): the events after ``last_seq``,
        then a view."""
        if seat.sub is not None and seat.sub is not sub:
            notice = ProtocolError("not_seated", "your seat was resumed on another connection")
            self._send(seat.sub, encode(messages.error(notice, table=self.id)))
        seat.sub, seat.views, seat.connected = sub, msg.get("views", True), True
        missed = self.seq - last_seq
        replay = []
        if 0 < missed <= REPLAY_LIMIT:
            first = self.seq - len(self.history)  # a finished match keeps only its last events
            replay = self.history[max(0, last_seq - first):]
        if reply == "resumed":  # what follows, and whether the server lost events the client had seen
            fields = {**fields, "last_seq": self.seq, "replayed": len(replay)}
            if missed < 0:
                fields["lost"] = -missed
            elif len(replay) < missed:  # more than the cap: the client pages the rest with `history`
                fields["capped"] = True
        self._send(sub, encode(messages.reply(reply, msg.get("id"), table=self.id, seat=seat.index, **fields,
                                              game=self.game_name, static=self.static)))
        for seq, at, event in replay:
            self._send(sub, event_frame(self.id, seq, at, event.wire_for(seat.index)))
        self.flush_views(now, only=sub)

    def _on_detach(self, sub: Subscriber, msg: dict[str, Any], now: int) -> None:
        self.detach(sub)

    def _on_view(self, sub: Subscriber, msg: dict[str, Any], now: int) -> None:
        if self.seat_of(sub) is None and sub not in self.spectators:
            raise ProtocolError("not_seated", "join, resume or watch this table first")
        self.flush_views(now, only=sub, re=msg.get("id"))

    def _on_act(self, sub: Subscriber, msg: dict[str, Any], now: int) -> None:
        seat = self.seat_of(sub)
        if seat is None:
            raise ProtocolError("not_seated", "only a seated player may act; join or resume first")
        key = msg.get("key")
        answer = seat.answers.get(key) if key is not None else None
        if isinstance(answer, ProtocolError):
            self.rejected += 1  # refused again: each refused message counts, as the result reports
            raise answer
        if answer is not None:  # sent again: the first answer, and nothing changes
            self._send(sub, encode(messages.reply("ok", msg.get("id"), **answer)))
            return
        mark = len(self._frames)
        try:
            answer = self.act(seat.index, msg["command"], now, key)
        except ProtocolError as err:
            if key is not None and err.code == "illegal_action":
                seat.remember(key, err)
            raise
        self._frames.insert(mark, (sub, encode(messages.reply("ok", msg.get("id"), **answer))))  # before what it caused

    def act(self, seat: int, command: dict[str, Any], now: int, key: str | None = None) -> dict[str, Any]:
        """A seat's command; what its ``ok`` says (``_made``), or ``ProtocolError`` (``illegal_action`` with
        the game's reason) if refused."""
        if self.state == OVER:
            raise ProtocolError("illegal_action", "the game has ended", reason="game_over")
        if self.engine is None:
            raise ProtocolError("illegal_action", "the game has not started", reason="not_started")
        if self.paused_at is not None:
            raise ProtocolError("illegal_action", "the table's clocks are paused", reason="paused")
        try:
            return self._do_cmd(now, seat, command, key)
        except SchemaError as exc:  # malformed: not a move the rules refused
            raise ProtocolError.from_schema(exc) from None
        except IllegalAction as exc:
            self.rejected += 1
            raise ProtocolError("illegal_action", exc.message, reason=exc.code) from None

    # ------------------------------------------------------------------ the organiser's requests

    def _on_pause_clocks(self, sub: Subscriber, msg: dict[str, Any], now: int) -> None:
        if self.state != RUNNING or self.paused_at is not None:
            raise ProtocolError("bad_field", f"table: {self.id} is not running with its clocks going")
        self._do_pause(now)
        self._send(sub, encode(messages.reply("ok", msg.get("id"))))

    def _on_unpause_clocks(self, sub: Subscriber, msg: dict[str, Any], now: int) -> None:
        if self.paused_at is None:
            raise ProtocolError("bad_field", f"table: {self.id} is not paused")
        self._do_unpause(now)
        self._send(sub, encode(messages.reply("ok", msg.get("id"))))

    def _on_close_table(self, sub: Subscriber, msg: dict[str, Any], now: int) -> None:
        if self.state == OVER:
            raise ProtocolError("bad_field", f"table: {self.id} has already ended")
        self._do_close(now)
        self._send(sub, encode(messages.reply("ok", msg.get("id"))))

    # ------------------------------------------------------------------ changes of state (journaled)

    def join(self, name: str, now: int, token: str | None = None, key: str | None = None) -> Seat:
        """Seat ``name`` in the lowest free seat: seat numbers never change once given (a seat freed by
        ``leave`` before the start is reused)."""
        taken = {s.index for s in self.seats}
        seat = Seat(next(i for i in range(self.seat_count) if i not in taken), name, token or new_token(), key)
        self.seats.append(seat)
        self.seats.sort(key=lambda s: s.index)
        record = {"k": "join", "name": name, "token": seat.token}
        if key is not None:
            record["key"] = key
        self._records.append(record)
        return seat

    def _do_leave(self, index: int) -> None:
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

    def _do_cmd(self, at: int, seat: int, command: dict[str, Any], key: str | None = None) -> dict[str, Any]:
        """Apply a seat's command; what its ``ok`` says."""
        assert self.engine is not None
        record = {"k": "cmd", "at": at, "seat": seat, "command": command}
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

    def _do_tick(self, at: int) -> None:
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

    def _fail(self, at: int, exc: Exception) -> None:
        """The rules raised something other than a refusal: this match stops, with reason server_error."""
        self.failure = exc
        self._finish(at, ended="server_error")
        self._views_due = True

    def _do_pause(self, at: int) -> None:
        self.paused_at = at
        self._records.append({"k": "pause", "at": at})
        self._publish([Event("paused", at, {})], at)

    def _do_unpause(self, at: int) -> None:
        assert self.engine is not None and self.paused_at is not None
        self.engine.shift(at - self.paused_at)
        self.views.changed()
        self.paused_at = None
        self._records.append({"k": "unpause", "at": at})
        self._publish([Event("unpaused", at, {"deadline": self.engine.next_deadline()})], at)

    def _on_expire(self, sub: Subscriber, msg: dict[str, Any], now: int) -> None:
        """Nobody joined in time (server/lobby.py): a table still waiting ends, with reason "expired"."""
        if self.state == WAITING:
            self._do_close(now, ended="expired")

    def _do_close(self, at: int, ended: str = "closed") -> None:
        """The organiser ends the table (or it expired): a running game stops where it is, with no winner."""
        record: dict[str, Any] = {"k": "close", "at": at}
        if ended != "closed":
            record["ended"] = ended
        self._records.append(record)
        if self.engine is None:
            self.engine = self.cls.from_options(self.seat_count, self.seed, self.checked_options, at)
            self.views.changed()
            self.started_at = at
        self._finish(at, ended=ended)
        self._views_due = True

    def _finish(self, at: int, ended: str | None = None) -> None:
        """The game is over: by its own rules, or ``ended`` ("closed" by the organiser, "server_error")
        with no winner."""
        assert self.engine is not None
        self.state = OVER
        self.paused_at = None
        base = self.engine.result()
        if ended is not None:
            base = {**base, "over": True, "reason": ended, "winners": []}
        self.result = {**base, "actions": self.actions, "rejected": self.rejected,
                       "game_ms": at - self.started_at, "digest": self.engine.digest()}
        if self.seeded:
            self.result["seeded"] = True
        self._records.append({"k": "end", "at": at, "result": self.result})
        self._append(Event("result", at, {"result": self.result}), at)

    # ------------------------------------------------------------------ the history and its subscribers

    def _append(self, event: Event, at: int) -> None:
        self.seq += 1
        seq = self.seq
        self.history.append((seq, at, event))
        if self.on_event is not None:
            self.on_event(event)
        full = event_frame(self.id, seq, at, event.to_wire())
        if event.audience is None:
            for sub, _ in self.subscribers():
                self._send(sub, full)
            return
        other = event_frame(self.id, seq, at, event.redacted_wire())
        for sub, seat in self.subscribers():
            self._send(sub, full if event.visible_to(seat) else other)

    def _publish(self, events: list[Event], at: int) -> None:
        """Number and send each event to every subscriber that may see it; views follow at the step's end."""
        if not events:
            return
        assert self.engine is not None
        for event in events:
            self._append(event, at)
        if self.engine.over and self.state != OVER:
            self._finish(at)
        self._views_due = True

    def subscribers(self) -> list[tuple[Subscriber, int | None]]:
        out: list[tuple[Subscriber, int | None]] = [(s.sub, s.index) for s in self.seats if s.sub is not None]
        out += [(sub, None) for sub in self.spectators]
        return out

    def _send(self, sub: Subscriber, frame: bytes) -> None:
        self._frames.append((sub, frame))

    def retire(self, keep: int = 1) -> None:
        """A finished match keeps only its last ``keep`` events (the result): enough to answer a late
        watch, view or resume, without the memory of the whole game."""
        assert self.state == OVER
        del self.history[:-keep]

    # ------------------------------------------------------------------ replay

    @classmethod
    def replay(cls, records: list[dict[str, Any]]) -> "Match":
        """The match a journal describes, reached through the same steps it took live.

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
        match._frames.clear()
        return match


def _adopt_result(match: Match, recorded: dict[str, Any]) -> None:
    """The result as it was recorded, with what a replay cannot count (refused commands): a table recovered
    after its end tells its seats the result they would have been told. The dict is the one the result event
    holds, so the event says it too."""
    assert match.result is not None
    match.result.update(recorded)
    match.rejected = recorded.get("rejected", match.rejected)


def _replay_cmd(match: Match, r: dict[str, Any]) -> None:
    assert match.engine is not None
    match._do_cmd(r["at"], r["seat"], r["command"], r.get("key"))


def _made(before: int, after: int, created: dict[str, int]) -> dict[str, Any]:
    """What an ``ok`` says a command made: the seq of its first event (the table's seq when it made none), how
    many events it made, and the ids of what it created (an auction), if any."""
    answer: dict[str, Any] = {"seq": before + 1 if after > before else before, "events": after - before}
    if created:
        answer["created"] = created
    return answer


REQUESTS: dict[str, Callable[[Match, Subscriber, dict[str, Any], int], None]] = {
    "join": Match._on_join,
    "watch": Match._on_watch,
    "leave": Match._on_leave,
    "resume": Match._on_resume,
    "view": Match._on_view,
    "detach": Match._on_detach,
    "act": Match._on_act,
    "pause_clocks": Match._on_pause_clocks,
    "unpause_clocks": Match._on_unpause_clocks,
    "close_table": Match._on_close_table,
    "expire": Match._on_expire,
}

REPLAY_STEPS: dict[str, Callable[[Match, dict[str, Any]], object]] = {
    "join": lambda m, r: m.join(r["name"], r.get("at", 0), r["token"], r.get("key")),
    "leave": lambda m, r: m._do_leave(r["seat"]),
    "start": lambda m, r: m.start(r["at"]),
    "cmd": _replay_cmd,
    "tick": lambda m, r: m._do_tick(r["at"]),
    "pause": lambda m, r: m._do_pause(r["at"]),
    "unpause": lambda m, r: m._do_unpause(r["at"]),
    "resume": lambda m, r: m._do_unpause(r["at"]),  # journals written before the rename
    "close": lambda m, r: m._do_close(r["at"], r.get("ended", "closed")),
}
