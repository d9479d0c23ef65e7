"""Server time: integer ms, read from trio's clock (so tests can mock it) plus a starting point.

A server with a data directory starts its clock where the previous run's clock stopped (its last
heartbeat, or the latest journal record), so server time never moves while the server is down: every
table's clocks resume with the downtime credited back. The runtime is the only reader of time;
engines get these numbers as arguments.
"""

from __future__ import annotations

import math
import os
import stat

import trio

from server.ops import logs

HEARTBEAT_MS = 500
# a heartbeat this far ahead of every journalled table's last record is not believed: server time moves only while
# the server runs, and a clock file set far into the future (by hand, or by a broken disk) would end every recovered
# game at once, all its deadlines passed. (A server that ran a week with tables in it and wrote nothing is not one.)
MAX_AHEAD_MS = 7 * 24 * 3600 * 1000


class ServerClock:
    def __init__(self, start_ms: int = 0) -> None:
        self.epoch = trio.current_time() - start_ms / 1000

    def now_ms(self) -> int:
        return int((trio.current_time() - self.epoch) * 1000)

    def to_trio(self, ms: int | None) -> float:
        """The trio deadline for server time ``ms`` (inf for None)."""
        return math.inf if ms is None else self.epoch + ms / 1000


def trusted_start(heartbeat: int, latest: int | None) -> tuple[int, str | None]:
    """Where server time starts from the heartbeat and the latest journal record (None: no tables), and why the
    heartbeat was not believed (None when it was)."""
    if latest is None:
        return heartbeat, None
    if heartbeat > latest + MAX_AHEAD_MS:
        return latest, f"{heartbeat} ms is {heartbeat - latest} ms ahead of the journals: their last time is used"
    return max(heartbeat, latest), None


def read_heartbeat(path: str) -> int | None:
    """The server time in the heartbeat file: 0 when there is none yet, None when what is there is not a
    regular file holding a number (a directory, a FIFO, which is never waited on, or garbage)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return 0
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        text = os.read(fd, 64).decode("ascii").strip()
        return max(0, int(text)) if text else 0
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)


def _write_heartbeat(path: str, now_ms: int) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="ascii") as f:
        f.write(str(now_ms))
    os.replace(tmp, path)


async def keep_heartbeat(clock: ServerClock, path: str) -> None:
    """Write the server time to ``path`` every ``HEARTBEAT_MS`` (write, then rename: never half a number).

    The write and the rename are done in a thread: on this project's 2-core test machine (ext4, a busy disk) they
    took 0.7-1.4 ms at the median and 12-35 ms at the 99th percentile, which the event loop, and every table's
    timers with it, would have waited every half second (py-spy on a storm server: 1.6% of its samples).
    A disk that is full or failing does not stop the server: the operator is told once, when the heartbeat
    stops being written and again when it is written again (meanwhile, the journals' records still tell a
    restart where server time had got to)."""
    log = logs.get(path=path)
    failing = False
    while True:
        try:
            await trio.to_thread.run_sync(_write_heartbeat, path, clock.now_ms())
        except OSError as exc:
            if not failing:
                log.error("heartbeat_not_written", error=str(exc))
            failing = True
        else:
            if failing:
                log.warning("heartbeat_written_again")
            failing = False
        await trio.sleep(HEARTBEAT_MS / 1000)
