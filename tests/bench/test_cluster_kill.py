"""The kill -9 bench, run small: a real cluster of 2 workers on a real redis-server, worker 2 killed mid-load; every
bid the server acknowledged is in its table's history once worker 2 is back, and worker 1's seats never noticed.
It asserts nothing about speed (the p99s are bench/README.md's)."""

from __future__ import annotations

import json
import subprocess
import sys


def test_a_killed_worker_loses_no_acknowledged_bid_and_the_other_workers_seats_stay() -> None:
    out = subprocess.run([sys.executable, "bench/cluster_kill.py", "--tables", "1", "--rate", "5", "--before", "2",
                          "--during", "2"], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    result = json.loads(out.stdout.splitlines()[-1].removeprefix("RESULT "))
    assert result["lost"] == 0
    assert result["acked_worker2"] > 0 and result["worker2_bids_after_kill"] > 0  # it bid again once resumed
    assert result["resumes_worker2"] >= 2 and result["resumes_worker1"] == 0
    assert result["worker1_p99_before_ms"] is not None and result["worker1_p99_during_ms"] is not None
