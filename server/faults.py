"""Fault injection for the fault campaign (tests/faults, docs/reliability.md): a test hook, not a feature.

One fault per server process, read once at start-up from ``PARSIMONIA_FAULT`` (``configure``)::

    ACTION@POINT[:ARG][:TABLE][#N]        e.g. kill@event:auction_opened#3, kill@half-write#30, eio@fsync:t2

The fault fires once, on the ``N``-th (default 1) occurrence of ``POINT`` in this process (of ``TABLE``'s only,
when given: the log writes holding its records). ``kill`` is a SIGKILL at ``event:TYPE`` (a step holding such an
event, durable, its answers not yet sent), ``create``, ``resume``, ``write`` (written, not yet synced),
``half-write`` or ``between-rounds`` (a tournament's); ``enospc`` and ``eio`` raise that ``OSError`` from the
log's ``write`` or ``fdatasync``. ``docs/reliability.md`` says what each point leaves.

Unset (the normal case), ``ACTIVE`` is None and each hook site costs one ``is None`` check.
"""

from __future__ import annotations

import errno
import os
import re
import signal
import threading
from dataclasses import dataclass, field

from server import logs

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


ACTIVE: Fault | None = None


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


def configure(text: str | None) -> None:
    """Set (or, with None or "", clear) the process's fault; ``ValueError`` for a bad value."""
    global ACTIVE
    ACTIVE = parse(text) if text else None
    if ACTIVE is not None:
        logs.get().warning("fault_armed", fault=text)


def kill(where: str) -> None:
    """Die as ``kill -9`` would: nothing flushed, nothing closed."""
    logs.get().warning("fault_fired", fault="kill", at=where)
    os.kill(os.getpid(), signal.SIGKILL)


# ---------------------------------------------------------------------- the hooks (callers check ACTIVE first)


def event_due(table: str, events: list[str]) -> bool:
    """Whether these events of a table's step make it the one to kill once it is durable."""
    fault = ACTIVE
    assert fault is not None
    return fault.point == "event" and fault.due("event", table, events.count(fault.arg))  # type: ignore[arg-type]


def at(point: str, table: str | None = None) -> None:
    """A point with no journal around it (``create``, ``resume`` of a table, ``between-rounds``): kill there
    if it is the one."""
    assert ACTIVE is not None
    if ACTIVE.action == "kill" and ACTIVE.due(point, table):
        kill(point if table is None else f"{point} {table}")


def _table_in(fault: Fault, tables: list[str]) -> str | None:
    """The fault's table if this round writes records of it (a fault for no table: any round)."""
    return fault.table if fault.table in tables else None


def before_write(path: str, fd: int, data: bytes, tables: list[str]) -> None:
    """In the log's worker thread, before the round's ``data`` (records of ``tables``) is written to ``fd``."""
    fault = ACTIVE
    assert fault is not None
    table = _table_in(fault, tables)
    if fault.action == "kill" and fault.point == "half-write" and fault.due("half-write", table):
        os.write(fd, data[: max(1, len(data) // 2)])
        kill(f"half of a {len(data)}-byte write of {len(tables)} tables' records")
    elif fault.action in _ERRNO and fault.due("write", table):
        _raise(fault.action, path)


def before_sync(path: str, tables: list[str]) -> None:
    """In the log's worker thread: the round's bytes are written, not yet synced."""
    fault = ACTIVE
    assert fault is not None
    table = _table_in(fault, tables)
    if fault.action == "kill" and fault.due("write", table):
        kill(f"a write of {len(tables)} tables' records, before its fsync")
    elif fault.action in _ERRNO and fault.due("fsync", table):
        _raise(fault.action, path)


def _raise(action: str, path: str) -> None:
    code = _ERRNO[action]
    logs.get().warning("fault_fired", fault=action, at=path)
    raise OSError(code, os.strerror(code), path)
