"""What making a round of journal appends durable costs this disk: an fsync per file, or one shared log.

    .venv/bin/python bench/fsync_cost.py [--dir PATH] [--files 1000] [--per-round 20,100] [--threads 1,4,8]

Each round appends a 200-byte record to ``--per-round`` of ``--files`` files (the next ones in turn, as bids
at a thousand tables dirty a different journal each), then makes them durable in one of two ways:

* ``fsync-each``: an fsync per file written, shared out over ``--threads`` threads (as ``server/storage/journal.py``);
* ``shared-log``: the same records also appended to one log file, and only that file fsynced.

It prints this process's CPU time (user + system) per record and the wall time per round. The directory
should be on the filesystem the server's ``--data`` would use (default: a temporary one under ``/tmp``).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench.stats import positive_int, positive_ints, run_script  # noqa: E402

RECORD = b"x" * 200


def _fsync_share(fds: list[int]) -> None:
    for fd in fds:
        os.fsync(fd)


def measure(directory: str, files: int, per_round: int, threads: int, rounds: int) -> dict[str, float]:
    fds = [os.open(os.path.join(directory, f"journal-{i}"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
           for i in range(files)]
    log = os.open(os.path.join(directory, "shared.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    result: dict[str, float] = {}
    try:
        with ThreadPoolExecutor(threads) as pool:
            for how in ("fsync-each", "shared-log"):
                before, started, k = os.times(), time.perf_counter(), 0
                for _ in range(rounds):
                    batch = [fds[(k + j) % files] for j in range(per_round)]
                    k += per_round
                    for fd in batch:
                        os.write(fd, RECORD)
                    if how == "shared-log":
                        os.write(log, RECORD * per_round)
                        os.fsync(log)
                    else:
                        list(pool.map(_fsync_share, [batch[i::threads] for i in range(threads)]))
                after, wall = os.times(), time.perf_counter() - started
                cpu = (after.user - before.user) + (after.system - before.system)
                result[f"{how}_cpu_us_per_record"] = cpu * 1e6 / (rounds * per_round)
                result[f"{how}_ms_per_round"] = wall * 1e3 / rounds
    finally:
        for fd in (*fds, log):
            os.close(fd)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", help="where to write (default: a temporary directory, removed after)")
    parser.add_argument("--files", type=positive_int, default=1000)
    parser.add_argument("--per-round", type=positive_ints, default="20,100", help="records per round, comma-separated")
    parser.add_argument("--threads", type=positive_ints, default="1,4,8", help="fsync threads, comma-separated")
    parser.add_argument("--records", type=positive_int, default=4000, help="records per measurement")
    args = parser.parse_args()
    if args.dir is not None and not os.path.isdir(args.dir):
        parser.error(f"--dir {args.dir}: no such directory")
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="fsync-cost-") as directory:
        print(f"{'per round':>9} {'threads':>7} {'fsync-each us/rec':>18} {'shared-log us/rec':>18} "
              f"{'fsync-each ms/round':>20} {'shared-log ms/round':>20}")
        for per_round in args.per_round:
            for threads in args.threads:
                r = measure(directory, args.files, per_round, threads, max(1, args.records // per_round))
                print(f"{per_round:>9} {threads:>7} {r['fsync-each_cpu_us_per_record']:>18.0f} "
                      f"{r['shared-log_cpu_us_per_record']:>18.0f} {r['fsync-each_ms_per_round']:>20.2f} "
                      f"{r['shared-log_ms_per_round']:>20.2f}")


if __name__ == "__main__":
    run_script(main, "fsync_cost")
