"""What a server WebSocket sends its client: written at once, kept while the server's coalescer is held, or queued.

Writing never blocks. A frame goes to the socket at once when it takes it (or, during a hold, with the frames that
follow it: ``server.transport.coalesce``); what the socket does not take is queued for a writer task that lives
only while the client reads slower than the server writes. The queue is bounded in frames and bytes, plus one
lapsing burst allowance (``Burst.grant``: a resume's replay); past it ``send`` returns False and the caller drops
the client. After the close frame nothing more is sent; a dropped queue keeps a partly sent frame's rest and the
close frame, so that the stream stays whole.
"""

from __future__ import annotations

import socket

import trio

from server.ops.metrics import traffic
from server.transport.burst import Burst
from server.transport.coalesce import HOLD_BYTES, Coalescer

WRITE_BATCH = 64  # queued frames a writer joins into one send


class Outbox:
    # slots: one on each of thousands of idle connections, where a dict of its fields would cost 600 bytes more
    __slots__ = ("_stream", "_sock", "_nursery", "queue_size", "queue_bytes", "burst", "_queue", "_queued_bytes",
                 "_coalescer", "_held", "_held_bytes", "writing", "_written", "closing", "broken")

    def __init__(self, stream: trio.SocketStream, sock: socket.socket, nursery: trio.Nursery, queue_size: int,
                 queue_bytes: int, coalescer: Coalescer | None) -> None:
        self._stream = stream
        self._sock = sock  # the stream's own socket, for writes that must not wait
        self._nursery = nursery
        self.queue_size = queue_size  # frames that may wait for a slow client
        self.queue_bytes = queue_bytes  # and their bytes
        self.burst = Burst()  # what it may queue beyond those bounds, once (server.transport.burst)
        # a list, not a deque: short or empty nearly always, and an empty deque costs 760 bytes against 56
        self._queue: list[bytes | memoryview] = []  # only a partly sent frame's rest is a memoryview
        self._queued_bytes = 0
        self._coalescer = coalescer
        self._held: list[bytes] | None = None  # frames kept while the coalescer is held (None: none), their bytes
        self._held_bytes = 0
        self.writing = False  # a writer task is sending the queue
        self._written = trio.Event()
        self.closing: bytes | None = None  # the close frame, once sent: nothing goes after it
        self.broken = False  # the socket failed: nothing more can be written

    @property
    def queued(self) -> int:
        return len(self._queue)

    @property
    def queued_bytes(self) -> int:
        return self._queued_bytes

    def send(self, wire: bytes) -> bool:
        """Send one frame (``server.transport.frames``). False when the client's queue is full."""
        if self.closing is not None or self.broken:
            return True
        traffic.frames_out += 1
        traffic.bytes_out += len(wire)
        if not self.writing:
            coalescer = self._coalescer
            if coalescer is not None and coalescer.depth:
                if self._held_bytes + len(wire) <= HOLD_BYTES:
                    if self._held is None:
                        coalescer.keeping(self)
                        self._held = [wire]
                    else:
                        self._held.append(wire)
                    self._held_bytes += len(wire)
                    return True
                self.release_held()  # as much as a hold may keep: out now, and this frame on as if not held
            if not self.writing:
                self._write(wire)
                return True
        if len(self._queue) >= self.queue_size or self._queued_bytes + len(wire) > self.queue_bytes:
            if not self.burst.take(len(wire)):
                return False
        self._append(wire)
        return True

    def release_held(self) -> None:
        """Write the frames kept during a hold, as one (``server.transport.coalesce``)."""
        held, self._held = self._held, None
        if held is None:
            return
        self._held_bytes = 0
        if not self.broken:
            self.put(held[0] if len(held) == 1 else b"".join(held))

    def put(self, data: bytes) -> None:
        """Write ``data`` (a control frame, or frames kept) after everything sent before it, outside the bounds."""
        self.release_held()
        if self.writing:
            self._append(data)
        else:
            self._write(data)

    def close(self, frame: bytes) -> None:
        """Send the close frame, after what is queued, and nothing after it."""
        self.closing = frame
        if not self.broken:
            self.put(frame)

    def drop(self) -> None:
        """Forget the frames not yet sent (the client stopped reading), but the rest of one partly sent
        and the close frame: the stream must stay whole for the close to mean anything."""
        self._held, self._held_bytes = None, 0
        keep = [item for item in self._queue if isinstance(item, memoryview) or item is self.closing]
        self._queue.clear()
        self._queue.extend(keep)
        self._queued_bytes = sum(len(item) for item in keep)

    async def wait_written(self) -> None:
        """Until the queue is sent (at once if nothing is queued)."""
        if self.writing:
            await self._written.wait()

    def _append(self, data: bytes | memoryview) -> None:
        self._queue.append(data)
        self._queued_bytes += len(data)

    def _write(self, data: bytes) -> None:
        try:
            sent = self._sock.send(data)
        except BlockingIOError:
            sent = 0
        except OSError:
            self.broken = True
            return
        if sent < len(data):
            self._append(memoryview(data)[sent:])
            self.writing = True
            self._written = trio.Event()
            self._nursery.start_soon(self._writer)

    async def _writer(self) -> None:
        """Only while the client reads slower than the server writes: sends the queue, then ends."""
        queue = self._queue
        try:
            while queue:
                batch = queue[:WRITE_BATCH]
                del queue[:WRITE_BATCH]
                data = b"".join(batch)
                self._queued_bytes -= len(data)
                await self._stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self.broken = True
            queue.clear()
            self._queued_bytes = 0
        self.writing = False
        self._written.set()
