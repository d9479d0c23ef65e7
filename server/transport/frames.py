"""Server WebSocket frames, built once and shared.

A server frame is unmasked and the server negotiates no extension, so the frame for a payload is the
same bytes on every connection (RFC 6455, section 5.2): a 2-, 4- or 10-byte header, then the payload.
A table sends one encoded event to each of its subscribers (and the lobby a bulletin to each of its
followers) as the same ``bytes`` object, so ``shared`` remembers the last few payloads by identity and
frames each once, however many connections it goes to. A payload seen once (a reply, a view) goes
through ``frame`` and is not remembered.
"""

from __future__ import annotations

import struct

BINARY = 0x82  # FIN + opcode 2
CACHE_SIZE = 64  # payloads remembered: a step's events interleave with per-connection frames
_SHORT = struct.Struct("!BB")
_MEDIUM = struct.Struct("!BBH")
_LONG = struct.Struct("!BBQ")
_cache: dict[int, tuple[bytes, bytes]] = {}  # id(payload) -> (payload, its frame); holding payload keeps its id


def frame(payload: bytes) -> bytes:
    """One binary frame holding ``payload``."""
    n = len(payload)
    if n < 126:
        return _SHORT.pack(BINARY, n) + payload
    if n < 65536:
        return _MEDIUM.pack(BINARY, 126, n) + payload
    return _LONG.pack(BINARY, 127, n) + payload


def shared(payload: bytes) -> bytes:
    """``frame(payload)``, built once for the same object sent to many connections."""
    hit = _cache.get(id(payload))
    if hit is not None and hit[0] is payload:
        return hit[1]
    wire = frame(payload)
    if len(_cache) >= CACHE_SIZE:
        del _cache[next(iter(_cache))]  # the oldest: the dict keeps insertion order
    _cache[id(payload)] = (payload, wire)
    return wire
