"""The data directory: live journals, finished games' replay files, and what could not be trusted.

    DIR/tables/<table>.journal    the journal of every unfinished table (recovered on start)
    DIR/replays/<table>.journal   a finished game: ``parsimonia replay`` re-runs it
    DIR/corrupt/<table>.journal   a journal that failed its checks, set aside for a person to look at
    DIR/clock                     the server time at the last heartbeat
    DIR/lock                      the pid of the one process using (and flock-ing) the directory (``server.dirlock``)
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from server import logs
from server.clock import read_heartbeat
from server.dirlock import DataDirBusy, DirLock
from server.journal import Journal, JournalCorrupt, Syncer, read_journal

_ID = re.compile(r"^t(\d+)\.journal$")
__all__ = ["DataDir", "DataDirBusy", "Recovered"]


@dataclass
class Recovered:
    table_id: str
    records: list[dict[str, Any]]
    valid_bytes: int
    torn: bool


class DataDir:
    """The directory, locked for this process until ``close()`` (``DataDirBusy`` if another holds it)."""

    def __init__(self, root: str, policy: str = "fsync") -> None:
        self.root = root
        self.policy = policy
        self.tables = os.path.join(root, "tables")
        self.replays = os.path.join(root, "replays")
        self.corrupt = os.path.join(root, "corrupt")
        self.clock_path = os.path.join(root, "clock")
        os.makedirs(root, mode=0o700, exist_ok=True)
        self._lock = DirLock(root)
        self.syncer = Syncer()  # every journal of the directory; the server runs it
        for path in (self.tables, self.replays, self.corrupt):
            os.makedirs(path, mode=0o700, exist_ok=True)
        self.log = logs.get(data=root)

    def close(self) -> None:
        """Release the directory for the next server."""
        self._lock.close()

    def journal_path(self, table_id: str) -> str:
        return os.path.join(self.tables, f"{table_id}.journal")

    def open_journal(self, table_id: str, truncate_to: int | None = None) -> Journal:
        return self.syncer.add(Journal(self.journal_path(table_id), self.policy, truncate_to))

    def archive(self, table_id: str) -> None:
        """A finished table's journal becomes its replay file."""
        os.replace(self.journal_path(table_id), os.path.join(self.replays, f"{table_id}.journal"))

    def next_table_number(self) -> int:
        numbers = [int(m.group(1)) for d in (self.tables, self.replays, self.corrupt) for name in os.listdir(d)
                   if (m := _ID.match(name))]
        return max(numbers, default=0) + 1

    def recover(self) -> list[Recovered]:
        """Every unfinished table's records, oldest table first. Corrupt journals are moved aside."""
        out = []
        for name in sorted(os.listdir(self.tables), key=lambda n: (len(n), n)):
            if not _ID.match(name):
                continue
            path = os.path.join(self.tables, name)
            try:
                read = read_journal(path)
                if not read.valid_bytes:  # not one whole record
                    self._drop_unborn(name, path)
                    continue
                if not read.records or read.records[0].get("k") != "table":
                    raise JournalCorrupt(f"{path}: no table record at its start")
            except JournalCorrupt as exc:
                self.set_aside(name, str(exc))
                continue
            if read.torn:
                self.log.warning("journal_torn_tail_dropped", journal=name, kept_bytes=read.valid_bytes)
            out.append(Recovered(name.removesuffix(".journal"), read.records, read.valid_bytes, read.torn))
        return out

    def _drop_unborn(self, name: str, path: str) -> None:
        """A journal with no whole record: a crash came while its table was being created, before its first
        record was durable, so the creation was never acknowledged (``created`` waits for it). Nothing in it
        can be trusted or lost: it goes, with a warning, rather than to ``corrupt`` for a person to look at."""
        size = os.path.getsize(path)
        os.remove(path)
        self.log.warning("journal_never_created_dropped", journal=name, bytes=size)

    def set_aside(self, name: str, why: str) -> None:
        os.replace(os.path.join(self.tables, name), os.path.join(self.corrupt, name))
        self.log.error("journal_set_aside", journal=name, why=why)

    def start_ms(self, recovered: list[Recovered]) -> int:
        """Where the server clock starts: no earlier than anything already journaled."""
        latest = [r.get("at", 0) for rec in recovered for r in rec.records]
        heartbeat = read_heartbeat(self.clock_path)
        if heartbeat is None:
            self.log.warning("clock_file_refused", path=self.clock_path,
                             why="not a regular file holding a number: the journals' times are used")
            heartbeat = 0
        return max([heartbeat, *latest])
