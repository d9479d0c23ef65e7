"""Storm reports taken in parts read as one sweep."""

from __future__ import annotations

from bench.merge import merge


def run(server: str, tables: int, rate: int, passed: bool) -> dict:
    return {"server": server, "tables": tables, "rate": rate, "passed": passed, "loadgen_ok": True, "errors": 0,
            "disconnects": 0, "unanswered": 0}


def report(*runs: dict) -> dict:
    return {"machine": {"cores": 2}, "criteria": {"p99_ms_below": 50}, "started_at": "now", "config": {},
            "elapsed_s": 10.0, "runs": list(runs)}


def test_capacities_and_ratios_come_from_the_runs_of_every_part():
    merged = merge([
        report(run("parsimonia", 100, 1000, True), run("parsimonia", 100, 2000, False)),
        report(run("bare-websockets", 100, 2000, True), run("bare-websockets", 100, 4000, False),
               run("parsimonia", 1000, 1000, True), run("parsimonia", 1000, 1500, False)),
    ])
    assert merged["capacity"] == {"parsimonia": {"100": 1000, "1000": 1000}, "bare-websockets": {"100": 2000}}
    assert merged["capacity_detail"]["parsimonia"]["100"]["limited_by"] == "p99"
    assert merged["ratios"]["parsimonia/bare-websockets"] == {"100": 0.5}
    assert len(merged["runs"]) == 6 and len(merged["parts"]) == 2 and merged["elapsed_s"] == 20.0
