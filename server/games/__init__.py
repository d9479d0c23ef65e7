"""The game engines, by name. Every engine keeps the contract in ``server.games.base``."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from .base import Event, Game, IllegalAction
from .parsimonia import Config as ParsimoniaConfig, Deck, Parsimonia

GAMES: dict[str, type[Game]] = {Parsimonia.NAME: Parsimonia}
# what puts each game into words for people (``describe``, ``summary``, ``started_at``), imported when needed
WORDS: dict[str, str] = {"parsimonia": "server.games.parsimonia.words"}


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


def words_for(game: str) -> ModuleType | None:
    """The module that puts ``game``'s events and views into words, or None for a game without one."""
    path = WORDS.get(game)
    return importlib.import_module(path) if path else None


__all__ = ["Event", "GAMES", "Game", "IllegalAction", "new_game", "words_for"]
