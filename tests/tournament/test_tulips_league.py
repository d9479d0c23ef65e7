"""A small Gift of Tulips league in the director: bot processes play every round to the end."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest
import trio

from server.ops import logs
from server.storage.journal import read_journal
from server.tournament.director import DirectorConfig, run_tournament
from tests.tournament.test_director import BOT, games_by_name


@pytest.fixture(autouse=True)
def _quiet_logs() -> None:
    logs.configure(level=logging.WARNING)


def write_roster(path: Path, entrants: int) -> Path:
    lines = ['name = "tulips league"', 'format = "swiss"', "rounds = 2", "table_size = 2", "seed = 5",
             'game = "gift-of-tulips"', "[options]", "choose_ms = 60000", "action_ms = 30000"]
    for i in range(entrants):
        kind = "greedy" if i % 2 == 0 else "random"
        argv = [sys.executable, "-m", "server.cli.main", "bot"] + [a.replace("{kind}", kind).replace("{seed}", str(i))
                                                              for a in BOT]
        lines += ["[[entrant]]", f'name = "{kind}-{i}"', f"bot = {json.dumps(argv)}"]
    path.write_text("\n".join(lines) + "\n")
    return path


async def test_a_tulips_league_plays_every_round_to_the_end(tmp_path):
    roster = write_roster(tmp_path / "league.toml", entrants=4)
    cfg = DirectorConfig(roster=str(roster), data_dir=str(tmp_path / "data"), port=0, time_scale=600, live=False)
    with trio.fail_after(120):
        doc = await run_tournament(cfg, lambda line: None)
    assert doc["state"] == "finished" and [r["finished"] for r in doc["rounds"]] == [True, True]
    assert games_by_name(doc) == {f"{'greedy' if i % 2 == 0 else 'random'}-{i}": 2 for i in range(4)}
    points = [e["points"] for e in doc["entrants"]]
    assert points == sorted(points, reverse=True)
    replays = sorted((tmp_path / "data" / "export" / "replays").iterdir())
    assert len(replays) == 4
    for path in replays:
        records = read_journal(str(path)).records
        assert records[0]["game"] == "gift-of-tulips" and records[-1]["result"]["reason"] == "festival"
