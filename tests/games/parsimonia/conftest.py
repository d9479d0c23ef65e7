"""Helpers for the Parsimonia scenario tests.

``Table`` drives an engine the way the server does: it advances the clock before every command, keeps every
event, and after each step checks the two conservation laws (every card in exactly one place; the dollars of
the players plus the Company's always make the bank). ``refuse`` asserts a command is refused with a given
code and that ``snapshot()`` did not change. Card ids of the default deck: ``R(t, i)`` is the i-th resource
card of type t (profit ``10*t + 5*(i % 4)``), ``T(t, i)`` the i-th tourists card of type t (same profit).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from server.games.machines.auction import committed
from server.games.base import Event
from tests.games.table import EngineTable
from server.games.parsimonia import Config, Parsimonia

SEED = 20240601
MIN = 60_000


def R(t: int, i: int = 0) -> int:
    """Resource card id: the i-th (0..11) resource card of type t (1..5)."""
    return 12 * (t - 1) + i


def T(t: int, i: int = 0) -> int:
    """Tourists card id: the i-th (0..11) tourists card of type t (1..5)."""
    return 60 + 12 * (t - 1) + i


def profit(t: int, i: int = 0) -> int:
    return 10 * t + 5 * (i % 4)


def check_invariants(g: Parsimonia) -> None:
    """Every card is in exactly one place; no dollar is created or lost."""
    places: list[int] = []
    for hand in g.hands:
        places += hand
    places += g.company_cards + g.deck + g.aside + list(g.on.values()) + list(g.bought)
    for a in g.auctions.values():
        places += list(a.lot)
    if g.drawn is not None:
        places.append(g.drawn)
    counts = Counter(places)
    dup = [c for c, k in counts.items() if k > 1]
    assert not dup, f"cards in two places: {dup}"
    assert sorted(counts) == sorted(g.cards), "a card is nowhere"
    for r, t in g.on.items():
        assert g.cards[r].kind == "resource" and g.cards[t].kind == "tourists"
    assert sum(g.dollars) + g.company_dollars == g.cfg.bank
    assert g.company_dollars >= 0 and all(d >= 0 for d in g.dollars)
    lone = {a.id: t for a in g.auctions.values() if (t := g.lone_tourists_type(a)) is not None}
    assert list(g.lone_lots.items()) == list(lone.items()), "the index of lone tourists lots drifted"
    for s in range(g.n):
        assert g.committed(s) == committed(g.auctions.values(), s), "the kept commitment drifted"
        assert g.committed(s) <= g.dollars[s]


class Table(EngineTable):
    """A Parsimonia game plus a clock (``tests/games/table.py``), with shortcuts for its commands."""

    check = staticmethod(check_invariants)

    # -- shortcuts
    def bid(self, seat: int, auction: int, amount: int) -> list[Event]:
        return self.do(seat, "bid", auction=auction, amount=amount)

    def open_auction(self, seat: int, card: int, start_price: int = 0) -> int:
        """Start an auction of one's resource card; return its id."""
        events = self.do(seat, "auction", card=card, start_price=start_price)
        return opened(events)

    def auction_drawn(self, seat: int, start_price: int = 0) -> int:
        return opened(self.do(seat, "auction_drawn", start_price=start_price))

    def company_auction(self, seat: int, card: int, start_price: int = 0) -> int:
        return opened(self.do(seat, "company_auction", card=card, start_price=start_price))

    def close(self, seat: int, auction: int, winner: int | None) -> list[Event]:
        return self.do(seat, "close", auction=auction, winner=winner)

    def finish_opening(self) -> list[Event]:
        """Every active seat declares ready: the first turn starts (if no auction is open)."""
        events: list[Event] = []
        for s in range(self.g.n):
            if self.g.active[s] and s not in self.g.ready:
                events += self.do(s, "ready")
        return events

    def events(self, kind: str) -> list[Event]:
        return [e for e in self.log if e.type == kind]

    def last(self, kind: str) -> Event:
        found = self.events(kind)
        assert found, f"no {kind} event"
        return found[-1]


def opened(events: list[Event]) -> int:
    [e] = [e for e in events if e.type == "auction_opened"]
    return e.data["auction"]["id"]


def of_type(events: list[Event], kind: str) -> list[Event]:
    return [e for e in events if e.type == kind]


def make_game(players: int = 3, seed: int = SEED, start_ms: int = 0, **cfg: Any) -> Parsimonia:
    return Parsimonia(players, seed, Config(**cfg), start_ms=start_ms)


def make_table(players: int = 3, seed: int = SEED, **cfg: Any) -> Table:
    return Table(make_game(players, seed, **cfg))


def set_hands(g: Parsimonia, hands: dict[int, list[int]], rest: int | None = -1) -> None:
    """Give each listed seat exactly the listed resource cards (a tourists card on one moves with it).

    The listed cards are taken from whoever held them (a player or the Company); seats not listed keep the
    rest of their cards. The cards a listed seat held before and is not given go to ``rest``: a seat, ``None``
    for the Company, or by default (-1) the last seat not listed (the Company if every seat is listed)."""
    if rest == -1:
        unlisted = [s for s in range(g.n) if s not in hands]
        rest = unlisted[-1] if unlisted else None
    wanted = [c for cards in hands.values() for c in cards]
    assert len(set(wanted)) == len(wanted)
    held = {c for h in g.hands for c in h} | set(g.company_cards)
    assert set(wanted) <= held, "set_hands moves only cards held by players or the Company"
    g.hands = [[c for c in h if c not in wanted] for h in g.hands]
    g.company_cards = [c for c in g.company_cards if c not in wanted]
    displaced: list[int] = []
    for s, cards in hands.items():
        displaced += g.hands[s]
        g.hands[s] = list(cards)
    if rest is None:
        g.company_cards += displaced
    else:
        g.hands[rest] += displaced
    check_invariants(g)


def stack(g: Parsimonia, *tourists: int) -> None:
    """Put the given tourists cards on top of the deck, the first one drawn first."""
    for c in tourists:
        g.deck.remove(c)
    g.deck += list(reversed(tourists))
    check_invariants(g)


def cover(g: Parsimonia, resource: int, tourist: int) -> None:
    """Put a tourists card (taken from the deck) on a resource card, as if paired earlier."""
    g.deck.remove(tourist)
    g.on[resource] = tourist
    check_invariants(g)


@pytest.fixture
def table() -> Table:
    """Three players, default config, fixed seed, still in the opening."""
    return make_table(3)


def start_turns(t: Table, hands: dict[int, list[int]] | None = None, draws: tuple[int, ...] = (),
                rest: int | None = -1) -> None:
    """Arrange hands and the top of the tourists deck, then end the opening: seat 0's turn has begun."""
    if hands is not None:
        set_hands(t.g, hands, rest)
    stack(t.g, *draws)
    t.finish_opening()
    assert t.g.phase == "turns" and t.g.current == 0
    if draws:
        assert t.g.drawn == draws[0]


def tiny_deck(resource_types: list[int], tourist_types: list[int], profit: int = 10):
    """A deck of a few cards, every profit ``profit``: to reach the deck's end by play."""
    from server.games.parsimonia import Deck

    return Deck.from_data({
        "resources": [{"type": k, "profit": profit} for k in resource_types],
        "tourists": [{"type": k, "profit": profit} for k in tourist_types],
    })
