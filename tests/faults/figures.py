"""The floods' figures as the tables of docs/reliability.md: one row per flood of the files test_floods.py writes.

    PARSIMONIA_FAULTS=full PARSIMONIA_FAULTS_FIGURES=floods.jsonl \
        .venv/bin/python -m pytest -s tests/faults/test_floods.py
    .venv/bin/python -m tests.faults.figures floods.jsonl [floods-run2.jsonl ...]

Given several files (runs of the same suite), a flood's row shows each run's figures. A figure a line lacks is
shown as ``-``. ``python -m bench.report`` puts the table of ``docs/results/floods-run*.jsonl`` into the doc."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Sequence

Figures = dict[str, Any]


def _ms(value: Any) -> str:
    return "-" if value is None else f"{value}"


def _mb(kb: Any) -> str:
    return "-" if kb is None else f"{kb / 1024:.1f}"


def _triple(values: Sequence[Any] | None, fmt: Any) -> str:
    return "-" if not values else " / ".join(fmt(v) for v in values)


def _fds(n: Any) -> str:
    return "-" if n is None else f"{n:,}"


def load(path: str | Path) -> list[Figures]:
    """The lines of a figures file, in order."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def table(runs: Sequence[Sequence[Figures]]) -> list[str]:
    """The flood table of one or more runs of the suite: the first run's figures in full, the others' beside."""
    many = len(runs) > 1
    tag = (lambda i: f", run {i + 1}") if many else (lambda i: "")
    head = ["flood", "connections", "addresses",
            ("honest p99 unloaded, " + " / ".join(f"run {i + 1}" for i in range(len(runs))) if many
             else "honest p50 / p99 unloaded"),
            *(f"honest p50 / p99 during{tag(i)}" for i in range(len(runs))),
            "RSS before / peak / after" + tag(0), *(f"RSS after{tag(i)}" for i in range(1, len(runs))),
            "descriptors before / peak / after" + tag(0)]
    if not many:
        head += ["ratio (p99)", "accept checks"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    by_run = [{f["flood"]: f for f in run} for run in runs]
    for first in runs[0]:
        name = first["flood"]
        each = [run.get(name, {}) for run in by_run]
        cells = [name, f"{first['count']:,}", str(first.get("addresses", 1)),
                 " / ".join(_ms(f.get("unloaded_p99_ms")) for f in each) + " ms" if many
                 else f"{_ms(first.get('unloaded_p50_ms'))} / {_ms(first.get('unloaded_p99_ms'))} ms"]
        cells += [f"{_ms(f.get('loaded_p50_ms'))} / {_ms(f.get('loaded_p99_ms'))} ms" for f in each]
        cells.append(_triple(first.get("rss_kb"), _mb) + " MB")
        cells += [_mb((f.get("rss_kb") or [None] * 3)[2]) + " MB" for f in each[1:]]
        cells.append(_triple(first.get("fds"), _fds))
        if not many:
            checks = first.get("accept_checks")
            cells.append(_ms(first.get("ratio")))
            cells.append("-" if checks is None else f"{checks[0]} of {checks[0] + checks[1]}")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m tests.faults.figures FIGURES.jsonl [MORE.jsonl ...]", file=sys.stderr)
        return 2
    try:
        runs = [load(path) for path in argv]
    except (OSError, ValueError) as exc:
        print(f"figures: {exc}", file=sys.stderr)
        return 1
    print("\n".join(table(runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
