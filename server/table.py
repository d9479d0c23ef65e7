"""One table: a trio task that owns its engine, its seats and its event history.

Everything that touches the engine arrives through the table's inbox and is handled by ``run``, which
waits with ``trio.move_on_at(next deadline)``: a message or the engine's next deadline, whichever comes
first. Sending to connections never blocks (``Connection.send`` drops a client that cannot keep up), so
no client can stall a table.

Every change of state goes through one ``_do_*`` method, which also writes it to the table's journal;
``Table.replay`` feeds a journal's records through the same methods, so a recovered table (or a replay
file) reaches the very same state, history and sequence numbers. With a journal, every frame a change
causes (the acknowledgement, the events, the views) is held back until its records are durable.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import trio

from protocol import messages
from protocol.codec import encode
from protocol.errors import ProtocolError
from protocol.schema import SchemaError
from server import logs
from server.clock import ServerClock
from server.games import Event, Game, IllegalAction, new_game
from server.journal import Journal

if TYPE_CHECKING:
    from server.connection import Connection

INBOX_SIZE = 1024
REPLAY_LIMIT = 2000  # a resume further behind than this gets a fresh view instead of the events
WAITING, RUNNING, OVER = "waiting", "running", "over"


class ReplayMismatch(Exception):
    """A journal does not replay: a recorded command is refused, or the result differs."""


def _replayable(result: dict[str, Any] | None) -> dict[str, Any] | None:
    """A result without what the journal does not hold (refused commands leave no record)."""
    return None if result is None else {k: v for k, v in result.items() if k != "rejected"}


@dataclass
class Seat:
    index: int
    name: str
    token: str
    conn: "Connection | None" = None
    views: bool = True


@dataclass
class Request:
    kind: str  # join / watch / leave / resume / act / view, or pause_clocks / resume_clocks / close_table
    conn: "Connection"
    msg: dict[str, Any]


@dataclass
class Table:
    id: str
    game_name: str
    seat_count: int
    seed: int
    time_scale: float
    options: dict[str, Any]
    clock: ServerClock | None
    journal: Journal | None = None
    on_finish: Callable[["Table"], None] | None = None
    seats: list[Seat] = field(default_factory=list)
    spectators: dict["Connection", bool] = field(default_factory=dict)  # connection -> wants views
    history: list[tuple[int, int, Event]] = field(default_factory=list)  # (seq, server ms, event)
    engine: Game | None = None
    state: str = WAITING
    started_at: int = 0
    paused_at: int | None = None
    actions: int = 0
    rejected: int = 0
    result: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        self.inbox, self._inbox_out = trio.open_memory_channel[Request](INBOX_SIZE)
        self.log = logs.get(table=self.id, game=self.game_name)
        self._outbox: list[tuple["Connection", dict[str, Any] | bytes]] = []

    def header(self) -> dict[str, Any]:
        """The journal's first record: everything needed to make this table again."""
        return {
            "k": "table", "id": self.id, "game": self.game_name, "seats": self.seat_count, "seed": self.seed,
            "time_scale": self.time_scale, "options": self.options,
        }

    @classmethod
    def replay(cls, records: list[dict[str, Any]], clock: ServerClock | None = None) -> "Table":
        """The table a journal describes, reached through the same steps it took live.

        Raises ``ReplayMismatch`` when a recorded command is refused or a recorded result differs."""
        head = records[0]
        table = cls(head["id"], head["game"], head["seats"], head["seed"], head["time_scale"], head["options"], clock)
        table.log = logs.silent()
        steps: dict[str, Callable[[dict[str, Any]], object]] = {
            "join": lambda r: table._do_join(r["name"], r["token"]),
            "leave": lambda r: table._do_leave(r["seat"]),
            "start": lambda r: table._do_start(r["at"]),
            "cmd": lambda r: table._do_cmd(r["at"], r["seat"], r["command"]),
            "tick": lambda r: table._do_tick(r["at"]),
            "pause": lambda r: table._do_pause(r["at"]),
            "resume": lambda r: table._do_resume_clocks(r["at"]),
            "close": lambda r: table._do_close(r["at"]),
        }
        for n, record in enumerate(records[1:], start=2):
            kind = record["k"]
            if kind == "end":
                if _replayable(table.result) != _replayable(record["result"]):
                    raise ReplayMismatch(f"record {n}: the replay ended with {table.result}, "
                                         f"the journal says {record['result']}")
                continue
            try:
                steps[kind](record)
            except Exception as exc:  # whatever a bad journal makes fail, it is that journal's problem
                raise ReplayMismatch(f"record {n} ({kind}) does not replay: {exc!r}") from None
        table._outbox.clear()
        return table

    # ------------------------------------------------------------------ called from connections

    def submit(self, request: Request) -> None:
        """Queue a request for the table task; a full inbox is the sender's problem, never the table's."""
        try:
            self.inbox.send_nowait(request)
        except trio.WouldBlock:
            raise ProtocolError("rate_limited", "the table is busy; retry shortly") from None

    def summary(self) -> dict[str, Any]:
        return {
            "table": self.id,
            "game": self.game_name,
            "seats": self.seat_count,
            "taken": len(self.seats),
            "state": self.state,
            "spectators": len(self.spectators),
        }

    def journal_failed(self, exc: OSError) -> None:
        """The journal cannot be written: stop the table, tell its clients, acknowledge nothing more."""
        self.log.error("journal_failed", error=str(exc))
        self.state = OVER
        notice = ProtocolError("internal", "this table's journal could not be written; the table is stopped")
        for conn, _ in self._subscribers():
            conn.send(messages.error(notice, table=self.id))

    def detach(self, conn: "Connection") -> None:
        """A connection went away: its seat stays in the game, its clock keeps running."""
        self.spectators.pop(conn, None)
        for seat in self.seats:
            if seat.conn is conn:
                seat.conn = None
                self.log.info("seat_disconnected", seat=seat.index)

    # ------------------------------------------------------------------ the task

    async def run(self) -> None:
        assert self.clock is not None
        self.log.info("table_open", seats=self.seat_count, taken=len(self.seats), state=self.state)
        while True:
            deadline = self._next_deadline()
            request = None
            with trio.move_on_at(self.clock.to_trio(deadline)):
                request = await self._inbox_out.receive()
            now = self.clock.now_ms()
            if request is None and deadline is not None:
                now = max(now, deadline)
            self._fire_deadlines(now)
            if request is not None:
                self._handle(request, now)
            self._release()

    def _next_deadline(self) -> int | None:
        if self.engine is None or self.paused_at is not None or self.state == OVER:
            return None
        return self.engine.next_deadline()

    def _fire_deadlines(self, now: int) -> None:
        deadline = self._next_deadline()
        if deadline is None or deadline > now:
            return
        try:
            self._do_tick(now)
        except Exception:  # a bug in a game's clock stops that table, never the server
            self.log.exception("tick_failed")
            self._do_finish(now, ended="server_error")

    def _handle(self, request: Request, now: int) -> None:
        msg, conn = request.msg, request.conn
        re = msg.get("id")
        try:
            getattr(self, "_on_" + request.kind)(conn, msg, now)
        except ProtocolError as err:
            self._send(conn, messages.error(err, re=re, table=self.id))
        except Exception:  # a bug must not take the table down with it
            self.log.exception("request_failed", kind=request.kind)
            self._send(conn, messages.error(ProtocolError("internal", "the server failed on that request"), re=re))

    def _send(self, conn: "Connection", message: dict[str, Any] | bytes) -> None:
        self._outbox.append((conn, message))

    def _release(self) -> None:
        """Send what the last step produced, once the journal holds every record it wrote."""
        if not self._outbox:
            return
        batch, self._outbox = self._outbox, []

        def send() -> None:
            for conn, message in batch:
                conn.send(message)

        if self.journal is None:
            send()
        else:
            self.journal.after_durable(send)

    # ------------------------------------------------------------------ requests

    def _on_join(self, conn: "Connection", msg: dict[str, Any], now: int) -> None:
        if any(s.conn is conn for s in self.seats):
            raise ProtocolError("already_seated", "this connection already holds a seat here")
        if self.state != WAITING or len(self.seats) >= self.seat_count:
            raise ProtocolError("table_full", "every seat at this table is taken")
        seat = self._do_join(msg["name"], secrets.token_urlsafe(24))
        seat.conn, seat.views = conn, msg.get("views", True)
        self._send(conn, messages.reply("joined", msg.get("id"), table=self.id, seat=seat.index, token=seat.token))
        self.log.info("seat_joined", seat=seat.index, name=seat.name)
        if len(self.seats) == self.seat_count:
            self._do_start(now)

    def _on_watch(self, conn: "Connection", msg: dict[str, Any], now: int) -> None:
        self.spectators[conn] = msg.get("views", True)
        self._send(conn, messages.reply("watching", msg.get("id"), table=self.id))
        self._send_view(conn, None, now)

    def _on_leave(self, conn: "Connection", msg: dict[str, Any], now: int) -> None:
        seat = self.seat_of(conn)
        if seat is None and conn not in self.spectators:
            raise ProtocolError("not_seated", "this connection neither holds a seat nor watches here")
        self.spectators.pop(conn, None)
        if seat is not None and self.state == WAITING:
            self._do_leave(seat.index)
        elif seat is not None:
            seat.conn = None  # the seat stays in the game; quitting is the game's own command
        self._send(conn, messages.reply("left", msg.get("id"), table=self.id))

    def _on_resume(self, conn: "Connection", msg: dict[str, Any], now: int) -> None:
        # as bytes: compare_digest refuses str with non-ASCII characters, and a client may send any
        token = msg["token"].encode()
        seat = next((s for s in self.seats if hmac.compare_digest(s.token.encode(), token)), None)
        if seat is None:
            raise ProtocolError("bad_token", "that token holds no seat at this table")
        if seat.conn is not None and seat.conn is not conn:
            notice = ProtocolError("not_seated", "your seat was resumed on another connection")
            self._send(seat.conn, messages.error(notice, table=self.id))
        seat.conn = conn
        seat.views = msg.get("views", True)
        self._send(conn, messages.reply("resumed", msg.get("id"), table=self.id, seat=seat.index))
        self.log.info("seat_resumed", seat=seat.index, last_seq=msg["last_seq"])
        missed = len(self.history) - msg["last_seq"]
        if 0 < missed <= REPLAY_LIMIT:
            for seq, at, event in self.history[msg["last_seq"]:]:
                self._send(conn, self._event_frame(seq, at, event, seat.index))
        self._send_view(conn, seat.index, now)

    def _on_view(self, conn: "Connection", msg: dict[str, Any], now: int) -> None:
        seat = self.seat_of(conn)
        if seat is None and conn not in self.spectators:
            raise ProtocolError("not_seated", "join, resume or watch this table first")
        self._send_view(conn, seat.index if seat else None, now, msg.get("id"))

    def _on_act(self, conn: "Connection", msg: dict[str, Any], now: int) -> None:
        seat = self.seat_of(conn)
        if seat is None:
            raise ProtocolError("not_seated", "only a seated player may act; join or resume first")
        if self.state == OVER:
            raise ProtocolError("illegal_action", "the game has ended", reason="game_over")
        if self.engine is None:
            raise ProtocolError("illegal_action", "the game has not started", reason="not_started")
        if self.paused_at is not None:
            raise ProtocolError("illegal_action", "the table's clocks are paused", reason="paused")
        mark = len(self._outbox)
        try:
            self._do_cmd(now, seat.index, msg["command"])
        except SchemaError as exc:
            raise ProtocolError.from_schema(exc) from None
        except IllegalAction as exc:
            self.rejected += 1
            raise ProtocolError("illegal_action", exc.message, reason=exc.code) from None
        self._outbox.insert(mark, (conn, messages.reply("ok", msg.get("id"))))  # before the events it caused

    # ------------------------------------------------------------------ the organiser's requests

    def _on_pause_clocks(self, conn: "Connection", msg: dict[str, Any], now: int) -> None:
        if self.state != RUNNING or self.paused_at is not None:
            raise ProtocolError("bad_field", f"table: {self.id} is not running with its clocks going")
        self._do_pause(now)
        self._send(conn, messages.reply("ok", msg.get("id")))

    def _on_resume_clocks(self, conn: "Connection", msg: dict[str, Any], now: int) -> None:
        if self.paused_at is None:
            raise ProtocolError("bad_field", f"table: {self.id} is not paused")
        self._do_resume_clocks(now)
        self._send(conn, messages.reply("ok", msg.get("id")))

    def _on_close_table(self, conn: "Connection", msg: dict[str, Any], now: int) -> None:
        if self.state == OVER:
            raise ProtocolError("bad_field", f"table: {self.id} has already ended")
        self._do_close(now)
        self._send(conn, messages.reply("ok", msg.get("id")))

    # ------------------------------------------------------------------ changes of state (journaled)

    def _record(self, record: dict[str, Any]) -> None:
        if self.journal is not None:
            self.journal.append(record)

    def _do_join(self, name: str, token: str) -> Seat:
        # the lowest free seat: seat numbers never change once given (a seat freed by `leave` is reused)
        taken = {s.index for s in self.seats}
        seat = Seat(next(i for i in range(self.seat_count) if i not in taken), name, token)
        self.seats.append(seat)
        self.seats.sort(key=lambda s: s.index)
        self._record({"k": "join", "name": name, "token": token})
        return seat

    def _do_leave(self, index: int) -> None:
        self.seats = [s for s in self.seats if s.index != index]
        self._record({"k": "leave", "seat": index})

    def _do_start(self, at: int) -> None:
        self.engine = new_game(self.game_name, self.seat_count, self.seed, self.options, self.time_scale, start_ms=at)
        self.state = RUNNING
        self.started_at = at
        self._record({"k": "start", "at": at})
        self.log.info("table_started")  # not the seed: it orders the hidden deck (the journal keeps it)
        seats = [{"seat": s.index, "name": s.name} for s in self.seats]
        self._publish([Event("game_started", at, {"seats": seats})], at)

    def _do_cmd(self, at: int, seat: int, command: dict[str, Any]) -> None:
        assert self.engine is not None
        events = self.engine.apply(seat, command, at)  # raises before anything changes
        self.actions += 1
        self._record({"k": "cmd", "at": at, "seat": seat, "command": command})
        self._publish(events, at)

    def _do_tick(self, at: int) -> None:
        assert self.engine is not None
        events = self.engine.advance(at)
        self._record({"k": "tick", "at": at})
        self._publish(events, at)

    def _do_pause(self, at: int) -> None:
        self.paused_at = at
        self._record({"k": "pause", "at": at})
        self._publish([Event("paused", at, {})], at)

    def _do_resume_clocks(self, at: int) -> None:
        assert self.engine is not None and self.paused_at is not None
        self.engine.shift(at - self.paused_at)
        self.paused_at = None
        self._record({"k": "resume", "at": at})
        self._publish([Event("resumed", at, {"deadline": self.engine.next_deadline()})], at)

    def _do_close(self, at: int) -> None:
        """The organiser ends the table: a running game stops where it is, with no winner."""
        self._record({"k": "close", "at": at})
        self.log.info("table_closed_by_admin", state=self.state)
        if self.engine is None:
            self.engine = new_game(self.game_name, self.seat_count, self.seed, self.options, self.time_scale, at)
            self.started_at = at
        self._do_finish(at, ended="closed")
        for conn, seat in self._subscribers(views_only=True):
            self._send_view(conn, seat, at)

    def _do_finish(self, at: int, ended: str | None = None) -> None:
        """The game is over: by its own rules, or ``ended`` ("closed" by the organiser, "server_error")
        with no winner."""
        assert self.engine is not None
        self.state = OVER
        self.paused_at = None
        base = self.engine.result()
        if ended is not None:
            base = {**base, "over": True, "reason": ended, "winners": []}
        self.result = {
            **base,
            "actions": self.actions,
            "rejected": self.rejected,
            "game_ms": at - self.started_at,
            "digest": self.engine.digest(),
        }
        self._record({"k": "end", "at": at, "result": self.result})
        self.log.info("table_ended", reason=self.result["reason"], winners=self.result["winners"])
        self._append_history(Event("result", at, {"result": self.result}), at)
        if self.on_finish is not None:
            self.on_finish(self)

    # ------------------------------------------------------------------ the history and its subscribers

    def _append_history(self, event: Event, at: int) -> None:
        seq = len(self.history) + 1
        self.history.append((seq, at, event))
        public = encode(messages.event(table=self.id, seq=seq, time=at, event=event.to_wire()))
        hidden = None
        for conn, seat in self._subscribers():
            if event.visible_to(seat):
                self._send(conn, public)
            else:
                hidden = hidden or encode(messages.event(table=self.id, seq=seq, time=at, event={}))
                self._send(conn, hidden)

    def _publish(self, events: list[Event], at: int) -> None:
        """Number, record and send each event to every subscriber that may see it, then fresh views."""
        if not events:
            return
        assert self.engine is not None
        for event in events:
            self._append_history(event, at)
            self._log_event(event)
        if self.engine.over and self.state != OVER:
            self._do_finish(at)
        for conn, seat in self._subscribers(views_only=True):
            self._send_view(conn, seat, at)

    def _log_event(self, event: Event) -> None:
        if event.type == "auction_opened":
            a = event.data["auction"]
            self.log.debug("auction_opened", auction=a["id"], seller=a["seller"], lot=a["lot"])
        elif event.type == "auction_closed":
            self.log.debug("auction_closed", **event.data)
        elif event.type == "turn_ended" and event.data.get("reason") == "timeout":
            self.log.info("turn_timeout", seat=event.data["seat"], turn=event.data["turn"])

    # ------------------------------------------------------------------ helpers

    def seat_of(self, conn: "Connection") -> Seat | None:
        return next((s for s in self.seats if s.conn is conn), None)

    def _subscribers(self, views_only: bool = False) -> list[tuple["Connection", int | None]]:
        out: list[tuple[Connection, int | None]] = [
            (s.conn, s.index) for s in self.seats if s.conn is not None and (s.views or not views_only)
        ]
        out += [(c, None) for c, views in self.spectators.items() if views or not views_only]
        return out

    def _event_frame(self, seq: int, at: int, event: Event, seat: int | None) -> bytes:
        body = event.to_wire() if event.visible_to(seat) else {}
        return encode(messages.event(table=self.id, seq=seq, time=at, event=body))

    def _send_view(self, conn: "Connection", seat: int | None, now: int, re: int | None = None) -> None:
        if self.engine is None:
            view: dict[str, Any] = {"game": self.game_name, "phase": "waiting", "seats": self.summary()}
            legal: list[dict[str, Any]] = []
        else:
            view = self.engine.view(seat)
            legal = self.engine.legal_actions(seat) if seat is not None and self.paused_at is None else []
        self._send(
            conn, messages.view(table=self.id, seq=len(self.history), time=now, seat=seat, view=view, legal=legal,
                                re=re)
        )
