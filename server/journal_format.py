"""The log's record format: how a table's records are framed, in a replay file and in the shared log, and read
back (``server.journal`` writes them; see its top for the layout and what the kinds of record are).

A record is a typed, frozen input (``JoinRecord``, ``CmdRecord``, ...), written by one codec as a msgpack
map whose ``k`` field is its kind; read back as a map, checked field by field when a match takes it (``typed``).
Framed as ``<u32 length><u32 crc32(payload)><payload>``, little-endian; in the shared log each frame is wrapped as
an entry with the table's id and the record's index in its table
(``<u32 length><u32 crc32(id + seq + frame)><u16 id length | 0x8000><table id><u32 seq><frame>``; an
older log's entries have no seq), an empty frame saying the table is finished.

Reading the shared log back, past damage, is ``server.log_read``'s.
"""

from __future__ import annotations

import os
import struct
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Union

import msgpack
import msgspec

if TYPE_CHECKING:
    from protocol.values import Command, Options, Result
else:  # what the decoder checks of the open maps: string keys (the rules check a command's own fields)
    Command = Options = Result = dict[str, Any]

FRAME = struct.Struct("<II")
MAX_RECORD = 16 * 1024 * 1024
ZEROS = bytes(FRAME.size)
ENTRY = struct.Struct("<IIH")  # a log entry: length, crc of the body, length of the table id (| HAS_SEQ)
SEQ = struct.Struct("<I")  # after the id, if HAS_SEQ: the record's index in its table
HAS_SEQ = 0x8000
MAX_ID = 255  # the longest table id an entry may hold


class _Record(msgspec.Struct, frozen=True, tag_field="k", omit_defaults=True):
    """A journal record: one input of a match (or its header, or its end), written as a msgpack map whose ``k``
    is the kind and whose other keys are the fields, in order; a field at its default is left out."""


class TableRecord(_Record, frozen=True, tag="table"):
    """A journal's first record: everything needed to make its match again."""

    id: str
    game: str
    seats: int
    seed: int
    time_scale: float
    options: Options  # as the creator gave them (the defaults are filled in again on replay)
    seeded: bool = False


class JoinRecord(_Record, frozen=True, tag="join"):
    name: str
    token: str
    key: str | None = None  # the client's join key: the same join again gets the same seat


class LeaveRecord(_Record, frozen=True, tag="leave"):
    seat: int


class StartRecord(_Record, frozen=True, tag="start"):
    at: int


class CmdRecord(_Record, frozen=True, tag="cmd"):
    """A seat's command, as the rules accepted it (a refused one is never journaled)."""

    at: int
    seat: int
    command: Command
    key: str | None = None  # the client's key for it: the same command sent again gets the same answer


class TickRecord(_Record, frozen=True, tag="tick"):
    """The deadlines due at ``at`` fire."""

    at: int


class PauseRecord(_Record, frozen=True, tag="pause"):
    at: int
    hold: bool = False  # the clocks wait for the players (a tournament's hold), nobody paused them by hand


class UnpauseRecord(_Record, frozen=True, tag="unpause"):
    at: int


class ResumeRecord(UnpauseRecord, frozen=True, tag="resume"):
    """An unpause, as journals written before the rename spell it."""


class CloseRecord(_Record, frozen=True, tag="close"):
    at: int
    ended: str = "closed"  # or "expired": nobody joined in time


class EndRecord(_Record, frozen=True, tag="end"):
    """The match is over: the result as it was told (a replay must reach the same)."""

    at: int
    result: Result


# one record of a journal, as written and as read back (``decode_record`` checks each field's type)
Record = Union[TableRecord, JoinRecord, LeaveRecord, StartRecord, CmdRecord, TickRecord, PauseRecord, UnpauseRecord,
               ResumeRecord, CloseRecord, EndRecord]
# an input of a match: every record but the header
Input = Union[JoinRecord, LeaveRecord, StartRecord, CmdRecord, TickRecord, PauseRecord, UnpauseRecord, CloseRecord,
              EndRecord]


# a record as the storage layer reads it back: a map with a ``k``, checked field by field only when a match takes it
# (``typed``), so that copying, compacting and setting aside never depend on the kinds this version knows
RawRecord = dict[str, object]


def typed(record: Record | RawRecord) -> Record:
    """A record read back, as the typed record it is; ``ValueError`` (``msgspec.ValidationError``) if it is
    not one (an unknown kind, a field missing or of the wrong type)."""
    return record if isinstance(record, _Record) else _convert(record, Record)


def kind_of(record: Record) -> str:
    """A record's kind: its ``k``."""
    return str(type(record).__struct_config__.tag)


def record_at(record: Record | RawRecord) -> int:
    """A record's time; 0 for the records that have none (table, join, leave)."""
    at = record.get("at", 0) if isinstance(record, dict) else getattr(record, "at", 0)
    return at if isinstance(at, int) else 0


class JournalCorrupt(Exception):
    """A record in the middle of a journal fails its check: the file cannot be trusted."""


_encode = msgspec.msgpack.Encoder().encode  # the one codec: a record's bytes, and back (typed, checked)
_decode = msgspec.msgpack.Decoder(Record).decode
_convert = msgspec.convert


def encode_record(record: Record | RawRecord) -> bytes:
    payload = _encode(record)
    return FRAME.pack(len(payload), zlib.crc32(payload)) + payload


def decode_record(payload: bytes) -> Record:
    """A record from its bytes (no frame); ``ValueError`` if they are not one (``msgspec``'s errors are)."""
    return _decode(payload)


@dataclass
class ReadResult:
    records: list[RawRecord]
    torn: bool  # the last record was cut short (a crash mid-write) and was dropped
    valid_bytes: int  # the length of the trustworthy prefix


def read_journal(path: str) -> ReadResult:
    """Every whole record of the file. A torn tail (cut short, or zero-ended) is dropped; other damage raises."""
    with open(path, "rb") as f:
        data = f.read()
    records: list[RawRecord] = []
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
        if end > len(data) or (end == len(data) and zlib.crc32(data[pos + FRAME.size:end]) != crc and
                               data.endswith(bytes(8))):
            # the last record, half written (cut short, or zeros where its last page never came); unless whole
            # records follow it, when its length is what broke. A whole last record that fails its check is
            # damage, as in the log: no crash writes one
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


def encode_entry(table_id: str, frame: bytes, seq: int | None = None) -> bytes:
    """A log entry: one of a table's record frames, or (empty) the table's end; ``seq``: the record's index in
    the table (an end's: the table's record count), None for an entry of the older format, without one."""
    name = table_id.encode()
    return entry_of(name, zlib.crc32(name), frame, seq)


def entry_of(name: bytes, name_crc: int, frame: bytes, seq: int | None = None) -> bytes:
    """``encode_entry`` with the id's bytes and their CRC already known: the CRC of the body continues from
    the id's, so the body is never joined just to be checked."""
    if seq is None:
        return b"".join((ENTRY.pack(len(name) + len(frame), zlib.crc32(frame, name_crc), len(name)), name, frame))
    number = SEQ.pack(seq)
    return b"".join((ENTRY.pack(len(name) + SEQ.size + len(frame), zlib.crc32(frame, zlib.crc32(number, name_crc)),
                               len(name) | HAS_SEQ), name, number, frame))


def decode_frames(frames: list[bytes], where: str) -> list[RawRecord]:
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
    sync_directory(path)


def sync_directory(path: str) -> None:
    """The directory of ``path`` synced: a rename into it is durable."""
    directory = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def write_fully(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
