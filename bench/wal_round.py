"""What the journal costs a bid in the server's own process: the shared log's rounds at a storm's bid rate.

    .venv/bin/python bench/wal_round.py [--dir PATH] [--tables 100,1000] [--rates 1800,2700] [--duration 5]
                                        [--round-ms 2,5,10] [--json PATH]

One trio process, no sockets: a task appends one bid-sized record (the record ``Match`` writes for a bid) to a
random one of ``--tables`` journals ``--rate`` times a second on a schedule kept every millisecond (open loop,
like the storm's generator), each with an ``after_durable`` callback that notes when it was acknowledged, while
the data directory's ``Syncer`` runs its rounds on a real log under ``--dir``. Variants, each a run of
``--duration`` seconds:

* ``none``: the same schedule with no journal (what the rest of the process costs: subtracted from the others);
* ``to_thread``: the log as it was before its writer thread: a ``trio.to_thread.run_sync`` per round, and a
  round as soon as the last ended (``round_ms`` 0);
* ``writer``: the log's writer thread, ``round_ms`` 0;
* ``writer+Nms``: the writer thread, a round starting no sooner than N ms after the last began (the server's
  ``ROUND_MS``, and the other values of ``--round-ms``); ``to_thread+Nms``: the same spacing with the old
  hand-off (the writer thread's own share, at the same number of rounds).

For each it prints the CPU time of the whole process (every thread, user + system) per record above ``none``,
rounds a second, records per round, and the time from an append to its acknowledgement (p50, p99). CPU time,
not wall time, so the figures hold on a machine shared with other work; the wall times do not.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from typing import Any

import trio

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench.stats import positive_int, positive_ints, run_script  # noqa: E402
from server.storage.journal import ROUND_MS, Syncer, Writer  # noqa: E402


class ToThread(Writer):
    """The hand-off as it was: a worker thread from trio's cache for each round."""

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    async def run(self, fn: Any, *args: Any, takes_s: float = 0.0) -> Any:  # takes_s: the Writer's hint, unused
        return await trio.to_thread.run_sync(fn, *args)


def bid(n: int, at: int) -> dict[str, Any]:
    return {"k": "cmd", "at": at, "seat": n % 6, "kind": "act",
            "msg": {"table": "t1", "command": {"type": "bid", "auction": n % 40, "amount": n % 97 + 1}}}


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    return round(values[min(len(values) - 1, int(len(values) * p))], 2) if values else 0.0


async def one_run(directory: str, variant: str, tables: int, rate: int, duration: float, round_ms: int) -> dict:
    path = os.path.join(directory, f"log-{variant}-{tables}-{rate}")
    syncer = None
    journals: list[Any] = []
    if variant != "none":
        syncer = Syncer(path, directory, "fsync", round_ms=round_ms)
        if variant == "to_thread":
            syncer._writer = ToThread()
        journals = [syncer.open(f"t{n}") for n in range(1, tables + 1)]
    latencies: list[float] = []
    rng = random.Random(1)
    count = 0
    async with trio.open_nursery() as nursery:
        if syncer is not None:
            nursery.start_soon(syncer.run)
        await trio.sleep(0.2)  # the writer thread up, the first round out of the way
        start_cpu, start = time.process_time(), trio.current_time()
        end = start + duration
        tick = start
        while tick < end:
            tick += 0.001
            await trio.sleep_until(tick)
            due = int((trio.current_time() - start) * rate) - count
            for _ in range(max(0, due)):
                record = bid(count, count)
                count += 1
                if journals:
                    journal = journals[rng.randrange(tables)]
                    journal.append(record)
                    sent = time.perf_counter()
                    journal.after_durable(lambda sent=sent: latencies.append((time.perf_counter() - sent) * 1000))
        cpu = time.process_time() - start_cpu
        rounds = syncer.rounds if syncer is not None else 0
        nursery.cancel_scope.cancel()
    if syncer is not None:
        os.remove(path)
    return {"variant": variant, "tables": tables, "rate": rate, "records": count, "cpu_s": round(cpu, 3),
            "rounds_per_s": round(rounds / duration), "records_per_round": round(count / max(rounds, 1), 1),
            "ack_p50_ms": percentile(latencies, 0.5), "ack_p99_ms": percentile(latencies, 0.99)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", help="where the log goes (default: a temporary directory under /tmp)")
    parser.add_argument("--tables", type=positive_ints, default=[100, 1000], help="tables (default 100,1000)")
    parser.add_argument("--rates", type=positive_ints, default=[1800, 2700], help="records a second (1800,2700)")
    parser.add_argument("--duration", type=positive_int, default=5, help="seconds a run (default 5)")
    parser.add_argument("--round-ms", type=positive_ints, default=[ROUND_MS],
                        help=f"round spacings of the writer variants besides 0 (default {ROUND_MS})")
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args()
    variants = [("none", 0), ("to_thread", 0), ("writer", 0),
                *((f"{kind}+{ms}ms", ms) for ms in args.round_ms for kind in ("to_thread", "writer"))]
    rows = []
    with tempfile.TemporaryDirectory(dir=args.dir) as directory:
        for tables in args.tables:
            for rate in args.rates:
                base = None
                for variant, ms in variants:
                    row = trio.run(one_run, directory, variant.split("+")[0], tables, rate, args.duration, ms)
                    row["variant"] = variant
                    if base is None:
                        base = row
                    row["journal_us_per_record"] = round((row["cpu_s"] - base["cpu_s"]) / row["records"] * 1e6, 1)
                    rows.append(row)
                    print(f"T={tables:5d} rate={rate:5d} {variant:12s} journal {row['journal_us_per_record']:6.1f} us "
                          f"CPU a record, {row['rounds_per_s']:5d} rounds/s, {row['records_per_round']:6.1f} a "
                          f"round, ack p50 {row['ack_p50_ms']} ms p99 {row['ack_p99_ms']} ms", flush=True)
    print(f"load average: {os.getloadavg()[0]:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"loadavg_1m": os.getloadavg()[0], "duration_s": args.duration, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    run_script(main, "wal_round")
