"""Fair reading between addresses: each address gets an equal share of the server's time, whatever its connections.

Every connection handles what its client sent in turns (``server.connection``): it waits, outside any turn, until
its client has sent something, then for a turn, and in it handles at most ``QUANTUM`` messages. One turn at a time
in all the server: the turns are given out by start-time fair queuing over addresses. Each address has a finish
time, the server time (CPU seconds, as the connection measured them) its turns have used; a turn waiting for an
address starts at the later of that and the virtual time (the start of the turn being served), and the waiting
turn that starts earliest goes next. So an address that sent nothing lately (an honest table: a message now and
then) goes before every address that has been busy, and waits at most for the one turn under way; busy addresses
share what is left equally, an address of 256 busy connections as one of one. An address's own connections take
its turns in the order they asked.

What a busy address sends beyond its share waits in its sockets, then in its clients' send buffers: the flood
slows itself. Only the reading of messages waits for turns; the tables, their timers and the writing do not.

A turn costs a pass of trio's scheduler (the holder yields once, so that others may queue behind it), which a
server busy with one address's traffic alone would pay for nothing: a load generator's 600 connections from one
machine fell from 4,500 to 1,000 bids/s. So turns are taken only while more than one address is reading: ``alone``
is true when every message of the last ``SHARED_S`` came from the asking address, and then the reader handles what
came at once, as it did before there were turns.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque

import trio

QUANTUM = 4  # messages a connection handles in one turn
SHARED_S = 1.0  # after a message from another address, turns are taken for this long
_FORGET_AT = 1024  # finish times kept before those already past (no advantage, no debt) are forgotten


class Turns:
    def __init__(self) -> None:
        self._held = False  # a turn is under way
        self._serving = ""  # whose
        self._virtual = 0.0  # the start of the turn under way, in the addresses' server time
        self._finish: dict[str, float] = {}  # address -> when its last turn ended, in that time
        self._queues: dict[str, deque[trio.lowlevel.Task]] = {}  # the connections waiting, by address
        self._heap: list[tuple[float, int, str]] = []  # (start, order, address): one live entry a waiting address
        self._live: dict[str, int] = {}  # address -> the order of its live heap entry
        self._order = itertools.count()
        self._last_address = ""  # the address of the last read (``alone``)
        self._shared_until = 0.0  # until when turns are taken: another address read less than SHARED_S ago

    def alone(self, address: str) -> bool:
        """Whether ``address`` is the only one reading lately (no turn is needed); called for every read."""
        now = trio.current_time()
        if address != self._last_address:
            self._last_address, self._shared_until = address, now + SHARED_S
        return now >= self._shared_until and not self._held and not self._queues

    @property
    def waiting(self) -> int:
        return sum(len(q) for q in self._queues.values())

    async def acquire(self, address: str) -> None:
        """Until it is ``address``'s turn, for the calling task; ``release`` ends it."""
        await trio.lowlevel.checkpoint_if_cancelled()
        if not self._held:  # its turn, from trio's next round on: the other tasks that ask in this one wait
            self._held, self._serving = True, address
            self._virtual = max(self._virtual, self._finish.get(address, 0.0))
            await trio.lowlevel.cancel_shielded_checkpoint()
            return
        task = trio.lowlevel.current_task()
        queue = self._queues.get(address)
        if queue is None:
            queue = self._queues[address] = deque()
            if address != self._serving:  # else pushed when its turn under way ends, from its new finish
                self._push(address, max(self._virtual, self._finish.get(address, 0.0)))
        queue.append(task)

        def abort(_: object) -> trio.lowlevel.Abort:
            queue.remove(task)
            if not queue:
                del self._queues[address]
                self._live.pop(address, None)  # its heap entry is now stale
            return trio.lowlevel.Abort.SUCCEEDED

        await trio.lowlevel.wait_task_rescheduled(abort)

    def release(self, address: str, cost: float) -> None:
        """``address``'s turn is over; it cost ``cost`` (seconds of the server's time). The next turn begins."""
        assert self._held and self._serving == address
        finish = self._finish[address] = self._virtual + max(cost, 0.0)
        if address in self._queues:
            self._push(address, finish)
        if len(self._finish) > _FORGET_AT:
            for past in [a for a, f in self._finish.items() if f <= self._virtual]:
                del self._finish[past]
        while self._heap:
            start, order, nxt = heapq.heappop(self._heap)
            if self._live.get(nxt) != order:
                continue  # its waiters gave up
            del self._live[nxt]
            queue = self._queues[nxt]
            task = queue.popleft()
            if not queue:
                del self._queues[nxt]
            self._serving, self._virtual = nxt, max(self._virtual, start)
            trio.lowlevel.reschedule(task)
            return
        self._held, self._serving = False, ""

    def _push(self, address: str, start: float) -> None:
        order = next(self._order)
        self._live[address] = order
        heapq.heappush(self._heap, (start, order, address))
