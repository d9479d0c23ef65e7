"""The load generator's Colyseus dialect: how a seat gets into a room, and how a room's message is framed.

Written from Colyseus 0.18's source (``@colyseus/core``: the matchmaking route, ``Protocol.ts``, the room's join
and message handling; ``@colyseus/ws-transport``: how a connection names its room). A seat joins in three steps:

1. **A seat reservation over HTTP**: ``POST /matchmake/create/<room name>`` (a new room) or
   ``POST /matchmake/joinById/<roomId>``, a JSON body of join options, answered by JSON
   ``{"name", "sessionId", "roomId", "processId"}`` (or an error status with ``{"code", "error"}``).
2. **The room's WebSocket**: ``/<processId>/<roomId>?sessionId=<sessionId>``.
3. **The join handshake**: the room sends ``JOIN_ROOM`` (byte 10, then its reconnection token, serializer and
   state handshake, which this generator does not need) and holds every other message until the client
   answers with the single byte 10.

After that a message either way is ``ROOM_DATA``: byte 13, the message type (a msgpack string or number),
then the payload as msgpack. The bench room (``bench/colyseus/server.mjs``) uses the bare protocol's message
type as the Colyseus type and the bare message, unchanged, as the payload. A failure is ``ERROR``: byte 11,
a code and a message, both msgpack-encoded.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import quote, urlsplit

import msgpack

JOIN_ROOM, ERROR, ROOM_DATA = 10, 11, 13
JOIN_ACK = bytes([JOIN_ROOM])
ROOM = "table"  # the room name server.mjs defines
EVENT_HEAD = bytes([ROOM_DATA]) + msgpack.packb("event")  # the first bytes of every table event

pack = msgpack.Packer(use_bin_type=True).pack
_heads: dict[str, bytes] = {}


def frame(message: dict[str, Any]) -> bytes:
    """A bare-protocol message as a ROOM_DATA frame: its ``type`` as the Colyseus type, itself as the payload."""
    kind = message["type"]
    head = _heads.get(kind)
    if head is None:
        head = _heads[kind] = bytes([ROOM_DATA]) + pack(kind)
    return head + pack(message)


def body_start(payload: memoryview) -> int:
    """Where the msgpack payload of a ROOM_DATA frame begins; 0 when the frame is not one with a short type
    (under 32 bytes, as every type of the bench room is)."""
    if payload[0] != ROOM_DATA or len(payload) < 2:
        return 0
    kind = payload[1]
    return 2 + (kind & 0x1F) if 0xA0 <= kind <= 0xBF else 0


def error_text(payload: memoryview) -> str:
    """The code and message of an ERROR frame."""
    unpacker = msgpack.Unpacker(raw=False)
    unpacker.feed(payload[1:])
    try:
        parts = [str(x) for x in unpacker]
    except Exception:  # noqa: BLE001 - a malformed error frame is still an error to report
        parts = [bytes(payload[1:]).hex()]
    return " ".join(parts)


async def reserve(url: str, method: str, target: str, options: dict[str, Any], timeout: float) -> dict[str, Any]:
    """A seat reservation: ``method`` is ``create`` (``target`` the room name) or ``joinById`` (a room id)."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    body = json.dumps(options).encode()
    request = (f"POST /matchmake/{method}/{quote(target)} HTTP/1.1\r\nHost: {host}:{port}\r\n"
               f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n")

    async def exchange() -> bytes:
        reader, writer = await asyncio.open_connection(host, port)
        try:
            writer.write(request.encode() + body)
            return await reader.read()  # the whole response: the server closes after it
        finally:
            writer.close()

    response = await asyncio.wait_for(exchange(), timeout)
    head, _, data = response.partition(b"\r\n\r\n")
    status_line = head.split(b"\r\n", 1)[0].split(b" ", 2)
    status = int(status_line[1]) if len(status_line) > 1 and status_line[1].isdigit() else 0
    try:
        reply = json.loads(data)
    except ValueError:
        reply = None
    if status != 200 or not isinstance(reply, dict) or "sessionId" not in reply:
        reason = reply.get("error") if isinstance(reply, dict) else data[:200].decode(errors="replace")
        raise RuntimeError(f"matchmake {method} {target}: HTTP {status} {reason}")
    return reply


def room_url(url: str, reservation: dict[str, Any]) -> str:
    """The room's WebSocket address for a seat reservation, on the server of ``url``."""
    parts = urlsplit(url)
    return (f"{parts.scheme}://{parts.netloc}/{reservation['processId']}/{reservation['roomId']}"
            f"?sessionId={quote(reservation['sessionId'])}")
