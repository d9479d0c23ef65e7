"""One client connection: a reader loop that checks every frame, and a writer fed by a bounded queue.

The server never waits on a client: ``send`` puts a frame in the queue or, when the queue is full (the
client reads too slowly), drops the connection. The client may reconnect and resume its seat.

What one client may cost is bounded (``server.limits.ClientLimits``): messages and bytes per second
(token buckets; a frame over the rate is answered ``rate_limited`` and dropped, and a run of such
frames closes the connection), tables created, the time to say hello, and silence (a quiet client is
pinged, then closed if it does not answer).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

import trio
from trio_websocket import ConnectionClosed, WebSocketConnection

from protocol import messages
from protocol.codec import Limits, decode, encode
from protocol.errors import ProtocolError
from server import logs
from server.games import GAMES
from server.limits import TokenBucket
from server.table import REPLAY_LIMIT, Request
from server.wsbatch import send_frames

if TYPE_CHECKING:
    from server.app import Server

TABLE_REQUESTS = {"join", "watch", "leave", "resume", "act", "view"}
TABLE_ADMIN = {"pause": "pause_clocks", "unpause": "unpause_clocks", "close": "close_table"}
REPLAY_ROOM = REPLAY_LIMIT + 2  # what a resume may queue at once: the reply, the missed events, a view
WRITE_BATCH = 64  # frames a writer sends with one write, at most
FLUSH_S = 2.0  # once reading is over, how long the last frames (e.g. a fatal error) may take to go out
_ids = itertools.count(1)


class Connection:
    def __init__(self, ws: WebSocketConnection, server: "Server", peer: str) -> None:
        assert server.lobby is not None
        self.ws = ws
        self.server = server
        self.lobby = server.lobby
        self.limits: Limits = server.config.limits
        self.client = server.config.client
        self.id = next(_ids)
        self.queue_size = queue_size = server.config.queue_size
        now = trio.current_time()
        self._messages = TokenBucket(self.client.messages_per_s, self.client.burst_s, now)
        self._bytes = TokenBucket(self.client.bytes_per_s, self.client.burst_s, now)
        self._strikes = 0
        self._last_heard = now
        self.created = 0
        self.client_name = ""
        self._room = 0  # frames a resume may queue beyond queue_size; each frame sent uses one up
        self._out, self._out_recv = trio.open_memory_channel[bytes](queue_size + REPLAY_ROOM)
        self._sending = trio.CancelScope()  # the writer's sends; cancelled to drop a client that stopped reading
        self.tables: set[str] = set()
        self.topics: set[str] = set()  # bulletins this connection follows
        self.closed = False
        self.close_reason = ""
        self.peer = peer
        self.log = logs.get(conn=self.id, peer=peer)

    # -- sending: never blocks

    def send(self, message: dict[str, Any] | bytes) -> None:
        if self.closed:
            return
        frame = message if isinstance(message, bytes) else encode(message)
        queued = self._out.statistics().current_buffer_used
        try:
            if queued >= self.queue_size + self._room:
                raise trio.WouldBlock
            self._out.send_nowait(frame)
        except trio.WouldBlock:
            self.log.warning("client_too_slow", queued=queued)
            self.close("too slow: the server's queue for this client is full", abort=True)

    def close(self, reason: str, *, abort: bool = False) -> None:
        """Send nothing more: the writer flushes what is queued, then closes the WebSocket (1008).

        ``abort``: the client stopped reading, so the queued frames are dropped and a send blocked on
        it is cancelled; the writer then closes the connection (the TCP stream, if even the close frame
        cannot go out within a second)."""
        if not self.closed:
            self.closed = True
            self.close_reason = reason
            self._out.close()
        if abort:
            self._sending.cancel()

    # -- the connection's life

    async def serve(self) -> None:
        self.log.info("connected")
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._writer, nursery.cancel_scope)
                nursery.start_soon(self._idle_watch)
                await self._reader()
                # Nothing more is read. The writer sends what is queued (a fatal error's message must
                # reach the client before the close), closes the WebSocket and ends the nursery.
                self._out.close()
                nursery.cancel_scope.deadline = trio.current_time() + FLUSH_S
        finally:
            for topic in self.topics:
                self.lobby.followers.get(topic, set()).discard(self)
            for table_id in self.tables:
                table = self.lobby.tables.get(table_id)
                if table is not None:
                    table.detach(self)
            self.closed = True
            self.log.info("disconnected", reason=self.close_reason or "closed by client")

    async def _writer(self, cancel_scope: trio.CancelScope) -> None:
        with self._sending:
            try:
                async for frame in self._out_recv:
                    batch = [frame]
                    while len(batch) < WRITE_BATCH:
                        try:
                            batch.append(self._out_recv.receive_nowait())
                        except (trio.WouldBlock, trio.EndOfChannel):
                            break
                    await send_frames(self.ws, batch)
                    self._room = max(0, self._room - len(batch))
            except ConnectionClosed:
                pass
        # the queue was closed (too slow, fatal error) or the peer went away
        with trio.move_on_after(1) as cleanup:
            cleanup.shield = True
            await self.ws.aclose(code=1008 if self.close_reason else 1000, reason=self.close_reason[:120])
        cancel_scope.cancel()

    async def _idle_watch(self) -> None:
        """Ping a client that has been silent for ``idle_ping_s``; close it if the pong does not come."""
        limits = self.client
        while not self.closed:
            await trio.sleep_until(self._last_heard + limits.idle_ping_s)
            if trio.current_time() < self._last_heard + limits.idle_ping_s:
                continue  # it spoke meanwhile
            with trio.move_on_after(limits.idle_close_s - limits.idle_ping_s):
                try:
                    await self.ws.ping()
                except ConnectionClosed:
                    return
                self._last_heard = trio.current_time()
                continue
            self.log.info("idle_client_closed")
            self.close("idle: no answer to ping", abort=True)
            return

    async def _reader(self) -> None:
        with trio.move_on_after(self.client.hello_timeout_s) as hello_scope:
            first = await self._receive()
        if hello_scope.cancelled_caught:
            self.close("no hello in time")
            return
        if first is None or not self._hello(first):
            return
        while not self.closed:
            msg = await self._receive()
            if msg is None:
                return
            self._dispatch(msg)

    async def _receive(self) -> dict[str, Any] | None:
        """The next frame decoded, or None when the connection is over. Bad frames are answered here."""
        while not self.closed:
            try:
                frame = await self.ws.get_message()
            except ConnectionClosed:
                self.closed = True
                return None
            now = self._last_heard = trio.current_time()
            if not (self._messages.take(1, now) and self._bytes.take(len(frame), now)):
                self._strikes += 1
                fatal = self._strikes >= self.client.strikes
                self._fail(ProtocolError("rate_limited", "over this connection's message or byte rate; the "
                                         "message was dropped", fatal=fatal), None)
                continue
            self._strikes = 0
            try:
                return decode(frame, self.limits)
            except ProtocolError as err:
                self._fail(err, None)
        return None

    def _fail(self, err: ProtocolError, re: int | None) -> None:
        self.log.info("protocol_error", code=err.code, detail=err.message[:200])
        self.send(messages.error(err, re=re))
        if err.fatal:
            self.close(f"protocol error: {err.code}")

    def _hello(self, raw: dict[str, Any]) -> bool:
        re = messages.request_id(raw)
        try:
            msg = messages.parse_client(raw)
            if msg["type"] != "hello":
                raise ProtocolError("hello_required", "the first message must be hello")
            if msg["version"] != messages.PROTOCOL_VERSION:
                raise ProtocolError("version_unsupported", f"this server speaks version {messages.PROTOCOL_VERSION}")
        except ProtocolError as err:
            self._fail(err, re)
            return False
        self.client_name = msg["client"]
        self.log = self.log.bind(client=msg["client"])
        self.send(messages.welcome(re=re, server_time=self.lobby.clock.now_ms(), limits=self.limits,
                                   games=sorted(GAMES)))
        return True

    def _dispatch(self, raw: dict[str, Any]) -> None:
        re = messages.request_id(raw)
        try:
            msg = messages.parse_client(raw)
            kind = msg["type"]
            if kind == "hello":
                raise ProtocolError("hello_required", "hello is only for the first message", fatal=False)
            if kind == "ping":
                self.send(messages.pong(re=re, server_time=self.lobby.clock.now_ms()))
            elif kind == "tables":
                self.send(messages.reply("tables", re, tables=self.lobby.summaries()[: messages.MAX_LISTED_TABLES]))
            elif kind == "admin":
                self._admin(msg, re)
            elif kind == "bulletin":
                if msg.get("follow"):
                    self.lobby.followers.setdefault(msg["topic"], set()).add(self)
                    self.topics.add(msg["topic"])
                self.send(self.lobby.bulletin(msg["topic"], re))
            elif kind == "create":
                self._may_create(msg)
                table = self.lobby.create(
                    msg["game"], msg["seats"], msg.get("seed"), msg.get("time_scale", 1.0), msg.get("options")
                )
                self.created += 1
                self.log.info("table_created", table=table.id)
                created = messages.reply("created", re, table=table.id)
                if table.journal is None:
                    self.send(created)
                else:  # acknowledged once the table's first record is on disk
                    table.journal.after_durable(lambda: self.send(created))
            else:
                assert kind in TABLE_REQUESTS
                table = self.lobby.get(msg["table"])
                self.tables.add(table.id)
                if kind == "resume":  # the missed events come all at once: not a sign of a slow client
                    self._room = REPLAY_ROOM
                table.submit(Request(kind, self, msg))
        except ProtocolError as err:
            self._fail(err, re)


    def _may_create(self, msg: dict[str, Any]) -> None:
        if self.server.config.admin_token is not None:
            if not self.server.is_admin(msg.get("admin")):
                raise ProtocolError("forbidden", "this server lets only its organiser create tables (admin token)")
        elif self.created >= self.client.tables_per_client:
            raise ProtocolError("rate_limited", f"a connection may create at most {self.client.tables_per_client} tables")

    def _admin(self, msg: dict[str, Any], re: int | None) -> None:
        if not self.server.is_admin(msg["token"]):
            raise ProtocolError("forbidden", "admin requests need the server's admin token")
        action = msg["action"]
        self.log.info("admin_request", action=action, table=msg.get("table"), target=msg.get("conn"))
        if action == "connections":
            listing = [c.summary() for c in self.server.connections.values()]
            self.send(messages.reply("connections", re, connections=listing))
        elif action == "publish":
            if "topic" not in msg or "data" not in msg:
                raise ProtocolError("bad_field", "topic: publish needs a topic and its data")
            self.lobby.publish(msg["topic"], msg["data"])
            self.send(messages.reply("ok", re))
        elif action == "kick":
            target = self.server.connections.get(msg.get("conn", 0))
            if target is None:
                raise ProtocolError("bad_field", "conn: no such connection")
            target.close("kicked by the organiser", abort=True)
            self.send(messages.reply("ok", re))
        else:
            if "table" not in msg:
                raise ProtocolError("bad_field", f"table: {action} needs a table")
            self.lobby.get(msg["table"]).submit(Request(TABLE_ADMIN[action], self, msg))

    def summary(self) -> dict[str, Any]:
        seats = []
        for table_id in sorted(self.tables):
            table = self.lobby.tables.get(table_id)
            seat = table.seat_of(self) if table is not None else None
            if seat is not None:
                seats.append({"table": table_id, "seat": seat.index})
        return {"conn": self.id, "peer": self.peer[:128], "client": self.client_name,
                "tables": sorted(self.tables), "seats": seats}
