"""The shared-log spike runs both backends and reports a cost for each (it asserts nothing about speed)."""

from __future__ import annotations

from bench.wal_cost import BACKENDS, measure


def test_both_backends_are_measured_and_read_back_every_record(tmp_path):
    for backend in BACKENDS:
        result = measure(str(tmp_path), backend, tables=7, per_round=5, rounds=3)  # it checks the read-back count
        assert set(result) == {"cpu_us_per_record", "ms_per_round", "recover_ms"}
        assert all(value >= 0 for value in result.values())
