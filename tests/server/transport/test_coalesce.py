"""Frames to one client joined into one write while the server's coalescer is held (server.transport.coalesce)."""

from __future__ import annotations

import socket
from typing import Any

import trio

from server.transport import frames
from server.transport.coalesce import HOLD_BYTES, Coalescer
from server.transport.websocket import WebSocket


class CountingSocket:
    """The WebSocket's socket for writes, counting them."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.writes: list[bytes] = []

    def send(self, data: bytes) -> int:
        self.writes.append(bytes(data))
        return self.sock.send(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sock, name)


def _pair(nursery: trio.Nursery, coalescer: Coalescer) -> tuple[WebSocket, CountingSocket, socket.socket]:
    ours, theirs = socket.socketpair()
    ours.setblocking(False)
    theirs.setblocking(False)
    counting = CountingSocket(ours)
    stream = trio.SocketStream(trio.socket.from_stdlib_socket(ours))
    ws = WebSocket(stream, counting, b"", 65536, 64, nursery, coalescer=coalescer)  # type: ignore[arg-type]
    return ws, counting, theirs


async def test_frames_sent_during_a_hold_leave_in_order_as_one_write_per_client() -> None:
    coalescer = Coalescer()
    async with trio.open_nursery() as nursery:
        (a, a_sock, a_peer), (b, b_sock, b_peer) = _pair(nursery, coalescer), _pair(nursery, coalescer)
        with coalescer:
            with coalescer:  # holds nest: only the outermost lets go
                assert a.send(frames.frame(b"ok")) and b.send(frames.frame(b"event"))
            assert a.send(frames.frame(b"event")) and a.send(frames.frame(b"view"))
            assert a_sock.writes == b_sock.writes == []
        assert a_sock.writes == [b"\x82\x02ok\x82\x05event\x82\x04view"]
        assert b_sock.writes == [b"\x82\x05event"]
        assert a_peer.recv(100) == a_sock.writes[0] and b_peer.recv(100) == b_sock.writes[0]
        assert a.send(frames.frame(b"later")) and a_sock.writes[-1] == b"\x82\x05later"  # no hold: at once
        nursery.cancel_scope.cancel()


async def test_a_ping_during_a_hold_goes_after_the_frames_kept_before_it() -> None:
    coalescer = Coalescer()
    async with trio.open_nursery() as nursery:
        ws, sock, peer = _pair(nursery, coalescer)
        with coalescer:
            ws.send(frames.frame(b"first"))
            ws.ping()
            ws.send(frames.frame(b"second"))
        assert [w[:1] for w in sock.writes] == [b"\x82", b"\x89", b"\x82"]
        assert sock.writes[0] == b"\x82\x05first" and sock.writes[2] == b"\x82\x06second"
        nursery.cancel_scope.cancel()


async def test_a_client_keeps_at_most_the_hold_bound_then_writes_what_it_kept_and_the_frame_over_it() -> None:
    coalescer = Coalescer()
    payload = b"x" * (HOLD_BYTES // 3)
    async with trio.open_nursery() as nursery:
        ws, sock, peer = _pair(nursery, coalescer)
        with coalescer:
            for _ in range(4):
                assert ws.send(frames.frame(payload))
            one = frames.frame(payload)  # two fit under the bound, not three
            assert sock.writes == [one + one, one]  # the kept two together, then the third alone
        sent = b"".join(sock.writes)
        assert len(sent) == 4 * len(frames.frame(payload)) and len(sock.writes) == 3
        nursery.cancel_scope.cancel()


async def test_a_dropped_queue_drops_what_a_hold_kept() -> None:
    coalescer = Coalescer()
    async with trio.open_nursery() as nursery:
        ws, sock, _peer = _pair(nursery, coalescer)
        with coalescer:
            ws.send(frames.frame(b"gone"))
            ws.drop_queue()
        assert sock.writes == []
        nursery.cancel_scope.cancel()
