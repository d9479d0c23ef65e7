"""The game engines, by name. Every engine keeps the contract in ``server.games.base``.

``GAMES`` is the registry the runtime, the tools and the tournament look games up in; a game is added with
``register`` (a test may register a toy game the same way), together with the module, if any, that puts its
events and views into words for people (``describe``, ``summary``, ``started_at``: see ``words_for``).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from .base import Event, Game, IllegalAction, Option, Outcome

GAMES: dict[str, type[Game]] = {}
WORDS: dict[str, str] = {}  # game -> the module of its words, imported when needed
DEFAULT_GAME = "parsimonia"


def register(cls: type[Game], words: str | None = None) -> type[Game]:
    """Make ``cls`` playable under ``cls.NAME``; ``words``: the dotted path of its words module."""
    GAMES[cls.NAME] = cls
    if words is not None:
        WORDS[cls.NAME] = words
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


def words_for(game: str) -> ModuleType | None:
    """The module that puts ``game``'s events and views into words, or None for a game without one."""
    path = WORDS.get(game)
    return importlib.import_module(path) if path else None


# after register: the registry knows nothing of the games
from .kupcy import Kupcy  # noqa: E402
from .parsimonia import Parsimonia  # noqa: E402
from .tulips import Tulips  # noqa: E402

register(Parsimonia, words="server.games.parsimonia.words")
register(Kupcy, words="server.games.kupcy.words")
register(Tulips, words="server.games.tulips.words")

__all__ = ["DEFAULT_GAME", "Event", "GAMES", "Game", "IllegalAction", "Option", "Outcome", "game_class",
           "new_game", "register", "words_for"]
