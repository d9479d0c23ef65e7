"""The frames a table sends on every step, built fast: each part encoded once, however many receive it.

An ``event`` frame is encoded once per event (once more for its redacted form) and the same bytes go to
every subscriber. A ``view`` frame is a msgpack map whose ``view`` value (the public part, the same for every
seat) is encoded once per step and spliced into each seat's frame beside its own ``seat``, ``private`` and
``legal``: msgpack writes a map as a header and then its keys and values one after the other, so the bytes
of an encoded value can be placed as they are.
"""

from __future__ import annotations

from collections.abc import Callable

from protocol.codec import pack
from protocol.values import LegalAction, ReadMap

_pack: Callable[[object], bytes] = pack


def event_frame(table: str, seq: int, time: int, event: ReadMap) -> bytes:
    return _pack({"type": "event", "table": table, "seq": seq, "time": time, "event": event})


def _map_header(n: int) -> bytes:
    if n < 16:
        return bytes([0x80 | n])
    return b"\xde" + n.to_bytes(2, "big")


class ViewFrames:
    """The ``view`` frames of one step: ``for_seat`` adds each subscriber's own part to the shared bytes."""

    def __init__(self, table: str, seq: int, time: int, public: ReadMap) -> None:
        self._shared = (_pack("type") + _pack("view") + _pack("table") + _pack(table) + _pack("seq") + _pack(seq)
                        + _pack("time") + _pack(time) + _pack("view") + _pack(public))
        self._legal_key = _pack("legal")
        self._seat_key = _pack("seat")
        self._private_key = _pack("private")

    def for_seat(self, seat: int | None, private: ReadMap | None, legal: list[LegalAction],
                 re: int | None = None) -> bytes:
        """The frame of ``seat`` (None: a spectator, who has no ``private`` part)."""
        count = 7 + (private is not None) + (re is not None)
        parts = [_map_header(count), self._shared, self._seat_key, _pack(seat), self._legal_key, _pack(legal)]
        if private is not None:
            parts += [self._private_key, _pack(private)]
        if re is not None:
            parts += [_pack("re"), _pack(re)]
        return b"".join(parts)


def _array_header(n: int) -> bytes:
    if n < 16:
        return bytes([0x90 | n])
    return b"\xdc" + n.to_bytes(2, "big")


def history_frame(table: str, re: int | None, last_seq: int, events: list[bytes], next_seq: int | None,
                  skipped: int | None) -> bytes:
    """A ``history`` answer around its entries, each already encoded (``server.runtime.history.Entry``)."""
    head = {"type": "history", "table": table, "last_seq": last_seq}
    if re is not None:
        head["re"] = re
    if next_seq is not None:
        head["next"] = next_seq
    if skipped is not None:
        head["skipped"] = skipped
    parts = [_map_header(len(head) + 1)]
    for key, value in head.items():
        parts += [_pack(key), _pack(value)]
    parts += [_pack("events"), _array_header(len(events)), *events]
    return b"".join(parts)
