"""The players-per-worker bench: it plays every game with both kinds of seat end to end, sizes a worker from what it
measured, refuses a bad argument in one line, and the report fills the players table from its result file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench import report
from bench.players import GAMES, KINDS, RATES, capacity

DOC = "# Bench\n\n<!-- table: players -->\n<!-- /table -->\n"


def test_a_quick_run_plays_whole_games_of_every_game_with_views_on_and_off_and_sizes_a_worker(tmp_path: Path):
    out = subprocess.run([sys.executable, "bench/players.py", "--quick", "--speed", "5", "--idle-s", "0.5",
                          "--json", str(tmp_path / "p.json")], capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr
    result = json.loads((tmp_path / "p.json").read_text())
    assert [(row["game"], row["kind"]) for row in result["rows"]] == [(g, k) for g in GAMES for k in KINDS]
    for row in result["rows"]:
        assert row["tables"] == 2 and row["actions"] > 0 and row["cpu_per_action_us"] > 0
        held = [row["seats_per_worker"][rate] for rate in RATES]
        assert all(isinstance(n, int) and n > 0 for n in held) and held == sorted(held, reverse=True)
    assert result["idle"]["seats"] == 20 and result["idle"]["cpu_per_seat_us_per_s"] >= 0
    assert result["command"].startswith("bench/players.py --quick") and result["machine"]["cores"]
    assert len(out.stdout.splitlines()) == 1 + len(GAMES) * len(KINDS) + 1  # the head, a row each, the idle line


def test_a_game_it_does_not_know_is_one_line_and_exit_status_2():
    out = subprocess.run([sys.executable, "bench/players.py", "--games", "chess"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 2 and "no game chess" in out.stderr and "Traceback" not in out.stderr


def test_a_worker_holds_fewer_seats_the_more_each_acts_and_its_idle_cost_counts():
    assert capacity(500.0, 0.0, 1.0, 0.7) == 1400
    assert capacity(500.0, 100.0, 1.0, 0.7) == 1166  # 0.7 s of CPU a second over 600 us a seat
    assert capacity(500.0, 0.0, 10.0, 0.7) == 140
    assert capacity(None, 10.0, 1.0, 0.7) is None


def test_the_report_fills_the_players_table_from_its_result_file(tmp_path: Path):
    rows = [{"game": "kupcy", "kind": kind, "views": kind == "views-on", "actions": 700 + n, "refusals": n,
             "cpu_per_action_us": 300.4 + 100 * n, "seats_per_worker": {"1 / s": 2123 - 500 * n}}
            for n, kind in enumerate(("views-on", "views-off"))]
    (tmp_path / "players.json").write_text(json.dumps({"budget": 0.7, "rates": {"1 / s": 1.0}, "rows": rows,
                                                      "idle": {"seats": 300, "cpu_per_seat_us_per_s": 35.0,
                                                               "server_cpu_alone": 0.0}}))
    (tmp_path / "doc.md").write_text(DOC)
    tables = {"doc.md": {"players": report.players_table("players.json")}}
    assert report.report(tmp_path, docs=tables) == ["doc.md: players"]
    assert (tmp_path / "doc.md").read_text() == DOC.replace("<!-- /table -->", "\n".join([
        "| game (views on / off) | actions (refused) | CPU an action | seats at 1 / s |",
        "|---|---|---|---|",
        "| kupcy | 700 (0) / 701 (1) | 300 / 400 us | 2,100 / 1,600 |",
        "| idle seat (300 held) | - | 35.0 us a second (20,000 a worker) | - |",
        "<!-- /table -->"]))
    assert report.report(tmp_path, check=True, docs=tables) == []


def test_the_bench_readme_has_the_players_table_and_the_report_knows_it():
    assert "<!-- table: players -->" in (Path(__file__).resolve().parents[2] / "bench" / "README.md").read_text()
    assert "players" in report.TABLES["bench/README.md"]
