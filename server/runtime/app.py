"""The server: one port for WebSocket and HTTP, the lobby, and one task per table, all in one trio nursery."""

from __future__ import annotations

import hmac
import itertools
import socket
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TypeVar

import h11
import trio

from protocol.codec import Limits
from server.ops import logs
from server.ops import metrics
from server.storage.clock import ServerClock, keep_heartbeat
from server.ops.collector import keep_collector
from server.runtime.connection import Connection, time_round_trips
from server.runtime.health import STALL_S, LoopWatch
from server.storage.journal import LogInstrument
from server.transport.limits import AddressBuckets, ClientLimits, Refusals
from server.runtime.lobby import Lobby
from server.ops.memory import Trimmer, keep_memory_given_back
from server.runtime.ports import ClusterNode
from server.ratings.tables import Rater, open_rater
from server.runtime.replay_steps import Replays
from server.runtime.static import DEFAULT_ROOT
from server.storage.datadir import DataDir
from server.runtime.table import TableInstrument
from server.transport.http import RECEIVE_BYTES, HttpConnection, Response, text, wants_websocket, websocket_refusal
from server.transport.listen import serve_tcp
from server.transport.coalesce import Coalescer
from server.transport.websocket import open_websocket
from server.runtime.turns import Turns
from server.runtime.web import Web

T = TypeVar("T")

TOO_MANY_HTTP = "too many HTTP connections from this address"
FLOODED = "this address flooded the server; wait and connect again"
TOO_MANY_REQUESTS = "too many HTTP requests from this address; wait"
TOO_MANY_HANDSHAKES = "too many WebSocket handshakes from this address; wait"
RETRY = [("retry-after", "1")]  # a budget refused: it refills within the second
TOO_MANY_WEBSOCKETS = "too many connections from this address"
# each 429's reason as /metrics counts it (parsimonia_http_refusals)
_REASONS = {TOO_MANY_HTTP: "http_connections", FLOODED: "struck_out", TOO_MANY_REQUESTS: "http_requests",
            TOO_MANY_HANDSHAKES: "handshakes", TOO_MANY_WEBSOCKETS: "websockets"}


def _unread_refusal(why: str, retry: bool) -> bytes:
    """The 429 written at once to a connection refused as it is accepted, before anything of it is read."""
    body = f"{why}\n".encode()
    return (b"HTTP/1.1 429 Too Many Requests\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: %d\r\n"
            b"%sconnection: close\r\n\r\n%s" % (len(body), b"retry-after: 1\r\n" if retry else b"", body))


_UNREAD_REFUSALS = {TOO_MANY_HTTP: _unread_refusal(TOO_MANY_HTTP, False), FLOODED: _unread_refusal(FLOODED, False),
                    TOO_MANY_REQUESTS: _unread_refusal(TOO_MANY_REQUESTS, True),
                    TOO_MANY_HANDSHAKES: _unread_refusal(TOO_MANY_HANDSHAKES, True)}


@dataclass(frozen=True)
class Instruments:
    """The seams an instrument may watch and act through, each None in service. ``parsimonia serve`` and
    ``tournament`` give them the fault campaign's when ``PARSIMONIA_FAULT`` is set (docs/reliability.md)."""

    tables: TableInstrument | None = None  # around every table's creation and steps (server/runtime/table.py)
    log: LogInstrument | None = None  # around each round's write to the log (server/storage/journal.py)
    between_rounds: Callable[[], None] | None = None  # a tournament's director between two rounds


@dataclass
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 8765
    limits: Limits = field(default_factory=Limits)
    queue_size: int = 256  # frames queued for one client before it counts as too slow
    queue_bytes: int = 1 << 20  # and their bytes
    client: ClientLimits = field(default_factory=ClientLimits)
    max_tables: int = 10_000  # live tables (finished ones leave memory, but for a bounded index)
    finished_kept: int = 1000  # finished tables that still answer watch, view and resume with their result
    waiting_expiry_ms: int = 600_000  # a table still waiting for players this long after its creation or last join
    admin_token: str | None = field(default=None, repr=False)  # never logged
    data_dir: str | None = None  # None: tables live in memory only
    sync: str = "fsync"  # journal durability: fsync or write (see server/storage/journal.py)
    web_root: str = DEFAULT_ROOT  # static files for GET / (a placeholder page while it does not exist)
    cluster: ClusterNode | None = field(default=None, repr=False)  # None: a server on its own, as before
    ratings_file: str | None = None  # answers `ratings` and rates casual tables (default DATA/ratings.sqlite)
    loop_stall_s: float = STALL_S  # the loop woken later than this is stalled: /healthz says 503 (server/runtime/health.py)
    instruments: Instruments = field(default_factory=Instruments, repr=False)  # none in service


class Server:
    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.lobby: Lobby | None = None
        self.port: int | None = None
        self.own_port: int | None = None  # a cluster worker's own port
        self.cluster: ClusterNode | None = None  # on a cluster, once it runs
        self.connections: dict[int, Connection] = {}
        self.connection_ids = itertools.count(1 if config.cluster is None else config.cluster.first_connection_id)
        self._per_ip: Counter[str] = Counter()  # WebSockets, counted from the handshake's start
        self._http_per_ip: Counter[str] = Counter()  # TCP connections not (yet) WebSockets
        self._unasked: Counter[str] = Counter()  # of those, the ones admitted that have not yet made a request
        self._handshakes = AddressBuckets(config.client.handshakes_per_s, config.client.burst_s)
        self._http_requests = AddressBuckets(config.client.http_requests_per_s, config.client.burst_s)
        # shared by each address's connections (server/runtime/connection.py)
        self.address_messages = AddressBuckets(config.client.address_messages_per_s, config.client.burst_s)
        self.address_bytes = AddressBuckets(config.client.address_bytes_per_s, config.client.burst_s)
        self.turns = Turns()  # each address's turn at reading (server/runtime/turns.py)
        self._refusals = Refusals()  # which refusals are logged
        self._struck_out: dict[str, float] = {}  # address -> when it may open a WebSocket again (trio time)
        self.web = Web(self, config.web_root)
        self._websockets = 0  # from the start of their handshakes to the end of their close
        self._memory = Trimmer()  # given back once a crowd of connections has gone (server/ops/memory.py)
        self.started = 0.0
        self.rater: Rater | None = None
        self.loop_watch = LoopWatch(stall_s=config.loop_stall_s)  # how late the loop wakes (server/runtime/health.py)
        self.replays = Replays()  # finished games folded for the `replay` request (server/runtime/replay_steps.py)
        self.coalescer = Coalescer()  # held while the journal releases a round: a client's frames in one write
        self.log = logs.get()

    def is_admin(self, token: str | None) -> bool:
        admin = self.config.admin_token
        return admin is not None and token is not None and hmac.compare_digest(admin.encode(), token.encode())

    async def run(self, *, task_status: trio.TaskStatus[Server] = trio.TASK_STATUS_IGNORED) -> None:
        cfg = self.config
        # before anything else: a directory another server holds raises DataDirBusy, and stays untouched
        data = None if cfg.data_dir is None else DataDir(cfg.data_dir, cfg.sync, cfg.instruments.log,
                                                         releasing=self.coalescer)
        self.rater = open_rater(cfg.ratings_file, cfg.data_dir)  # casual rated tables, `ratings` (rated_tables.py)
        prefix = "" if cfg.cluster is None else cfg.cluster.id_prefix
        try:
            async with trio.open_nursery() as nursery:
                if data is None:
                    lobby = self.lobby = self._open_lobby(nursery, ServerClock(), None, prefix)
                else:
                    recovered = data.recover()
                    clock = ServerClock(data.start_ms(recovered))
                    lobby = self.lobby = self._open_lobby(nursery, clock, data, prefix)
                    lobby.recover(recovered)
                    nursery.start_soon(keep_heartbeat, clock, data.clock_path)
                    nursery.start_soon(data.syncer.run)
                nursery.start_soon(keep_collector)  # see server/ops/collector.py
                nursery.start_soon(self.loop_watch.run)
                nursery.start_soon(keep_memory_given_back, self._memory,  # see server/ops/memory.py
                                   lambda: len(lobby.live))
                nursery.start_soon(time_round_trips, self.connections, cfg.client.rtt_ping_s)
                self.started = trio.current_time()
                if cfg.cluster is None:
                    self.port = await nursery.start(partial(serve_tcp, admit=self._admit), self._handle, cfg.host,
                                                    cfg.port)
                else:  # the cluster's shared port (each worker takes some of its connections), and its own
                    self.cluster = cfg.cluster
                    cfg.cluster.prepare(self)  # before listening: other workers' tables unavailable until it runs
                    self.port = await nursery.start(partial(serve_tcp, reuse_port=True, admit=self._admit),
                                                    self._handle, cfg.host, cfg.port)
                    self.own_port = await nursery.start(partial(serve_tcp, admit=self._admit), self._handle, cfg.host,
                                                        cfg.cluster.own_port)
                    await nursery.start(cfg.cluster.run, self)
                self.log.info("listening", host=cfg.host, port=self.port, own_port=self.own_port)
                task_status.started(self)
        finally:
            if self.rater is not None:
                self.rater.close()
            if data is not None:
                data.close()

    def _open_lobby(self, nursery: trio.Nursery, clock: ServerClock, data: DataDir | None, prefix: str) -> Lobby:
        cfg = self.config
        lobby = Lobby(nursery, clock, cfg.max_tables, data, finished_kept=cfg.finished_kept,
                      waiting_expiry_ms=cfg.waiting_expiry_ms, waiting_per_address=cfg.client.waiting_tables_per_ip,
                      id_prefix=prefix, playing_per_address=cfg.client.playing_tables_per_ip,
                      instrument=cfg.instruments.tables)
        lobby.on_finished = None if self.rater is None else self.rater.finished
        return lobby

    def _admit(self, sock: socket.socket, ip: str) -> bool:
        """Whether to serve a connection of ``ip`` just accepted (``server.transport.listen``). Refused there, with
        a 429 written unread and no task started, so that a refusal costs almost nothing: when the address holds
        ``http_connections_per_ip`` connections that are not WebSockets, was struck out for flooding, or has no
        HTTP request or handshake budget left (what it would ask cannot be granted now; its budget refills within
        a twentieth of a second). An address that made plain HTTP requests lately (its request budget is not
        full) is admitted only as many connections not yet asking as it has requests left: the rest of a crowd
        that reconnects together would be parsed only to be refused. Admitted, it is counted at once: a batch
        accepted together is counted before any of them is served."""
        limits, now = self.config.client, trio.current_time()
        requests_left = self._http_requests.left(ip, now)
        if self._http_per_ip[ip] >= limits.http_connections_per_ip:
            why = TOO_MANY_HTTP
        elif self._struck_out.get(ip, 0.0) > now:
            why = FLOODED
        elif requests_left is not None and requests_left < self._unasked[ip] + 1:
            why = TOO_MANY_REQUESTS
        elif not self._handshakes.has(ip, now):
            why = TOO_MANY_HANDSHAKES
        else:
            self._http_per_ip[ip] += 1
            self._unasked[ip] += 1
            self.turns.debit(ip)  # its handshake, or its requests' sending, and its close: outside the turns
            return True
        self._refused(ip, why)
        try:
            sock.send(_UNREAD_REFUSALS[why], socket.MSG_DONTWAIT)  # a new socket's buffer takes it, or it is lost
            # what came already (its request): else closing resets the connection, and the client may lose the 429
            metrics.traffic.bytes_read += len(sock.recv(RECEIVE_BYTES, socket.MSG_DONTWAIT))
        except OSError:
            pass
        return False

    async def _handle(self, stream: trio.SocketStream, sock: socket.socket, ip: str, peer: str) -> None:
        """One TCP connection, admitted (``_admit``, which counted it): HTTP requests (kept alive), or a WebSocket
        from its handshake to its close. Whatever goes wrong with it stays with it: a client that vanishes
        mid-handshake, or a bug in handling it, is logged and never stops the server."""
        upgraded, unasked = False, True
        try:
            http = HttpConnection(stream, gate=partial(self._in_turn, ip))
            while (request := await http.next_request()) is not None:
                if unasked:
                    unasked = False
                    _release(self._unasked, ip)
                if wants_websocket(request):
                    refusal = websocket_refusal(request)
                    if refusal is None:
                        upgraded = True
                        _release(self._http_per_ip, ip)
                        await self._websocket(http, request, sock, ip, peer)
                        return
                    await http.respond(request, refusal, close=True)
                    return
                if not self._http_requests.take(ip, 1, trio.current_time()):
                    self._refused(ip, TOO_MANY_REQUESTS)
                    await http.respond(request, Response(429, f"{TOO_MANY_REQUESTS}\n".encode(), headers=RETRY),
                                       close=True)
                    return
                self.turns.debit(ip)
                if not await http.respond(request, await self.web.respond(request, http.gate)):
                    return
        except OSError as exc:
            self.log.info("connection_lost_early", error=repr(exc)[:200])
        except Exception:
            self.log.exception("connection_failed")
        finally:
            if unasked:
                _release(self._unasked, ip)
            if not upgraded:
                _release(self._http_per_ip, ip)
            await trio.aclose_forcefully(stream)

    async def _in_turn(self, ip: str, work: Callable[[], T]) -> T:
        """``work()`` in a turn of ``ip`` (``server.runtime.turns``): an HTTP request's parsing and answer, as a
        WebSocket's messages are handled, so one address's requests share its time with the others'."""
        if self.turns.alone(ip):
            return work()
        return await self.turns.turn(ip, work)

    def _refused(self, ip: str, why: str) -> None:
        """A connection of ``ip`` refused (429): counted in /metrics by reason, logged once per address and reason,
        then once a ``quiet_s`` with the count of those refused since (``server.transport.limits.Refusals``)."""
        metrics.count_http_refusal(429, _REASONS.get(why, "other"))
        since = self._refusals.log(ip, why, trio.current_time())
        if since is not None:
            self.log.warning("connection_refused", peer=ip, why=why, refused_unlogged=since)

    def _strike_out(self, ip: str) -> None:
        """``ip``'s connection was closed for flooding: it waits ``strikeout_s`` before the next. The
        expired entries go first, so the map holds only the addresses of the last ``strikeout_s``."""
        now = trio.current_time()
        for address in [a for a, until in self._struck_out.items() if until <= now]:
            del self._struck_out[address]
        self._struck_out[ip] = now + self.config.client.strikeout_s

    async def _websocket(self, http: HttpConnection, request: h11.Request, sock: socket.socket, ip: str,
                         peer: str) -> None:
        if self._per_ip[ip] >= self.config.client.connections_per_ip:
            self._refused(ip, TOO_MANY_WEBSOCKETS)
            await http.respond(request, text(429, f"{TOO_MANY_WEBSOCKETS}\n"), close=True)
            return
        if self._struck_out.get(ip, 0.0) > trio.current_time():  # struck out while this one was under way
            self._refused(ip, FLOODED)
            await http.respond(request, text(429, f"{FLOODED}\n"), close=True)
            return
        if not self._handshakes.take(ip, 1, trio.current_time()):
            self._refused(ip, TOO_MANY_HANDSHAKES)
            await http.respond(request, Response(429, f"{TOO_MANY_HANDSHAKES}\n".encode(), headers=RETRY), close=True)
            return
        self._per_ip[ip] += 1  # before the handshake's await: see _admit
        self._websockets += 1
        self._memory.count(self._websockets)
        try:
            received = await http.switch_to_websocket(request)
            cfg = self.config
            max_message = cfg.limits.max_frame_bytes  # refused from the frame header: 1009 (SPEC.md)
            async with open_websocket(http.stream, sock, received, max_message=max_message,
                                      queue_size=cfg.queue_size, queue_bytes=cfg.queue_bytes,
                                      coalescer=self.coalescer) as ws:
                conn = Connection(ws, self, peer)
                self.connections[conn.id] = conn
                try:
                    await conn.serve()
                finally:
                    if conn.struck_out:
                        self._strike_out(ip)
                    del self.connections[conn.id]
        finally:
            _release(self._per_ip, ip)
            self._websockets -= 1  # its close handshake over: what it held is free
            self._memory.count(self._websockets)


def _release(counts: Counter[str], ip: str) -> None:
    """One connection of ``ip`` fewer; an address with none leaves the map."""
    counts[ip] -= 1
    if not counts[ip]:
        del counts[ip]
