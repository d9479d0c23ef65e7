"""One client connection: a task that reads and checks every frame; sending never waits.

It handles what its client sent in its address's turns (``server.runtime.turns``): under overload each
address gets an equal share of the server's time. It answers the ``hello`` itself; the requests after it are
``server.runtime.requests``'s.

``send`` writes the frame at once, or queues it when the client reads slowly, or, when that queue is full, drops
the connection (``server.transport.websocket``); the client may reconnect and resume its seat.

What one client may cost is bounded (``server.transport.limits.ClientLimits``): messages and bytes per second, pings and pongs
included (a frame over the rate is answered ``rate_limited``; a run of them closes the connection and bars its
address for ``strikeout_s``), tables created, the time to say hello, and silence (a quiet client is pinged, then
closed). Round trips are timed by pings sent from one task for all (``time_round_trips``), busy or not.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal, TypeVar

import trio

from protocol import messages
from protocol.client_messages import AnyClientMessage, ClientMessage, Hello
from protocol.codec import Limits, decode, encode
from protocol.errors import ProtocolError
from protocol.values import ReadMap
from server.ops import logs
from server.ops import metrics
from server.runtime import requests
from server.games import MANIFESTS
from server.transport.limits import TokenBucket, spread
from server.runtime.ports import RoundTripFields, ServerPort
from server.transport import frames
from server.transport.websocket import WebSocket
from server.runtime.turns import QUANTUM

T = TypeVar("T")
POLICY_VIOLATION = 1008
ROUND_TRIP_TICK_S = 0.25  # how often the round-trip pings go out, each time to a slice of the connections


class Connection:
    def __init__(self, ws: WebSocket, server: ServerPort, peer: str) -> None:
        assert server.lobby is not None
        self.ws = ws
        self.server = server
        self.lobby = server.lobby
        self.limits: Limits = server.config.limits
        self.client_limits = server.config.client
        self.id = next(server.connection_ids)
        now = trio.current_time()
        self._messages = TokenBucket(self.client_limits.messages_per_s, self.client_limits.burst_s, now)
        self._bytes = TokenBucket(self.client_limits.bytes_per_s, self.client_limits.burst_s, now)
        self._strikes = 0
        self.struck_out = False  # closed for a run of rate-limit strikes (its address then waits, server.runtime.app)
        self._pinged_at: float | None = None  # when the idle client was pinged, until it is heard again
        self._idle_ping_s = spread(self.client_limits.idle_ping_s)  # its own: connections made together are not all
        # pinged in the same millisecond
        self.welcomed = False  # its hello was answered: pinged to time its round trip from then on
        self.created = 0
        self._pending: Awaitable[None] | None = None  # what a message left to wait for, out of its turn
        self.client_name = ""
        self._reading = trio.CancelScope()  # cancelled to stop reading once the connection is closed
        self.tables: set[str] = set()
        self.topics: set[str] = set()  # bulletins this connection follows
        self.closed = False
        self.close_reason = ""
        self.peer = peer
        self.address = peer.rsplit(":", 1)[0]  # its IP: the rates it shares with that address's other connections
        self.log = logs.get(conn=self.id, peer=peer)
        ws.on_control = self._control_within_rates

    # -- sending: never blocks

    def send(self, message: ReadMap | bytes) -> None:
        if self.closed:
            return
        # a bytes payload is shared (an event to every subscriber): framed once for all of them
        if isinstance(message, bytes):
            wire = frames.shared(message)
        else:
            wire = frames.frame(encode(message))
        if not self.ws.send(wire):
            self.log.warning("client_too_slow", queued=self.ws.out.queued)
            metrics.count_dropped_client()
            self.close("too slow: the server's queue for this client is full", abort=True)

    def close(self, reason: str, *, abort: bool = False) -> None:
        """Send nothing more: what is queued goes out, then the WebSocket close (1008), and reading stops.

        ``abort``: the client stopped reading, so the queued frames are dropped; the close frame still
        goes, if the client takes it within the flush time (``server.transport.websocket``)."""
        if not self.closed:
            self.closed = True
            self.close_reason = reason
            self.ws.close(POLICY_VIOLATION, reason[:120], unheard=True)
            self._reading.cancel()
        if abort:
            self.ws.drop_queue()

    # -- the connection's life

    async def serve(self) -> None:
        """Reads until the connection is over; the caller then flushes and closes the WebSocket."""
        self.log.info("connected")
        try:
            with self._reading:
                await self._reader()
        finally:
            self.closed = True
            self.ws.on_control = None  # a cycle through this bound method would outlive it (server/ops/collector.py)
            for topic in self.topics:
                self.lobby.unfollow(topic, self)
            for table_id in self.tables:
                table = self.lobby.tables.get(table_id)
                if table is not None:
                    table.detach(self)
            self.log.info("disconnected", reason=self.close_reason or "closed by client")

    async def _reader(self) -> None:
        with trio.move_on_after(spread(self.client_limits.hello_timeout_s)) as hello_scope:
            first = await self._receive()
        if hello_scope.cancelled_caught:
            self.close("no hello in time")
            return
        if first is None or not await self._in_turn(lambda: self._hello(first)):
            return
        while not self.closed:
            with trio.move_on_at(self._idle_deadline()) as idle:
                while not self.closed:
                    await self.ws.wait_input()
                    going = await self._in_turn(self._handle_some)
                    if self._pending is not None:  # a history page replayed from the journal: this reader waits,
                        pending, self._pending = self._pending, None  # out of its turn
                        await pending
                    if not going:
                        return
            if idle.cancelled_caught:
                self._idle()

    async def _in_turn(self, handle: Callable[[], T]) -> T:
        """``handle()`` in a turn of this connection's address (``server.runtime.turns``), charged the server time it took."""
        turns = self.server.turns
        if turns.alone(self.address):  # no other address reads: nothing to share, no turn taken
            return handle()
        return await turns.turn(self.address, handle)

    def _handle_some(self) -> bool:
        """In a turn: at most ``QUANTUM`` of the messages that have come, each checked and handled, up to one that
        must wait (``_pending``: the turn ends with it). False once the connection is over."""
        for _ in range(QUANTUM):
            if self.closed:  # closed while parsing (a ping over the rates): what was read after is not taken
                return False
            frame = self.ws.receive_nowait()
            if frame is None:
                return not self.ws.over
            msg = self._checked(frame)
            if isinstance(msg, ClientMessage):
                self._pending = requests.handle(self, msg)
            if self.closed:
                return False
            if self._pending is not None:
                return True
        return True

    def _idle_deadline(self) -> float:
        limits = self.client_limits
        if self._pinged_at is None:
            return self.ws.last_heard + self._idle_ping_s
        return self._pinged_at + limits.idle_close_s - limits.idle_ping_s

    def _idle(self) -> None:
        """Ping a client that has been silent for ``idle_ping_s`` (up to a tenth more: ``transport.limits.spread``); close it
        if the answer does not come within ``idle_close_s - idle_ping_s``. A busy client only passes by here
        once per ``idle_ping_s``."""
        now, heard = trio.current_time(), self.ws.last_heard
        if self._pinged_at is not None and heard >= self._pinged_at:
            self._pinged_at = None  # it answered
        if now < heard + self._idle_ping_s:
            return
        if self._pinged_at is None:
            self._pinged_at = now
            self.ws.ping()
        elif now >= self._idle_deadline():
            self.log.info("idle_client_closed")
            self.close("idle: no answer to ping", abort=True)

    def round_trip(self) -> RoundTripFields:
        """``rtt_ms`` (smoothed) and ``rtt_last_ms``, once a pong has been timed; empty before."""
        smoothed, last = self.ws.rtt.ms, self.ws.rtt.last_ms
        if smoothed is None or last is None:
            return {}
        return {"rtt_ms": min(smoothed, messages.MAX_RTT_MS), "rtt_last_ms": min(last, messages.MAX_RTT_MS)}

    async def _receive(self) -> AnyClientMessage | None:
        """The next frame decoded, or None when the connection is over. Bad frames are answered here. Read, parsed and
        checked in the address's turns, as every later message is: what comes before a hello costs its address too."""
        while not self.closed:
            await self.ws.wait_input()
            msg = await self._in_turn(self._next_checked)
            if msg is False:  # a first message refused: no hello, the connection ends with a close (SPEC.md: hello)
                self.close("protocol error: the first message was refused")
                return None
            if msg is not None:
                return msg
            if self.ws.over:
                return None
        return None

    def _next_checked(self) -> AnyClientMessage | Literal[False] | None:
        frame = self.ws.receive_nowait()
        return None if frame is None else self._checked(frame)

    def _checked(self, frame: bytes | str) -> AnyClientMessage | Literal[False] | None:
        """``frame`` as its typed message, if it is within the rates and fits the catalogue; else answered here
        (with its ``re`` when it has a valid ``id``): False when it was refused, None when it was over the rates."""
        if not self._within_rates(frame):
            return None
        try:
            return messages.decode_client(frame, self.limits)
        except ProtocolError as err:
            self.fail(err, err.re)
        return False

    def _within_rates(self, frame: bytes | str) -> bool:
        """Takes ``frame`` from this connection's rates, then from its address's (shared by all its
        connections). Over either: refused with ``rate_limited``, carrying the frame's ``re`` when it has one,
        and a strike."""
        whose = self._charge(len(frame))
        if whose is None:
            return True
        try:
            re = messages.request_id(decode(frame, self.limits))
        except ProtocolError:
            re = None
        self._strike(whose, "message", re)
        return False

    def _control_within_rates(self, size: int) -> bool:
        """A WebSocket ping or pong (``size``: its payload's bytes), taken from the rates as a message is; over them,
        dropped (a ping unanswered), answered ``rate_limited`` and a strike, as a message is."""
        whose = self._charge(size)
        if whose is None:
            return True
        self._strike(whose, "ping or pong", None)
        return False

    def _charge(self, size: int) -> str | None:
        """One message of ``size`` bytes taken from this connection's rates, then its address's: None when granted,
        else whose rate it was over."""
        now, server = trio.current_time(), self.server
        if self._messages.take(1, now) and self._bytes.take(size, now):
            if server.address_messages.take(self.address, 1, now) and \
                    server.address_bytes.take(self.address, size, now):
                if self._strikes:  # a message accepted takes a strike away: a flood over its rate, some of it
                    self._strikes -= 1  # accepted as the budget refills, still adds up to a close
                return None
            return "this address's (shared by its connections)"
        return "this connection's"

    def _strike(self, whose: str, what: str, re: int | None) -> None:
        self._strikes += 1
        fatal = self._strikes >= self.client_limits.strikes
        self.struck_out = fatal
        self.fail(ProtocolError("rate_limited", f"over {whose} message or byte rate; the {what} was dropped",
                                fatal=fatal), re)

    def fail(self, err: ProtocolError, re: int | None) -> None:
        """Answer ``err`` (``re``: to the request it refuses), and close the connection if it is fatal."""
        self.log.info("protocol_error", code=err.code, detail=err.message[:200])
        metrics.count_error(err.code)
        self.send(messages.error(err, re=re))
        if err.fatal:
            self.close(f"protocol error: {err.code}")

    def _hello(self, msg: AnyClientMessage) -> bool:
        re = msg.re
        try:
            if not isinstance(msg, Hello):
                raise ProtocolError("hello_required", "the first message must be hello")
            if msg.version not in messages.VERSIONS_SPOKEN:
                spoken = ", ".join(map(str, messages.VERSIONS_SPOKEN))
                raise ProtocolError("version_unsupported", f"this server speaks protocol version {spoken}, not "
                                    f"{msg.version}: see the change log in protocol/SPEC.md")
        except ProtocolError as err:
            self.fail(err, re)
            return False
        self.client_name = msg.client
        self.log = self.log.bind(client=msg.client)
        self.send(messages.welcome(re=re, server_time=self.lobby.clock.now_ms(), limits=self.limits,
                                   display={name: manifest.display() for name, manifest in MANIFESTS.items()}))
        self.welcomed = True
        if self.client_limits.rtt_ping_s > 0:  # its first round trip, timed at once
            self.ws.ping()
        return True

    def summary(self) -> messages.ConnectionSummary:
        seats: list[messages.SeatHeld] = []
        for table_id in sorted(self.tables):
            table = self.lobby.tables.get(table_id)
            seat = table.seat_of(self) if table is not None else None
            if seat is not None:
                seats.append({"table": table_id, "seat": seat.index, "name": seat.name})
        return {"conn": self.id, "peer": self.peer[:128], "client": self.client_name,
                "tables": sorted(self.tables), "seats": seats, **self.round_trip()}


async def time_round_trips(connections: dict[int, Connection], every_s: float) -> None:
    """Ping every welcomed connection once per ``every_s`` (none if 0) to time its round trip, a slice of them each
    ``ROUND_TRIP_TICK_S``, never all in one burst. A connection that came during a cycle waits for the next (its
    first ping went with its welcome)."""
    if every_s <= 0:
        return
    ticks = max(1, round(every_s / ROUND_TRIP_TICK_S))
    while True:
        cycle = list(connections)  # their keys: a connection gone meanwhile is not held for the cycle
        per_tick = -(-len(cycle) // ticks)
        for tick in range(ticks):
            for key in cycle[tick * per_tick:(tick + 1) * per_tick]:
                conn = connections.get(key)
                if conn is not None and conn.welcomed and not conn.closed:
                    conn.ws.ping()
            await trio.sleep(every_s / ticks)
