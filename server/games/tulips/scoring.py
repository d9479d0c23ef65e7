"""The points of Gift of Tulips: keep and give by festival place, and the majorities at the end.

``KEEP[p]`` and ``GIVE_BONUS[p]`` are for place p+1 (give scores the card's value plus the bonus);
``MAJORITY[p][r]`` is what the r+1-th most cards of the variety in place p+1 earn. A table of 2 scores only the
1st majority, 3-4 players the 1st and 2nd, 5-6 all three.
"""

from __future__ import annotations

KEEP = (0, 0, 1, 2)
GIVE_BONUS = (3, 2, 1, 0)
MAJORITY = ((15, 10, 5), (10, 7, 4), (5, 3, 1))
SCORED_PLACES = len(MAJORITY)


def keep_points(place: int) -> int:
    return KEEP[place - 1]


def give_points(place: int, value: int) -> int:
    return value + GIVE_BONUS[place - 1]


def majority_ranks(players: int) -> int:
    """How many majorities each scored variety pays: 1 with 2 players, 2 with 3-4, 3 with 5-6."""
    return 1 if players <= 2 else 2 if players <= 4 else 3


def majority_awards(place: int, holdings: list[tuple[int, int]], ranks: int) -> list[tuple[int, int]]:
    """``[(seat, points), ...]`` for the variety in ``place``; ``holdings[seat]`` is ``(count, total value)`` of
    that variety in the seat's bouquet.

    Players rank by count, then by value; a player with none of the variety takes no majority. Players equal on
    both share a rank and each earns its points; every player holds one rank, so the next one down is the rank
    after the tied ones (two tied for the most: both earn the 1st majority, and the next player the 3rd)."""
    order = sorted((s for s, (count, _) in enumerate(holdings) if count), key=lambda s: (-holdings[s][0],
                                                                                         -holdings[s][1], s))
    awards: list[tuple[int, int]] = []
    for i, seat in enumerate(order):
        rank = next(j for j in range(i + 1) if holdings[order[j]] == holdings[seat])
        if rank < ranks:
            awards.append((seat, MAJORITY[place - 1][rank]))
    return awards
