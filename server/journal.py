"""A table's write-ahead journal: msgpack records, each framed with its length and CRC-32.

Frame: ``<u32 length><u32 crc32(payload)><payload>``, little-endian. A record is a map with a ``k`` (kind)
field; see ``server/recovery.py`` for the kinds and how they replay.

Durability policies:

* ``fsync`` (default): a record is durable once ``fsync`` returned. Records appended while one fsync runs
  wait for the next, together (group commit), so the cost of a sync is shared by every record in it.
* ``write``: durable once ``write`` returned: survives the server process dying, not a power cut.
* ``off``: no journal (``Journal`` is not used at all).

``after_durable(callback)`` runs ``callback`` once every record appended so far is durable; callbacks
run in the order they were registered. The table holds back every acknowledgement and event until then.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable

import msgpack
import trio

FRAME = struct.Struct("<II")
MAX_RECORD = 16 * 1024 * 1024
ZEROS = bytes(FRAME.size)
POLICIES = ("fsync", "write", "off")


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
        if policy not in ("fsync", "write"):
            raise ValueError(f"journal policy must be fsync or write, not {policy!r}")
        self.path = path
        self.policy = policy
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)  # it holds seat tokens
        if truncate_to is not None:
            os.ftruncate(fd, truncate_to)  # drop a torn tail before appending after it
        self._fd = fd
        self._pending: list[bytes] = []
        self._appended = 0
        self._durable = 0
        self._callbacks: deque[tuple[int, Callable[[], None]]] = deque()
        self._wake = trio.Event()
        self.syncs = 0
        self.closed = False
        self._finishing = False
        self.failed: OSError | None = None
        self.on_failure: Callable[[OSError], None] | None = None

    def append(self, record: dict[str, Any]) -> None:
        self._pending.append(encode_record(record))
        self._appended += 1
        self._wake.set()

    def after_durable(self, callback: Callable[[], None]) -> None:
        if self._durable >= self._appended:
            callback()
        else:
            self._callbacks.append((self._appended, callback))

    def finish(self) -> None:
        """No more records: ``run`` returns once what was appended is durable."""
        self._finishing = True
        self._wake.set()

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        if self.policy == "fsync":
            os.fsync(self._fd)

    async def run(self) -> None:
        """The syncer: writes and syncs what was appended, then releases the callbacks it covers."""
        try:
            while not (self._finishing and not self._pending):
                await self._wake.wait()
                self._wake = trio.Event()
                if not self._pending:
                    continue
                batch, self._pending = self._pending, []
                upto = self._appended
                try:
                    await trio.to_thread.run_sync(self._write, b"".join(batch))
                except OSError as exc:  # disk full, I/O error: nothing more is durable, nothing is acknowledged
                    self.failed = exc
                    if self.on_failure is not None:
                        self.on_failure(exc)
                    return
                self.syncs += 1
                self._durable = upto
                while self._callbacks and self._callbacks[0][0] <= upto:
                    self._callbacks.popleft()[1]()
        finally:
            self.close()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            os.close(self._fd)
