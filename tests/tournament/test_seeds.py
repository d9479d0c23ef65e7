"""Table seeds: random without a roster seed; with one, reproducible, and no table's seed gives another's."""

from __future__ import annotations

from server.tournament.seeds import SEED_BITS, derived_seed, table_seeds


def test_without_a_key_the_seeds_differ_from_run_to_run():
    runs = [table_seeds(None, 1, 4) for _ in range(3)]
    assert len({seed for run in runs for seed in run}) == 12
    assert all(0 <= seed < 2**SEED_BITS for run in runs for seed in run)


def test_with_a_key_the_seeds_are_reproducible_and_the_key_matters():
    assert table_seeds(7, 2, 3) == table_seeds(7, 2, 3) == [derived_seed(7, 2, p) for p in (1, 2, 3)]
    assert table_seeds(7, 2, 3) != table_seeds(8, 2, 3)
    assert all(0 <= seed < 2**SEED_BITS for seed in table_seeds(-(2**63), 1, 3) + table_seeds(2**63 - 1, 1, 3))


def test_one_tables_seed_does_not_give_its_siblings_or_the_next_rounds():
    key = 3
    seeds = {(r, p): derived_seed(key, r, p) for r in (1, 2, 3) for p in (1, 2, 3, 4)}
    assert len(set(seeds.values())) == len(seeds)
    # the old formula, seed * 1_000_003 + round * 1009 + position, made these differences constant
    assert len({seeds[r, p + 1] - seeds[r, p] for r in (1, 2, 3) for p in (1, 2, 3)}) == 9
    assert len({seeds[r + 1, p] - seeds[r, p] for r in (1, 2) for p in (1, 2, 3, 4)}) == 8
    assert derived_seed(key, 1, 1) != (key * 1_000_003 + 1009 + 1) % 2**63
