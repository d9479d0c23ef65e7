"""The end-to-end suite of one process, on a cluster of 2 workers with Redis: bots of every game on both workers,
through the shared port (following ``moved``), one worker killed with -9 mid-game and its bots resumed when it is
back. The tournament on 2 workers is test_league.py; the browser, tests/web/test_browser.py (parametrized)."""

from __future__ import annotations

import json
import os
import signal
import urllib.request

import trio

from clients.players import make_player
from clients.sdk import BotSession, request_once
from tests.cluster.conftest import SHORT, TIME_SCALE, Cluster, Redis, play_to_the_end

GAMES = {  # seats, time scale, and options for a game of a few seconds
    # 5 s, turns of 40 ms: still in the middle when killed on a busy machine, and no flood of turns timed out
    "parsimonia": (2, TIME_SCALE / 8, {**SHORT, "game_ms": 240_000}),
    "gift-of-tulips": (3, TIME_SCALE / 2, {"choose_ms": 5000, "action_ms": 3000}),
    "kupcy": (3, TIME_SCALE / 2, {"decide_ms": 3000, "bid_ms": 2000, "stow_ms": 1500}),
}


def _tables_seen(url: str, worker: int) -> int:
    """Live tables of ``worker`` as the worker at ``url`` has them in its copy of the directory."""
    with urllib.request.urlopen(url.replace("ws://", "http://") + "cluster", timeout=10) as page:
        workers = json.loads(page.read())["workers"]
    return next((w["tables"] for w in workers if w["worker"] == worker), -1)


async def _create_on(cluster: Cluster, worker: int, held: int, game: str, seed: int) -> str:
    """A table asked of ``worker`` while both hold ``held`` tables (a tie stays where it was asked); returned once
    the other worker's directory counts it, so that the next one asked of the other worker stays there too."""
    seats, time_scale, options = GAMES[game]
    created = await request_once(cluster.workers[worker], "create", game=game, seats=seats, seed=seed,
                                 time_scale=time_scale, options=options)
    other = cluster.workers[3 - worker]
    with trio.fail_after(10):
        while await trio.to_thread.run_sync(_tables_seen, other, worker) < held + 1:
            await trio.sleep(0.05)
    return str(created["table"])


async def test_bots_of_every_game_play_on_both_workers_and_a_killed_workers_bots_resume(
        cluster: Cluster, redis: Redis) -> None:
    tables: dict[tuple[str, int], str] = {}
    for n, game in enumerate(GAMES):
        for worker in (1, 2):
            tables[game, worker] = await _create_on(cluster, worker, n, game, seed=10 * n + worker)
    assert {(g, t.split("-")[0]) for (g, _), t in tables.items()} == {(g, f"w{w}") for g in GAMES for w in (1, 2)}
    bots = {(game, worker): [BotSession(cluster.url, make_player("greedy", seat, game), name=f"{table}-{seat}",
                                        table=table, game=game) for seat in range(GAMES[game][0])]
            for (game, worker), table in tables.items()}
    killed = redis.entry(2)
    assert killed is not None
    results: dict[tuple[str, int], list] = {key: [] for key in bots}

    async def play(key: tuple[str, int], bot: BotSession) -> None:
        results[key] += await play_to_the_end([bot])

    with trio.fail_after(150):
        async with trio.open_nursery() as nursery:
            for key, seated in bots.items():
                for bot in seated:
                    nursery.start_soon(play, key, bot)
            while min(bot.actions for bot in bots["parsimonia", 2]) < 3:
                await trio.sleep(0.02)
            os.kill(killed["pid"], signal.SIGKILL)
    for key, got in results.items():
        assert len(got) == GAMES[key[0]][0] and all(r == got[0] for r in got), key  # every seat saw one result
    assert min(bot.reconnects for bot in bots["parsimonia", 2]) >= 1  # the killed worker's bots resumed there
    assert sum(bot.reconnects for (_, worker), seated in bots.items() if worker == 1 for bot in seated) == 0
    assert "worker_died" in cluster.errors()
