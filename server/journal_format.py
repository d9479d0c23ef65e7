"""The log's record format: how a table's records are framed, in a replay file and in the shared log, and read
back (``server.journal`` writes them; see its top for the layout and what the kinds of record are).

A record is a msgpack map with a ``k`` (kind) field, framed as ``<u32 length><u32 crc32(payload)><payload>``,
little-endian; in the shared log each frame is wrapped as an entry with the table's id
(``<u32 length><u32 crc32(id + frame)><u16 id length><table id><frame>``), an empty frame saying the table is
finished.
"""

from __future__ import annotations

import os
import struct
import zlib
from dataclasses import dataclass
from typing import Literal, NotRequired, TypedDict

import msgpack

from protocol.values import Command, Options, Result

FRAME = struct.Struct("<II")
MAX_RECORD = 16 * 1024 * 1024
ZEROS = bytes(FRAME.size)
ENTRY = struct.Struct("<IIH")  # a log entry: length, crc of the body, length of the table id


class TableRecord(TypedDict):
    """A journal's first record: everything needed to make its match again."""

    k: Literal["table"]
    id: str
    game: str
    seats: int
    seed: int
    time_scale: float
    options: Options  # as the creator gave them (the defaults are filled in again on replay)
    seeded: NotRequired[Literal[True]]


class JoinRecord(TypedDict):
    k: Literal["join"]
    name: str
    token: str
    key: NotRequired[str]


class LeaveRecord(TypedDict):
    k: Literal["leave"]
    seat: int


class AtRecord(TypedDict):
    """An input that is only its time: the start, a tick, a pause, an unpause ("resume" in older journals)."""

    k: Literal["start", "tick", "pause", "unpause", "resume"]
    at: int
    hold: NotRequired[bool]  # a pause that holds the clocks for the players (admin `pause` with `hold`)


class CmdRecord(TypedDict):
    k: Literal["cmd"]
    at: int
    seat: int
    command: Command
    key: NotRequired[str]


class CloseRecord(TypedDict):
    k: Literal["close"]
    at: int
    ended: NotRequired[str]  # absent: "closed" by the organiser


class EndRecord(TypedDict):
    k: Literal["end"]
    at: int
    result: Result


# one record of a journal; what is read back is only checked to be a map with a ``k`` (replay checks the rest)
Record = TableRecord | JoinRecord | LeaveRecord | AtRecord | CmdRecord | CloseRecord | EndRecord


class JournalCorrupt(Exception):
    """A record in the middle of a journal fails its check: the file cannot be trusted."""


_packer = msgpack.Packer(use_bin_type=True)  # one for every record: packb makes (and allocates) one a call


def encode_record(record: Record) -> bytes:
    payload = _packer.pack(record)
    return FRAME.pack(len(payload), zlib.crc32(payload)) + payload


@dataclass
class ReadResult:
    records: list[Record]
    torn: bool  # the last record was cut short (a crash mid-write) and was dropped
    valid_bytes: int  # the length of the trustworthy prefix


def read_journal(path: str) -> ReadResult:
    """Every whole record of the file. A torn tail is dropped; damage before the tail raises."""
    with open(path, "rb") as f:
        data = f.read()
    records: list[Record] = []
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


def encode_entry(table_id: str, frame: bytes) -> bytes:
    """A log entry: one of a table's record frames, or (empty) the table's end."""
    name = table_id.encode()
    return entry_of(name, zlib.crc32(name), frame)


def entry_of(name: bytes, name_crc: int, frame: bytes) -> bytes:
    """``encode_entry`` with the id's bytes and their CRC already known: the CRC of the body continues from
    the id's, so the body is never joined just to be checked."""
    return b"".join((ENTRY.pack(len(name) + len(frame), zlib.crc32(frame, name_crc), len(name)), name, frame))


@dataclass
class LogRead:
    tables: dict[str, list[bytes]]  # every unfinished table's record frames, in the order the tables began
    torn: bool  # something followed the last good entry (a crash mid-write, or garbage) and was dropped
    valid_bytes: int


def read_log(path: str) -> LogRead:
    """The log's unfinished tables. Reading stops at the first entry that is cut short or fails its check:
    what follows the last good entry is lost, nothing before it."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return LogRead({}, False, 0)
    tables: dict[str, list[bytes]] = {}
    pos = 0
    while pos + ENTRY.size <= len(data):
        length, crc, name_len = ENTRY.unpack_from(data, pos)
        start, end = pos + ENTRY.size, pos + ENTRY.size + length
        if length > MAX_RECORD or name_len > length or end > len(data) or zlib.crc32(data[start:end]) != crc:
            break
        try:
            table_id = data[start:start + name_len].decode()
        except UnicodeDecodeError:
            break
        frame = data[start + name_len:end]
        if frame:
            tables.setdefault(table_id, []).append(frame)
        else:
            tables.pop(table_id, None)
        pos = end
    return LogRead(tables, pos < len(data), pos)


def decode_frames(frames: list[bytes], where: str) -> list[Record]:
    """A table's records from its frames (each checked by the log's CRC already)."""
    records = []
    for n, frame in enumerate(frames):
        try:
            record = msgpack.unpackb(frame[FRAME.size:], raw=False, strict_map_key=False)
        except Exception as exc:
            raise JournalCorrupt(f"{where}: record {n} does not decode: {exc}") from None
        if not isinstance(record, dict) or "k" not in record:
            raise JournalCorrupt(f"{where}: record {n} is not a journal record")
        records.append(record)
    return records


def write_file(path: str, chunks: list[bytes]) -> None:
    """``chunks`` durably at ``path``, all or nothing: written beside it, synced, renamed over it."""
    tmp = path + ".new"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # they hold seat tokens
    try:
        write_fully(fd, b"".join(chunks))
        os.fdatasync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    directory = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def write_fully(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def read_table(path: str, table_id: str) -> list[Record]:
    """An unfinished table's records in the log at ``path`` (none if it has none, or is finished)."""
    return decode_frames(read_log(path).tables.get(table_id, []), f"{table_id} in {path}")
