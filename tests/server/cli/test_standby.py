"""The spare worker (``server.cli.standby``): it does a worker's imports and discovery ahead, then waits."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_a_spare_does_its_imports_and_leaves_quietly_when_its_supervisor_is_gone() -> None:
    done = subprocess.run([sys.executable, "-m", "server.cli.standby"], cwd=ROOT, input=b"",
                          capture_output=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, b"")


def test_a_spare_refuses_a_line_that_is_not_a_list_of_arguments_in_one_line() -> None:
    done = subprocess.run([sys.executable, "-m", "server.cli.standby"], cwd=ROOT, input=b'{"a": 1}\n',
                          capture_output=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.decode().strip().splitlines() == [
        "parsimonia worker spare: not a list of arguments: '{\"a\": 1}\\n'"]
