"""CI smoke run of the scaling sweep at tiny size: one process and a cluster of one worker (a real redis-server),
each measured once; it starts, measures, reports and stops. No speed is asserted."""

from __future__ import annotations

import json
import shutil

import pytest

from bench.scale import SINGLE, ScaleConfig, capacity, config_from_args, generators_for, sweep, table
from server.cli.main import build_parser

SIZE_FIELDS = ("workers", "size", "capacity", "capacity_per_worker", "limited_by", "generators", "tables", "p50_ms",
               "p99_ms", "server_cpu", "cpu_us_per_bid", "oversubscribed", "capacity_ratio", "p99_ratio",
               "p99_ratio_same_total", "runs")
RUN_FIELDS = ("workers", "worker_rate", "rate", "generators", "tables", "cores_needed", "sent_per_s",
              "accepted_per_s", "p50_ms", "p99_ms", "server_cpu", "generators_cpu", "cpu_us_per_bid", "errors",
              "disconnects", "unanswered", "loadgen_ok", "passed", "oversubscribed", "machine_share")


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="the cluster needs redis-server")
def test_scale_smoke_one_process_and_one_worker(tmp_path):
    path = tmp_path / "scale.json"
    cfg = ScaleConfig(workers=(1,), worker_rates=(30,), worker_tables=2, warmup=0.5, duration=1.5, drain=2.0,
                      quiet_ms=300, json_path=str(path), plot_path=None)
    lines: list[str] = []
    sweep(cfg, out=lines.append)

    report = json.loads(path.read_text())
    assert report["machine"]["cores"]
    assert [s["workers"] for s in report["sizes"]] == [SINGLE, 1]
    for size in report["sizes"]:
        assert not [f for f in SIZE_FIELDS if f not in size], size
        run = size["runs"][0]
        assert not [f for f in RUN_FIELDS if f not in run], run
        assert run["errors"] == 0 and run["disconnects"] == 0 and run["unanswered"] == 0, run["notes"]
        assert run["accepted_per_s"] > 0 and run["p99_ms"] is not None and run["server_cpu"] is not None
        assert run["tables"] == 2
    assert report["sizes"][1]["runs"][0].get("worker_cpu"), "a cluster's run has each worker's CPU"
    assert any(line.startswith("1 worker ") for line in table(report))
    assert any(line.startswith("JSON:") for line in lines)


def test_a_size_gets_as_many_generators_as_keep_each_under_its_rate():
    assert generators_for(2000, 4000) == 1
    assert generators_for(4000, 4000) == 1
    assert generators_for(8000, 4000) == 2
    assert generators_for(24000, 4000) == 6


def test_capacity_is_the_highest_total_rate_that_passed_on_schedule():
    def run(rate, passed, loadgen_ok=True, errors=0):
        return {"rate": rate * 2, "worker_rate": rate, "passed": passed, "loadgen_ok": loadgen_ok, "errors": errors,
                "disconnects": 0, "unanswered": 0}

    assert capacity([run(100, True), run(200, False)])["rate"] == 200
    assert capacity([run(100, True), run(200, False)])["limited_by"] == "p99"
    assert capacity([run(100, True), run(200, True, loadgen_ok=False)])["limited_by"] == "loadgen"
    assert capacity([run(100, False, errors=1)]) == {"rate": None, "worker_rate": None, "limited_by": "errors",
                                                      "run": None}


def test_bench_workers_is_the_scaling_mode_with_its_options():
    args = build_parser().parse_args(["bench", "--workers", "1,2,4", "--worker-rates", "2000", "--worker-tables",
                                      "100", "--sync", "write", "--duration", "3", "--json", "s.json"])
    cfg = config_from_args(args)
    assert cfg.workers == (1, 2, 4) and cfg.worker_rates == (2000.0,) and cfg.worker_tables == 100
    assert cfg.sync == "write" and cfg.duration == 3 and cfg.json_path == "s.json" and cfg.single


def test_a_bad_workers_list_is_one_line_from_argparse(capsys):
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["bench", "--workers", "1,x"])
    assert exited.value.code == 2
    assert "not a positive whole number" in capsys.readouterr().err


def test_plot_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    from bench.scale import plot

    sizes = [{"workers": w, "capacity": 100.0 * max(w, 1), "p50_ms": 2.0, "p99_ms": 5.0 + w, "oversubscribed": w > 1}
             for w in (0, 1, 2)]
    plot({"sizes": sizes, "machine": {"cores": 2}, "config": {"sync": "fsync"}}, str(tmp_path / "s.png"))
    assert (tmp_path / "s.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
