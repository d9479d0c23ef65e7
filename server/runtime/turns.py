"""Fair reading between addresses: each address gets an equal share of the server's time, whatever its connections.

A connection (``server.runtime.connection``) waits for input outside any turn, then hands ``turn`` a plain function
(handle at most ``QUANTUM`` messages) and waits for its result. One turn runs at a time, given out by start-time
fair queuing over addresses, charged in server CPU time: an address quiet lately goes before every busy one, and
busy addresses share the rest equally.

Turns wait only while several addresses read (``alone``) and the server is busy (``BUSY_WINDOW_S``,
``_at_once``); then they run in rounds, one turn per address a round. Work done for an address outside its turns
(an accept, an HTTP answer) is charged to it too (``debit``), past a free allowance an honest client never
spends. Only reading waits for turns; tables, timers and writing do not.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

import trio

from server.transport.limits import AddressBuckets

QUANTUM = 4  # messages a connection handles in one turn
SHARED_S = 1.0  # after a message from another address, turns are taken for this long
ROUND_S = 0.002  # at most this long a round of turns, run back to back, before the rest of the server runs
AT_ONCE_S = 0.002  # a turn runs at once (the server not busy) only while the thread took less CPU time than this ...
AT_ONCE_WINDOW_S = 0.005  # ... in the short window under way, this long: a burst's others wait for rounds
BUSY_WINDOW_S = 0.1  # over which the thread's CPU time says whether the server is busy
BUSY_SHARE = 0.5  # of a window's time: busy
EVENT_MAX_S = 0.005  # what one piece of work outside the turns (a connection, an HTTP request) is charged at most
FREE_EVENTS = 8  # pieces of such work an address is given free at once (a browser's page and its WebSocket) ...
FREE_EVENTS_PER_S = 2.0  # ... and again at this rate: an honest client never pays, a flood pays for the rest
WINDOW_S = 0.0005  # a round's turns start within this much server time (CPU) of its first: fair to that grain
_FORGET_AT = 1024  # finish times kept before those already past (no advantage, no debt) are forgotten

T = TypeVar("T")


class _Turn:
    __slots__ = ("address", "handle", "task", "started", "result")

    def __init__(self, address: str, handle: Callable[[], Any], task: trio.lowlevel.Task) -> None:
        self.address = address
        self.handle = handle
        self.task = task
        self.started = False  # taken out of its queue to be run: no longer the asker's to give up
        self.result: tuple[bool, Any] | None = None  # (True, its value) or (False, its exception)


class Turns:
    def __init__(self, cpu_time: Callable[[], float] = time.thread_time) -> None:
        self._cpu_time = cpu_time  # what a turn is charged by: the CPU time it took, not a wait the system made
        self._running = False  # a task is running the turns
        self._virtual = 0.0  # the start of the turn under way, in the addresses' server time
        # address -> when its last turn ended, in that time and in trio's; and what it owes since (``debit``)
        self._finish: dict[str, tuple[float, float, float]] = {}
        self._queues: dict[str, deque[_Turn]] = {}  # the turns waiting, by address
        self._heap: list[tuple[float, int, str]] = []  # (start, order, address): one live entry a waiting address
        self._live: dict[str, int] = {}  # address -> the order of its live heap entry
        self._order = itertools.count()
        self._last_address = ""  # the address of the last read (``alone``)
        self._shared_until = 0.0  # until when turns are taken: another address read less than SHARED_S ago
        self._busy = False  # the thread took BUSY_SHARE of the time or more in the last window
        self._at_once_until = -math.inf  # the end of the short window (``AT_ONCE_WINDOW_S``) under way
        self._at_once_cpu = 0.0  # the thread's CPU clock when it began
        self._window_began = -math.inf
        self._window_cpu = 0.0  # the thread's CPU clock when the window under way began
        self._window_turns = 0.0  # the CPU time the turns took in the window under way
        self._window_events = 0  # the pieces of work outside the turns given out in it (``debit``)
        self._event_cost = 0.0  # what each cost in the last window: the thread's time outside the turns, over them
        self._free = AddressBuckets(FREE_EVENTS_PER_S, FREE_EVENTS / FREE_EVENTS_PER_S)  # the free pieces of work

    def alone(self, address: str) -> bool:
        """Whether ``address`` is the only one reading lately (no turn is needed); called for every read."""
        now = trio.current_time()
        if address != self._last_address:
            self._last_address, self._shared_until = address, now + SHARED_S
        return now >= self._shared_until and not self._running

    def debit(self, address: str) -> None:
        """``address`` is given work the server does outside its turns (a connection accepted, an HTTP request
        answered): charged to it at what each such piece cost lately, so that its next turns wait for it; free
        while the address has some of its ``FREE_EVENTS`` left. The cost is the thread's time outside the turns over
        the pieces of work in the window, so it also counts what is no address's (a table's broadcasts, a flood's
        replies): a table's address connecting now and then during a flood of messages would be charged the
        flood's sending (5 ms a connection, 85 ms of waiting behind 16 busy addresses) but for the free ones."""
        self._window_events += 1
        now = trio.current_time()
        if self._free.take(address, 1, now):
            return
        finish, ended, owed = self._finish.get(address, (0.0, now, 0.0))
        self._finish[address] = (finish, ended, owed + self._event_cost)

    @property
    def waiting(self) -> int:
        return sum(len(q) for q in self._queues.values())

    async def turn(self, address: str, handle: Callable[[], T]) -> T:
        """``handle()`` in a turn of ``address``: its result, or its exception raised here."""
        await trio.lowlevel.checkpoint_if_cancelled()
        if not self._running and not self._busy and self._at_once(began := self._cpu_time()):  # no round needed
            try:
                return handle()
            finally:
                self._charge(address, began, self._cpu_time())
        mine = _Turn(address, handle, trio.lowlevel.current_task())
        self._enqueue(mine)
        if self._running:

            def abort(_: object) -> trio.lowlevel.Abort:
                if mine.started:  # under way in the running task, which wakes us with its result
                    return trio.lowlevel.Abort.FAILED
                self._dequeue(mine)
                return trio.lowlevel.Abort.SUCCEEDED

            await trio.lowlevel.wait_task_rescheduled(abort)  # woken with its result, or to run the turns
            if mine.result is not None:
                return _unwrap(mine.result)
        self._running = True
        while True:  # this task runs the turns, round after round, until its own is done
            await trio.lowlevel.cancel_shielded_checkpoint()  # the others of this scheduler pass ask behind it
            self._round(mine)
            if mine.result is not None:
                self._hand_over()
                return _unwrap(mine.result)

    def _at_once(self, cpu: float) -> bool:
        """Whether a turn may run at once, the server not busy (every reader is served soon: nothing to share): unless
        the thread took ``AT_ONCE_S`` of CPU time in the last ``AT_ONCE_WINDOW_S``, inside the turns or outside them.
        A crowd's requests come in waves, and the readers woken together would all run in one pass of trio's
        scheduler, each its turn and what it does around it (receiving, answering): a table's message waited for
        the whole pass."""
        now = trio.current_time()
        if now >= self._at_once_until:
            self._at_once_until, self._at_once_cpu = now + AT_ONCE_WINDOW_S, cpu
        return cpu - self._at_once_cpu < AT_ONCE_S

    def _round(self, mine: _Turn) -> None:
        """One round of turns, in fair order: at most one an address (an address's next turn waits for the next
        round, when its other connections, and the other addresses' single ones, have asked again), none starting
        more than ``WINDOW_S`` of server time after the first, and no more than ``ROUND_S`` of them."""
        served: set[str] = set()
        first: float | None = None
        until = time.perf_counter() + ROUND_S
        while (head := self._head()) is not None:
            start, turn = head
            if turn.address in served or (first is not None and (start > first + WINDOW_S
                                                                  or time.perf_counter() >= until)):
                return
            if first is None:
                first = start
            self._take(start, turn)
            served.add(turn.address)
            began = self._cpu_time()
            try:
                turn.result = (True, turn.handle())
            except BaseException as exc:  # the asker's to raise, not the task that ran it
                turn.result = (False, exc)
            self._charge(turn.address, began, self._cpu_time())
            if turn is not mine:
                trio.lowlevel.reschedule(turn.task)

    def _hand_over(self) -> None:
        """The next waiting turn's asker runs the turns from now on (one task at a time does), or none waits."""
        head = self._head()
        if head is None:
            self._running = False
        else:
            trio.lowlevel.reschedule(head[1].task)

    def _enqueue(self, turn: _Turn) -> None:
        queue = self._queues.get(turn.address)
        if queue is None:
            queue = self._queues[turn.address] = deque()
            self._push(turn.address, self._start(turn.address))
        queue.append(turn)

    def _start(self, address: str) -> float:
        """Where the turn of an address that had none waiting starts: at its last turn's finish, less what it would
        have been served since in an equal share of the server's time (the time since that turn ended, over the
        addresses waiting and itself), and at the virtual time at the earliest. The server's time is what the
        turns use and all it does outside them (accepting, handshakes, sending, closing), which is charged to no
        address: a flood of handshakes uses six parts of it outside the turns to one inside. Without the
        forgiving, an address that asks now and then waited behind the flood's backlog whenever its own turns cost
        more than the flood's (a bid broadcast to a table's seats costs five times a handshake's parsing)."""
        now = trio.current_time()
        finish, ended, owed = self._finish.get(address, (0.0, now, 0.0))
        self._finish[address] = (finish + owed, ended, 0.0)  # owed no more: in the start
        forgiven = (now - ended) / (len(self._queues) + 1)
        # owed from the virtual time at the earliest: an address whose last turn is long past still owes
        return max(self._virtual, max(finish, self._virtual) + owed - forgiven)

    def _dequeue(self, turn: _Turn) -> None:
        queue = self._queues[turn.address]
        queue.remove(turn)
        if not queue:
            del self._queues[turn.address]
            self._live.pop(turn.address, None)  # its heap entry is now stale

    def _head(self) -> tuple[float, _Turn] | None:
        """The waiting turn that starts earliest, with its start, left where it is; None when none waits."""
        while self._heap:
            start, order, address = self._heap[0]
            if self._live.get(address) == order:
                return start, self._queues[address][0]
            heapq.heappop(self._heap)  # its turns were given up
        return None

    def _take(self, start: float, turn: _Turn) -> None:
        """``turn`` (the head) out of its queue, under way."""
        heapq.heappop(self._heap)
        del self._live[turn.address]
        queue = self._queues[turn.address]
        queue.popleft()
        if not queue:
            del self._queues[turn.address]
        turn.started = True
        self._virtual = max(self._virtual, start)

    def _charge(self, address: str, began: float, ended: float) -> None:
        """``address``'s turn is over: it ran from ``began`` to ``ended`` on the thread's CPU clock."""
        now, cost = trio.current_time(), max(ended - began, 0.0)
        self._window_turns += cost
        if now - self._window_began >= BUSY_WINDOW_S:  # the thread's share of the last window: busy or not
            used = ended - self._window_cpu
            self._busy = used >= BUSY_SHARE * (now - self._window_began)
            if self._window_events:
                self._event_cost = min(max(used - self._window_turns, 0.0) / self._window_events, EVENT_MAX_S)
            self._window_began, self._window_cpu, self._window_turns, self._window_events = now, ended, 0.0, 0
        elif ended - self._window_cpu >= BUSY_SHARE * BUSY_WINDOW_S:  # busy already, before the window's end
            self._busy = True
        finish = self._virtual + cost + self._finish.get(address, (0.0, now, 0.0))[2]
        self._finish[address] = (finish, now, 0.0)
        if address in self._queues:
            self._push(address, finish)
        if len(self._finish) > _FORGET_AT:
            for past in [a for a, (f, _, owed) in self._finish.items() if f + owed <= self._virtual]:
                del self._finish[past]

    def _push(self, address: str, start: float) -> None:
        order = next(self._order)
        self._live[address] = order
        heapq.heappush(self._heap, (start, order, address))


def _unwrap(result: tuple[bool, Any]) -> Any:
    ok, value = result
    if not ok:
        raise value
    return value
