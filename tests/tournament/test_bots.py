"""Bot processes: a crash is told to the organiser with how the bot exited and the last lines it wrote."""

from __future__ import annotations

import io
import logging
import signal
import sys

import pytest
import trio

from server.ops import logs
from server.tournament.bots import TableBots, exit_status, last_lines, run_bot_process


@pytest.fixture(autouse=True)
def _quiet_logs() -> None:
    logs.configure(level=logging.CRITICAL)


CRASH = [sys.executable, "-c", "import sys\nfor i in range(8): print('line', i)\nprint('Traceback: boom')\nsys.exit(2)"]


async def test_a_crashing_bot_is_reported_with_its_status_and_last_lines_then_given_up(tmp_path):
    log = tmp_path / "bot.log"
    log.write_text("an earlier game's output\n")
    told: list[str] = []
    await run_bot_process("b1", CRASH, {}, str(log), told.append, max_restarts=1)
    assert len(told) == 2
    assert told[0].startswith("bot b1 exited with status 2; restarting it. Last lines of ")
    assert told[0].splitlines()[1:] == ["    line 4", "    line 5", "    line 6", "    line 7", "    Traceback: boom"]
    assert "giving up after 1 restarts (`replace b1` has a greedy bot play its seat)" in told[1]
    assert log.read_text().startswith("an earlier game's output\n")  # the log keeps everything


async def test_a_crash_reaches_the_organisers_terminal_once_not_again_in_the_log(tmp_path):
    """The director's terminal shows both the told lines and the warnings logged: a crash was there twice (#38)."""
    stream = io.StringIO()
    logs.configure(level=logging.WARNING, stream=stream)
    told: list[str] = []
    await run_bot_process("b1", CRASH, {}, str(tmp_path / "b1.log"), told.append, max_restarts=1)
    assert len(told) == 2 and stream.getvalue() == ""


async def test_a_bot_that_cannot_start_is_reported_once(tmp_path):
    told: list[str] = []
    await run_bot_process("b2", [str(tmp_path / "no-such-bot")], {}, str(tmp_path / "b2.log"), told.append)
    assert len(told) == 1 and told[0].startswith("bot b2 could not be started:") and "no-such-bot" in told[0]


async def test_a_bot_that_exits_cleanly_is_not_reported(tmp_path):
    told: list[str] = []
    await run_bot_process("b3", [sys.executable, "-c", "print('ok')"], {}, str(tmp_path / "b3.log"), told.append)
    assert told == []


def test_only_what_the_last_run_wrote_is_shown(tmp_path):
    log = tmp_path / "bot.log"
    log.write_text("old\n" * 3 + "\nnew 1\n\nnew 2\n")
    assert last_lines(str(log), start=len("old\n" * 3)) == ["new 1", "new 2"]
    assert last_lines(str(log), start=log.stat().st_size) == []


def test_exit_statuses_read_as_words():
    assert exit_status(2) == "exited with status 2"
    assert exit_status(-signal.SIGKILL) == "was killed by SIGKILL"


SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)"]


async def _until(done) -> None:
    while not done():
        await trio.sleep(0.02)


async def test_a_tables_bots_stop_with_it_and_a_stand_in_takes_a_seat_once(tmp_path):
    bots = TableBots(str(tmp_path), [].append)
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            bots.nursery = nursery
            bots.start("t1", 0, "early", SLEEPER, {})
            bots.stop("t1")  # its result came before its bot's task ran: the bot never starts
            bots.start("t2", 0, "own", SLEEPER, {})
            await _until((tmp_path / "own.log").exists)
            assert bots.stand_in("t2", 0, "stand-in", SLEEPER, {}) and bots.stood_in("t2", 0)
            assert not bots.stand_in("t2", 0, "again", SLEEPER, {})  # one stand-in a seat
            await _until(lambda: len(nursery.child_tasks) == 1)  # the seat's own bot is stopped
            bots.stop("t2")  # and the stand-in with its table: the nursery ends
    assert not (tmp_path / "early.log").exists() and (tmp_path / "stand-in.log").exists()
    assert not (tmp_path / "again.log").exists() and not bots.stood_in("t1", 0)
