"""Table seeds: each orders a game's hidden deck, so no seat may be able to work one out.

Without a seed in the roster, every table's seed comes from the operating system's random source
(``secrets``). With one (a reproducible test league), a table's seed is a keyed hash (BLAKE2b, the roster
seed as its key) of its round and position: the same roster deals the same games again, while one table's
seed, which a seat might recover from its deal and a finished game's replay shows, gives no other table's.
The director stores every seed with its round before creating the tables, so a resumed tournament keeps them.
"""

from __future__ import annotations

import hashlib
import secrets

SEED_BITS = 63  # the protocol's seeds are 0 .. 2**63 - 1


def random_seed() -> int:
    return secrets.randbits(SEED_BITS)


def derived_seed(key: int, round_number: int, position: int) -> int:
    """The seed of table ``position`` of round ``round_number`` in a tournament seeded with ``key``."""
    digest = hashlib.blake2b(f"table/{round_number}/{position}".encode(), digest_size=8,
                             key=key.to_bytes(8, "big", signed=True), person=b"tournament.table").digest()
    return int.from_bytes(digest, "big") >> (64 - SEED_BITS)


def table_seeds(key: int | None, round_number: int, count: int) -> list[int]:
    """The seeds of a round's ``count`` tables (positions 1..count): derived from ``key``, or random if None."""
    if key is None:
        return [random_seed() for _ in range(count)]
    return [derived_seed(key, round_number, position) for position in range(1, count + 1)]
