"""A small Kupcy league in the director: a roster with ``game = "kupcy"``, bot processes, every round played."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import trio

from server.tournament.director import DirectorConfig, run_tournament
from tests.tournament.test_director import BOT, games_by_name


def kupcy_roster(path: Path, entrants: int, rounds: int) -> Path:
    lines = ['name = "kupcy league"', 'format = "swiss"', f"rounds = {rounds}", "table_size = 3", "seed = 5",
             'game = "kupcy"', "[options]", "decide_ms = 20000", "bid_ms = 10000", "stow_ms = 10000"]
    for i in range(entrants):
        kind = "greedy" if i % 2 == 0 else "random"
        argv = [sys.executable, "-m", "server.cli.main", "bot", "--game", "{game}"] + [
            a.replace("{kind}", kind).replace("{seed}", str(i)) for a in BOT]
        lines += ["[[entrant]]", f'name = "{kind}-{i}"', f"bot = {json.dumps(argv)}"]
    path.write_text("\n".join(lines) + "\n")
    return path


async def test_a_kupcy_league_plays_every_round_to_the_end(tmp_path):
    roster = kupcy_roster(tmp_path / "league.toml", entrants=6, rounds=2)
    cfg = DirectorConfig(roster=str(roster), data_dir=str(tmp_path / "data"), port=0, time_scale=100, live=False)
    with trio.fail_after(240):
        doc = await run_tournament(cfg, [].append)
    assert doc["state"] == "finished" and [r["finished"] for r in doc["rounds"]] == [True, True]
    assert games_by_name(doc) == {f"{'greedy' if i % 2 == 0 else 'random'}-{i}": 2 for i in range(6)}
    for rnd in doc["rounds"]:
        assert sorted(len(t["seats"]) for t in rnd["tables"]) == [3, 3]
    points = [e["points"] for e in doc["entrants"]]
    assert points == sorted(points, reverse=True)
    assert len(list((tmp_path / "data" / "export" / "replays").iterdir())) == 4
