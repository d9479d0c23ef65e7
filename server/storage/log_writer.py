"""The log's writer thread: the one thread every write and sync of the shared log comes from, in order.

A round's work is handed to it through a queue and its result comes back through the trio token (``Writer.run``,
waited for; ``Writer.submit``, called back). A hand-off not back within ``HANDOFF_WAIT_S`` has the loop's thread
let go of the GIL for ``GIL_GIVEN_S``, again each time it has waited that long, so that the thread can take it
(the class says why). ``server.storage.journal``'s ``Syncer`` runs two: one for its rounds, one for finished tables'
exports.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Any, Callable

import trio

HANDOFF_WAIT_S = 0.001  # a hand-off to the writer thread not back after this long ...
GIL_GIVEN_S = 0.00005  # ... has the loop's thread let go of the GIL for this long, and again each time


class Writer:
    """The log's one worker thread, for as long as its syncer runs: a round's write and sync are handed to it
    through a queue, and its result comes back through the trio token. A hand-off costs about half the CPU of
    ``trio.to_thread.run_sync`` (which takes a limiter, a thread from its cache and a copy of the context each
    time; ``bench/wal_round.py``), and every write to the log comes from the same thread, in order.

    The thread needs the GIL to start the work, after each system call and to hand the result back. A loop's
    thread that is never idle lets go of the GIL in every system call but takes it back within microseconds,
    before the woken writer can; and CPython asks the holder to let go only when no one took the GIL for 5 ms,
    which that churn never allows. Measured: when 256 busy connections left at once, hand-offs took 25-900 ms
    and a table's acknowledgements waited for them. So a hand-off not back within ``HANDOFF_WAIT_S`` has the
    loop's thread sleep ``GIL_GIVEN_S`` (letting go of the GIL for that long) each time it has waited that
    long again: hand-offs then took at most 25 ms in the same flood."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[tuple[Any, ...] | None] = queue.SimpleQueue()
        self._token: trio.lowlevel.TrioToken | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        self._thread = threading.Thread(target=self._serve, args=(self._token,), name="log-writer", daemon=True)
        self._thread.start()

    @property
    def running(self) -> bool:
        return self._token is not None

    def submit(self, then: Callable[[bool, Any], None], fn: Callable[..., Any], *args: Any) -> None:
        """``fn(*args)`` in the thread, not waited for: ``then(True, its value)`` or ``then(False, what it
        raised)`` is called on the loop's thread once it is done (never, if the loop ended first)."""
        if self._token is None:
            raise RuntimeError("the writer is not running")
        box: list[Any] = []
        self._queue.put((fn, args, box, _Then(box, then)))

    def stop(self, wait: bool = False) -> None:
        """The thread ends once what it was handed is done (``wait``: this waits for that)."""
        if self._token is not None:
            self._queue.put(None)
            self._token = None
        if wait and self._thread is not None:
            self._thread.join()

    async def run(self, fn: Callable[..., Any], *args: Any, takes_s: float = 0.0) -> Any:
        """``fn(*args)`` in the thread; like ``trio.to_thread.run_sync``, a cancel waits for it to return.
        ``takes_s``: how long ``fn`` is known to take (a sleep), before which the loop gives the GIL nothing."""
        if self._token is None:
            raise RuntimeError("the log's writer is not running")
        box: list[Any] = []
        done = trio.Event()
        self._queue.put((fn, args, box, done))
        with trio.CancelScope(shield=True):
            patience = takes_s + HANDOFF_WAIT_S
            while True:
                with trio.move_on_after(patience):
                    await done.wait()
                patience = HANDOFF_WAIT_S
                if done.is_set():
                    break
                time.sleep(GIL_GIVEN_S)  # not back yet: the thread may be waiting for the GIL (see the class)
        ok, value = box
        if not ok:
            raise value
        return value

    def _serve(self, token: trio.lowlevel.TrioToken) -> None:
        while (item := self._queue.get()) is not None:
            fn, args, box, done = item
            try:
                box.extend((True, fn(*args)))
            except BaseException as exc:  # handed back to the task that waits for it
                box.extend((False, exc))
            try:
                token.run_sync_soon(done.set)
            except trio.RunFinishedError:
                return
            del item, fn, args, box, done  # not held while waiting: the last export's journals, every record


class _Then:
    """A hand-off's ``done`` (``Writer._serve`` calls its ``set``) that calls back with the result."""

    __slots__ = ("box", "then")

    def __init__(self, box: list[Any], then: Callable[[bool, Any], None]) -> None:
        self.box, self.then = box, then

    def set(self) -> None:
        self.then(*self.box)
