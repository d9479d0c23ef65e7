"""The names a cluster shares: table and connection ids that tell their worker, and the keys and channels in Redis."""

from __future__ import annotations

import re

ROOT = "parsimonia:"
WORKERS = ROOT + "workers"  # the set of every worker id ever registered (its entry expires, not its membership)
BULLETINS = ROOT + "bulletins"  # the channel of bulletins published on any worker, for every worker
CHANGES = ROOT + "changes"  # the channel on which a worker that opened a table tells the others (its number)
_TABLE_ID = re.compile(r"w([1-9][0-9]{0,5})-t[1-9][0-9]*", re.ASCII)  # whole (fullmatch), ASCII digits only
CONNECTIONS_APART = 10**12  # worker K numbers its connections from K * this + 1 (worker 999999's stay under 2**62)


def table_prefix(worker: int) -> str:
    """Worker ``worker`` names its tables ``w3-t1``, ``w3-t2``...: any worker tells the holder from the id."""
    return f"w{worker}-"


def worker_of(table_id: str) -> int | None:
    """The worker that holds ``table_id``, or None for an id no worker gives."""
    m = _TABLE_ID.fullmatch(table_id)
    return None if m is None else int(m.group(1))


def first_connection_id(worker: int) -> int:
    """Worker ``worker``'s first connection id: ids unique across the cluster, each telling its worker."""
    return worker * CONNECTIONS_APART + 1


def worker_of_connection(conn_id: int) -> int:
    """The worker that holds connection ``conn_id`` (0: an id no worker gives)."""
    return conn_id // CONNECTIONS_APART


def entry_key(worker: int) -> str:
    """The worker's entry: its address, its load and its tables' summaries; it expires unless renewed."""
    return f"{ROOT}worker:{worker}"


def inbox(worker: int) -> str:
    """The channel on which other workers ask this one to create a table or act on one of its tables."""
    return f"{ROOT}inbox:{worker}"


def waiting_key(address: str) -> str:
    """The places of the tables ``address`` created that wait for players, across the cluster (``caps``)."""
    return f"{ROOT}waiting:{address}"
