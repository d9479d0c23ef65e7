"""The core is typed (issue #21): few open ``dict[str, Any]`` maps are left in ``server/`` and ``protocol/``, and
the server, the protocol and the clients pass mypy (the settings are ``[tool.mypy]`` in pyproject.toml), the core and
the protocol with ``--strict`` (issue #39)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MOST_UNTYPED_MAPS = 29
UNTYPED_MAP = "dict[str, Any]"
TYPE_CHECKED = ["server", "protocol", "clients"]  # the whole tree, with the settings of pyproject.toml
STRICT = ["server/core", "protocol"]  # and the core and the protocol with --strict


def untyped_maps() -> dict[str, int]:
    """The lines that spell an untyped map, by file (the issue's measure: ``grep -rc``)."""
    counts = {}
    for package in ("server", "protocol"):
        for path in sorted((ROOT / package).rglob("*.py")):
            count = sum(UNTYPED_MAP in line for line in path.read_text(encoding="utf-8").splitlines())  # as grep -c
            if count:
                counts[str(path.relative_to(ROOT))] = count
    return counts


def test_few_untyped_maps_are_left_in_server_and_protocol() -> None:
    counts = untyped_maps()
    listing = ", ".join(f"{name}: {count}" for name, count in sorted(counts.items(), key=lambda kv: -kv[1]))
    assert sum(counts.values()) <= MOST_UNTYPED_MAPS, f"{sum(counts.values())} {UNTYPED_MAP} ({listing})"


def test_the_server_the_protocol_and_the_clients_pass_mypy(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "mypy"), *TYPE_CHECKED],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_core_and_the_protocol_pass_mypy_strict(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--cache-dir",
                          str(tmp_path / "mypy"), *STRICT], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
