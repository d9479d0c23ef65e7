"""The Kupcy storm: many tables of sealed bids with short bid clocks, every reveal driven by a deadline.

    .venv/bin/python bench/kupcy_storm.py [--tables 200] [--clock-ms 200] [--duration 20] [--json PATH]

It starts our server as shipped (journal, fsync) in its own process, creates T Kupcy tables of 4 seats whose
decision, bid and stow clocks are all ``--clock-ms``, and seats 4 connections at each that join with
``views: false`` and never send a command: every split, every sealed offer and every stow is made by its
deadline's default, so every reveal is the timer machinery's work. It reports, for the measured window:

* **reveal latency**: from a reveal's server time (an ``offers_revealed`` or ``split_revealed`` event's ``at``,
  which is the deadline that caused it) to the frame's arrival at a seat, in server time (the offset is
  measured with ``ping``);
* **timer lateness**: the server's own histogram (``/metrics``: how late each deadline fired), as the bucket
  bound that holds the 99th percentile;
* reveals per second, events per second, the server's CPU.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import trio
from trio_websocket import open_websocket_url

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.stats import CpuMeter, raise_nofile_limit  # noqa: E402
from bench.storm import free_port, server_command, stop, wait_listening  # noqa: E402
from protocol.codec import decode, encode  # noqa: E402
from protocol.messages import PROTOCOL_VERSION  # noqa: E402

SEATS = 4
REVEALS = ("offers_revealed", "split_revealed")


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def lateness_p99_ms(metrics_text: str) -> float | None:
    """The bound (ms) of the timer-lateness bucket that holds the 99th percentile."""
    buckets = []
    for line in metrics_text.splitlines():
        if line.startswith("parsimonia_timer_lateness_seconds_bucket{"):
            bound = line.split('le="')[1].split('"')[0]
            buckets.append((float("inf") if bound == "+Inf" else float(bound), float(line.rsplit(" ", 1)[1])))
    if not buckets or buckets[-1][1] == 0:
        return None
    total = buckets[-1][1]
    return next(bound * 1000 for bound, count in buckets if count >= 0.99 * total)


class Storm:
    def __init__(self, url: str, tables: int, clock_ms: int, warmup: float, duration: float,
                 meter: CpuMeter) -> None:
        self.url, self.tables, self.clock_ms, self.meter = url, tables, clock_ms, meter
        self.cpu = 0.0
        self.warmup, self.duration = warmup, duration
        self.offset_ms = 0.0  # server ms minus our ms
        self.latencies: list[float] = []
        self.events = 0
        self.window = (float("inf"), float("inf"))

    def local_ms(self) -> float:
        return trio.current_time() * 1000

    async def run(self) -> None:
        async with open_websocket_url(self.url) as ctrl:
            await ctrl.send_message(encode({"type": "hello", "id": 1, "version": PROTOCOL_VERSION,
                                            "client": "bench/kupcy"}))
            await ctrl.get_message()
            t0 = self.local_ms()
            await ctrl.send_message(encode({"type": "ping", "id": 2}))
            pong = decode(await ctrl.get_message())
            self.offset_ms = pong["server_time"] - (t0 + self.local_ms()) / 2
            clocks = {"decide_ms": self.clock_ms, "bid_ms": self.clock_ms, "stow_ms": self.clock_ms}
            ids = []
            for n in range(self.tables):
                await ctrl.send_message(encode({"type": "create", "id": 10 + n, "game": "kupcy", "seats": SEATS,
                                                "seed": n + 1, "options": clocks}))
                ids.append(decode(await ctrl.get_message())["table"])
        async with trio.open_nursery() as nursery:
            for table in ids:
                for seat in range(SEATS):
                    await nursery.start(self.seat, table, seat == 0)
            await trio.sleep(self.warmup)
            start = trio.current_time()
            self.window = (start, start + self.duration)
            self.meter.start(time.monotonic())
            await trio.sleep_until(self.window[1])
            self.cpu = self.meter.stop(time.monotonic())
            nursery.cancel_scope.cancel()

    async def seat(self, table: str, measures: bool, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        async with open_websocket_url(self.url) as ws:
            await ws.send_message(encode({"type": "hello", "version": PROTOCOL_VERSION, "client": "bench/kupcy-seat"}))
            await ws.send_message(encode({"type": "join", "id": 1, "table": table, "name": "passive",
                                          "views": False}))
            task_status.started()
            while True:
                msg = decode(await ws.get_message())
                if not measures or msg["type"] != "event":
                    continue
                now = trio.current_time()
                if not self.window[0] <= now < self.window[1]:
                    continue
                self.events += 1
                event = msg["event"]
                if event.get("type") in REVEALS:
                    self.latencies.append(now * 1000 + self.offset_ms - event["at"])


def run(tables: int, clock_ms: int, warmup: float, duration: float) -> dict[str, Any]:
    raise_nofile_limit()
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="parsimonia-kupcy-") as data:
        srv = subprocess_server(port, data)
        try:
            storm = Storm(f"ws://127.0.0.1:{port}/", tables, clock_ms, warmup, duration, CpuMeter(srv.pid))
            started = time.monotonic()
            trio.run(storm.run)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
                metrics = reply.read().decode()
        finally:
            stop(srv)
    return {
        "tables": tables, "connections": tables * SEATS, "clock_ms": clock_ms, "duration_s": duration,
        "reveals_per_s": round(len(storm.latencies) / duration, 1),
        "events_per_s_at_seat_0": round(storm.events / duration, 1),
        "reveal_latency_p50_ms": _round(percentile(storm.latencies, 0.5)),
        "reveal_latency_p99_ms": _round(percentile(storm.latencies, 0.99)),
        "reveal_latency_max_ms": _round(max(storm.latencies, default=None)),
        "timer_lateness_p99_ms_bucket": lateness_p99_ms(metrics),
        "server_cpu": round(storm.cpu, 2), "elapsed_s": round(time.monotonic() - started, 1),
    }


def subprocess_server(port: int, data: str) -> Any:
    import subprocess

    proc = subprocess.Popen(server_command("parsimonia", port, data), cwd=ROOT, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_listening(port, proc)
    return proc


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=200, help="Kupcy tables of 4 seats (default 200)")
    parser.add_argument("--clock-ms", type=int, default=200, help="every decision, bid and stow clock (default 200)")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds before measuring (default 3)")
    parser.add_argument("--duration", type=float, default=20.0, help="measured seconds (default 20)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures to this file")
    args = parser.parse_args()
    out = run(args.tables, args.clock_ms, args.warmup, args.duration)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
