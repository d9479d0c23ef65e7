"""One table: a trio task that owns its engine, its seats and its event history.

Everything that touches the engine arrives through the table's inbox and is handled by ``run``, which
waits with ``trio.move_on_at(next deadline)``: a message or the engine's next deadline, whichever comes
first. Sending to connections never blocks (``Connection.send`` drops a client that cannot keep up), so
no client can stall a table.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import trio

from protocol import messages
from protocol.codec import encode
from protocol.errors import ProtocolError
from protocol.schema import SchemaError
from server import logs
from server.clock import ServerClock
from server.games import Event, Game, IllegalAction, new_game

if TYPE_CHECKING:
    from server.connection import Connection

INBOX_SIZE = 1024
REPLAY_LIMIT = 2000  # a resume further behind than this gets a fresh view instead of the events
WAITING, RUNNING, OVER = "waiting", "running", "over"


@dataclass
class Seat:
    index: int
    name: str
    token: str
    conn: "Connection | None" = None
    views: bool = True


@dataclass
class Request:
    kind: str  # join / watch / leave / resume / act / view
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
    clock: ServerClock
    seats: list[Seat] = field(default_factory=list)
    spectators: dict["Connection", bool] = field(default_factory=dict)  # connection -> wants views
    history: list[tuple[int, int, Event]] = field(default_factory=list)  # (seq, server ms, event)
    engine: Game | None = None
    state: str = WAITING
    started_at: int = 0
    actions: int = 0
    rejected: int = 0

    def __post_init__(self) -> None:
        self.inbox, self._inbox_out = trio.open_memory_channel[Request](INBOX_SIZE)
        self.log = logs.get(table=self.id, game=self.game_name)

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

    def detach(self, conn: "Connection") -> None:
        """A connection went away: its seat stays in the game, its clock keeps running."""
        self.spectators.pop(conn, None)
        for seat in self.seats:
            if seat.conn is conn:
                seat.conn = None
                self.log.info("seat_disconnected", seat=seat.index)

    # ------------------------------------------------------------------ the task

    async def run(self) -> None:
        self.log.info("table_created", seats=self.seat_count, time_scale=self.time_scale)
        while True:
            deadline = self.engine.next_deadline() if self.engine is not None else None
            request = None
            with trio.move_on_at(self.clock.to_trio(deadline)):
                request = await self._inbox_out.receive()
            now = self.clock.now_ms()
            if request is None and deadline is not None:
                now = max(now, deadline)
            self._fire_deadlines(now)
            if request is not None:
                self._handle(request, now)

    def _fire_deadlines(self, now: int) -> None:
        engine = self.engine
        if engine is None or engine.over:
            return
        deadline = engine.next_deadline()
        if deadline is not None and deadline <= now:
            self._publish(engine.advance(now), now)

    def _handle(self, request: Request, now: int) -> None:
        msg, conn = request.msg, request.conn
        re = msg.get("id")
        try:
            getattr(self, "_on_" + request.kind)(conn, msg, now)
        except ProtocolError as err:
            conn.send(messages.error(err, re=re, table=self.id))
        except Exception:  # a bug must not take the table down with it
            self.log.exception("request_failed", kind=request.kind)
            conn.send(messages.error(ProtocolError("internal", "the server failed on that request"), re=re))

    # ------------------------------------------------------------------ requests

    def _on_join(self, conn: "Connection", msg: dict[str, Any], now: int) -> None:
        if any(s.conn is conn for s in self.seats):
            raise ProtocolError("already_seated", "this connection already holds a seat here")
        if self.state != WAITING or len(self.seats) >= self.seat_count:
            raise ProtocolError("table_full", "every seat at this table is taken")
        seat = Seat(len(self.seats), msg["name"], secrets.token_urlsafe(24), conn, msg.get("views", True))
        self.seats.append(seat)
        conn.send(messages.reply("joined", msg.get("id"), table=self.id, seat=seat.index, token=seat.token))
        self.log.info("seat_joined", seat=seat.index, name=seat.name)
        if len(self.seats) == self.seat_count:
            self._start(now)

    def _on_watch(self, conn: "Connection", msg: dict[str, Any], now: int) -> None:
        self.spectators[conn] = msg.get("views", True)
        conn.send(messages.reply("watching", msg.get("id"), table=self.id))
        self._send_view(conn, None, now)

    def _on_leave(self, conn: "Connection", msg: dict[str, Any], now: int) -> None:
        seat = self._seat_of(conn)
        if seat is None and conn not in self.spectators:
            raise ProtocolError("not_seated", "this connection neither holds a seat nor watches here")
        self.spectators.pop(conn, None)
        if seat is not None and self.state == WAITING:
            self.seats.remove(seat)
            for i, s in enumerate(self.seats):
                s.index = i
        elif seat is not None:
            seat.conn = None  # the seat stays in the game; quitting is the game's `quit` command
        conn.send(messages.reply("left", msg.get("id"), table=self.id))

    def _on_resume(self, conn: "Connection", msg: dict[str, Any], now: int) -> None:
        seat = next((s for s in self.seats if hmac.compare_digest(s.token, msg["token"])), None)
        if seat is None:
            raise ProtocolError("bad_token", "that token holds no seat at this table")
        if seat.conn is not None and seat.conn is not conn:
            seat.conn.send(messages.error(ProtocolError("not_seated", "your seat was resumed elsewhere"), table=self.id))
        seat.conn = conn
        seat.views = msg.get("views", True)
        conn.send(messages.reply("resumed", msg.get("id"), table=self.id, seat=seat.index))
        self.log.info("seat_resumed", seat=seat.index, last_seq=msg["last_seq"])
        missed = len(self.history) - msg["last_seq"]
        if 0 < missed <= REPLAY_LIMIT:
            for seq, at, event in self.history[msg["last_seq"]:]:
                conn.send(self._event_frame(seq, at, event, seat.index))
        self._send_view(conn, seat.index, now)

    def _on_view(self, conn: "Connection", msg: dict[str, Any], now: int) -> None:
        seat = self._seat_of(conn)
        if seat is None and conn not in self.spectators:
            raise ProtocolError("not_seated", "join, resume or watch this table first")
        self._send_view(conn, seat.index if seat else None, now, msg.get("id"))

    def _on_act(self, conn: "Connection", msg: dict[str, Any], now: int) -> None:
        seat = self._seat_of(conn)
        if seat is None:
            raise ProtocolError("not_seated", "only a seated player may act; join or resume first")
        if self.engine is None:
            raise ProtocolError("illegal_action", "the game has not started", reason="not_started")
        try:
            events = self.engine.apply(seat.index, msg["command"], now)
        except SchemaError as exc:
            raise ProtocolError.from_schema(exc) from None
        except IllegalAction as exc:
            self.rejected += 1
            raise ProtocolError("illegal_action", exc.message, reason=exc.code) from None
        self.actions += 1
        conn.send(messages.reply("ok", msg.get("id")))
        self._publish(events, now)

    # ------------------------------------------------------------------ the game

    def _start(self, now: int) -> None:
        self.engine = new_game(self.game_name, self.seat_count, self.seed, self.options, self.time_scale, start_ms=now)
        self.state = RUNNING
        self.started_at = now
        seats = [{"seat": s.index, "name": s.name} for s in self.seats]
        self.log.info("table_started", seed=self.seed)
        self._publish([Event("game_started", now, {"seats": seats, "seed": self.seed})], now)

    def _publish(self, events: list[Event], now: int) -> None:
        """Number, record and send each event to every subscriber that may see it, then fresh views."""
        if not events:
            return
        assert self.engine is not None
        for event in events:
            seq = len(self.history) + 1
            self.history.append((seq, now, event))
            self._log_event(event)
            public = encode(messages.event(table=self.id, seq=seq, time=now, event=event.to_wire()))
            hidden = None
            for conn, seat in self._subscribers():
                if event.visible_to(seat):
                    conn.send(public)
                else:
                    hidden = hidden or encode(messages.event(table=self.id, seq=seq, time=now, event={}))
                    conn.send(hidden)
        if self.engine.over and self.state != OVER:
            self._finish(now)
        for conn, seat in self._subscribers(views_only=True):
            self._send_view(conn, seat, now)

    def _finish(self, now: int) -> None:
        assert self.engine is not None
        self.state = OVER
        result = {
            **self.engine.result(),
            "actions": self.actions,
            "rejected": self.rejected,
            "game_ms": now - self.started_at,
            "digest": self.engine.digest(),
        }
        self.log.info("table_ended", reason=result["reason"], winners=result["winners"], actions=self.actions)
        seq = len(self.history) + 1
        event = Event("result", now, {"result": result})
        self.history.append((seq, now, event))
        frame = encode(messages.event(table=self.id, seq=seq, time=now, event=event.to_wire()))
        for conn, _ in self._subscribers():
            conn.send(frame)

    def _log_event(self, event: Event) -> None:
        if event.type == "auction_opened":
            a = event.data["auction"]
            self.log.info("auction_opened", auction=a["id"], seller=a["seller"], lot=a["lot"])
        elif event.type == "auction_closed":
            self.log.info("auction_closed", **event.data)
        elif event.type == "turn_ended" and event.data.get("reason") == "timeout":
            self.log.info("turn_timeout", seat=event.data["seat"], turn=event.data["turn"])

    # ------------------------------------------------------------------ helpers

    def _seat_of(self, conn: "Connection") -> Seat | None:
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
            legal = self.engine.legal_actions(seat) if seat is not None else []
        conn.send(
            messages.view(table=self.id, seq=len(self.history), time=now, seat=seat, view=view, legal=legal, re=re)
        )
