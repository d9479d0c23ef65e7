"""The game engines, by name. Every engine keeps the contract in ``server.games.base``.

``GAMES`` is the registry the runtime, the tools and the tournament look games up in; a game package adds
itself with ``register`` (a test may register a toy game the same way).
"""

from __future__ import annotations

from typing import Any

from .base import Event, Game, IllegalAction, Option, Outcome

GAMES: dict[str, type[Game]] = {}
DEFAULT_GAME = "parsimonia"


def register(cls: type[Game]) -> type[Game]:
    """Make ``cls`` playable under ``cls.NAME`` (usable as a class decorator)."""
    GAMES[cls.NAME] = cls
    return cls


def game_class(name: str) -> type[Game]:
    """The engine class of ``name``; ``KeyError`` naming the games there are when there is none."""
    try:
        return GAMES[name]
    except KeyError:
        raise KeyError(f"no game {name!r}; there are {', '.join(sorted(GAMES))}") from None


def new_game(name: str, players: int, seed: int, options: Any = None, time_scale: float = 1.0,
             start_ms: int = 0) -> Game:
    """Create a game from wire options. ``KeyError`` for an unknown game, ``ValueError`` for bad options."""
    return game_class(name).create(players, seed, options, time_scale, start_ms)


from .parsimonia import Parsimonia  # noqa: E402  (after register: the registry knows nothing of the games)

register(Parsimonia)

__all__ = ["DEFAULT_GAME", "Event", "GAMES", "Game", "IllegalAction", "Option", "Outcome", "game_class",
           "new_game", "register"]
