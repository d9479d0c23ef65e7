"""Table seeds: random without a roster seed; with one, reproducible from the directory's secret, and no table's
seed, nor the roster's, gives another's."""

from __future__ import annotations

import pytest

from server.tournament.seeds import SECRET_FILE, SEED_BITS, derived_seed, directory_secret, seed_key, table_seeds

SECRET = bytes(range(32))


def test_without_a_key_the_seeds_differ_from_run_to_run():
    runs = [table_seeds(None, 1, 4) for _ in range(3)]
    assert len({seed for run in runs for seed in run}) == 12
    assert all(0 <= seed < 2**SEED_BITS for run in runs for seed in run)


def test_with_a_key_the_seeds_are_reproducible_and_both_the_secret_and_the_roster_seed_matter():
    key = seed_key(SECRET, 7)
    assert table_seeds(key, 2, 3) == table_seeds(key, 2, 3) == [derived_seed(key, 2, p) for p in (1, 2, 3)]
    assert table_seeds(key, 2, 3) != table_seeds(seed_key(SECRET, 8), 2, 3)
    assert table_seeds(key, 2, 3) != table_seeds(seed_key(bytes(32), 7), 2, 3)
    extremes = table_seeds(seed_key(SECRET, -(2**63)), 1, 3) + table_seeds(seed_key(SECRET, 2**63 - 1), 1, 3)
    assert all(0 <= seed < 2**SEED_BITS for seed in extremes)


def test_one_tables_seed_does_not_give_its_siblings_or_the_next_rounds():
    key = seed_key(SECRET, 3)
    seeds = {(r, p): derived_seed(key, r, p) for r in (1, 2, 3) for p in (1, 2, 3, 4)}
    assert len(set(seeds.values())) == len(seeds)
    # the old formula, seed * 1_000_003 + round * 1009 + position, made these differences constant
    assert len({seeds[r, p + 1] - seeds[r, p] for r in (1, 2, 3) for p in (1, 2, 3)}) == 9
    assert len({seeds[r + 1, p] - seeds[r, p] for r in (1, 2) for p in (1, 2, 3, 4)}) == 8


def test_the_roster_seed_alone_no_longer_gives_the_tables_seeds():
    """Keyed by the roster seed only (the first derivation), a table's seed gave the roster seed away: trying the
    small seeds a roster holds (7 in the docs) found it at once, and with it every later table's. Now a guess of
    the roster seed is worth nothing without the directory's secret."""
    seen = derived_seed(seed_key(SECRET, 7), 1, 1)
    assert all(derived_seed(seed_key(b"", guess), 1, 1) != seen for guess in range(-1000, 1000))
    assert all(derived_seed(seed_key(bytes(32), guess), 1, 1) != seen for guess in range(-1000, 1000))


def test_the_directory_secret_is_made_once_private_and_kept(tmp_path):
    secret = directory_secret(tmp_path)
    assert len(secret) == 32 and directory_secret(tmp_path) == secret
    assert (tmp_path / SECRET_FILE).stat().st_mode & 0o077 == 0
    assert directory_secret(tmp_path / ".." / tmp_path.name) == secret


@pytest.mark.parametrize("text", ["", "abc", "zz" * 32, "00" * 31])
def test_a_secret_file_that_is_not_ours_is_refused_not_replaced(tmp_path, text):
    (tmp_path / SECRET_FILE).write_text(text)
    with pytest.raises(ValueError, match="seed secret"):
        directory_secret(tmp_path)
    assert (tmp_path / SECRET_FILE).read_text() == text
