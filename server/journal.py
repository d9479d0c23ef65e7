"""A table's write-ahead journal: msgpack records, each framed with its length and CRC-32.

Frame: ``<u32 length><u32 crc32(payload)><payload>``, little-endian. A record is a map with a ``k`` (kind)
field; see ``server/recovery.py`` for the kinds and how they replay.

Durability policies:

* ``fsync`` (default): a record is durable once its journal's ``fsync`` returned. Records appended while a
  round of syncs runs wait for the next, together (group commit), so the cost of a sync is shared by every
  record in it.
* ``syncfs``: the same, but a round is made durable with one ``syncfs`` of the data directory's filesystem
  (Linux 5.8 or later; elsewhere it falls back to ``fsync``), whatever the number of journals in it. An
  ``fsync`` costs the kernel about 50 us of CPU per file, so at a thousand busy tables the fsyncs alone take a
  third of a core; one ``syncfs`` a tenth of that. The price: ``syncfs`` flushes everything any process has
  written to that filesystem, so another program writing a lot there (a copy, a backup) delays every
  acknowledgement (80-350 ms measured here while ``dd`` wrote 3 GB, against 0.1 ms for an ``fsync``). Worth it
  on a machine whose data directory has a filesystem of its own.
* ``write``: durable once ``write`` returned: survives the server process dying, not a power cut.
* ``off``: no journal (``Journal`` is not used at all).

``after_durable(callback, on_failure)`` runs ``callback`` once every record appended so far is durable;
callbacks run in the order they were registered. The table holds back every acknowledgement and event until
then. If the journal fails first, ``on_failure`` (if given) runs instead, with the error.

One ``Syncer`` serves every journal of a data directory: ``append`` only keeps the record in memory and
marks the journal dirty; each round of the syncer takes what every dirty journal holds and, in one
hand-off to a worker thread, writes them all and then makes them durable together, then releases the
callbacks each round covers. What is appended while a round runs waits for the next round (group commit
across tables).

A round is made durable with an ``fsync`` per journal, up to ``SYNC_THREADS`` at once, or with one
``syncfs`` (policy ``syncfs``). Since Linux 5.8 ``syncfs`` reports a write-back error on the filesystem;
before, it did not, which is why older kernels get the fsyncs; when a ``syncfs`` fails, an ``fsync`` per
journal finds the culprit. A journal whose write or sync fails fails alone: its ``on_failure`` is told,
the other journals go on.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct
import sys
import time
import zlib
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable

import msgpack
import trio

from server import faults, logs, metrics

FRAME = struct.Struct("<II")
MAX_RECORD = 16 * 1024 * 1024
ZEROS = bytes(FRAME.size)
POLICIES = ("fsync", "syncfs", "write", "off")


class JournalCorrupt(Exception):
    """A record in the middle of a journal fails its check: the file cannot be trusted."""


def encode_record(record: dict[str, Any]) -> bytes:
    payload = msgpack.packb(record, use_bin_type=True)
    return FRAME.pack(len(payload), zlib.crc32(payload)) + payload


@dataclass
class ReadResult:
    records: list[dict[str, Any]]
    torn: bool  # the last record was cut short (a crash mid-write) and was dropped
    valid_bytes: int  # the length of the trustworthy prefix


def read_journal(path: str) -> ReadResult:
    """Every whole record of the file. A torn tail is dropped; damage before the tail raises."""
    with open(path, "rb") as f:
        data = f.read()
    records: list[dict[str, Any]] = []
    pos = 0
    while pos < len(data):
        if data[pos:pos + FRAME.size] == ZEROS and not data[pos:].strip(b"\0"):
            return ReadResult(records, True, pos)  # a power cut can leave zeros where the last writes went
        if len(data) - pos < FRAME.size:
            return ReadResult(records, True, pos)
        length, crc = FRAME.unpack_from(data, pos)
        end = pos + FRAME.size + length
        if length > MAX_RECORD:
            raise JournalCorrupt(f"{path}: record at byte {pos} claims {length} bytes")
        if end > len(data) or (end == len(data) and zlib.crc32(data[pos + FRAME.size:end]) != crc):
            # the last record, half written; unless whole records follow it, when its length is what broke
            if _whole_record_after(data, pos + 1):
                raise JournalCorrupt(f"{path}: record at byte {pos} claims {length} bytes, past later records")
            return ReadResult(records, True, pos)
        payload = data[pos + FRAME.size:end]
        if zlib.crc32(payload) != crc:
            raise JournalCorrupt(f"{path}: record at byte {pos} fails its checksum")
        try:
            record = msgpack.unpackb(payload, raw=False, strict_map_key=False)
        except Exception as exc:
            raise JournalCorrupt(f"{path}: record at byte {pos} does not decode: {exc}") from None
        if not isinstance(record, dict) or "k" not in record:
            raise JournalCorrupt(f"{path}: record at byte {pos} is not a journal record")
        records.append(record)
        pos = end
    return ReadResult(records, False, pos)


def _whole_record_after(data: bytes, start: int) -> bool:
    """Whether a whole, valid record starts anywhere from ``start`` on. A crash cuts only the last record,
    so a bad record with a whole one after it is corruption (e.g. a flipped length), not a torn tail."""
    for pos in range(start, len(data) - FRAME.size + 1):
        length, crc = FRAME.unpack_from(data, pos)
        end = pos + FRAME.size + length
        if end > len(data) or zlib.crc32(data[pos + FRAME.size:end]) != crc:
            continue
        try:
            record = msgpack.unpackb(data[pos + FRAME.size:end], raw=False, strict_map_key=False)
        except Exception:
            continue
        if isinstance(record, dict) and "k" in record:
            return True
    return False


class Journal:
    def __init__(self, path: str, policy: str = "fsync", truncate_to: int | None = None) -> None:
        if policy not in ("fsync", "syncfs", "write"):
            raise ValueError(f"journal policy must be fsync, syncfs or write, not {policy!r}")
        self.path = path
        self.policy = policy
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)  # it holds seat tokens
        if truncate_to is not None:
            os.ftruncate(fd, truncate_to)  # drop a torn tail before appending after it
        self._fd = fd
        self.device = os.fstat(fd).st_dev  # the filesystem it is on: one syncfs flushes them all
        self._pending: list[bytes] = []
        self._appended = 0
        self._durable = 0
        self._callbacks: deque[tuple[int, Callable[[], None], Callable[[OSError], None] | None]] = deque()
        self._syncer: Syncer | None = None
        self.syncs = 0
        self.closed = False
        self.finishing = False
        self.failed: OSError | None = None
        self.on_failure: Callable[[OSError], None] | None = None

    def append(self, record: dict[str, Any]) -> None:
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
        """No more records: the syncer closes the journal once what was appended is durable."""
        self.finishing = True
        self._dirty()

    def _dirty(self) -> None:
        if self._syncer is not None and not self.closed:
            self._syncer.mark(self)

    def _take(self) -> tuple[bytes, int]:
        """What a round writes: every record pending, and the count it makes durable."""
        data, self._pending = b"".join(self._pending), []
        return data, self._appended

    def _write(self, data: bytes) -> None:
        if faults.ACTIVE is not None:
            faults.before_write(self.path, self._fd, data)
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        if faults.ACTIVE is not None:
            faults.before_sync(self.path)  # the round's sync comes next: a kill here, or an fsync error

    def _sync(self) -> None:
        os.fsync(self._fd)

    def _written(self, upto: int) -> None:
        self.syncs += 1
        self._durable = upto
        while self._callbacks and self._callbacks[0][0] <= upto:
            self._callbacks.popleft()[1]()

    def _fail(self, exc: OSError) -> None:
        """Disk full, I/O error: nothing more is durable, nothing is acknowledged."""
        self.failed = exc
        self.close()
        waiting, self._callbacks = self._callbacks, deque()
        for _, _, on_failure in waiting:
            if on_failure is not None:
                on_failure(exc)
        if self.on_failure is not None:
            self.on_failure(exc)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            os.close(self._fd)


class Syncer:
    """Writes and syncs the journals of one data directory, all of them in each round (see the top)."""

    def __init__(self) -> None:
        self._journals: set[Journal] = set()
        self._dirty: dict[Journal, None] = {}  # insertion-ordered: journals in the order they got records
        self._wake = trio.Event()
        self.rounds = 0
        self.log = logs.get()

    def add(self, journal: Journal) -> Journal:
        journal._syncer = self
        self._journals.add(journal)
        if journal._pending or journal.finishing:
            self.mark(journal)
        return journal

    def mark(self, journal: Journal) -> None:
        self._dirty[journal] = None
        self._wake.set()

    async def run(self) -> None:
        try:
            while True:
                await self._wake.wait()
                self._wake = trio.Event()
                await self._round()
        finally:
            for journal in self._journals:
                journal.close()

    async def _round(self) -> None:
        journals = [j for j in self._dirty if not j.closed]
        self._dirty.clear()
        taken = [(journal, *journal._take()) for journal in journals]
        writes = [(journal, data) for journal, data, _ in taken if data]
        if writes:
            started = time.perf_counter()
            errors = await trio.to_thread.run_sync(_write_all, writes)
            metrics.observe_journal_sync((time.perf_counter() - started) * 1000)
            self.rounds += 1
        else:
            errors = {}
        for journal, data, upto in taken:
            error = errors.get(journal)
            if error is not None:
                self._journals.discard(journal)
                journal._fail(error)
                continue
            if data:
                self._release(journal, upto)
            if journal.finishing and not journal._pending:
                self._journals.discard(journal)
                journal.close()

    def _release(self, journal: Journal, upto: int) -> None:
        """Run the callbacks the round made durable. They belong to one table: a bug in one must not stop
        the syncer, which every other table depends on."""
        try:
            journal._written(upto)
        except Exception:
            self.log.exception("durable_callback_failed", journal=journal.path)


SYNC_THREADS = 8  # journals fsynced at once where there is no syncfs: the disk merges concurrent fsyncs
_pool = ThreadPoolExecutor(max_workers=SYNC_THREADS, thread_name_prefix="journal-sync")


def _load_syncfs() -> Callable[[int], None] | None:
    """``syncfs(fd)`` where it reports write-back errors (Linux 5.8 and later), else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        major, minor = (int(part) for part in platform.release().split(".")[:2])
        call = ctypes.CDLL(None, use_errno=True).syncfs
    except (ValueError, OSError, AttributeError):
        return None
    if (major, minor) < (5, 8):
        return None
    call.argtypes, call.restype = [ctypes.c_int], ctypes.c_int

    def syncfs(fd: int) -> None:
        if call(fd) != 0:
            error = ctypes.get_errno()
            raise OSError(error, os.strerror(error))

    return syncfs


SYNCFS = _load_syncfs()


def _write_all(writes: list[tuple[Journal, bytes]]) -> dict[Journal, OSError]:
    """In the worker thread: every journal's write, then one sync for all that need one; the failures, by
    journal."""
    errors: dict[Journal, OSError] = {}
    to_sync: list[Journal] = []
    for journal, data in writes:
        try:
            journal._write(data)
        except OSError as exc:
            errors[journal] = exc
            continue
        if journal.policy != "write":
            to_sync.append(journal)
    if to_sync:
        errors.update(_sync_all(to_sync))
    return errors


def _sync_all(journals: list[Journal]) -> dict[Journal, OSError]:
    if SYNCFS is None or journals[0].policy != "syncfs":  # a syncer's journals share their data directory's policy
        return _fsync_each(journals)
    by_device: dict[int, list[Journal]] = {}  # a data directory's journals share one, unless it mounts others
    for journal in journals:
        by_device.setdefault(journal.device, []).append(journal)
    errors: dict[Journal, OSError] = {}
    for group in by_device.values():
        try:
            SYNCFS(group[0]._fd)
        except OSError as exc:
            failed = _fsync_each(group)  # which of them? each fsync reports its own file's errors
            errors.update(failed or {journal: exc for journal in group})
    return errors


def _fsync_each(journals: list[Journal]) -> dict[Journal, OSError]:
    """An fsync per journal, on up to ``SYNC_THREADS`` threads at once: each thread takes a share of the
    journals, so a round of a thousand costs a few hand-offs to the pool, not one each."""
    if len(journals) == 1:
        return _fsync_share(journals)
    shares = [journals[i::SYNC_THREADS] for i in range(min(SYNC_THREADS, len(journals)))]
    errors: dict[Journal, OSError] = {}
    for failed in _pool.map(_fsync_share, shares):
        errors.update(failed)
    return errors


def _fsync_share(journals: list[Journal]) -> dict[Journal, OSError]:
    errors: dict[Journal, OSError] = {}
    for journal in journals:
        try:
            journal._sync()
        except OSError as exc:
            errors[journal] = exc
    return errors
