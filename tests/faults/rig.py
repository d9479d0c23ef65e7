"""The server's request path in process, for fuzzing at volume: real ``Connection``s (reading, decoding,
checking, dispatching), a real ``Lobby`` and real ``Table`` tasks, on sockets made of lists.

Time stands still (trio's ``MockClock`` at rate 0) except when the rig moves it to the tables' next
deadline, so nothing changes between two looks at the state but what the frame in between did.
``settle`` waits until every task is blocked again: the frame has been read, decoded, dispatched and
handled by its table, and every frame it caused is in the sockets' lists.

What the rig compares before and after a frame (``state``): every table's state, sequence number, history,
seats and their tokens, its count of actions, the journal records it took (counted on
``take_records``), and the lobby's bulletins; and apart (``subscriptions``), who is subscribed to what,
which a connection closed on a fatal error changes by going away. A command the rules refuse is counted
(``refusals``: the result reports how many), by one, and changes nothing else.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgpack
import trio
import trio.testing

from protocol.codec import encode
from protocol.messages import PROTOCOL_VERSION, check_server
from protocol.views import player_view
from server.runtime.app import Server, ServerConfig
from server.storage.clock import ServerClock
from server.runtime.connection import Connection
from server.transport.limits import ClientLimits
from server.runtime.lobby import Lobby
from server.runtime.table import Table
from server.transport.burst import Burst
from server.transport.roundtrip import RoundTrip

# rates no fuzzer reaches, and time limits the still clock never passes: the fuzz is not rate limited away
UNLIMITED = ClientLimits(messages_per_s=1e12, bytes_per_s=1e15, address_messages_per_s=1e12,
                         address_bytes_per_s=1e15, hello_timeout_s=1e9, idle_ping_s=1e10,
                         idle_close_s=2e10, tables_per_client=4)


def payload(wire: bytes) -> bytes:
    """The payload of one server WebSocket frame (``server.transport.frames``: unmasked, no extension)."""
    n = wire[1] & 0x7F
    return wire[2:] if n < 126 else wire[4:] if n == 126 else wire[10:]


class ListSocket:
    """What a ``Connection`` uses of ``server.transport.websocket.WebSocket``: frames in from a channel,
    frames out into ``sent`` (decoded and checked against the protocol's catalogue)."""

    def __init__(self, check: bool = True) -> None:
        self.check = check
        self._in, self._out = trio.open_memory_channel[bytes | str](float("inf"))
        self.sent: list[dict[str, Any]] = []
        self.queued = 0
        self.last_heard = trio.current_time()
        self.rtt = RoundTrip()  # no pings go over a channel: no round trip is ever timed
        self.burst = Burst()  # nor is anything ever queued here
        self.close_code: int | None = None
        self.close_reason = ""
        self._ready: list[bytes | str] = []  # frames wait_input took, for receive_nowait
        self._done = False  # the channel is over

    def push(self, frame: bytes | str) -> None:
        self._in.send_nowait(frame)

    async def receive(self) -> bytes | str | None:
        try:
            frame = await self._out.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            return None
        self.last_heard = trio.current_time()
        return frame

    async def wait_input(self) -> None:
        """Until a frame has come (``receive_nowait`` then takes it) or the channel is over (``over``)."""
        if self._ready or self._done:
            return
        frame = await self.receive()
        if frame is None:
            self._done = True
        else:
            self._ready.append(frame)

    def receive_nowait(self) -> bytes | str | None:
        if self._ready:
            return self._ready.pop(0)
        try:
            frame = self._out.receive_nowait()
        except trio.WouldBlock:
            return None
        except (trio.EndOfChannel, trio.ClosedResourceError):
            self._done = True
            return None
        self.last_heard = trio.current_time()
        return frame

    @property
    def over(self) -> bool:
        return self._done and not self._ready

    def send(self, wire: bytes) -> bool:
        msg = msgpack.unpackb(payload(wire), raw=False, strict_map_key=True)
        self.sent.append(check_server(msg) if self.check else msg)
        return True

    def close(self, code: int, reason: str = "", *, unheard: bool = False) -> None:
        if self.close_code is None:
            self.close_code, self.close_reason = code, reason
        self._in.close()

    def drop_queue(self) -> None:
        pass

    def ping(self) -> None:
        pass


class Rig:
    def __init__(self, nursery: trio.Nursery, admin: str) -> None:
        self.server = Server(ServerConfig(port=0, client=UNLIMITED, admin_token=admin, max_tables=48,
                                          finished_kept=24))
        self.server.lobby = Lobby(nursery, ServerClock(), self.server.config.max_tables, finished_kept=24)
        self.lobby = self.server.lobby
        self.nursery = nursery
        self.records: dict[str, int] = {}  # journal records each table took

    # ------------------------------------------------------------------ connections

    def open(self, check: bool = True) -> tuple[Connection, ListSocket]:
        """A connection; with ``check``, every frame it gets is held to the protocol's catalogue."""
        sock = ListSocket(check)
        conn = Connection(sock, self.server, "127.0.0.1:1")  # type: ignore[arg-type]
        self.server.connections[conn.id] = conn
        self.nursery.start_soon(self._serve, conn)
        return conn, sock

    async def _serve(self, conn: Connection) -> None:
        try:
            await conn.serve()
        finally:
            del self.server.connections[conn.id]

    async def greeted(self, name: str, check: bool = True) -> tuple[Connection, ListSocket]:
        conn, sock = self.open(check)
        sock.push(encode({"type": "hello", "id": 0, "version": PROTOCOL_VERSION, "client": name}))
        await settle()
        assert sock.sent[-1]["type"] == "welcome", sock.sent
        return conn, sock

    # ------------------------------------------------------------------ tables and time

    def create(self, game: str, seats: int, seed: int) -> Table:
        return self.lobby.create(game, seats, seed)

    def next_deadline(self) -> float | None:
        """The trio time of the earliest deadline of a live table, if any."""
        due = [t.clock.to_trio(d) for t in self.lobby.live.values() if (d := t.match.next_deadline()) is not None]
        return min(due, default=None)

    # ------------------------------------------------------------------ what a frame may change

    def _counted(self, table_id: str, take: Callable[[], list[dict[str, Any]]]) -> Callable[[], list[dict[str, Any]]]:
        def take_records() -> list[dict[str, Any]]:
            records = take()
            self.records[table_id] = self.records.get(table_id, 0) + len(records)
            return records
        return take_records

    def state(self, digest_of: str | None = None) -> tuple[Any, ...]:
        """The lobby and every table as the game sees them; with ``digest_of``, that table's engine digest."""
        tables = []
        for tid, table in self.lobby.tables.items():
            m = table.match
            if "take_records" not in vars(m):  # the match's own, counted as the table takes them
                m.take_records = self._counted(tid, m.take_records)  # type: ignore[method-assign]
            tables.append((tid, m.state, m.seq, len(m.history), m.paused_at, m.actions,
                           self.records.get(tid, 0), tuple((s.index, s.name, s.token) for s in m.seats)))
        digest = None
        if digest_of is not None and (t := self.lobby.tables.get(digest_of)) is not None and t.match.engine:
            digest = t.match.engine.digest()
        bulletins = tuple(sorted((topic, version) for topic, (version, _) in self.lobby.bulletins.items()))
        return tuple(tables), bulletins, len(self.lobby.live), digest

    def refusals(self) -> int:
        """Commands the rules refused, over every table: each refusal counts (the result reports it), and
        that count is the one thing a refused command changes."""
        return sum(t.match.rejected for t in self.lobby.tables.values())

    def subscriptions(self) -> tuple[Any, ...]:
        lobby = self.lobby
        tables = tuple((tid, tuple((id(s.sub), s.views) for s in t.match.seats),
                        tuple((id(sub), views) for sub, views in t.session.spectators.items()))
                       for tid, t in lobby.tables.items())
        followers = tuple(sorted((topic, len(subs)) for topic, subs in lobby.followers.items()))
        return tables, followers


async def settle() -> None:
    await trio.testing.wait_all_tasks_blocked()


class Bot:
    """A reference player on one seat, over a ``ListSocket``: like the SDK, one command in flight at a
    time, and views older than the events seen are skipped."""

    def __init__(self, conn: Connection, sock: ListSocket, table: str, seat: int, token: str, player: Any) -> None:
        self.conn, self.sock, self.table, self.seat, self.token = conn, sock, table, seat, token
        self.player = player
        self.pos = 0
        self.in_flight: int | None = None
        self.last_seq = 0
        self.static: dict[str, Any] = {}
        self.view: dict[str, Any] | None = None
        self.ids = 1000
        self.commands = 0
        self.errors: list[dict[str, Any]] = []

    def read(self) -> None:
        for msg in self.sock.sent[self.pos:]:
            kind = msg["type"]
            if kind == "event" and msg["table"] == self.table:
                self.last_seq = msg["seq"]
            elif kind in ("joined", "resumed"):
                self.static = msg["static"]
            elif kind == "view" and msg["seat"] == self.seat and msg["table"] == self.table:
                self.view = msg
            elif kind == "error":
                self.errors.append(msg)
            if msg.get("re") is not None and msg.get("re") == self.in_flight:
                self.in_flight = None
        self.pos = len(self.sock.sent)

    def act(self) -> bool:
        """Send a command if one is due; whether one was sent."""
        self.read()
        view, self.view = self.view, None
        if view is None or self.in_flight is not None or view["seq"] < self.last_seq or not view["legal"]:
            return False
        command = self.player.act(player_view(self.static, view["view"], view.get("private"), self.seat),
                                  view["legal"])
        if command is None:
            return False
        self.ids += 1
        self.in_flight = self.ids
        self.commands += 1
        self.sock.push(encode({"type": "act", "id": self.ids, "table": self.table, "command": command}))
        return True
