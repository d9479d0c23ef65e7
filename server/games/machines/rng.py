"""The generator behind every hidden shuffle: a keyed hash in counter mode, kept in the game state.

Output ``i`` is ``BLAKE2b(key=seed, message=i)`` cut to 64 bits. Knowing any number of outputs (the cards a
seat was dealt, the cards drawn so far) tells nothing about the next ones without the key, so a seat cannot
compute the deck from what it sees; and the same seed always replays to the same game, independent of
Python's ``random`` module. The whole state is the seed and a counter.
"""

from __future__ import annotations

import hashlib
from typing import MutableSequence, TypeVar

_MASK = (1 << 64) - 1
T = TypeVar("T")


class Rng:
    def __init__(self, seed: int, counter: int = 0) -> None:
        if not 0 <= seed < 1 << 512:
            raise ValueError("a seed is a non-negative integer of at most 512 bits (a BLAKE2b key)")
        self.seed = seed
        self._key = seed.to_bytes(max(8, (seed.bit_length() + 7) // 8), "little")
        self.counter = counter

    @property
    def state(self) -> list[int]:
        """``[seed, counter]``: ``Rng(*state)`` resumes the sequence."""
        return [self.seed, self.counter]

    def next64(self) -> int:
        block = hashlib.blake2b(self.counter.to_bytes(8, "little"), key=self._key, digest_size=8).digest()
        self.counter += 1
        return int.from_bytes(block, "little")

    def below(self, n: int) -> int:
        """Uniform integer in ``0..n-1`` (rejection sampling, no modulo bias)."""
        if n <= 0:
            raise ValueError("n must be positive")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            x = self.next64()
            if x < limit:
                return x % n

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher-Yates, in place."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]
