"""The log's record format: how a table's records are framed, in a replay file and in the shared log, and read
back (``server.storage.journal`` writes them; see its top for the layout and what the kinds of record are).

A record is a match's typed input (``server.core.records``: one codec, a msgpack map whose ``k`` field is its
kind); read back here as a map, checked field by field when a match takes it (``typed``). Framed as ``<u32 length><u32 crc32(payload)><payload>``, little-endian; in the shared log each frame is wrapped as
an entry with the table's id and the record's index in its table
(``<u32 length><u32 crc32(id + seq + frame)><u16 id length | 0x8000><table id><u32 seq><frame>``; an
older log's entries have no seq), an empty frame saying the table is finished.

Reading the shared log back, past damage, is ``server.storage.log_read``'s.
"""

from __future__ import annotations

import os
import struct
import zlib
from dataclasses import dataclass

import msgpack

from server.core.records import (CloseRecord, CmdRecord, EndRecord, Input, JoinRecord, LeaveRecord, PauseRecord,
                                 RawRecord, Record, ResumeRecord, StartRecord, TableRecord, TickRecord,
                                 UnpauseRecord, decode_record, kind_of, record_at, typed)
from server.core.records import encode as encode_payload

__all__ = ["CloseRecord", "CmdRecord", "EndRecord", "Input", "JoinRecord", "LeaveRecord", "PauseRecord", "RawRecord",
           "Record", "ResumeRecord", "StartRecord", "TableRecord", "TickRecord", "UnpauseRecord", "decode_record",
           "kind_of", "record_at", "typed"]

FRAME = struct.Struct("<II")
MAX_RECORD = 16 * 1024 * 1024
ZEROS = bytes(FRAME.size)
ENTRY = struct.Struct("<IIH")  # a log entry: length, crc of the body, length of the table id (| HAS_SEQ)
SEQ = struct.Struct("<I")  # after the id, if HAS_SEQ: the record's index in its table
HAS_SEQ = 0x8000
MAX_ID = 255  # the longest table id an entry may hold


class JournalCorrupt(Exception):
    """A record in the middle of a journal fails its check: the file cannot be trusted."""


def encode_record(record: Record | RawRecord) -> bytes:
    payload = encode_payload(record)
    return FRAME.pack(len(payload), zlib.crc32(payload)) + payload


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
