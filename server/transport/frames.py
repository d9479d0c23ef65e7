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
CLOSE, PING, PONG = 0x88, 0x89, 0x8A  # FIN + the control opcodes
NO_CODE = 1005  # a close frame without a code (RFC 6455, section 7.1.5)
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


def control(first: int, payload: bytes = b"") -> bytes:
    """A ping, pong or close frame (``first``: ``PING``, ``PONG`` or ``CLOSE``); ``payload`` of at most 125 bytes."""
    return bytes((first, len(payload))) + payload


def close(code: int, reason: str = "") -> bytes:
    """A close frame: the code and as much of ``reason`` as fits in 123 bytes of UTF-8; none for ``NO_CODE``."""
    if code == NO_CODE:
        return control(CLOSE)
    words = reason.encode()[:123].decode("utf-8", "ignore").encode()  # never a character cut in two
    return control(CLOSE, code.to_bytes(2, "big") + words)


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
