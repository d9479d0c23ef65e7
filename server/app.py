"""The server: a WebSocket listener, the lobby, and one task per table, all in one trio nursery."""

from __future__ import annotations

from dataclasses import dataclass, field

import trio
from trio_websocket import WebSocketRequest, serve_websocket

from protocol.codec import Limits
from server import logs
from server.clock import ServerClock
from server.connection import Connection
from server.lobby import Lobby


@dataclass
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 8765
    limits: Limits = field(default_factory=Limits)
    queue_size: int = 256  # frames queued for one client before it counts as too slow
    hello_timeout_s: float = 10.0
    max_tables: int = 10_000


class Server:
    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.lobby: Lobby | None = None
        self.port: int | None = None
        self.log = logs.get()

    async def run(self, *, task_status: trio.TaskStatus[Server] = trio.TASK_STATUS_IGNORED) -> None:
        cfg = self.config
        async with trio.open_nursery() as nursery:
            self.lobby = Lobby(nursery, ServerClock(), cfg.max_tables)
            ws_server = await nursery.start(
                lambda task_status: serve_websocket(
                    self._handle, cfg.host, cfg.port, ssl_context=None,
                    max_message_size=cfg.limits.max_frame_bytes, task_status=task_status,
                )
            )
            self.port = ws_server.port
            self.log.info("listening", host=cfg.host, port=self.port)
            task_status.started(self)

    async def _handle(self, request: WebSocketRequest) -> None:
        ws = await request.accept()
        assert self.lobby is not None
        await Connection(ws, self.lobby, self.config.limits, self.config.queue_size, self.config.hello_timeout_s).serve()
