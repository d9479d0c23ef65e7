"""Reading the shared log back: recovery's read past damage, and the walks that stream a table's entries.

The entries are ``server.storage.journal_format``'s. Reading never gives up at the first bad entry: it goes on at the next
whole one (its length and CRC hold) and says which tables lost records in between (``read_log``); only what a crash
leaves at the end (an entry cut short, zeros) is a torn tail. ``walk`` streams the log a bounded buffer at a time,
``table_frames`` keeps one table's frames from it and ``copy_tables`` copies the live tables' entries into a fresh
log, each checked on the way.
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from server.storage.journal_format import (ENTRY, FRAME, HAS_SEQ, MAX_ID, MAX_RECORD, SEQ, JournalCorrupt, RawRecord, decode_frames,
                                   write_fully)

WALK_BYTES = 1 << 20  # a walk through the log reads it this much at a time (more only for a longer entry)
OWNER_CRC_BYTES = 64 * 1024  # a damaged region longer than this is not checked as one entry of each live table
# where an entry's header may start: a length under 2**25 (MAX_RECORD is 2**24), then a CRC, then an id length of
# 1 to 255, with or without HAS_SEQ
_HEADER = re.compile(rb"(?s)(?=.{3}[\x00\x01].{4}[\x01-\xff][\x00\x80])")


@dataclass
class Damage:
    """Bytes ``start``-``end`` of the log that are not whole entries, with whole entries after them."""

    start: int
    end: int
    tables: list[str]  # the tables that lost records in it (see ``read_log``)


@dataclass
class LogRead:
    tables: dict[str, list[bytes]]  # every unfinished table's record frames, in the order the tables began
    torn: bool  # something followed the last good entry (a crash mid-write, or garbage) and was dropped
    valid_bytes: int  # where the torn tail begins (the size of the log if there is none)
    damaged: list[Damage] = field(default_factory=list)  # regions in the middle, each with whole entries after it
    torn_tables: list[str] = field(default_factory=list)  # the tables a torn tail's first entry belongs to, if known
    unsequenced: bool = False  # some entry has no seq (written before entries had one)
    cut_short: bool = False  # the torn tail is what a crash leaves: an entry cut short, or zeros
    starts: dict[str, int] = field(default_factory=dict)  # where each table's first entry is (a whole log's only)

    @property
    def hit(self) -> dict[str, list[Damage]]:
        """Each table that lost records in the middle of the log, and where."""
        out: dict[str, list[Damage]] = {}
        for region in self.damaged:
            for table_id in region.tables:
                out.setdefault(table_id, []).append(region)
        return out


def _entry_at(data: bytes, pos: int) -> tuple[str, int | None, bytes, int] | None:
    """The whole entry at ``pos``: its table, seq (None: the older format), record frame and end; None if the
    bytes there are not one. What a header claims is checked before the CRC (the record frame's own length
    must fit the entry), so that looking for the next entry in a long damaged region costs little."""
    if pos + ENTRY.size > len(data):
        return None
    length, crc, flagged = ENTRY.unpack_from(data, pos)
    name_len, has_seq = flagged & ~HAS_SEQ, flagged & HAS_SEQ
    start, end = pos + ENTRY.size, pos + ENTRY.size + length
    body = start + name_len + (SEQ.size if has_seq else 0)
    if not 0 < name_len <= MAX_ID or body > end or length > MAX_RECORD or end > len(data):
        return None
    if end > body and (end - body < FRAME.size or FRAME.unpack_from(data, body)[0] != end - body - FRAME.size):
        return None
    if zlib.crc32(data[start:end]) != crc:
        return None
    try:
        table_id = data[start:start + name_len].decode()
    except UnicodeDecodeError:
        return None
    seq = SEQ.unpack_from(data, body - SEQ.size)[0] if has_seq else None
    return table_id, seq, data[body:end], end


def _resync(data: bytes, start: int) -> int | None:
    """Where the next whole entry from ``start`` on begins (None: nowhere). Only where the bytes could be an
    entry's header is one looked for (``_HEADER``): a long damaged region is crossed at the regex engine's speed."""
    for match in _HEADER.finditer(data, start):
        if _entry_at(data, match.start()) is not None:
            return match.start()
    return None


def _owner(region: bytes, candidates: dict[str, int | None]) -> tuple[str | None, bool, bool]:
    """Which table the damaged ``region`` (taken as one entry) belonged to, when that can be told: of the
    ``candidates`` (table -> the seq its entry there would have), the one whose id and seq make the entry's CRC
    hold (the damage was in them, or in the length), else the one whose id and seq the region holds where they
    should be (the damage is elsewhere in the entry); failing any, a table the region names with seq 0 (its first
    record). None when it cannot be told, or more than one table fits. Then whether the CRC told it (every byte
    of the entry is there), and whether the region is that one entry and nothing more (the CRC told it, or the
    entry's length is the region's)."""
    if len(region) < ENTRY.size:
        return None, False, False
    length, crc, flagged = ENTRY.unpack_from(region)
    checked = len(region) <= OWNER_CRC_BYTES  # a longer region is no one entry worth a CRC per live table

    def fit(tables: dict[str, int | None]) -> tuple[list[str], bool]:
        by_crc, in_place = [], []
        for table_id, seq in tables.items():
            name = table_id.encode()
            number = b"" if seq is None else SEQ.pack(seq)
            frame_at = ENTRY.size + len(name) + len(number)
            if checked and zlib.crc32(region[frame_at:], zlib.crc32(number, zlib.crc32(name))) == crc:
                by_crc.append(table_id)
            elif region[ENTRY.size:frame_at] == name + number:
                in_place.append(table_id)
        return (by_crc, True) if by_crc else (in_place, False)

    fits, by_crc = fit(candidates)
    if not fits and flagged & HAS_SEQ:
        try:
            named = region[ENTRY.size:ENTRY.size + (flagged & ~HAS_SEQ)].decode()
        except UnicodeDecodeError:
            named = ""
        fits, by_crc = fit({named: 0}) if named and named not in candidates else ([], False)
    if len(fits) != 1:
        return None, False, False
    return fits[0], by_crc, by_crc or ENTRY.size + length == len(region)


def _add(region: Damage, table_id: str) -> None:
    if table_id not in region.tables:
        region.tables.append(table_id)


def _scan(data: bytes) -> tuple[list[tuple[str, int | None, bytes] | Damage], int]:
    """The log's whole entries (table, seq, frame) and the damaged regions between them, in order; and where
    the torn tail begins (the end of the last whole entry)."""
    items: list[tuple[str, int | None, bytes] | Damage] = []
    pos = 0
    while pos < len(data):
        entry = _entry_at(data, pos)
        if entry is None:
            after = _resync(data, pos + 1)
            if after is None:
                break
            items.append(Damage(pos, after, []))
            pos = after
            continue
        table_id, seq, frame, pos = entry
        items.append((table_id, seq, frame))
    return items, pos


def read_log(path: str) -> LogRead:
    """The log's unfinished tables. An entry that is cut short or fails its check, with whole entries after it,
    is damage: reading goes on at the next whole entry, and the tables that lost records in it are told: the
    table the damaged entry was (when that can be told: ``_owner``) and, unless the region is just that entry,
    every table whose next entry after it is not the next of its sequence, and, when the damaged entry's table
    cannot be told, every table with no entry after it. What follows the last whole entry is a torn tail,
    dropped (a write a crash cut short), unless it is a whole entry of a table that can be told, not cut short
    nor zero-ended: a crash does not write that, so it is damage too."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return LogRead({}, False, 0)
    return parse_log(data)


def parse_log(data: bytes) -> LogRead:
    """``read_log`` of the log's bytes: a log of whole entries in one tight pass (``_whole``); one that is not,
    in two (``_damaged``)."""
    return _whole(data) or _damaged(data)


def _whole(data: bytes) -> LogRead | None:
    """The log, if every entry of it is whole (None at the first that is not)."""
    tables: dict[str, list[bytes]] = {}
    starts: dict[str, int] = {}
    names: dict[bytes, str] = {}
    unsequenced, pos, size, unpack, unpack_frame, crc32 = False, 0, len(data), ENTRY.unpack_from, FRAME.unpack_from, \
        zlib.crc32
    while pos + ENTRY.size <= size:
        length, crc, flagged = unpack(data, pos)
        name_len = flagged & ~HAS_SEQ
        start, end = pos + ENTRY.size, pos + ENTRY.size + length
        body = start + name_len + (SEQ.size if flagged & HAS_SEQ else 0)
        if not 0 < name_len <= MAX_ID or body > end or length > MAX_RECORD or end > size or \
                crc32(data[start:end]) != crc:
            return None
        if end > body and (end - body < FRAME.size or unpack_frame(data, body)[0] != end - body - FRAME.size):
            return None  # the CRC holds, but not where the id ends: its length was changed
        raw = data[start:start + name_len]
        table_id = names.get(raw)
        if table_id is None:
            try:
                table_id = names[raw] = raw.decode()
            except UnicodeDecodeError:
                return None
        unsequenced = unsequenced or not flagged & HAS_SEQ
        if end > body:
            frames = tables.get(table_id)
            if frames is None:
                frames = tables[table_id] = []
                starts[table_id] = pos
            frames.append(data[body:end])
        else:
            tables.pop(table_id, None)
        pos = end
    return LogRead(tables, False, pos, unsequenced=unsequenced, starts=starts) if pos == size else None


def _damaged(data: bytes) -> LogRead:
    """The log, with its damaged regions and torn tail (see ``read_log``)."""
    items, valid = _scan(data)
    after_of: dict[int, dict[str, tuple[int | None, bool]]] = {}  # each region: each table's next entry after it
    following: dict[str, tuple[int | None, bool]] = {}
    for n in range(len(items) - 1, -1, -1):
        item = items[n]
        if isinstance(item, Damage):
            after_of[n] = dict(following)
        else:
            following[item[0]] = (item[1], bool(item[2]))
    tables: dict[str, list[bytes]] = {}
    expected: dict[str, int | None] = {}  # each live table's next seq (None: its entries have none)
    seen: set[str] = set()
    damaged: list[Damage] = []
    unsequenced = False
    for n, item in enumerate(items):
        if isinstance(item, Damage):
            after = after_of[n]
            candidates = {**{t: s - 1 for t, (s, _) in after.items() if t not in seen and s}, **expected}
            owner, _, alone = _owner(data[item.start:item.end], candidates)
            if owner is not None:
                _add(item, owner)
            for table_id, wanted in ({} if alone else expected).items():  # alone: no other table lost anything
                if table_id in after:
                    seq, record = after[table_id]
                    if record and (seq is None or wanted is None or seq != wanted):
                        _add(item, table_id)  # records of it are missing (or cannot be shown whole)
                elif owner is None:
                    _add(item, table_id)  # no entry after it: its last ones may be in the damage
            damaged.append(item)
            continue
        table_id, seq, frame = item
        unsequenced = unsequenced or seq is None
        if damaged and seq and table_id not in seen and frame:
            _add(damaged[-1], table_id)  # its first records were lost: in the last damage, or before
        seen.add(table_id)
        if frame:
            tables.setdefault(table_id, []).append(frame)
            expected[table_id] = None if seq is None else seq + 1
        else:
            tables.pop(table_id, None)
            expected.pop(table_id, None)
    tail = data[valid:]
    owner, whole, _ = _owner(tail, expected) if tail else (None, False, False)
    crash = not whole and (len(tail) < ENTRY.size or ENTRY.size + ENTRY.unpack_from(tail)[0] > len(tail) or
                           tail.endswith(bytes(8)))  # cut short, or zeros where its last page was not written
    if tail and not crash and owner is not None:  # a whole last entry failing its check: damage, not a torn tail
        damaged.append(Damage(valid, len(data), [owner]))
        valid = len(data)
    return LogRead(tables, valid < len(data), valid, damaged, [owner] if owner and valid < len(data) else [],
                   unsequenced, crash)


def walk(f: BinaryIO, start: int, stop: int) -> Iterator[tuple[bytes, int, int, int]]:
    """Each entry of the log open as ``f`` from byte ``start`` (an entry's first) up to byte ``stop``, read
    ``WALK_BYTES`` at a time: a buffer holding it, where in the buffer it begins and ends, and where in the log it
    begins. An entry cut short where the log ends ends the walk (a round being written); a header that cannot be
    an entry's raises ``JournalCorrupt``. Nothing of an entry is checked but its header (see ``_entry_at``)."""
    f.seek(start)
    buf, pos, base, left = b"", 0, start, stop - start  # base: where in the log the buffer begins
    while True:
        if pos + ENTRY.size <= len(buf):
            length, _, flagged = ENTRY.unpack_from(buf, pos)
            if not 0 < flagged & ~HAS_SEQ <= MAX_ID or length > MAX_RECORD:
                raise JournalCorrupt(f"the log has no entry at byte {base + pos}")
            end = pos + ENTRY.size + length
            if end <= len(buf):
                yield buf, pos, end, base + pos
                pos = end
                continue
            want = end - len(buf)
        else:
            want = pos + ENTRY.size - len(buf)
        more = f.read(min(left, max(WALK_BYTES, want))) if left > 0 else b""
        if not more:
            return
        left -= len(more)
        buf, base, pos = buf[pos:] + more, base + pos, 0


def _named(buf: bytes, pos: int, name: bytes) -> bool:
    """Whether the entry at ``pos`` is one of the table whose id is ``name``."""
    return ENTRY.unpack_from(buf, pos)[2] & ~HAS_SEQ == len(name) and \
        buf[pos + ENTRY.size:pos + ENTRY.size + len(name)] == name


def table_frames(f: BinaryIO, table_id: str, start: int, count: int) -> list[bytes]:
    """The first ``count`` record frames of a live table in the log open as ``f``, its first entry at ``start``:
    walked through (``walk``), only the table's own entries kept and checked. ``JournalCorrupt`` if the log does
    not hold them whole and in sequence."""
    name, frames = table_id.encode(), list[bytes]()
    if count <= 0:
        return frames
    for buf, pos, end, at in walk(f, start, os.fstat(f.fileno()).st_size):
        if not _named(buf, pos, name):
            continue
        entry = _entry_at(buf, pos)
        if entry is None:
            raise JournalCorrupt(f"{table_id}: its entry at byte {at} of the log fails its check")
        _, seq, frame, _ = entry
        if not frame or seq == 0:
            frames = []  # an earlier table of the same id ended, or began again
            if not frame:
                continue
        if seq != len(frames):
            raise JournalCorrupt(f"{table_id}: record {seq} at byte {at} of the log, where {len(frames)} was due")
        frames.append(frame)
        if len(frames) == count:
            return frames
    raise JournalCorrupt(f"{table_id}: {len(frames)} of its {count} records in the log")


def copy_tables(f: BinaryIO, size: int, out: int, tables: dict[str, tuple[int, int]]) -> dict[str, int]:
    """Copy to the file ``out`` (at its start) the entries of ``tables`` (table -> where its first entry is and
    how many records it has) from the log open as ``f`` (its first ``size`` bytes), in the log's order,
    ``WALK_BYTES`` written at a time; where each table's first entry is in the copy. Every entry copied is
    checked; ``JournalCorrupt`` if one fails, or a table's records are not all there in sequence."""
    wanted = {table_id.encode(): (table_id, start, count) for table_id, (start, count) in tables.items() if count}
    copied = dict.fromkeys(tables, 0)
    starts: dict[str, int] = {}
    chunks: list[bytes] = []
    held = written = 0  # bytes in ``chunks``, and written before them
    run: tuple[bytes, int] = (b"", 0)  # entries to copy from a buffer, one after the other: the buffer, the first
    run_end = -1  # and where they end
    unpack, unpack_seq, unpack_frame, crc32 = ENTRY.unpack_from, SEQ.unpack_from, FRAME.unpack_from, zlib.crc32
    first = min((start for _, start, _ in wanted.values()), default=size)
    for buf, pos, end, at in walk(f, first, size):
        length, crc, flagged = unpack(buf, pos)
        begin = pos + ENTRY.size
        name_end = begin + (flagged & ~HAS_SEQ)
        table = wanted.get(buf[begin:name_end])
        if table is None or at < table[1]:
            continue
        table_id, _, count = table
        n, body = copied[table_id], name_end + SEQ.size
        if not flagged & HAS_SEQ or n >= count or body + FRAME.size > end or unpack_seq(buf, name_end)[0] != n or \
                unpack_frame(buf, body)[0] != end - body - FRAME.size or crc32(buf[begin:end]) != crc:
            raise JournalCorrupt(f"{table_id}: its entry at byte {at} of the log is not its record {n}")
        if run[0] is not buf or run_end != pos:
            if run_end >= 0:
                chunks.append(run[0][run[1]:run_end])
            run, run_end = (buf, pos), pos
        if not n:
            starts[table_id] = written + held
        copied[table_id] = n + 1
        held += end - pos
        run_end = end
        if held >= WALK_BYTES:
            chunks.append(run[0][run[1]:run_end])
            write_fully(out, b"".join(chunks))
            chunks, written, held, run, run_end = [], written + held, 0, (b"", 0), -1
    if run_end >= 0:
        chunks.append(run[0][run[1]:run_end])
    write_fully(out, b"".join(chunks))
    for table_id, (_, count) in tables.items():
        if copied[table_id] != count:
            raise JournalCorrupt(f"{table_id}: {copied[table_id]} of its {count} records in the log")
    return starts


def read_table(path: str, table_id: str) -> list[RawRecord]:
    """An unfinished table's records in the log at ``path`` (none if it has none, or is finished)."""
    return decode_frames(read_log(path).tables.get(table_id, []), f"{table_id} in {path}")
