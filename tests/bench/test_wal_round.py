"""The journal's rounds bench: every variant runs, the spaced ones make fewer rounds, and a bad directory is one
line."""

from __future__ import annotations

import json
import subprocess
import sys


def test_every_variant_runs_and_the_spaced_rounds_are_fewer_and_fuller(tmp_path):
    out = subprocess.run([sys.executable, "bench/wal_round.py", "--dir", str(tmp_path), "--tables", "5",
                          "--rates", "400", "--duration", "1", "--round-ms", "50", "--json", str(tmp_path / "r.json")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    rows = {row["variant"]: row for row in json.loads((tmp_path / "r.json").read_text())["rows"]}
    assert list(rows) == ["none", "to_thread", "writer", "to_thread+50ms", "writer+50ms"]
    assert rows["none"]["rounds_per_s"] == 0 and all(row["records"] > 0 for row in rows.values())
    assert 0 < rows["writer+50ms"]["rounds_per_s"] <= 21  # at most one a 50 ms, and one at once
    assert rows["writer+50ms"]["records_per_round"] > rows["writer"]["records_per_round"]
    assert len(out.stdout.splitlines()) == 6  # a line a variant, then the load


def test_a_directory_that_does_not_exist_is_one_line_not_a_traceback(tmp_path):
    out = subprocess.run([sys.executable, "bench/wal_round.py", "--dir", str(tmp_path / "nope"), "--duration", "1"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and "wal_round:" in out.stderr and "Traceback" not in out.stderr
