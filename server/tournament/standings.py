"""Standings: finishing places and tournament points from game results, and the order of the entrants.

At a table, the game's winners share 1st place; the other seats follow by score (the game's ``scores``: integers by
seat, higher is better, whatever the game), and equal scores share a place. Entrants who share a place split the
points of the places they cover: two tied for 1st with points ``[6, 3, 1, ...]`` get ``(6 + 3) / 2 = 4.5`` each,
and the next seat is 3rd. Points are exact fractions. A forfeited seat (a no-show) is last, with no points; the
others are placed among themselves.

Entrants are ordered by points, then total score, then opponents' points (for every game played, the final
points of each opponent at that table), all descending, then by name. Entrants equal on the three share a rank.
Dropped entrants stay in the standings, flagged.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, TypedDict


@dataclass(frozen=True)
class GameResult:
    """One finished game: who sat where, and what the game said."""

    round: int
    table: str  # the server's table id
    seats: tuple[int, ...]  # entrant id by seat
    scores: tuple[int, ...]  # by seat, higher is better
    winners: tuple[int, ...]  # seats
    forfeits: tuple[int, ...] = ()  # seats whose entrant never connected: last, no points

    def places_and_points(self, by_place: Sequence[int]) -> tuple[list[int], list[Fraction]]:
        """Every seat's finishing place and tournament points (``table_points``)."""
        return table_points(self.scores, self.winners, by_place, self.forfeits)


class StandingRow(TypedDict):
    """A standing in the tournament's document (``Standing.to_dict``): points are a number for JSON."""

    rank: int
    name: str
    points: int | float
    score: int
    games: int
    opponents_points: int | float
    dropped: bool


@dataclass(frozen=True)
class Standing:
    rank: int  # 1-based; entrants equal on points, score and opponents' points share it
    entrant: int
    name: str
    points: Fraction
    score: int  # the sum of the entrant's scores
    games: int
    opponents_points: Fraction
    dropped: bool

    def to_dict(self) -> StandingRow:
        return {
            "rank": self.rank,
            "name": self.name,
            "points": number(self.points),
            "score": self.score,
            "games": self.games,
            "opponents_points": number(self.opponents_points),
            "dropped": self.dropped,
        }


def number(value: Fraction) -> int | float:
    """A fraction for JSON and CSV: an int when whole, else a float rounded to 4 places."""
    return value.numerator if value.denominator == 1 else round(float(value), 4)


def result_scores(result: Mapping[str, Any]) -> tuple[int, ...] | None:
    """A game result's scores by seat: its ``scores``, or its ``dollars`` in a result stored before results
    carried ``scores``; None when it has neither."""
    scores = result.get("scores", result.get("dollars"))
    return None if scores is None else tuple(scores)


def finishing_places(scores: Sequence[int], winners: Collection[int], forfeits: Collection[int] = ()) -> list[int]:
    """The place (1 = first) of every seat; seats that share a place get the best one. Forfeited seats share
    the place after every other seat."""
    played = [seat for seat in range(len(scores)) if seat not in forfeits]
    first = [seat for seat in played if seat in winners]
    others = sorted((seat for seat in played if seat not in winners), key=lambda s: -scores[s])
    places = [len(played) + 1] * len(scores)
    for seat in first:
        places[seat] = 1
    for k, seat in enumerate(others):
        tied = k > 0 and scores[others[k - 1]] == scores[seat]
        places[seat] = places[others[k - 1]] if tied else len(first) + k + 1
    return places


def place_points(places: Sequence[int], by_place: Sequence[int]) -> list[Fraction]:
    """Tournament points by seat: seats sharing a place split the points of the places they cover."""
    sharing: defaultdict[int, int] = defaultdict(int)
    for place in places:
        sharing[place] += 1

    def covered(place: int) -> Fraction:
        k = sharing[place]
        return Fraction(sum(by_place[p] for p in range(place - 1, place - 1 + k) if p < len(by_place)), k)

    return [covered(place) for place in places]


def table_points(scores: Sequence[int], winners: Collection[int], by_place: Sequence[int],
                 forfeits: Collection[int] = ()) -> tuple[list[int], list[Fraction]]:
    """Every seat's place and points at a table: forfeited seats last, with no points."""
    places = finishing_places(scores, winners, forfeits)
    points = place_points(places, by_place)
    return places, [Fraction(0) if seat in forfeits else p for seat, p in enumerate(points)]


def compute_standings(names: Mapping[int, str], results: Iterable[GameResult], by_place: Sequence[int],
                      dropped: Collection[int] = ()) -> list[Standing]:
    """Every entrant of ``names`` (id -> name), best first."""
    points: dict[int, Fraction] = {e: Fraction(0) for e in names}
    score = dict.fromkeys(names, 0)
    games = dict.fromkeys(names, 0)
    opponents: dict[int, list[int]] = {e: [] for e in names}
    for result in results:
        _, earned = result.places_and_points(by_place)
        for seat, entrant in enumerate(result.seats):
            points[entrant] += earned[seat]
            score[entrant] += result.scores[seat]
            games[entrant] += 1
            opponents[entrant].extend(e for e in result.seats if e != entrant)
    opponents_points = {e: sum((points[o] for o in opponents[e]), Fraction(0)) for e in names}

    def key(e: int) -> tuple[Fraction, int, Fraction]:
        return (-points[e], -score[e], -opponents_points[e])

    order = sorted(names, key=lambda e: (key(e), names[e]))
    out: list[Standing] = []
    for i, e in enumerate(order):
        rank = out[-1].rank if out and key(out[-1].entrant) == key(e) else i + 1
        out.append(Standing(rank, e, names[e], points[e], score[e], games[e], opponents_points[e], e in dropped))
    return out
