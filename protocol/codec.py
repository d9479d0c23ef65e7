"""Frames to messages and back: one msgpack map per binary WebSocket frame.

``decode`` is the only code that touches bytes from a client. It refuses an over-long frame before
unpacking it, lets msgpack enforce the size limits while unpacking (one ``unpackb`` call), then walks the result
for what msgpack cannot check itself (depth, key types, value types, finite floats). Whatever the input, it
returns a map or raises ``ProtocolError``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable

import msgpack
import msgspec

from protocol.errors import ProtocolError
from protocol.values import Map, ReadMap


@dataclass(frozen=True)
class Limits:
    """What the server accepts from a client; sent to the client in ``welcome``."""

    max_frame_bytes: int = 65536
    max_str_len: int = 4096
    max_bin_len: int = 0
    max_array_len: int = 1024
    max_map_len: int = 256
    max_depth: int = 16

    @cached_property
    def unbounded_below(self) -> int:
        """A frame of at most this many bytes cannot hold a string, array, map or bin value over its limit (each
        takes at least a byte per character, item or entry): only depth and value types remain to be checked."""
        sizes = [self.max_frame_bytes, self.max_str_len, self.max_array_len, 2 * self.max_map_len]
        return min(sizes + [self.max_bin_len] if self.max_bin_len else sizes)


# msgpack reports a size limit as a ValueError saying e.g. "5000 exceeds max_str_len(4096)".
_LIMIT_HIT = re.compile(r"exceeds max_(str|bin|array|map|ext)_len")


# msgspec's encoder writes the bytes msgpack's Packer(use_bin_type=True) writes for every value that one takes
# (tests/protocol/test_codec.py holds them equal), in a third of the time
pack: Callable[[object], bytes] = msgspec.msgpack.Encoder().encode


def encode(message: ReadMap) -> bytes:
    return pack(message)


def decode(frame: bytes | str, limits: Limits = Limits()) -> Map:
    """One client frame to a map. A ``str`` frame is a WebSocket text frame, which the protocol refuses."""
    if isinstance(frame, str):
        raise ProtocolError("malformed", "text frames are not accepted; send msgpack in binary frames")
    if len(frame) > limits.max_frame_bytes:
        raise ProtocolError("too_large", f"{len(frame)} bytes is over max_frame_bytes {limits.max_frame_bytes}")
    try:
        message = msgpack.unpackb(frame, max_str_len=limits.max_str_len, max_bin_len=limits.max_bin_len,
                                  max_array_len=limits.max_array_len, max_map_len=limits.max_map_len,
                                  max_ext_len=0, strict_map_key=False, raw=False)
    except msgpack.StackError:
        raise ProtocolError("too_deep", f"nesting is deeper than max_depth {limits.max_depth}") from None
    except msgpack.ExtraData:
        raise ProtocolError("malformed", "bytes follow the message; send one msgpack map per frame") from None
    except (ValueError, TypeError) as exc:
        raise _unpack_failure(exc, limits) from None
    if not isinstance(message, dict):
        raise ProtocolError("malformed", f"a message must be a map, not {type(message).__name__}")
    _check_values(message, limits)
    return message


def _unpack_failure(exc: ValueError | TypeError, limits: Limits) -> ProtocolError:
    if str(exc) == "Unpack failed: incomplete input":
        return ProtocolError("malformed", "the frame holds no complete msgpack value")
    hit = _LIMIT_HIT.search(str(exc))
    if hit is None:
        return ProtocolError("malformed", f"not valid msgpack: {exc}")
    kind = hit[1]
    if kind == "ext" or (kind == "bin" and limits.max_bin_len == 0):
        return ProtocolError("malformed", f"{kind} values are not accepted")
    return ProtocolError("too_large", str(exc))


_SCALARS = frozenset((str, int, bool, type(None)))


def _check_values(message: Map, limits: Limits) -> None:
    """Walk the unpacked map: depth, string keys, and only the types the protocol uses. The common values (a
    string, an integer, a boolean, nil) cost one look-up of their type."""
    _check_map(message, 1, limits)


def check_part(value: dict[Any, Any], depth: int, limits: Limits) -> None:
    """Check a free-form map found at ``depth`` of a message (the message is 1) as ``decode`` checks every map:
    depth, string keys, only the types the protocol uses (``ProtocolError``)."""
    _check_map(value, depth, limits)


def _check_map(value: dict[Any, Any], depth: int, limits: Limits) -> None:
    if depth > limits.max_depth:
        raise ProtocolError("too_deep", f"nesting is deeper than max_depth {limits.max_depth}")
    for key, item in value.items():
        if type(key) is not str:
            raise ProtocolError("malformed", "map keys must be strings")
        if type(item) not in _SCALARS:
            _check_value(item, depth + 1, limits)


def _check_value(value: Any, depth: int, limits: Limits) -> None:
    kind = type(value)
    if kind in _SCALARS:
        return
    if kind is dict:
        _check_map(value, depth, limits)
    elif kind is list:
        if depth > limits.max_depth:
            raise ProtocolError("too_deep", f"nesting is deeper than max_depth {limits.max_depth}")
        for item in value:
            if type(item) not in _SCALARS:
                _check_value(item, depth + 1, limits)
    elif kind is float:
        if not math.isfinite(value):
            raise ProtocolError("malformed", "floats must be finite")
    elif kind is bytes:
        if limits.max_bin_len == 0:
            raise ProtocolError("malformed", "bin values are not accepted")
    else:
        raise ProtocolError("malformed", "ext values are not accepted")
