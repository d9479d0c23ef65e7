"""The directory in Redis, and this worker's copy of it.

Every heartbeat a worker renews its entry (address, load, health, its tables), a key that expires after a few beats:
a worker that stops leaves by itself, and one that comes back (or a Redis restarted empty) is registered again on the
next beat. A table opened here wakes the beat at once and tells the others to read again (``names.CHANGES``). The
lobby reads the copy without waiting: where a table held elsewhere is (``locate``: ``unavailable`` while its worker
is away or before the first read), every worker's tables (``summaries``) and where a new table goes
(``least_loaded``: a healthy worker). Redis unreachable is logged once, and once when it is back; the worker's own
tables never wait on it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from collections.abc import Mapping
from typing import Any, Literal

import trio
from coredis import Redis
from coredis.exceptions import RedisError

from protocol.errors import ProtocolError
from protocol.messages import MAX_LISTED_TABLES, TABLE_SUMMARY, TableSummary
from protocol.schema import SchemaError
from protocol.values import Value
from server.ops import logs
from server.cluster import names
from server.games.fields import bool_field, int_field, str_field
from server.runtime.health import of_server
from server.runtime.ports import ServerPort

HEARTBEAT_MS = 500
EXPIRE_BEATS = 4  # a worker missing this many beats is taken for gone
WAKE_MIN_MS = 50  # beats woken by new tables come at most this often
BEAT_TIMEOUT_MS = 2000  # a beat Redis has not answered by then counts as Redis unreachable


@dataclass
class Peer:
    """Another live worker, as its entry said on the last beat."""

    worker: int
    url: str
    tables: int  # live tables
    connections: int
    healthy: bool = True  # False: its log failed; it takes no new tables


class Directory:
    def __init__(self, worker: int, url: str, heartbeat_ms: int = HEARTBEAT_MS) -> None:
        self.worker = worker
        self.url = url
        self.heartbeat_ms = heartbeat_ms
        self.peers: dict[int, Peer] = {}  # the other live workers, as of the last beat
        self.members: set[int] = set()  # every registered worker, as of the last beat (those not in peers: away)
        self.read = False  # the directory was read once: until then a table of another worker is unavailable
        self.addresses: dict[int, str] = {}  # every other worker's last known address (a dead one comes back there)
        self._their_tables: list[TableSummary] = []
        self.reachable: bool | None = None  # Redis answered the last beat (None: no beat yet)
        self._wake = trio.Event()  # set: beat now, not at the next beat's time
        self._announce = True  # after the (first) beat, tell the others to read the entries now: this one is back
        self.log = logs.get(worker=worker)

    # -- read by the lobby and the relay, never waiting

    def locate(self, table_id: str) -> str | None:
        """The address of the worker holding ``table_id``, if another live worker does; None if no worker does.
        ``ProtocolError("unavailable")`` (retryable) while the directory is unread or its worker is away."""
        worker = names.worker_of(table_id)
        if worker is None or worker == self.worker:
            return None
        if not self.read:
            raise ProtocolError("unavailable", "this worker has not yet read the cluster's directory: send the "
                                "request again in a moment")
        peer = self.peers.get(worker)
        if peer is not None:
            return peer.url
        if worker in self.members:
            raise ProtocolError("unavailable", f"worker {worker}, which holds {table_id}, is away (restarting or "
                                "not answering): send the request again in a moment")
        return None

    def away(self) -> list[int]:
        """The registered workers whose entries are gone (restarting, frozen, cut off): their tables are not in
        ``summaries``."""
        return sorted(self.members - set(self.peers) - {self.worker})

    def summaries(self) -> list[TableSummary]:
        return self._their_tables

    def least_loaded(self, own_tables: int, healthy_here: bool = True) -> int | None:
        """The healthy live worker a new table should go to (fewest live tables), or None for this one, which
        wins a tie (and is the last resort when no other is healthy, sick or not). The chosen worker's count goes
        up at once: tables created faster than the beat spread too."""
        best = min((p for p in self.peers.values() if p.healthy), key=lambda p: (p.tables, p.worker), default=None)
        if best is None or (healthy_here and best.tables >= own_tables):
            return None
        best.tables += 1
        return best.worker

    def table_opened(self) -> None:
        """A table was created here (the lobby says so): it is in the directory at once, not a beat later."""
        self._announce = True
        self._wake.set()

    def refresh(self) -> None:
        """Another worker opened a table: read the entries now."""
        self._wake.set()

    # -- the heartbeat

    async def keep(self, redis: Redis, server: ServerPort) -> None:
        """Renew this worker's entry and read the others', every beat (or sooner when woken, at most every
        ``WAKE_MIN_MS``), for ever."""
        while True:
            announce, self._announce = self._announce, False
            try:
                with trio.fail_after(max(2 * self.heartbeat_ms, BEAT_TIMEOUT_MS) / 1000):  # a Redis that hangs
                    await self.beat(redis, server)
                    if announce:
                        await redis.publish(names.CHANGES, str(self.worker))
            except (RedisError, OSError, trio.TooSlowError) as exc:
                if self.reachable is not False:
                    self.log.warning("redis_unreachable", error=str(exc)[:200] or type(exc).__name__,
                                     meaning="this worker keeps playing its tables; the cluster does not see them")
                self.reachable = False
            else:
                if self.reachable is False:
                    self.log.info("redis_reachable", meaning="this worker is registered again")
                self.reachable = True
            await trio.sleep(WAKE_MIN_MS / 1000)
            with trio.move_on_after((self.heartbeat_ms - WAKE_MIN_MS) / 1000):
                await self._wake.wait()
            self._wake = trio.Event()

    async def beat(self, redis: Redis, server: ServerPort) -> None:
        """Three calls: this worker's entry (its tables in it) written, the set of workers read (this one added
        if it is missing: a new worker, or a Redis restarted empty), the others' entries read."""
        lobby = server.lobby
        assert lobby is not None
        listing = [t.summary() for t in list(lobby.tables.values())[:MAX_LISTED_TABLES]]
        entry = {"worker": self.worker, "url": self.url, "pid": os.getpid(), "tables": len(lobby.live),
                 "connections": len(server.connections), "healthy": sick(server) is None, "listing": listing}
        await redis.set(names.entry_key(self.worker), json.dumps(entry), px=self.heartbeat_ms * EXPIRE_BEATS)
        members = {int(m) for m in await redis.smembers(names.WORKERS) if m.isdigit()}
        if self.worker not in members:
            await redis.sadd(names.WORKERS, [str(self.worker)])
        others = sorted(members - {self.worker})
        if not others:
            self.peers, self._their_tables, self.members, self.read = {}, [], members | {self.worker}, True
            return
        peers: dict[int, Peer] = {}
        tables: list[TableSummary] = []
        for worker, raw in zip(others, await redis.mget([names.entry_key(k) for k in others])):
            entry = _json(raw)
            peer = _peer(worker, entry)
            if peer is None:
                continue  # gone (its entry expired), or an entry this version cannot read
            peers[worker] = peer
            self.addresses[worker] = peer.url
            tables.extend(_listing(worker, entry.get("listing")))
        self.peers, self._their_tables, self.members, self.read = peers, tables, members | {self.worker}, True


def sick(server: ServerPort) -> str | None:
    """Why this worker should take no new tables (``server.runtime.health``: its log failed, its disk is full or its loop
    stalled), or None."""
    health = of_server(server)
    return None if health.ok else "; ".join(health.reasons)


def _json(raw: Any) -> Any:
    if not isinstance(raw, str):
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _peer(worker: int, entry: Any) -> Peer | None:
    """A worker's entry, every field checked (a foreign or damaged key is passed over, never trusted)."""
    if not isinstance(entry, dict):
        return None
    url, tables, connections = entry.get("url"), entry.get("tables"), entry.get("connections")
    if not (isinstance(url, str) and url.startswith("ws://") and len(url) <= 256):
        return None
    if not (isinstance(tables, int) and isinstance(connections, int) and tables >= 0 and connections >= 0):
        return None
    return Peer(worker, url, tables, connections, entry.get("healthy") is not False)


def _listing(worker: int, listing: Any) -> list[TableSummary]:
    """A worker's table summaries that fit the protocol and are that worker's."""
    if not isinstance(listing, list):
        return []
    out: list[TableSummary] = []
    for item in listing[:MAX_LISTED_TABLES]:
        try:
            summary = TABLE_SUMMARY.check(item)
        except SchemaError:
            continue
        row = _summary(summary)
        if names.worker_of(row["table"]) == worker:
            out.append(row)
    return out


_STATES: dict[str, Literal["waiting", "running", "over"]] = {"waiting": "waiting", "running": "running", "over": "over"}


def _summary(row: Mapping[str, Value]) -> TableSummary:
    """A row that ``TABLE_SUMMARY`` checked, read as the fields its specs give."""
    summary: TableSummary = {
        "table": str_field(row, "table"), "game": str_field(row, "game"), "seats": int_field(row, "seats"),
        "taken": int_field(row, "taken"), "state": _STATES[str_field(row, "state")],
        "spectators": int_field(row, "spectators"), "paused": bool_field(row, "paused", False),
    }
    if row.get("seeded") is True:  # a worker says it only when true
        summary["seeded"] = True
    if "expires" in row:
        summary["expires"] = int_field(row, "expires")
    return summary
