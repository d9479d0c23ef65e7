"""Smoke run of the side-by-side fsync probe: every process runs its rounds in either mode; no speed asserted."""

from __future__ import annotations

from bench.fsync_streams import MODES, measure


def test_each_mode_runs_every_processs_rounds_and_reports_the_sync_times(tmp_path):
    for mode in MODES:
        row = measure(str(tmp_path), procs=2, mode=mode, round_ms=20, size=100, duration=0.3)
        assert row["procs"] == 2 and row["mode"] == mode
        assert row["rounds_per_s"] > 0 and row["sync_max_ms"] >= row["sync_p99_ms"] >= row["sync_p50_ms"] > 0
        assert row["ack_p99_ms"] >= row["ack_p50_ms"] > 0 and "commits_per_s" in row
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{m}-2-{i}.log" for m in sorted(MODES) for i in (0, 1)]
