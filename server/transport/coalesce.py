"""Frames to one client joined into one write: a ``Coalescer`` held while many frames go out at once.

The journal releases a round's frames together (a bid's acknowledgement, event and view, and what other tables
owe the same client); a frame written alone is a system call that costs more than building it. While a coalescer
is held, a ``WebSocket`` keeps what it is sent; when the outermost hold ends, each writes what it kept as one.

Invariants: holding is synchronous (nothing awaits inside a hold), so no frame waits longer than the code that
sent it; a socket keeps at most ``HOLD_BYTES``, then writes what it kept; a control frame (ping, pong, close) or a
dropped queue first deals with what is kept, so the order on the wire is the order sent.
"""

from __future__ import annotations

from types import TracebackType
from typing import Protocol

HOLD_BYTES = 16384  # what one socket keeps at most in one hold: a socket's send buffer takes it whole


class Holder(Protocol):
    def release_held(self) -> None: ...


class Coalescer:
    """Held with ``with coalescer:`` (re-entrant); see the module."""

    def __init__(self) -> None:
        self.depth = 0
        self._keeping: list[Holder] = []

    def keeping(self, holder: Holder) -> None:
        """``holder`` kept its first frame of this hold: it writes them when the hold ends."""
        self._keeping.append(holder)

    def __enter__(self) -> Coalescer:
        self.depth += 1
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.depth -= 1
        if self.depth == 0:
            keeping, self._keeping = self._keeping, []
            for holder in keeping:
                holder.release_held()
