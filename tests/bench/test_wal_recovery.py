"""The shared log's recovery bench: it recovers every table it wrote and runs its rounds."""

from __future__ import annotations

import subprocess
import sys


def test_it_recovers_every_table_and_reports_descriptors_and_cpu_per_record(tmp_path):
    out = subprocess.run([sys.executable, "bench/wal_recovery.py", "--dir", str(tmp_path), "--tables", "20",
                          "--records", "8", "--rounds", "3"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.splitlines()
    assert first.startswith("20 tables, 8 records each") and "descriptors opened for them: " in first
    assert int(first.rsplit(": ", 1)[1]) <= 2
    assert second.startswith("3 rounds of 20 records (fsync)")


def test_a_missing_directory_is_one_line_and_status_2(tmp_path):
    out = subprocess.run([sys.executable, "bench/wal_recovery.py", "--dir", str(tmp_path / "nope")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "no such directory" in out.stderr and "Traceback" not in out.stderr
