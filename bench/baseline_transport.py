"""Baseline: the bare broadcast server on our own transport (``server/transport``: trio streams, h11, wsproto).

It answers what ``bench/bare.py`` says, as ``baseline_trio.py`` does, but moves the frames the way the real
server does: one task per connection and no channel, each broadcast frame built once and the same bytes
queued to every subscriber (``server.transport.frames.shared``), a write tried at once without a task
switch and a writer task only under backpressure, ``gc.freeze()`` after start-up. Beside the
trio-websocket baseline it shows what the transport buys; beside the real server, what the rules,
timers, views, journal and checks cost.

    python bench/baseline_transport.py --port 9003
"""

from __future__ import annotations

import gc
import os
import socket
import sys

import trio

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.bare import BareLobby, baseline_args, run_baseline  # noqa: E402
from server.transport.frames import frame, shared  # noqa: E402
from server.transport.http import HttpConnection, text, wants_websocket, websocket_refusal  # noqa: E402
from server.transport.listen import serve_tcp  # noqa: E402
from server.transport.websocket import WebSocket, open_websocket  # noqa: E402

QUEUE_SIZE = 256  # frames a slow reader may have waiting, as in the real server
QUEUE_BYTES = 1 << 20  # and their bytes, as our server (server/runtime/app.py)
MAX_MESSAGE = 65536


class BareServer:
    def __init__(self) -> None:
        self.lobby = BareLobby()
        self.epoch = trio.current_time()

    def now_ms(self) -> int:
        return int((trio.current_time() - self.epoch) * 1000)

    async def handle(self, stream: trio.SocketStream, sock: socket.socket, ip: str, peer: str) -> None:
        try:
            http = HttpConnection(stream)
            request = await http.next_request()
            if request is None:
                return
            if not wants_websocket(request) or websocket_refusal(request) is not None:
                await http.respond(request, text(400, "WebSocket only\n"), close=True)
                return
            received = await http.switch_to_websocket(request)
            async with open_websocket(http.stream, sock, received, max_message=MAX_MESSAGE,
                                      queue_size=QUEUE_SIZE, queue_bytes=QUEUE_BYTES) as ws:
                await self._serve(ws)
        except OSError:
            pass  # the client went away mid-handshake
        finally:
            await trio.aclose_forcefully(stream)

    async def _serve(self, ws: WebSocket) -> None:
        lobby = self.lobby
        while (message := await ws.receive()) is not None:
            for recipients, payload in lobby.handle(ws, message, self.now_ms()):
                wire = shared(payload) if len(recipients) > 1 else frame(payload)
                for recipient in recipients:
                    if not recipient.send(wire):
                        recipient.drop_queue()  # too slow: dropped, as the real server does
                        recipient.close(1008, "too slow")


async def serve(host: str, port: int) -> None:
    server = BareServer()
    async with trio.open_nursery() as nursery:
        await nursery.start(serve_tcp, server.handle, host, port)
        gc.freeze()  # what start-up made is never collected again: the young generations stay small
        print(f"bare transport server on ws://{host}:{port}", flush=True)


def main() -> None:
    args = baseline_args(__doc__, 9003)
    run_baseline("bare transport server", args, lambda: trio.run(serve, args.host, args.port))


if __name__ == "__main__":
    main()
