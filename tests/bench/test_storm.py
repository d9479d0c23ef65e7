"""CI smoke run of the storm harness at tiny size: it starts, measures and stops; no speed is asserted.

The smoke run includes the Colyseus baseline, so it needs node and npm (the harness runs ``npm ci`` in
bench/colyseus when its packages are missing)."""

from __future__ import annotations

import argparse
import json
import time

import pytest

from bench.storm import BASELINES, SERVERS, Config, add_arguments, capacity_of, config_from_args, sweep
from server.cli.main import build_parser

RUN_FIELDS = (
    "server", "tables", "connections", "rate", "sent_per_s", "accepted_per_s", "delivered_per_s", "p50_ms",
    "p99_ms", "p999_ms", "max_ms", "timer_late_p50_ms", "timer_late_p99_ms", "timer_late_max_ms", "server_cpu",
    "server_rss_mb", "errors", "disconnects", "loadgen_cpu", "schedule_lag_p99_ms",
)


def test_storm_smoke_every_server(tmp_path):
    path = tmp_path / "storm.json"
    cfg = Config(tables=(1,), rates=(30,), servers=SERVERS, warmup=0.5, duration=1.5, drain=3.0, quiet_ms=300,
                 engine_games=1, json_path=str(path), plot_path=None)
    lines: list[str] = []
    start = time.monotonic()
    sweep(cfg, out=lines.append)
    assert time.monotonic() - start < 60

    report = json.loads(path.read_text())
    assert report["machine"]["cores"]
    assert [r["server"] for r in report["runs"]] == list(SERVERS)
    for run in report["runs"]:
        missing = [f for f in RUN_FIELDS if f not in run]
        assert not missing, (run["server"], missing)
        assert run["errors"] == 0, run.get("notes")
        assert run["disconnects"] == 0, run.get("notes")
        assert run["connections"] == 6
        assert run["accepted_per_s"] > 0
        assert run["p99_ms"] is not None and run["server_cpu"] is not None and run["server_rss_mb"]
    ours = report["runs"][0]
    assert ours["timer_samples"] > 0 and ours["timer_late_max_ms"] is not None  # quiet-time closes were seen
    assert set(report["capacity"]) == set(SERVERS)
    assert all("1" in caps for caps in report["capacity"].values())
    assert set(report["ratios"]) == {f"parsimonia/{base}" for base in BASELINES}
    assert set(report["ratio_bounds"]) == set(report["ratios"])
    assert report["engine"]["games"] == 1
    assert any(line.startswith("capacity:") for line in lines)
    assert any(line.startswith("total time:") for line in lines)


def test_capacity_is_the_highest_passing_rate():
    def run(rate, passed, loadgen_ok=True, errors=0):
        return {"server": "s", "tables": 10, "rate": rate, "passed": passed, "loadgen_ok": loadgen_ok,
                "errors": errors, "disconnects": 0, "unanswered": 0}

    assert capacity_of([run(250, True), run(500, True), run(1000, False)], "s", 10) == {"rate": 500, "limited_by": "p99"}
    assert capacity_of([run(250, True), run(500, False, errors=2)], "s", 10) == {"rate": 250, "limited_by": "errors"}
    assert capacity_of([run(250, True), run(500, True, loadgen_ok=False)], "s", 10) == {"rate": 250, "limited_by": "loadgen"}
    assert capacity_of([run(250, False)], "s", 10) == {"rate": None, "limited_by": "p99"}


def test_plot_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    from bench.storm import plot

    runs = [{"server": s, "tables": t, "rate": r, "p99_ms": 1.0 + r / 100}
            for s in SERVERS for t in (10, 100) for r in (250, 500)]
    plot({"runs": runs, "capacity": {s: {} for s in SERVERS}}, str(tmp_path / "p99.png"))
    assert (tmp_path / "p99.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_has_the_bench_command():
    args = build_parser().parse_args(["bench", "--quick", "--json", "x.json", "--servers", "ours,trio"])
    assert args.quick and args.json == "x.json" and args.servers == "ours,trio"


def test_colyseus_without_node_is_one_clear_line(monkeypatch):
    import bench.storm

    monkeypatch.setattr(bench.storm.shutil, "which", lambda tool: None if tool == "node" else "/usr/bin/" + tool)
    with pytest.raises(ValueError) as refused:
        bench.storm.install_colyseus()
    assert "needs node" in str(refused.value) and "\n" not in str(refused.value)


def test_a_servers_climb_begins_at_its_start_rate():
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    cfg = config_from_args(parser.parse_args(["--start", "ours=2000,websockets=4000"]))
    assert cfg.start == {"parsimonia": 2000.0, "bare-websockets": 4000.0}


def test_the_ok_column_says_gen_where_the_json_says_loadgen_ok_false_as_the_capacity_table_does():
    from bench.storm import _cell

    behind = {"server": "parsimonia", "tables": 10, "rate": 250, "passed": True, "loadgen_ok": False, "errors": 0,
              "disconnects": 0, "unanswered": 0}
    assert _cell(behind, "passed", "{}") == "gen"
    assert capacity_of([behind], "parsimonia", 10)["limited_by"] == "loadgen"  # printed ">=250*"... and "gen"
    assert _cell({**behind, "loadgen_ok": True}, "passed", "{}") == "yes"
    assert _cell({**behind, "passed": False, "loadgen_ok": True}, "passed", "{}") == "NO"


def test_every_column_is_named_with_its_json_field_in_the_legend():
    from bench.storm import COLUMNS, header, legend

    said = " ".join(legend())
    assert header().split() == [name for name, _, _ in COLUMNS]
    for name, key, _ in COLUMNS:
        if name != "server":
            assert f"{name}={key}" in said
    assert all(len(line) <= 120 for line in legend())
