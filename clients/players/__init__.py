"""The reference players. Each acts only through the commands a network client would send."""

from .base import Player, fill
from .greedy import GreedyPlayer
from .random_player import RandomPlayer

PLAYERS = {"random": RandomPlayer, "greedy": GreedyPlayer}


def make_player(kind: str, seed: int) -> Player:
    return PLAYERS[kind](seed)


__all__ = ["PLAYERS", "Player", "fill", "make_player"]
