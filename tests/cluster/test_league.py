"""The tournament director runs a league on a cluster of 2 workers: its tables spread over both, its bots and its
link sent to the worker holding each table."""

from __future__ import annotations

import logging
from pathlib import Path

import trio

from server.ops import logs
from server.tournament.director import DirectorConfig, run_tournament
from tests.cluster.conftest import Cluster, Redis
from tests.tournament.test_director import games_by_name, write_roster

TOKEN = "the-organisers-token-0123456789"


async def test_a_bot_league_plays_every_round_on_two_workers(tmp_path: Path, redis: Redis) -> None:
    logs.configure(level=logging.WARNING)
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    cluster = Cluster(tmp_path, redis.url, 2, "--admin-token-file", str(token_file))
    try:
        roster = write_roster(tmp_path / "league.toml", entrants=4, rounds=2, table_size=2)
        cfg = DirectorConfig(roster=str(roster), data_dir=str(tmp_path / "director"), url=cluster.url,
                             time_scale=600, admin_token=TOKEN, live=False)
        with trio.fail_after(180):
            doc = await run_tournament(cfg, lambda line: None)
        assert doc["state"] == "finished" and [r["finished"] for r in doc["rounds"]] == [True, True]
        assert games_by_name(doc) == {f"{'greedy' if i % 2 == 0 else 'random'}-{i}": 2 for i in range(4)}
        held_by = {t["server_table"].split("-")[0] for r in doc["rounds"] for t in r["tables"]}
        assert held_by == {"w1", "w2"}  # each round's two tables went one to each worker
    finally:
        cluster.stop()
