"""One syncer for every journal of a data directory: one thread hand-off per round, failures kept apart."""

from __future__ import annotations

import os
from collections.abc import Callable

import trio

from server import journal as journal_module
from server.journal import Journal, Syncer, read_journal


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


async def test_one_round_writes_every_dirty_journal_in_one_thread_hand_off(tmp_path, monkeypatch):
    hand_offs: list[int] = []
    real = trio.to_thread.run_sync

    async def counted(fn, writes, **kw):
        hand_offs.append(len(writes))
        return await real(fn, writes, **kw)

    monkeypatch.setattr(trio.to_thread, "run_sync", counted)
    syncer = Syncer()
    journals = [syncer.add(Journal(str(tmp_path / f"t{n}.journal"), "fsync")) for n in range(50)]
    durable = await tick_each(syncer, journals, lambda durable: len(durable) == 50)
    assert hand_offs == [50] and syncer.rounds == 1
    assert sorted(durable) == list(range(50))
    assert all(j.closed for j in journals)  # the syncer closes what it holds when it stops
    assert [read_journal(j.path).records for j in journals[:2]] == [[{"k": "tick", "at": 0}], [{"k": "tick", "at": 1}]]


async def test_a_journal_whose_write_fails_fails_alone(tmp_path):
    syncer = Syncer()
    good = syncer.add(Journal(str(tmp_path / "t1.journal"), "write"))
    bad = syncer.add(Journal(str(tmp_path / "t2.journal"), "write"))
    failures: list[OSError] = []
    bad.on_failure = failures.append

    def disk_full(data: bytes) -> None:
        raise OSError(28, "No space left on device")

    bad._write = disk_full  # type: ignore[method-assign]
    acknowledged: list[str] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(syncer.run)
        for n in range(3):
            good.append({"k": "tick", "at": n})
            good.after_durable(lambda: acknowledged.append("good"))
            bad.append({"k": "tick", "at": n})
            bad.after_durable(lambda: acknowledged.append("bad"))
            await trio.sleep(0.01)
        good.finish()
        good.after_durable(nursery.cancel_scope.cancel)
    assert acknowledged == ["good"] * 3
    assert len(failures) == 1 and failures[0].errno == 28 and bad.failed is failures[0] and bad.closed
    assert [r["at"] for r in read_journal(good.path).records] == [0, 1, 2]


async def test_records_appended_during_a_round_wait_for_the_next(tmp_path):
    syncer = Syncer()
    journal = syncer.add(Journal(str(tmp_path / "t1.journal"), "fsync"))
    rounds_seen: list[int] = []
    real_write = journal._write

    def write(data: bytes) -> None:
        trio.from_thread.run_sync(journal.append, {"k": "tick", "at": 99})  # arrives while the round runs
        journal._write = real_write  # type: ignore[method-assign]
        real_write(data)

    journal._write = write  # type: ignore[method-assign]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(syncer.run)
        journal.append({"k": "tick", "at": 1})
        journal.after_durable(lambda: rounds_seen.append(syncer.rounds))
        await trio.sleep(0.05)
        journal.after_durable(lambda: rounds_seen.append(syncer.rounds))
        journal.finish()
        journal.after_durable(nursery.cancel_scope.cancel)
    assert rounds_seen == [1, 2]
    assert [r["at"] for r in read_journal(journal.path).records] == [1, 99]


async def test_with_the_fsync_policy_a_round_fsyncs_each_journal_even_where_syncfs_exists(tmp_path, monkeypatch):
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(journal_module, "SYNCFS", lambda fd: (_ for _ in ()).throw(AssertionError("a syncfs")))
    monkeypatch.setattr(journal_module.os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    syncer = Syncer()
    journals = [syncer.add(Journal(str(tmp_path / f"t{n}.journal"), "fsync")) for n in range(5)]
    durable = await tick_each(syncer, journals, lambda durable: len(durable) == 5)
    assert sorted(durable) == list(range(5)) and len(synced) >= 5


async def test_a_round_makes_every_journal_durable_with_one_syncfs(tmp_path, monkeypatch):
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(journal_module, "SYNCFS", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    monkeypatch.setattr(journal_module.os, "fsync", lambda fd: (_ for _ in ()).throw(AssertionError("an fsync")))
    syncer = Syncer()
    journals = [syncer.add(Journal(str(tmp_path / f"t{n}.journal"), "syncfs")) for n in range(20)]
    durable = await tick_each(syncer, journals, lambda durable: len(durable) == 20)
    assert len(synced) == syncer.rounds == 1
    assert sorted(durable) == list(range(20))


async def test_a_failed_syncfs_fails_only_the_journal_whose_fsync_fails(tmp_path, monkeypatch):
    def broken_syncfs(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(journal_module, "SYNCFS", broken_syncfs)
    syncer = Syncer()
    good = syncer.add(Journal(str(tmp_path / "t1.journal"), "syncfs"))
    bad = syncer.add(Journal(str(tmp_path / "t2.journal"), "syncfs"))
    failures: list[OSError] = []
    bad.on_failure = failures.append

    def eio() -> None:
        raise OSError(5, "Input/output error")

    bad._sync = eio  # type: ignore[method-assign]
    acknowledged: list[str] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(syncer.run)
        good.append({"k": "tick", "at": 1})
        good.after_durable(lambda: acknowledged.append("good"))
        bad.append({"k": "tick", "at": 1})
        bad.after_durable(lambda: acknowledged.append("bad"))
        good.finish()
        good.after_durable(nursery.cancel_scope.cancel)
    assert acknowledged == ["good"]
    assert len(failures) == 1 and failures[0].errno == 5 and bad.closed and not good.failed


async def test_a_failed_syncfs_that_no_fsync_explains_fails_the_whole_round(tmp_path, monkeypatch):
    def broken_syncfs(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(journal_module, "SYNCFS", broken_syncfs)
    syncer = Syncer()
    journals = [syncer.add(Journal(str(tmp_path / f"t{n}.journal"), "syncfs")) for n in range(3)]
    failures: list[str] = []
    for journal in journals:
        journal.on_failure = lambda exc, path=journal.path: failures.append(path)
    acknowledged = await tick_each(syncer, journals, lambda _: len(failures) == 3)
    assert acknowledged == [] and sorted(failures) == sorted(j.path for j in journals)


async def test_what_waits_for_a_journal_that_fails_is_told_the_error_instead(tmp_path):
    """A ``created`` held back for a table's first record becomes a refusal when the record cannot be written
    (found by tests/faults/test_disk.py: the client of a create on a full disk was never answered)."""
    syncer = Syncer()
    bad = syncer.add(Journal(str(tmp_path / "t1.journal"), "write"))

    def disk_full(data: bytes) -> None:
        raise OSError(28, "No space left on device")

    bad._write = disk_full  # type: ignore[method-assign]
    told: list[str] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(syncer.run)
        bad.append({"k": "table", "id": "t1"})
        bad.after_durable(lambda: told.append("durable"), lambda exc: told.append(exc.strerror))
        bad.after_durable(lambda: told.append("durable, no failure callback"))
        with trio.fail_after(5):
            while bad.failed is None:
                await trio.sleep(0.001)
        bad.after_durable(lambda: told.append("durable"), lambda exc: told.append(f"late: {exc.strerror}"))
        nursery.cancel_scope.cancel()
    assert told == ["No space left on device", "late: No space left on device"]
