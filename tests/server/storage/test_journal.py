"""The write-ahead log: a table's record frames, the log's entries, torn tails, corruption, group commit and
durability callbacks."""

from __future__ import annotations

import os
import stat
import struct
import threading
import time
import zlib

import msgpack
import pytest
import trio

from server.storage import log_read
from server.storage.journal import (ENTRY, FRAME, GIL_GIVEN_S, MAX_RECORD, Journal, JournalCorrupt, Syncer, Writer,
                            encode_entry, encode_record, read_journal, read_log, read_table)
from server.storage.log_read import copy_tables, table_frames

RECORDS = [
    {"k": "table", "id": "t1", "game": "parsimonia", "seats": 3, "seed": 2**63 - 1, "time_scale": 12.5,
     "options": {"turn_ms": 2000}},
    {"k": "join", "name": "Zoë ☃", "token": "tok-" + "x" * 40},
    {"k": "start", "at": 0},
    {"k": "cmd", "at": 4_000_000_000_123, "seat": 2, "command": {"type": "close", "auction": 7, "winner": None}},
    {"k": "cmd", "at": 4_000_000_000_124, "seat": 0, "command": {"type": "vote_end", "agree": True}},
    {"k": "tick", "at": 4_000_000_000_200},
]


def write_records(path, records) -> list[int]:
    """Write framed records; return the byte offset where each one starts."""
    starts, pos = [], 0
    with open(path, "wb") as f:
        for record in records:
            frame = encode_record(record)
            starts.append(pos)
            f.write(frame)
            pos += len(frame)
    return starts


def flip(path, offset: int, mask: int = 0xFF) -> None:
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)[0]
        f.seek(offset)
        f.write(bytes([byte ^ mask]))


def log_of(tmp_path, policy: str = "fsync") -> tuple[Syncer, Journal]:
    """A log at ``tmp_path/log`` and table t1's journal in it."""
    syncer = Syncer(str(tmp_path / "log"), str(tmp_path), policy)
    return syncer, syncer.open("t1")


async def run_journal(syncer: Syncer, journal: Journal, work) -> None:
    """Run the syncer while ``work`` appends, until what it appended is durable."""
    async with trio.open_nursery() as nursery:
        nursery.start_soon(syncer.run)
        await work()
        journal.after_durable(nursery.cancel_scope.cancel)


# ------------------------------------------------------------------ framing


def test_frame_is_length_crc_then_msgpack_payload():
    frame = encode_record({"k": "tick", "at": 5})
    length, crc = struct.unpack_from("<II", frame)
    payload = frame[FRAME.size:]
    assert length == len(payload) and crc == zlib.crc32(payload)
    assert msgpack.unpackb(payload) == {"k": "tick", "at": 5}


def test_records_round_trip_through_a_file(tmp_path):
    path = tmp_path / "t1.journal"
    write_records(path, RECORDS)
    read = read_journal(str(path))
    assert read.records == RECORDS
    assert read.torn is False and read.valid_bytes == path.stat().st_size


async def test_records_appended_through_the_journal_read_back_in_order(tmp_path):
    syncer, journal = log_of(tmp_path)

    async def work() -> None:
        for record in RECORDS:
            journal.append(record)
            await trio.sleep(0)

    await run_journal(syncer, journal, work)
    assert read_table(syncer.path, "t1") == RECORDS and not read_log(syncer.path).torn


def test_an_empty_file_has_no_records_and_is_not_torn(tmp_path):
    path = tmp_path / "t1.journal"
    path.write_bytes(b"")
    read = read_journal(str(path))
    assert read.records == [] and read.torn is False and read.valid_bytes == 0


# ------------------------------------------------------------------ torn tails and corruption


def test_a_last_record_cut_at_any_byte_is_dropped_and_reported_torn(tmp_path):
    path = tmp_path / "t1.journal"
    starts = write_records(path, RECORDS)
    whole = path.read_bytes()
    last = starts[-1]
    for cut in range(last + 1, len(whole)):  # every length that ends inside the last record
        path.write_bytes(whole[:cut])
        read = read_journal(str(path))
        assert read.records == RECORDS[:-1], cut
        assert read.torn is True and read.valid_bytes == last, cut
    path.write_bytes(whole[:last])  # cut exactly between records: nothing is torn
    read = read_journal(str(path))
    assert read.records == RECORDS[:-1] and read.torn is False and read.valid_bytes == last


def test_a_last_record_whose_payload_was_half_zeroed_counts_as_torn(tmp_path):
    """A power cut: the file grew, the record's last page never came."""
    path = tmp_path / "t1.journal"
    starts = write_records(path, RECORDS)
    whole = path.read_bytes()
    path.write_bytes(whole[:starts[-1] + 12] + bytes(len(whole) - starts[-1] - 12))
    read = read_journal(str(path))
    assert read.records == RECORDS[:-1] and read.torn is True and read.valid_bytes == starts[-1]


def test_a_whole_last_record_with_a_flipped_byte_is_corrupt_not_torn(tmp_path):
    """No crash writes a whole record that fails its check: a replay file's last record (its result) changed is
    refused, not read as an unfinished game."""
    path = tmp_path / "t1.journal"
    write_records(path, RECORDS)
    flip(path, path.stat().st_size - 1)
    with pytest.raises(JournalCorrupt, match="checksum"):
        read_journal(str(path))


@pytest.mark.parametrize("middle", [1, 3])
def test_a_flipped_byte_in_a_middle_record_raises_journal_corrupt(tmp_path, middle):
    """Every byte of the record, header included: damage before the tail is never mistaken for a torn
    tail, which would silently drop the whole records after it."""
    path = tmp_path / "t1.journal"
    starts = write_records(path, RECORDS)
    whole = path.read_bytes()
    for offset in range(starts[middle], starts[middle + 1]):
        for mask in (0xFF, 0x01, 0x80):
            path.write_bytes(whole)
            flip(path, offset, mask)
            with pytest.raises(JournalCorrupt) as info:
                read_journal(str(path))
            assert str(path) in str(info.value), (offset, mask)


def test_a_record_that_is_not_a_journal_record_is_corrupt(tmp_path):
    path = tmp_path / "t1.journal"
    payload = msgpack.packb([1, 2, 3])
    path.write_bytes(encode_record(RECORDS[0]) + FRAME.pack(len(payload), zlib.crc32(payload)) + payload
                     + encode_record(RECORDS[1]))
    with pytest.raises(JournalCorrupt, match="not a journal record"):
        read_journal(str(path))


def test_a_length_over_the_maximum_is_corrupt_not_torn(tmp_path):
    path = tmp_path / "t1.journal"
    path.write_bytes(encode_record(RECORDS[0]) + FRAME.pack(MAX_RECORD + 1, 0) + b"\x00" * 16)
    with pytest.raises(JournalCorrupt, match="claims"):
        read_journal(str(path))


# ------------------------------------------------------------------ the log's entries


def test_an_entry_is_length_crc_id_length_then_the_id_and_the_tables_record_frame():
    frame = encode_record(RECORDS[0])
    entry = encode_entry("t12", frame)
    length, crc, name_len = ENTRY.unpack_from(entry)
    assert (length, name_len) == (3 + len(frame), 3) and entry[ENTRY.size:] == b"t12" + frame
    assert crc == zlib.crc32(b"t12" + frame)


def test_the_log_gives_each_unfinished_tables_frames_in_order(tmp_path):
    path = tmp_path / "log"
    t1, t2 = [encode_record(r) for r in RECORDS[:3]], [encode_record(r) for r in RECORDS[3:]]
    path.write_bytes(b"".join(encode_entry(t, f) for t, f in [("t1", t1[0]), ("t2", t2[0]), ("t1", t1[1]),
                                                               ("t3", t1[0]), ("t2", t2[1]), ("t1", t1[2]),
                                                               ("t3", b""), ("t2", t2[2])]))
    read = read_log(str(path))
    assert read.tables == {"t1": t1, "t2": t2} and not read.torn  # t3 ended
    assert read_table(str(path), "t2") == RECORDS[3:] and read_table(str(path), "t3") == []


def test_a_log_entry_cut_at_any_byte_loses_only_that_entry(tmp_path):
    path = tmp_path / "log"
    entries = [encode_entry("t1", encode_record(r)) for r in RECORDS]
    whole = b"".join(entries[:-1])
    for cut in range(1, len(entries[-1])):
        path.write_bytes(whole + entries[-1][:cut])
        read = read_log(str(path))
        assert read.torn and read.valid_bytes == len(whole) and len(read.tables["t1"]) == len(RECORDS) - 1


@pytest.mark.parametrize("at", [0, 5, 9, 20])
def test_a_flipped_byte_in_the_middle_of_the_log_is_damage_to_its_table_and_reading_goes_on(tmp_path, at):
    path = tmp_path / "log"
    entries = [encode_entry("t1", encode_record(r)) for r in RECORDS]
    path.write_bytes(b"".join(entries))
    start = len(entries[0]) + len(entries[1])
    flip(path, start + at)
    read = read_log(str(path))
    assert not read.torn and [(d.start, d.end, d.tables) for d in read.damaged] == [
        (start, start + len(entries[2]), ["t1"])]
    assert read.tables["t1"] == [encode_record(r) for i, r in enumerate(RECORDS) if i != 2]


def test_no_log_is_an_empty_log(tmp_path):
    read = read_log(str(tmp_path / "log"))
    assert read.tables == {} and not read.torn and read.valid_bytes == 0


# ------------------------------------------------------------------ group commit and durability


async def test_appends_made_while_a_sync_runs_share_the_next_sync(tmp_path):
    syncer, journal = log_of(tmp_path)
    inside_first, release_first = threading.Event(), threading.Event()
    real_write = syncer._write
    calls: list[int] = []

    def slow_first_write(data: bytes, tables: list[str]) -> None:
        calls.append(len(data))
        if len(calls) == 1:
            inside_first.set()
            release_first.wait(10)
        real_write(data, tables)

    syncer._write = slow_first_write  # type: ignore[method-assign]
    durable_at: list[int] = []

    async def work() -> None:
        journal.append({"k": "tick", "at": 0})
        journal.after_durable(lambda: durable_at.append(syncer.rounds))
        await trio.to_thread.run_sync(inside_first.wait, 10)  # the first sync is running now
        for n in range(1, 100):
            journal.append({"k": "tick", "at": n})
            journal.after_durable(lambda: durable_at.append(syncer.rounds))
            await trio.sleep(0)
        assert durable_at == []  # nothing is acknowledged while the first sync runs
        release_first.set()

    await run_journal(syncer, journal, work)
    assert syncer.rounds == 2 < 100
    assert len(calls) == 2
    assert calls[1] == sum(len(encode_entry("t1", encode_record({"k": "tick", "at": n}), n)) for n in range(1, 100))
    assert durable_at == [1] + [2] * 99
    assert [r["at"] for r in read_table(syncer.path, "t1")] == list(range(100))


async def test_many_appends_need_fewer_syncs_than_records(tmp_path):
    syncer, journal = log_of(tmp_path)
    appended = 0

    async def work() -> None:
        nonlocal appended
        for burst in range(20):
            for _ in range(25):
                journal.append({"k": "tick", "at": appended})
                appended += 1
            await trio.sleep(0)

    await run_journal(syncer, journal, work)
    assert 1 <= syncer.rounds < appended // 5
    assert len(read_table(syncer.path, "t1")) == appended


async def test_callbacks_run_in_order_once_their_records_are_on_disk(tmp_path):
    syncer, journal = log_of(tmp_path)
    seen: list[tuple[int, int]] = []  # (callback number, records in the file when it ran)

    def callback(n: int) -> None:
        seen.append((n, len(read_table(syncer.path, "t1"))))

    async def work() -> None:
        for n in range(60):
            journal.append({"k": "tick", "at": n})
            journal.after_durable(lambda n=n: callback(n))
            if n % 7 == 0:
                await trio.sleep(0)
        assert len(seen) < 60

    await run_journal(syncer, journal, work)
    assert [n for n, _ in seen] == list(range(60))
    assert all(on_disk >= n + 1 for n, on_disk in seen)


async def test_a_callback_with_nothing_pending_runs_at_once(tmp_path):
    syncer, journal = log_of(tmp_path)
    ran: list[str] = []
    journal.after_durable(lambda: ran.append("now"))
    assert ran == ["now"]

    async def work() -> None:
        journal.append({"k": "tick", "at": 1})
        journal.after_durable(lambda: ran.append("later"))
        assert ran == ["now"]

    await run_journal(syncer, journal, work)
    assert ran == ["now", "later"]
    journal.after_durable(lambda: ran.append("after"))
    assert ran == ["now", "later", "after"]


@pytest.mark.parametrize(("policy", "syncs"), [("fsync", True), ("write", False)])
async def test_policy_decides_whether_a_round_syncs(tmp_path, monkeypatch, policy, syncs):
    calls: list[int] = []
    real = os.fdatasync
    monkeypatch.setattr(os, "fdatasync", lambda fd: (calls.append(fd), real(fd))[1])
    syncer, journal = log_of(tmp_path, policy)
    durable: list[int] = []

    async def work() -> None:
        for n in range(5):
            journal.append({"k": "tick", "at": n})
            journal.after_durable(lambda n=n: durable.append(len(read_table(syncer.path, "t1"))))
            await trio.sleep(0.01)

    await run_journal(syncer, journal, work)
    # written before acknowledged, either way (a slow round may take the next record too)
    assert len(durable) == 5 and all(on_disk >= n + 1 for n, on_disk in enumerate(durable))
    assert (len(calls) == syncer.rounds) if syncs else calls == []


@pytest.mark.parametrize(("policy", "in_the_loop"), [("fsync", False), ("write", True)])
async def test_the_write_policy_writes_from_the_loops_thread_and_fsync_hands_the_round_to_the_writer(
        tmp_path, policy, in_the_loop):
    syncer, journal = log_of(tmp_path, policy)
    threads: list[bool] = []
    real_write = syncer._write

    def write(data: bytes, tables: list[str]) -> None:
        threads.append(threading.current_thread() is threading.main_thread())
        real_write(data, tables)

    syncer._write = write  # type: ignore[method-assign]

    async def work() -> None:
        journal.append({"k": "tick", "at": 1})

    await run_journal(syncer, journal, work)
    assert threads == [in_the_loop]
    assert len(read_table(syncer.path, "t1")) == 1


async def test_a_hand_off_not_back_soon_has_the_loops_thread_let_go_of_the_gil_until_it_is(monkeypatch):
    """Under load the loop's thread makes a system call every few microseconds, taking the GIL back each time
    before the writer thread wakes to take it: a round's hand-off waited 0.1-0.9 s when a crowd of connections
    left (measured). While a hand-off is out, the loop lets go of the GIL for a moment each time it has waited."""
    writer, given = Writer(), []
    inside, release = threading.Event(), threading.Event()
    real_sleep = time.sleep

    def held() -> str:  # the writer thread busy, as with a slow sync
        inside.set()
        release.wait(10)
        return "written"

    def sleep(seconds: float) -> None:
        if seconds == GIL_GIVEN_S and inside.is_set():
            given.append(seconds)
            if len(given) == 3:
                release.set()
        real_sleep(seconds)

    monkeypatch.setattr(time, "sleep", sleep)
    writer.start()
    try:
        assert await writer.run(held) == "written"
    finally:
        writer.stop()
    assert len(given) >= 3  # it kept letting go until the hand-off came back


async def test_a_hand_off_known_to_take_a_while_has_the_loop_give_up_the_gil_only_once_that_is_over(monkeypatch):
    """The log's rounds are spaced by a sleep in the writer thread: the loop need not let go of the GIL while it
    lasts (under the storm that was half the moments given up)."""
    writer, given, loop = Writer(), [], threading.get_ident()
    real_sleep = time.sleep

    def sleep(seconds: float) -> None:
        if seconds == GIL_GIVEN_S and threading.get_ident() == loop:
            given.append(time.monotonic())
        real_sleep(seconds)

    def held(seconds: float) -> str:  # the spacing sleep, then a slow sync
        real_sleep(seconds + 0.02)
        return "written"

    monkeypatch.setattr(time, "sleep", sleep)
    writer.start()
    try:
        began = time.monotonic()
        assert await writer.run(held, 0.05, takes_s=0.05) == "written"
    finally:
        writer.stop()
    assert given and min(given) >= began + 0.05  # nothing given while the known part lasted, then as before


def test_an_unknown_policy_is_refused(tmp_path):
    for policy in ("off", "syncfs", "sometimes"):
        with pytest.raises(ValueError, match="fsync or write"):
            Syncer(str(tmp_path / "log"), str(tmp_path), policy)


def test_the_log_is_readable_by_its_owner_only(tmp_path):
    old = os.umask(0)
    try:
        syncer, _ = log_of(tmp_path)
    finally:
        os.umask(old)
    syncer.close()
    assert stat.S_IMODE(os.stat(tmp_path / "log").st_mode) == 0o600


def test_a_zero_filled_tail_is_torn_not_corrupt(tmp_path):
    """After a power cut the file may end in zeros where the last writes were going."""
    path = tmp_path / "t1.journal"
    records = [{"k": "table", "id": "t1"}, {"k": "tick", "at": 5}]
    path.write_bytes(b"".join(encode_record(r) for r in records) + bytes(4096))
    read = read_journal(str(path))
    assert read.records == records and read.torn
    assert read.valid_bytes == len(path.read_bytes()) - 4096


def _log_of(path, entries: list[tuple[str, int, bytes]]) -> dict[str, int]:
    """A log at ``path`` of ``entries`` (table, seq, frame; an empty frame ends the table), and where each table's
    last first entry is."""
    starts, size = {}, 0
    with open(path, "wb") as f:
        for table_id, seq, frame in entries:
            if seq == 0 and frame:
                starts[table_id] = size
            size += f.write(encode_entry(table_id, frame, seq))
    return starts


def _frames(table_id: str, count: int) -> list[bytes]:
    return [encode_record({"k": "tick", "table": table_id, "at": n, "pad": "z" * (n * 37 % 300)}) for n in range(count)]


@pytest.mark.parametrize("walk_bytes", [64, 1 << 20])
def test_a_tables_records_and_the_live_tables_copy_are_read_from_the_log_walked_a_bounded_chunk_at_a_time(
        tmp_path, monkeypatch, walk_bytes):
    monkeypatch.setattr(log_read, "WALK_BYTES", walk_bytes)
    old, t1, t2 = _frames("t1", 3), _frames("t1", 40), _frames("t2", 30)
    entries = [("t1", n, frame) for n, frame in enumerate(old)] + [("t1", 3, b"")]  # an earlier t1, finished
    entries += [e for n in range(40) for e in ([("t1", n, t1[n])] + ([("t2", n, t2[n])] if n < 30 else []))]
    starts = _log_of(tmp_path / "log", entries)
    with open(tmp_path / "log", "rb") as f:
        assert table_frames(f, "t1", starts["t1"], 25) == t1[:25]
        assert table_frames(f, "t1", 0, 40) == t1  # from the log's start: the earlier t1's end is passed
        with pytest.raises(JournalCorrupt):
            table_frames(f, "t2", starts["t2"], 31)
        out = os.open(tmp_path / "copy", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            copied = copy_tables(f, os.path.getsize(tmp_path / "log"), out,
                                 {"t1": (starts["t1"], 40), "t2": (starts["t2"], 30)})
        finally:
            os.close(out)
    read = read_log(str(tmp_path / "copy"))
    assert read.tables == {"t1": t1, "t2": t2} and read.starts == copied and not read.unsequenced
    assert os.path.getsize(tmp_path / "copy") == sum(len(encode_entry(t, fr, n)) for t, fs in (("t1", t1), ("t2", t2))
                                                     for n, fr in enumerate(fs))


def test_a_copy_of_the_live_tables_refuses_a_damaged_or_missing_entry(tmp_path):
    t1, t2 = _frames("t1", 10), _frames("t2", 10)
    starts = _log_of(tmp_path / "log", [e for n in range(10) for e in (("t1", n, t1[n]), ("t2", n, t2[n]))])
    data = bytearray((tmp_path / "log").read_bytes())
    at = starts["t2"] + len(encode_entry("t2", t2[0], 0)) + len(encode_entry("t1", t1[1], 1)) + 20  # t2's 2nd
    data[at] ^= 0xFF
    (tmp_path / "bad").write_bytes(bytes(data))
    for name, tables in (("bad", {"t1": (0, 10), "t2": (starts["t2"], 10)}),
                         ("log", {"t1": (0, 11)})):
        out = os.open(tmp_path / "copy", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with open(tmp_path / name, "rb") as f, pytest.raises(JournalCorrupt):
                copy_tables(f, os.path.getsize(tmp_path / name), out, tables)
        finally:
            os.close(out)
    with open(tmp_path / "bad", "rb") as f:
        assert table_frames(f, "t1", 0, 10) == t1  # t1's own entries are whole
        with pytest.raises(JournalCorrupt):
            table_frames(f, "t2", starts["t2"], 10)
