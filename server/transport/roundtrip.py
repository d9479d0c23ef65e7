"""The timing of a WebSocket's pings, sans-IO: which payload a ping carries, and what its pong says of the round trip.

One ping is timed at a time: while it is out, a new ping carries its payload again, so that its pong still times
it from when it first went. A pong with any other payload (RFC 6455 lets a client send one unasked) times
nothing. A round trip is timed to when the bytes that held its pong were read (the caller's ``heard``), not to
when they were parsed; it is kept as integer ms, the last one and a smoothed one as TCP smooths its round trips
(RFC 6298).
"""

from __future__ import annotations

GAIN = 4  # a new round trip moves the smoothed one a quarter of the way to it


class RoundTrip:
    __slots__ = ("_count", "_out", "last_ms", "ms")

    def __init__(self) -> None:
        self._count = 0  # pings timed so far: the next one's payload
        self._out: tuple[bytes, float] | None = None  # the ping being timed: its payload, when it went (trio time)
        self.last_ms: int | None = None  # the last round trip (None until the first pong)
        self.ms: int | None = None  # and the smoothed one

    def ping(self, now: float) -> bytes:
        """The payload of a ping going out at ``now``: a new one, timed from now, unless one is out already."""
        if self._out is None:
            self._count += 1
            self._out = (b"%d" % self._count, now)
        return self._out[0]

    def pong(self, payload: bytes, heard: float) -> None:
        """A pong read at ``heard``: the answer to the timed ping if it carries its payload."""
        if self._out is None or payload != self._out[0]:
            return
        sample = max(0, round((heard - self._out[1]) * 1000))
        self._out = None
        self.last_ms = sample
        self.ms = sample if self.ms is None else round(self.ms + (sample - self.ms) / GAIN)
