"""One log for every table of a data directory: one write, one sync and one thread hand-off per round, the
rounds spaced under load; a failure stops every table; finished tables go to their replay files; checkpoints
compact the log."""

from __future__ import annotations

import gc
import os
import threading
import time
import tracemalloc
from collections.abc import Callable

import trio

from server.storage import journal as journal_module
from server.storage import log_read
from server.storage.journal import Journal, Syncer, encode_entry, read_journal, read_log, read_table


def log_in(tmp_path, policy: str = "fsync", **kw) -> Syncer:
    return Syncer(str(tmp_path / "log"), str(tmp_path), policy, **kw)


async def tick_each(syncer: Syncer, journals: list[Journal], until: Callable[[list[int]], bool]) -> list[int]:
    """Run ``syncer``, append one record to each journal, wait until ``until(durable)``: the journals made
    durable so far, by number."""
    durable: list[int] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(syncer.run)
        for n, journal in enumerate(journals):
            journal.append({"k": "tick", "at": n})
            journal.after_durable(lambda n=n: durable.append(n))
        await trio.testing.wait_all_tasks_blocked()
        while not until(durable):
            await trio.sleep(0.001)
        nursery.cancel_scope.cancel()
    return durable


async def test_one_round_makes_every_tables_records_durable_with_one_write_and_one_sync(tmp_path, monkeypatch):
    writes: list[int] = []
    syncs: list[int] = []
    real_write, real_sync = os.write, os.fdatasync
    monkeypatch.setattr(os, "write", lambda fd, data: (writes.append(fd), real_write(fd, data))[1])
    monkeypatch.setattr(os, "fdatasync", lambda fd: (syncs.append(fd), real_sync(fd))[1])
    syncer = log_in(tmp_path)
    journals = [syncer.open(f"t{n}") for n in range(50)]
    durable = await tick_each(syncer, journals, lambda durable: len(durable) == 50)
    assert syncer.rounds == 1 and len(writes) == 1 and len(syncs) == 1
    assert sorted(durable) == list(range(50))
    assert read_table(syncer.path, "t0") == [{"k": "tick", "at": 0}]
    assert len(read_log(syncer.path).tables) == 50


async def test_descriptors_do_not_grow_with_the_number_of_tables(tmp_path):
    syncer = log_in(tmp_path)
    before = len(os.listdir("/proc/self/fd"))
    journals = [syncer.open(f"t{n}") for n in range(2000)]
    await tick_each(syncer, journals, lambda durable: len(durable) == 2000)
    assert len(os.listdir("/proc/self/fd")) <= before + 1  # trio's own wake-up pipe may come and go


async def test_records_appended_during_a_round_wait_for_the_next(tmp_path):
    syncer = log_in(tmp_path)
    first, second = syncer.open("t1"), syncer.open("t2")
    order: list[str] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(syncer.run)
        first.append({"k": "tick", "at": 1})
        first.after_durable(lambda: order.append("first"))
        await trio.testing.wait_all_tasks_blocked()  # the round with t1 is under way or done
        second.append({"k": "tick", "at": 2})
        second.after_durable(lambda: order.append("second"))
        with trio.fail_after(5):
            while len(order) < 2:
                await trio.sleep(0.001)
        nursery.cancel_scope.cancel()
    assert order == ["first", "second"] and syncer.rounds == 2


async def test_a_round_starts_at_once_on_an_idle_log_and_no_sooner_than_round_ms_after_the_last(tmp_path):
    syncer = log_in(tmp_path, round_ms=200, aligned=False)  # free rounds (aligned ones: test_journal_rounds.py)
    syncer._write = lambda data, tables: None  # type: ignore[method-assign]  # the spacing, not the disk
    began: list[float] = []
    real_round = syncer._round

    async def round_noted() -> None:
        began.append(syncer._round_began)  # when the syncer took the round to begin (time.monotonic())
        await real_round()

    syncer._round = round_noted  # type: ignore[method-assign]
    journal = syncer.open("t1")

    async def acknowledged(at: int) -> None:
        acked = trio.Event()
        journal.append({"k": "tick", "at": at})
        journal.after_durable(acked.set)
        await acked.wait()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(syncer.run)
        asked = [time.monotonic()]
        await acknowledged(1)
        asked.append(time.monotonic())
        await acknowledged(2)  # right behind the first round: it waits out the spacing
        await trio.sleep(0.5)
        asked.append(time.monotonic())
        await acknowledged(3)
        nursery.cancel_scope.cancel()
    assert syncer.rounds == 3
    assert began[1] - began[0] >= 0.2
    assert began[0] - asked[0] < began[1] - asked[1] and began[2] - asked[2] < began[1] - asked[1]


async def test_a_failed_write_stops_every_table_and_keeps_what_was_durable(tmp_path):
    syncer = log_in(tmp_path, "write")
    journals = [syncer.open(f"t{n}") for n in range(3)]
    stopped: list[tuple[str, int]] = []
    for journal in journals:
        journal.on_failure = lambda exc, t=journal.table_id: stopped.append((t, exc.errno))
    await tick_each(syncer, journals, lambda durable: len(durable) == 3)

    def disk_full(data: bytes, tables: list[str]) -> None:
        raise OSError(28, "No space left on device")

    syncer._write = disk_full  # type: ignore[method-assign]
    told: list[str] = []
    acknowledged: list[str] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(syncer.run)
        journals[1].append({"k": "tick", "at": 9})
        journals[1].after_durable(lambda: acknowledged.append("t1"), lambda exc: told.append(exc.strerror))
        with trio.fail_after(5):
            while len(stopped) < 3:
                await trio.sleep(0.001)
        nursery.cancel_scope.cancel()
    assert sorted(stopped) == [("t0", 28), ("t1", 28), ("t2", 28)]
    assert told == ["No space left on device"] and acknowledged == []
    late = syncer.open("t3")  # a table created after the failure is refused at once
    late.after_durable(lambda: acknowledged.append("t3"), lambda exc: told.append("t3"))
    assert late.failed is not None and told[-1] == "t3" and acknowledged == []
    assert {t: len(frames) for t, frames in read_log(syncer.path).tables.items()} == {"t0": 1, "t1": 1, "t2": 1}


async def test_a_finished_table_becomes_its_replay_file_and_leaves_the_log(tmp_path):
    syncer = log_in(tmp_path)
    done, playing = syncer.open("t1"), syncer.open("t2")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(syncer.run)
        for n in range(3):
            done.append({"k": "tick", "at": n})
            playing.append({"k": "tick", "at": n})
            await trio.sleep(0)
        done.finish()
        with trio.fail_after(5):
            while not (tmp_path / "t1.journal").exists():
                await trio.sleep(0.001)
        playing.append({"k": "tick", "at": 3})  # a round after the export also makes t1's end durable
        with trio.fail_after(5):
            while len(read_table(syncer.path, "t2")) < 4 or "t1" in read_log(syncer.path).tables:
                await trio.sleep(0.001)
        nursery.cancel_scope.cancel()
    assert read_journal(str(tmp_path / "t1.journal")).records == [{"k": "tick", "at": n} for n in range(3)]
    assert list(read_log(syncer.path).tables) == ["t2"] and done.closed


async def test_a_log_past_its_size_is_compacted_to_the_live_tables_records(tmp_path):
    syncer = log_in(tmp_path, checkpoint_bytes=4000)
    live, done = syncer.open("t1"), syncer.open("t2")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(syncer.run)
        for n in range(100):
            live.append({"k": "tick", "at": n})
            done.append({"k": "tick", "at": n})
            await trio.sleep(0)
        done.finish()
        with trio.fail_after(5):
            while syncer.checkpoints < 2 or not (tmp_path / "t2.journal").exists():
                live.append({"k": "tick", "at": 100})
                await trio.sleep(0.01)
        nursery.cancel_scope.cancel()
    read = read_log(syncer.path)
    assert list(read.tables) == ["t1"] and not read.torn
    assert read_table(syncer.path, "t1") == [{"k": "tick", "at": n} for n in range(100)] + \
        [{"k": "tick", "at": 100}] * (len(read.tables["t1"]) - 100)
    kept = sum(len(encode_entry("t1", frame, n)) for n, frame in enumerate(read.tables["t1"]))
    assert os.path.getsize(syncer.path) <= kept + len(encode_entry("t2", b"", 100))  # t2's records are gone
    assert not (tmp_path / "log.new").exists()


async def test_a_table_whose_replay_file_cannot_be_written_keeps_its_records_through_a_checkpoint(tmp_path):
    (tmp_path / "replays").mkdir()
    syncer = Syncer(str(tmp_path / "log"), str(tmp_path / "replays"), "fsync", checkpoint_bytes=4000)
    live, done = syncer.open("t1"), syncer.open("t2")
    (tmp_path / "replays" / "t2.journal").mkdir()  # its replay file cannot be put in place
    async with trio.open_nursery() as nursery:
        nursery.start_soon(syncer.run)
        for n in range(50):
            done.append({"k": "tick", "at": n})
            await trio.sleep(0)
        done.finish()
        with trio.fail_after(5):
            while syncer.checkpoints < 2:
                live.append({"k": "tick", "at": 0})
                await trio.sleep(0.01)
        nursery.cancel_scope.cancel()
    # still in the log, so that the next start exports it again
    assert read_table(syncer.path, "t2") == [{"k": "tick", "at": n} for n in range(50)]


async def test_a_live_tables_durable_records_are_read_back_from_the_log_not_kept_in_memory(tmp_path):
    syncer = log_in(tmp_path)
    journal = syncer.open("t1")
    padding = "x" * 500
    tracemalloc.start()
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(syncer.run)
            await trio.sleep(0)
            gc.collect()
            before = tracemalloc.get_traced_memory()[0]
            for n in range(2000):
                journal.append({"k": "tick", "at": n, "pad": padding})
                if n % 100 == 99:
                    await trio.sleep(0.001)
            with trio.fail_after(5):
                while journal.durable < 2000:
                    await trio.sleep(0.001)
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - before
            records = await trio.to_thread.run_sync(journal.records())
            nursery.cancel_scope.cancel()
    finally:
        tracemalloc.stop()
    assert held < 256 * 1024, held  # the records are over 1 MB
    assert records == [{"k": "tick", "at": n, "pad": padding} for n in range(2000)]


async def test_a_tables_records_are_read_through_checkpoints_and_from_its_replay_file_once_it_left_the_log(
        tmp_path, monkeypatch):
    monkeypatch.setattr(log_read, "WALK_BYTES", 100)  # entries across the reads' and the copies' chunks
    syncer = log_in(tmp_path, checkpoint_bytes=4000)
    live, done = syncer.open("t1"), syncer.open("t2")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(syncer.run)
        for n in range(100):
            live.append({"k": "tick", "at": n})
            done.append({"k": "tick", "at": n, "pad": "y" * (n % 7) * 40})
            await trio.sleep(0)
        with trio.fail_after(5):
            while done.durable < 100:
                await trio.sleep(0.001)
        early = live.records()  # read once the log was laid out anew
        done.finish()
        with trio.fail_after(5):
            while syncer.checkpoints < 2 or not (tmp_path / "t2.journal").exists():
                for _ in range(10):
                    live.append({"k": "tick", "at": 100})
                await trio.sleep(0.01)
        nursery.cancel_scope.cancel()
    assert syncer.layout >= 2 and live.layout == syncer.layout and done.layout < syncer.layout
    assert early() == [{"k": "tick", "at": n} for n in range(100)]
    assert live.records()() == read_table(syncer.path, "t1")
    assert done.records()() == [{"k": "tick", "at": n, "pad": "y" * (n % 7) * 40} for n in range(100)]


async def test_rounds_go_on_while_a_finished_tables_records_are_read_back_for_its_replay_file(tmp_path, monkeypatch):
    release = threading.Event()
    real = journal_module.table_frames

    def slow(*args):  # a long walk through a large log
        release.wait(10)
        return real(*args)

    monkeypatch.setattr(journal_module, "table_frames", slow)
    syncer = log_in(tmp_path)
    done, playing = syncer.open("t1"), syncer.open("t2")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(syncer.run)
        done.append({"k": "tick", "at": 0})
        done.finish()
        with trio.fail_after(5):
            while not done.closed:
                await trio.sleep(0.001)
        for n in range(3):
            playing.append({"k": "tick", "at": n})
        with trio.fail_after(5):
            while playing.durable < 3:
                await trio.sleep(0.001)
        assert not (tmp_path / "t1.journal").exists() and "t1" in read_log(syncer.path).tables
        release.set()
        with trio.fail_after(5):
            while "t1" in read_log(syncer.path).tables:
                playing.append({"k": "tick", "at": 3})
                await trio.sleep(0.01)
        nursery.cancel_scope.cancel()
    assert read_journal(str(tmp_path / "t1.journal")).records == [{"k": "tick", "at": 0}]


async def test_a_rounds_callbacks_run_inside_one_hold_of_what_releasing_names(tmp_path):
    seen: list[str] = []

    class Hold:
        def __enter__(self) -> None:
            seen.append("hold")

        def __exit__(self, *exc: object) -> None:
            seen.append("let go")

    syncer = log_in(tmp_path, releasing=Hold())
    async with trio.open_nursery() as nursery:
        nursery.start_soon(syncer.run)
        for n in range(3):
            journal = syncer.open(f"t{n}")
            journal.append({"k": "tick", "at": n})
            journal.after_durable(lambda n=n: seen.append(f"t{n}"))
        with trio.fail_after(5):
            while "let go" not in seen:
                await trio.sleep(0.001)
        nursery.cancel_scope.cancel()
    assert syncer.rounds == 1
    assert seen == ["hold", "t0", "t1", "t2", "let go"]  # one hold for the round: a client's frames in one write
