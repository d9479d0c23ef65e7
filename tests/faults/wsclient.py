"""A WebSocket client written for hostility: it frames by hand (RFC 6455), so besides ordinary messages it
can send what no library would: unmasked frames, reserved opcodes and bits, stray continuations, control
frames that are too long or fragmented, bad close codes, text that is not UTF-8, absurd lengths.

``HostileSocket.open(port)`` does the handshake; ``send`` sends one message (``bytes``: binary, ``str``:
text); ``send_raw`` writes bytes as they are; ``receive`` returns the next server message decoded, or
None once the server has closed (it answers the server's pings on the way). ``http_get``: a plain GET.
"""

from __future__ import annotations

import base64
import os
import random
import struct
from typing import Any

import msgpack
import trio

CLOSE, PING, PONG = 0x8, 0x9, 0xA


def client_frame(opcode: int, payload: bytes, *, fin: bool = True, rsv: int = 0, mask: bool = True,
                 length: int | None = None) -> bytes:
    """One client frame; ``length`` declares another payload length than the payload's own."""
    n = len(payload) if length is None else length
    head = bytes([(0x80 if fin else 0) | (rsv << 4) | opcode])
    bit = 0x80 if mask else 0
    if n < 126:
        head += bytes([bit | n])
    elif n < 65536:
        head += bytes([bit | 126]) + struct.pack("!H", n)
    else:
        head += bytes([bit | 127]) + struct.pack("!Q", n)
    if not mask:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def violation(rng: random.Random) -> tuple[str, bytes, bool]:
    """A WebSocket-level frame (or frames) for the server's transport: (name, bytes, still a valid stream)."""
    body = msgpack.packb({"type": "ping", "id": 7})
    choices = [
        ("unmasked", client_frame(0x2, body, mask=False), False),
        ("reserved_opcode", client_frame(rng.choice([0x3, 0x7, 0xB, 0xF]), body), False),
        ("rsv_bits", client_frame(0x2, body, rsv=rng.choice([1, 2, 4, 7])), False),
        ("stray_continuation", client_frame(0x0, body), False),
        ("long_control", client_frame(PING, b"x" * 126), False),
        ("fragmented_control", client_frame(PING, b"x", fin=False), False),
        ("bad_close_code", client_frame(CLOSE, struct.pack("!H", rng.choice([0, 999, 1004, 1005, 1006, 5000]))),
         False),
        ("text_not_utf8", client_frame(0x1, b"\xff\xfe"), False),
        ("huge_length", client_frame(0x2, b"", length=2**63 - 1), False),
        ("fragmented_with_ping", client_frame(0x2, body[:3], fin=False) + client_frame(PING, b"p")
         + client_frame(0x0, body[3:]), True),
        ("ping", client_frame(PING, b"hello?"), True),
        ("empty_binary", client_frame(0x2, b""), True),
    ]
    return rng.choice(choices)


class Closed(Exception):
    """The server closed the connection (or it broke)."""


class HostileSocket:
    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.buffer = bytearray()
        self.closed = False
        self.close_code: int | None = None
        self.close_reason = ""
        self._parts: list[bytes] = []

    @classmethod
    async def open(cls, port: int) -> HostileSocket:
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        key = base64.b64encode(os.urandom(16)).decode()
        await stream.send_all((f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                               f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                               "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        sock = cls(stream)
        while b"\r\n\r\n" not in sock.buffer:
            data = await stream.receive_some(65536)
            if not data:
                raise Closed("closed during the handshake")
            sock.buffer += data
        head, _, rest = bytes(sock.buffer).partition(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 101"):
            raise Closed(head.split(b"\r\n")[0].decode("latin-1"))
        sock.buffer = bytearray(rest)
        return sock

    async def send(self, message: bytes | str) -> None:
        if isinstance(message, str):
            await self.send_raw(client_frame(0x1, message.encode()))
        else:
            await self.send_raw(client_frame(0x2, message))

    async def send_raw(self, data: bytes) -> None:
        try:
            await self.stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            self.closed = True
            raise Closed(str(exc)) from None

    async def _fill(self, n: int) -> None:
        while len(self.buffer) < n:
            try:
                data = await self.stream.receive_some(65536)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
            if not data:
                self.closed = True
                raise Closed("end of stream")
            self.buffer += data

    async def _frame(self) -> tuple[int, bool, bytes]:
        await self._fill(2)
        b0, b1 = self.buffer[0], self.buffer[1]
        n, at = b1 & 0x7F, 2
        if n == 126:
            await self._fill(4)
            n, at = struct.unpack("!H", self.buffer[2:4])[0], 4
        elif n == 127:
            await self._fill(10)
            n, at = struct.unpack("!Q", self.buffer[2:10])[0], 10
        assert not b1 & 0x80, "the server masked a frame"
        await self._fill(at + n)
        payload = bytes(self.buffer[at:at + n])
        del self.buffer[:at + n]
        return b0 & 0x0F, bool(b0 & 0x80), payload

    async def receive(self) -> dict[str, Any] | None:
        """The next message from the server, decoded; None once it has sent its close (or the stream ended)."""
        while not self.closed:
            try:
                opcode, fin, payload = await self._frame()
            except Closed:
                return None
            if opcode == CLOSE:
                self.closed = True
                self.close_code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
                self.close_reason = payload[2:].decode("utf-8", "replace")
                return None
            if opcode == PING:
                try:
                    await self.send_raw(client_frame(PONG, payload))
                except Closed:
                    return None
                continue
            if opcode == PONG:
                continue
            assert opcode in (0x0, 0x2), f"the server sent opcode {opcode}"
            self._parts.append(payload)
            if fin:
                message = msgpack.unpackb(b"".join(self._parts), raw=False, strict_map_key=True)
                self._parts = []
                assert isinstance(message, dict), message
                return message
        return None

    async def aclose(self) -> None:
        await trio.aclose_forcefully(self.stream)


async def http_get(port: int, path: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    """A plain HTTP/1.1 GET on 127.0.0.1 (the server's own port): the status and the body."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    await stream.send_all(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}Connection: close\r\n\r\n".encode())
    data = b""
    while chunk := await stream.receive_some(65536):
        data += chunk
    await stream.aclose()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body
