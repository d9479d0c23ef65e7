"""The bare servers' protocol, without I/O: what both baselines answer, and to whom.

It speaks only what the storm load generator uses (hello, create, join, act with auction / bid / close)
and does nothing a game needs: no rules, no timers, no views, no history. For each command: decode, a
trivial check, ``ok`` to the sender, and the table's ``event`` encoded once for every seat. The baselines
(``baseline_trio.py``, ``baseline_websockets.py``) only move these frames.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Callable, Hashable
from typing import Any

import msgpack

from bench.stats import raise_nofile_limit
from protocol.messages import PROTOCOL_VERSION

LIMITS = {"max_frame_bytes": 65536, "max_str_len": 4096, "max_bin_len": 0, "max_array_len": 1024,
          "max_map_len": 256, "max_depth": 16}
pack = msgpack.Packer(use_bin_type=True).pack
Sends = list[tuple[list[Any], bytes]]  # (recipients, frame), in order


class Table:
    def __init__(self, table_id: str, seats: int) -> None:
        self.id = table_id
        self.seats = seats
        self.conns: list[Any] = []
        self.seq = 0
        self.next_auction = 1


class BareLobby:
    def __init__(self) -> None:
        self.tables: dict[str, Table] = {}
        self.seats: dict[Hashable, dict[str, int]] = {}  # connection -> table id -> seat
        self.ids = itertools.count(1)

    def handle(self, conn: Hashable, frame: bytes | str, now: int) -> Sends:
        """The frames to send for one frame received from ``conn`` at server time ``now``."""
        if isinstance(frame, str):
            return [([conn], _error(None, "malformed", "binary frames only"))]
        msg = msgpack.unpackb(frame, raw=False)
        kind, re = msg.get("type"), msg.get("id")
        if kind == "hello":
            return [([conn], pack({"type": "welcome", "re": re, "version": PROTOCOL_VERSION,
                                   "versions": [PROTOCOL_VERSION], "server_time": now, "limits": LIMITS,
                                   "games": ["parsimonia"]}))]
        if kind == "create":
            table = Table(f"t{next(self.ids)}", int(msg.get("seats", 6)))
            self.tables[table.id] = table
            return [([conn], pack({"type": "created", "re": re, "table": table.id}))]
        if kind == "join":
            return [([conn], self._join(conn, msg, re))]
        if kind == "act":
            return self._act(conn, msg, re, now)
        if kind == "ping":
            return [([conn], pack({"type": "pong", "re": re, "server_time": now}))]
        return [([conn], _error(re, "unknown_type", f"the bare server does not do {kind!r}"))]

    def _join(self, conn: Hashable, msg: dict[str, Any], re: Any) -> bytes:
        table = self.tables.get(msg.get("table"))
        if table is None:
            return _error(re, "no_such_table", "no such table")
        if len(table.conns) >= table.seats:
            return _error(re, "table_full", "table full")
        seat = len(table.conns)
        self.seats.setdefault(conn, {})[table.id] = seat
        table.conns.append(conn)
        return pack({"type": "joined", "re": re, "table": table.id, "seat": seat, "token": f"{table.id}-{seat}"})

    def _act(self, conn: Hashable, msg: dict[str, Any], re: Any, now: int) -> Sends:
        table = self.tables.get(msg.get("table"))
        seat = self.seats.get(conn, {}).get(table.id) if table is not None else None
        if table is None or seat is None:
            return [([conn], _error(re, "not_seated", "join first"))]
        cmd = msg.get("command") or {}
        kind = cmd.get("type")
        if kind == "bid":
            amount = cmd.get("amount")
            if not isinstance(amount, int) or amount <= 0 or not isinstance(cmd.get("auction"), int):
                return [([conn], pack({"type": "error", "re": re, "code": "illegal_action", "reason": "bid_too_low",
                                       "message": "a bid must be a positive integer"}))]
            event = {"type": "bid", "at": now, "auction": cmd["auction"], "seat": seat, "amount": amount,
                     "closes_at": now}
        elif kind == "auction":
            aid = table.next_auction
            table.next_auction += 1
            event = {"type": "auction_opened", "at": now, "auction": {
                "id": aid, "seller": seat, "starter": seat, "lot": [cmd.get("card")], "rule": "seller_picks",
                "start_price": cmd.get("start_price", 0), "bids": [], "high_bidder": None, "high": None}}
        elif kind == "close":
            event = {"type": "auction_closed", "at": now, "auction": cmd.get("auction"), "outcome": "no_sale",
                     "winner": None, "price": 0, "reason": "seller"}
        else:
            return [([conn], _error(re, "unknown_command", f"the bare server does not do {kind!r}"))]
        table.seq += 1
        frame = pack({"type": "event", "table": table.id, "seq": table.seq, "time": now, "event": event})
        return [([conn], pack({"type": "ok", "re": re})), (table.conns, frame)]  # the ok first, as ours does


def _error(re: Any, code: str, message: str) -> bytes:
    return pack({"type": "error", "re": re, "code": code, "message": message})


def baseline_args(description: str | None, default_port: int) -> argparse.Namespace:
    """A baseline server's ``--host`` and ``--port``; its open-file limit raised for thousands of connections."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=default_port)
    args = parser.parse_args()
    raise_nofile_limit()
    return args


def run_baseline(name: str, args: argparse.Namespace, run: Callable[[], object]) -> None:
    """Run a baseline server until Ctrl-C; a port it cannot listen on is one line and exit status 2."""
    try:
        run()
    except BaseException as exc:  # trio reports both inside exception groups
        if _found(exc, KeyboardInterrupt) is not None:
            return
        error = _found(exc, OSError)
        if error is None:
            raise
        print(f"{name}: cannot listen on {args.host}:{args.port}: {error.strerror or error}", file=sys.stderr)
        raise SystemExit(2) from None


def _found(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    if isinstance(exc, kind):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        return next((found for sub in exc.exceptions if (found := _found(sub, kind)) is not None), None)
    return None
