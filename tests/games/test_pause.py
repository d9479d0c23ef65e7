"""A pause, in every game: time kept once (issue #21).

A random game is played once without a pause; then the same script of commands and waits is played again with
pauses of random lengths at random steps (``Game.shift``, what the table does on an unpause). At every step of
the paused game every deadline any view shows (public and each seat's private part) is the one ``Timers`` will
fire, and is the unpaused game's moved by the pauses so far; the events are the unpaused game's, their times
moved by the pauses before them; and the outcome is the same.
"""

from __future__ import annotations

import random
from typing import Any, Hashable

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from server.games import new_game
from server.games.base import Event, Game, IllegalAction

TIME_SCALE = 60  # every clock of every game 60 times shorter: a random game meets many deadlines
TIME_FIELDS = ("at", "deadline", "closes_at", "opened_at")  # the event fields that are instants
HISTORY = None  # a shown time that is history (a finished choice's deadline), not a deadline still to fire


def parsimonia_key(path: tuple, view: dict[str, Any]) -> Hashable:
    if path[0] == "auctions":
        return "auction", view["auctions"][path[1]]["id"]
    if path[0] == "bought":
        return "bought", view["bought"][path[1]]["card"]
    return path[1]


def kupcy_key(path: tuple, view: dict[str, Any]) -> Hashable:
    return {"split": "split", "market": "bid"}.get(path[0]) or path[1]


def tulips_key(path: tuple, view: dict[str, Any]) -> Hashable:
    if path[0] == "setup":
        return "setup" if view["phase"] == "setup" else HISTORY
    return path[1]


TIMER_OF = {"parsimonia": parsimonia_key, "kupcy": kupcy_key, "gift-of-tulips": tulips_key}


def shown_deadlines(view: Any, path: tuple = ()) -> list[tuple[tuple, int]]:
    """``(path, value)`` of every deadline a view shows: a ``deadline`` or ``closes_at`` field, or an entry of a
    ``deadlines`` map, wherever it is."""
    out: list[tuple[tuple, int]] = []
    if isinstance(view, dict):
        for k, v in view.items():
            if v is not None and (k in ("deadline", "closes_at") or (path and path[-1] == "deadlines")):
                assert isinstance(v, int), (path, k, v)
                out.append((path + (k,), v))
            else:
                out += shown_deadlines(v, path + (k,))
    elif isinstance(view, list):
        for i, v in enumerate(view):
            out += shown_deadlines(v, path + (i,))
    return out


def live_deadlines(g: Game) -> list[tuple[Any, int]]:
    """Every deadline still to fire that a view shows, checked against the timer it reads: ``(where, value)``."""
    timer_of = TIMER_OF[g.NAME]
    public = g.public_view()
    out = []
    for part, view in [("public", public), *((seat, g.private_view(seat)) for seat in range(g.n))]:
        for path, value in shown_deadlines(view):
            key = timer_of(path, public if part == "public" else view)
            if key is HISTORY:
                continue
            assert value == g.timers.get(key), (part, path, value, key, g.timers.snapshot())
            out.append(((part, path), value))
    return out


def unshifted(wire: Any, delta: int) -> Any:
    """An event's wire form with its instants moved ``delta`` earlier."""
    if isinstance(wire, dict):
        return {k: v - delta if k in TIME_FIELDS and isinstance(v, int) else unshifted(v, delta)
                for k, v in wire.items()}
    if isinstance(wire, list):
        return [unshifted(v, delta) for v in wire]
    return wire


def fill(template: dict[str, Any], rnd: random.Random) -> dict[str, Any]:
    return {k: rnd.randint(v["min"], v["max"]) if isinstance(v, dict) else v for k, v in template.items()}


def script(name: str, players: int, seed: int, rnd: random.Random, steps: int):
    """Play a random game; return its script (waits and commands) and, by step, the live deadlines its views
    showed, the events and the game."""
    g = new_game(name, players, seed, time_scale=TIME_SCALE)
    moves: list[tuple[int, int | None, dict[str, Any] | None]] = []  # (time, seat, command); seat None: a wait
    shown: list[list[tuple[Any, int]]] = []
    events: list[Event] = []
    t = 0
    for _ in range(steps):
        if g.over:
            break
        t += rnd.choice((0, rnd.randint(1, 3000)))
        events += g.advance(t)
        movers = [s for s in range(players) if g.legal_actions(s)]
        if movers and rnd.random() < 0.8:
            seat = rnd.choice(movers)
            command = fill(rnd.choice(g.legal_actions(seat)), rnd)
            try:
                events += g.apply(seat, command, t)
            except IllegalAction:
                pass  # the same command is refused the same way in the paused game
            moves.append((t, seat, command))
        else:
            moves.append((t, None, None))
        shown.append(live_deadlines(g))
    return moves, shown, events, g


FINISH = 10**9  # long enough for every game's clocks to play it out from any state


@pytest.mark.parametrize("name,players", [("parsimonia", 4), ("kupcy", 4), ("gift-of-tulips", 3)])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), steps=st.integers(1, 60),
       pauses=st.lists(st.one_of(st.just(0), st.integers(1, 120_000)), min_size=60, max_size=60))
def test_a_paused_game_shows_the_deadlines_timers_fire_and_ends_as_the_unpaused_one(name, players, seed, steps,
                                                                                    pauses):
    """``pauses[i]``: how long the table is paused before step ``i`` (0: not paused)."""
    moves, shown, events, plain = script(name, players, seed, random.Random(seed), steps)
    plain_end = plain.advance(moves[-1][0] + FINISH) if moves else plain.advance(FINISH)
    g = new_game(name, players, seed, time_scale=TIME_SCALE)
    delta = 0
    paused_events: list[tuple[int, Event]] = []  # each with the pauses' total before it
    for i, (t, seat, command) in enumerate(moves):
        paused_events += [(delta, e) for e in g.advance(t + delta)]
        if pauses[i]:  # the table pauses at this instant and unpauses pauses[i] ms later
            g.shift(pauses[i])
            delta += pauses[i]
            assert g.now == t + delta
            live_deadlines(g)  # what the views show moved with the timers
        if seat is not None:
            try:
                paused_events += [(delta, e) for e in g.apply(seat, command, t + delta)]
            except IllegalAction:
                pass
        assert [(where, v - delta) for where, v in live_deadlines(g)] == shown[i]
    end = (moves[-1][0] if moves else 0) + FINISH
    paused_events += [(delta, e) for e in g.advance(end + delta)]
    assert [unshifted(e.to_wire(), d) for d, e in paused_events] == [e.to_wire() for e in events + plain_end]
    assert g.result() == plain.result()
    assert g.over and plain.over  # the clocks played both to their end
