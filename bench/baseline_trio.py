"""Baseline: a bare broadcast server on trio-websocket, the stack the real server is built on.

It answers what ``bench/bare.py`` says (the protocol subset the storm load generator uses, no game) and
queues the same encoded event for each of the table's connections. Like the real server, each connection has a writer task fed by a bounded
queue, so a slow reader is dropped and never stalls a table.

    python bench/baseline_trio.py --port 9001
"""

from __future__ import annotations

import os
import sys

import trio
from trio_websocket import ConnectionClosed, WebSocketConnection, WebSocketRequest, serve_websocket

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.bare import BareLobby, baseline_args, run_baseline  # noqa: E402

QUEUE_SIZE = 256


class Conn:
    def __init__(self, ws: WebSocketConnection) -> None:
        self.ws = ws
        self.out, self.out_recv = trio.open_memory_channel[bytes](QUEUE_SIZE)
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
        self.lobby = BareLobby()
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
                    for recipients, frame in self.lobby.handle(conn, await ws.get_message(), self.now_ms()):
                        for recipient in recipients:
                            recipient.send(frame)
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


async def serve(host: str, port: int) -> None:
    server = BareServer()
    await serve_websocket(server.handle, host, port, ssl_context=None, max_message_size=65536)


def main() -> None:
    args = baseline_args(__doc__, 9001)
    print(f"bare trio-websocket server on ws://{args.host}:{args.port}", flush=True)
    run_baseline("bare trio-websocket server", args, lambda: trio.run(serve, args.host, args.port))


if __name__ == "__main__":
    main()
