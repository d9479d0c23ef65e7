"""The server: a WebSocket listener, the lobby, and one task per table, all in one trio nursery."""

from __future__ import annotations

from dataclasses import dataclass, field

import trio
from trio_websocket import WebSocketRequest, serve_websocket

from protocol.codec import Limits
from server import logs
from server.clock import ServerClock, keep_heartbeat
from server.connection import Connection
from server.lobby import Lobby
from server.storage import DataDir


# The WebSocket layer cuts off (1009) only frames far over max_frame_bytes; a frame a little over it
# reaches the codec, which answers `too_large` as protocol/SPEC.md says.
WS_SIZE_FACTOR = 2


@dataclass
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 8765
    limits: Limits = field(default_factory=Limits)
    queue_size: int = 256  # frames queued for one client before it counts as too slow
    hello_timeout_s: float = 10.0
    max_tables: int = 10_000
    data_dir: str | None = None  # None: tables live in memory only
    sync: str = "fsync"  # journal durability: fsync or write (see server/journal.py)


class Server:
    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.lobby: Lobby | None = None
        self.port: int | None = None
        self.log = logs.get()

    async def run(self, *, task_status: trio.TaskStatus[Server] = trio.TASK_STATUS_IGNORED) -> None:
        cfg = self.config
        async with trio.open_nursery() as nursery:
            if cfg.data_dir is None:
                self.lobby = Lobby(nursery, ServerClock(), cfg.max_tables)
            else:
                data = DataDir(cfg.data_dir, cfg.sync)
                recovered = data.recover()
                clock = ServerClock(data.start_ms(recovered))
                self.lobby = Lobby(nursery, clock, cfg.max_tables, data)
                self.lobby.recover(recovered)
                nursery.start_soon(keep_heartbeat, clock, data.clock_path)
            ws_server = await nursery.start(
                lambda task_status: serve_websocket(
                    self._handle, cfg.host, cfg.port, ssl_context=None,
                    max_message_size=WS_SIZE_FACTOR * cfg.limits.max_frame_bytes, task_status=task_status,
                )
            )
            self.port = ws_server.port
            self.log.info("listening", host=cfg.host, port=self.port)
            task_status.started(self)

    async def _handle(self, request: WebSocketRequest) -> None:
        ws = await request.accept()
        assert self.lobby is not None
        await Connection(ws, self.lobby, self.config.limits, self.config.queue_size, self.config.hello_timeout_s).serve()
