"""The write-ahead log: every table's records in one file per server, made durable together each round.

Records are ``server.storage.journal_format``'s (re-exported here); the log's format, the durability policies and the
rounds' spacing are in docs/architecture.md, "The journal".

A ``Journal`` is one table's handle: ``after_durable(callback, on_failure)`` runs ``callback`` once every record
appended so far is durable, in order; the table holds back every acknowledgement and event until then. One
``Syncer`` owns the log: ``append`` marks the journal dirty; each round writes what every dirty journal holds
with one ``write`` and one ``fdatasync`` in the log's writer thread. A failed write fails the log and so every
table: nothing more is acknowledged, and what was is on disk. A journal keeps no record in memory: a finished
table's are read back into its replay file (``export``), and past ``checkpoint_bytes`` the live tables' entries
are streamed to a fresh log (``checkpoint``).
"""

from __future__ import annotations

import functools
import math
import os
import threading
import time
import zlib
from collections import deque
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Callable, Protocol

import trio

from server.ops import logs

from server.ops import metrics
from server.storage.journal_format import (ENTRY, FRAME, MAX_RECORD, JournalCorrupt, RawRecord, ReadResult, Record,
                                   decode_frames, encode_entry, encode_record, entry_of, read_journal, sync_directory,
                                   write_file, write_fully)
from server.storage.log_read import LogRead, copy_tables, read_log, read_table, table_frames
from server.storage.log_writer import GIL_GIVEN_S, HANDOFF_WAIT_S, Writer

__all__ = ["CHECKPOINT_BYTES", "ENTRY", "FRAME", "GIL_GIVEN_S", "HANDOFF_WAIT_S", "Journal", "JournalCorrupt", "Log",
           "LogInstrument", "LogRead", "MAX_RECORD", "POLICIES", "ROUNDS", "ROUND_MS", "RawRecord", "ReadResult", "Record",
           "Syncer", "Writer", "decode_frames", "encode_entry", "encode_record", "next_round", "read_journal", "read_log",
           "read_table"]

POLICIES = ("fsync", "write", "off")
CHECKPOINT_BYTES = 64 * 1024 * 1024  # a log this large is compacted to the live tables' records
ROUND_MS = 5  # the least time from one round's start to the next (docs/architecture.md, "The journal")
# "aligned": a busy log's rounds begin on the ticks of ROUND_MS on the machine's monotonic clock (``next_round``)
ROUNDS = os.environ.get("PARSIMONIA_JOURNAL_ROUNDS", "free")


def next_round(now: float, began: float, ended: float, step: float, aligned: bool) -> float:
    """When a round may begin for records waiting at ``now`` (``time.monotonic()`` seconds), the last round having
    begun at ``began`` and ended at ``ended``, rounds spaced ``step``. Free: at once, or ``step`` after the last
    began. Aligned: at once on a log idle for ``step`` since its last round ended; else on the first tick (a
    multiple of ``step``) from ``now`` on that is past ``began``, so never more than ``step`` away. The monotonic
    clock is the machine's, so the workers of one machine sync together and the filesystem can commit their logs
    in one go, instead of one commit (and one flush of the disk) each, in turn."""
    if step <= 0:
        return now
    if not aligned:
        return max(now, began + step)
    if now >= ended + step:
        return now
    return math.ceil(max(now, began + step / 20) / step) * step  # step / 20: a round begun just past a tick


class Journal:
    """One table's handle on the log (see the top)."""

    def __init__(self, table_id: str, syncer: Syncer, count: int = 0, start: int | None = None) -> None:
        self.table_id = table_id
        self._name = table_id.encode()
        self._name_crc = zlib.crc32(self._name)
        self.start = start  # where the table's first entry is in the log (None: it has none yet) ...
        self.layout = syncer.layout  # ... as the log was laid out then (a checkpoint lays it out anew)
        self._pending: list[bytes] = []
        self._appended = self._durable = count
        self._callbacks: deque[tuple[int, Callable[[], None], Callable[[OSError], None] | None]] = deque()
        self._syncer = syncer
        self.failed: OSError | None = syncer.failed
        self.closed = self.failed is not None
        self.finishing = False
        self.on_failure: Callable[[OSError], None] | None = None

    def append(self, record: Record | RawRecord) -> None:
        self._pending.append(encode_record(record))
        self._appended += 1
        self._dirty()

    def after_durable(self, callback: Callable[[], None],
                      on_failure: Callable[[OSError], None] | None = None) -> None:
        if self.failed is not None:
            if on_failure is not None:
                on_failure(self.failed)
        elif self._durable >= self._appended:
            callback()
        else:
            self._callbacks.append((self._appended, callback, on_failure))

    def finish(self) -> None:
        """No more records: once what was appended is durable, the table's records become its replay file and
        leave the log."""
        self.finishing = True
        self._dirty()

    @property
    def durable(self) -> int:
        """How many of the table's records are durable (in the log, or its replay file once finished)."""
        return self._durable

    def records(self) -> Callable[[], list[RawRecord]]:
        """How to read the table's records durable now, in a worker thread (``Syncer.read_records``)."""
        return functools.partial(self._syncer.read_records, self, self._durable)

    def _dirty(self) -> None:
        if not self.closed:
            self._syncer.mark(self)

    def _take(self) -> tuple[list[bytes], int]:
        """What a round writes: every frame pending, and the count it makes durable."""
        frames, self._pending = self._pending, []
        return frames, self._appended

    def _entries(self, frames: list[bytes], upto: int) -> list[bytes]:
        """The log's entries of ``frames``, the last of which is the table's record ``upto - 1``."""
        name, name_crc, first = self._name, self._name_crc, upto - len(frames)
        return [entry_of(name, name_crc, frame, first + n) for n, frame in enumerate(frames)]

    def _written(self, upto: int) -> None:
        self._durable = upto
        while self._callbacks and self._callbacks[0][0] <= upto:
            self._callbacks.popleft()[1]()

    def _fail(self, exc: OSError) -> None:
        """Disk full, I/O error: nothing more is durable, nothing is acknowledged."""
        self.failed = exc
        self.closed = True
        waiting, self._callbacks = self._callbacks, deque()
        for _, _, on_failure in waiting:
            if on_failure is not None:
                on_failure(exc)
        if self.on_failure is not None:
            self.on_failure(exc)


class Log(Protocol):
    """What the data directory needs of its log, so that another store (e.g. SQLite in WAL mode, a transaction
    per round: bench/wal_cost.py) can replace the segment log: a table's journal to append to (``open``), a
    table leaving it (``drop``), every unfinished table's records (``read``), the log rewritten to just some
    tables (``compact``), its rounds (``run``), and ``close``."""

    failed: OSError | None  # why the log cannot be written, once it cannot: every table stopped

    def open(self, table_id: str, frames: list[bytes] | None = None) -> Journal: ...
    def drop(self, table_id: str) -> None: ...
    def read(self) -> LogRead: ...
    def compact(self, tables: dict[str, list[bytes]]) -> None: ...
    async def run(self) -> None: ...
    def close(self) -> None: ...


class LogInstrument(Protocol):
    """A seam around each round's write to the log, for an instrument (the fault campaign's: docs/reliability.md);
    a server in service has none. Both are called in the thread that writes; what they raise fails the round
    as the write's own error would."""

    def before_write(self, path: str, fd: int, data: bytes, tables: list[str]) -> None:
        """The round's ``data``, records of ``tables``, is about to be written to the log ``fd``."""

    def before_sync(self, path: str, tables: list[str]) -> None:
        """The round's bytes are written; its sync (under the policy fsync) comes next."""


class Syncer:
    """The segment log of one data directory, and its rounds (see the top)."""

    def __init__(self, path: str, replays: str, policy: str = "fsync",
                 checkpoint_bytes: int = CHECKPOINT_BYTES, round_ms: int = ROUND_MS,
                 aligned: bool | None = None, instrument: LogInstrument | None = None,
                 releasing: AbstractContextManager[object] | None = None) -> None:
        if policy not in ("fsync", "write"):
            raise ValueError(f"journal policy must be fsync or write, not {policy!r}")
        self.path = path
        self.policy = policy
        self.round_ms = round_ms
        self.aligned = ROUNDS == "aligned" if aligned is None else aligned
        self._round_began = self._round_ended = -math.inf  # time.monotonic()
        self._writer = Writer()
        self._exporter = Writer()  # finished tables' replay files, on a thread of their own (``_export``)
        self._replayed: set[Journal] = set()  # journals whose replay file is written, until their end entry is due
        self.replays = replays  # where a finished table's records go
        self.checkpoint_bytes = checkpoint_bytes
        self._next_checkpoint = checkpoint_bytes
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)  # it holds seat tokens
        self.size = os.fstat(self._fd).st_size
        self._journals: dict[str, Journal] = {}
        self._starts: dict[str, int] = {}  # where the recovered tables' first entries are, until their journal opens
        self.layout = 0  # how many times the log was laid out anew (compacted), under ``_laying_out``
        self._laying_out = threading.Lock()  # held to replace the log, and to open it where a journal's start holds
        self._dirty: dict[Journal, None] = {}  # insertion-ordered: journals in the order they got records
        self._ends: list[bytes] = []  # entries saying a table left the log, for the next round
        self._wake = trio.Event()
        self.failed: OSError | None = None
        self.rounds = 0
        self.checkpoints = 0
        self.log = logs.get()
        self.instrument = instrument
        # held while a round's callbacks run: the server's coalescer, so that what a round releases to one client
        # leaves in one write (server.transport.coalesce)
        self.releasing: AbstractContextManager[object] = releasing if releasing is not None else nullcontext()

    def open(self, table_id: str, frames: list[bytes] | None = None) -> Journal:
        """A table's journal; ``frames``: its records already in the log (a recovered table)."""
        count = len(frames or ())
        journal = Journal(table_id, self, count, self._starts.pop(table_id, 0) if count else None)
        if not journal.closed:
            self._journals[table_id] = journal
        return journal

    def drop(self, table_id: str) -> None:
        """The table leaves the log (its records are elsewhere now): said in the next round."""
        journal = self._journals.pop(table_id, None)
        self._starts.pop(table_id, None)
        self._ends.append(encode_entry(table_id, b"", 0 if journal is None else journal.durable))
        self._wake.set()

    def mark(self, journal: Journal) -> None:
        self._dirty[journal] = None
        self._wake.set()

    def read(self) -> LogRead:
        read = read_log(self.path)
        self._starts = dict(read.starts)
        return read

    def compact(self, tables: dict[str, list[bytes]]) -> None:
        """Replace the log with one holding just ``tables``' frames (at start-up)."""
        chunks, starts, size = [], {}, 0
        for table_id, frames in tables.items():
            starts[table_id] = size
            for seq, frame in enumerate(frames):
                chunks.append(encode_entry(table_id, frame, seq))
                size += len(chunks[-1])
        with self._laying_out:
            write_file(self.path, chunks)
            self._reopen(size)
            self._starts = starts

    def _reopen(self, size: int) -> None:
        """The log was replaced (``_laying_out`` held): append to the new one."""
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        os.close(self._fd)
        self._fd, self.size = fd, size
        self.layout += 1

    def read_records(self, journal: Journal, count: int) -> list[RawRecord]:
        """In a worker thread: the first ``count`` records of ``journal``'s table, read from the log, or from its
        replay file once a checkpoint left it out (it had finished); ``JournalCorrupt`` if neither holds them."""
        with self._laying_out:  # the file opened is the one the journal's start is in
            f = open(self.path, "rb") if journal.layout == self.layout and journal.start is not None else None
            start = journal.start or 0
        if f is not None:
            with f:
                return decode_frames(table_frames(f, journal.table_id, start, count), journal.table_id)
        if not count:
            return []
        return read_journal(os.path.join(self.replays, f"{journal.table_id}.journal")).records[:count]

    async def run(self) -> None:
        self._writer.start()
        try:
            while True:
                await self._wake.wait()
                now = time.monotonic()
                wait = next_round(now, self._round_began, self._round_ended, self.round_ms / 1000, self.aligned) - now
                if wait > 0:  # in the writer thread: real time, even when trio's clock is a test's, standing still
                    await self._writer.run(time.sleep, wait, takes_s=wait)  # what comes meanwhile shares the round
                self._wake = trio.Event()
                self._round_began = time.monotonic()
                await self._round()
                self._round_ended = time.monotonic()
        finally:
            self._writer.stop()
            self.close()

    def close(self) -> None:
        self._exporter.stop(wait=True)  # the replay files being written, then the entries saying so
        ended = [j for j in self._replayed if self._journals.get(j.table_id) is j]
        self._replayed.clear()
        if ended and self._fd >= 0 and self.failed is None:
            for journal in ended:
                del self._journals[journal.table_id]
            try:
                write_fully(self._fd, b"".join(encode_entry(j.table_id, b"", j.durable) for j in ended))
                if self.policy == "fsync":
                    os.fdatasync(self._fd)
            except OSError as exc:  # they are exported again on start
                self.log.error("log_end_unwritten", log=self.path, error=str(exc))
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    async def _round(self) -> None:
        if self.failed is not None:
            return
        journals = [j for j in self._dirty if not j.closed]
        self._dirty.clear()
        taken = [(journal, *journal._take()) for journal in journals]
        written = [(journal, frames, upto) for journal, frames, upto in taken if frames]
        chunks, self._ends = self._ends, []
        for journal, frames, upto in written:
            if journal.start is None:  # its first entry: where the round's write puts it
                journal.start, journal.layout = self.size + sum(map(len, chunks)), self.layout
            chunks.extend(journal._entries(frames, upto))
        data = b"".join(chunks)
        if data:
            started, tables = time.perf_counter(), [j.table_id for j, _, _ in written]
            try:
                if self.policy == "write":  # a write to the page cache: tens of microseconds, done here
                    self._write(data, tables)
                else:
                    await self._writer.run(self._write, data, tables)
            except OSError as exc:
                self._fail(exc)
                return
            metrics.observe_journal_sync((time.perf_counter() - started) * 1000)
            self.rounds += 1
        with self.releasing:
            for journal, _, upto in written:
                self._release(journal, upto)
        finished = [j for j, _, _ in taken if j.finishing and not j._pending and not j.closed]
        if finished:
            self._export(finished)
        if self.size > self._next_checkpoint:
            await self._checkpoint()

    def _write(self, data: bytes, tables: list[str]) -> None:
        """In the writer thread: the round's one write, then its one sync."""
        if self.instrument is not None:
            self.instrument.before_write(self.path, self._fd, data, tables)
        write_fully(self._fd, data)
        self.size += len(data)
        if self.instrument is not None:
            self.instrument.before_sync(self.path, tables)
        if self.policy == "fsync":
            os.fdatasync(self._fd)

    def _fail(self, exc: OSError) -> None:
        """The log cannot be written: every table stops, nothing more is acknowledged."""
        self.failed = exc
        self.log.error("log_failed", log=self.path, error=str(exc))
        journals, self._journals = list(self._journals.values()), {}
        for journal in journals:
            try:
                journal._fail(exc)
            except Exception:
                self.log.exception("failure_callback_failed", table=journal.table_id)

    def _release(self, journal: Journal, upto: int) -> None:
        """Run the callbacks the round made durable. They belong to one table: a bug in one must not stop
        the syncer, which every other table depends on."""
        try:
            journal._written(upto)
        except Exception:
            self.log.exception("durable_callback_failed", table=journal.table_id)

    def _export(self, finished: list[Journal]) -> None:
        """Finished tables' records to their replay files, after the round's callbacks, in the exporter's thread
        while the rounds go on (reading them back from the log takes a walk through it); then the entries saying
        they left the log, in the next round (lost, the table is exported again on start). Until then they stay
        with the live tables, so that a checkpoint keeps their records; one that cannot be written stays for good:
        a restart exports it again."""
        for journal in finished:
            journal.closed = True
        if not self._exporter.running:
            self._exporter.start()
        self._exporter.submit(functools.partial(self._exported, finished), self._export_all, finished)

    def _export_all(self, finished: list[Journal]) -> dict[Journal, OSError | JournalCorrupt]:
        """In the exporter's thread: each replay file, its records read back from the log one table at a time."""
        failed: dict[Journal, OSError | JournalCorrupt] = {}
        for journal in finished:
            try:
                with self._laying_out:  # the file opened is the one the journal's start is in
                    f, start = open(self.path, "rb"), journal.start or 0
                with f:
                    frames = table_frames(f, journal.table_id, start, journal.durable)
                write_file(os.path.join(self.replays, f"{journal.table_id}.journal"), frames)
                self._replayed.add(journal)
            except (OSError, JournalCorrupt) as exc:
                failed[journal] = exc
            frames = []
        return failed

    def _exported(self, finished: list[Journal], ok: bool, value: Any) -> None:
        """On the loop's thread, once ``_export_all`` returned (``value``) or raised (``value``, not ``ok``)."""
        failed = value if ok else dict.fromkeys(finished, value)
        for journal in finished:
            if journal in failed:
                self.log.error("replay_export_failed", table=journal.table_id, error=str(failed[journal]))
            elif self._journals.get(journal.table_id) is journal:
                self._replayed.discard(journal)
                del self._journals[journal.table_id]
                self._ends.append(encode_entry(journal.table_id, b"", journal.durable))
                self._wake.set()

    async def _checkpoint(self) -> None:
        """The live tables' durable records to a fresh log, renamed over this one. Records appended meanwhile
        wait for the next round, which writes them to the new log. If it cannot be written the old log stays.
        The next one comes once the log has doubled, and never before ``checkpoint_bytes``."""
        live = {table_id: j for table_id, j in self._journals.items() if j.durable and j.start is not None}
        started = time.perf_counter()
        try:
            await self._writer.run(self._copy_live, live)
        except (OSError, JournalCorrupt) as exc:
            self.log.error("checkpoint_failed", log=self.path, error=str(exc))
            return
        finally:
            self._next_checkpoint = max(self.checkpoint_bytes, 2 * self.size)
        self.checkpoints += 1
        self.log.info("checkpoint", tables=len(live), bytes=self.size,
                      ms=round((time.perf_counter() - started) * 1000, 1))

    def _copy_live(self, live: dict[str, Journal]) -> None:
        """In the writer thread: ``live``'s entries, streamed from the log to a fresh one (synced), renamed over
        it; their journals' starts moved to where the copy put them. On an error, the log stays as it was."""
        tmp = self.path + ".new"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # it holds seat tokens
        try:
            with open(self.path, "rb") as f:
                starts = copy_tables(f, self.size, fd, {t: (j.start or 0, j.durable) for t, j in live.items()})
            size = os.fstat(fd).st_size
            os.fdatasync(fd)
        except BaseException:
            os.unlink(tmp)
            raise
        finally:
            os.close(fd)
        with self._laying_out:
            os.replace(tmp, self.path)
            self._reopen(size)
            for table_id, journal in live.items():
                journal.start, journal.layout = starts[table_id], self.layout
        sync_directory(self.path)
