"""A WebSocket's burst allowance: frames it may queue beyond its queue's bounds, for a resume's replay.

Granted once per connection (``grant``: a later grant gives nothing), spent frame by frame (``take``) and never
refilled, not even by an emptied queue; what is not spent within ``LAPSE_S`` of the grant is gone, so that no
request makes a connection hold more, and one that resumed once and never reads cannot spend it later.
"""

from __future__ import annotations

import trio

LAPSE_S = 5.0  # a burst allowance not spent this long after it was granted is gone


class Burst:
    __slots__ = ("_granted", "_until", "frames", "nbytes")

    def __init__(self) -> None:
        self._granted = False
        self._until = 0.0  # when what is left lapses (trio time)
        self.frames = 0  # frames that may still be queued beyond the bounds
        self.nbytes = 0  # and their bytes

    def grant(self, frames: int, nbytes: int) -> None:
        """``frames`` frames of ``nbytes`` bytes in all, if this is the first grant."""
        if not self._granted:
            self._granted = True
            self.frames, self.nbytes = frames, nbytes
            self._until = trio.current_time() + LAPSE_S

    def take(self, nbytes: int) -> bool:
        """Spend one frame of ``nbytes`` bytes; False (and nothing left) when spent or lapsed."""
        if not self.frames or nbytes > self.nbytes or trio.current_time() >= self._until:
            self.frames = self.nbytes = 0
            return False
        self.frames -= 1
        self.nbytes -= nbytes
        return True
