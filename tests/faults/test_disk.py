"""Disk faults (docs/reliability.md): a data directory that fills up (a tmpfs of a few MiB, mounted by the test),
and write / fsync errors injected into the log (``PARSIMONIA_FAULT``, server/faults.py). Every table stops and
says why, with nothing acknowledged that is not on disk; the server goes on answering; the operator gets a
``log_failed`` line and one ``journal_failed`` line per table; a restart (after space is freed) recovers
everything that was acknowledged, and the stopped games finish."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import trio

from tests.faults.campaign import KILL_S, Game, Run
from tests.faults.conftest import FULL
from tests.faults.wsclient import http_get
from tests.server.conftest import connect
from tests.server.storage.test_crash import until_up

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="tmpfs, SIGKILL and POSIX processes")

STOPPED = "the server's journal could not be written"


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


# ------------------------------------------------------------------ errors injected into the log

INJECTED = [pytest.param(f"{fault}:t2#15", why, id=fault) for fault, why in (
    ("eio@fsync", "Input/output error"), ("enospc@write", "No space left on device"),
    ("eio@write", "Input/output error"))]


@pytest.mark.parametrize("fault, why", INJECTED if FULL else INJECTED[:1])
async def test_a_log_that_cannot_be_written_stops_every_table_and_a_restart_finishes_them(tmp_path, fault, why):
    """The fault fires at the 15th round holding records of t2, by then with the others under way."""
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
            lines = await until_logged(run, server, 3)
            assert sorted(line.split("table=")[1].split()[0] for line in lines) == ["t1", "t2", "t3"]
            assert all(why in line and "error" in line for line in lines)
            assert any("log_failed" in line and why in line for line in (run.tmp / "serve.err").read_text()
                       .splitlines())
            with trio.fail_after(KILL_S):
                while not all(p.notices for g in games for p in g.players):
                    await trio.sleep(0.05)
            assert server.returncode is None
            for game in games:
                check_stopped(run, game, why)
            await run.procs.kill(server)
            server = await run.start(None)
            await run.until_finished(server)  # every table again, recovered from the log
            nursery.cancel_scope.cancel()
    finally:
        await run.procs.kill_all()
    for game in games:
        assert run.check_end(game) > 0
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
async def test_a_full_data_directory_stops_every_table_and_after_freeing_space_a_restart_recovers(
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
            lines = await until_logged(run, server, 3)  # the waiting table stops too: they share the log
            for table in (waiting, *(game.table for game in games)):
                (line,) = [line for line in lines if f"table={table}" in line]
                assert "No space left on device" in line
            with trio.fail_after(KILL_S):
                while not all(p.notices for g in games for p in g.players):
                    await trio.sleep(0.05)
            for game in games:
                check_stopped(run, game, "No space left on device")
            # the server goes on: a new client is welcomed, lists the tables, is told why the waiting one is
            # stopped, and a table it tries to create is refused (not left unanswered)
            async with connect(SimpleNamespace(port=run.port), "late") as late:
                listed = {t["table"]: t for t in (await late.request("tables"))["tables"]}
                assert listed[waiting]["state"] == "waiting" and len(listed) == 3
                watched = await late.request("watch", table=waiting)  # stopped with the others: it says why
                assert watched["type"] == "error" and "No space left on device" in watched["message"], watched
                refused = await late.request("create", game="parsimonia", seats=2)
                assert refused["type"] == "error" and "No space left on device" in refused["message"], refused
            assert server.returncode is None
            status, body = await http_get(run.port, "/healthz")  # and its health says so, and which tables
            health = json.loads(body)
            assert status == 503 and health["status"] == "unhealthy", health
            assert sorted(health["stopped"]) == sorted([waiting, *(game.table for game in games)])
            assert any("No space left on device" in why for why in health["reasons"])
            assert any(why.startswith("the disk is full") for why in health["reasons"])

            ballast.unlink()  # space freed: the operator restarts the server
            await run.procs.kill(server)
            server = await run.start(None)
            await run.until_finished(server)
            nursery.cancel_scope.cancel()
            async with connect(SimpleNamespace(port=run.port), "after") as after:
                listed = {t["table"]: t for t in (await after.request("tables"))["tables"]}
                assert listed[waiting]["state"] == "waiting" and listed[waiting]["taken"] == 1
            assert (await http_get(run.port, "/healthz"))[0] == 200
    finally:
        await run.procs.kill_all()
    for game in games:
        assert run.check_end(game) > 0
    run.check_logs(fired=0)
    # the log said why once; the refused create left nothing in it (a failed write that was partial, filling the
    # last page, leaves a torn tail, which the restart drops: log_torn_tail_dropped)
    failed = [line for line in (run.tmp / "serve.err").read_text().splitlines() if "log_failed" in line]
    assert len(failed) == 1 and "No space left on device" in failed[0]
