"""The reference players, by kind and game. Each acts only through the commands a network client would send.

``random`` plays every game from the legal templates alone; a reasoned kind such as ``greedy`` is written for
one game and registered under it. A game's package of players adds itself to ``PLAYERS`` here.
"""

from __future__ import annotations

from typing import Callable

from .base import Player, fill
from .kupcy import KupcyGreedyPlayer
from .parsimonia import GreedyPlayer
from .random_player import RandomPlayer
from .tulips import TulipsGreedy

ANY_GAME = "*"
DEFAULT_GAME = "parsimonia"

# kind -> game (or ANY_GAME) -> a factory taking a seed
PLAYERS: dict[str, dict[str, Callable[[int], Player]]] = {
    "random": {ANY_GAME: RandomPlayer},
    "greedy": {DEFAULT_GAME: GreedyPlayer, "kupcy": KupcyGreedyPlayer, "gift-of-tulips": TulipsGreedy},
}


def kinds_for(game: str) -> list[str]:
    """The kinds of reference player that can play ``game``."""
    return [kind for kind, games in PLAYERS.items() if game in games or ANY_GAME in games]


def make_player(kind: str, seed: int, game: str = DEFAULT_GAME) -> Player:
    """A reference player; ``KeyError`` (saying which kinds there are) when ``kind`` cannot play ``game``."""
    games = PLAYERS.get(kind, {})
    factory = games.get(game) or games.get(ANY_GAME)
    if factory is None:
        raise KeyError(f"no {kind!r} player for {game}; there are: {', '.join(kinds_for(game))}")
    return factory(seed)


__all__ = ["ANY_GAME", "PLAYERS", "Player", "fill", "kinds_for", "make_player"]
