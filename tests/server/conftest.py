"""Fixtures for the end-to-end server tests: a real server on 127.0.0.1 (port 0) and raw test clients.

* ``server``: a ``Server`` with the default config, started in a nursery and yielded; ``start_server``
  starts one with other ``ServerConfig`` fields (e.g. ``queue_size``).
* ``connect(server)``: a ``RawClient`` over ``trio_websocket.open_websocket_url``. A background task reads
  every frame, checks it is binary, decodes it and appends it to ``client.frames``, so a test can read
  the frames one by one (``next``/``expect``) and still inspect all of them afterwards.
* ``play_seat``: a seat played by a reference player over a ``RawClient``, the way the SDK plays it, so
  the test keeps every frame that seat received.

Game time runs on trio's clock: with the ``autojump_clock`` fixture it costs no wall time, and every wait
here has a game-time limit (``WAIT_S``) so a test that waits for a frame that never comes fails instead of
hanging. Such a test never waits on the kernel: its server and clients talk through the in-memory network
(``tests/memory_net.py``, installed by ``tests/conftest.py``); a test on real time uses real sockets.
"""

from __future__ import annotations

import io
import itertools
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import msgpack
import pytest
import structlog
import trio
from trio_websocket import CloseReason, ConnectionClosed, WebSocketConnection, open_websocket_url

from protocol.codec import encode
from protocol.messages import PROTOCOL_VERSION
from protocol.values import Message
from protocol.views import player_view
from server.ops import logs
from server.runtime.app import Server, ServerConfig
from server.transport.limits import ClientLimits
from server.core.match import Subscriber
from server.core.session import Session

BANK = 7760
SHORT = {"turn_ms": 2000, "quiet_ms": 500, "opening_ms": 3000, "game_ms": 60000}
WAIT_S = 600.0  # game seconds a single wait may take before the test fails


@pytest.fixture
def captured_logs() -> Iterator[io.StringIO]:
    """The server's structlog output as JSON lines, at debug level, for this test only."""
    saved = structlog.get_config()
    out = io.StringIO()
    logs.configure(json_lines=True, level=logging.DEBUG, stream=out)
    yield out
    structlog.configure(**saved)


@pytest.fixture(autouse=True, scope="session")
def _quiet_server_logs() -> None:
    logs.configure(level=logging.WARNING)


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    """A server with the defaults, but no round-trip pings (only idle clients are pinged): on the autojump clock
    such a ping comes exactly when the test's clients close, and trio-websocket 0.12.2 fails a client pinged while it
    closes (python-trio/trio-websocket#184). Tests of the round trip start their own (``start_server``)."""
    async with trio.open_nursery() as nursery:
        config = ServerConfig(host="127.0.0.1", port=0, client=ClientLimits(rtt_ping_s=0))
        srv = await nursery.start(Server(config).run)
        yield srv
        nursery.cancel_scope.cancel()


@pytest.fixture
def start_server(nursery: trio.Nursery) -> Callable[..., Any]:
    """``await start_server(queue_size=4)``: a server with those ``ServerConfig`` fields, stopped after the test."""

    async def start(**config: Any) -> Server:
        return await nursery.start(Server(ServerConfig(host="127.0.0.1", port=0, **config)).run)

    return start


def url(server: Server) -> str:
    return f"ws://127.0.0.1:{server.port}/"


class ClosedWhileSending(ConnectionClosed, AssertionError):
    """The server closed the connection (a kick, a crash) while the test sent on it: caught as a closed connection,
    and as the failed check ``next`` raises for one, whichever a test expects."""


class RawClient:
    """A test client: sends msgpack maps (or raw frames) and records every frame the server sends."""

    def __init__(self, ws: WebSocketConnection, name: str) -> None:
        self.ws = ws
        self.name = name
        self.frames: list[dict[str, Any]] = []  # every frame received, decoded, in order
        self.closed: ConnectionClosed | None = None  # set once the server closed the connection
        self.pos = 0  # frames already consumed by next()/expect()
        self._arrived = trio.Event()
        self._ids = itertools.count(1)

    # -- receiving

    async def pump(self) -> None:
        try:
            while True:
                await self.receive()
        except ConnectionClosed as exc:
            self.closed = exc
            self._wake()

    async def receive(self) -> dict[str, Any]:
        """Read one frame from the socket and record it (the pump does this; a client without one may too)."""
        frame = await self.ws.get_message()
        assert isinstance(frame, bytes), f"{self.name}: the server sent a text frame"
        msg = msgpack.unpackb(frame, raw=False, strict_map_key=True)
        assert isinstance(msg, dict) and isinstance(msg.get("type"), str), msg
        self.frames.append(msg)
        self._wake()
        return msg

    def _wake(self) -> None:
        self._arrived.set()
        self._arrived = trio.Event()

    async def next(self, timeout: float = WAIT_S) -> dict[str, Any]:
        """The next frame not yet consumed."""
        with trio.fail_after(timeout):
            while self.pos >= len(self.frames):
                if self.closed is not None:
                    raise AssertionError(f"{self.name}: connection closed ({self.closed.reason})")
                await self._arrived.wait()
        self.pos += 1
        return self.frames[self.pos - 1]

    async def expect(self, match: Callable[[dict[str, Any]], bool], timeout: float = WAIT_S) -> dict[str, Any]:
        """Consume frames up to and including the first that ``match`` accepts; return it."""
        with trio.fail_after(timeout):
            while True:
                msg = await self.next()
                if match(msg):
                    return msg

    async def event(self, kind: str, timeout: float = WAIT_S, **fields: Any) -> dict[str, Any]:
        """The next `event` frame whose event has that type and those field values (the whole frame)."""
        return await self.expect(
            lambda m: m["type"] == "event"
            and m["event"].get("type") == kind
            and all(m["event"].get(k) == v for k, v in fields.items()),
            timeout,
        )

    async def view(self, match: Callable[[dict[str, Any]], bool] = lambda m: True) -> dict[str, Any]:
        return await self.expect(lambda m: m["type"] == "view" and match(m))

    async def wait_closed(self, timeout: float = WAIT_S) -> CloseReason:
        """How the server closed the connection (``.code``, ``.reason``)."""
        with trio.fail_after(timeout):
            while self.closed is None:
                await self._arrived.wait()
        return self.closed.reason

    # -- sending

    async def send(self, message: dict[str, Any]) -> None:
        """Send a map. A connection the server closed fails here as it does in ``next``, whichever comes first."""
        try:
            await self.ws.send_message(encode(message))
        except ConnectionClosed as exc:
            self.closed = self.closed or exc
            self._wake()
            raise ClosedWhileSending(exc.reason) from exc

    async def send_raw(self, frame: bytes | str) -> None:
        await self.ws.send_message(frame)

    def new_id(self) -> int:
        return next(self._ids)

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Send a request with a fresh id and return its answer (the frame carrying ``re``)."""
        rid = self.new_id()
        await self.send({"type": kind, "id": rid, **fields})
        return await self.answer(rid)

    async def answer(self, rid: int) -> dict[str, Any]:
        return await self.expect(lambda m: m.get("re") == rid)

    async def drop(self) -> None:
        """Close the TCP connection abruptly: no WebSocket close handshake."""
        await self.ws._stream.aclose()

    # -- what was received

    def events(self) -> list[dict[str, Any]]:
        return [m for m in self.frames if m["type"] == "event"]

    def event_types(self) -> list[str | None]:
        return [m["event"].get("type") for m in self.events()]


@asynccontextmanager
async def connect(
    server: Server, name: str = "raw", *, hello: bool = True, pump: bool = True, **ws_options: Any
) -> AsyncIterator[RawClient]:
    """A ``RawClient`` connected to ``server`` (and greeted with ``hello`` unless ``hello=False``).

    With ``pump=False`` nothing reads the connection: the client stalls like one that stopped reading."""
    async with open_websocket_url(url(server), **ws_options) as ws:
        client = RawClient(ws, name)
        async with trio.open_nursery() as nursery:
            if pump:
                nursery.start_soon(client.pump)
            if hello:
                await client.send({"type": "hello", "id": 0, "version": PROTOCOL_VERSION, "client": name})
                welcome = await (client.next() if pump else client.receive())
                assert welcome["type"] == "welcome" and welcome["re"] == 0, welcome
            yield client
            nursery.cancel_scope.cancel()


async def create_table(client: RawClient, seats: int, **fields: Any) -> str:
    reply = await client.request("create", game="parsimonia", seats=seats, **fields)
    assert reply["type"] == "created", reply
    return reply["table"]


async def join(client: RawClient, table: str, **fields: Any) -> dict[str, Any]:
    reply = await client.request("join", table=table, name=fields.pop("name", client.name), **fields)
    assert reply["type"] == "joined", reply
    return reply


async def play_seat(client: RawClient, seat: int, player: Any) -> dict[str, Any]:
    """Play ``seat`` with ``player`` (``act(view, legal)``) on every fresh view until the result; return it.

    Like the SDK: one command in flight at a time, and views older than the events seen are skipped."""
    in_flight: int | None = None
    last_seq = 0
    while True:
        msg = await client.next()
        if msg["type"] == "event":
            last_seq = msg["seq"]
            if msg["event"].get("type") == "result":
                return msg["event"]["result"]
        elif msg["type"] == "view" and msg["seat"] == seat and msg["seq"] >= last_seq and in_flight is None:
            if not msg["legal"]:
                continue
            command = player.act(player_view(static_of(client), msg["view"], msg.get("private"), seat), msg["legal"])
            if command is not None:
                in_flight = client.new_id()
                await client.send({"type": "act", "id": in_flight, "table": msg["table"], "command": command})
        elif msg.get("re") is not None and msg.get("re") == in_flight:
            in_flight = None


def static_of(client: RawClient) -> dict[str, Any]:
    """The game's static part from the last joined / resumed / watching reply the client got."""
    for msg in reversed(client.frames):
        if msg["type"] in ("joined", "resumed", "watching"):
            return msg["static"]
    return {}


def walk(value: Any) -> Iterator[Any]:
    """Every value inside a decoded message, containers included (depth first)."""
    pending = [value]
    while pending:
        item = pending.pop()
        yield item
        if isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)


def step(session: Session, now: int, kind: str | None = None, sub: Subscriber | None = None,
         msg: Message | None = None) -> None:
    """A table's step in process, at once: the deadlines due at ``now``, the request if any, then the views."""
    session.tick(now)
    if kind is not None:
        assert sub is not None and msg is not None
        session.handle(kind, sub, msg, now)
    session.flush_views(now)
