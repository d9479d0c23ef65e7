"""The server's metrics, served as Prometheus text at ``GET /metrics``.

Everything lives in one private ``CollectorRegistry`` (nothing else in the process registers there).
The calls below are what the rest of the server uses; durations come in as ms (fractions allowed where
a step takes well under one) and are exported in seconds, as Prometheus expects.

Per-frame figures (frames and bytes in and out) are plain integers in ``traffic``, bumped on the hot
path, and turned into counters only when scraped: a prometheus_client counter takes a lock per
``inc``, which at tens of thousands of frames a second would cost more than the frames themselves.
Tables by game and state, stopped tables and open connections are read from the lobby at scrape time
(``render``), and so are the number of trio tasks alive in the process (a leak of tasks shows there first) and
the loop's lateness.
"""

from __future__ import annotations

from collections import Counter as Tally
from collections.abc import Iterable, Iterator

import trio
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

from protocol.messages import TableSummary

CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4
_REGISTRY = CollectorRegistry()

_COMMANDS = Counter("parsimonia_commands", "Game commands handled by tables, by outcome.", ["outcome"],
                    registry=_REGISTRY)
_ACCEPTED, _REFUSED = _COMMANDS.labels("accepted"), _COMMANDS.labels("refused")
_REFUSALS = Counter("parsimonia_protocol_errors", "Errors the server sent to clients, by code.", ["code"],
                    registry=_REGISTRY)
_DROPPED = Counter("parsimonia_slow_clients_dropped", "Connections dropped for reading too slowly.",
                   registry=_REGISTRY)
_CLOSES = Counter("parsimonia_websocket_closes", "WebSocket closes the server sent, by code (client: a client's close "
                  "echoed).", ["code"], registry=_REGISTRY)
_HTTP_REFUSED = Counter("parsimonia_http_refusals", "HTTP requests and connections refused, by status and reason.",
                        ["status", "reason"], registry=_REGISTRY)
_STEP = Histogram("parsimonia_table_step_seconds", "Time a table took to handle one message or deadline.",
                  buckets=(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25),
                  registry=_REGISTRY)
_LATENESS = Histogram("parsimonia_timer_lateness_seconds", "How late timers fired (server clock, whole ms).",
                      buckets=(0.0, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
                      registry=_REGISTRY)
_SYNC = Histogram("parsimonia_journal_sync_seconds",
                  "Time of one syncer round: every table's records written to the log (and fdatasynced), one hand-off.",
                  buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0),
                  registry=_REGISTRY)


class Traffic:
    """WebSocket frames and their bytes (whole frames, headers included) since the process started, and every byte
    read from clients' sockets (``bytes_read``: HTTP and WebSocket, what was dropped unparsed too)."""

    __slots__ = ("frames_in", "bytes_in", "frames_out", "bytes_out", "bytes_read")

    def __init__(self) -> None:
        self.frames_in = self.bytes_in = self.frames_out = self.bytes_out = self.bytes_read = 0

    def collect(self) -> Iterator[Metric]:
        for name, doc, value in (
            ("parsimonia_frames_in", "WebSocket messages received.", self.frames_in),
            ("parsimonia_bytes_in", "Bytes of WebSocket messages received (payloads).", self.bytes_in),
            ("parsimonia_frames_out", "WebSocket frames queued to clients.", self.frames_out),
            ("parsimonia_bytes_out", "Bytes of WebSocket frames queued to clients (headers included).",
             self.bytes_out),
            ("parsimonia_bytes_read", "Bytes read from clients' sockets, HTTP and WebSocket, dropped ones included.",
             self.bytes_read),
        ):
            yield CounterMetricFamily(name, doc, value=value)


traffic = Traffic()
_REGISTRY.register(traffic)


def count_command(refused: bool) -> None:
    """A table handled a game command (``act``): accepted, or refused by the rules."""
    (_REFUSED if refused else _ACCEPTED).inc()


def count_error(code: str) -> None:
    """The server answered a client with an ``error`` of this code."""
    _REFUSALS.labels(code).inc()


def count_dropped_client() -> None:
    _DROPPED.inc()


def count_close(code: int | None) -> None:
    """The server sent a WebSocket close frame with ``code`` (None: the client's own close, echoed)."""
    _CLOSES.labels("client" if code is None else str(code)).inc()


def count_http_refusal(status: int, reason: str) -> None:
    """An HTTP request or connection was refused with ``status``; ``reason`` one of a few fixed words."""
    _HTTP_REFUSED.labels(str(status), reason).inc()


def observe_step(ms: float) -> None:
    """One table step (a message or a deadline handled, its frames released) took ``ms``."""
    _STEP.observe(ms / 1000)


def observe_lateness(ms: int) -> None:
    """A timer fired ``ms`` after it was due (server clock)."""
    _LATENESS.observe(max(0, ms) / 1000)


def observe_journal_sync(ms: float) -> None:
    _SYNC.observe(ms / 1000)


def live_tasks() -> int:
    """The trio tasks alive in this run, the one asking included (walked from the root task)."""
    root = trio.lowlevel.current_root_task()
    count, pending = 0, [] if root is None else [root]
    while pending:
        task = pending.pop()
        count += 1
        pending.extend(child for nursery in task.child_nurseries for child in nursery.child_tasks)
    return count


class _Live:
    """What is true at scrape time: open connections, trio tasks, tables by game and state."""

    def __init__(self, connections: int, tables: Iterable[TableSummary], stopped: int = 0,
                 loop_lag_s: float = 0.0) -> None:
        self.connections = connections
        self.tasks = live_tasks()
        self.tables = Tally((t["game"], t["state"]) for t in tables)
        self.stopped = stopped
        self.loop_lag_s = loop_lag_s

    def collect(self) -> Iterator[Metric]:
        yield GaugeMetricFamily("parsimonia_connections", "Open WebSocket connections.", value=self.connections)
        yield GaugeMetricFamily("parsimonia_tasks", "Trio tasks alive in the server process.", value=self.tasks)
        tables = GaugeMetricFamily("parsimonia_tables", "Tables held, by game and state.", labels=["game", "state"])
        for (game, state), n in sorted(self.tables.items()):
            tables.add_metric([game, state], n)
        yield tables
        yield GaugeMetricFamily("parsimonia_tables_stopped", "Tables stopped because their journal failed "
                                "(server/runtime/health.py).", value=self.stopped)
        yield GaugeMetricFamily("parsimonia_loop_lag_seconds", "How late the event loop last woke a task "
                                "that sleeps a fixed period (server/runtime/health.py).", value=self.loop_lag_s)


def render(connections: int, tables: Iterable[TableSummary], stopped: int = 0, loop_lag_s: float = 0.0) -> bytes:
    """The scrape: ``tables`` are the lobby's summaries (``game``, ``state``), read now; ``stopped``: how many
    tables their journal's failure stopped; ``loop_lag_s``: the loop's lateness (``server.runtime.health.LoopWatch``)."""
    live = CollectorRegistry()
    live.register(_Live(connections, tables, stopped, loop_lag_s))
    return generate_latest(_REGISTRY) + generate_latest(live)
