"""Who sits at which table, in which seat: pure and deterministic (randomness from an integer seed only).

* ``table_sizes``: a field split into balanced tables of 2..6 seats around a preferred size, never a table of 1.
* ``swiss_round``: tables filled from the top of the standings, with swaps to avoid repeat meetings.
* ``round_robin_round``: for small fields, a schedule in which every pair meets as evenly as possible.
* ``next_round``: the format's choice between the two, as the director calls it every round.
* ``History``: who met whom and who sat where so far (``History.from_tables``).

Seat 0 plays first, so both formats spread seat 0 evenly: while the number of tables stays the same, seat-0
counts never drift more than 1 apart. Within a table, seats go, seat 0
first, to whoever has sat in that seat least often (the better standing first on a tie).
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations, product

from .roster import MAX_TABLE, MIN_TABLE, Format

Tables = list[list[int]]
_Cost = tuple[int, int, int]
# Seeded shakes of a Swiss arrangement, divided by the number of entrants (at least 2).
_SHAKES = 100
# Annealing steps of a round-robin plan: per round planned and per entrant, at least, at most.
_ANNEAL_STEPS, _ANNEAL_MIN_STEPS, _ANNEAL_MAX_STEPS = 400, 20_000, 200_000


@dataclass
class History:
    """Who met whom, and who sat where, in the rounds played so far."""

    met: Counter[tuple[int, int]] = field(default_factory=Counter)
    seats: defaultdict[int, Counter[int]] = field(default_factory=lambda: defaultdict(Counter))

    @classmethod
    def from_tables(cls, tables: Iterable[Sequence[int]]) -> History:
        history = cls()
        for table in tables:
            history.add(table)
        return history

    def add(self, table: Sequence[int]) -> None:
        """Record a table, its entrants in seat order."""
        for a, b in combinations(table, 2):
            self.met[_pair(a, b)] += 1
        for seat, entrant in enumerate(table):
            self.seats[entrant][seat] += 1

    def meetings(self, a: int, b: int) -> int:
        return self.met[_pair(a, b)]

    def seat_count(self, entrant: int, seat: int) -> int:
        return self.seats[entrant][seat] if entrant in self.seats else 0


def table_sizes(players: int, preferred: int) -> list[int]:
    """Balanced table sizes (largest first) for ``players``, each 2..6, as close to ``preferred`` as can be.

    Closeness is the sum over players of how far their table is from ``preferred``; a tie goes to fewer tables.
    """
    if players < MIN_TABLE:
        raise ValueError(f"a round needs at least {MIN_TABLE} players, not {players}")
    if not MIN_TABLE <= preferred <= MAX_TABLE:
        raise ValueError(f"the table size must be {MIN_TABLE}..{MAX_TABLE}, not {preferred}")
    best: tuple[int, list[int]] | None = None
    for count in range(-(-players // MAX_TABLE), players // MIN_TABLE + 1):
        small, extra = divmod(players, count)
        sizes = [small + 1] * extra + [small] * (count - extra)
        distance = sum(size * abs(size - preferred) for size in sizes)
        if best is None or distance < best[0]:
            best = (distance, sizes)
    assert best is not None  # 2 <= players: at least one count fits
    return best[1]


def swiss_round(order: Sequence[int], history: History, sizes: Sequence[int], seed: int = 0) -> Tables:
    """Tables (entrant ids in seat order, top table first) for ``order`` (best standing first).

    A greedy filling from the top, then swaps of two entrants between tables while they lower, in this order:
    the first-seat term, the repeat meetings, and the squared distance from the table one's standing calls for;
    then a few seeded shakes of the best arrangement (random swaps, improved again) to get out of a dead end.
    """
    _check(order, sizes)
    home = {entrant: t for t, table in enumerate(_fill(order, sizes)) for entrant in table}

    def cost(t: int, table: list[int]) -> _Cost:
        repeats = sum(_repeat_cost(history.meetings(a, b)) for a, b in combinations(table, 2))
        return (_first_seat(table, history), repeats, sum((t - home[e]) ** 2 for e in table))

    def total(tables: Tables) -> _Cost:
        costs = [cost(t, table) for t, table in enumerate(tables)]
        return (sum(c[0] for c in costs), sum(c[1] for c in costs), sum(c[2] for c in costs))

    best = _descend(_greedy(order, history, sizes), cost)
    best_cost = total(best)
    rng = random.Random(seed)
    for _ in range(max(2, _SHAKES // len(order)) if len(sizes) > 1 else 0):
        tables = [t[:] for t in best]
        for _ in range(3):
            a, b = rng.sample(range(len(tables)), 2)
            i, j = rng.randrange(len(tables[a])), rng.randrange(len(tables[b]))
            tables[a][i], tables[b][j] = tables[b][j], tables[a][i]
        tables = _descend(tables, cost)
        if (tables_cost := total(tables)) < best_cost:
            best, best_cost = tables, tables_cost
    rank = {entrant: i for i, entrant in enumerate(order)}
    return [_seat_order(table, history, rank) for table in best]


def _descend(tables: Tables, cost: Callable[[int, list[int]], _Cost]) -> Tables:
    """Swap two entrants between tables while that lowers the cost of the two tables."""
    costs = [cost(t, table) for t, table in enumerate(tables)]
    improved = True
    while improved:
        improved = False
        for a, b in combinations(range(len(tables)), 2):
            for i, j in product(range(len(tables[a])), range(len(tables[b]))):
                tables[a][i], tables[b][j] = tables[b][j], tables[a][i]
                new_a, new_b = cost(a, tables[a]), cost(b, tables[b])
                if _plus(new_a, new_b) < _plus(costs[a], costs[b]):
                    costs[a], costs[b] = new_a, new_b
                    improved = True
                else:
                    tables[a][i], tables[b][j] = tables[b][j], tables[a][i]
    return tables


def round_robin_round(entrants: Sequence[int], history: History, sizes: Sequence[int], rounds_left: int,
                      seed: int) -> Tables:
    """The next round of a schedule over ``rounds_left`` rounds in which every pair meets as evenly as can be.

    Plans all the rounds left at once (simulated annealing from a seeded start, history included), takes the
    planned round that best spreads the entrants who have had seat 0 least, and swaps in it until they are
    spread. Replanning every round from the history keeps the schedule right after an entrant drops.
    ``entrants`` in standings order (it only breaks ties for seats).
    """
    _check(entrants, sizes)
    rng = random.Random(f"{seed}/{rounds_left}")
    ids = sorted(entrants)
    plan = []
    for _ in range(max(1, rounds_left)):
        rng.shuffle(ids)
        plan.append(_fill(ids, sizes))
    plan = _anneal(plan, history, rng)
    tables = _spread_first_seats(min(plan, key=lambda tables: sum(_first_seat(t, history) for t in tables)), history)
    rank = {entrant: i for i, entrant in enumerate(entrants)}
    return [_seat_order(table, history, rank) for table in tables]


def _first_seat(table: Sequence[int], history: History) -> int:
    """The fewest times anyone at ``table`` has had seat 0."""
    return min(history.seat_count(e, 0) for e in table)


def _spread_first_seats(tables: Tables, history: History) -> Tables:
    """Swap entrants until the fewest-seat-0 entrants are spread over the tables, each swap the one that adds
    the fewest repeat meetings."""
    tables = [t[:] for t in tables]

    def repeats(table: list[int]) -> int:
        return sum(_repeat_cost(history.meetings(a, b)) for a, b in combinations(table, 2))

    while True:
        best: tuple[int, int, int, int, int] | None = None
        for a, b in combinations(range(len(tables)), 2):
            ta, tb = tables[a], tables[b]
            before = _first_seat(ta, history) + _first_seat(tb, history)
            old_repeats = repeats(ta) + repeats(tb)
            for i, j in product(range(len(ta)), range(len(tb))):
                ta[i], tb[j] = tb[j], ta[i]
                if _first_seat(ta, history) + _first_seat(tb, history) < before:
                    candidate = (repeats(ta) + repeats(tb) - old_repeats, a, b, i, j)
                    best = candidate if best is None else min(best, candidate)
                ta[i], tb[j] = tb[j], ta[i]
        if best is None:
            return tables
        _, a, b, i, j = best
        tables[a][i], tables[b][j] = tables[b][j], tables[a][i]


def _meeting_cost(count: int) -> int:
    """Convex in how often a pair meets: spreads meetings evenly, and a first meeting is free."""
    return max(1, count * count)


def _repeat_cost(met: int) -> int:
    """What seating a pair that met ``met`` times adds to the meeting cost."""
    return _meeting_cost(met + 1) - _meeting_cost(met)


def _anneal(plan: list[Tables], history: History, rng: random.Random) -> list[Tables]:
    """Simulated annealing of a plan: swap two entrants between tables of a round, keep the swap if it lowers
    the total meeting cost (history included), or by chance if it raises it while the temperature is high."""
    if len(plan[0]) < 2:
        return plan
    met = Counter(history.met)
    for tables in plan:
        for table in tables:
            for a, b in combinations(table, 2):
                met[_pair(a, b)] += 1
    steps = min(_ANNEAL_MAX_STEPS, max(_ANNEAL_MIN_STEPS, _ANNEAL_STEPS * len(plan) * sum(map(len, plan[0]))))
    energy = best_energy = 0
    best = [[t[:] for t in tables] for tables in plan]
    for step in range(steps):
        temperature = 2.0 * 0.01 ** (step / steps)
        r = rng.randrange(len(plan))
        a, b = rng.sample(range(len(plan[r])), 2)
        i, j = rng.randrange(len(plan[r][a])), rng.randrange(len(plan[r][b]))
        x, y = plan[r][a][i], plan[r][b][j]
        leaving = [_pair(x, e) for e in plan[r][a] if e != x] + [_pair(y, e) for e in plan[r][b] if e != y]
        joining = [_pair(y, e) for e in plan[r][a] if e != x] + [_pair(x, e) for e in plan[r][b] if e != y]
        delta = sum(_repeat_cost(met[p]) for p in joining) - sum(_repeat_cost(met[p] - 1) for p in leaving)
        if delta > 0 and rng.random() >= math.exp(-delta / temperature):
            continue
        plan[r][a][i], plan[r][b][j] = y, x
        for p in leaving:
            met[p] -= 1
        for p in joining:
            met[p] += 1
        energy += delta
        if energy < best_energy:
            best_energy = energy
            best = [[t[:] for t in tables] for tables in plan]
    return best


def next_round(fmt: Format, order: Sequence[int], history: History, table_size: int, rounds_left: int,
               seed: int, shuffle_first: bool = True) -> Tables:
    """The next round's tables for the entrants still playing, ``order`` being their standings (best first).

    A round-robin tournament, or any field of at most two preferred tables, plays round-robin pods. The first
    round (no history: everyone is level) takes the entrants in an order shuffled by ``seed``, unless
    ``shuffle_first`` is False (``order`` already tells them apart, e.g. by rating).
    """
    sizes = table_sizes(len(order), table_size)
    if not history.seats and shuffle_first:
        order = list(order)
        random.Random(seed).shuffle(order)
    if fmt == "round_robin" or len(order) <= 2 * table_size:
        return round_robin_round(order, history, sizes, rounds_left, seed)
    return swiss_round(order, history, sizes, seed)


def _pair(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a < b else (b, a)


def _check(entrants: Sequence[int], sizes: Sequence[int]) -> None:
    if len(set(entrants)) != len(entrants):
        raise ValueError("an entrant is listed twice")
    if sum(sizes) != len(entrants) or any(not MIN_TABLE <= s <= MAX_TABLE for s in sizes):
        raise ValueError(f"tables of {list(sizes)} do not seat {len(entrants)} entrants")


def _fill(order: Sequence[int], sizes: Sequence[int]) -> Tables:
    tables, start = [], 0
    for size in sizes:
        tables.append(list(order[start:start + size]))
        start += size
    return tables


def _greedy(order: Sequence[int], history: History, sizes: Sequence[int]) -> Tables:
    """Each table takes the best-placed entrant left, then whoever has met its entrants least (best placed first)."""
    left = list(order)
    tables = []
    for size in sizes:
        table = [left.pop(0)]
        while len(table) < size:
            pick = min(range(len(left)), key=lambda k: (sum(history.meetings(left[k], e) for e in table), k))
            table.append(left.pop(pick))
        tables.append(table)
    return tables


def _seat_order(table: list[int], history: History, rank: dict[int, int]) -> list[int]:
    left = list(table)
    seated = []
    for seat in range(len(table)):
        pick = min(left, key=lambda e: (history.seat_count(e, seat), rank[e]))
        left.remove(pick)
        seated.append(pick)
    return seated


def _plus(a: _Cost, b: _Cost) -> _Cost:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])
