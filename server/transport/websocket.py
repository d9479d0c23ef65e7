"""A server WebSocket on a trio socket stream: our reader takes the client's frames; its ``Outbox`` sends ours.

Reading: a connection's reader waits for bytes (``wait_input``) and parses them in its address's turn
(``receive_nowait``, ``server.runtime.turns``) with ``server.transport.wsreader.FrameReader``. This module answers the pings
``on_control`` (the connection's rates) lets through, times its own (``server.transport.roundtrip``), echoes a
close, and closes with the reader's code on a violation, after the answers to what was read before.

Writing never blocks, and is bounded: ``server.transport.outbox``.

Closing: ``aclose`` flushes, waits briefly for the client's close frame, then closes TCP. A client closed for a
violation is only drained briefly (``server.transport.sockets``), then reset.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import trio

from server.ops import metrics
from server.transport.limits import spread
from server.ops.metrics import traffic
from server.transport import frames
from server.transport.coalesce import Coalescer
from server.transport.outbox import Outbox
from server.transport.roundtrip import RoundTrip
from server.transport.sockets import drain, reset, taken, unsent
from server.transport.wsreader import CLOSE, MESSAGE, PING, PONG, VIOLATION, FrameReader

RECEIVE_BYTES = 65536
PARSE_BYTES = 1024  # what receive_nowait parses at a time
FLUSH_S = 2.0  # once the connection is over, how long its last frames and the close handshake may take
DISCARD_PAUSE_S = 0.02  # a client closed for what it sent: one read of it dropped unparsed, then this pause


class WebSocket:
    def __init__(self, stream: trio.SocketStream, sock: socket.socket, received: bytes, max_message: int,
                 queue_size: int, nursery: trio.Nursery, queue_bytes: int = 1 << 20,
                 coalescer: Coalescer | None = None) -> None:
        self._stream = stream
        self._sock = sock  # the stream's own socket: reads, and the shutdown and reset of ``aclose``
        self._nursery = nursery
        self.max_message = max_message
        self.out = Outbox(stream, sock, nursery, queue_size, queue_bytes, coalescer)  # what goes to the client
        self.burst = self.out.burst  # what its queue may hold beyond its bounds, once (``Outbox``)
        self.last_heard = trio.current_time()  # when the client last sent anything (a pong included)
        self.rtt = RoundTrip()  # the round trip of our pings: rtt.ms (smoothed) and rtt.last_ms
        self._reader = FrameReader(max_message)
        # asked with each ping's and pong's payload length: False drops it unanswered (the connection's rates)
        self.on_control: Callable[[int], bool] | None = None
        self._owed: tuple[int, str] | None = None  # a close read after messages not yet taken: sent once they are
        self._violated = False  # the client broke the protocol: only a short drain of what follows (``aclose``)
        # a list, not a deque: short or empty nearly always, and an empty deque costs 760 bytes (a block of 64
        # slots) against 56, on each of thousands of idle connections
        self._messages: list[bytes | str] = []
        self._received: bytes | memoryview = received  # read and not yet parsed: first what came with the handshake
        # a kernel socket's last read left it empty (``_recv``); None: reads go through the stream
        self._drained: bool | None = False if isinstance(sock, socket.socket) else None
        self.close_code: int | None = None  # of the close frame sent
        self._unheard = False  # what comes after our close frame is dropped unparsed (``close``)
        self.peer_closed = False  # the client sent its close frame
        self._eof = False  # no more messages
        self._tcp_eof = False  # the client's end of the stream (or a broken one)

    def send(self, wire: bytes) -> bool:
        """Send one frame (``server.transport.frames``). False when the client's queue is full (``Outbox.send``)."""
        return self.out.send(wire)

    def drop_queue(self) -> None:
        """Forget the frames not yet sent, but what keeps the stream whole (``Outbox.drop``)."""
        self.out.drop()

    @property
    def broken(self) -> bool:
        """The socket failed: nothing more can be written."""
        return self.out.broken

    def ping(self) -> None:
        """Send a ping, timed until its pong comes (``rtt``); while one is out, another carries its payload."""
        if self.out.closing is None and not self.out.broken:
            self.out.put(frames.control(frames.PING, self.rtt.ping(trio.current_time())))

    def close(self, code: int, reason: str = "", *, unheard: bool = False, echo: bool = False) -> None:
        """Send a close frame after what is queued, and nothing after it. ``unheard``: what the client still
        sends is not parsed for its close frame, only dropped, a read at a time with a pause between (``aclose``):
        a flooder closed keeps sending as fast as it can, and parsing that for 2 s, sixteen flooders closed at
        once, was 50 ms stalls of every table. ``echo``: the client's own close, echoed (counted apart)."""
        if self.out.closing is None:
            metrics.count_close(None if echo else code)
            self.close_code = code
            self._unheard = unheard
            self.out.close(frames.close(code, reason))

    # -- reading

    async def receive(self) -> bytes | str | None:
        """The next whole message (``str`` for a text message), or None once the client closed, the
        connection broke, or a protocol violation was answered with a close frame."""
        while not self._messages:
            if self._eof:
                self._close_owed()
                return None
            await self._read()
        return self._messages.pop(0)

    async def wait_input(self) -> None:
        """Until ``receive_nowait`` has something to look at: bytes read from the client (kept as they are:
        they are parsed by ``receive_nowait``, in the reader's turn, server/runtime/turns.py), a message, or the end."""
        if self._messages or self._received or self._eof:
            return
        data = await self._receive_some()
        if data:
            self._received = data
        else:
            self._eof = self._tcp_eof = True

    async def _recv(self) -> bytes:
        """A read of the kernel socket. Once a read left it empty (it returned less than asked), the next one waits
        until the socket is readable first, instead of trying and being told to wait: a client that sends a
        message every few seconds costs one read a message, not two. A read that did not wait still lets the
        other tasks run, as every read of a stream does."""
        sock = self._sock
        try:
            while True:
                if self._drained:
                    await trio.lowlevel.wait_readable(sock)
                try:
                    data = sock.recv(RECEIVE_BYTES)
                except BlockingIOError:
                    self._drained = True
                    continue
                if not self._drained:
                    await trio.lowlevel.cancel_shielded_checkpoint()  # what was read is never lost
                break
        except (OSError, trio.BrokenResourceError, trio.ClosedResourceError):
            return b""
        self._drained = len(data) < RECEIVE_BYTES
        return data

    def receive_nowait(self) -> bytes | str | None:
        """The next whole message, parsing what ``wait_input`` read if need be, ``PARSE_BYTES`` of it a call at most
        (64 KiB of small frames, parsed at once, would be milliseconds of one address's turn: 13 ms of empty
        fragments); None when there is none yet (call again: what was read is not all parsed, or wait for more) or
        the connection is over (``over``)."""
        if not self._messages and self._received:
            data = memoryview(self._received)
            self._received = data[PARSE_BYTES:]
            self._feed(bytes(data[:PARSE_BYTES]))
        if self._messages:
            return self._messages.pop(0)
        self._close_owed()
        return None

    def _close_owed(self) -> None:
        """The close read after messages, sent once they are taken (and answered: the caller handled them)."""
        if self._owed is not None:
            code, reason = self._owed
            self._owed = None
            self.close(code, reason, echo=self.peer_closed)

    @property
    def over(self) -> bool:
        """No message will come any more."""
        return self._eof and not self._messages

    async def _receive_some(self) -> bytes:
        if self._drained is None:  # not a kernel socket (a test's stream in memory): the stream's own read
            try:
                data = await self._stream.receive_some(RECEIVE_BYTES)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
        else:
            data = await self._recv()
        self.last_heard = trio.current_time()
        traffic.bytes_read += len(data)
        return data

    async def _read(self) -> None:
        if self._received:
            data, self._received = bytes(self._received), b""
        else:
            data = await self._receive_some()
        if not data:
            self._eof = self._tcp_eof = True
            return
        self._feed(data)

    def _feed(self, data: bytes) -> None:
        for kind, value in self._reader.feed(data):
            if kind == MESSAGE:
                traffic.frames_in += 1
                traffic.bytes_in += len(value)
                self._messages.append(value)
            elif kind == PING or kind == PONG:  # within the rates (``on_control``; once closed, none are asked)
                if self.out.closing is not None or self.on_control is None or self.on_control(len(value)):
                    if kind == PONG:  # timed to when the bytes that held it were read, not to its turn to be parsed
                        self.rtt.pong(value, self.last_heard)
                    elif self.out.closing is None and not self.out.broken:
                        self.out.put(frames.control(frames.PONG, value))
            else:  # CLOSE, the client's (echoed: 1005, no code, is echoed with none), or VIOLATION
                self._eof = True
                self.peer_closed = self.peer_closed or kind == CLOSE
                if kind == VIOLATION:  # nothing more is parsed: what was read and not yet is let go at once
                    self._violated, self._received = True, b""
                if self._messages:  # sent once the messages read before it are taken (``_close_owed``), so that
                    self._owed = value  # their answers are not cut off by it
                else:
                    self.close(*value, echo=self.peer_closed)

    # -- the end

    async def aclose(self) -> None:
        """Flush, then, if we sent a close frame first, read (and drop) what the client still sends until
        its close frame or its end of stream: closing a socket with unread data resets the connection,
        which may destroy the close frame before the client reads it. A client whose close came first is not reset
        for what it has not yet taken: it reads on to our close. All within ``FLUSH_S`` (up to a tenth more, at
        random: clients dropped together, as a table's stalled watchers are, do not all time out at once)."""
        self._close_owed()
        with trio.move_on_after(spread(FLUSH_S)):
            await self.out.wait_written()
            if self.out.closing is not None and not (self.peer_closed or self.out.broken):
                try:
                    self._sock.shutdown(socket.SHUT_WR)
                except OSError:
                    pass  # the client is gone already
                if self._violated:  # what the client still sends: a short drain, then (without reading) until it
                    self._tcp_eof = await drain(self._stream)  # took our close frame
                    if not self._tcp_eof:
                        await taken(self._sock)
                while not (self.peer_closed or self._tcp_eof or self._violated):
                    self._messages.clear()
                    if self._unheard:
                        self._tcp_eof = not await self._receive_some()
                        await trio.sleep(DISCARD_PAUSE_S)
                    else:
                        await self._read()
        # a client that does not read, or is not read: reset, so neither end waits on the other; but one whose close
        # came first reads on until ours, which may still be in flight with the pongs before it (a reset drops them)
        if self.out.writing or (unsent(self._sock) and not self.peer_closed) or (self._violated and not self._tcp_eof):
            reset(self._sock)
        self._nursery.cancel_scope.cancel()  # a writer still waiting on a client that does not read
        await trio.aclose_forcefully(self._stream)


@asynccontextmanager
async def open_websocket(stream: trio.SocketStream, sock: socket.socket, received: bytes, *, max_message: int,
                         queue_size: int, queue_bytes: int,
                         coalescer: Coalescer | None = None) -> AsyncIterator[WebSocket]:
    """A ``WebSocket`` past the handshake; closed (flushed, close handshake, TCP) on the way out."""
    async with trio.open_nursery() as nursery:
        ws = WebSocket(stream, sock, received, max_message, queue_size, nursery, queue_bytes, coalescer)
        try:
            yield ws
        finally:
            with trio.CancelScope(shield=True):
                await ws.aclose()
