"""The receive-path micro-benchmark reads every frame both ways, decodes the message, and prints a cost for each
(it asserts nothing about speed)."""

from __future__ import annotations

import pytest

from bench.receive_path import main


def test_both_readers_read_every_frame_and_each_gets_a_figure(capsys):
    assert main(["--frames", "40", "--per-read", "1,4", "--repeat", "1"]) == 0
    rows = capsys.readouterr().out.splitlines()[2:]
    assert [row.split()[0] for row in rows[:2]] == ["1", "4"]
    assert all(row.endswith("x") and len(row.split()) == 4 for row in rows[:2])
    assert rows[2].startswith("decode and check one message: ") and rows[2].endswith(" us")


def test_a_bad_count_is_one_line_and_status_2(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--per-read", "0"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith("must be at least 1")
