"""Plackett-Luce, the ratings' model (``server/ratings/store.py``), against openskill's two other full-pairing models on
the project's own games: simulated Parsimonia games of the reference bots, 12 entrants (6 greedy, 6 random), each
table two of each drawn at random. Each model rates the games in order; from the first quarter on, before each
game, it predicts who wins. Printed per model: how often its favourite was among the winners, the log loss of its
win probabilities, how far apart the worst greedy and best random ordinals end, and its time per game.

    python -m bench.ratings_models --games 400
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections.abc import Sequence
from typing import Any

from openskill.models import BradleyTerryFull, PlackettLuce, ThurstoneMostellerFull

from server.games import discover
from server.cli.simulate import simulate
from server.tournament.standings import finishing_places

OPTIONS = {"game_ms": 1_200_000, "opening_ms": 300_000, "turn_ms": 60_000}  # examples/league.toml's clocks
GREEDY = [f"greedy-{i}" for i in range(6)]
RANDOM = [f"random-{i}" for i in range(6)]
Game = tuple[list[str], list[int]]  # entrants by seat, their places


def games(count: int, seed: int = 1) -> list[Game]:
    rng = random.Random(seed)
    out: list[Game] = []
    for g in range(count):
        greedy, rand = rng.sample(GREEDY, 2), rng.sample(RANDOM, 2)
        result = simulate(4, 1000 + g, "mix", OPTIONS, 20).match.result  # mix: greedy at even seats
        assert result is not None
        out.append(([greedy[0], rand[0], greedy[1], rand[1]],
                     finishing_places(result["scores"], set(result["winners"]))))
    return out


def measure(model: Any, played: Sequence[Game]) -> str:
    """One model's line (``model``: one of openskill's, which share no base class that declares their API)."""
    ratings: dict[str, Any] = {}
    hits = predicted = 0
    loss = 0.0
    start = time.perf_counter()
    for i, (seats, places) in enumerate(played):
        teams = [[ratings.get(s) or model.rating()] for s in seats]
        if i >= len(played) // 4:
            probs = model.predict_win(teams)
            firsts = [k for k in range(len(seats)) if places[k] == 1]
            hits += max(range(len(seats)), key=lambda k: probs[k]) in firsts
            predicted += 1
            loss -= math.log(max(1e-9, sum(probs[k] for k in firsts)))
        for s, [new] in zip(seats, model.rate(teams, ranks=[float(p) for p in places])):
            ratings[s] = new
    seconds = time.perf_counter() - start
    ordinal = {s: r.ordinal() for s, r in ratings.items()}
    apart = min(ordinal[s] for s in GREEDY if s in ordinal) - max(ordinal[s] for s in RANDOM if s in ordinal)
    return (f"{type(model).__name__}: favourite among the winners {hits}/{predicted} "
            f"({hits / max(1, predicted):.0%}), log loss {loss / max(1, predicted):.3f}, worst greedy minus best "
            f"random ordinal {apart:+.2f}, {seconds / len(played) * 1e6:.0f} us a game")


def main(argv: Sequence[str] | None = None) -> list[str]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=400)
    args = parser.parse_args(argv)
    discover()
    played = games(args.games)
    greedy_first = sum(min(p[0], p[2]) < min(p[1], p[3]) for _, p in played)
    lines = [f"{len(played)} games; a greedy seat placed above both random seats in {greedy_first}"]
    lines += [measure(model, played) for model in (PlackettLuce(), BradleyTerryFull(), ThurstoneMostellerFull())]
    for line in lines:
        print(line)
    return lines


if __name__ == "__main__":
    main()
