"""Properties over random legal play, 3-6 players: every card in exactly one place, the ship at its size once
stowing settles (``check_invariants``), a refused command changes nothing, every legal template is accepted, and
the game always ends."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.schema import SchemaError
from server.games.base import IllegalAction
from server.games.kupcy import Kupcy

from .conftest import check_invariants

COMMAND_TYPES = sorted(Kupcy.COMMANDS)


def noise(rng: random.Random, g: Kupcy) -> dict:
    """A command that may or may not be legal now."""
    kind = rng.choice(COMMAND_TYPES)
    card = rng.randrange(len(g.cards))
    return {"split": {"type": kind, "warehouse": [card, rng.randrange(len(g.cards))]},
            "keep": {"type": kind, "where": rng.choice(["ship", "warehouse"]), "out": rng.choice([None, card])},
            "pass": {"type": kind}}.get(kind, {"type": kind, "card": card})


def play(players: int, seed: int, moves: random.Random) -> Kupcy:
    g = Kupcy.create(players, seed, {"decide_ms": 4000, "bid_ms": 3000, "stow_ms": 2000})
    t = 0
    for _ in range(20_000):
        if g.over:
            break
        t += moves.randint(50, 1500)
        deadline = g.next_deadline()
        assert deadline is not None, "a running game always has a deadline pending"
        if deadline <= t:
            t = deadline
            g.advance(t)
            check_invariants(g)
            continue
        g.advance(t)
        seat = moves.randrange(players)
        if moves.random() < 0.3:
            before = g.snapshot()
            try:
                g.apply(seat, noise(moves, g), t)
            except (IllegalAction, SchemaError):
                assert g.snapshot() == before
            check_invariants(g)
            continue
        legal = g.legal_actions(seat)
        if legal and moves.random() < 0.7:
            g.apply(seat, moves.choice(legal), t)  # every template is accepted
            check_invariants(g)
    assert g.over, "the game did not end"
    return g


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(players=st.integers(3, 6), seed=st.integers(0, 2**32), moves=st.integers(0, 2**32))
def test_random_legal_play_keeps_every_invariant_and_ends(players, seed, moves):
    g = play(players, seed, random.Random(moves))
    outcome = g.outcome()
    assert outcome is not None and outcome.reason == "last_round" and len(outcome.scores) == players
    assert outcome.winners and all(outcome.scores[w] == max(outcome.scores) for w in outcome.winners)
    assert g.legal_actions(0) == [] and g.next_deadline() is None


@settings(max_examples=10, deadline=None)
@given(players=st.integers(3, 6), seed=st.integers(0, 2**32))
def test_the_same_seed_and_moves_replay_to_the_same_digest(players, seed):
    one = play(players, seed, random.Random(seed))
    two = play(players, seed, random.Random(seed))
    assert one.digest() == two.digest()


@settings(max_examples=15, deadline=None)
@given(players=st.integers(3, 6), seed=st.integers(0, 2**32), seat=st.integers(0, 5))
def test_nobody_but_the_owner_sees_a_ship_and_nobody_the_deck(players, seed, seat):
    g = Kupcy.create(players, seed)
    public = g.public_view()
    assert "deck" not in public and public["deck_count"] == len(g.deck)
    for p in public["players"]:
        assert set(p) == {"seat", "ship_count", "warehouse", "owned", "returned"}
    seat %= players
    assert g.private_view(seat)["ship"] == g.ships[seat]
