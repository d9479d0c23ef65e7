"""The floods' figures as the table of docs/reliability.md: one row per line of the file test_floods.py writes.

    PARSIMONIA_FAULTS=full PARSIMONIA_FAULTS_FIGURES=floods.jsonl \
        .venv/bin/python -m pytest -s tests/faults/test_floods.py
    .venv/bin/python -m tests.faults.figures floods.jsonl
"""

from __future__ import annotations

import json
import sys

HEAD = ("| flood | connections | addresses | honest p50 / p99 unloaded | honest p50 / p99 during | ratio (p99) "
        "| RSS before / peak / after | descriptors before / peak / after | accept checks |")


def p50(figures: dict) -> str:
    return f"{figures.get('unloaded_p50_ms', '?')} / {figures['unloaded_p99_ms']} ms"


def row(figures: dict) -> str:
    rss = " / ".join(f"{kb / 1024:.1f}" for kb in figures["rss_kb"])
    fds = " / ".join(f"{n:,}" for n in figures["fds"])
    accepted, refused = figures["accept_checks"]
    during = f"{figures.get('loaded_p50_ms', '?')} / {figures['loaded_p99_ms']} ms"
    return (f"| {figures['flood']} | {figures['count']:,} | {figures.get('addresses', 1)} | {p50(figures)} | {during} "
            f"| {figures['ratio']} | {rss} MB | {fds} | {accepted} of {accepted + refused} |")


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m tests.faults.figures FIGURES.jsonl", file=sys.stderr)
        return 2
    try:
        with open(argv[0], encoding="utf-8") as f:
            lines = [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError) as exc:
        print(f"figures: {exc}", file=sys.stderr)
        return 1
    print(HEAD)
    print("|" + "---|" * HEAD.count(" |"))
    for figures in lines:
        print(row(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
