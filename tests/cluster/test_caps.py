"""The cluster's own waiting-table cap: one address through every worker, counted once, in Redis."""

from __future__ import annotations

from pathlib import Path

import trio

from clients.sdk import ServerError, request_once
from tests.cluster.conftest import Cluster, Redis


async def _create(url: str) -> str:
    """A new table's id, or the code of the refusal."""
    try:
        return str((await request_once(url, "create", game="parsimonia", seats=2))["table"])
    except ServerError as err:
        return err.code


async def test_one_address_through_three_workers_has_at_most_the_clusters_waiting_cap(
        tmp_path: Path, redis: Redis) -> None:
    cluster = Cluster(tmp_path, redis.url, 3, "--max-waiting-tables-per-ip", "3")
    try:
        answers = [await _create(url) for url in [*cluster.workers.values(), cluster.url] * 3]  # 12 creates
        made = [a for a in answers if a != "rate_limited"]
        assert len(made) == 3, answers  # each worker alone would have let it have 3
        assert {t.split("-")[0] for t in made} == {"w1", "w2", "w3"}  # spread, and counted as one
        for seat in range(2):  # one of them starts: no longer waiting, its place is given back within a beat
            await request_once(cluster.url, "join", table=made[0], name=f"p{seat}")
        with trio.fail_after(10):
            while (again := await _create(cluster.url)) == "rate_limited":
                await trio.sleep(0.2)
        assert again.startswith("w") and await _create(cluster.url) == "rate_limited"
    finally:
        cluster.stop()
