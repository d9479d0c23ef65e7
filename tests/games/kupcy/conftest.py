"""Helpers for the Kupcy scenario tests.

``Table`` drives an engine the way the server does: it advances the clock before every command, keeps every
event, and after each step checks the invariants (every card in exactly one place; no ship over its size; a
ship at its size whenever nobody is stowing). ``refuse`` asserts a command is refused with a given code and that
``snapshot()`` did not change. Cards of the default deck: ``G(origin, value, copy)`` goods, ``M(origin, value)``
money, ``C(name)`` a charter, ``K(origin)`` a merchant.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from server.games.base import Event
from tests.games.table import EngineTable
from server.games.kupcy import Kupcy
from server.games.kupcy.cards import ORIGINS
from server.games.kupcy.defaults import default_split
from server.games.kupcy.phases import Phase
from server.games.kupcy.state import SPLIT

SEED = 20240601
CHARTERS = ["robbery", "shipwreck", "duty", "fire", "turmoil", "invasion", "gambling_loss", "fraud", "tithe", "theft"]
RUS, BYZ, ARB, WEST = ORIGINS


def G(origin: str, value: int, copy: int = 0) -> int:
    """A goods card: origin, value 3..9, copy 0 or 1."""
    return ORIGINS.index(origin) * 14 + (value - 3) * 2 + copy


def M(origin: str, value: int) -> int:
    """A money card: origin, value 1..5."""
    return 56 + ORIGINS.index(origin) * 5 + value - 1


def C(name: str) -> int:
    return 76 + CHARTERS.index(name)


def K(origin: str) -> int:
    """The merchant of an origin."""
    return 86 + ORIGINS.index(origin)


def places(g: Kupcy) -> list[int]:
    found = list(g.deck) + list(g.out)
    for zone in g.ships + g.warehouses:
        found += zone
    if g.drawn is not None:
        found.append(g.drawn)
    if g.debt is not None:
        found.append(g.debt.card)
    if g.market is not None:
        found.append(g.market.goods)
        found += [card for _, card, _ in g.market.offered]
    return found


def check_invariants(g: Kupcy) -> None:
    counts = Counter(places(g))
    assert not [c for c, k in counts.items() if k > 1], "a card in two places"
    assert sorted(counts) == sorted(g.cards), "a card is nowhere"
    if g.phase == "split":
        return
    for s in range(g.n):
        assert len(g.ships[s]) <= g.ship_target(s) or s in g.stowing
        if g.step in (None, "keep", "sell"):
            assert len(g.ships[s]) == g.ship_target(s), f"seat {s}'s ship is not at its size"
        assert not any(g.cards[c].kind == "charter" for c in g.owned(s))


class Table(EngineTable):
    """A Kupcy game plus a clock (``tests/games/table.py``), with shortcuts for its clocks and commands."""

    check = staticmethod(check_invariants)

    def timeout(self, kind: str) -> list[Event]:
        """Let the named clock run out."""
        deadline = self.g.timers.get(kind)
        assert deadline is not None, f"no {kind} clock running"
        return self.at(deadline)

    def offer(self, seat: int, card: int) -> list[Event]:
        return self.do(seat, "offer", card=card)


def make_game(players: int = 3, seed: int = SEED, **options: Any) -> Kupcy:
    """A game from table options (``decide_ms=...``, ``charters=...``), as the server makes one."""
    game = Kupcy.create(players, seed, options)
    assert isinstance(game, Kupcy)
    return game


def _take(g: Kupcy, card: int) -> None:
    for zone in [g.deck, g.out, *g.ships, *g.warehouses]:
        if card in zone:
            zone.remove(card)
            return
    raise AssertionError(f"card {card} is not free to move")


def arrange(g: Kupcy, ships: dict[int, list[int]] | None = None, warehouses: dict[int, list[int]] | None = None,
            draws: tuple[int, ...] = ()) -> None:
    """Give the listed seats exactly these zones (the cards they held go to the bottom of the deck) and put
    ``draws`` on top of the deck, the first drawn first."""
    wanted = [c for zones in (ships or {}, warehouses or {}) for cards in zones.values() for c in cards]
    wanted += list(draws)
    assert len(set(wanted)) == len(wanted)
    for c in wanted:
        _take(g, c)
    for zones, where in ((ships or {}, g.ships), (warehouses or {}, g.warehouses)):
        for seat, cards in zones.items():
            g.deck[:0] = where[seat]
            where[seat][:] = list(cards)
    for seat in range(g.n):  # a seat not listed that gave up a card is dealt another from the deck's bottom
        if seat in (ships or {}) or seat in (warehouses or {}):
            continue
        while len(g.owned(seat)) < 7:
            card = next(c for c in g.deck if g.cards[c].kind != "charter")
            g.deck.remove(card)
            (g.ships[seat] if len(g.ships[seat]) < 5 else g.warehouses[seat]).append(card)
    g.deck += list(reversed(draws))
    check_invariants(g)


def start(players: int = 3, ships: dict[int, list[int]] | None = None,
          warehouses: dict[int, list[int]] | None = None, draws: tuple[int, ...] = (), **options: Any) -> Table:
    """A table just past the split, seat 0 first: the listed zones arranged, ``draws`` on top of the deck.
    Seats not listed keep their deal, split by default. The first card is drawn at once, by seat 0."""
    g = make_game(players, **options)
    g.first = 0
    g.timers.cancel(SPLIT)
    g.phase = Phase.TURNS
    for s in range(players):
        for card in default_split(g.ships[s], g.cards):
            g.ships[s].remove(card)
            g.warehouses[s].append(card)
    arrange(g, ships, warehouses, draws)
    t = Table(g)
    g._settle()
    t.log += g._take_events()
    check_invariants(g)
    return t
