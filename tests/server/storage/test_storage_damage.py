"""Damage in the log costs the tables it touches (``server.storage.datadir.recover``, ``server.storage.log_read.read_log``):
every byte of a small log of a few tables flipped in turn, random bytes of a big one, and the cases seen from
outside (first entry, middle, last entry, garbage tail). Each table either recovers whole or is set aside in
``corrupt/`` with a line; the log as found is kept; nothing else is lost."""

from __future__ import annotations

import os
import random
import zlib
from dataclasses import dataclass
from typing import Any

import pytest
from structlog.testing import capture_logs

from server.storage.journal import LogRead, encode_entry, encode_record, read_journal, read_log
from server.storage.log_read import parse_log
from server.storage.datadir import DataDir
from tests.server.conftest import connect
from tests.server.storage.test_datadir import table_records


@dataclass
class Entry:
    table: str
    index: int  # the record's index in its table
    start: int
    end: int


def tables_of(counts: dict[str, int]) -> dict[str, list[dict[str, Any]]]:
    """Each table's records: a started two-seat table, then ticks up to ``counts[table]`` records."""
    return {t: [*table_records(t, seed=n), *({"k": "tick", "at": 2000 + i} for i in range(count - 5))]
            for n, (t, count) in enumerate(counts.items(), 1)}


def interleaved(tables: dict[str, list[dict[str, Any]]], rng: random.Random | None = None) -> tuple[bytes, list[Entry]]:
    """The log a server writes for ``tables``: their entries interleaved (round robin, or at random), each with
    its record's index, as ``Journal`` writes them."""
    left = {t: list(enumerate(records)) for t, records in tables.items()}
    data, entries = bytearray(), []
    while left:
        for table in ([rng.choice(sorted(left))] if rng else list(left)):
            index, record = left[table].pop(0)
            entry = encode_entry(table, encode_record(record), index)
            entries.append(Entry(table, index, len(data), len(data) + len(entry)))
            data += entry
            if not left[table]:
                del left[table]
    return bytes(data), entries


@dataclass
class Outcome:
    recovered: dict[str, list[dict[str, Any]]]
    set_aside: list[str]  # tables in corrupt/, each with its line
    lines: list[dict[str, Any]]
    kept: bytes | None  # corrupt/log-MS


def recover(root: str, log: bytes) -> Outcome:
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "log"), "wb") as f:
        f.write(log)
    with capture_logs() as lines:
        data = DataDir(root)
        try:
            recovered = {r.table_id: r.records for r in data.recover()}
            assert sorted(read_log(data.log_path).tables) == sorted(recovered)  # the log now holds just them
        finally:
            data.close()
    corrupt = os.listdir(data.corrupt)
    logs = [n for n in corrupt if n.startswith("log-")]
    assert len(logs) <= 1
    kept = open(os.path.join(data.corrupt, logs[0]), "rb").read() if logs else None
    set_aside = sorted(n.removesuffix(".journal") for n in corrupt if n.endswith(".journal"))
    lined = sorted(e["journal"].removesuffix(".journal") for e in lines if e["event"] == "journal_set_aside")
    assert lined == set_aside  # one line each
    return Outcome(recovered, set_aside, lines, kept)


def check_flip(outcome: Outcome, tables: dict[str, list[dict[str, Any]]], entries: list[Entry], damaged: bytes,
               offset: int) -> None:
    """A byte of an entry changed: its table is set aside, every other table recovers whole, and the log as found
    is kept."""
    hit = next(e for e in entries if e.start <= offset < e.end)
    where = f"byte {offset} of {hit}"
    assert outcome.kept == damaged, where
    for table, records in tables.items():
        if table != hit.table:
            assert outcome.recovered[table] == records, where
    assert outcome.set_aside == [hit.table] and hit.table not in outcome.recovered, where


def check_read(read: LogRead, tables: dict[str, list[dict[str, Any]]], entries: list[Entry], offset: int) -> None:
    """What ``read_log`` says of a log with a byte of one entry changed: that entry's table lost records in the
    damage and nothing else did (the last entry too: no crash writes a whole entry that fails its check)."""
    hit = next(e for e in entries if e.start <= offset < e.end)
    where = f"byte {offset} of {hit}"
    for table, records in tables.items():
        if table != hit.table:
            assert read.tables[table] == [encode_record(r) for r in records], where
    assert not read.torn and [(d.start, d.end, d.tables) for d in read.damaged] == [
        (hit.start, hit.end, [hit.table])], where


def test_every_byte_of_a_small_log_changed_costs_only_the_table_whose_entry_it_is(tmp_path, monkeypatch):
    """Every byte, each with every bit flipped and with one: as read; then every eleventh (a different field of
    each entry, in turn) through the whole recovery."""
    monkeypatch.setattr(os, "fdatasync", lambda fd: None)  # hundreds of directories: the disk is not under test
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    tables = tables_of({"t1": 6, "t2": 8, "t3": 5})
    log, entries = interleaved(tables)
    for offset in range(len(log)):
        for mask in (0xFF, 0x01):
            damaged = bytearray(log)
            damaged[offset] ^= mask
            check_read(parse_log(bytes(damaged)), tables, entries, offset)
            if offset % 11 == 0 and mask == 0xFF:
                check_flip(recover(str(tmp_path / str(offset)), bytes(damaged)), tables, entries, bytes(damaged),
                           offset)


def test_random_bytes_of_a_big_log_changed_cost_only_the_table_whose_entry_it_is(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "fdatasync", lambda fd: None)
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    rng = random.Random(36)
    tables = tables_of({f"t{n}": rng.randrange(5, 60) for n in range(1, 21)})
    log, entries = interleaved(tables, rng)
    for _ in range(40):
        offset = rng.randrange(len(log))
        damaged = bytearray(log)
        damaged[offset] ^= rng.randrange(1, 256)
        check_read(parse_log(bytes(damaged)), tables, entries, offset)
        check_flip(recover(str(tmp_path / str(offset)), bytes(damaged)), tables, entries, bytes(damaged), offset)


def test_a_damaged_region_whose_table_cannot_be_told_costs_the_tables_with_a_gap_or_no_record_after_it(tmp_path):
    """A run of garbage over the ends of two entries and the start of a third: t1 continues with the next of its
    records (whole), t2's next record is not the next of its sequence, t3 has no record after the damage."""
    tables = tables_of({"t1": 8, "t2": 8, "t3": 6})
    log, entries = interleaved(tables)
    last_of_t3 = max((e for e in entries if e.table == "t3"), key=lambda e: e.index)
    at = entries.index(last_of_t3)
    first, second = entries[at - 1], entries[at]  # t2's, then t3's last
    assert (first.table, entries[at + 1].table) == ("t2", "t1")
    damaged = log[:first.start + 5] + os.urandom(second.end - first.start - 5) + log[second.end:]
    outcome = recover(str(tmp_path / "d"), damaged)
    assert outcome.set_aside == ["t2", "t3"] and outcome.recovered == {"t1": tables["t1"]}
    assert outcome.kept == damaged
    assert open(tmp_path / "d" / "corrupt" / "t2.damaged", "rb").read() == damaged[first.start:second.end]


@pytest.mark.parametrize("case", ["first entry", "middle", "last entry", "garbage tail", "cut short", "zeroed"])
def test_the_cases_seen_from_outside_keep_every_table_they_do_not_touch(tmp_path, case):
    """A damaged log is kept as found, a flipped byte in its last entry included; a tail that a crash leaves (an
    entry cut short or zeroed, or here garbage that claims more bytes than follow) is only dropped, with a line."""
    tables = tables_of({"t1": 9, "t2": 9})
    log, entries = interleaved(tables)
    if case == "garbage tail":
        damaged = log + b"\xff" + random.Random(1).randbytes(299)
    elif case == "cut short":
        damaged = log[:-7]
    elif case == "zeroed":  # a power cut: the file grew, the last page never came
        damaged = log[:entries[-1].start + 16] + bytes(entries[-1].end - entries[-1].start - 16)
    else:
        entry = {"first entry": entries[0], "middle": entries[len(entries) // 2], "last entry": entries[-1]}[case]
        damaged = log[:entry.start + 20] + bytes([log[entry.start + 20] ^ 1]) + log[entry.start + 21:]
    outcome = recover(str(tmp_path / "d"), damaged)
    assert outcome.kept == (None if case in ("garbage tail", "cut short", "zeroed") else damaged)
    expected = {"first entry": (["t1"], {"t2": tables["t2"]}),
                "middle": ([entries[len(entries) // 2].table], {}),
                "last entry": (["t2"], {"t1": tables["t1"]}),
                "garbage tail": ([], tables),
                "cut short": ([], {"t1": tables["t1"], "t2": tables["t2"][:-1]}),
                "zeroed": ([], {"t1": tables["t1"], "t2": tables["t2"][:-1]})}[case]
    torn = [e for e in outcome.lines if e["event"] == "log_torn_tail_dropped"]
    assert len(torn) == (case in ("garbage tail", "cut short", "zeroed"))
    assert outcome.set_aside == expected[0]
    if case == "middle":
        other = "t2" if expected[0] == ["t1"] else "t1"
        assert outcome.recovered == {other: tables[other]}
    else:
        assert outcome.recovered == expected[1]


def test_a_log_read_whole_is_neither_kept_aside_nor_rewritten_before_the_server_listens(tmp_path):
    """Rewriting it would write the same records (finished tables' leftovers wait for the first checkpoint); one
    with entries of the older format, without a seq, is rewritten with them."""
    tables = tables_of({"t1": 6, "t2": 6, "t3": 5})
    log, _ = interleaved(tables)
    log += encode_entry("t3", b"", 5)  # t3 finished: its replay file holds it
    os.makedirs(tmp_path / "d")
    (tmp_path / "d" / "log").write_bytes(log)
    inode = os.stat(tmp_path / "d" / "log").st_ino
    outcome = recover(str(tmp_path / "d"), log)
    assert outcome.kept is None and outcome.set_aside == []
    assert outcome.recovered == {"t1": tables["t1"], "t2": tables["t2"]}
    assert os.stat(tmp_path / "d" / "log").st_ino == inode and (tmp_path / "d" / "log").read_bytes() == log
    older = b"".join(encode_entry(t, encode_record(r)) for t, records in tables.items() for r in records)
    outcome = recover(str(tmp_path / "older"), older)
    assert outcome.recovered == tables and (tmp_path / "older" / "log").read_bytes() == b"".join(
        encode_entry(t, encode_record(r), n) for t, records in tables.items() for n, r in enumerate(records))


async def test_after_a_flip_in_the_first_entry_the_other_table_still_answers(start_server, tmp_path, autojump_clock):
    """The issue's first case: a byte of the log's first entry (t1's table record) flipped. t1 is set aside, t2
    recovers and its seat resumes, and the log is not rewritten before it is kept."""
    tables = tables_of({"t1": 7, "t2": 7})
    log, entries = interleaved(tables)
    os.makedirs(tmp_path / "d")
    (tmp_path / "d" / "log").write_bytes(log[:30] + bytes([log[30] ^ 0x10]) + log[31:])
    server = await start_server(data_dir=str(tmp_path / "d"))
    assert list(server.lobby.tables) == ["t2"]
    assert sorted(os.listdir(tmp_path / "d" / "corrupt"))[1:] == ["t1.damaged", "t1.journal"]
    assert read_journal(str(tmp_path / "d" / "corrupt" / "t1.journal")).records == tables["t1"][1:]
    async with connect(server, "bob") as bob:
        token = tables["t2"][2]["token"]
        assert (await bob.request("resume", table="t2", token=token, last_seq=0))["type"] == "resumed"
        assert (await bob.request("view", table="t1"))["code"] == "no_such_table"


def test_a_zeroed_sector_and_a_megabyte_of_garbage_mid_log_cost_only_tables_they_touch(tmp_path):
    rng = random.Random(5)
    tables = tables_of({f"t{n}": rng.randrange(5, 40) for n in range(1, 9)})
    log, entries = interleaved(tables, rng)
    for name, damaged in (("zeros", log[:1024] + bytes(512) + log[1536:]),
                          ("garbage", log[:3000] + rng.randbytes(1 << 20) + log[3000:])):
        outcome = recover(str(tmp_path / name), damaged)
        assert outcome.kept == damaged
        for table, records in tables.items():
            assert outcome.recovered.get(table) == records or table in outcome.set_aside, (name, table)
        assert len(outcome.recovered) >= 2, name  # tables with no entry in the region, and whole after it


def test_a_finished_tables_damaged_entries_leave_it_in_replays_not_in_corrupt(tmp_path):
    """Its end entry was hit: its replay file (written before that entry) holds it whole."""
    tables = tables_of({"t1": 6, "t2": 6})
    log, entries = interleaved(tables)
    end = encode_entry("t1", b"", 6)
    damaged = log + end[:12] + bytes([end[12] ^ 1]) + end[13:] + encode_entry("t2", encode_record({"k": "tick",
                                                                                                   "at": 9}), 6)
    os.makedirs(tmp_path / "d" / "replays")
    replay = b"".join(encode_record(r) for r in tables["t1"])
    (tmp_path / "d" / "replays" / "t1.journal").write_bytes(replay)
    outcome = recover(str(tmp_path / "d"), damaged)
    assert outcome.set_aside == [] and list(outcome.recovered) == ["t2"]
    assert (tmp_path / "d" / "replays" / "t1.journal").read_bytes() == replay


def test_in_an_older_log_without_seqs_a_flip_in_one_entry_costs_its_table_alone(tmp_path):
    """No seq tells whether the tables after the damage are whole; the damaged region being exactly one entry
    of one table does."""
    tables = tables_of({"t1": 6, "t2": 6, "t3": 6})
    _, entries = interleaved(tables)
    log = b"".join(encode_entry(e.table, encode_record(tables[e.table][e.index])) for e in entries)
    hit = entries[7]
    start = sum(len(encode_entry(e.table, encode_record(tables[e.table][e.index]))) for e in entries[:7])
    for at in (0, 5, 9, 11, 30):  # its length, CRC, id length, id, record
        damaged = bytearray(log)
        damaged[start + at] ^= 0x04
        read = parse_log(bytes(damaged))
        assert [d.tables for d in read.damaged] == [[hit.table]], at
        assert {t: len(f) for t, f in read.tables.items()} == {t: 6 - (t == hit.table) for t in tables}, at


def test_each_start_that_finds_damage_keeps_its_own_copy_of_the_log(tmp_path, monkeypatch):
    """Two starts in the same millisecond (the wall clock read twice alike) keep two copies, neither overwritten."""
    monkeypatch.setattr("server.storage.datadir.time.time_ns", lambda: 1_700_000_000_000_000_000)
    tables = tables_of({"t1": 6, "t2": 6})
    log, entries = interleaved(tables)
    damaged = log[:30] + bytes([log[30] ^ 1]) + log[31:]
    recover(str(tmp_path / "d"), damaged)
    again = log[:entries[3].start + 30] + bytes([log[entries[3].start + 30] ^ 1]) + log[entries[3].start + 31:]
    with open(tmp_path / "d" / "log", "wb") as f:
        f.write(again)
    data = DataDir(str(tmp_path / "d"))
    try:
        data.recover()
    finally:
        data.close()
    kept = sorted(n for n in os.listdir(tmp_path / "d" / "corrupt") if n.startswith("log-"))
    assert kept == ["log-1700000000000", "log-1700000000001"]
    assert [(tmp_path / "d" / "corrupt" / n).read_bytes() for n in kept] == [damaged, again]


def test_a_long_damaged_region_among_many_tables_is_read_past_without_a_crc_per_table(tmp_path, monkeypatch):
    """1000 live tables and 4 MiB of garbage mid-log, then a 4 MiB garbage tail that claims a length within it: the
    region is no one entry, so no table's CRC is tried over it (which would be 8 GiB of CRC)."""
    tables = {f"t{n}": [{"k": "tick", "at": n}] * 2 for n in range(1, 1001)}
    log, _ = interleaved(tables)
    garbage = random.Random(7).randbytes(4 << 20)
    damaged = log[:len(log) // 2] + garbage + log[len(log) // 2:] + (1000).to_bytes(4, "little") + garbage
    crc32, checked = zlib.crc32, [0]

    def counting(data: Any, start: int = 0) -> int:
        checked[0] += len(data)
        return crc32(data, start)

    monkeypatch.setattr("server.storage.log_read.zlib.crc32", counting)
    read = parse_log(damaged)
    assert len(read.damaged) == 1 and read.torn and not read.cut_short
    assert checked[0] < 64 << 20  # the entries, and each candidate start within the garbage, once
