"""Several logs fsynced side by side on one disk, as a cluster's workers do: does a round's sync wait for the others?

    .venv/bin/python bench/fsync_streams.py [--dir PATH] [--procs 1,2,4,8] [--round-ms 5] [--bytes 1000]

Each of ``--procs`` processes appends to its own file and runs rounds as a busy ``Syncer`` does (one ``write`` of
``--bytes`` and one ``fdatasync``, a round no sooner than ``--round-ms`` after the last began), in two modes:
``free``, each process keeping its own phase, and ``aligned``, every round on a
tick of ``--round-ms`` on the monotonic clock that every process shares, so their syncs arrive together and the
filesystem can commit them as one. Printed: a round's write and sync time (p50, p99, max over all processes), when
a record appended at a random moment is durable (p50, p99), rounds a second, and the filesystem's journal commits a
second where ``/proc/fs/jbd2`` says.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench.stats import positive_int, positive_ints, run_script, summarize  # noqa: E402

MODES = ("free", "aligned")


def stream(path: str, mode: str, round_ms: float, size: int, start: float, duration: float,
           out: "multiprocessing.Queue[list[tuple[float, float]]]") -> None:
    """One process's rounds: when each began and ended (``time.monotonic()``)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    data = b"r" * size
    step = round_ms / 1000
    times: list[tuple[float, float]] = []
    began = -math.inf
    while time.monotonic() < start:
        time.sleep(0.0005)
    end = start + duration
    while True:
        now = time.monotonic()
        if mode == "aligned":
            at = math.ceil(max(now, began + step * 0.5) / step) * step  # the next tick of the shared grid
        else:
            at = max(now, began + step)
        if at >= end:
            break
        if at > now:
            time.sleep(at - now)
        began = time.monotonic()
        os.write(fd, data)
        os.fdatasync(fd)
        times.append((began, time.monotonic()))
    os.close(fd)
    out.put(times)


def commits(directory: str) -> int | None:
    """Journal commits so far of the ext4 filesystem holding ``directory`` (``/proc/fs/jbd2``), None where the
    kernel does not say."""
    try:
        st = os.stat(directory)
        dev = os.path.basename(os.readlink(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}"))
        for name in os.listdir("/proc/fs/jbd2"):
            if name.rsplit("-", 1)[0] == dev:
                with open(f"/proc/fs/jbd2/{name}/info") as f:
                    return int(f.readline().split()[0])  # "N transactions (M requested), ..."
    except (OSError, ValueError, IndexError):
        return None
    return None


def measure(directory: str, procs: int, mode: str, round_ms: float, size: int, duration: float) -> dict[str, object]:
    ctx = multiprocessing.get_context("fork")
    out: "multiprocessing.Queue[list[tuple[float, float]]]" = ctx.Queue()
    start = time.monotonic() + 0.3
    before = commits(directory)
    workers = [ctx.Process(target=stream, args=(os.path.join(directory, f"{mode}-{procs}-{i}.log"), mode, round_ms,
                                                  size, start, duration, out)) for i in range(procs)]
    for w in workers:
        w.start()
    streams = [out.get(timeout=duration + 60) for _ in workers]
    times = [(end - begin) * 1000 for rounds in streams for begin, end in rounds]
    # a record appended at a uniform moment between two rounds' starts is durable when the second ends
    acks = [(end - (before + (k + 0.5) / 10 * (begin - before))) * 1000 for rounds in streams
            for (before, _), (begin, end) in zip(rounds, rounds[1:]) for k in range(10)]
    for w in workers:
        w.join()
    after = commits(directory)
    s = summarize(times, (50, 99))
    a = summarize(acks, (50, 99))
    return {"procs": procs, "mode": mode, "round_ms": round_ms, "bytes": size,
            "rounds_per_s": round(len(times) / duration),
            "sync_p50_ms": round(s["p50"] or 0, 2), "sync_p99_ms": round(s["p99"] or 0, 2),
            "sync_max_ms": round(s["max"] or 0, 2), "ack_p50_ms": round(a["p50"] or 0, 2),
            "ack_p99_ms": round(a["p99"] or 0, 2),
            "commits_per_s": None if before is None or after is None else round((after - before) / duration)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", help="where the logs go (default: a temporary directory under /tmp)")
    parser.add_argument("--procs", type=positive_ints, default=[1, 2, 4, 8])
    parser.add_argument("--round-ms", type=positive_ints, default=[5], help="spacings to try (ms)")
    parser.add_argument("--bytes", type=positive_int, default=1000, help="written a round (2,000 bids/s at 5 ms)")
    parser.add_argument("--duration", type=float, default=4.0)
    parser.add_argument("--json", help="write the rows here too")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="fsync-streams-") as directory:
        print("sync: a round's write and fdatasync; ack: a record appended at a random moment until durable")
        print(f"{'procs':>5} {'ms':>3} {'mode':>8} {'rounds/s':>9} {'sync p50':>9} {'sync p99':>9} {'sync max':>9} "
              f"{'ack p50':>8} {'ack p99':>8} {'commits/s':>9}")
        for round_ms in args.round_ms:
            for procs in args.procs:
                for mode in MODES:
                    row = measure(directory, procs, mode, round_ms, args.bytes, args.duration)
                    rows.append(row)
                    print(f"{procs:>5} {round_ms:>3} {mode:>8} {row['rounds_per_s']:>9} {row['sync_p50_ms']:>9} "
                          f"{row['sync_p99_ms']:>9} {row['sync_max_ms']:>9} {row['ack_p50_ms']:>8} "
                          f"{row['ack_p99_ms']:>8} {str(row['commits_per_s'] or '-'):>9}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    run_script(main, "fsync_streams")
