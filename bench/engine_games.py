"""Engine-only throughput: play N simulated games in process and report the time they took.

    .venv/bin/python bench/engine_games.py --games 1000 --players 4 --kind greedy [--game kupcy] [--json]

Games are independent: seeds 1..N. One process, no sockets, simulated time; this measures the rules engine
and the reference players together (the players read the same views and legal actions a client gets).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from server.games import DEFAULT_GAME, GAMES, discover  # noqa: E402
from server.cli.simulate import simulate  # noqa: E402


def run(games: int, players: int, kind: str, game: str = DEFAULT_GAME) -> dict:
    actions = 0
    start = time.perf_counter()
    cpu_start = time.process_time()
    for seed in range(1, games + 1):
        sim = simulate(players, seed, kind, game=game)
        actions += sim.actions
    wall = time.perf_counter() - start
    return {
        "game": game,
        "games": games,
        "players": players,
        "kind": kind,
        "game": game,
        "seconds": round(wall, 2),
        "cpu_seconds": round(time.process_time() - cpu_start, 2),
        "games_per_s": round(games / wall, 2),
        "actions": actions,
        "actions_per_s": round(actions / wall),
        "machine": f"{platform.machine()} {platform.python_implementation()} {platform.python_version()}",
    }


def main() -> None:
    discover()
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--kind", default="greedy", choices=["greedy", "random", "mix"])
    parser.add_argument("--game", default=DEFAULT_GAME, choices=sorted(GAMES))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    out = run(args.games, args.players, args.kind, args.game)
    if args.json:
        print(json.dumps(out))
    else:
        print(
            f"{out['games']} {out['game']} games of {out['players']} {out['kind']} players: {out['seconds']} s "
            f"({out['games_per_s']} games/s, {out['actions_per_s']} actions/s) on {out['machine']}"
        )


if __name__ == "__main__":
    main()
