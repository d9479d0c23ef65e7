"""The reference players, by kind and game. Each acts only through the commands a network client would send.

``random`` plays every game from the legal templates alone; a reasoned kind such as ``greedy`` is written for
one game and named by that game's client half (``clients.games``), which says where its factory is.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import Callable

from clients.games import client_game, client_games

from .base import Player, fill
from .random_player import RandomPlayer

ANY_GAME = "*"
DEFAULT_GAME = "parsimonia"

# kind -> game (or ANY_GAME) -> a factory taking a seed; beside these, the kinds each game's client half names
PLAYERS: dict[str, dict[str, Callable[[int], Player]]] = {
    "random": {ANY_GAME: RandomPlayer},
}


@cache
def _load(path: str) -> Callable[[int], Player]:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def _factory(kind: str, game: str) -> Callable[[int], Player] | None:
    games = PLAYERS.get(kind, {})
    factory = games.get(game)
    client = client_game(game)
    if factory is None and client is not None and kind in client.players:
        factory = _load(client.players[kind])
    return factory or games.get(ANY_GAME)


def all_kinds() -> list[str]:
    """Every kind of reference player, for any game."""
    named = [kind for client in client_games().values() for kind in client.players]
    return list(dict.fromkeys([*PLAYERS, *named]))


def kinds_for(game: str) -> list[str]:
    """The kinds of reference player that can play ``game``."""
    client = client_game(game)
    named = client.players if client is not None else {}
    return [*(kind for kind, games in PLAYERS.items() if game in games or ANY_GAME in games),
            *(kind for kind in named if kind not in PLAYERS)]


def make_player(kind: str, seed: int, game: str = DEFAULT_GAME) -> Player:
    """A reference player; ``KeyError`` (saying which kinds there are) when ``kind`` cannot play ``game``."""
    factory = _factory(kind, game)
    if factory is None:
        raise KeyError(f"no {kind!r} player for {game}; there are: {', '.join(kinds_for(game))}")
    return factory(seed)


__all__ = ["ANY_GAME", "PLAYERS", "Player", "fill", "kinds_for", "make_player"]
