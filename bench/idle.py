"""Idle connections: how many a server holds, what each costs it in memory, and whether it still answers.

    python bench/idle.py --connections 20000 --hold 45 --servers parsimonia,transport,websockets \
        --json bench/results/idle.json

For each server: start it (as the storm harness does, ``bench/storm.py``), open ``--connections``
WebSocket connections (picows on asyncio, ``--batch`` handshakes at a time), each sending ``hello`` and
waiting for its ``welcome``, then leave them idle for ``--hold`` seconds. The server's idle-ping (after
30 s of silence; ``server/transport/limits.py``) is answered by the clients' automatic pong, so a hold past 30 s
also checks that every pinged connection stays. Meanwhile a probe connection sends a ``ping`` every
100 ms and times its ``pong``. Reported: connections held at the end, connections lost, the server's
RSS before the connections and with them (and the difference per 1,000 connections), its peak RSS, the
probe's round-trip p50/p99, the server's CPU over the hold (user + system, % of one core), and the setup time.
``--serve-arg`` passes an option on to our server (e.g. ``--serve-arg=--rtt-ping-s=0``: no round-trip pings). The
harness raises its open-file limit to the hard one (the server inherits it) and says so at once when that is too low
for what is asked.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

import msgpack

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.stats import machine, raise_nofile_limit, summarize  # noqa: E402
from bench.storm import ALIASES, free_port, server_command, stop, wait_listening  # noqa: E402
from protocol.messages import PROTOCOL_VERSION  # noqa: E402

try:
    from picows import WSListener, WSMsgType, ws_connect
except ImportError:  # pragma: no cover - picows is a bench/test extra
    sys.exit("idle: picows is not installed; pip install -e '.[bench]'")

pack = msgpack.Packer(use_bin_type=True).pack
HEADROOM = 100  # descriptors beyond the connections: the server's listener, epoll, journals, pipes


class Client(WSListener):
    def __init__(self, counts: dict[str, int]) -> None:
        self.counts = counts
        self.transport: Any = None
        self.closed = False
        self.welcomed = asyncio.get_running_loop().create_future()
        self.pongs: asyncio.Queue[float] = asyncio.Queue()

    def on_ws_connected(self, transport: Any) -> None:
        self.transport = transport

    def on_ws_disconnected(self, transport: Any) -> None:
        self.closed = True
        self.counts["lost"] += 1
        if not self.welcomed.done():
            self.welcomed.set_exception(ConnectionError("closed before welcome"))

    def on_ws_frame(self, transport: Any, frame: Any) -> None:
        if frame.msg_type is not WSMsgType.BINARY:
            return
        message = msgpack.unpackb(frame.get_payload_as_bytes(), raw=False)
        if message.get("type") == "welcome" and not self.welcomed.done():
            self.welcomed.set_result(None)
        elif message.get("type") == "pong":
            self.pongs.put_nowait(time.perf_counter())

    def send(self, message: dict[str, Any]) -> None:
        self.transport.send(WSMsgType.BINARY, pack(message))


def cpu_s(pid: int) -> float | None:
    """The process's user + system CPU seconds so far."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int, field: str = "VmRSS") -> float | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


async def connect(url: str, counts: dict[str, int]) -> Client | None:
    try:
        _, client = await ws_connect(lambda: Client(counts), url, websocket_handshake_timeout=60,
                                     enable_auto_pong=True)
        client.send({"type": "hello", "id": 1, "version": PROTOCOL_VERSION, "client": "bench-idle"})
        await asyncio.wait_for(client.welcomed, 60)
        return client
    except (OSError, ConnectionError, asyncio.TimeoutError) as exc:
        counts["failed"] += 1
        counts.setdefault("first_error", repr(exc)[:200])  # type: ignore[arg-type]
        return None


async def probe(client: Client, until: float) -> list[float]:
    samples: list[float] = []
    n = 1
    while time.perf_counter() < until:
        n += 1
        sent = time.perf_counter()
        client.send({"type": "ping", "id": n})
        try:
            got = await asyncio.wait_for(client.pongs.get(), 10)
            samples.append((got - sent) * 1000)
        except asyncio.TimeoutError:
            samples.append(10_000.0)
        await asyncio.sleep(0.1)
    return samples


async def hold(url: str, pid: int, connections: int, batch: int, seconds: float) -> dict[str, Any]:
    counts: dict[str, Any] = {"lost": 0, "failed": 0}
    before = rss_mb(pid)
    started = time.perf_counter()
    clients: list[Client] = []
    for first in range(0, connections, batch):
        opened = await asyncio.gather(*(connect(url, counts) for _ in range(first, min(connections, first + batch))))
        clients.extend(c for c in opened if c is not None)
    setup_s = time.perf_counter() - started
    prober = await connect(url, counts)
    with_connections = rss_mb(pid)
    cpu_before = cpu_s(pid)
    samples = await probe(prober, time.perf_counter() + seconds) if prober is not None else []
    cpu_after = cpu_s(pid)
    held = sum(1 for c in clients if not c.closed)
    result = {"connections": connections, "opened": len(clients), "failed": counts["failed"], "lost": counts["lost"],
              "held": held, "setup_s": round(setup_s, 1), "hold_s": seconds,
              "rss_before_mb": before, "rss_with_mb": with_connections, "rss_end_mb": rss_mb(pid),
              "rss_peak_mb": rss_mb(pid, "VmHWM"),
              "mb_per_1000": (round((with_connections - before) * 1000 / max(1, len(clients)), 2)
                              if before is not None and with_connections is not None else None),
              "probe_ms": summarize(sorted(samples)), "probes": len(samples),
              "cpu_pct": (round((cpu_after - cpu_before) * 100 / seconds, 2)
                          if cpu_before is not None and cpu_after is not None else None),
              "first_error": counts.get("first_error")}
    for client in [*clients, prober]:
        if client is not None:
            client.transport.disconnect()
    return result


def run_server(name: str, args: argparse.Namespace) -> dict[str, Any]:
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="idle-") as data:
        extra = args.serve_arg if name.startswith("parsimonia") else []
        proc = subprocess.Popen(server_command(name, port, data) + extra, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            wait_listening(port, proc)
            result = asyncio.run(hold(f"ws://127.0.0.1:{port}", proc.pid, args.connections, args.batch, args.hold))
            result["server_alive"] = proc.poll() is None
        finally:
            stop(proc)
    return {"server": name, **result}


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--connections", type=int, default=20000)
    parser.add_argument("--hold", type=float, default=45.0, help="seconds the connections stay idle (default 45)")
    parser.add_argument("--batch", type=int, default=256, help="handshakes at a time (default 256)")
    parser.add_argument("--servers", default="parsimonia", help="comma-separated, as bench/storm.py names them")
    parser.add_argument("--serve-arg", action="append", default=[], metavar="ARG",
                        help="an option for our server's serve, e.g. --serve-arg=--rtt-ping-s=0 (repeatable)")
    parser.add_argument("--json", metavar="PATH", help="write the results here")
    args = parser.parse_args(argv)
    limit = raise_nofile_limit()  # to the hard limit; the server inherits it (each process holds one end)
    if limit < args.connections + HEADROOM:
        sys.exit(f"idle: the open-file limit is {limit} (and this process may not raise it), too low for "
                 f"{args.connections} connections; at most {limit - HEADROOM} here")
    report: dict[str, Any] = {"machine": machine(), "config": vars(args), "nofile_limit": limit, "runs": []}
    for name in args.servers.split(","):
        try:
            row = run_server(ALIASES.get(name, name), args)
        except KeyboardInterrupt:  # the server it started is stopped on the way out (run_server)
            sys.exit("idle: interrupted")
        except (ValueError, RuntimeError) as exc:  # an unknown server name; a server that did not start
            sys.exit(f"idle: {exc}")
        report["runs"].append(row)
        print(f"{row['server']:22s} held {row['held']:6d}/{row['connections']} lost {row['lost']} failed "
              f"{row['failed']} setup {row['setup_s']} s  RSS {row['rss_before_mb']:.0f} -> {row['rss_with_mb']:.0f} MB "
              f"({row['mb_per_1000']} MB per 1,000; peak {row['rss_peak_mb']:.0f})  probe p50 "
              f"{_ms(row['probe_ms']['p50'])} p99 {_ms(row['probe_ms']['p99'])} ms  CPU {row['cpu_pct']}%  "
              f"alive {row['server_alive']}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
