"""The shared log as the server uses it: recovery time, descriptors and CPU per record with many tables.

    .venv/bin/python bench/wal_recovery.py [--dir PATH] [--tables 1000] [--records 40] [--rounds 50]

1. Writes a data directory whose log holds ``--tables`` unfinished two-seat Parsimonia tables of ``--records``
   records each (seats joined, the game started, ready and vote commands, ticks), then times what a server
   does on start: ``DataDir.recover()`` (read, check, compact the log) and ``Match.replay`` of every table
   (wall time, and this process's CPU time, which a machine shared with other work inflates less).
2. Opens every recovered table's journal and counts this process's descriptors (``/proc/self/fd``).
3. Runs the syncer for ``--rounds`` rounds, each with one record from every table (fsync policy), and prints
   the CPU time (user + system) per record and the wall time per round.

The directory should be on the filesystem the server's ``--data`` would use (default: a temporary one under
``/tmp``).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import trio

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.stats import positive_int, run_script  # noqa: E402
from server.storage.journal import encode_entry, encode_record  # noqa: E402
from server.games import discover  # noqa: E402
from server.core.match import Match  # noqa: E402
from server.storage.datadir import DataDir  # noqa: E402

OPTIONS = {"opening_ms": 600_000, "turn_ms": 600_000, "game_ms": 3_600_000, "quiet_ms": 60_000}


def table_records(table_id: str, count: int) -> list[dict]:
    records: list[dict] = [
        {"k": "table", "id": table_id, "game": "parsimonia", "seats": 2, "seed": 7, "time_scale": 1.0,
         "options": OPTIONS},
        {"k": "join", "name": "ada", "token": f"{table_id}-token-ada-0123456789"},
        {"k": "join", "name": "bob", "token": f"{table_id}-token-bob-0123456789"},
        {"k": "start", "at": 1000},
        {"k": "cmd", "at": 1500, "seat": 0, "command": {"type": "ready"}},
    ]
    while len(records) < count:
        records.append({"k": "tick", "at": 1500 + len(records)})
    return records


def write_data(root: str, tables: int, records: int) -> int:
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "log"), "wb") as f:
        for n in range(1, tables + 1):
            f.write(b"".join(encode_entry(f"t{n}", encode_record(r), seq)
                             for seq, r in enumerate(table_records(f"t{n}", records))))
        return f.tell()


async def rounds(data: DataDir, journals: list, count: int) -> tuple[float, float]:
    async with trio.open_nursery() as nursery:
        nursery.start_soon(data.syncer.run)
        before, started = os.times(), time.perf_counter()
        for k in range(count):
            done = trio.Event()
            for journal in journals:
                journal.append({"k": "tick", "at": 10_000 + k})
            journals[-1].after_durable(done.set)
            await done.wait()
        after, wall = os.times(), time.perf_counter() - started
        nursery.cancel_scope.cancel()
    cpu = (after.user - before.user) + (after.system - before.system)
    return cpu * 1e6 / (count * len(journals)), wall * 1e3 / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", help="where to write (default: a temporary directory, removed after)")
    parser.add_argument("--tables", type=positive_int, default=1000)
    parser.add_argument("--records", type=positive_int, default=40, help="records per table (at least 5)")
    parser.add_argument("--rounds", type=positive_int, default=50)
    args = parser.parse_args()
    discover()
    if args.dir is not None and not os.path.isdir(args.dir):
        parser.error(f"--dir {args.dir}: no such directory")
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="wal-recovery-") as directory:
        size = write_data(directory, args.tables, args.records)
        fds_before = len(os.listdir("/proc/self/fd"))
        started, cpu = time.perf_counter(), time.process_time()
        data = DataDir(directory)
        try:
            recovered = data.recover()
            read_s, read_cpu = time.perf_counter() - started, time.process_time() - cpu
            matches = [Match.replay(rec.records) for rec in recovered]
            total_s, total_cpu = time.perf_counter() - started, time.process_time() - cpu
            journals = [data.open_journal(m.id) for m in matches]
            fds = len(os.listdir("/proc/self/fd")) - fds_before
            print(f"{args.tables} tables, {args.records} records each, log {size / 1e6:.1f} MB: recover (read, check, "
                  f"compact) {read_s * 1e3:.0f} ms, with every replay {total_s * 1e3:.0f} ms (CPU: "
                  f"{read_cpu * 1e3:.0f} and {total_cpu * 1e3:.0f} ms); descriptors opened for them: {fds}")
            us, ms = trio.run(rounds, data, journals, args.rounds)
            print(f"{args.rounds} rounds of {args.tables} records (fsync): {us:.1f} us CPU per record, "
                  f"{ms:.2f} ms per round")
        finally:
            data.close()


if __name__ == "__main__":
    run_script(main, "wal_recovery")
