"""Play a whole game in process at simulated time: no sleeping, no sockets.

A discrete-event loop over a ``Match``, fed through its one entry (``apply``) as the live table feeds it, and
seen through a session with no subscribers: each player looks at the table a seeded "think time" after
something happened and either sends a command or waits for the next event; the match's deadlines fire in
between. The same arguments always give the same game,
byte for byte.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from clients.players import make_player
from protocol.errors import ProtocolError
from protocol.values import Map, Result
from server.games import DEFAULT_GAME, Game
from server.core.records import StartRecord, TickRecord
from server.core.match import Match
from server.core.session import Session

THINK_MS = {"random": (200, 3000), "greedy": (300, 1500)}
IDLE = float("inf")


@dataclass
class Simulation:
    match: Match
    kinds: list[str]
    seed: int
    log: list[list[Any]] = field(default_factory=list)  # ["cmd", ms, seat, command] / ["tick", ms]

    @property
    def game(self) -> Game:
        """The engine, for tests and tools that look inside."""
        assert self.match.engine is not None
        return self.match.engine

    @property
    def actions(self) -> int:
        return self.match.actions

    @property
    def rejected(self) -> int:
        return self.match.rejected


def player_kinds(players: int, kind: str) -> list[str]:
    if kind == "mix":
        return ["greedy" if s % 2 == 0 else "random" for s in range(players)]
    return [kind] * players


def simulate(players: int, seed: int, kind: str = "greedy", options: Any = None, time_scale: float = 1.0,
             game: str = DEFAULT_GAME) -> Simulation:
    """``ValueError`` for bad options or seat count, ``KeyError`` for an unknown game or player kind."""
    match = Match("sim", game, players, seed, time_scale, options)
    session = Session(match)  # with no subscribers: the views the players look at
    kinds = player_kinds(players, kind)
    bots = [make_player(k, seed * 1009 + s, game) for s, k in enumerate(kinds)]
    for s in range(players):
        match.join(f"{kinds[s]}-{s}", token=f"seat{s}")
    match.apply(StartRecord(0))
    sim = Simulation(match, kinds, seed)
    rng = random.Random(seed)

    def think(seat: int, now: int) -> int:
        lo, hi = THINK_MS.get(kinds[seat], THINK_MS["random"])
        return now + rng.randint(lo, hi)

    wake: list[float] = [think(s, 0) for s in range(players)]
    while match.state != "over":
        seq = match.seq
        seat = min(range(players), key=wake.__getitem__)
        deadline = match.next_deadline()
        assert deadline is not None, "a running game always has a deadline pending"
        if deadline <= wake[seat]:
            match.apply(TickRecord(deadline))
            sim.log.append(["tick", deadline])
        else:
            now = int(wake[seat])
            command = bots[seat].act(session.player_view(seat), session.legal(seat))
            if command is None:
                wake[seat] = IDLE
                continue
            try:
                match.act(seat, command, now)
                sim.log.append(["cmd", now, seat, command])
            except ProtocolError:
                pass
            wake[seat] = think(seat, now)
        match.take_records()
        match.take_events()
        if match.seq != seq:
            now = match.engine.now if match.engine is not None else 0
            wake = [think(s, now) if w == IDLE else w for s, w in enumerate(wake)]
    return sim


def game_summary(result: Result, kinds: list[str]) -> Map:
    """The one JSON object ``simulate`` and ``demo`` print: the game-neutral keys of a result and the
    game's own detail (e.g. Parsimonia's dollars and turns)."""
    return {"kinds": kinds, **{k: v for k, v in result.items() if k != "over"}}


def summary(sim: Simulation) -> Map:
    assert sim.match.result is not None
    return game_summary(sim.match.result, sim.kinds)
