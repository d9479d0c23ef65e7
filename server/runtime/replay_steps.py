"""A finished game, step by step: the ``replay`` request.

A step is one event, whole (nothing redacted), with the public view and every seat's private view as they stood
once it was made. They come from the table's records folded through ``Match.replay``, so they are what the seats
were shown. Only a fold that ends with the game over gives anything, and a running table is refused before its
records are read: nothing hidden leaves the server before the end.

A fold runs in a worker thread, one at a time, cached encoded (bounded in bytes, oldest use out). An address's
folds may take ``FOLD_MS_PER_S`` of CPU a second (``FOLD_BURST_S`` of it at once); past it, a game not cached is
refused (``rate_limited``). A page holds at most ``REPLAY_PAGE`` steps and ``HISTORY_PAGE_BYTES`` bytes
(``static`` counted; one step at least), views equal to the step before's left out.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import msgpack
import trio

from protocol.errors import ProtocolError
from protocol.messages import HISTORY_PAGE_BYTES, REPLAY_PAGE
from server.games import Event
from server.storage.journal_format import RawRecord, Record
from server.transport.limits import AddressBuckets
from server.core.match import OVER, Match
from server.core.session import Session
from server.runtime.table import FinishedTable, Records

if TYPE_CHECKING:
    from server.runtime.lobby import Lobby

CACHE_BYTES = 64 << 20
FOLD_MS_PER_S = 100.0  # an address's folds: a tenth of a core on average ...
FOLD_BURST_S = 20.0  # ... and 2 s of CPU at once (a 2-hour Parsimonia game folds in 0.2-0.4 s)

_pack = msgpack.Packer(use_bin_type=True).pack


@dataclass(frozen=True, slots=True)
class Step:
    """One event: ``seq``, ``time`` and ``event`` encoded (``head``, three key/value pairs), and its views
    encoded (``views``: the pairs ``view`` and ``private``; the same object as the step before's when equal)."""

    head: bytes
    views: bytes

    def encoded(self, with_views: bool) -> bytes:
        return (b"\x85" + self.head + self.views) if with_views else (b"\x83" + self.head)


@dataclass(frozen=True, slots=True)
class Folded:
    """A finished game's replay: its game, its static part, every step, and their size in bytes."""

    game: str
    static: bytes
    steps: list[Step]
    size: int


class _Stepping(Match):
    """A match that, as each event is numbered, notes it with the views as they stand then (the input that
    made it already applied)."""

    steps: list[Step]

    def _append(self, event: Event, at: int) -> None:
        super()._append(event, at)
        if not hasattr(self, "steps"):
            self.steps = []
        self.steps.append(_step(self, self.seq, at, event))


def _step(match: Match, seq: int, at: int, event: Event) -> Step:
    head = b"".join([_pack("seq"), _pack(seq), _pack("time"), _pack(at), _pack("event"), _pack(event.to_wire())])
    public = Session(match).public_view()
    engine = match.engine
    private = [None if engine is None else match.views.private(engine, s) for s in range(match.seat_count)]
    views = b"".join([_pack("view"), _pack(public), _pack("private"), _pack(private)])
    steps = getattr(match, "steps", None)
    if steps and steps[-1].views == views:
        views = steps[-1].views  # shared: a page leaves it out when the step before had it
    return Step(head, views)


def fold(records: Sequence[Record | RawRecord]) -> Folded | None:
    """Every step of a finished game's records (in a worker thread); None if they do not reach its end."""
    match = _Stepping.replay(records)
    if match.state != OVER or match.result is None:
        return None
    steps = getattr(match, "steps", [])
    if steps:  # the recorded result was adopted after the result event was numbered: the last step says it
        steps.pop()
        steps.append(_step(match, *match.history[-1]))
    size = sum(len(s.head) for s in steps) + sum(len(v) for v in {id(s.views): s.views for s in steps}.values())
    return Folded(match.game_name, _pack(match.static), steps, size)


def _timed_fold(records: Records) -> tuple[Folded | None, float]:
    """``fold`` of the records (read here too), and the CPU ms this thread spent on both."""
    started = time.thread_time()
    folded = fold(records())
    return folded, (time.thread_time() - started) * 1000


class Replays:
    """The folded games asked about lately, least recently used first out."""

    def __init__(self, max_bytes: int = CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self._kept: OrderedDict[str, Folded] = OrderedDict()
        self._folding = trio.CapacityLimiter(1)  # one fold at a time: replays may not take the server
        self.budget = AddressBuckets(FOLD_MS_PER_S, FOLD_BURST_S)  # each address's CPU ms for folds
        self.folds = 0

    async def folded(self, table_id: str, records: Records, address: str) -> Folded | None:
        """The table's steps, folded for ``address`` if no one has lately (``rate_limited`` past its budget)."""
        kept = self._kept.get(table_id)
        if kept is None:
            if not self.budget.has(address, trio.current_time()):
                raise ProtocolError("rate_limited", "this address has had many games replayed lately: ask again in "
                                    "a few seconds (a game replayed lately comes at once)")
            async with self._folding:
                kept = self._kept.get(table_id)  # another request may have folded it meanwhile
                if kept is None:
                    kept, cpu_ms = await trio.to_thread.run_sync(_timed_fold, records)
                    self._charge(address, cpu_ms)
                    self.folds += 1
                    if kept is None:
                        return None
                    self._keep(table_id, kept)
        self._kept.move_to_end(table_id)
        return kept

    def _charge(self, address: str, cpu_ms: float) -> None:
        """Take the fold's CPU (at least 1 ms) from the address's budget, down to nothing left."""
        now = trio.current_time()
        left = self.budget.left(address, now)
        available = self.budget.rate * self.budget.burst_s if left is None else left
        self.budget.take(address, min(max(1.0, cpu_ms), available), now)

    def _keep(self, table_id: str, folded: Folded) -> None:
        self._kept[table_id] = folded
        self.size += folded.size
        while self.size > self.max_bytes and len(self._kept) > 1:
            _, dropped = self._kept.popitem(last=False)
            self.size -= dropped.size


def records_of(lobby: "Lobby", table_id: str) -> Records:
    """How to read a finished table's records; ``ProtocolError`` when it has no replay (yet)."""
    table = lobby.tables.get(table_id)
    if table is not None and table.state != OVER:
        raise ProtocolError("bad_field", f"table: {table_id} is {table.state}: its replay opens once its game is over")
    if table is not None:
        records = table.records()
        if records is None:
            kind = "keeps no journal" if isinstance(table, FinishedTable) else "has not yet written its journal"
            raise ProtocolError("bad_field", f"table: {table_id} has no replay (this server {kind})")
        return records
    archived = lobby.data.archived(table_id) if lobby.data is not None else None
    if archived is None:
        lobby.get(table_id)  # says where it is (a cluster's other worker), or that it is nowhere
        raise ProtocolError("no_such_table", f"no table {table_id!r}")
    return archived


def page(table_id: str, folded: Folded, after: int, limit: int, re: int | None) -> bytes:
    """The ``replay`` frame of the steps after seq ``after``: at most ``limit`` steps and ``HISTORY_PAGE_BYTES``
    bytes (``static`` on the first page counted in), always one."""
    head: dict[str, str | int] = {"type": "replay", "table": table_id, "game": folded.game,
                                  "last_seq": len(folded.steps)}
    if re is not None:
        head["re"] = re
    budget = HISTORY_PAGE_BYTES - (len(folded.static) if after == 0 else 0)
    chosen: list[bytes] = []
    size = 0
    before: bytes | None = None
    for step in folded.steps[after:after + min(limit, REPLAY_PAGE)]:
        data = step.encoded(step.views != before)
        if chosen and size + len(data) > budget:
            break
        chosen.append(data)
        size += len(data)
        before = step.views
    if after + len(chosen) < len(folded.steps):
        head["next"] = after + len(chosen)
    parts = [bytes([0x80 | (len(head) + 1 + (after == 0))])]
    for key, value in head.items():
        parts += [_pack(key), _pack(value)]
    if after == 0:
        parts += [_pack("static"), folded.static]
    parts += [_pack("steps"), _array_header(len(chosen)), *chosen]
    return b"".join(parts)


def _array_header(n: int) -> bytes:
    return bytes([0x90 | n]) if n < 16 else b"\xdc" + n.to_bytes(2, "big")
