"""Running entrants' bot programs: started with their seat, restarted when they crash, stopped with their
table. Each bot's output goes to a log file of its own under the data directory."""

from __future__ import annotations

import os
import subprocess
import sys

import trio

from server import logs

MAX_RESTARTS = 5
RESTART_DELAYS_S = (0.2, 0.5, 1.0, 2.0, 5.0)


async def run_bot_process(
    name: str, argv: list[str], env: dict[str, str], log_path: str, max_restarts: int = MAX_RESTARTS
) -> None:
    """Run ``argv`` until it exits cleanly; restart it after a crash, ``max_restarts`` times at most.
    Cancel the calling scope to stop it (the process is terminated, then killed)."""
    log = logs.get(bot=name)
    full_env = {**os.environ, **env}
    # the reference bots are `parsimonia bot ...`: find the command next to this Python when it is not on PATH
    full_env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + full_env.get("PATH", "")
    for attempt in range(max_restarts + 1):
        with open(log_path, "ab") as out:
            try:
                done = await trio.run_process(argv, env=full_env, stdin=subprocess.DEVNULL, stdout=out,
                                              stderr=subprocess.STDOUT, check=False)
            except OSError as exc:
                log.error("bot_not_started", error=str(exc), argv=argv[0])
                return
        if done.returncode == 0:
            return
        log.warning("bot_crashed", returncode=done.returncode, attempt=attempt + 1)
        await trio.sleep(RESTART_DELAYS_S[min(attempt, len(RESTART_DELAYS_S) - 1)])
    log.error("bot_given_up", restarts=max_restarts)
