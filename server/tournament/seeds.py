"""Table seeds: each orders a game's hidden deck, so no seat may be able to work one out.

Without a seed in the roster, every table's seed comes from the operating system's random source
(``secrets``). With one (a reproducible league), a table's seed is a keyed hash (HMAC-SHA256) of the roster
seed, its round and its position, keyed by a random secret of the tournament's directory (``SECRET_FILE``, made on
first use, readable by its owner only). So the same directory and roster deal the same games again, while neither
one table's seed nor the roster's gives any other table's: that needs the secret, which never leaves the
directory. The roster seed alone still makes the seating reproducible (``server.tournament.pairing``). Every
seed is stored with its round before the tables are created, so a resumed tournament keeps them.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

SEED_BITS = 63  # the protocol's seeds are 0 .. 2**63 - 1
SECRET_FILE = "seeds.key"
SECRET_BYTES = 32


def random_seed() -> int:
    return secrets.randbits(SEED_BITS)


def directory_secret(directory: str | Path) -> bytes:
    """The tournament directory's secret, made (at random, owner-only) the first time it is asked for.
    ``ValueError`` when the file there is not one we wrote (empty, cut short, not hex)."""
    path = Path(directory) / SECRET_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        text = path.read_text(encoding="ascii", errors="replace").strip()
        try:
            secret = bytes.fromhex(text)
        except ValueError:
            secret = b""
        if len(secret) != SECRET_BYTES:
            raise ValueError(f"{path} is not a tournament's seed secret ({SECRET_BYTES} bytes in hex); "
                             "restore it, or remove it to deal new decks") from None
        return secret
    secret = secrets.token_bytes(SECRET_BYTES)
    try:
        os.write(fd, secret.hex().encode() + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    return secret


def seed_key(secret: bytes, roster_seed: int) -> bytes:
    """The key of a seeded tournament's table seeds: its directory's secret and the roster's seed."""
    return secret + roster_seed.to_bytes(8, "big", signed=True)


def derived_seed(key: bytes, round_number: int, position: int) -> int:
    """The seed of table ``position`` of round ``round_number`` of a tournament whose ``seed_key`` is ``key``."""
    digest = hmac.new(key, f"tournament.table/{round_number}/{position}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)


def table_seeds(key: bytes | None, round_number: int, count: int) -> list[int]:
    """The seeds of a round's ``count`` tables (positions 1..count): derived from ``key``, or random if None."""
    if key is None:
        return [random_seed() for _ in range(count)]
    return [derived_seed(key, round_number, position) for position in range(1, count + 1)]
