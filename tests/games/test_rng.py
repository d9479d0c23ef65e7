"""The seeded generator kept in game state: reproducible, uniform, and independent of Python's ``random``."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest

from server.games.parsimonia import Parsimonia
from server.games.machines.rng import Rng

MASK = (1 << 64) - 1
FIRST_OUTPUT_OF_SEED_0 = 0x1F84C16A5CF9FF9A


def test_output_is_keyed_blake2b_of_the_counter():
    # Pins the algorithm (output i = BLAKE2b-64 keyed with the seed, of i): replays never silently change.
    r = Rng(0)
    key = bytes(8)
    expected = [
        int.from_bytes(hashlib.blake2b(i.to_bytes(8, "little"), key=key, digest_size=8).digest(), "little")
        for i in range(3)
    ]
    assert [r.next64() for _ in range(3)] == expected
    assert expected[0] == FIRST_OUTPUT_OF_SEED_0


def test_same_seed_gives_the_same_sequence_and_different_seeds_differ():
    a, b, c = Rng(42), Rng(42), Rng(43)
    seq_a = [a.next64() for _ in range(20)]
    assert seq_a == [b.next64() for _ in range(20)]
    assert seq_a != [c.next64() for _ in range(20)]
    assert Rng(5).next64() != Rng(5 + (1 << 64)).next64()  # a longer seed is a longer key, not an alias


def test_state_is_seed_and_counter_and_resumes_the_sequence():
    r = Rng(7)
    for _ in range(5):
        r.next64()
    assert r.state == [7, 5]
    resumed = Rng(*r.state)
    assert [r.next64() for _ in range(10)] == [resumed.next64() for _ in range(10)]


def test_a_seed_is_a_non_negative_integer_that_fits_the_key():
    with pytest.raises(ValueError):
        Rng(-1)
    with pytest.raises(ValueError):
        Rng(1 << 512)  # BLAKE2b keys are at most 64 bytes
    Rng((1 << 512) - 1).next64()


def test_outputs_stay_within_64_bits():
    r = Rng(123)
    assert all(0 <= r.next64() <= MASK for _ in range(1000))


@pytest.mark.parametrize("n", [1, 2, 3, 7, 10, 1000, (1 << 64) - 1])
def test_below_stays_in_range(n):
    r = Rng(n)
    assert all(0 <= r.below(n) < n for _ in range(300))


@pytest.mark.parametrize("n", [0, -1])
def test_below_refuses_a_non_positive_bound(n):
    with pytest.raises(ValueError):
        Rng(1).below(n)


def test_below_one_is_always_zero():
    r = Rng(99)
    assert {r.below(1) for _ in range(50)} == {0}


def test_below_is_roughly_uniform():
    r = Rng(2024)
    draws = 60_000
    counts = Counter(r.below(6) for _ in range(draws))
    assert set(counts) == set(range(6))
    expected = draws / 6
    chi2 = sum((counts[k] - expected) ** 2 / expected for k in range(6))
    assert chi2 < 25  # 5 degrees of freedom: p < 0.0002 for a fair generator to exceed this


class _Scripted(Rng):
    """An Rng whose raw outputs are given, to watch the rejection step."""

    def __init__(self, outputs):
        super().__init__(0)
        self.outputs = list(outputs)

    def next64(self):
        return self.outputs.pop(0)


def test_below_rejects_raw_values_in_the_biased_tail():
    # 2**64 % 3 == 1, so the single top value 2**64 - 1 would favour residue 0 and must be redrawn.
    r = _Scripted([MASK, 5])
    assert r.below(3) == 2
    assert r.outputs == []


def test_below_accepts_the_largest_unbiased_value():
    r = _Scripted([MASK - 1])  # 2**64 - 2 is below the limit for n = 3
    assert r.below(3) == (MASK - 1) % 3


def test_shuffle_is_a_seeded_permutation():
    items = list(range(50))
    a, b = list(items), list(items)
    Rng(5).shuffle(a)
    Rng(5).shuffle(b)
    assert a == b
    assert sorted(a) == items
    assert a != items


def test_shuffle_depends_on_the_seed():
    orders = set()
    for seed in range(20):
        items = list(range(10))
        Rng(seed).shuffle(items)
        orders.add(tuple(items))
    assert len(orders) == 20


@pytest.mark.parametrize("items", [[], ["only"]])
def test_shuffle_of_tiny_lists_is_a_no_op(items):
    before = list(items)
    r = Rng(3)
    state = r.state
    r.shuffle(items)
    assert items == before
    assert r.state == state  # no draw was spent


def test_shuffle_puts_every_item_everywhere_about_equally():
    r = Rng(11)
    first = Counter()
    for _ in range(6000):
        items = [0, 1, 2]
        r.shuffle(items)
        first[tuple(items)] += 1
    assert len(first) == 6
    assert all(800 < k < 1200 for k in first.values())


# ---------------------------------------------------------------- the deal does not give the deck away


class SplitMix64(Rng):
    """The generator the engine used before: splitmix64, whose whole state is one 64-bit integer."""

    GAMMA = 0x9E3779B97F4A7C15

    def __init__(self, seed: int) -> None:
        self.x = seed & MASK

    def next64(self) -> int:
        self.x = (self.x + self.GAMMA) & MASK
        return _mix(self.x)


def _mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def _unshift(y: int, k: int) -> int:
    """Invert ``y = x ^ (x >> k)``."""
    x = y
    for _ in range(64 // k + 1):
        x = y ^ (x >> k)
    return x


def _unmix(z: int) -> int:
    z = _unshift(z, 31)
    z = _unshift((z * pow(0x94D049BB133111EB, -1, 1 << 64)) & MASK, 27)
    return _unshift((z * pow(0xBF58476D1CE4E5B9, -1, 1 << 64)) & MASK, 30)


def _deal(monkeypatch, generator: type, seed: int) -> tuple[Parsimonia, list[int]]:
    """A 2-seat table dealt by ``generator``; returns it and the raw outputs its deal drew."""
    drawn: list[int] = []

    class Recorded(generator):  # type: ignore[misc, valid-type]
        def next64(self) -> int:
            value = super().next64()
            drawn.append(value)
            return value

    monkeypatch.setattr("server.games.parsimonia.state.Rng", Recorded)
    return Parsimonia(2, seed), drawn


def _predicted_deck(first_output: int, g: Parsimonia) -> list[int]:
    """The attack: take the deal's first raw draw as a splitmix64 output, invert it to the state, and run the
    rest of the deal (the resource shuffle's remaining draws, then the tourists shuffle) from there."""
    rng = SplitMix64(0)
    rng.x = _unmix(first_output)
    resources = sorted(c for h in g.hands for c in h)
    deck = sorted(g.deck)
    # the resource shuffle drew first (below(n) for n = len, len-1, ... 2); its first draw is the one we hold
    for i in range(len(resources) - 2, 0, -1):
        rng.below(i + 1)
    rng.shuffle(deck)
    return deck


def test_splitmix64_one_output_reveals_its_state_and_so_the_deck(monkeypatch):
    g, drawn = _deal(monkeypatch, SplitMix64, 20240601)
    assert _unmix(_mix(12345)) == 12345
    assert _predicted_deck(drawn[0], g) == g.deck  # the hidden order, computed from one output


def test_the_same_attack_fails_against_the_keyed_hash_generator(monkeypatch):
    g, drawn = _deal(monkeypatch, Rng, 20240601)
    assert _predicted_deck(drawn[0], g) != g.deck
    # and no output tells the next one: the outputs are those of a keyed hash, unrelated to each other
    assert all(_mix((_unmix(a) + SplitMix64.GAMMA) & MASK) != b for a, b in zip(drawn, drawn[1:]))
