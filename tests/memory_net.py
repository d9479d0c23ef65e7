"""An in-memory network for the tests that run on trio's autojump clock.

Under the autojump clock, trio moves time on whenever every task waits. Over real sockets a task also waits
for the kernel (a loopback segment not yet delivered under the load of a full suite), so a quiet time or a turn
clock could fire in what a test meant as an instant, and the kernel decided the outcome. Here the bytes go
through bounded buffers in the process: once a writer has run, its bytes are there for the reader, and time
moves only when nothing at all is left to do.

The clients go in through trio's own hooks: once a server of the test listens, the network is the run's socket
factory and hostname resolver (``trio.socket.set_custom_socket_factory``, ``set_custom_hostname_resolver``), so
a TCP socket trio makes connects to 127.0.0.1 (or localhost) at such a server's port in memory, and
``trio.open_tcp_stream`` hands trio-websocket's client (the SDK, ``watch``, the director's link, the raw test
clients) and the HTTP tests a ``trio.SocketStream`` as it would over the kernel. Any other address or port is
refused, as a port nobody listens on is. ``MemoryNetwork.install`` still patches, for one test:

* the server's listener (``server.runtime.app.serve_tcp``, which uses the kernel's sockets, not trio's): each ``Server``
  gets a port number of its own, and its real connection handler (HTTP, the WebSocket upgrade, ``Connection``)
  is run on an in-memory stream;
* ``trio.to_thread.run_sync`` and the log's writer thread (``server.storage.journal.Writer.run``): the work (the log's
  writes and syncs, a static file's read) is done in the trio thread, at once, so that time cannot move on while a
  thread works (the autojump clock would jump to the next deadline: a toy game's choice would time out while its
  command is being made durable). The writer's real-time pause between rounds under load is skipped.

Each end is a trio ``HalfCloseableStream`` and also offers what the server's WebSocket writes with: a
non-blocking ``send`` that takes what fits and raises ``BlockingIOError`` when nothing does, and ``shutdown``.
``capacity`` bounds what each direction holds, as a socket's buffers do; a test of a client that stops reading
sets it small. ``address`` is the client address the server sees for the connections opened next.
"""

from __future__ import annotations

import errno
import itertools
import socket
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import trio

from server.runtime import app

from server.storage import journal

CAPACITY = 256 * 1024  # bytes each direction holds before a writer must wait (loopback's buffers are larger)
FIRST_PORT = 41000


class _Pipe:
    """One direction: the bytes written and not yet read, at most ``capacity`` of them."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.data = bytearray()
        self.eof = False  # the writer is done
        self.reader_gone = False  # nobody will read: a write is lost
        self.reset = False  # a write was lost: the next one fails
        self.changed = trio.lowlevel.ParkingLot()

    @property
    def room(self) -> int:
        return self.capacity - len(self.data)

    def wake(self) -> None:
        self.changed.unpark_all()


class MemoryStream(trio.abc.HalfCloseableStream):
    """One end of an in-memory connection."""

    def __init__(self, inbound: _Pipe, outbound: _Pipe, local: tuple[str, int], remote: tuple[str, int]) -> None:
        self._in = inbound
        self._out = outbound
        self._closed = False
        self.socket = _Names(local, remote)

    # -- the server WebSocket's non-blocking writes

    def send(self, data: bytes | memoryview, flags: int = 0) -> int:
        """As a non-blocking socket's ``send``: what fits is taken; an error is an ``OSError``."""
        if self._closed or self._out.eof:
            raise OSError(errno.EBADF if self._closed else errno.EPIPE, "this end is closed for writing")
        if self._out.reader_gone:
            return self._after_the_peer_left(len(data))
        if not self._out.room:
            raise BlockingIOError(errno.EAGAIN, "the peer's buffer is full")
        taken = bytes(data[: self._out.room])
        self._out.data += taken
        self._out.wake()
        return len(taken)

    def _after_the_peer_left(self, size: int) -> int:
        """As TCP does: the first write after the peer closed is taken (and lost: the peer answers it with a
        reset), the next one fails."""
        if self._out.reset:
            raise BrokenPipeError(errno.EPIPE, "the peer closed its end")
        self._out.reset = True
        return size

    def recv(self, max_bytes: int, flags: int = 0) -> bytes:
        """As a non-blocking socket's ``recv`` (the server's admission drains a refused connection with it)."""
        if not self._in.data and not self._in.eof:
            raise BlockingIOError(errno.EAGAIN, "nothing to read yet")
        chunk = bytes(self._in.data[:max_bytes])
        del self._in.data[:max_bytes]
        self._in.wake()
        return chunk

    def close(self) -> None:
        """As a socket's ``close``, at once (the listener closes a refused connection so)."""
        if not self._closed:
            self._closed = True
            self._out.eof = True
            self._in.reader_gone = True
            self._in.data.clear()
            self._in.wake()
            self._out.wake()

    def shutdown(self, how: int) -> None:
        if how in (socket.SHUT_WR, socket.SHUT_RDWR):
            self._out.eof = True
            self._out.wake()

    # -- trio's stream interface

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(bytes(data))
        await trio.lowlevel.checkpoint()
        while view:
            if self._closed or self._out.eof:
                raise trio.ClosedResourceError("this end is closed for writing")
            if self._out.reader_gone:
                try:
                    self._after_the_peer_left(len(view))
                except BrokenPipeError as exc:
                    raise trio.BrokenResourceError(str(exc)) from exc
                return
            if not self._out.room:
                await self._out.changed.park()
                continue
            view = view[self.send(view):]

    async def wait_send_all_might_not_block(self) -> None:
        while not (self._out.room or self._out.reader_gone or self._closed):
            await self._out.changed.park()
        await trio.lowlevel.checkpoint()

    async def send_eof(self) -> None:
        await trio.lowlevel.checkpoint()
        if self._closed:
            raise trio.ClosedResourceError("this end is closed")
        self.shutdown(socket.SHUT_WR)

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        await trio.lowlevel.checkpoint()
        while True:
            if self._closed:
                raise trio.ClosedResourceError("this end is closed")
            if self._in.data:
                size = len(self._in.data) if max_bytes is None else max_bytes
                chunk = bytes(self._in.data[:size])
                del self._in.data[:size]
                self._in.wake()
                return chunk
            if self._in.eof:
                return b""
            await self._in.changed.park()

    async def aclose(self) -> None:
        self.close()
        await trio.lowlevel.checkpoint()


async def _in_this_thread(fn: Callable[..., Any], *args: Any, **_options: Any) -> Any:
    await trio.lowlevel.checkpoint()
    return fn(*args)


async def _in_the_writer(_writer: journal.Writer, fn: Callable[..., Any], *args: Any, **_options: Any) -> Any:
    await trio.lowlevel.checkpoint()
    return None if fn is time.sleep else fn(*args)


class _Names:
    """What trio-websocket asks of a stream's socket: the two ends' addresses."""

    def __init__(self, local: tuple[str, int], remote: tuple[str, int]) -> None:
        self._local, self._remote = local, remote

    def getsockname(self) -> tuple[str, int]:
        return self._local

    def getpeername(self) -> tuple[str, int]:
        return self._remote


Handler = Callable[[Any, Any, str, str], Awaitable[None]]
Admit = Callable[[Any, str], bool]


class MemoryNetwork:
    def __init__(self) -> None:
        self.capacity = CAPACITY
        self.address = "127.0.0.1"
        self._servers: dict[int, tuple[Handler, trio.Nursery, Admit | None]] = {}
        self._ports = itertools.count(FIRST_PORT)
        self._client_ports = itertools.count(50000)

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(trio.to_thread, "run_sync", _in_this_thread)
        monkeypatch.setattr(journal.Writer, "run", _in_the_writer)
        monkeypatch.setattr(app, "serve_tcp", self.serve)

    async def serve(self, handler: Handler, host: str, port: int, *, admit: Admit | None = None,
                    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
        """In place of ``serve_tcp``: hands each connection ``connect`` makes to ``handler``, once ``admit`` (if
        given) admitted it; a connection it refused is closed at once."""
        number = next(self._ports)
        trio.socket.set_custom_socket_factory(_Sockets(self))  # the run's, from now on: see the top
        trio.socket.set_custom_hostname_resolver(_Localhost())
        try:
            async with trio.open_nursery() as nursery:
                self._servers[number] = (handler, nursery, admit)
                task_status.started(number)
                await trio.sleep_forever()
        finally:
            del self._servers[number]

    async def connect(self, port: int) -> MemoryStream:
        handler, nursery, admit = self._servers[port]
        to_server, to_client = _Pipe(self.capacity), _Pipe(self.capacity)
        client_end = (self.address, next(self._client_ports))
        server_end = ("127.0.0.1", port)
        ours = MemoryStream(to_client, to_server, client_end, server_end)
        theirs = MemoryStream(to_server, to_client, server_end, client_end)
        if admit is not None and not admit(theirs, client_end[0]):  # type: ignore[arg-type]
            theirs.close()
        else:
            nursery.start_soon(handler, theirs, theirs, client_end[0], f"{client_end[0]}:{client_end[1]}")
        await trio.lowlevel.checkpoint()
        return ours


class _Sockets(trio.abc.SocketFactory):
    """The run's socket factory: a TCP socket is a client's end on this network; any other kind is the kernel's."""

    def __init__(self, network: MemoryNetwork) -> None:
        self.network = network

    def socket(self, family: int = socket.AF_INET, type: int = socket.SOCK_STREAM,
               proto: int = 0) -> trio.socket.SocketType:
        if family in (socket.AF_INET, socket.AF_INET6) and type == socket.SOCK_STREAM:
            return _ClientSocket(self.network, family, proto)
        return trio.socket.from_stdlib_socket(socket.socket(family, type, proto))


class _Localhost(trio.abc.HostnameResolver):
    """The run's resolver: localhost is 127.0.0.1 (trio resolves a numeric address itself); no other name is known."""

    async def getaddrinfo(self, host: bytes | None, port: bytes | str | int | None, family: int = 0,
                          type: int = 0, proto: int = 0, flags: int = 0) -> list[Any]:
        await trio.lowlevel.checkpoint()
        if host not in (b"localhost", "localhost"):
            raise socket.gaierror(socket.EAI_NONAME, f"no host {host!r} in this test")
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", ("127.0.0.1", int(port or 0)))]

    async def getnameinfo(self, sockaddr: tuple[str, int] | tuple[str, int, int, int], flags: int) -> tuple[str, str]:
        await trio.lowlevel.checkpoint()
        return str(sockaddr[0]), str(sockaddr[1])


class _ClientSocket(trio.socket.SocketType):
    """A client's TCP socket as trio's socket factory makes it: ``connect`` opens an in-memory connection to a
    server of this test (``MemoryNetwork.connect``), and the rest is that connection's client end."""

    def __init__(self, network: MemoryNetwork, family: int, proto: int) -> None:
        super().__init__()
        self._network = network
        self._family = family
        self._proto = proto
        self._end: MemoryStream | None = None
        self._closed = False
        self._shut_wr = False

    @property
    def family(self) -> socket.AddressFamily:
        return socket.AddressFamily(self._family)

    @property
    def type(self) -> socket.SocketKind:
        return socket.SOCK_STREAM

    @property
    def proto(self) -> int:
        return self._proto

    @property
    def did_shutdown_SHUT_WR(self) -> bool:
        return self._shut_wr

    def fileno(self) -> int:
        return -1 if self._closed else 1 << 20  # no descriptor: nothing may wait on it but through these methods

    def setsockopt(self, *_args: Any) -> None:
        pass  # TCP_NODELAY and the like: nothing to tune in memory

    def getsockname(self) -> Any:
        return ("0.0.0.0", 0) if self._end is None else self._end.socket.getsockname()

    def getpeername(self) -> Any:
        if self._end is None:
            raise OSError(errno.ENOTCONN, "not connected")
        return self._end.socket.getpeername()

    async def connect(self, address: Any) -> None:
        host, port = address[0], address[1]
        if host == "127.0.0.1" and port in self._network._servers and not self._closed:
            self._end = await self._network.connect(port)
            return
        await trio.lowlevel.checkpoint()
        raise ConnectionRefusedError(errno.ECONNREFUSED, f"no server in this test at {host}:{port}")

    def _connected(self) -> MemoryStream:
        if self._end is None or self._closed:
            raise OSError(errno.EBADF if self._closed else errno.ENOTCONN, "not connected")
        return self._end

    async def send(self, data: Any, flags: int = 0) -> int:
        end = self._connected()
        await trio.lowlevel.checkpoint()
        while True:
            try:
                return end.send(data)
            except BlockingIOError:
                await end.wait_send_all_might_not_block()

    async def recv(self, bufsize: int, flags: int = 0) -> bytes:
        return await self._connected().receive_some(bufsize)

    async def wait_writable(self) -> None:
        await self._connected().wait_send_all_might_not_block()

    def shutdown(self, flag: int) -> None:
        self._connected().shutdown(flag)
        self._shut_wr = self._shut_wr or flag in (socket.SHUT_WR, socket.SHUT_RDWR)

    def close(self) -> None:
        self._closed = True
        if self._end is not None:
            self._end.close()
