"""Running entrants' bot programs: started with their seat, restarted when they crash, stopped with their
table (``TableBots``, the bots of a round's tables). Each bot's output goes to a log file of its own under the data
directory; when a bot crashes, the organiser is told how it exited and the last lines it wrote (once: the log has
it at info level only), and, once it is given up, that ``replace NAME`` has a reference bot play its seat."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Callable

import trio

from server.ops import logs

MAX_RESTARTS = 5
RESTART_DELAYS_S = (0.2, 0.5, 1.0, 2.0, 5.0)
TAIL_LINES = 5
_TAIL_BYTES = 8192


async def run_bot_process(
    name: str, argv: list[str], env: dict[str, str], log_path: str, tell: Callable[[str], None],
    max_restarts: int = MAX_RESTARTS,
) -> None:
    """Run ``argv`` until it exits cleanly; restart it after a crash, ``max_restarts`` times at most, each
    crash told to the organiser through ``tell``. Cancel the calling scope to stop it (the process is
    terminated, then killed)."""
    log = logs.get(bot=name)
    full_env = {**os.environ, **env}
    # the reference bots are `parsimonia bot ...`: find the command next to this Python when it is not on PATH
    full_env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + full_env.get("PATH", "")
    for attempt in range(max_restarts + 1):
        with open(log_path, "ab") as out:
            start = out.tell()
            try:
                done = await trio.run_process(argv, env=full_env, stdin=subprocess.DEVNULL, stdout=out,
                                              stderr=subprocess.STDOUT, check=False)
            except OSError as exc:
                log.info("bot_not_started", error=str(exc), argv=argv[0])
                tell(f"bot {name} could not be started: {argv[0]}: {exc.strerror or exc}")
                return
        if done.returncode == 0:
            return
        tail = last_lines(log_path, start)
        log.info("bot_crashed", returncode=done.returncode, attempt=attempt + 1, last_lines=tail)
        again = "restarting it" if attempt < max_restarts else \
            f"giving up after {max_restarts} restarts (`replace {name}` has a greedy bot play its seat)"
        tell(f"bot {name} {exit_status(done.returncode)}; {again}. Last lines of {log_path}:"
             + "".join(f"\n    {line}" for line in tail or ["(nothing)"]))
        if attempt < max_restarts:
            await trio.sleep(RESTART_DELAYS_S[min(attempt, len(RESTART_DELAYS_S) - 1)])
    log.info("bot_given_up", restarts=max_restarts)


@dataclass
class TableBots:
    """The bot processes of the round's tables, one a seat, in the round's ``nursery``: each runs until its table's
    result is in (``stop``), or until a stand-in takes its seat (``stand_in``: the organiser's ``replace``)."""

    log_dir: str  # a log file per bot, by name
    tell: Callable[[str], None]  # the organiser's terminal
    nursery: trio.Nursery | None = None  # the current round's
    _tables: dict[str, list[trio.CancelScope]] = field(default_factory=dict)  # server table -> its bots
    _seats: dict[tuple[str, int], trio.CancelScope] = field(default_factory=dict)  # (table, seat) -> its bot
    _stand_ins: set[tuple[str, int]] = field(default_factory=set)  # (table, seat) played by a stand-in

    def start(self, table: str, seat: int, name: str, argv: list[str], env: dict[str, str]) -> None:
        """Run ``argv`` for ``name``'s seat for the rest of ``table``'s game."""
        assert self.nursery is not None, "bots start in a round"
        scope = trio.CancelScope()  # stopped before its task runs, the task ends at once
        self._tables.setdefault(table, []).append(scope)
        self._seats[table, seat] = scope
        self.nursery.start_soon(self._run, scope, name, argv, env)

    def stand_in(self, table: str, seat: int, name: str, argv: list[str], env: dict[str, str]) -> bool:
        """``argv`` plays ``name``'s seat instead of its own bot, for the rest of the game; False if a stand-in
        already does."""
        if (table, seat) in self._stand_ins:
            return False
        self._stand_ins.add((table, seat))
        old = self._seats.pop((table, seat), None)
        if old is not None:
            old.cancel()
        self.start(table, seat, name, argv, env)
        return True

    def stood_in(self, table: str, seat: int) -> bool:
        """A stand-in plays this seat: who connects to it is not its entrant."""
        return (table, seat) in self._stand_ins

    def stop(self, table: str) -> None:
        """``table``'s game is over: its bots are stopped."""
        for scope in self._tables.pop(table, []):
            scope.cancel()
        for key in [key for key in self._seats if key[0] == table]:
            del self._seats[key]

    async def _run(self, scope: trio.CancelScope, name: str, argv: list[str], env: dict[str, str]) -> None:
        if scope.cancel_called:  # its table's result came before the task ran
            return
        os.makedirs(self.log_dir, exist_ok=True)
        with scope:
            await run_bot_process(name, argv, env, os.path.join(self.log_dir, f"{_safe(name)}.log"), self.tell)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def exit_status(returncode: int) -> str:
    """How a process ended, in words: ``exited with status 2``, ``was killed by SIGKILL``."""
    if returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with status {returncode}"


def last_lines(path: str, start: int = 0, count: int = TAIL_LINES) -> list[str]:
    """The last ``count`` non-empty lines written to ``path`` from byte ``start`` on (what one run wrote)."""
    with open(path, "rb") as f:
        end = f.seek(0, os.SEEK_END)
        f.seek(max(start, end - _TAIL_BYTES))
        text = f.read().decode("utf-8", errors="replace")
    return [line.rstrip() for line in text.splitlines() if line.strip()][-count:]
