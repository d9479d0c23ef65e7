"""bench/report.py: the documents' tables are those their result files give, and the check says when one is not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import report
from bench.report import ReportError, main, rewrite
from tests.faults import figures

DOC = """# A doc

Prose the report never touches.

<!-- table: toy -->
| stale | table |
|---|---|
<!-- /table -->

More prose.
"""


def toy(root: Path) -> list[str]:
    rows = json.loads((root / "results.json").read_text())
    return report.markdown(["name", "figure"], ([r["name"], report.num(r["figure"])] for r in rows))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "doc.md").write_text(DOC)
    (tmp_path / "results.json").write_text(json.dumps([{"name": "a", "figure": 1234}, {"name": "b", "figure": None}]))
    return tmp_path


def test_every_documents_tables_are_those_their_result_files_give():
    assert report.report(check=True) == []


def test_the_check_names_a_table_that_differs_from_its_files_and_changes_nothing(root):
    assert report.report(root, check=True, docs={"doc.md": {"toy": toy}}) == ["doc.md: toy"]
    assert (root / "doc.md").read_text() == DOC


def test_a_rewrite_changes_only_the_text_between_the_markers_and_then_the_check_passes(root):
    assert report.report(root, docs={"doc.md": {"toy": toy}}) == ["doc.md: toy"]
    text = (root / "doc.md").read_text()
    made = "| name | figure |\n|---|---|\n| a | 1,234 |\n| b | - |\n"
    assert text == DOC.replace("| stale | table |\n|---|---|\n", made)
    assert report.report(root, check=True, docs={"doc.md": {"toy": toy}}) == []


def test_a_changed_result_file_makes_the_check_fail(root):
    report.report(root, docs={"doc.md": {"toy": toy}})
    (root / "results.json").write_text(json.dumps([{"name": "a", "figure": 99}]))
    assert report.report(root, check=True, docs={"doc.md": {"toy": toy}}) == ["doc.md: toy"]


def test_a_table_no_result_files_are_known_for_is_refused(root):
    with pytest.raises(ReportError, match="no result files known for table toy"):
        rewrite(DOC, {}, root, "doc.md")


def test_a_known_table_whose_marker_is_gone_is_refused(root):
    with pytest.raises(ReportError, match="other has no"):
        rewrite(DOC, {"toy": toy, "other": toy}, root, "doc.md")


def test_a_missing_result_file_is_one_line_and_exit_status_2(root, monkeypatch, capsys):
    (root / "results.json").unlink()

    def missing(r: Path) -> list[str]:
        return [str(report.read_json(r, "results.json"))]
    monkeypatch.setattr(report, "ROOT", root)
    monkeypatch.setattr(report, "TABLES", {"doc.md": {"toy": missing}})
    assert main(["--check"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bench.report: results.json:") and err.count("\n") == 1


def test_the_flood_table_of_two_runs_shows_each_runs_figures_and_a_dash_for_what_a_run_lacks():
    one = {"flood": "rate", "count": 1, "addresses": 1, "unloaded_p99_ms": 5.4, "loaded_p50_ms": 1.8,
           "loaded_p99_ms": 5.7, "rss_kb": [38605, 38912, 38912], "fds": [13, 14, 13]}
    two = {"flood": "rate", "count": 1, "addresses": 1, "unloaded_p99_ms": 5.5, "loaded_p99_ms": 6.2,
           "rss_kb": [None, None, 39014]}
    lines = figures.table([[one], [two]])
    assert lines[2] == ("| rate | 1 | 1 | 5.4 / 5.5 ms | 1.8 / 5.7 ms | - / 6.2 ms | 37.7 / 38.0 / 38.0 MB | 38.1 MB "
                        "| 13 / 14 / 13 |")
    assert lines[0].count("|") == lines[2].count("|")


def test_the_flood_table_takes_every_run_file_in_name_order(tmp_path):
    results = tmp_path / "docs" / "results"
    results.mkdir(parents=True)
    for run, p99 in ((2, 6.2), (1, 5.7)):
        figures_of_run = {"flood": "rate", "count": 1, "addresses": 1, "unloaded_p99_ms": 5.0, "loaded_p99_ms": p99}
        (results / f"floods-run{run}.jsonl").write_text(json.dumps(figures_of_run) + "\n")
    lines = report.floods_table("docs/results/floods-run*.jsonl")(tmp_path)
    assert "run 1 / run 2" in lines[0] and "| - / 5.7 ms | - / 6.2 ms |" in lines[2]
    with pytest.raises(ReportError, match="no such file"):
        report.floods_table("docs/results/none-*.jsonl")(tmp_path)


def test_the_flood_table_of_one_run_shows_its_unloaded_p50_ratio_and_accept_checks():
    one = {"flood": "stalled", "count": 1, "addresses": 1, "unloaded_p50_ms": 1.55, "unloaded_p99_ms": 6.05,
           "loaded_p50_ms": 1.62, "loaded_p99_ms": 9.45, "ratio": 1.56, "rss_kb": [42700, 43008, 43008],
           "fds": [14, 15, 14], "accept_checks": [13, 0]}
    assert figures.table([[one]])[2] == ("| stalled | 1 | 1 | 1.55 / 6.05 ms | 1.62 / 9.45 ms | 41.7 / 42.0 / 42.0 MB "
                                         "| 14 / 15 / 14 | 1.56 | 13 of 13 |")


def test_the_capacity_table_keeps_a_server_it_has_no_words_for(tmp_path):
    runs = [{"server": server, "tables": 100, "rate": 800, "p99_ms": 9.5, "server_cpu": 0.5, "server_rss_mb": 60.0}
            for server in ("parsimonia", "parsimonia-workers8")]
    (tmp_path / "c.json").write_text(json.dumps({
        "runs": runs, "capacity": {r["server"]: {"100": 800} for r in runs},
        "capacity_detail": {r["server"]: {"100": {"rate": 800, "limited_by": "max_rate"}} for r in runs}}))
    lines = report.capacity_table("c.json")(tmp_path)
    assert lines[3] == "| parsimonia-workers8 | >=800 (9.5 ms, 0.50 cores, 60 MB) |"


def test_the_capacity_table_gives_the_cpu_a_bid_where_the_run_says_how_many_were_accepted(tmp_path):
    runs = [{"server": "parsimonia", "tables": 1000, "rate": 4000, "p99_ms": 9.0, "server_cpu": 0.6,
             "accepted_per_s": 4000.0, "server_rss_mb": 200.0}]
    (tmp_path / "c.json").write_text(json.dumps({
        "runs": runs, "capacity": {"parsimonia": {"1000": 4000}},
        "capacity_detail": {"parsimonia": {"1000": {"rate": 4000, "limited_by": "p99"}}}}))
    lines = report.capacity_table("c.json")(tmp_path)
    assert lines[2].endswith("| 4,000 (9.0 ms, 0.60 cores, 150 us a bid, 200 MB) |")


def test_the_scaling_table_marks_a_capacity_the_climb_ran_out_of_rates_for_and_too_few_cores(tmp_path):
    size = {"size": "1 process", "capacity": 5600, "capacity_per_worker": 5600, "limited_by": "max_rate",
            "p50_ms": 5.6, "p99_ms": 22.84, "server_cpu": 0.864, "cpu_us_per_bid": 154.3, "oversubscribed": True,
            "capacity_ratio": None, "p99_ratio_same_total": None}
    (tmp_path / "s.json").write_text(json.dumps({"machine": {"cores": 2, "cpu": "AMD EPYC"},
                                                 "started_at": "2026-12-05T00:00:00Z", "sizes": [size]}))
    lines = report.scale_table(["s.json"])(tmp_path)
    assert lines[2] == ("| 2 cores, AMD EPYC (2026-12-05) | 1 process | >=5,600 | 5,600 | 5.6 / 22.8 | 0.86 | 154 | - "
                        "| - | too few cores |")
