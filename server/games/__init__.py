"""The game engines, by name. Every engine keeps the contract in ``server.games.base``."""

from __future__ import annotations

from typing import Any

from .base import Event, Game, IllegalAction
from .parsimonia import Config as ParsimoniaConfig, Deck, Parsimonia

GAMES: dict[str, type[Game]] = {Parsimonia.NAME: Parsimonia}


def new_game(
    name: str,
    players: int,
    seed: int,
    options: Any = None,
    time_scale: float = 1.0,
    start_ms: int = 0,
    deck: Deck | None = None,
) -> Game:
    """Create a game from wire options. Raises ``KeyError`` for an unknown game, ``ValueError`` for bad options."""
    if name != Parsimonia.NAME:
        raise KeyError(name)
    return Parsimonia(players, seed, ParsimoniaConfig.from_options(options, time_scale, deck), start_ms)


__all__ = ["Event", "GAMES", "Game", "IllegalAction", "new_game"]
