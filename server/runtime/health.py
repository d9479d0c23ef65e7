"""Whether a server is fit to serve: what ``GET /healthz`` answers, and what a cluster asks of a worker before it
sends it a table.

A server is unhealthy when its log has failed (a write or sync refused: every table stopped), when its data
directory's disk has less than ``MIN_FREE_BYTES`` free, or when its loop is stalled: ``LoopWatch``'s task sleeps
``PERIOD_S`` at a time and notes how late it woke; late by more than the bound (``ServerConfig.loop_stall_s``,
logged), or not woken that long after it was due, is a stalled loop. A loop stalled for good answers nothing
at all, so a watcher must also bound how long it waits for the answer. Each reason is one short line; the tables
whose journal failed (``Table.stopped``) are named.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
import trio

from server.ops import logs
from server.runtime.ports import ServerPort

PERIOD_S = 0.25  # how often the loop's watcher wakes: four wake-ups a second
STALL_S = 1.0  # woken later than this is a stalled loop (the default of ``ServerConfig.loop_stall_s``)
MIN_FREE_BYTES = 1 << 20  # less free than this on the data directory's disk is a full disk


@dataclass
class Health:
    ok: bool
    reasons: list[str] = field(default_factory=list)  # why not, one line each
    stopped: list[str] = field(default_factory=list)  # the tables whose journal failed
    loop_lag_ms: int = 0


class LoopWatch:
    """How late the loop wakes a task that sleeps ``period_s`` at a time; a wake-up later than ``stall_s`` is
    logged (``loop_stalled``: so at most one line per ``stall_s``)."""

    def __init__(self, period_s: float = PERIOD_S, stall_s: float = STALL_S) -> None:
        self.period_s = period_s
        self.stall_s = stall_s
        self.lag_s = 0.0  # how late the last wake-up was
        self._due: float | None = None  # when the sleeping watcher is due (trio time); None before it runs
        self.log = logs.get()

    async def run(self) -> None:
        while True:
            self._due = trio.current_time() + self.period_s
            await trio.sleep_until(self._due)
            self.lag_s = trio.current_time() - self._due
            if self.lag_s > self.stall_s:
                self.log.warning("loop_stalled", late_ms=round(self.lag_s * 1000))

    def late_s(self) -> float:
        """The loop's lateness now: the last wake-up's, or how long past its time the watcher still sleeps (a
        loop stalled until just now has not yet woken it)."""
        overdue = 0.0 if self._due is None else trio.current_time() - self._due
        return max(self.lag_s, overdue)


def free_bytes(path: str) -> int | None:
    """The bytes an unprivileged process may still write on ``path``'s filesystem (None if it cannot be told)."""
    try:
        stat = os.statvfs(path)
    except OSError:
        return None
    return stat.f_bavail * stat.f_frsize


def assess(log_failed: OSError | None, stopped: Iterable[str], free: int | None, loop_late_s: float,
           stall_s: float = STALL_S) -> Health:
    """Health from what was measured: the log's failure (None: none), the stopped tables, the disk's free bytes
    (None: no data directory, or not known) and how late the loop is."""
    reasons = []
    if log_failed is not None:
        reasons.append(f"the log failed: {log_failed.strerror or log_failed}; its tables are stopped")
    if free is not None and free < MIN_FREE_BYTES:
        reasons.append(f"the disk is full: {free} bytes free")
    if loop_late_s > stall_s:
        reasons.append(f"the loop is stalled: {loop_late_s:.1f} s late")
    stopped = sorted(stopped, key=lambda t: (len(t), t))
    if stopped and log_failed is None:
        reasons.append(f"{len(stopped)} table(s) stopped: their journal failed")
    return Health(not reasons, reasons, stopped, round(loop_late_s * 1000))


def of_server(server: ServerPort) -> Health:
    """``server``'s health now (cheap: a ``statvfs`` and a walk of the live tables)."""
    data = None if server.lobby is None else server.lobby.data
    tables = [] if server.lobby is None else server.lobby.tables.values()
    stopped = [t.id for t in tables if getattr(t, "stopped", None) is not None]
    return assess(None if data is None else data.syncer.failed, stopped,
                  None if data is None else free_bytes(data.root), server.loop_watch.late_s(),
                  server.config.loop_stall_s)
