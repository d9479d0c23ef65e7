"""How a player's view is put together from the parts the server sends.

The server sends a game's ``static`` part once (in ``joined``, ``watching`` and ``resumed``), and with every
``view`` push the ``public`` part (the same for every seat) and the seat's ``private`` part. A player is given
their union, with ``seat`` set: the engine's ``view(seat)`` in process, the SDK's over a socket.
"""

from __future__ import annotations

from protocol.values import ReadMap, ViewPart


def player_view(
    static: ReadMap, public: ReadMap, private: ReadMap | None, seat: int | None
) -> ViewPart:
    """The union of the parts (a key of a later part wins), plus ``seat`` (None: a spectator)."""
    return {**static, **public, **(private or {}), "seat": seat}
