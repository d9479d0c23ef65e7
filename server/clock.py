"""Server time: integer ms since the server started, read from trio's clock (so tests can mock it).

The runtime is the only reader of time; engines get these numbers as arguments.
"""

from __future__ import annotations

import math

import trio


class ServerClock:
    def __init__(self) -> None:
        self.epoch = trio.current_time()

    def now_ms(self) -> int:
        return int((trio.current_time() - self.epoch) * 1000)

    def to_trio(self, ms: int | None) -> float:
        """The trio deadline for server time ``ms`` (inf for None)."""
        return math.inf if ms is None else self.epoch + ms / 1000
