"""The server's memory given back to the system once a crowd of connections has gone.

CPython's small-object allocator gives an arena back only when every object in it is gone, so after a crowd of
connections has left, the few objects that outlive it keep the server at its peak. The C library's allocator gives
pages back on ``malloc_trim``.

So a server (``serve``, ``tournament``) started from the command line runs on the C library's allocator: it
starts itself again at once with ``PYTHONMALLOC=malloc`` (unless ``PYTHONMALLOC`` is set already: the operator's
choice stands), and ``Trimmer`` gives memory back after its WebSockets fell to half of their high mark.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os
import platform
import sys
import time
from collections.abc import Callable

import trio

from server.ops import logs

CROWD = 256  # connections gone since the high mark before memory is given back: below that, not worth 1 ms
TABLES_GONE = 16  # live tables ended since their high mark, likewise (a busy table holds up to 128 KiB of events)
TICK_S = 1.0  # how often the trimmer looks whether a trim is owed
LAST_TRIM_TICKS = 32  # the interval between the last two trims after a crowd left (TICK_S each)
ALLOCATOR = "PYTHONMALLOC"


def run_on_system_allocator() -> None:
    """Start this process again with ``PYTHONMALLOC=malloc`` (the same interpreter, options and arguments), where
    the C library is glibc and ``PYTHONMALLOC`` is not set; else return and go on as it is."""
    if ALLOCATOR in os.environ or platform.libc_ver()[0] != "glibc":
        return
    env = {**os.environ, ALLOCATOR: "malloc"}
    try:
        os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)
    except OSError:
        pass  # cannot start itself again (the interpreter moved?): serve on pymalloc, as before


def _malloc_trim() -> Callable[[], object] | None:
    """glibc's ``malloc_trim(0)`` when the interpreter allocates with the C library's malloc, else None."""
    if os.environ.get(ALLOCATOR) != "malloc" or platform.libc_ver()[0] != "glibc":
        return None
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    trim = ctypes.CDLL(name).malloc_trim
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return lambda: trim(0)


class Trimmer:
    """Follows how many connections the server holds. When they fell to half of their high mark, and by ``CROWD``
    at least, it starts a new mark and gives memory back at the ``tick``s 1, 3, 7, 15, 31 and 63 s later: what a
    connection held is freed seconds after its socket closed (its tasks, cancel scopes and timers go last; measured,
    3.5 s after the last of 5,000 closed, and some later still), and a trim that finds little free costs 0.1-3
    ms. A drop while those are under way starts them again. The live tables likewise (``count_tables``): when they
    fell to half of their high mark, and by ``TABLES_GONE`` at least (busy tables' events and records)."""

    def __init__(self, trim: Callable[[], object] | None = None) -> None:
        self._trim = _malloc_trim() if trim is None else trim
        self._high = 0
        self._tables_high = 0
        self._gone = 0  # connections gone since the last trim
        self._due_in: int | None = None  # ticks until the next trim; None: none owed
        self._interval = 1  # ticks from this trim to the next

    def count(self, connections: int) -> None:
        if connections > self._high:
            self._high = connections
        elif self._high - connections >= CROWD and connections <= self._high // 2:
            self._gone += self._high - connections
            self._high, self._due_in, self._interval = connections, 1, 1

    def count_tables(self, live: int) -> None:
        if live > self._tables_high:
            self._tables_high = live
        elif self._tables_high - live >= TABLES_GONE and live <= self._tables_high // 2:
            self._tables_high, self._due_in, self._interval = live, 1, 1

    def tick(self) -> None:
        if self._due_in is None or self._trim is None:
            return
        self._due_in -= 1
        if self._due_in:
            return
        self._interval *= 2
        self._due_in = self._interval if self._interval <= LAST_TRIM_TICKS else None
        began = time.perf_counter()
        gc.collect()  # what is not frozen (server/ops/collector.py freezes the rest): a crowd's last cycles
        self._trim()
        logs.get().info("memory_given_back", connections=self._high, gone=self._gone,
                        ms=round((time.perf_counter() - began) * 1000, 1))
        self._gone = 0


async def keep_memory_given_back(trimmer: Trimmer, live_tables: Callable[[], int] | None = None) -> None:
    """``trimmer.tick()`` every ``TICK_S``, for the server's life, counting ``live_tables()`` first."""
    while True:
        await trio.sleep(TICK_S)
        if live_tables is not None:
            trimmer.count_tables(live_tables())
        trimmer.tick()
