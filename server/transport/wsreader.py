"""The server's reader of a client's WebSocket frames (RFC 6455, section 5), sans-IO.

``FrameReader.feed(data)`` takes bytes as they come and returns what they completed, in order: ``MESSAGE`` (bytes
or str, fragments joined, text checked as UTF-8 as it comes), ``PING``, ``PONG``, ``CLOSE`` (code 1005 when none
was carried) or ``VIOLATION`` (with the code to close with), each with its payload. Nothing is read after a close
or a violation.

It refuses with 1002 whatever RFC 6455 forbids a client (a reserved bit: no extension is negotiated; an unknown
opcode, an unmasked frame, a misplaced continuation, a bad close code...), with 1007 text that is not UTF-8, and with
1009 a message over ``max_message`` bytes (its later fragments' headers counted), told by a header before its
payload is read, or of over ``MAX_FRAGMENTS`` fragments. So it holds at most one message of at most
``max_message`` bytes, and nothing once it refused.
"""

from __future__ import annotations

import codecs
from typing import Any

MESSAGE, PING, PONG, CLOSE, VIOLATION = range(5)
PROTOCOL_ERROR, INVALID_DATA, TOO_BIG = 1002, 1007, 1009
_CONTINUATION, _TEXT, _BINARY, _CLOSE, _PING, _PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA
# the codes a peer may send (RFC 6455, section 7.4): 1004-1006 and 1015 are reserved or local only, and 1014
# (which wsproto 1.3 does not know) is refused as wsproto refuses it, so that both readers agree
_PEER_CODES = frozenset((*range(1000, 1004), *range(1007, 1014), *range(3000, 5000)))

MAX_FRAGMENTS = 1024  # frames one message may come in: a 64 KiB message in 64-byte frames
Event = tuple[int, Any]


def unmask(key: bytes | bytearray, payload: bytes | bytearray) -> bytes:
    n = len(payload)
    if not n:
        return b""
    keys = (key * ((n + 3) >> 2))[:n]
    return (int.from_bytes(payload, "little") ^ int.from_bytes(keys, "little")).to_bytes(n, "little")


def _header_refusal(first: int, length: int) -> str | None:
    """Why a frame is refused from its first two bytes (``length``: the 7-bit length); None when it is not."""
    opcode = first & 0x0F
    if _BINARY < opcode < _CLOSE or opcode > _PONG:
        return f"unknown opcode {opcode:#x}"
    if opcode >= _CLOSE:
        if not first & 0x80:
            return "a control frame may not be fragmented"
        if length > 125:
            return "a control frame may carry at most 125 bytes"
    return None


class FrameReader:
    def __init__(self, max_message: int) -> None:
        self.max_message = max_message
        self.done = False  # a close frame or a violation was read: the rest is not parsed
        self._pending = bytearray()  # the start of a frame not yet whole: grown in place, never copied whole
        self._opcode = 0  # of the fragmented message under way: 0 when none
        self._parts: list[Any] = []  # its fragments so far: bytes, or str for a text message
        self._size = 0  # its bytes so far
        self._text: codecs.BufferedIncrementalDecoder | None = None  # a text message's UTF-8, checked as it comes

    def feed(self, data: bytes) -> list[Event]:
        if self.done:
            return []
        if self._pending:
            self._pending += data
            buf: bytes | bytearray = self._pending
        else:
            buf = data
        events: list[Event] = []
        at, end = 0, len(buf)
        while end - at >= 2 and not self.done:
            first, second = buf[at], buf[at + 1]
            length = second & 0x7F
            refusal = _header_refusal(first, length)
            if refusal is not None:
                events.append(self._violation(PROTOCOL_ERROR, refusal))
                break
            head = 2
            if length == 126:
                if end - at < 4:
                    break
                length = int.from_bytes(buf[at + 2:at + 4], "big")
                head = 4
                if length < 126:
                    events.append(self._violation(PROTOCOL_ERROR, "a 2-byte length where 1 byte would do"))
                    break
            elif length == 127:
                if end - at < 10:
                    break
                length = int.from_bytes(buf[at + 2:at + 10], "big")
                head = 10
                if length < 65536 or length >> 63:
                    events.append(self._violation(PROTOCOL_ERROR, "an 8-byte length not in its shortest form"))
                    break
            refusal2 = self._frame_refusal(first, second, head + 4, length)
            if refusal2 is not None:
                events.append(self._violation(*refusal2))
                break
            size = head + 4 + length
            if end - at < size:
                break
            key = buf[at + head:at + head + 4]
            payload = unmask(key, buf[at + head + 4:at + size])
            at += size
            event = self._frame(first, payload, head + 4)
            if event is not None:
                events.append(event)
        if self.done:
            self._pending = bytearray()
        elif buf is self._pending:
            del buf[:at]
        elif at < end:
            self._pending = bytearray(buf[at:])
        return events

    def _frame_refusal(self, first: int, second: int, head: int, length: int) -> tuple[int, str] | None:
        """Why the frame this header (``head`` bytes, the mask included) begins is refused, once its length is known;
        None when it is not."""
        opcode = first & 0x0F
        if opcode < _CLOSE:
            so_far = self._size + head if opcode == _CONTINUATION else 0
            if so_far + length > self.max_message:
                return TOO_BIG, f"a message may have at most {self.max_message} bytes"
            if opcode == _CONTINUATION and len(self._parts) >= MAX_FRAGMENTS:
                return TOO_BIG, f"a message may come in at most {MAX_FRAGMENTS} frames"
        if first & 0x70:
            return PROTOCOL_ERROR, "a reserved bit is set"
        if not second & 0x80:
            return PROTOCOL_ERROR, "a client's frame must be masked"
        if opcode == _CONTINUATION and not self._opcode:
            return PROTOCOL_ERROR, "a continuation frame with no message begun"
        if opcode in (_TEXT, _BINARY) and self._opcode:
            return PROTOCOL_ERROR, "a new message before the last one ended"
        return None

    def _frame(self, first: int, payload: bytes, head: int) -> Event | None:
        opcode = first & 0x0F
        if opcode == _PING:
            return PING, payload
        if opcode == _PONG:
            return PONG, payload
        if opcode == _CLOSE:
            return self._close(payload)
        final = first & 0x80
        if final and opcode == _BINARY:
            return MESSAGE, payload
        if final and opcode == _TEXT:
            try:
                return MESSAGE, payload.decode("utf-8")
            except UnicodeDecodeError:
                return self._violation(INVALID_DATA, "a text message that is not UTF-8")
        if opcode:  # the first fragment of a message
            self._opcode = opcode
            self._text = codecs.getincrementaldecoder("utf-8")() if opcode == _TEXT else None
        else:  # a continuation: its header counts (``_frame_refusal``)
            self._size += head
        self._size += len(payload)
        part: bytes | str = payload
        if self._text is not None:
            try:
                part = self._text.decode(payload, final=bool(final))
            except UnicodeDecodeError:
                return self._violation(INVALID_DATA, "a text message that is not UTF-8")
        self._parts.append(part)
        if not final:
            return None
        message = "".join(self._parts) if self._text is not None else b"".join(self._parts)
        self._opcode, self._parts, self._size, self._text = 0, [], 0, None
        return MESSAGE, message

    def _close(self, payload: bytes) -> Event:
        if not payload:
            self.done = True
            return CLOSE, (1005, "")
        if len(payload) == 1:
            return self._violation(PROTOCOL_ERROR, "a close frame of one byte")
        code = int.from_bytes(payload[:2], "big")
        if code not in _PEER_CODES:
            return self._violation(PROTOCOL_ERROR, f"close code {code} may not be sent by a peer")
        try:
            reason = payload[2:].decode("utf-8")
        except UnicodeDecodeError:
            return self._violation(INVALID_DATA, "a close reason that is not UTF-8")
        self.done = True
        return CLOSE, (code, reason)

    def _violation(self, code: int, reason: str) -> Event:
        self.done = True
        self._parts, self._text = [], None  # a message refused half read: its fragments go at once
        return VIOLATION, (code, reason)
