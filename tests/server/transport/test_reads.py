"""A WebSocket's reads of its kernel socket (server.transport.websocket): one read a message for a client that
sends now and then, never a read that is told to wait."""

from __future__ import annotations

import os
import socket

import trio

from server.transport.websocket import WebSocket


class CountingSocket(socket.socket):
    """A kernel socket that counts its reads and what each returned."""

    reads: list[int | str]

    def recv(self, size: int, flags: int = 0) -> bytes:  # type: ignore[override]
        try:
            data = super().recv(size, flags)
        except BlockingIOError:
            self.reads.append("would block")
            raise
        self.reads.append(len(data))
        return data


def _masked(payload: bytes) -> bytes:
    return bytes([0x82, 0x80 | len(payload)]) + b"\x00\x00\x00\x00" + payload  # a zero mask leaves it as it is


async def test_a_client_that_sends_now_and_then_costs_one_read_a_message() -> None:
    ours, theirs = socket.socketpair()
    counting = CountingSocket(ours.family, ours.type, ours.proto, fileno=ours.detach())
    counting.reads = []
    counting.setblocking(False)
    async with trio.open_nursery() as nursery:
        plain = socket.socket(ours.family, ours.type, ours.proto, fileno=os.dup(counting.fileno()))
        stream = trio.SocketStream(trio.socket.from_stdlib_socket(plain))  # trio wants a plain socket
        ws = WebSocket(stream, counting, b"", 65536, 64, nursery)
        for payload in (b"one", b"two", b"three"):
            nursery.start_soon(_send_later, theirs, _masked(payload))
            assert await ws.receive() == payload
        theirs.close()
        assert await ws.receive() is None
        # the first read tried at once and was told to wait; every later one waited first, then read
        assert counting.reads == ["would block", 9, 9, 11, 0]
        nursery.cancel_scope.cancel()
    counting.close()


async def _send_later(sock: socket.socket, data: bytes) -> None:
    await trio.sleep(0.01)
    sock.send(data)
