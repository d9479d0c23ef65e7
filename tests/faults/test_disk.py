"""Disk faults (docs/reliability.md): a data directory that fills up (a tmpfs of a few MiB, mounted by the test),
and write / fsync errors injected into one table's journal (``PARSIMONIA_FAULT``, server/faults.py). The
table that cannot write stops and says why, with nothing acknowledged that is not on disk; the other tables and
the server go on; the operator gets one log line; a restart (after space is freed) recovers everything that
was acknowledged, and the stopped games finish."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import trio

from tests.faults.campaign import KILL_S, Game, Run
from tests.faults.conftest import FULL
from tests.server.conftest import connect
from tests.server.test_crash import until_up

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="tmpfs, SIGKILL and POSIX processes")

STOPPED = "this table's journal could not be written"


def failures_logged(run: Run) -> list[str]:
    return [line for line in (run.tmp / "serve.err").read_text().splitlines() if "journal_failed" in line]


async def until_logged(run: Run, server: trio.Process, count: int) -> list[str]:
    """The operator's lines saying a table's journal failed, once there are ``count`` of them."""
    with trio.fail_after(KILL_S):
        while len(lines := failures_logged(run)) < count:
            assert server.returncode is None, "the server died"
            await trio.sleep(0.05)
    return lines


def check_stopped(run: Run, game: Game, why: str) -> None:
    """Every seat was told the table stopped, and why; what was acknowledged is on disk."""
    run.check_acked(game)
    for player in game.players:
        assert player.result is None
        assert any(STOPPED in n["message"] and why in n["message"] and n["table"] == game.table
                   for n in player.notices), (player.seat, player.notices)


# ------------------------------------------------------------------ errors injected into one journal

INJECTED = [pytest.param(f"{fault}:t2#15", why, id=fault) for fault, why in (
    ("eio@fsync", "Input/output error"), ("enospc@write", "No space left on device"),
    ("eio@write", "Input/output error"))]


@pytest.mark.parametrize("fault, why", INJECTED if FULL else INJECTED[:1])
async def test_a_journal_that_cannot_be_written_stops_its_table_alone_and_a_restart_finishes_it(tmp_path, fault,
                                                                                              why):
    run = Run(tmp_path)
    games = [Game("parsimonia", 3), Game("kupcy", 7), Game("gift-of-tulips", 5)]
    try:
        server = await run.start(fault)
        await until_up(run.port)
        async with trio.open_nursery() as nursery:
            for game in games:  # one after the other: t1, t2, t3
                nursery.start_soon(run.play, nursery, game)
                with trio.fail_after(KILL_S):
                    while game.table is None:
                        await trio.sleep(0.01)
            assert [g.table for g in games] == ["t1", "t2", "t3"]
            (line,) = await until_logged(run, server, 1)
            assert "t2" in line and why in line and "error" in line
            with trio.fail_after(KILL_S):  # the other tables play on to their end, on the same server
                while not (games[0].finished and games[2].finished):
                    await trio.sleep(0.05)
            assert server.returncode is None and len(failures_logged(run)) == 1
            check_stopped(run, games[1], why)
            for game in (games[0], games[2]):
                run.check_end(game)
            await run.procs.kill(server)
            server = await run.start(None)
            await run.until_finished(server)  # t2 again, recovered from its journal
            nursery.cancel_scope.cancel()
    finally:
        await run.procs.kill_all()
    assert run.check_end(games[1]) > 0
    run.check_logs(fired=1)


# ------------------------------------------------------------------ a data directory that fills up


@pytest.fixture
def small_disk(tmp_path):
    """A 4 MiB tmpfs for the data directory (the tests run as root, as in CI)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def fill(path: Path) -> int:
    """Write ``path`` until the filesystem is full; the bytes written."""
    written = 0
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            written += os.write(fd, bytes(64 * 1024))
    except OSError as exc:
        assert exc.errno == 28, exc
    try:
        while True:  # the last pages, a little at a time
            written += os.write(fd, bytes(512))
    except OSError:
        pass
    finally:
        os.close(fd)
    return written


@pytest.mark.full_campaign
async def test_a_full_data_directory_stops_the_tables_that_write_and_after_freeing_space_a_restart_recovers(
        tmp_path, small_disk):
    run = Run(tmp_path, data=small_disk / "data")
    games = [Game("kupcy", 7), Game("parsimonia", 5)]  # the two that write the most: both outgrow the pages left
    try:
        server = await run.start(None)
        await until_up(run.port)
        async with trio.open_nursery() as nursery:
            async with connect(SimpleNamespace(port=run.port), "early") as early:
                waiting = (await early.request("create", game="parsimonia", seats=3, seed=1))["table"]
                assert (await early.request("join", table=waiting, name="early"))["type"] == "joined"
            for game in games:
                nursery.start_soon(run.play, nursery, game)
            with trio.fail_after(KILL_S):  # both games under way
                while not all(len(g.players) == 3 and sum(len(p.acked) for p in g.players) >= 5 for g in games):
                    await trio.sleep(0.01)
            ballast = small_disk / "ballast"
            assert fill(ballast) > 0
            lines = await until_logged(run, server, 2)
            for game in games:
                (line,) = [line for line in lines if f"table={game.table}" in line]
                assert "No space left on device" in line
            with trio.fail_after(KILL_S):
                while not all(p.notices for g in games for p in g.players):
                    await trio.sleep(0.05)
            for game in games:
                check_stopped(run, game, "No space left on device")
            # the server goes on: a new client is welcomed, lists the tables, watches the waiting one, and a
            # table it tries to create is refused (not left unanswered)
            async with connect(SimpleNamespace(port=run.port), "late") as late:
                listed = {t["table"]: t for t in (await late.request("tables"))["tables"]}
                assert listed[waiting]["state"] == "waiting" and len(listed) == 3
                assert (await late.request("watch", table=waiting))["type"] == "watching"
                refused = await late.request("create", game="parsimonia", seats=2)
                assert refused["type"] == "error" and "No space left on device" in refused["message"], refused
            assert server.returncode is None

            ballast.unlink()  # space freed: the operator restarts the server
            await run.procs.kill(server)
            server = await run.start(None)
            await run.until_finished(server)
            nursery.cancel_scope.cancel()
            async with connect(SimpleNamespace(port=run.port), "after") as after:
                listed = {t["table"]: t for t in (await after.request("tables"))["tables"]}
                assert listed[waiting]["state"] == "waiting" and listed[waiting]["taken"] == 1
    finally:
        await run.procs.kill_all()
    for game in games:
        assert run.check_end(game) > 0
    run.check_logs(fired=0)
    # the refused create left a journal without a whole record: the restart dropped it (a failed write that was
    # partial, filling the last page, leaves a torn tail, dropped too: journal_torn_tail_dropped)
    dropped = [line for line in (run.tmp / "serve.err").read_text().splitlines()
               if "journal_never_created_dropped" in line]
    assert len(dropped) == 1 and "bytes=0" in dropped[0]
