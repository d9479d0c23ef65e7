"""Baseline: a bare broadcast server on the ``websockets`` library (asyncio, default event loop).

It answers what ``bench/bare.py`` says (the protocol subset the storm load generator uses, no game) and
hands the same encoded event to the table's connections with ``websockets.broadcast`` (which writes
without waiting, and skips a connection that is not open). Compression is off, as in the real server.

    python bench/baseline_websockets.py --port 9002
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time

from websockets import broadcast
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.bare import BareLobby, baseline_args, run_baseline  # noqa: E402


class BareServer:
    def __init__(self) -> None:
        self.lobby = BareLobby()
        self.epoch = time.monotonic()

    def now_ms(self) -> int:
        return int((time.monotonic() - self.epoch) * 1000)

    async def handle(self, ws: ServerConnection) -> None:
        try:
            async for frame in ws:
                # broadcast() writes to each open connection without waiting
                for recipients, out in self.lobby.handle(ws, frame, self.now_ms()):
                    broadcast(recipients, out)
        except ConnectionClosed:
            pass


async def _serve(host: str, port: int) -> None:
    server = BareServer()
    stop = asyncio.get_running_loop().create_future()
    # Ctrl-C closes the connections politely; SIGTERM (how the bench stops it) ends the process at once
    asyncio.get_running_loop().add_signal_handler(signal.SIGINT, lambda: stop.done() or stop.set_result(None))
    async with serve(server.handle, host, port, compression=None, max_size=65536, ping_interval=None,
                     backlog=4096):
        await stop


def main() -> None:
    args = baseline_args(__doc__, 9002)
    print(f"bare websockets server on ws://{args.host}:{args.port}", flush=True)
    run_baseline("bare websockets server", args, lambda: asyncio.run(_serve(args.host, args.port)))


if __name__ == "__main__":
    main()
