"""HTTP/1.1 on a trio stream through h11: requests with keep-alive, bounded in size and time, and the
WebSocket upgrade (RFC 6455, section 4.2).

Bounds: a request head has at most ``MAX_HEAD_BYTES`` (else 431) and a body at most ``MAX_BODY_BYTES`` (else 413,
told by its ``Content-Length`` before any of it is read; the server serves GET and HEAD only). After a refusal the
client is only drained briefly (``server.transport.sockets``), then reset. A whole request must arrive within
``REQUEST_TIMEOUT_S`` (plus a random tenth at most) and a response be taken within ``RESPONSE_TIMEOUT_S``, or the
connection is closed: a client that trickles its headers holds its task that long at most.

Parsing and encoding run through ``gate``, which the server makes a turn of the client's address
(``server.runtime.turns``): one address's requests cannot take the others' time. Only waiting for bytes and sending are
outside it.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, TypeVar

import h11
import trio

from server.ops import metrics
from server.transport.limits import spread
from server.ops.metrics import traffic
from server.transport.sockets import drain, reset, taken

MAX_HEAD_BYTES = 16 * 1024
MAX_BODY_BYTES = 4 * 1024
REQUEST_TIMEOUT_S = 10.0
RESPONSE_TIMEOUT_S = 30.0
LINGER_S = 2.0  # after a refusal: how long the client may take to take it
RECEIVE_BYTES = 16 * 1024
JOIN_BYTES = 16 * 1024  # a response body up to this size is sent with its head in one write; a larger one apart
_REFUSED = {400: "bad_request", 408: "timeout", 413: "body_too_large", 431: "head_too_large"}  # metrics' reasons
_WS_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
SERVER_NAME = "parsimonia"
T = TypeVar("T")
Gate = Callable[[Callable[[], Any]], Awaitable[Any]]  # runs a plain function (in a turn) and gives its result


async def _at_once(work: Callable[[], T]) -> T:
    return work()


@dataclass
class Response:
    status: int
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"
    headers: list[tuple[str, str]] = field(default_factory=list)


def text(status: int, body: str) -> Response:
    return Response(status, body.encode())


class HttpConnection:
    """The server side of one HTTP/1.1 connection."""

    def __init__(self, stream: trio.SocketStream, gate: Gate = _at_once) -> None:
        self.stream = stream
        self.gate = gate
        self._h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD_BYTES)
        self._request: h11.Request | None = None  # the request being parsed, and its body's bytes so far
        self._body = 0

    async def next_request(self) -> h11.Request | None:
        """The next request, its body read and dropped; None when the connection is over (the client
        closed it, took too long, or sent what is not HTTP: answered 400, 408, 413 or 431 if possible)."""
        with trio.move_on_after(spread(REQUEST_TIMEOUT_S)):
            try:
                return await self._read_request()
            except h11.RemoteProtocolError as exc:
                await self._refuse(text(exc.error_status_hint, f"{exc}\n"))
                return None
            except _Refusal as refusal:
                await self._refuse(refusal.response)
                return None
        if self._h11.their_state is not h11.IDLE or self._h11.trailing_data[0]:  # it had begun a request
            await self._refuse(text(408, "the request took too long\n"))
        return None

    async def _read_request(self) -> h11.Request | None:
        self._request, self._body = None, 0
        while True:
            over, request = await self.gate(self._parse)
            if over:
                return request
            try:
                data = await self.stream.receive_some(RECEIVE_BYTES)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return None
            traffic.bytes_read += len(data)
            self._h11.receive_data(data)

    def _parse(self) -> tuple[bool, h11.Request | None]:
        """What has come, parsed (in a turn): (True, the request or None when the connection is over) once it is
        whole or over, (False, None) when more must be read."""
        while True:
            event = self._h11.next_event()
            if event is h11.NEED_DATA:
                return False, None
            if isinstance(event, h11.Request):
                # h11 bounds a head that arrives in pieces; one that arrives whole is measured here
                if len(event.target) + sum(len(k) + len(v) + 4 for k, v in event.headers) > MAX_HEAD_BYTES:
                    raise _Refusal(text(431, "a request head may have at most 16 KiB\n"))
                if any(k == b"content-length" and _over(v, MAX_BODY_BYTES) for k, v in event.headers):
                    raise _Refusal(text(413, "a request body may have at most 4 KiB\n"))
                self._request = event
            elif isinstance(event, h11.Data):
                self._body += len(event.data)
                if self._body > MAX_BODY_BYTES:
                    raise _Refusal(text(413, "a request body may have at most 4 KiB\n"))
            elif isinstance(event, h11.EndOfMessage):
                return True, self._request
            else:  # ConnectionClosed
                return True, None

    async def respond(self, request: h11.Request, response: Response, *, close: bool = False) -> bool:
        """Send ``response`` to ``request``; whether the connection may carry another request."""
        pieces = await self.gate(lambda: self._encode(response, head_only=request.method == b"HEAD", close=close))
        if not await self._send(pieces):
            return False
        if self._h11.our_state is h11.MUST_CLOSE:
            return False
        self._h11.start_next_cycle()
        return True

    def _encode(self, response: Response, *, head_only: bool = False, close: bool = False) -> list[bytes]:
        """The response's pieces on the wire; its body the response's own bytes, not a copy (a static file's
        body is shared by every request for it: ``server.runtime.static``)."""
        headers = [("server", SERVER_NAME), ("content-type", response.content_type),
                   ("content-length", str(len(response.body))), ("x-content-type-options", "nosniff"),
                   *response.headers, *([("connection", "close")] if close else [])]
        pieces = [self._h11.send(h11.Response(status_code=response.status, headers=headers,
                                              reason=HTTPStatus(response.status).phrase))]
        if not head_only and response.body:
            data = self._h11.send_with_data_passthrough(h11.Data(data=response.body))
            assert data is not None  # h11 sends nothing only for ConnectionClosed
            pieces.extend(data)
        pieces.append(self._h11.send(h11.EndOfMessage()))
        return pieces if len(response.body) > JOIN_BYTES else [b"".join(pieces)]  # a small one: one send

    async def switch_to_websocket(self, request: h11.Request) -> bytes:
        """Answer 101 Switching Protocols to a checked upgrade request (``websocket_refusal`` is None);
        return what the client sent after its request (its first frames, maybe)."""
        key = _header(request, b"sec-websocket-key")
        accept = base64.b64encode(hashlib.sha1(key + _WS_GUID).digest())
        await self._send([self._h11.send(h11.InformationalResponse(
            status_code=101, reason=b"Switching Protocols",
            headers=[(b"upgrade", b"websocket"), (b"connection", b"Upgrade"), (b"sec-websocket-accept", accept)],
        ))])
        received = self._h11.trailing_data[0]
        del self._h11  # HTTP is over on this connection: its state would only cost memory for the WebSocket's life
        return received

    async def _refuse(self, response: Response) -> None:
        """Answer a request that cannot be served, then close. The client may still be sending (a body,
        a head over the bound): what it sends is read and dropped, a short drain at most (``sockets.drain``), and
        once the client has taken the answer (within ``LINGER_S``) the connection is reset, dropping the rest
        unread. (Closed with unread data, the socket would be reset at once, perhaps destroying the answer.)"""
        metrics.count_http_refusal(response.status, _REFUSED.get(response.status, "other"))
        if self._h11.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
            return
        if not await self._send(self._encode(response, close=True)):
            return
        ended = False
        with trio.move_on_after(LINGER_S):
            try:
                await self.stream.send_eof()
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return
            ended = await drain(self.stream)
            if not ended:
                await taken(self.stream.socket)
        if not ended:
            reset(self.stream.socket)

    async def _send(self, pieces: list[bytes]) -> bool:
        with trio.move_on_after(RESPONSE_TIMEOUT_S):
            try:
                for data in pieces:
                    if data:
                        await self.stream.send_all(data)
                return True
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return False
        return False


class _Refusal(Exception):
    def __init__(self, response: Response) -> None:
        self.response = response


def _over(digits: bytes, bound: int) -> bool:
    """Whether a ``Content-Length`` (digits: h11 checked it) is over ``bound``, however many digits it has."""
    digits = digits.lstrip(b"0")
    return len(digits) > len(str(bound)) or int(digits or b"0") > bound


def wants_websocket(request: h11.Request) -> bool:
    return b"websocket" in _header(request, b"upgrade").lower()


def websocket_refusal(request: h11.Request) -> Response | None:
    """Why an upgrade request cannot be accepted (RFC 6455, section 4.2.1), or None."""
    if request.method != b"GET":
        return Response(405, b"a WebSocket handshake is a GET\n", headers=[("allow", "GET")])
    if b"upgrade" not in _header(request, b"connection").lower():
        return text(400, "a WebSocket handshake needs Connection: Upgrade\n")
    if _header(request, b"sec-websocket-version") != b"13":
        return Response(426, b"this server speaks WebSocket version 13\n", headers=[("sec-websocket-version", "13")])
    key = _header(request, b"sec-websocket-key")
    try:
        if len(base64.b64decode(key, validate=True)) != 16:
            raise ValueError
    except ValueError:
        return text(400, "Sec-WebSocket-Key must be 16 bytes in base64\n")
    return None


def _header(request: h11.Request, name: bytes) -> bytes:
    """A header's values, joined with commas (h11 gives names in lower case)."""
    return b", ".join(value for key, value in request.headers if key == name)
