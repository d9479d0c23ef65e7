"""What a cluster costs with nothing to do: the CPU of ``serve --workers N`` idle, each worker's own share.

    .venv/bin/python bench/cluster_idle.py [--workers 1,2] [--seconds 20]

For each N it starts a redis-server on a free port and ``parsimonia serve`` (``--workers 1``: the plain server,
no Redis; more: a supervisor and its workers), waits for it to settle, and measures the CPU share of the whole
process tree over ``--seconds``: a worker's heartbeat (its entry in Redis renewed, the others' read, every 500 ms)
is most of what an idle worker spends. No table is created; the storm (``--servers parsimonia,workers2``)
measures the cluster under load.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench.stats import CpuMeter, positive_int, positive_ints, run_script  # noqa: E402
from bench.storm import CLUSTER_SETTLE_S, free_port, start_redis, stop, wait_listening  # noqa: E402


def measure(workers: int, seconds: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="parsimonia-idle-") as data:
        redis, url = start_redis(data)
        port = free_port()
        cmd = [sys.executable, "-m", "server.cli.main", "serve", "--port", str(port), "--data", data, "--log-level",
               "warning"]
        if workers > 1:
            cmd += ["--workers", str(workers), "--redis", url, "--worker-ports", "0"]
        server = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        try:
            wait_listening(port, server)
            time.sleep(CLUSTER_SETTLE_S + 2)
            meter = CpuMeter(server.pid)
            meter.start(time.monotonic())
            time.sleep(seconds)
            meter.stop(time.monotonic())
        finally:
            stop(server, sig=signal.SIGINT)
            stop(redis)
    own = [round(v, 4) for p, v in sorted(meter.shares.items()) if p != server.pid]
    return {"workers": workers, "cpu": round(meter.share or 0.0, 4), "per_worker": own or [round(meter.share or 0, 4)]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=positive_ints, default=[1, 2], help="worker counts (default 1,2)")
    parser.add_argument("--seconds", type=positive_int, default=20, help="measured seconds each (default 20)")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    for workers in args.workers:
        row = measure(workers, args.seconds)
        print(f"--workers {row['workers']}: {row['cpu']:.4f} of a core idle, per worker {row['per_worker']}")


if __name__ == "__main__":
    run_script(main, "cluster_idle")
