"""The data directory: the write-ahead log of every unfinished table, finished games' replay files, and what
could not be trusted.

    DIR/log                       the log (``server/storage/journal.py``): every unfinished table's records
    DIR/replays/<table>.journal   a finished game: ``parsimonia replay`` re-runs it
    DIR/corrupt/<table>.journal   records that failed their checks, for a person to look at (``.damaged``: the
                                  log's damaged bytes that cost the table records; ``log-MS``: a damaged log)
    DIR/clock                     the server time at the last heartbeat
    DIR/ids                       a table number above every one handed out: none is ever given twice
    DIR/lock                      the pid of the one process using (and flock-ing) the directory (``server.storage.dirlock``)
    DIR/tables/<table>.journal    a per-table journal of a server before the shared log: recovered on start,
                                  moved into the log, then removed (with the directory once empty)

On start (``recover``) the log is read (``read_log``), its tables checked, and a log holding more than whole
entries compacted, a damaged one kept first.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Callable, Sequence

from server.ops import logs
from server.storage.aside import set_aside_strangers
from server.storage.clock import read_heartbeat, trusted_start
from server.storage.dirlock import DataDirBusy, DirLock
from server.storage.journal import (Journal, JournalCorrupt, Log, LogInstrument, RawRecord, Syncer, decode_frames,
                            encode_record, read_journal, read_table, write_file)
from server.storage.journal_format import record_at
from server.storage.log_read import Damage

_ID = re.compile(r"^(?:w\d+-)?t(\d+)\.journal$")  # a cluster's worker K names its tables wK-tN
IDS_AHEAD = 64  # table numbers reserved at a time in DIR/ids (one durable write per that many tables created)
_TABLE_ID = re.compile(r"(?:w\d{1,6}-)?t\d{1,18}")  # what a table id may be, before it names a file
__all__ = ["DataDir", "DataDirBusy", "Recovered"]


@dataclass
class Recovered:
    table_id: str
    records: list[RawRecord]


class DataDir:
    """The directory, locked for this process until ``close()`` (``DataDirBusy`` if another holds it)."""

    def __init__(self, root: str, policy: str = "fsync", instrument: LogInstrument | None = None,
                 releasing: AbstractContextManager[object] | None = None) -> None:
        self.root = root
        self.policy = policy
        self.log_path = os.path.join(root, "log")
        self.legacy = os.path.join(root, "tables")
        self.replays = os.path.join(root, "replays")
        self.corrupt = os.path.join(root, "corrupt")
        self.clock_path = os.path.join(root, "clock")
        self.ids_path = os.path.join(root, "ids")
        self._reserved = 0  # DIR/ids: the table numbers below it may be handed out
        os.makedirs(root, mode=0o700, exist_ok=True)
        self.log = logs.get(data=root)
        # once it is ours: a directory or a FIFO where the log should be, ... is set aside (server/storage/aside.py)
        self._lock = DirLock(root, lambda: set_aside_strangers(root, self.log))
        for path in (self.replays, self.corrupt):
            os.makedirs(path, mode=0o700, exist_ok=True)
        self.syncer: Log = Syncer(self.log_path, self.replays, policy, instrument=instrument,
                                       releasing=releasing)  # the server runs it
        self._frames: dict[str, list[bytes]] = {}  # recovered tables' records, until their journal opens
        self._seen: list[str] = []  # every unfinished table found on start

    def close(self) -> None:
        """Release the directory for the next server."""
        self.syncer.close()
        self._lock.close()

    def open_journal(self, table_id: str) -> Journal:
        return self.syncer.open(table_id, self._frames.pop(table_id, None))

    def archived(self, table_id: str) -> Callable[[], list[RawRecord]] | None:
        """How to read the records of a finished game from its replay file, if it has one (None otherwise)."""
        if _TABLE_ID.fullmatch(table_id) is None:  # never a path of the client's making
            return None
        path = os.path.join(self.replays, f"{table_id}.journal")
        return (lambda: read_journal(path).records) if os.path.isfile(path) else None

    def finished_records(self, table_id: str) -> list[RawRecord]:
        """A finished table's records: its replay file, or (while the file is being written) the log's."""
        path = os.path.join(self.replays, f"{table_id}.journal")
        for _ in range(3):  # the file is renamed into place before the log lets the records go
            try:
                return read_journal(path).records
            except FileNotFoundError:
                records = read_table(self.log_path, table_id)
                if records:
                    return records
        raise FileNotFoundError(path)

    def next_table_number(self) -> int:
        """Above every table number the directory knows of, and every one reserved (``reserve_table_numbers``):
        ids of tables finished, closed, expired, set aside or lost stay taken."""
        names = [*(f"{t}.journal" for t in self._seen), *self._listdir(self.legacy), *os.listdir(self.replays),
                 *os.listdir(self.corrupt)]
        found = max([int(m.group(1)) for name in names if (m := _ID.match(name))], default=0) + 1
        return max(found, self._read_reserved())

    def reserve_table_numbers(self, number: int) -> None:
        """Table ``number`` is being handed out: once it is at the reserve's end, ``IDS_AHEAD`` more are reserved,
        durably, before it is used (a restart then starts after them)."""
        if number < self._reserved:
            return
        self._reserved = number + IDS_AHEAD
        write_file(self.ids_path, [f"{self._reserved}\n".encode()])

    def _read_reserved(self) -> int:
        """What DIR/ids holds (a regular file, if anything: ``server.storage.aside``); 0 when nothing, or garbage."""
        try:
            with open(self.ids_path, "rb") as f:
                text = f.read(32)
        except FileNotFoundError:
            return 0
        if not text.strip().isdigit():
            self.log.warning("ids_file_refused", path=self.ids_path, why="not a number: the tables found are used")
            return 0
        self._reserved = int(text)
        return self._reserved

    @staticmethod
    def _listdir(path: str) -> list[str]:
        return os.listdir(path) if os.path.isdir(path) else []

    def recover(self) -> list[Recovered]:
        """Every unfinished table's records, oldest table first; the log compacted to them if it holds anything
        else but whole entries. Tables whose records cannot be trusted are set aside; a log with damage, or with a
        tail that a crash does not leave (a whole entry failing its check), is kept (``corrupt/log-MS``) first."""
        frames = self._recover_legacy()
        legacy = bool(frames) or bool(self._listdir(self.legacy))
        read = self.syncer.read()
        if read.damaged or (read.torn and not read.cut_short):  # not just what a crash leaves: kept for a person
            self._keep_log(read.damaged)
        if read.torn:
            self.log.warning("log_torn_tail_dropped", kept_bytes=read.valid_bytes,
                             dropped_bytes=os.path.getsize(self.log_path) - read.valid_bytes,
                             tables=read.torn_tables)
        frames.update(read.tables)
        self._seen = list(frames)
        hit = read.hit
        for table_id in hit:  # named even if nothing of it is whole: its number stays taken
            if table_id not in self._seen:
                self._seen.append(table_id)
        out = []
        for table_id in sorted(set(frames) | set(hit), key=lambda t: (len(t), t)):
            if table_id in hit and os.path.isfile(os.path.join(self.replays, f"{table_id}.journal")):
                frames.pop(table_id, None)  # it finished: its replay file, written before its end entry, holds it
                self.log.warning("log_damage_in_finished_table", table=table_id)
                continue
            if table_id in hit:
                where = ", ".join(f"{d.start}-{d.end}" for d in hit[table_id])
                self._write_aside(table_id, frames.pop(table_id, []),
                                  f"records lost in damaged bytes {where} of the log", hit[table_id])
                continue
            try:
                records = decode_frames(frames[table_id], f"{table_id} in the log")
                if records[0].get("k") != "table":
                    raise JournalCorrupt(f"{table_id}: no table record at its start")
            except JournalCorrupt as exc:
                self._write_aside(table_id, frames.pop(table_id), str(exc))
                continue
            out.append(Recovered(table_id, records))
        if legacy or read.torn or read.damaged or read.unsequenced or set(read.tables) - set(frames):
            self.syncer.compact(frames)  # else it holds just what it should: finished tables' leftovers wait for
            # the first checkpoint, which runs between rounds, not before the server listens
        self._frames = frames
        for name in self._listdir(self.legacy):
            if _ID.match(name):
                os.remove(os.path.join(self.legacy, name))
        if os.path.isdir(self.legacy) and not os.listdir(self.legacy):
            os.rmdir(self.legacy)
        return out

    def _keep_log(self, damaged: list[Damage]) -> None:
        """The log as found, kept in ``corrupt/`` (a second name for the file: the compaction that follows
        writes a new one), made durable before it, with one line."""
        ms = time.time_ns() // 1_000_000
        while os.path.lexists(kept := os.path.join(self.corrupt, f"log-{ms}")):
            ms += 1  # a second start within the same ms keeps its own
        try:
            os.link(self.log_path, kept)
        except OSError:  # a filesystem without hard links
            shutil.copyfile(self.log_path, kept)
            with open(kept, "rb") as f:
                os.fsync(f.fileno())
        directory = os.open(self.corrupt, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
        self.log.error("log_damaged_kept", kept=os.path.relpath(kept, self.root),
                       damaged=[f"{d.start}-{d.end}" for d in damaged])

    def _recover_legacy(self) -> dict[str, list[bytes]]:
        """The per-table journals of a server before the shared log, as frames for the log."""
        out: dict[str, list[bytes]] = {}
        for name in sorted(self._listdir(self.legacy), key=lambda n: (len(n), n)):
            if not _ID.match(name):
                continue
            path = os.path.join(self.legacy, name)
            try:
                read = read_journal(path)
            except JournalCorrupt as exc:
                os.replace(path, os.path.join(self.corrupt, name))
                self.log.error("journal_set_aside", journal=name, why=str(exc))
                continue
            if not read.valid_bytes:  # a crash while its table was created: never acknowledged
                self.log.warning("journal_never_created_dropped", journal=name, bytes=os.path.getsize(path))
                continue
            if read.torn:
                self.log.warning("journal_torn_tail_dropped", journal=name, kept_bytes=read.valid_bytes)
            out[name.removesuffix(".journal")] = [encode_record(record) for record in read.records]
        return out

    def set_aside(self, table_id: str, why: str) -> None:
        """A recovered table that does not replay: its records go to ``corrupt/`` and leave the log."""
        self._write_aside(table_id, self._frames.pop(table_id, []), why)
        self.syncer.drop(table_id)

    def _write_aside(self, table_id: str, frames: list[bytes], why: str,
                     damaged: Sequence[Damage] = ()) -> None:
        """``corrupt/<table>.journal``: the table's whole records; ``corrupt/<table>.damaged``: the bytes of the
        damaged regions of the log that cost it records, one after the other."""
        name = f"{table_id}.journal"
        write_file(os.path.join(self.corrupt, name), frames)
        if damaged:
            with open(self.log_path, "rb") as f:
                regions = []
                for region in damaged:
                    f.seek(region.start)
                    regions.append(f.read(region.end - region.start))
            write_file(os.path.join(self.corrupt, f"{table_id}.damaged"), regions)
        self.log.error("journal_set_aside", journal=name, why=why)

    def start_ms(self, recovered: list[Recovered]) -> int:
        """Where the server clock starts: no earlier than anything already journaled."""
        latest = [record_at(r) for rec in recovered for r in rec.records]
        heartbeat = read_heartbeat(self.clock_path)
        if heartbeat is None:
            self.log.warning("clock_file_refused", path=self.clock_path,
                             why="not a regular file holding a number: the journals' times are used")
            heartbeat = 0
        start, why = trusted_start(heartbeat, max(latest, default=None))
        if why is not None:
            self.log.warning("clock_file_refused", path=self.clock_path, why=why)
        return start
