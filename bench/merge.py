"""Merge storm reports (``bench/storm.py --json``) taken in one session into one: the runs of all of them,
capacities and ratios computed again, one summary and one plot.

    python bench/merge.py bench/results/a.json bench/results/b.json --json bench/results/sweep.json \
        --plot bench/results/sweep.png

A sweep split into several invocations (a table count each, or ``--start`` rates per server group) is
then read as one. Each input's machine record and start time are kept under ``parts``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.storm import capacities, plot, ratios, summary  # noqa: E402


def merge(reports: list[dict[str, Any]]) -> dict[str, Any]:
    runs = [run for report in reports for run in report["runs"]]
    merged: dict[str, Any] = {"machine": reports[0]["machine"], "criteria": reports[0]["criteria"],
                              "parts": [{"started_at": r.get("started_at"), "config": r.get("config"),
                                         "machine": r.get("machine"), "elapsed_s": r.get("elapsed_s")}
                                        for r in reports],
                              "runs": runs}
    merged["capacity"], merged["capacity_detail"] = capacities(runs)
    merged["ratios"], merged["ratio_bounds"] = ratios(merged["capacity"], merged["capacity_detail"])
    merged["elapsed_s"] = round(sum(r.get("elapsed_s") or 0 for r in reports), 1)
    return merged


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("reports", nargs="+", metavar="REPORT.json")
    parser.add_argument("--json", metavar="PATH", required=True)
    parser.add_argument("--plot", metavar="PATH")
    args = parser.parse_args(argv)
    try:
        reports = [json.loads(Path(path).read_text()) for path in args.reports]
    except (OSError, ValueError) as exc:
        sys.exit(f"merge: {exc}")
    merged = merge(reports)
    summary(merged, print)
    Path(args.json).write_text(json.dumps(merged, indent=1) + "\n")
    if args.plot:
        plot(merged, args.plot)


if __name__ == "__main__":
    main()
