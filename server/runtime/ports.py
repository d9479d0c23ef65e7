"""What the server's lower parts need of the higher ones that hold them, as ``typing.Protocol`` classes (ports).

The server (``server.runtime.app``) holds the lobby, the connections, the web answers and the cluster's worker; a
connection (``server.runtime.connection``) calls the request router (``server.runtime.requests``). Each of those lower parts is
handed the higher one, and reads it only through the port here: ``ServerPort`` for the server, ``ConnectionPort``
for a connection, ``ClusterNode`` for the cluster's worker. So no module imports one above it, not even for its
annotations (``tests/test_layout.py`` counts those too), and what a part may use of another is written down.

A port names only what some lower part reads or calls, read-only where nothing writes it; mypy checks that the real
class fits where the server hands itself over. This module imports nothing above the lobby.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Protocol, TypedDict

import trio
from structlog.typing import FilteringBoundLogger

from protocol.codec import Limits
from protocol.errors import ProtocolError
from protocol.messages import ConnectionSummary
from protocol.values import ReadMap
from server.transport.limits import AddressBuckets, ClientLimits
from server.runtime.lobby import Lobby
from server.ratings.tables import Rater
from server.runtime.replay_steps import Replays
from server.transport.websocket import WebSocket
from server.runtime.turns import Turns


class ConfigPort(Protocol):
    """The settings the server's parts read (``server.runtime.app.ServerConfig``)."""

    @property
    def limits(self) -> Limits: ...  # a message's bounds, as the welcome tells them

    @property
    def client(self) -> ClientLimits: ...  # what one client may cost

    @property
    def admin_token(self) -> str | None: ...

    @property
    def loop_stall_s(self) -> float: ...


class LoopWatchPort(Protocol):
    """How late the server's loop is (``server.runtime.health.LoopWatch``)."""

    def late_s(self) -> float: ...


class RoundTripFields(TypedDict, total=False):
    """A connection's round trip as its ``pong`` replies and the ``connections`` listing carry it, in ms."""

    rtt_ms: int  # smoothed
    rtt_last_ms: int


class ConnectionPort(Protocol):
    """A client's connection as the request router, the cluster's relay and the listings use it
    (``server.runtime.connection.Connection``)."""

    created: int  # the tables it created (server.runtime.requests counts them)

    @property
    def id(self) -> int: ...

    @property
    def server(self) -> ServerPort: ...

    @property
    def lobby(self) -> Lobby: ...

    @property
    def client_limits(self) -> ClientLimits: ...

    @property
    def ws(self) -> WebSocket: ...

    @property
    def log(self) -> FilteringBoundLogger: ...

    @property
    def address(self) -> str: ...  # its IP

    @property
    def topics(self) -> set[str]: ...  # the bulletin topics it follows

    @property
    def tables(self) -> set[str]: ...  # the tables it joined, watched or resumed

    def send(self, message: ReadMap | bytes) -> None: ...  # never waits

    def fail(self, err: ProtocolError, re: int | None) -> None: ...

    def close(self, reason: str, *, abort: bool = False) -> None: ...

    def round_trip(self) -> RoundTripFields: ...

    def summary(self) -> ConnectionSummary: ...


class ClusterNode(Protocol):
    """What a server that is one worker of a cluster runs beside its tables (``server.cluster.worker.Worker``).
    The messages it forwards are open maps until the router hands over typed messages."""

    id_prefix: str
    first_connection_id: int  # its connections' ids: unique across the cluster
    own_port: int  # the worker's own port, for clients sent to it (0: any free one)

    def prepare(self, server: ServerPort) -> None: ...  # once the lobby exists, before the server listens

    async def run(self, server: ServerPort, *,
                  task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None: ...

    def create_elsewhere(self, conn: ConnectionPort, msg: dict[str, Any], re: int | None) -> bool: ...

    def forward_admin(self, conn: ConnectionPort, msg: dict[str, Any], re: int | None) -> bool: ...

    def forward_kick(self, conn: ConnectionPort, msg: dict[str, Any], re: int | None) -> bool: ...

    async def connections(self) -> list[ConnectionSummary]: ...

    def away(self) -> list[int]: ...  # the workers whose tables a listing lacks (ProtocolError: not known yet)

    def publish(self, topic: str, data: dict[str, Any]) -> None: ...

    def describe(self) -> Mapping[str, object]: ...  # GET /cluster


class ServerPort(Protocol):
    """The server as its connections, its web answers, its health and its cluster's worker use it
    (``server.runtime.app.Server``)."""

    @property
    def config(self) -> ConfigPort: ...

    @property
    def lobby(self) -> Lobby | None: ...  # None until it runs

    @property
    def own_port(self) -> int | None: ...  # a cluster worker's own port, once it listens

    @property
    def cluster(self) -> ClusterNode | None: ...

    @property
    def connections(self) -> Mapping[int, ConnectionPort]: ...  # by id

    @property
    def connection_ids(self) -> Iterator[int]: ...

    @property
    def turns(self) -> Turns: ...  # each address's turn at reading

    @property
    def address_messages(self) -> AddressBuckets: ...  # shared by each address's connections

    @property
    def address_bytes(self) -> AddressBuckets: ...

    @property
    def rater(self) -> Rater | None: ...

    @property
    def replays(self) -> Replays: ...

    @property
    def loop_watch(self) -> LoopWatchPort: ...

    @property
    def started(self) -> float: ...  # when it began to listen (trio time)

    def is_admin(self, token: str | None) -> bool: ...
