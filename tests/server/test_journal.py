"""The write-ahead journal: framing, torn tails, corruption, group commit and durability callbacks."""

from __future__ import annotations

import os
import stat
import struct
import threading
import zlib

import msgpack
import pytest
import trio

from server import journal as journal_module
from server.journal import FRAME, Journal, JournalCorrupt, Syncer, encode_record, read_journal

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


async def run_journal(journal: Journal, work) -> None:
    """Run a syncer for the journal while ``work`` appends, then let it finish what is pending."""
    syncer = Syncer()
    syncer.add(journal)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(syncer.run)
        await work()
        journal.finish()
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
    path = str(tmp_path / "t1.journal")
    journal = Journal(path, "fsync")

    async def work() -> None:
        for record in RECORDS:
            journal.append(record)
            await trio.sleep(0)

    await run_journal(journal, work)
    assert journal.closed
    read = read_journal(path)
    assert read.records == RECORDS and not read.torn


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


def test_a_last_record_whose_payload_was_half_overwritten_counts_as_torn(tmp_path):
    path = tmp_path / "t1.journal"
    starts = write_records(path, RECORDS)
    flip(path, path.stat().st_size - 1)
    read = read_journal(str(path))
    assert read.records == RECORDS[:-1] and read.torn is True and read.valid_bytes == starts[-1]


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
    path.write_bytes(encode_record(RECORDS[0]) + FRAME.pack(journal_module.MAX_RECORD + 1, 0) + b"\x00" * 16)
    with pytest.raises(JournalCorrupt, match="claims"):
        read_journal(str(path))


async def test_truncate_to_drops_a_torn_tail_and_appending_continues_after_it(tmp_path):
    path = str(tmp_path / "t1.journal")
    write_records(path, RECORDS)
    whole = os.path.getsize(path)
    with open(path, "ab") as f:
        f.write(encode_record({"k": "tick", "at": 9})[:-3])
    read = read_journal(path)
    assert read.torn and read.valid_bytes == whole
    journal = Journal(path, "write", truncate_to=read.valid_bytes)

    async def work() -> None:
        journal.append({"k": "tick", "at": 10})

    await run_journal(journal, work)
    again = read_journal(path)
    assert again.records == [*RECORDS, {"k": "tick", "at": 10}] and not again.torn


# ------------------------------------------------------------------ group commit and durability


async def test_appends_made_while_a_sync_runs_share_the_next_sync(tmp_path):
    path = str(tmp_path / "t1.journal")
    journal = Journal(path, "fsync")
    inside_first, release_first = threading.Event(), threading.Event()
    real_write = journal._write
    calls: list[int] = []

    def slow_first_write(data: bytes) -> None:
        calls.append(len(data))
        if len(calls) == 1:
            inside_first.set()
            release_first.wait(10)
        real_write(data)

    journal._write = slow_first_write  # type: ignore[method-assign]
    durable_at: list[int] = []

    async def work() -> None:
        journal.append({"k": "tick", "at": 0})
        journal.after_durable(lambda: durable_at.append(journal.syncs))
        await trio.to_thread.run_sync(inside_first.wait, 10)  # the first sync is running now
        for n in range(1, 100):
            journal.append({"k": "tick", "at": n})
            journal.after_durable(lambda: durable_at.append(journal.syncs))
            await trio.sleep(0)
        assert durable_at == []  # nothing is acknowledged while the first sync runs
        release_first.set()

    await run_journal(journal, work)
    assert journal.syncs == 2 < 100
    assert len(calls) == 2 and calls[1] == sum(len(encode_record({"k": "tick", "at": n})) for n in range(1, 100))
    assert durable_at == [1] + [2] * 99
    assert [r["at"] for r in read_journal(path).records] == list(range(100))


async def test_many_appends_need_fewer_syncs_than_records(tmp_path):
    path = str(tmp_path / "t1.journal")
    journal = Journal(path, "fsync")
    appended = 0

    async def work() -> None:
        nonlocal appended
        for burst in range(20):
            for _ in range(25):
                journal.append({"k": "tick", "at": appended})
                appended += 1
            await trio.sleep(0)

    await run_journal(journal, work)
    assert 1 <= journal.syncs < appended // 5
    assert len(read_journal(path).records) == appended


async def test_callbacks_run_in_order_once_their_records_are_on_disk(tmp_path):
    path = str(tmp_path / "t1.journal")
    journal = Journal(path, "fsync")
    seen: list[tuple[int, int]] = []  # (callback number, records in the file when it ran)

    def callback(n: int) -> None:
        seen.append((n, len(read_journal(path).records)))

    async def work() -> None:
        for n in range(60):
            journal.append({"k": "tick", "at": n})
            journal.after_durable(lambda n=n: callback(n))
            if n % 7 == 0:
                await trio.sleep(0)
        assert len(seen) < 60

    await run_journal(journal, work)
    assert [n for n, _ in seen] == list(range(60))
    assert all(on_disk >= n + 1 for n, on_disk in seen)


async def test_a_callback_with_nothing_pending_runs_at_once(tmp_path):
    journal = Journal(str(tmp_path / "t1.journal"), "fsync")
    ran: list[str] = []
    journal.after_durable(lambda: ran.append("now"))
    assert ran == ["now"]

    async def work() -> None:
        journal.append({"k": "tick", "at": 1})
        journal.after_durable(lambda: ran.append("later"))
        assert ran == ["now"]

    await run_journal(journal, work)
    assert ran == ["now", "later"]
    journal.after_durable(lambda: ran.append("after"))
    assert ran == ["now", "later", "after"]


@pytest.mark.parametrize("syncfs", [True, False], ids=["syncfs", "fsync-per-journal"])
@pytest.mark.parametrize(("policy", "syncs"), [("fsync", True), ("write", False)])
async def test_policy_decides_whether_a_round_syncs(tmp_path, monkeypatch, policy, syncs, syncfs):
    calls: list[int] = []
    if syncfs:
        monkeypatch.setattr(journal_module, "SYNCFS", lambda fd: (calls.append(fd), os.fsync(fd))[1])
    else:
        real_fsync = os.fsync
        monkeypatch.setattr(journal_module, "SYNCFS", None)
        monkeypatch.setattr(journal_module.os, "fsync", lambda fd: (calls.append(fd), real_fsync(fd))[1])
    path = str(tmp_path / "t1.journal")
    journal = Journal(path, "syncfs" if syncfs and policy == "fsync" else policy)
    durable: list[int] = []

    async def work() -> None:
        for n in range(5):
            journal.append({"k": "tick", "at": n})
            journal.after_durable(lambda n=n: durable.append(len(read_journal(path).records)))
            await trio.sleep(0.01)

    await run_journal(journal, work)
    assert durable == [1, 2, 3, 4, 5]  # written before acknowledged, either way
    assert (len(calls) == journal.syncs) if syncs else calls == []


def test_an_unknown_policy_is_refused(tmp_path):
    for policy in ("off", "sometimes"):
        with pytest.raises(ValueError, match="fsync, syncfs or write"):
            Journal(str(tmp_path / "t1.journal"), policy)


def test_journal_file_is_readable_by_its_owner_only(tmp_path):
    old = os.umask(0)
    try:
        journal = Journal(str(tmp_path / "t1.journal"), "fsync")
    finally:
        os.umask(old)
    journal.close()
    assert stat.S_IMODE(os.stat(tmp_path / "t1.journal").st_mode) == 0o600


def test_a_zero_filled_tail_is_torn_not_corrupt(tmp_path):
    """After a power cut the file may end in zeros where the last writes were going."""
    path = tmp_path / "t1.journal"
    records = [{"k": "table", "id": "t1"}, {"k": "tick", "at": 5}]
    path.write_bytes(b"".join(encode_record(r) for r in records) + bytes(4096))
    read = read_journal(str(path))
    assert read.records == records and read.torn
    assert read.valid_bytes == len(path.read_bytes()) - 4096
