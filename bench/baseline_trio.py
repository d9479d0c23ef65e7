"""Baseline: a bare broadcast server on trio-websocket, the stack the real server is built on.

It speaks only what the storm load generator uses (hello, create, join, act with auction / bid / close)
and does nothing a game needs: no rules, no timers, no views, no history. For each command it decodes the
frame, makes a trivial check, answers ``ok``, encodes the table's ``event`` once and queues the same bytes
for the table's connections. Like the real server, each connection has a writer task fed by a bounded
queue, so a slow reader is dropped and never stalls a table.

    python bench/baseline_trio.py --port 9001
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
from typing import Any

import msgpack
import trio
from trio_websocket import ConnectionClosed, WebSocketConnection, WebSocketRequest, serve_websocket

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.stats import raise_nofile_limit  # noqa: E402

QUEUE_SIZE = 256
LIMITS = {"max_frame_bytes": 65536, "max_str_len": 4096, "max_bin_len": 0, "max_array_len": 1024,
          "max_map_len": 256, "max_depth": 16}

pack = msgpack.Packer(use_bin_type=True).pack


class Table:
    def __init__(self, table_id: str, seats: int) -> None:
        self.id = table_id
        self.seats = seats
        self.conns: list[Conn] = []
        self.seq = 0
        self.next_auction = 1


class Conn:
    def __init__(self, ws: WebSocketConnection) -> None:
        self.ws = ws
        self.out, self.out_recv = trio.open_memory_channel[bytes](QUEUE_SIZE)
        self.seat: dict[str, int] = {}  # table id -> seat
        self.closed = False

    def send(self, frame: bytes) -> None:
        if self.closed:
            return
        try:
            self.out.send_nowait(frame)
        except trio.WouldBlock:
            self.closed = True  # too slow: drop it, as the real server does
            self.out.close()


class BareServer:
    def __init__(self) -> None:
        self.tables: dict[str, Table] = {}
        self.ids = itertools.count(1)
        self.epoch = trio.current_time()

    def now_ms(self) -> int:
        return int((trio.current_time() - self.epoch) * 1000)

    async def handle(self, request: WebSocketRequest) -> None:
        ws = await request.accept()
        conn = Conn(ws)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._writer, conn, nursery.cancel_scope)
            try:
                while not conn.closed:
                    self._on_message(conn, await ws.get_message())
            except ConnectionClosed:
                pass
            nursery.cancel_scope.cancel()
        conn.closed = True

    async def _writer(self, conn: Conn, scope: trio.CancelScope) -> None:
        try:
            async for frame in conn.out_recv:
                await conn.ws.send_message(frame)
        except ConnectionClosed:
            pass
        with trio.move_on_after(1) as cleanup:
            cleanup.shield = True
            await conn.ws.aclose()
        scope.cancel()

    def _error(self, conn: Conn, re: Any, code: str, message: str) -> None:
        conn.send(pack({"type": "error", "re": re, "code": code, "message": message}))

    def _on_message(self, conn: Conn, frame: bytes | str) -> None:
        if isinstance(frame, str):
            self._error(conn, None, "malformed", "binary frames only")
            return
        msg = msgpack.unpackb(frame, raw=False)
        kind = msg.get("type")
        re = msg.get("id")
        if kind == "hello":
            conn.send(pack({"type": "welcome", "re": re, "version": 1, "server_time": self.now_ms(),
                            "limits": LIMITS, "games": ["parsimonia"]}))
        elif kind == "create":
            table = Table(f"t{next(self.ids)}", int(msg.get("seats", 6)))
            self.tables[table.id] = table
            conn.send(pack({"type": "created", "re": re, "table": table.id}))
        elif kind == "join":
            table = self.tables.get(msg.get("table"))
            if table is None:
                self._error(conn, re, "no_such_table", "no such table")
            elif len(table.conns) >= table.seats:
                self._error(conn, re, "table_full", "table full")
            else:
                conn.seat[table.id] = len(table.conns)
                table.conns.append(conn)
                conn.send(pack({"type": "joined", "re": re, "table": table.id, "seat": conn.seat[table.id],
                                "token": f"{table.id}-{conn.seat[table.id]}"}))
        elif kind == "act":
            self._act(conn, msg, re)
        elif kind == "ping":
            conn.send(pack({"type": "pong", "re": re, "server_time": self.now_ms()}))
        else:
            self._error(conn, re, "unknown_type", f"the bare server does not do {kind!r}")

    def _act(self, conn: Conn, msg: dict[str, Any], re: Any) -> None:
        table = self.tables.get(msg.get("table"))
        if table is None or table.id not in conn.seat:
            self._error(conn, re, "not_seated", "join first")
            return
        seat = conn.seat[table.id]
        cmd = msg.get("command") or {}
        now = self.now_ms()
        kind = cmd.get("type")
        if kind == "bid":
            amount = cmd.get("amount")
            if not isinstance(amount, int) or amount <= 0 or not isinstance(cmd.get("auction"), int):
                conn.send(pack({"type": "error", "re": re, "code": "illegal_action", "reason": "bid_too_low",
                                "message": "a bid must be a positive integer"}))
                return
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
            self._error(conn, re, "unknown_command", f"the bare server does not do {kind!r}")
            return
        conn.send(pack({"type": "ok", "re": re}))
        table.seq += 1
        frame = pack({"type": "event", "table": table.id, "seq": table.seq, "time": now, "event": event})
        for other in table.conns:
            other.send(frame)


async def serve(host: str, port: int) -> None:
    server = BareServer()
    await serve_websocket(server.handle, host, port, ssl_context=None, max_message_size=65536)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9001)
    args = parser.parse_args()
    raise_nofile_limit()
    print(f"bare trio-websocket server on ws://{args.host}:{args.port}", flush=True)
    try:
        trio.run(serve, args.host, args.port)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
