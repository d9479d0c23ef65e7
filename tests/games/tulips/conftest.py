"""Helpers for the Gift of Tulips scenario tests.

``Table`` drives an engine the way the server does: it advances the clock before every command, keeps every
event, and after each step checks that every card of the game is in exactly one place and that no point was
lost. ``refuse`` asserts a command is refused with a given code and that ``snapshot()`` did not change.
``card(g, variety, value)`` finds a card of that kind still in the deck; ``stack`` puts cards on top of the
deck, ``to_festival`` and ``to_bouquet`` move cards from the deck as if they had been played earlier.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from server.games.base import Event
from tests.games.table import EngineTable
from server.games.tulips import Config, Deck, Tulips

SEED = 20240601


def places(g: Tulips) -> list[int]:
    """Every card of the game, wherever it lies (a card in two places shows twice)."""
    out = list(g.deck) + list(g.removed) + [c for h in g.hands for c in h] + [c for b in g.bouquets for c in b]
    out += [c for c, _ in g.secret] + list(g.festival.cards)
    if g.drawn is not None:
        out.append(g.drawn)
    return out


def check_invariants(g: Tulips) -> None:
    counts = Counter(places(g))
    assert not [c for c, k in counts.items() if k > 1], "a card in two places"
    assert sorted(counts) == sorted(g.cfg.deck.in_play(g.n)), "a card is nowhere, or one not in play"
    assert set(g.revealed) <= set(g.festival.cards)
    totals: dict[str, int] = {}
    for c in g.festival.cards:
        totals[g.variety(c)] = totals.get(g.variety(c), 0) + g.cards[c].value
    assert g.festival.totals == totals
    assert [g.festival.totals[v] for v in g.festival.order] == sorted(totals.values(), reverse=True)
    assert all(p >= 0 for p in g.points)


class Table(EngineTable):
    """A Gift of Tulips game plus a clock (``tests/games/table.py``), with a shortcut for the set-up choice."""

    check = staticmethod(check_invariants)

    def choose_all(self, pick: int = 0) -> list[Event]:
        """Every seat still to choose puts its ``pick``-th dealt card in the bouquet: the first turn begins."""
        events: list[Event] = []
        for s in range(self.g.n):
            if self.g.setup.owes(s):
                events += self.do(s, "choose", bouquet=self.g.hands[s][pick])
        return events


def make_game(players: int = 3, seed: int = SEED, **cfg: Any) -> Tulips:
    if isinstance(cfg.get("deck"), dict):
        cfg["deck"] = Deck.from_data(cfg["deck"])
    return Tulips(players, seed, Config(**cfg))


def make_table(players: int = 3, seed: int = SEED, **cfg: Any) -> Table:
    return Table(make_game(players, seed, **cfg))


def card(g: Tulips, variety: str, value: int, skip: tuple[int, ...] = ()) -> int:
    """A card of ``variety`` and ``value`` in the deck (not one of ``skip``)."""
    return next(c for c in reversed(g.deck) if g.variety(c) == variety and g.cards[c].value == value
                and c not in skip)


def stack(g: Tulips, *cards: int) -> None:
    """Put the given cards on top of the deck, the first one drawn first."""
    for c in cards:
        g.deck.remove(c)
    g.deck += list(reversed(cards))
    check_invariants(g)


def to_festival(g: Tulips, *cards: int) -> None:
    for c in cards:
        g.deck.remove(c)
        g.festival.add(c, g.variety(c), g.cards[c].value)
    check_invariants(g)


def to_bouquet(g: Tulips, seat: int, *cards: int) -> None:
    for c in cards:
        g.deck.remove(c)
        g.bouquets[seat].append(c)
    check_invariants(g)


def opened(g: Tulips) -> list[str]:
    """The festival's varieties, 1st place first."""
    return list(g.festival.order)


@pytest.fixture
def table() -> Table:
    """Three players, the rulebook's deck, fixed seed, set-up choice still open."""
    return make_table(3)
