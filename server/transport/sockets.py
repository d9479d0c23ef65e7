"""Ending a connection whose client is no longer listened to: a bounded drain of what it still sends, a wait (without
reading) until it took our last bytes, and a reset.

A refused client (an HTTP request too large, a WebSocket frame that breaks the protocol) may keep sending as fast as
it can; reading all of it until it stops is what a flood wants the server to do. So ``drain`` reads at most
``DRAIN_BYTES``, for at most ``DRAIN_S``; what comes after is left unread, and ``reset`` makes the close a reset,
which drops it in the kernel. Before that, ``taken`` waits (bounded by the caller) until the client's side has
acknowledged our answer, so that the reset does not destroy it.
"""

from __future__ import annotations

import fcntl
import socket
import struct
import termios
from typing import Protocol

import trio

from server.ops.metrics import traffic

DRAIN_BYTES = 64 * 1024  # a refused client's bytes read at most after its refusal ...
DRAIN_S = 0.1  # ... or for this long at most
ACKED_POLL_S = 0.01  # how often the kernel is asked whether the client took our last bytes
RECEIVE_BYTES = 16 * 1024


class RawSocket(Protocol):
    def fileno(self) -> int: ...

    def setsockopt(self, level: int, option: int, value: bytes, /) -> None: ...


async def drain(stream: trio.abc.ReceiveStream) -> bool:
    """Read and drop what the client sends, up to ``DRAIN_BYTES`` or ``DRAIN_S``; whether its stream ended."""
    drained = 0
    with trio.move_on_after(DRAIN_S):
        while drained < DRAIN_BYTES:
            try:
                data = await stream.receive_some(min(RECEIVE_BYTES, DRAIN_BYTES - drained))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return True
            if not data:
                return True
            traffic.bytes_read += len(data)
            drained += len(data)
    return False


async def taken(sock: RawSocket) -> None:
    """Until the client's side has acknowledged all we sent (bound it with a timeout: a client may never read)."""
    while unsent(sock):
        await trio.sleep(ACKED_POLL_S)


def reset(sock: RawSocket) -> None:
    """Have ``sock`` close with a reset (zero linger): the kernel drops what the client never took at once, instead
    of keeping an orphaned socket and its buffers while it probes a closed window, and a client blocked sending to
    us hears of the end at once."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass  # the socket is gone already


def unsent(sock: RawSocket) -> bool:
    """Whether the kernel still holds bytes for the client that it has not taken (Linux's SIOCOUTQ; where
    that is unknown, the client is taken to have read everything)."""
    try:
        return struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0"))[0] > 0
    except (OSError, AttributeError, ValueError):
        return False
