"""The lobby: the server's tables by id, creating new ones, and bringing back unfinished ones on start.

Live tables each run a task; a finished table's task ends once its journal is finished, and the lobby keeps
it in a bounded index of finished tables (the most recent ``finished_kept``) that still answer watch, view
and resume with the result. ``max_tables`` counts live tables only.

A table still waiting for players ``waiting_expiry_ms`` after it was created (or recovered), or after its last
join, expires: it ends with reason ``expired`` (``expires`` in ``tables`` says when). One address may have at most
``waiting_per_address`` tables of its creating waiting at once, and ``playing_per_address`` live (waiting or
running): what a busy address makes the server hold is that many tables' memory (``server.core.session``: their events).
Table ids are never given twice: the data directory keeps the highest one handed out
(``DataDir.reserve_table_numbers``).
"""

from __future__ import annotations

import secrets
import weakref
from collections import OrderedDict
from functools import partial
from typing import Any, Callable, Protocol

import trio

from protocol import messages
from protocol.codec import encode
from protocol.errors import ProtocolError
from protocol.values import Map, Message
from server.ops import logs
from server.storage.clock import ServerClock
from server.games import GAMES
from server.runtime.history import HistoryCache
from server.core.match import Match, ReplayMismatch, Subscriber
from server.storage.datadir import DataDir, Recovered
from server.runtime.table import FinishedTable, Table, TableInstrument

FINISHED_KEPT = 1000
WAITING_EXPIRY_MS = 600_000
WAITING_PER_ADDRESS = 8
PLAYING_PER_ADDRESS = 16


def _journal_failed(table: weakref.ref[Table], exc: OSError) -> None:
    live = table()
    if live is not None:
        live.journal_failed(exc)


class Elsewhere(Protocol):
    """The rest of a cluster, as the lobby sees it (server/cluster/): where a table it does not hold is, and
    the other workers' tables."""

    def locate(self, table_id: str) -> str | None: ...  # the URL of the worker holding it, if another does

    def summaries(self) -> list[messages.TableSummary]: ...

    def table_opened(self) -> None: ...  # a table was created or recovered here


class Lobby:
    def __init__(
        self, nursery: trio.Nursery, clock: ServerClock, max_tables: int = 10_000, data: DataDir | None = None,
        finished_kept: int = FINISHED_KEPT, waiting_expiry_ms: int = WAITING_EXPIRY_MS,
        waiting_per_address: int = WAITING_PER_ADDRESS, id_prefix: str = "",
        playing_per_address: int = PLAYING_PER_ADDRESS, instrument: TableInstrument | None = None,
    ) -> None:
        self.nursery = nursery
        self.clock = clock
        self.max_tables = max_tables
        self.data = data
        self.finished_kept = finished_kept
        self.tables: dict[str, Table | FinishedTable] = {}
        self.live: dict[str, Table] = {}
        self.finished: OrderedDict[str, FinishedTable] = OrderedDict()
        self.bulletins: dict[str, tuple[int, Map]] = {}  # topic -> (version, data)
        self.followers: dict[str, set[Subscriber]] = {}  # topic -> connections following it
        self.waiting_expiry_ms = waiting_expiry_ms
        self.waiting_per_address = waiting_per_address
        self._waiting_of: dict[str, set[str]] = {}  # address -> the tables it created that may still be waiting
        self.playing_per_address = playing_per_address
        self._playing_of: dict[str, set[str]] = {}  # address -> the live tables it created
        self._creator: dict[str, str] = {}  # a live table's id -> the address that created it (if counted)
        self.history_cache = HistoryCache()  # for history pages older than the tables' memory
        self._next = data.next_table_number() if data is not None else 1
        self.id_prefix = id_prefix  # a cluster's worker K names its tables wK-t1, wK-t2... (server/cluster/names.py)
        self.elsewhere: Elsewhere | None = None
        self.on_finished: Callable[[Match], object] | None = None  # a table's game is over (server/ratings/tables.py)
        self._expiring = trio.CancelScope()  # the expiry task's wait, until the next table is due to expire
        self.instrument = instrument  # around every table's creation and steps (server.runtime.table.TableInstrument)
        self.log = logs.get()
        nursery.start_soon(self._keep_expiring)

    def create(
        self, game: str, seats: int, seed: int | None = None, time_scale: float = 1.0, options: Any = None,
        address: str | None = None,
    ) -> Table:
        """A new table; ``address``, when given, is its creator's, held to ``waiting_per_address``."""
        cls = GAMES.get(game)
        if cls is None:
            raise ProtocolError("no_such_game", f"this server has no game {game!r}; it has {', '.join(GAMES)}")
        if not cls.MIN_SEATS <= seats <= cls.MAX_SEATS:
            raise ProtocolError("bad_field", f"seats: {game} takes {cls.MIN_SEATS} to {cls.MAX_SEATS} players")
        if len(self.live) >= self.max_tables:
            raise ProtocolError("rate_limited", "the server holds as many tables as it may")
        if address is not None and len(self._still_waiting(address)) >= self.waiting_per_address:
            raise ProtocolError("rate_limited", f"an address may have at most {self.waiting_per_address} tables "
                                "it created waiting for players at once")
        if address is not None and len(self._playing_of.get(address, ())) >= self.playing_per_address:
            raise ProtocolError("rate_limited", f"an address may have at most {self.playing_per_address} tables "
                                "it created playing at once (waiting or running)")
        seeded = seed is not None
        seed = secrets.randbits(63) if seed is None else seed
        try:
            match = Match(f"{self.id_prefix}t{self._next}", game, seats, seed, time_scale, dict(options or {}))
        except ValueError as exc:  # the options are checked before anyone joins
            raise ProtocolError("bad_field", f"options: {exc}") from None
        match.seeded = seeded
        if self.data is not None:
            try:
                self.data.reserve_table_numbers(self._next)
            except OSError as exc:
                raise ProtocolError("internal", "the table could not be created: its id could not be reserved "
                                    f"({exc.strerror or exc})") from None
        self._next += 1
        journal = None
        if self.data is not None:
            journal = self.data.open_journal(match.id)
            journal.append(match.header())
            if self.instrument is not None:
                self.instrument.created(match.id)
        table = Table(match, self.clock, journal, instrument=self.instrument)
        self._open(table)
        if address is not None:
            self._waiting_of.setdefault(address, set()).add(table.id)
            self._playing_of.setdefault(address, set()).add(table.id)
            self._creator[table.id] = address
        return table

    def _still_waiting(self, address: str) -> set[str]:
        """The tables ``address`` created that are still waiting (the others are forgotten here)."""
        ids = self._waiting_of.get(address, set())
        ids.intersection_update(i for i in list(ids) if (t := self.live.get(i)) is not None and t.state == "waiting")
        if not ids:
            self._waiting_of.pop(address, None)
        return ids

    async def _keep_expiring(self) -> None:
        """Ends every table still waiting when it is due to expire (``Table.expires_ms``)."""
        while True:
            now = self.clock.now_ms()
            due = [t for t in self.live.values()
                   if t.expires_ms is not None and t.state == "waiting" and t.stopped is None]
            for table in [t for t in due if t.expires_ms is not None and t.expires_ms <= now]:
                self.log.info("table_expired", table=table.id)
                table.expire()
            later = [t.expires_ms for t in due if t.expires_ms is not None and t.expires_ms > now]
            with trio.CancelScope(deadline=self.clock.to_trio(min(later, default=None))) as self._expiring:
                await trio.sleep_forever()

    def recover(self, recovered: list[Recovered]) -> None:
        """Bring back every unfinished table, each exactly as its journal left it."""
        assert self.data is not None
        for rec in recovered:
            try:
                match = Match.replay(rec.records)
            except ReplayMismatch as exc:
                self.data.set_aside(rec.table_id, str(exc))
                continue
            journal = self.data.open_journal(match.id)
            self.log.info("table_recovered", table=match.id, state=match.state, events=match.seq)
            # one that ended before its file moved just closes
            self._open(Table(match, self.clock, journal, instrument=self.instrument))

    def _open(self, table: Table) -> None:
        table.on_finish = self._finished
        if table.state == "waiting":
            table.expiry_ms = self.waiting_expiry_ms
            table.expires_ms = self.clock.now_ms() + self.waiting_expiry_ms
            if self.clock.to_trio(table.expires_ms) < self._expiring.deadline:
                self._expiring.deadline = self.clock.to_trio(table.expires_ms)
        self.tables[table.id] = table
        self.live[table.id] = table
        if table.journal is not None:  # through a weak reference: a cycle (journal, table) outlives the table by
            # up to 10 minutes once the collector froze it (server/ops/collector.py), and with it every record it holds
            table.journal.on_failure = partial(_journal_failed, weakref.ref(table))
        self.nursery.start_soon(table.run)
        if self.elsewhere is not None:
            self.elsewhere.table_opened()

    def _finished(self, table: Table) -> None:
        """A table's task is over: keep it in the finished index; its journal, once durable, becomes its replay
        file."""
        del self.live[table.id]
        creator = self._creator.pop(table.id, None)
        if creator is not None:  # no longer counted among its creator's live tables
            playing = self._playing_of[creator]
            playing.discard(table.id)
            if not playing:
                del self._playing_of[creator]
        if table.stopped is not None:  # its journal failed: it stays as it is, answering that it is stopped
            return
        if self.on_finished is not None:
            self.on_finished(table.match)
        records = None if self.data is None or table.journal is None else partial(self.data.finished_records, table.id)
        done = FinishedTable(table.session, self.clock, records)
        self.tables[table.id] = done
        self.finished[table.id] = done
        while len(self.finished) > self.finished_kept:
            old, _ = self.finished.popitem(last=False)
            del self.tables[old]
        if table.journal is None or self.data is None:
            return
        table.journal.finish()

    def bulletin(self, topic: str, re: int | None = None) -> Message:
        version, data = self.bulletins.get(topic, (0, None))
        return messages.reply("bulletin", re, topic=topic, version=version, data=data)

    def follow(self, topic: str, conn: Subscriber) -> None:
        self.followers.setdefault(topic, set()).add(conn)

    def unfollow(self, topic: str, conn: Subscriber) -> None:
        """``conn`` no longer follows ``topic``; a topic nobody follows leaves the map (else following ever new
        topics and leaving would grow it without bound)."""
        followers = self.followers.get(topic)
        if followers is not None:
            followers.discard(conn)
            if not followers:
                del self.followers[topic]

    def publish(self, topic: str, data: Map) -> None:
        """Set a bulletin and push it to every connection following its topic."""
        version = self.bulletins.get(topic, (0, None))[0] + 1
        self.bulletins[topic] = (version, data)
        frame = encode(self.bulletin(topic))
        for conn in list(self.followers.get(topic, ())):
            conn.send(frame)

    def get(self, table_id: str) -> Table | FinishedTable:
        table = self.tables.get(table_id)
        if table is None:
            url = None if self.elsewhere is None else self.elsewhere.locate(table_id)
            if url is not None:
                raise ProtocolError("moved", f"table {table_id!r} is held by another worker: {url}", url=url)
            raise ProtocolError("no_such_table", f"no table {table_id!r}")
        return table

    def own_summaries(self) -> list[messages.TableSummary]:
        return [t.summary() for t in self.tables.values()]

    def summaries(self) -> list[messages.TableSummary]:
        """This server's tables, then (on a cluster) the other workers'."""
        own = self.own_summaries()
        return own if self.elsewhere is None else own + self.elsewhere.summaries()
