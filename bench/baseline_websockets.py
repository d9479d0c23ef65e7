"""Baseline: a bare broadcast server on the ``websockets`` library (asyncio, default event loop).

The same subset of the protocol as ``baseline_trio.py``: hello, create, join, act with auction / bid /
close. Decode, trivial check, ``ok``, encode the table's ``event`` once and hand the same bytes to the
table's connections with ``websockets.broadcast`` (which writes without waiting, and skips a connection
that is not open). No rules, no timers, no views, no history. Compression is off, as in the real server.

    python bench/baseline_websockets.py --port 9002
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import signal
import sys
import time
from typing import Any

import msgpack
from websockets import broadcast
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.stats import raise_nofile_limit  # noqa: E402

LIMITS = {"max_frame_bytes": 65536, "max_str_len": 4096, "max_bin_len": 0, "max_array_len": 1024,
          "max_map_len": 256, "max_depth": 16}

pack = msgpack.Packer(use_bin_type=True).pack


class Table:
    def __init__(self, table_id: str, seats: int) -> None:
        self.id = table_id
        self.seats = seats
        self.conns: list[ServerConnection] = []
        self.seq = 0
        self.next_auction = 1


class BareServer:
    def __init__(self) -> None:
        self.tables: dict[str, Table] = {}
        self.ids = itertools.count(1)
        self.epoch = time.monotonic()

    def now_ms(self) -> int:
        return int((time.monotonic() - self.epoch) * 1000)

    async def handle(self, ws: ServerConnection) -> None:
        seats: dict[str, int] = {}
        try:
            async for frame in ws:
                reply = self._on_message(ws, seats, frame)
                if reply is not None:
                    await ws.send(reply)
        except ConnectionClosed:
            pass

    def _error(self, re: Any, code: str, message: str) -> bytes:
        return pack({"type": "error", "re": re, "code": code, "message": message})

    def _on_message(self, ws: ServerConnection, seats: dict[str, int], frame: bytes | str) -> bytes | None:
        if isinstance(frame, str):
            return self._error(None, "malformed", "binary frames only")
        msg = msgpack.unpackb(frame, raw=False)
        kind = msg.get("type")
        re = msg.get("id")
        if kind == "hello":
            return pack({"type": "welcome", "re": re, "version": 1, "server_time": self.now_ms(),
                         "limits": LIMITS, "games": ["parsimonia"]})
        if kind == "create":
            table = Table(f"t{next(self.ids)}", int(msg.get("seats", 6)))
            self.tables[table.id] = table
            return pack({"type": "created", "re": re, "table": table.id})
        if kind == "join":
            table = self.tables.get(msg.get("table"))
            if table is None:
                return self._error(re, "no_such_table", "no such table")
            if len(table.conns) >= table.seats:
                return self._error(re, "table_full", "table full")
            seats[table.id] = len(table.conns)
            table.conns.append(ws)
            return pack({"type": "joined", "re": re, "table": table.id, "seat": seats[table.id],
                         "token": f"{table.id}-{seats[table.id]}"})
        if kind == "act":
            return self._act(ws, seats, msg, re)
        if kind == "ping":
            return pack({"type": "pong", "re": re, "server_time": self.now_ms()})
        return self._error(re, "unknown_type", f"the bare server does not do {kind!r}")

    def _act(self, ws: ServerConnection, seats: dict[str, int], msg: dict[str, Any], re: Any) -> bytes | None:
        table = self.tables.get(msg.get("table"))
        if table is None or table.id not in seats:
            return self._error(re, "not_seated", "join first")
        seat = seats[table.id]
        cmd = msg.get("command") or {}
        now = self.now_ms()
        kind = cmd.get("type")
        if kind == "bid":
            amount = cmd.get("amount")
            if not isinstance(amount, int) or amount <= 0 or not isinstance(cmd.get("auction"), int):
                return pack({"type": "error", "re": re, "code": "illegal_action", "reason": "bid_too_low",
                             "message": "a bid must be a positive integer"})
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
            return self._error(re, "unknown_command", f"the bare server does not do {kind!r}")
        table.seq += 1
        frame = pack({"type": "event", "table": table.id, "seq": table.seq, "time": now, "event": event})
        # the ok first, as the real server does; broadcast() writes to each open connection without waiting
        broadcast([ws], pack({"type": "ok", "re": re}))
        broadcast(table.conns, frame)
        return None


async def _serve(host: str, port: int) -> None:
    server = BareServer()
    stop = asyncio.get_running_loop().create_future()
    # Ctrl-C closes the connections politely; SIGTERM (how the bench stops it) ends the process at once
    asyncio.get_running_loop().add_signal_handler(signal.SIGINT, lambda: stop.done() or stop.set_result(None))
    async with serve(server.handle, host, port, compression=None, max_size=65536, ping_interval=None,
                     backlog=4096):
        await stop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9002)
    args = parser.parse_args()
    raise_nofile_limit()
    print(f"bare websockets server on ws://{args.host}:{args.port}", flush=True)
    asyncio.run(_serve(args.host, args.port))


if __name__ == "__main__":
    main()
