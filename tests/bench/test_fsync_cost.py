"""The fsync micro-benchmark runs both ways and reports a cost for each (it asserts nothing about speed)."""

from __future__ import annotations

import os

from bench.fsync_cost import measure


def test_both_ways_are_measured_and_every_record_reaches_its_file(tmp_path):
    result = measure(str(tmp_path), files=5, per_round=3, threads=2, rounds=4)
    assert set(result) == {"fsync-each_cpu_us_per_record", "fsync-each_ms_per_round",
                           "shared-log_cpu_us_per_record", "shared-log_ms_per_round"}
    assert all(value >= 0 for value in result.values())
    written = sum(os.path.getsize(tmp_path / f"journal-{i}") for i in range(5))
    assert written == 2 * 4 * 3 * 200  # each way: 4 rounds of 3 records of 200 bytes
    assert os.path.getsize(tmp_path / "shared.log") == 4 * 3 * 200
