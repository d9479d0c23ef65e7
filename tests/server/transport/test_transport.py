"""The WebSocket layer on raw TCP: frames written by hand, the server's frames read with wsproto's client
side. RFC 6455 behaviour (pings, close codes, violations), the size refusal from the header, frames
split across reads, slow readers, and frames shared between connections."""

from __future__ import annotations

import gc
import os
import socket
import struct
import weakref
from collections import deque
from typing import Any

import msgpack
import pytest
import trio
from wsproto.connection import Connection, ConnectionType
from wsproto.events import BytesMessage, CloseConnection, Event, Ping, Pong
from wsproto.frame_protocol import FrameProtocol

from protocol.codec import encode
from protocol.messages import PROTOCOL_VERSION
from server.transport.limits import ClientLimits
from server.ops.metrics import traffic
from server.transport import burst, frames, sockets, websocket, wsreader
from server.transport.websocket import WebSocket

HANDSHAKE = (b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
BINARY, TEXT, CONTINUATION, CLOSE, PING, PONG = 0x2, 0x1, 0x0, 0x8, 0x9, 0xA


def client_frame(opcode: int, payload: bytes, *, fin: bool = True, announce: int | None = None,
                 masked: bool = True, rsv: int = 0) -> bytes:
    """A client frame; ``announce`` claims another payload length than the payload sent."""
    n = len(payload) if announce is None else announce
    head = bytes([(0x80 if fin else 0) | rsv | opcode])
    mask_bit = 0x80 if masked else 0
    if n < 126:
        head += bytes([mask_bit | n])
    elif n < 65536:
        head += bytes([mask_bit | 126]) + struct.pack("!H", n)
    else:
        head += bytes([mask_bit | 127]) + struct.pack("!Q", n)
    if not masked:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


class Wire:
    """A WebSocket client that sends raw bytes and parses what the server sends with wsproto. The server's pings
    (to time the round trip) are left unanswered and skipped, unless ``pings`` is set."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.parser = Connection(ConnectionType.CLIENT)
        self.events: deque[Event] = deque()
        self.eof = False
        self.pings = False

    @classmethod
    async def open(cls, server: Any, hello: bool = True) -> "Wire":
        stream = await trio.open_tcp_stream("127.0.0.1", server.port)
        await stream.send_all(HANDSHAKE)
        head = b""
        while b"\r\n\r\n" not in head:
            head += await stream.receive_some(4096)
        head, rest = head.split(b"\r\n\r\n", 1)
        assert head.startswith(b"HTTP/1.1 101 "), head
        wire = cls(stream)
        wire.parser.receive_data(rest)
        if hello:
            await wire.send(encode({"type": "hello", "id": 0, "version": PROTOCOL_VERSION, "client": "wire"}))
            assert (await wire.message())["type"] == "welcome"
        return wire

    async def send(self, payload: bytes, opcode: int = BINARY) -> None:
        await self.stream.send_all(client_frame(opcode, payload))

    async def event(self) -> Event | None:
        """The next event from the server, or None at the end of the stream."""
        while isinstance(event := await self._event(), Ping) and not self.pings:
            pass
        return event

    async def _event(self) -> Event | None:
        self.events.extend(self.parser.events())
        with trio.fail_after(10):
            while not self.events:
                if self.eof:
                    return None
                try:
                    data = await self.stream.receive_some(65536)
                except trio.BrokenResourceError:
                    data = b""
                if not data:
                    self.eof = True
                    continue
                self.parser.receive_data(data)
                self.events.extend(self.parser.events())
        return self.events.popleft()

    async def message(self) -> dict[str, Any]:
        event = await self.event()
        assert isinstance(event, BytesMessage), event
        return msgpack.unpackb(event.data)

    async def closed(self) -> CloseConnection:
        """Skip to the server's close frame, and check the server then ends the stream."""
        while not isinstance(event := await self.event(), CloseConnection):
            assert event is not None, "the stream ended without a close frame"
        return event


# ------------------------------------------------------------------ size, from the header


async def test_a_header_announcing_too_big_a_message_is_closed_1009_before_its_payload(server):
    wire = await Wire.open(server)
    limit = server.config.limits.max_frame_bytes
    await wire.stream.send_all(client_frame(BINARY, b"", announce=limit + 1))  # the header alone
    close = await wire.closed()
    assert close.code == 1009 and str(limit) in close.reason
    assert not server.connections or all(c.closed for c in server.connections.values())


async def test_the_1009_close_reaches_a_client_that_keeps_sending_its_payload(server):
    wire = await Wire.open(server)
    await wire.stream.send_all(client_frame(BINARY, b"", announce=50_000_000))
    junk = b"\x00" * 65536

    async def keep_sending() -> None:
        try:
            for _ in range(64):
                await wire.stream.send_all(junk)
        except trio.BrokenResourceError:
            pass

    async with trio.open_nursery() as nursery:
        nursery.start_soon(keep_sending)
        assert (await wire.closed()).code == 1009
        nursery.cancel_scope.cancel()


async def test_a_fragmented_message_counts_all_its_frames(server):
    wire = await Wire.open(server)
    piece = b"\x00" * 30_000
    for _ in range(2):
        await wire.stream.send_all(client_frame(BINARY if _ == 0 else CONTINUATION, piece, fin=False))
    await wire.stream.send_all(client_frame(CONTINUATION, piece, fin=True))
    assert (await wire.closed()).code == 1009


async def test_a_fragmented_message_is_closed_1009_once_its_fragments_with_their_headers_reach_the_bound(server):
    wire = await Wire.open(server)
    limit = server.config.limits.max_frame_bytes
    piece = client_frame(CONTINUATION, b"\x00" * 100, fin=False)  # 106 bytes with its header and its mask
    await wire.stream.send_all(client_frame(BINARY, b"", fin=False) + piece * (limit // len(piece)))
    await wire.send(b"still there", PING)  # within the bound: still answered
    assert isinstance(await wire.event(), Pong)
    await wire.stream.send_all(piece)  # 100 bytes more of payload would still be within it
    assert (await wire.closed()).code == 1009


async def test_a_message_of_empty_fragments_is_closed_1009_after_the_most_frames_a_message_may_come_in(server):
    wire = await Wire.open(server)
    empty = client_frame(CONTINUATION, b"", fin=False)  # 6 bytes: its header and its mask
    try:
        await wire.stream.send_all(client_frame(BINARY, b"", fin=False) + empty * wsreader.MAX_FRAGMENTS)
    except trio.BrokenResourceError:
        pass
    close = await wire.closed()
    assert close.code == 1009 and "frames" in close.reason


async def test_what_a_client_refused_1009_still_sends_is_read_no_further_than_a_short_drain(server):
    wire = await Wire.open(server)
    before = traffic.bytes_read
    junk = client_frame(BINARY, b"", announce=100_000_000) + b"\x00" * (1 << 20)
    sent = 0

    async def keep_sending() -> None:
        nonlocal sent
        try:
            for _ in range(64):  # 64 MB, far more than the kernel's buffers hold
                await wire.stream.send_all(junk)
                sent += len(junk)
        except trio.BrokenResourceError:
            pass

    async with trio.open_nursery() as nursery:
        nursery.start_soon(keep_sending)
        assert (await wire.closed()).code == 1009  # its close still reaches it
        assert await wire.event() is None  # and then the end (a reset once the drain is over)
    read = traffic.bytes_read - before
    assert read <= websocket.RECEIVE_BYTES + sockets.DRAIN_BYTES and sent < 64 * len(junk), (read, sent)


async def test_a_request_and_a_bad_frame_in_one_read_get_the_answer_then_the_close(server):
    wire = await Wire.open(server)
    await wire.stream.send_all(client_frame(BINARY, encode({"type": "ping", "id": 7}))
                               + client_frame(BINARY, b"\x80", masked=False))
    assert (await wire.message())["re"] == 7  # answered before the close, not dropped after it
    assert (await wire.closed()).code == 1002


async def test_requests_and_the_clients_close_in_one_read_are_answered_before_the_echo(server):
    wire = await Wire.open(server)
    pings = b"".join(client_frame(BINARY, encode({"type": "ping", "id": n})) for n in range(1, 7))
    await wire.stream.send_all(pings + client_frame(CLOSE, struct.pack("!H", 1000)))
    assert [(await wire.message())["re"] for _ in range(6)] == [1, 2, 3, 4, 5, 6]
    assert (await wire.closed()).code == 1000


@pytest.mark.parametrize("opcode", [PING, PONG])
async def test_pings_and_pongs_over_the_rate_are_refused_and_close_the_connection_1008(server, opcode):
    wire = await Wire.open(server)
    rate = server.config.client
    flood = int(rate.messages_per_s * rate.burst_s) + 200  # the burst, and far more than refills meanwhile
    try:
        await wire.stream.send_all(b"".join(client_frame(opcode, b"%d" % n) for n in range(flood)))
    except trio.BrokenResourceError:
        pass
    pongs = refused = 0
    while not isinstance(event := await wire.event(), CloseConnection):
        assert event is not None, "the stream ended without a close frame"
        if isinstance(event, Pong):
            pongs += 1
        elif isinstance(event, BytesMessage):
            refused += msgpack.unpackb(event.data)["code"] == "rate_limited"
    # each refusal a strike; a ping taken as the budget refills meanwhile takes one away
    assert event.code == 1008 and refused >= rate.strikes and pongs < flood


async def test_a_connection_closed_is_freed_at_once_not_left_to_the_cycle_collector(server):
    """The server's collector reclaims cycles only every 10 minutes (server/ops/collector.py): a connection must hold
    none, or every connection made until then stays in memory."""
    gc.disable()
    try:
        wire = await Wire.open(server)
        await wire.stream.send_all(client_frame(PING, b"counted"))
        assert isinstance(await wire.event(), Pong)
        freed = weakref.ref(next(iter(server.connections.values())))
        await wire.stream.send_all(client_frame(BINARY, b"\x80", masked=False))
        assert (await wire.closed()).code == 1002
        await wire.stream.aclose()
        with trio.fail_after(5):
            while server._websockets:
                await trio.sleep(0.01)
        assert freed() is None
    finally:
        gc.enable()


async def test_pings_count_towards_the_addresss_budget_shared_by_its_connections(start_server):
    # 50 at once, then one every 2 s: nothing refills while the test runs
    server = await start_server(client=ClientLimits(address_messages_per_s=0.5, burst_s=100.0))
    one, two = await Wire.open(server), await Wire.open(server)
    await one.stream.send_all(b"".join(client_frame(PING, b"") for _ in range(60)))
    await two.send(encode({"type": "ping", "id": 3}))
    refused = await two.message()
    assert refused["code"] == "rate_limited" and "address" in refused["message"]


# ------------------------------------------------------------------ RFC 6455 control frames


async def test_a_ping_is_answered_with_its_payload(server):
    wire = await Wire.open(server)
    await wire.send(b"are you there", PING)
    pong = await wire.event()
    assert isinstance(pong, Pong) and pong.payload == b"are you there"


async def test_the_server_times_its_pings_pongs_last_and_smoothed_and_an_unasked_pong_times_nothing(
        start_server, autojump_clock):
    server = await start_server(client=ClientLimits(rtt_ping_s=5))
    wire = await Wire.open(server)
    wire.pings = True
    ws = next(iter(server.connections.values())).ws
    for delay_s, last, smoothed in ((0.120, 120, 120), (0.040, 40, 100), (0.040, 40, 85)):
        ping = await wire.event()  # the first once the hello is answered, then one every 5 s
        assert isinstance(ping, Ping)
        await trio.sleep(delay_s)
        await wire.send(b"not the ping's payload", PONG)  # unasked (RFC 6455 allows it): it times nothing
        await wire.send(ping.payload, PONG)
        await wire.send(encode({"type": "ping", "id": 1}))
        pong = await wire.message()
        assert (pong["rtt_last_ms"], pong["rtt_ms"]) == (last, smoothed) == (ws.rtt.last_ms, ws.rtt.ms)


@pytest.mark.parametrize(("payload", "code"), [(struct.pack("!H", 4001) + b"bye", 4001), (b"", 1005),
                                               (struct.pack("!H", 1000), 1000)])
async def test_the_clients_close_code_is_echoed_and_the_connection_ends(server, payload, code):
    wire = await Wire.open(server)
    await wire.send(payload, CLOSE)
    close = await wire.closed()
    assert close.code == code
    assert await wire.event() is None  # and the server closed TCP


@pytest.mark.parametrize(("frame", "code"), [
    (client_frame(BINARY, b"\x80", masked=False), 1002),  # a client must mask
    (client_frame(BINARY, b"\x80", rsv=0x40), 1002),  # no extension was negotiated
    (client_frame(CONTINUATION, b"\x80"), 1002),  # nothing to continue
    (client_frame(0x3, b""), 1002),  # a reserved opcode
    (client_frame(PING, b"", fin=False), 1002),  # a fragmented control frame
    (client_frame(TEXT, b"\xff\xfe"), 1007),  # not UTF-8
], ids=["unmasked", "reserved-bit", "stray-continuation", "reserved-opcode", "fragmented-ping", "not-utf8"])
async def test_protocol_violations_are_closed_with_their_rfc6455_codes(server, frame, code):
    wire = await Wire.open(server)
    await wire.stream.send_all(frame)
    assert (await wire.closed()).code == code
    async with trio.open_nursery():  # the server goes on
        other = await Wire.open(server)
        await other.send(encode({"type": "ping", "id": 5}))
        assert (await other.message())["type"] == "pong"


async def test_a_text_frame_is_refused_malformed_then_closed_1008(server):
    wire = await Wire.open(server)
    await wire.send(b'{"type": "ping"}', TEXT)
    error = await wire.message()
    assert error["type"] == "error" and error["code"] == "malformed"
    assert (await wire.closed()).code == 1008


# ------------------------------------------------------------------ framing across reads


async def test_frames_split_across_tcp_reads_and_fragmented_messages_are_reassembled(server):
    stream = await trio.open_tcp_stream("127.0.0.1", server.port)
    wire = Wire(stream)
    hello = client_frame(BINARY, encode({"type": "hello", "id": 0, "version": PROTOCOL_VERSION, "client": "slow"}))
    head = HANDSHAKE + hello
    for i in range(len(head)):  # one byte per write, handshake included
        await stream.send_all(head[i:i + 1])
        await trio.sleep(0.001)
    reply = b""
    while b"\r\n\r\n" not in reply:
        reply += await stream.receive_some(4096)
    wire.parser.receive_data(reply.split(b"\r\n\r\n", 1)[1])
    assert (await wire.message())["type"] == "welcome"
    ping = encode({"type": "ping", "id": 9})
    parts = [client_frame(BINARY, ping[:3], fin=False), client_frame(PING, b"mid"),
             client_frame(CONTINUATION, ping[3:6], fin=False), client_frame(CONTINUATION, ping[6:])]
    data = b"".join(parts)
    for i in range(0, len(data), 5):
        await stream.send_all(data[i:i + 5])
        await trio.sleep(0.001)
    first = await wire.event()
    assert isinstance(first, Pong) and first.payload == b"mid"  # a control frame may come between fragments
    pong = await wire.message()
    assert pong["type"] == "pong" and pong["re"] == 9


# ------------------------------------------------------------------ writing: at once, or queued, or dropped


async def _socket_pair(queue_size: int, nursery: trio.Nursery,
                       queue_bytes: int = 1 << 20) -> tuple[WebSocket, socket.socket]:
    ours, theirs = socket.socketpair()
    for sock, option in ((ours, socket.SO_SNDBUF), (theirs, socket.SO_RCVBUF)):
        sock.setsockopt(socket.SOL_SOCKET, option, 4096)
    ours.setblocking(False)
    theirs.setblocking(False)
    stream = trio.SocketStream(trio.socket.from_stdlib_socket(ours))
    return WebSocket(stream, ours, b"", 65536, queue_size, nursery, queue_bytes), theirs


def _drain(sock: socket.socket) -> int:
    got = 0
    try:
        while chunk := sock.recv(65536):
            got += len(chunk)
    except BlockingIOError:
        pass
    return got


async def test_a_stalled_reader_is_refused_after_its_queue_while_a_reading_one_gets_everything():
    wire = frames.shared(b"\x81\xa4type\xa5event" + b"x" * 1000)
    async with trio.open_nursery() as nursery:
        stalled, _stalled_peer = await _socket_pair(8, nursery)
        reading, reading_peer = await _socket_pair(8, nursery)
        received = 0
        accepted = 0
        for n in range(500):
            if stalled.send(wire):
                accepted += 1
            assert reading.send(wire)
            if n % 4 == 0:
                await trio.sleep(0.001)  # the writer task of the reading one runs
                received += _drain(reading_peer)
        assert stalled.out.queued == 8 and accepted < 500  # the kernel's buffers, then 8 frames, then refused
        while reading.out.queued or received < 500 * len(wire):
            await trio.sleep(0.001)
            received += _drain(reading_peer)
        assert received == 500 * len(wire)
        nursery.cancel_scope.cancel()


async def test_a_frame_the_socket_takes_is_written_at_once_without_a_task(monkeypatch):
    async with trio.open_nursery() as nursery:
        ws, peer = await _socket_pair(8, nursery)
        started: list[object] = []
        monkeypatch.setattr(nursery, "start_soon", lambda *a: started.append(a))
        assert ws.send(frames.frame(b"hi"))
        assert peer.recv(100) == b"\x82\x02hi" and started == [] and ws.out.queued == 0
        nursery.cancel_scope.cancel()


async def test_a_stalled_readers_queue_is_bounded_in_bytes_as_well_as_frames():
    wire = frames.shared(b"\x81\xa4type\xa5event" + b"x" * 10_000)
    async with trio.open_nursery() as nursery:
        stalled, _peer = await _socket_pair(1000, nursery, queue_bytes=50_000)
        accepted = sum(stalled.send(wire) for _ in range(100))
        assert stalled.out.queued_bytes <= 50_000 and accepted < 100
        nursery.cancel_scope.cancel()


async def test_a_burst_allowance_is_granted_once_and_spent_not_refilled():
    wire = frames.shared(b"\x81\xa4type\xa5event" + b"x" * 1000)
    async with trio.open_nursery() as nursery:
        stalled, _peer = await _socket_pair(4, nursery)
        while stalled.send(wire):
            pass
        full = stalled.out.queued
        stalled.burst.grant(3, 1 << 20)
        assert [stalled.send(wire) for _ in range(4)] == [True, True, True, False]
        stalled.burst.grant(3, 1 << 20)  # asking again (a second resume) gives nothing
        assert not stalled.send(wire) and stalled.out.queued == full + 3
        nursery.cancel_scope.cancel()


async def test_a_burst_allowance_not_spent_in_time_lapses(monkeypatch):
    """A seat that resumed once and never reads cannot keep its replay's room for later: it lapses."""
    monkeypatch.setattr(burst, "LAPSE_S", 0.05)
    wire = frames.shared(b"\x81\xa4type\xa5event" + b"x" * 1000)
    async with trio.open_nursery() as nursery:
        stalled, _peer = await _socket_pair(4, nursery)
        while stalled.send(wire):
            pass
        full = stalled.out.queued
        stalled.burst.grant(3, 1 << 20)
        assert stalled.send(wire)  # within its time: spent
        await trio.sleep(burst.LAPSE_S)
        while stalled.send(wire):  # what the writer gave room for meanwhile, but nothing beyond the bounds
            pass
        assert stalled.burst.frames == 0 and stalled.out.queued <= full + 1
        stalled.burst.grant(3, 1 << 20)  # and a later resume does not grant it again
        assert not stalled.send(wire)
        nursery.cancel_scope.cancel()


async def test_a_client_that_never_takes_its_last_frames_is_reset_not_left_to_the_kernel(monkeypatch):
    """A socket closed with frames the client never took would stay in the kernel, probing a closed window,
    and a client blocked sending to us would wait on it; after the flush time it is reset instead."""
    monkeypatch.setattr(websocket, "FLUSH_S", 0.05)
    listener = socket.create_server(("127.0.0.1", 0))
    theirs = socket.create_connection(listener.getsockname())
    ours, _ = listener.accept()
    listener.close()
    theirs.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    ours.setblocking(False)
    wire = frames.shared(b"\x81\xa4type\xa5event" + b"x" * 1000)
    async with trio.open_nursery() as nursery:
        ws = WebSocket(trio.SocketStream(trio.socket.from_stdlib_socket(ours)), ours, b"", 65536, 64, nursery)
        while ws.send(wire) and ws.out.queued < 32:
            pass
        assert ws.out.queued  # the client took nothing: the rest waits in our queue
        await trio.sleep(0.01)  # the writer takes a batch: the kernel's buffers fill with it
        ws.close(1008, "too slow")
        ws.drop_queue()
        await ws.aclose()
    theirs.settimeout(5)
    with pytest.raises(ConnectionResetError):
        while theirs.recv(65536):
            pass
    theirs.close()


async def test_what_a_client_closed_unheard_still_sends_is_dropped_unparsed_and_it_gets_its_close(autojump_clock):
    """A flooder closed keeps sending: what it sends after our close frame is read and dropped, a read at a
    time with a pause between, never parsed; it still gets the close frame, and the end once it stops."""
    listener = socket.create_server(("127.0.0.1", 0))
    theirs = trio.socket.from_stdlib_socket(socket.create_connection(listener.getsockname()))
    ours, _ = listener.accept()
    listener.close()
    ours.setblocking(False)
    flood = client_frame(BINARY, b"\x80" * 1000) * 60
    parsed: list[int] = []
    got = b""
    async with trio.open_nursery() as nursery:
        ws = WebSocket(trio.SocketStream(trio.socket.from_stdlib_socket(ours)), ours, b"", 65536, 64, nursery)
        real_feed = ws._reader.feed
        ws._reader.feed = lambda data: (parsed.append(len(data)), real_feed(data))[1]
        ws.close(1008, "flooding", unheard=True)

        async def flooder() -> None:
            nonlocal got
            for _ in range(20):
                await theirs.send(flood)
                await trio.sleep(0.01)
            while chunk := await theirs.recv(65536):
                got += chunk
            theirs.close()

        nursery.start_soon(flooder)
        await ws.aclose()
    assert not parsed
    assert got.startswith(b"\x88") and b"flooding" in got  # the close frame, then the end


# ------------------------------------------------------------------ one encoding for many connections


def test_a_payload_sent_to_many_connections_is_framed_once(monkeypatch):
    made: list[bytes] = []
    real = frames.frame
    monkeypatch.setattr(frames, "frame", lambda p: (made.append(p), real(p))[1])
    event = encode({"type": "event", "seq": 1})
    wires = set()
    for n in range(6000):
        wires.add(id(frames.shared(event)))
        if n % 100 == 0:
            frames.shared(encode({"type": "view", "n": n}))  # other frames come in between
    assert made.count(event) == 1 and len(wires) == 1


@pytest.mark.parametrize("size", [0, 1, 125, 126, 65535, 65536, 70000])
def test_our_frames_are_wsprotos_server_frames(size):
    payload = os.urandom(size)
    assert frames.frame(payload) == bytes(FrameProtocol(client=False, extensions=[]).send_data(payload))
