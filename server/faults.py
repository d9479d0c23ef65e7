"""The fault campaign's instrument (tests/faults, docs/reliability.md): a test instrument, not a feature.

The runtime never imports it. ``parsimonia serve`` and ``parsimonia tournament`` build it from
``PARSIMONIA_FAULT`` (``from_env``) and hand it to the seams every instrument goes through
(``server.runtime.app.Instruments``): around a table's creation and each step (``server.runtime.table.TableInstrument``), around
each round's write to the log (``server.storage.journal.LogInstrument``), and between a tournament's rounds. Unset, no
seam has an instrument. One fault per process::

    ACTION@POINT[:ARG][:TABLE][#N]        e.g. kill@event:auction_opened#3, kill@half-write#30, eio@fsync:t2

The fault fires once, on the ``N``-th (default 1) occurrence of ``POINT`` (of ``TABLE``'s only, when given: the
log writes holding its records). ``kill`` is a SIGKILL at ``event:TYPE`` (a step holding such an event, durable,
its answers not yet sent), ``create``, ``resume``, ``write`` (written, not yet synced), ``half-write`` or
``between-rounds``; ``enospc`` and ``eio`` raise that ``OSError`` from the log's ``write`` or ``fdatasync``.
"""

from __future__ import annotations

import errno
import os
import re
import signal
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Callable

from server.ops import logs
from server.runtime.app import Instruments

ENV = "PARSIMONIA_FAULT"
_SPEC = re.compile(r"^(?P<action>[a-z]+)@(?P<point>[a-z-]+)(?::(?P<arg>[a-z_]+))?(?::(?P<table>t\d+))?"
                   r"(?:#(?P<n>[1-9]\d*))?$")
_POINTS = {
    "kill": ("event", "create", "resume", "write", "half-write", "between-rounds"),
    "enospc": ("write", "fsync"),
    "eio": ("write", "fsync"),
}
_NEEDS_ARG = ("event",)
_ERRNO = {"enospc": errno.ENOSPC, "eio": errno.EIO}


@dataclass
class Fault:
    action: str
    point: str
    arg: str | None = None  # the event type
    table: str | None = None
    n: int = 1
    seen: int = 0
    fired: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)  # journal writes run in threads

    def due(self, point: str, table: str | None, count: int = 1) -> bool:
        """Whether ``count`` more occurrences of ``point`` (at ``table``) make this fault fire now."""
        if self.fired or point != self.point or (self.table is not None and table != self.table) or not count:
            return False
        with self._lock:
            self.seen += count
            if self.seen < self.n or self.fired:
                return False
            self.fired = True
            return True


def parse(text: str) -> Fault:
    """``ValueError`` with one line saying what is wrong."""
    m = _SPEC.match(text.strip())
    if m is None:
        raise ValueError(f"{ENV}={text!r}: give ACTION@POINT[:ARG][:TABLE][#N], e.g. kill@event:bid#3 or "
                         "eio@fsync:t2")
    action, point, arg = m["action"], m["point"], m["arg"]
    if action not in _POINTS:
        raise ValueError(f"{ENV}={text!r}: no action {action!r}; there are {', '.join(_POINTS)}")
    if point not in _POINTS[action]:
        raise ValueError(f"{ENV}={text!r}: {action} applies at {', '.join(_POINTS[action])}, not {point!r}")
    if (point in _NEEDS_ARG) != (arg is not None):
        what = "needs a type, e.g. event:bid" if point in _NEEDS_ARG else "takes no argument"
        raise ValueError(f"{ENV}={text!r}: {point} {what}")
    return Fault(action, point, arg, m["table"], int(m["n"] or 1))


def from_env(environ: Mapping[str, str]) -> Instruments:
    """The instruments for ``environ``'s fault: none when it is unset or empty; ``ValueError`` for a bad value."""
    text = environ.get(ENV)
    if not text:
        return Instruments()
    faults = Faults(parse(text))
    logs.get().warning("fault_armed", fault=text)
    return Instruments(tables=faults, log=faults, between_rounds=faults.between_rounds)


def kill(where: str) -> None:
    """Die as ``kill -9`` would: nothing flushed, nothing closed."""
    logs.get().warning("fault_fired", fault="kill", at=where)
    os.kill(os.getpid(), signal.SIGKILL)


class Faults:
    """One fault, armed: the instrument at every seam (``TableInstrument``, ``LogInstrument``, between rounds).
    Each seam reports its points; the fault acts at its own one, once."""

    def __init__(self, fault: Fault) -> None:
        self.fault = fault

    def _at(self, point: str, table: str | None = None) -> None:
        """A point with no journal around it: kill there if it is the one."""
        if self.fault.action == "kill" and self.fault.due(point, table):
            kill(point if table is None else f"{point} {table}")

    # ------------------------------------------------------------------ around tables (server.runtime.table)

    def created(self, table: str) -> None:
        self._at("create", table)

    def stepped(self, table: str, request: str | None, events: list[str]) -> Callable[[], None] | None:
        """A resume is killed at once; a step holding the fault's event ends its table, then the process once the
        step is durable, before its answers and events leave."""
        if request == "resume":
            self._at("resume", table)
        fault = self.fault
        if fault.point == "event" and fault.due("event", table, events.count(fault.arg or "")):
            where = f"{table}, a step with {fault.arg}"
            return lambda: kill(where)
        return None

    # ------------------------------------------------------------------ around the log's rounds (server.storage.journal)

    def _table_in(self, tables: list[str]) -> str | None:
        """The fault's table if this round writes records of it (a fault for no table: any round)."""
        return self.fault.table if self.fault.table in tables else None

    def before_write(self, path: str, fd: int, data: bytes, tables: list[str]) -> None:
        """In the log's writer thread, before the round's ``data`` (records of ``tables``) is written to ``fd``."""
        fault, table = self.fault, self._table_in(tables)
        if fault.action == "kill" and fault.point == "half-write" and fault.due("half-write", table):
            os.write(fd, data[: max(1, len(data) // 2)])
            kill(f"half of a {len(data)}-byte write of {len(tables)} tables' records")
        elif fault.action in _ERRNO and fault.due("write", table):
            _raise(fault.action, path)

    def before_sync(self, path: str, tables: list[str]) -> None:
        """In the log's writer thread: the round's bytes are written, not yet synced."""
        fault, table = self.fault, self._table_in(tables)
        if fault.action == "kill" and fault.due("write", table):
            kill(f"a write of {len(tables)} tables' records, before its fsync")
        elif fault.action in _ERRNO and fault.due("fsync", table):
            _raise(fault.action, path)

    # ------------------------------------------------------------------ a tournament (server.tournament.director)

    def between_rounds(self) -> None:
        self._at("between-rounds")


def _raise(action: str, path: str) -> None:
    code = _ERRNO[action]
    logs.get().warning("fault_fired", fault=action, at=path)
    raise OSError(code, os.strerror(code), path)
