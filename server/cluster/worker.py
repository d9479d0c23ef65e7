"""A server's part in a cluster: its entry in the directory and its relay, on one Redis client.

``Worker`` is the ``ClusterNode`` of ``server.runtime.ports``: the server starts it once its lobby exists, and its
connections call ``create_elsewhere``, ``forward_admin``, ``forward_kick``, ``connections``, ``away`` and ``publish``. A Redis client that fails as a whole
is made again after a pause; nothing of it ever stops the server. Once listening, it tells its supervisor it is
alive (a byte on a pipe every ``ALIVE_MS``, written from the event loop: a frozen or stalled worker falls silent).
"""

from __future__ import annotations

import errno
import os
from typing import TypedDict

import trio
from coredis import Redis

from protocol.errors import ProtocolError
from protocol.messages import ConnectionSummary
from protocol.values import Map, Message
from server.ops import logs
from server.cluster import names
from server.cluster.directory import HEARTBEAT_MS, Directory
from server.cluster.relay import Relay
from server.runtime.ports import ConnectionPort, ServerPort

RECONNECT_MS = 1000
ALIVE_MS = 200  # how often a worker tells its supervisor it is alive


class Worker:
    def __init__(self, worker: int, redis_url: str, own_port: int, public_host: str,
                 heartbeat_ms: int = HEARTBEAT_MS, alive_fd: int | None = None) -> None:
        self.worker = worker
        self.redis_url = redis_url
        self.own_port = own_port
        self.public_host = public_host
        self.heartbeat_ms = heartbeat_ms
        self.alive_fd = alive_fd  # the pipe to the supervisor (None: a worker started by hand)
        self.id_prefix = names.table_prefix(worker)
        self.first_connection_id = names.first_connection_id(worker)
        self.directory: Directory | None = None
        self.relay: Relay | None = None
        self.server: ServerPort | None = None
        self.log = logs.get(worker=worker)

    def prepare(self, server: ServerPort) -> None:
        """Before the server listens: its lobby answers ``unavailable`` for other workers' tables (not
        ``no_such_table``) until the directory is read."""
        assert server.lobby is not None
        self.directory = Directory(self.worker, "", self.heartbeat_ms)
        server.lobby.elsewhere = self.directory

    async def run(self, server: ServerPort, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        assert server.lobby is not None and server.own_port is not None
        if self.directory is None:
            self.prepare(server)
        assert self.directory is not None
        self.server = server
        self.directory.url = f"ws://{self.public_host}:{server.own_port}/"
        self.relay = Relay(self.worker, self.directory, server)
        task_status.started()
        async with trio.open_nursery() as alive:
            if self.alive_fd is not None:
                alive.start_soon(tell_alive, self.alive_fd)
            while True:
                try:
                    async with Redis.from_url(self.redis_url, decode_responses=True) as redis:
                        async with trio.open_nursery() as nursery:
                            nursery.start_soon(self.directory.keep, redis, server)
                            nursery.start_soon(self.relay.listen, redis)
                            nursery.start_soon(self.relay.keep_places, redis, self.heartbeat_ms)
                except* Exception as failed:  # the client failed as a whole (e.g. Redis went away under pub/sub)
                    if trio.current_effective_deadline() != float("-inf"):  # not torn down as the worker stops
                        self.log.warning("redis_client_restarted", error=repr(_leaf(failed))[:300])
                self.relay.redis = None
                await trio.sleep(RECONNECT_MS / 1000)

    def create_elsewhere(self, conn: ConnectionPort, msg: Message, re: int | None) -> bool:
        return self.relay is not None and self.relay.create_elsewhere(conn, msg, re)

    def forward_admin(self, conn: ConnectionPort, msg: Message, re: int | None) -> bool:
        return self.relay is not None and self.relay.forward_admin(conn, msg, re)

    def forward_kick(self, conn: ConnectionPort, msg: Message, re: int | None) -> bool:
        return self.relay is not None and self.relay.forward_kick(conn, msg, re)

    async def connections(self) -> list[ConnectionSummary]:
        if self.relay is None or self.server is None:
            return []
        return await self.relay.connections()

    def away(self) -> list[int]:
        """The workers whose tables a listing of every table lacks (``tables``'s ``away``); ``unavailable`` until
        the directory was read once (the listing would lack every other worker's)."""
        if self.directory is None or not self.directory.read:
            raise ProtocolError("unavailable", "this worker has not yet read the cluster's directory: ask again "
                                "in a moment")
        return self.directory.away()

    def publish(self, topic: str, data: Map) -> None:
        if self.relay is not None:
            self.relay.publish(topic, data)

    def describe(self) -> Cluster:
        """Every live worker as this one's copy of the directory has them (``GET /cluster``)."""
        directory, server = self.directory, self.server
        if directory is None or server is None or server.lobby is None:
            return {"worker": self.worker, "redis_reachable": None, "workers": []}
        me: WorkerRow = {"worker": self.worker, "url": directory.url, "tables": len(server.lobby.live),
              "connections": len(server.connections)}
        others: list[WorkerRow] = [{"worker": p.worker, "url": p.url, "tables": p.tables, "connections": p.connections}
                  for p in directory.peers.values()]
        return {"worker": self.worker, "redis_reachable": directory.reachable,
                "workers": sorted([me, *others], key=lambda w: w["worker"])}


class WorkerRow(TypedDict):
    """A live worker in ``GET /cluster``: where it listens, how many tables and connections it holds."""

    worker: int
    url: str
    tables: int
    connections: int


class Cluster(TypedDict):
    """``GET /cluster``: this worker, whether Redis answered its last beat (None: no beat yet), the live workers."""

    worker: int
    redis_reachable: bool | None
    workers: list[WorkerRow]


async def tell_alive(fd: int, every_ms: int = ALIVE_MS) -> None:
    """A byte on the supervisor's pipe every ``every_ms``, for ever; never blocking (a full pipe: a supervisor
    that reads no more, skipped) and stopping quietly when the supervisor is gone."""
    os.set_blocking(fd, False)
    while True:
        try:
            os.write(fd, b".")
        except BlockingIOError:
            pass
        except OSError as exc:
            if exc.errno != errno.EPIPE:
                logs.get().warning("alive_pipe_failed", error=str(exc)[:200])
            return
        await trio.sleep(every_ms / 1000)


async def stop_with_supervisor(cancel: trio.CancelScope, every_ms: int = 1000) -> None:
    """A worker whose supervisor is gone (killed with -9: its workers are not told) stops too."""
    parent = os.getppid()
    while os.getppid() == parent:
        await trio.sleep(every_ms / 1000)
    logs.get().warning("supervisor_gone", meaning="this worker stops")
    cancel.cancel()


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
