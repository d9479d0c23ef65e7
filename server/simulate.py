"""Play a whole game in process at simulated time: no sleeping, no sockets.

A discrete-event loop: each player looks at the table a seeded "think time" after something happened
and either sends a command or waits for the next event; the engine's deadlines fire in between. The
same arguments always give the same game, byte for byte.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from clients.players import make_player
from server.games import Game, IllegalAction, new_game
from server.games.parsimonia import Deck

THINK_MS = {"random": (200, 3000), "greedy": (300, 1500)}
IDLE = float("inf")


@dataclass
class Simulation:
    game: Game
    kinds: list[str]
    seed: int
    log: list[list[Any]] = field(default_factory=list)  # ["cmd", ms, seat, command] / ["tick", ms]
    actions: int = 0
    rejected: int = 0


def player_kinds(players: int, kind: str) -> list[str]:
    if kind == "mix":
        return ["greedy" if s % 2 == 0 else "random" for s in range(players)]
    return [kind] * players


def simulate(
    players: int,
    seed: int,
    kind: str = "greedy",
    options: Any = None,
    time_scale: float = 1.0,
    deck_path: str | None = None,
) -> Simulation:
    deck = Deck.load(deck_path) if deck_path else None
    game = new_game("parsimonia", players, seed, options, time_scale, deck=deck)
    kinds = player_kinds(players, kind)
    sim = Simulation(game, kinds, seed)
    bots = [make_player(k, seed * 1009 + s) for s, k in enumerate(kinds)]
    rng = random.Random(seed)

    def think(seat: int, now: int) -> int:
        lo, hi = THINK_MS[kinds[seat]]
        return now + rng.randint(lo, hi)

    wake: list[float] = [think(s, game.now) for s in range(players)]
    while not game.over:
        seat = min(range(players), key=wake.__getitem__)
        deadline = game.next_deadline()
        assert deadline is not None, "a running game always has its game clock pending"
        if deadline <= wake[seat]:
            events = game.advance(deadline)
            sim.log.append(["tick", deadline])
        else:
            now = int(wake[seat])
            command = bots[seat].act(game.view(seat), game.legal_actions(seat))
            if command is None:
                wake[seat] = IDLE
                continue
            try:
                events = game.apply(seat, command, now)
            except IllegalAction:
                sim.rejected += 1
                wake[seat] = think(seat, now)
                continue
            sim.actions += 1
            sim.log.append(["cmd", now, seat, command])
            wake[seat] = think(seat, now)
        if events:
            wake = [think(s, game.now) if w == IDLE else w for s, w in enumerate(wake)]
    return sim


SUMMARY_KEYS = ("game", "seed", "players", "winners", "dollars", "company_dollars", "reason", "turns", "actions",
                "rejected", "game_ms", "digest")


def game_summary(result: dict[str, Any], kinds: list[str]) -> dict[str, Any]:
    """The one JSON object ``simulate`` and ``demo`` print, from a result holding every ``SUMMARY_KEYS``."""
    return {"kinds": kinds, **{k: result[k] for k in SUMMARY_KEYS}}


def summary(sim: Simulation) -> dict[str, Any]:
    result = {**sim.game.result(), "actions": sim.actions, "rejected": sim.rejected, "game_ms": sim.game.now,
              "digest": sim.game.digest()}
    return game_summary(result, sim.kinds)
