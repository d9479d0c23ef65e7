"""The data directory: recovering every table on start, setting aside what cannot be trusted, archiving
finished games, and where the server clock and the table numbers start again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any
from unittest.mock import ANY

import pytest
import trio
from structlog.testing import capture_logs

from server.runtime.app import Server, ServerConfig
from server.storage.journal import Syncer, encode_entry, encode_record, read_journal, read_log, read_table
from server.core.match import Match
from server.storage.clock import MAX_AHEAD_MS
from server.storage.datadir import IDS_AHEAD, DataDir, DataDirBusy
from tests.server.conftest import connect, create_table, join


OPTIONS = {"opening_ms": 600_000, "turn_ms": 600_000, "game_ms": 3_600_000, "quiet_ms": 60_000}


def table_records(table_id: str, *, at: int = 1000, seed: int = 7) -> list[dict[str, Any]]:
    """A two-seat table that started at ``at`` and where seat 0 declared ready 500 ms later."""
    return [
        {"k": "table", "id": table_id, "game": "parsimonia", "seats": 2, "seed": seed, "time_scale": 1.0,
         "options": OPTIONS},
        {"k": "join", "name": "ada", "token": f"{table_id}-token-ada-0123456789"},
        {"k": "join", "name": "bob", "token": f"{table_id}-token-bob-0123456789"},
        {"k": "start", "at": at},
        {"k": "cmd", "at": at + 500, "seat": 0, "command": {"type": "ready"}},
    ]


def write_journal(path: str, records: list[dict[str, Any]], tail: bytes = b"") -> int:
    """A per-table journal (a replay file, or an old server's journal): the records and ``tail`` bytes after
    them; the size of the whole records."""
    data = b"".join(encode_record(r) for r in records)
    with open(path, "wb") as f:
        f.write(data + tail)
    return len(data)


def write_log(path: str, tables: dict[str, list[dict[str, Any]]], tail: bytes = b"") -> int:
    """A shared log holding each table's records (the tables one after the other), then ``tail``; the size of
    the whole entries."""
    data = b"".join(encode_entry(table_id, encode_record(r)) for table_id, records in tables.items()
                    for r in records)
    with open(path, "wb") as f:
        f.write(data + tail)
    return len(data)


def layout(root: Any) -> DataDir:
    """The directory's paths, without holding it: the server under test takes it."""
    data = DataDir(str(root))
    data.close()
    return data


def names(directory: str) -> list[str]:
    return sorted(os.listdir(directory))


def in_log(data: DataDir) -> list[str]:
    return sorted(read_log(data.log_path).tables)


# ------------------------------------------------------------------ recovery


async def test_tables_whose_records_do_not_replay_are_set_aside_and_logged_while_the_others_recover(
        start_server, tmp_path, autojump_clock):
    data = layout(tmp_path)
    write_log(data.log_path, {
        "t1": table_records("t1", seed=1),
        "t3": table_records("t3", seed=3),
        "t5": [*table_records("t5"),  # a command the rules refuse at that point
               {"k": "cmd", "at": 1600, "seat": 1, "command": {"type": "end_turn"}}],
        "t6": table_records("t6")[1:],  # no table record at its start
    })
    with capture_logs() as logged:
        server = await start_server(data_dir=str(tmp_path))
    assert sorted(server.lobby.tables) == ["t1", "t3"]
    assert names(data.corrupt) == ["t5.journal", "t6.journal"]
    set_aside = {e["journal"]: e for e in logged if e["event"] == "journal_set_aside"}
    assert sorted(set_aside) == ["t5.journal", "t6.journal"]
    assert all(e["log_level"] == "error" and e["why"] for e in set_aside.values())
    assert "does not replay" in set_aside["t5.journal"]["why"]
    assert read_journal(os.path.join(data.corrupt, "t6.journal")).records == table_records("t6")[1:]

    for table_id in ("t1", "t3"):
        t = server.lobby.tables[table_id]
        assert t.state == "running" and [s.token for s in t.match.seats] == [r["token"] for r in
                                                                       table_records(table_id)[1:3]]
        assert t.match.engine.ready == {0} and t.match.seed == int(table_id[1:])
    async with connect(server, "ada") as ada:
        token = table_records("t3")[1]["token"]
        assert (await ada.request("resume", table="t3", token=token, last_seq=0))["type"] == "resumed"
        assert (await ada.request("act", table="t3", command={"type": "vote_end", "agree": True}))["type"] == "ok"
        assert (await ada.request("view", table="t5"))["code"] == "no_such_table"
        # new tables are numbered after every table the directory holds, the corrupt ones included
        assert await create_table(ada, 2) == "t7"
    assert in_log(data) == ["t1", "t3", "t7"]  # the set-aside ones left it


async def test_an_old_servers_per_table_journals_are_moved_into_the_log_on_start(start_server, tmp_path,
                                                                                autojump_clock):
    data = layout(tmp_path)
    os.makedirs(data.legacy)
    for n in (1, 2, 3):
        write_journal(os.path.join(data.legacy, f"t{n}.journal"), table_records(f"t{n}", seed=n))
    with open(os.path.join(data.legacy, "t2.journal"), "r+b") as f:  # a byte flipped in its second record
        f.seek(len(encode_record(table_records("t2")[0])) + 12)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0x55]))
    with open(os.path.join(data.legacy, "t4.journal"), "wb"):
        pass  # created, but its first record never reached the disk: dropped
    with capture_logs() as logged:
        server = await start_server(data_dir=str(tmp_path))
    assert sorted(server.lobby.tables) == ["t1", "t3"]
    assert names(data.corrupt) == ["t2.journal"] and not os.path.exists(data.legacy)
    assert in_log(data) == ["t1", "t3"]
    assert read_table(data.log_path, "t3") == table_records("t3", seed=3)
    events = {e["event"]: e for e in logged}
    assert "checksum" in events["journal_set_aside"]["why"] and events["journal_never_created_dropped"]
    async with connect(server, "ada") as ada:
        assert await create_table(ada, 2) == "t4"  # nobody was ever told of the dropped one


async def test_a_torn_tail_of_the_log_is_dropped_and_the_log_grows_after_it(start_server, tmp_path,
                                                                          autojump_clock):
    data = layout(tmp_path)
    records = table_records("t1")
    torn = encode_entry("t1", encode_record({"k": "cmd", "at": 1700, "seat": 1, "command": {"type": "ready"}}))
    whole = write_log(data.log_path, {"t1": records}, tail=torn[:-5])
    assert read_log(data.log_path).torn

    with capture_logs() as logged:
        server = await start_server(data_dir=str(tmp_path))
    assert [e for e in logged if e["event"] == "log_torn_tail_dropped"][0]["kept_bytes"] == whole
    t = server.lobby.tables["t1"]
    assert t.match.engine.ready == {0}  # the torn "ready" of seat 1 is not part of the game
    async with connect(server, "bob") as bob:
        assert (await bob.request("resume", table="t1", token=records[2]["token"], last_seq=0))["type"] == "resumed"
        reply = await bob.request("act", table="t1", command={"type": "vote_end", "agree": True})
        assert reply["type"] == "ok"
    after = read_log(data.log_path)
    assert not after.torn and after.valid_bytes == os.path.getsize(data.log_path) > whole
    assert read_table(data.log_path, "t1") == [*records, {"k": "cmd", "at": ANY, "seat": 1,
                                                          "command": {"type": "vote_end", "agree": True}}]


def test_a_flipped_byte_costs_only_its_table_and_a_garbage_tail_only_itself(tmp_path, captured_logs):
    data = layout(tmp_path)
    good = write_log(data.log_path, {"t1": table_records("t1"), "t2": table_records("t2")})
    with open(data.log_path, "r+b") as f:  # a byte flipped in t2's third record
        f.seek(good - 3 * len(encode_entry("t2", encode_record(table_records("t2")[-1]))))
        f.write(b"\xff")
    with open(data.log_path, "ab") as f:
        f.write(os.urandom(300))
    original = open(data.log_path, "rb").read()
    read = read_log(data.log_path)
    assert read.torn and read.tables["t1"] == [encode_record(r) for r in table_records("t1")]
    assert list(read.hit) == ["t2"]
    data = DataDir(str(tmp_path))
    try:
        assert [r.table_id for r in data.recover()] == ["t1"]
        assert not read_log(data.log_path).torn and in_log(data) == ["t1"]  # compacted to what was good
    finally:
        data.close()
    kept = [n for n in names(data.corrupt) if n.startswith("log-")]
    assert names(data.corrupt) == [*kept, "t2.damaged", "t2.journal"] and len(kept) == 1
    assert open(os.path.join(data.corrupt, kept[0]), "rb").read() == original
    assert len(read_journal(os.path.join(data.corrupt, "t2.journal")).records) == len(table_records("t2")) - 1
    events = [json.loads(line)["event"] for line in captured_logs.getvalue().splitlines()]
    assert events.count("journal_set_aside") == 1 and "log_damaged_kept" in events


def test_a_table_whose_end_entry_is_in_the_log_is_not_recovered(tmp_path):
    data = layout(tmp_path)
    write_log(data.log_path, {"t1": table_records("t1"), "t2": table_records("t2")}, tail=encode_entry("t1", b""))
    data = DataDir(str(tmp_path))
    try:
        assert [r.table_id for r in data.recover()] == ["t2"]
        assert data.next_table_number() == 3
    finally:
        data.close()


# ------------------------------------------------------------------ the clock


def test_start_ms_is_no_earlier_than_any_record_or_the_heartbeat(tmp_path):
    data = DataDir(str(tmp_path))
    assert data.start_ms(data.recover()) == 0  # a new directory
    write_log(data.log_path, {"t1": table_records("t1", at=1000),
                              "t2": [*table_records("t2", at=5000), {"k": "tick", "at": 7250}]})
    recovered = data.recover()
    assert data.start_ms(recovered) == 7250
    for heartbeat, expected in (("9000", 9000), ("3000", 7250), ("garbage", 7250), ("", 7250)):
        with open(data.clock_path, "w") as f:
            f.write(heartbeat)
        assert data.start_ms(recovered) == expected, heartbeat
    os.remove(data.log_path)
    with open(data.clock_path, "w") as f:
        f.write("123456")
    assert data.start_ms(data.recover()) == 123456
    data.close()


def test_a_clock_file_that_is_a_fifo_a_directory_or_garbage_is_refused_in_one_line(tmp_path, captured_logs):
    """A FIFO is never waited on (it hung the start); the journals' times are used instead."""
    write_log(layout(tmp_path).log_path, {"t1": table_records("t1", at=1000)})
    data = DataDir(str(tmp_path))
    try:
        recovered = data.recover()
        for make in (os.mkfifo, os.mkdir, lambda path: open(path, "w").write("1e12")):
            make(data.clock_path)
            assert data.start_ms(recovered) == 1500  # the last record
            (os.rmdir if os.path.isdir(data.clock_path) else os.remove)(data.clock_path)
    finally:
        data.close()
    refused = [line for line in captured_logs.getvalue().splitlines() if "clock_file_refused" in line]
    assert len(refused) == 3


async def test_server_time_continues_from_the_heartbeat_and_is_kept_in_it(start_server, tmp_path, autojump_clock):
    with open(os.path.join(tmp_path, "clock"), "w") as f:
        f.write("86400000")
    server = await start_server(data_dir=str(tmp_path))
    async with connect(server) as client:
        welcome = client.frames[0]
        assert 86_400_000 <= welcome["server_time"] < 86_400_000 + 1000
        await trio.sleep(5)
        pong = await client.request("ping")
        assert pong["server_time"] >= 86_405_000
    with open(os.path.join(tmp_path, "clock")) as f:
        assert 86_404_000 <= int(f.read()) <= pong["server_time"]


# ------------------------------------------------------------------ finished games and table numbers


async def test_a_finished_table_is_archived_to_replays(start_server, tmp_path, autojump_clock):
    data = layout(tmp_path)
    server = await start_server(data_dir=str(tmp_path))
    async with connect(server, "ada") as ada, connect(server, "bob") as bob:
        table = await create_table(ada, 2, seed=3, options=OPTIONS)
        await join(ada, table)
        await join(bob, table)
        assert in_log(data) == [table]
        for client in (ada, bob):
            assert (await client.request("act", table=table, command={"type": "vote_end", "agree": True}))["type"] \
                == "ok"
        result = (await ada.event("result"))["event"]["result"]
    assert result["reason"] == "agreement"
    with trio.fail_after(10):  # written behind the log, once the last records are durable
        while in_log(data):
            await trio.sleep(0.01)
    assert names(data.replays) == [f"{table}.journal"]
    replay = read_journal(os.path.join(data.replays, f"{table}.journal"))
    assert [r["k"] for r in replay.records] == ["table", "join", "join", "start", "cmd", "cmd", "end"]
    assert replay.records[-1]["result"] == result and not replay.torn


async def test_a_table_that_ended_just_before_a_crash_is_archived_on_start(start_server, tmp_path, autojump_clock):
    data = layout(tmp_path)
    records = [*table_records("t1"), {"k": "cmd", "at": 1600, "seat": 1, "command": {"type": "quit"}}]
    # what the table recorded live: the end, with its result
    live = Match.replay(records)
    assert live.state == "over"
    records.append({"k": "end", "at": 1600, "result": live.result})
    write_log(data.log_path, {"t1": records})
    server = await start_server(data_dir=str(tmp_path))
    with trio.fail_after(10):
        while in_log(data):
            await trio.sleep(0.01)
    assert names(data.replays) == ["t1.journal"]
    assert server.lobby.tables["t1"].state == "over"
    assert read_journal(os.path.join(data.replays, "t1.journal")).records == records


async def test_table_numbers_continue_after_the_highest_journal(start_server, tmp_path, autojump_clock):
    data = layout(tmp_path)
    write_journal(os.path.join(data.replays, "t3.journal"), table_records("t3"))
    write_journal(os.path.join(data.replays, "t12.journal"), table_records("t12"))
    write_log(data.log_path, {"t4": table_records("t4")})
    assert data.next_table_number() == 13
    server = await start_server(data_dir=str(tmp_path))
    async with connect(server) as client:
        assert [await create_table(client, 2) for _ in range(2)] == ["t13", "t14"]
    assert sorted(server.lobby.tables) == ["t13", "t14", "t4"]


# ------------------------------------------------------------------ one process per directory


def test_a_second_opener_of_a_directory_is_refused_with_the_holders_pid_until_it_closes(tmp_path):
    first = DataDir(str(tmp_path))
    with pytest.raises(DataDirBusy) as refused:
        DataDir(str(tmp_path))
    assert str(refused.value) == (f"data directory {tmp_path} is in use by process {os.getpid()}; "
                                  "stop it or use another --data (under make: DATA=...)")
    assert isinstance(refused.value, OSError)
    first.close()
    DataDir(str(tmp_path)).close()


def test_deleting_the_lock_file_does_not_let_a_second_opener_in(tmp_path):
    first = DataDir(str(tmp_path))
    os.remove(tmp_path / "lock")
    with pytest.raises(DataDirBusy, match="in use by another process;"):
        DataDir(str(tmp_path))
    first.close()
    DataDir(str(tmp_path)).close()


def test_a_lock_held_by_another_process_is_refused_and_freed_when_that_process_dies(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom server.storage.datadir import DataDir\n"
                               f"DataDir({str(tmp_path)!r})\nprint('held', flush=True)\ntime.sleep(60)"],
                              stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": os.getcwd()})
    try:
        assert holder.stdout.readline() == b"held\n"
        with pytest.raises(DataDirBusy, match=f"in use by process {holder.pid};"):
            DataDir(str(tmp_path))
    finally:
        holder.kill()
        holder.wait()
    DataDir(str(tmp_path)).close()  # the dead process's lock went with it, though its pid is still in the file


async def test_a_second_server_on_a_data_directory_in_use_does_not_start(start_server, tmp_path, autojump_clock):
    server = await start_server(data_dir=str(tmp_path))
    with pytest.raises(DataDirBusy):
        await Server(ServerConfig(host="127.0.0.1", port=0, data_dir=str(tmp_path))).run()
    async with connect(server) as client:  # the first one carries on
        assert await create_table(client, 2) == "t1"


def test_a_compaction_cut_short_before_its_rename_leaves_the_old_log_to_recover(tmp_path):
    """A crash while the log was being rewritten (on start, or a checkpoint) leaves ``log.new`` half written
    beside the old log: the old log is what recovers, and the next rewrite replaces the leftover."""
    data = layout(tmp_path)
    write_log(data.log_path, {"t1": table_records("t1"), "t2": table_records("t2")})
    with open(data.log_path + ".new", "wb") as f:
        f.write(encode_entry("t1", encode_record(table_records("t1")[0]))[:-9])
    data = DataDir(str(tmp_path))
    try:
        assert [r.table_id for r in data.recover()] == ["t1", "t2"]
        assert not os.path.exists(data.log_path + ".new") and in_log(data) == ["t1", "t2"]
    finally:
        data.close()


class Interrupted(Exception):
    """Where the process died: every call before it happened, that one and all after it did not."""


@pytest.mark.parametrize("step", ["open", "half-write", "fdatasync", "replace", "fsync-directory", "reopen"])
def test_a_checkpoint_interrupted_at_any_step_recovers_every_live_table_and_nothing_else(tmp_path, monkeypatch,
                                                                                        step):
    """A checkpoint rewrites the log to the live tables' records (``Syncer.compact``): new file beside it, its
    bytes, its sync, the rename, the directory's sync, the log reopened. Killed before any of those steps, the
    next start recovers the same tables with the same records: the old log or the new one, never a mix."""
    data = layout(tmp_path)
    live = {"t1": table_records("t1"), "t2": table_records("t2", seed=9)}
    write_log(data.log_path, {**live, "t3": table_records("t3")})
    with open(data.log_path, "ab") as f:
        f.write(encode_entry("t3", b""))  # t3 finished: the checkpoint leaves it out
    syncer = Syncer(data.log_path, data.replays)
    frames = read_log(data.log_path).tables
    assert sorted(frames) == ["t1", "t2"]
    real = {name: getattr(os, name) for name in ("open", "write", "fdatasync", "replace", "fsync")}
    opened = 0

    def at(name: str, call: Any) -> Any:
        def interrupted(*args: Any) -> Any:
            nonlocal opened
            if name == "open":
                opened += 1
                if (step == "open" and opened == 1) or (step == "reopen" and opened == 3):  # log.new, dir, log
                    raise Interrupted(step)
            if name == "write" and step == "half-write":
                real["write"](args[0], bytes(args[1])[:len(args[1]) // 2])
                raise Interrupted(step)
            if (name, step) in (("fdatasync", "fdatasync"), ("replace", "replace"), ("fsync", "fsync-directory")):
                raise Interrupted(step)
            return call(*args)
        return interrupted

    for name, call in real.items():
        monkeypatch.setattr(os, name, at(name, call))
    with pytest.raises(Interrupted):
        syncer.compact(frames)
    monkeypatch.undo()
    syncer.close()
    data = DataDir(str(tmp_path))
    try:
        recovered = {r.table_id: r.records for r in data.recover()}
        assert recovered == live
        assert in_log(data) == ["t1", "t2"] and not os.path.exists(data.log_path + ".new")
        assert names(data.corrupt) == []
    finally:
        data.close()


def test_table_numbers_handed_out_stay_taken_after_a_restart_whatever_became_of_their_tables(tmp_path):
    data = DataDir(str(tmp_path))
    data.recover()
    assert data.next_table_number() == 1
    data.reserve_table_numbers(1)  # t1 handed out; then its table, its log and everything else lost
    data.close()
    os.remove(tmp_path / "log")
    again = DataDir(str(tmp_path))
    again.recover()
    assert again.next_table_number() == 1 + IDS_AHEAD
    again.reserve_table_numbers(1 + IDS_AHEAD)
    again.reserve_table_numbers(2 + IDS_AHEAD)  # within the reserve: nothing written
    assert (tmp_path / "ids").read_text() == f"{1 + 2 * IDS_AHEAD}\n"
    again.close()


@pytest.mark.parametrize("text", ["x1\n", "", "-5", "1e12"])
def test_an_ids_file_that_is_not_a_number_is_refused_in_one_line(tmp_path, captured_logs, text):
    (tmp_path / "ids").write_text(text)  # a FIFO or a directory there is set aside (tests/server/storage/test_aside.py)
    data = DataDir(str(tmp_path))
    data.recover()
    assert data.next_table_number() == 1
    assert len([line for line in captured_logs.getvalue().splitlines() if "ids_file_refused" in line]) == 1
    data.close()


def test_a_clock_file_far_ahead_of_the_journals_is_refused_in_one_line_and_their_time_used(tmp_path, captured_logs):
    """Set to 1e12 ms, it ended every recovered game at once (all their deadlines passed)."""
    write_log(layout(tmp_path).log_path, {"t1": table_records("t1", at=1000)})
    data = DataDir(str(tmp_path))
    try:
        recovered = data.recover()
        for heartbeat, expected in ((10**12, 1500), (1500 + MAX_AHEAD_MS + 1, 1500), (1500 + MAX_AHEAD_MS, None)):
            with open(data.clock_path, "w") as f:
                f.write(str(heartbeat))
            assert data.start_ms(recovered) == (heartbeat if expected is None else expected)
    finally:
        data.close()
    refused = [line for line in captured_logs.getvalue().splitlines() if "clock_file_refused" in line]
    assert len(refused) == 2 and "ahead of the journals" in refused[0]
