"""A table's past, page by page: the ``history`` request.

A live match holds only its latest events (``server.core.session.forget_old_events``), a finished one only its result;
every event ever sent follows from the table's records on disk. So a page whose events are still in memory is cut
from there, and an older one comes from the records read back and replayed through ``Match.replay`` (the code that
played them): in a worker thread, one replay at a time for the whole server, cached (``HistoryCache``, bounded in
bytes).

Each entry is redacted for whoever asks: a seat held by the asking connection sees what that seat saw, anyone else
what a spectator saw. A page holds at most ``HISTORY_PAGE`` events and ``HISTORY_PAGE_BYTES`` bytes (at least one
event). A finished game the server no longer lists is read from its replay file.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import msgpack
import trio

from protocol.frames import history_frame
from protocol.messages import HISTORY_PAGE_BYTES
from server.games import Event
from server.storage.journal_format import RawRecord
from server.core.match import Match, Numbered
from server.runtime.table import Records

CACHE_BYTES = 64 << 20

_pack = msgpack.Packer(use_bin_type=True).pack


@dataclass(frozen=True, slots=True)
class Entry:
    """One event as a page holds it: ``{"seq", "time", "event"}`` encoded, in the form its audience sees and
    in the form everyone else sees (``other``; None when everyone sees the same)."""

    seq: int
    full: bytes
    other: bytes | None
    audience: frozenset[int] | None

    @classmethod
    def of(cls, seq: int, at: int, event: Event) -> "Entry":
        full = _pack({"seq": seq, "time": at, "event": event.to_wire()})
        if event.audience is None:
            return cls(seq, full, None, None)
        return cls(seq, full, _pack({"seq": seq, "time": at, "event": event.redacted_wire()}), event.audience)

    def for_seat(self, seat: int | None) -> bytes:
        if self.other is None or (seat is not None and seat in self.audience):  # type: ignore[operator]
            return self.full
        return self.other

    @property
    def size(self) -> int:
        return len(self.full) + (len(self.other) if self.other is not None else 0)


def replayed(records: list[RawRecord]) -> list[Entry]:
    """Every event the records make, in order (in the worker thread)."""
    return [Entry.of(seq, at, event) for seq, at, event in Match.replay(records).history]


def cut(entries: Sequence[Entry], seat: int | None, limit: int) -> list[bytes]:
    """The first entries of a page: at most ``limit`` and ``HISTORY_PAGE_BYTES`` (but always one)."""
    page: list[bytes] = []
    size = 0
    for entry in entries[:limit]:
        data = entry.for_seat(seat)
        if page and size + len(data) > HISTORY_PAGE_BYTES:
            break
        page.append(data)
        size += len(data)
    return page


class HistoryCache:
    """The replayed histories of the tables asked about lately, least recently used first out."""

    def __init__(self, max_bytes: int = CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self._kept: OrderedDict[str, list[Entry]] = OrderedDict()
        self._replaying = trio.CapacityLimiter(1)  # one replay at a time: history may not take the server
        self.replays = 0

    async def entries(self, table_id: str, needed: int, records: Records) -> list[Entry]:
        """The table's events from seq 1, at least up to ``needed`` if its records hold it."""
        kept = self._kept.get(table_id)
        if kept is None or len(kept) < needed:
            async with self._replaying:
                kept = self._kept.get(table_id)  # another request may have replayed it meanwhile
                if kept is None or len(kept) < needed:
                    kept = await trio.to_thread.run_sync(lambda: replayed(records()))
                    self.replays += 1
                    self._keep(table_id, kept)
        self._kept.move_to_end(table_id)
        return kept

    def _keep(self, table_id: str, entries: list[Entry]) -> None:
        old = self._kept.pop(table_id, None)
        if old is not None:
            self.size -= sum(e.size for e in old)
        self._kept[table_id] = entries
        self.size += sum(e.size for e in entries)
        while self.size > self.max_bytes and len(self._kept) > 1:
            _, dropped = self._kept.popitem(last=False)
            self.size -= sum(e.size for e in dropped)


class Played(Protocol):
    """What a page reads of a table's match: a live or finished table's session, or the match itself."""

    @property
    def id(self) -> str: ...

    @property
    def seq(self) -> int: ...  # the last event's

    @property
    def history(self) -> Sequence[Numbered]: ...  # the latest events, oldest first


async def page(cache: HistoryCache, match: Played, records: Records | None, seat: int | None, after: int, limit: int,
               re: int | None) -> bytes:
    """The ``history`` frame of the events after seq ``after``: from memory when it still holds them, else
    replayed from ``records`` (None: the table has no journal, so what memory lost is ``skipped``)."""
    last = match.seq
    memory = match.history
    first_held = memory[0][0] if memory else last + 1
    skipped = 0
    if after >= last:
        chunk: Sequence[Entry] = []
    elif after + 1 >= first_held:
        start = after + 1 - first_held
        chunk = [Entry.of(*item) for item in memory[start:start + limit]]
    elif records is None:
        skipped = first_held - after - 1
        chunk = [Entry.of(*item) for item in memory[:limit]]
    else:
        entries = await cache.entries(match.id, after + 1, records)
        chunk = entries[after:after + limit]
        if not chunk:  # the records end before `after + 1` (a table with no durable records yet)
            skipped = first_held - after - 1
            chunk = [Entry.of(*item) for item in memory[:limit]]
    return _frame(match.id, re, last, cut(chunk, seat, limit), after, skipped)


async def archived_page(cache: HistoryCache, table_id: str, records: Records, after: int, limit: int,
                        re: int | None) -> bytes:
    """A page of a finished game the server no longer lists (finished before a restart, or longer ago than the
    finished tables it keeps): from its replay file, as a spectator saw it."""
    entries = await cache.entries(table_id, 0, records)
    return _frame(table_id, re, len(entries), cut(entries[after:after + limit], None, limit), after, 0)


def _frame(table_id: str, re: int | None, last: int, events: list[bytes], after: int, skipped: int) -> bytes:
    upto = (after + skipped + len(events)) if events else after
    return history_frame(table_id, re, last, events, upto if upto < last else None, skipped or None)
