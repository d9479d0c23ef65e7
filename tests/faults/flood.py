"""The flooders, each run in a process of its own so that their work does not slow the normal table's
client (tests/faults/test_floods.py starts them):

    python -m tests.faults.flood KIND --port PORT --count N --seconds S

KIND is one of:

All come from 127.0.0.2 (``idle``: from .2 upwards), as another host would: the server's bounds per address
then fall on the flooder, not on the normal table's clients.

* ``rate``: one client sending pings as fast as its socket takes them, reading every answer; it
  reconnects whenever the server closes it. Reports the pongs per second it got (its rate limit) and the
  ``rate_limited`` errors and closes.
* ``handshakes``: N connections that never finish their handshake: a third send nothing, a third half a
  request head, a third a whole WebSocket upgrade but never ``hello``. Reports how many the server closed
  and the longest one held.
* ``slowloris``: N connections trickling a WebSocket upgrade's head one byte a second. Reports as above.
* ``stalled``: a client with a small receive buffer that watches a table and asks for its view at just
  under the rate limit, and never reads; again after each time the server drops it. Reports the drops and
  the seconds to each.
* ``busy``: N connections spread over ``--addresses`` source addresses (127.0.0.2 upwards), each sending
  ``--rate`` pings a second (in tenths of a second's batches), reading and dropping every byte the server sends
  without parsing it (so the flooder keeps up); it opens again whatever the server closes or refuses, half a
  second later. Reports what it sent, the connections it opened and the refusals and closes.
* ``idle``: N connections through the whole handshake and ``hello``, then silent, spread over source
  addresses 127.0.0.2, 127.0.0.3, ... (at most ``PER_ADDRESS`` each, under the server's per-address bound).
  Reports how many were opened and how many were still open at the end (the server answers none of them
  with a close before ``idle_ping_s``; keep S under it).

* ``resume``: a seat that never reads (small receive buffer) sends ``resume`` with its own seat's token and a
  ``view`` of the normal table, 150 of each a second; again after each time the server drops it. Reports the
  drops.
* ``creates``: N connections each creating up to 16 tables, closing and reconnecting at once. Reports the
  tables created and the creates refused.
* ``sockets``: N WebSockets opened at once, each through its ``hello``, held to the end. Reports how many were
  opened and refused.
* ``http``: N keep-alive HTTP connections; two of three ask for ``--target`` again and again, reading every
  answer; one of three asks for it 64 times and never reads. Reports the requests answered, the connections
  refused and the stalled ones.
* ``bulletin``: N connections each following 32 new bulletin topics, then leaving, again and again. Reports the
  topics followed.
* ``watchers``: N watchers of the normal table (its views too) with small receive buffers that never read; again
  after each time the server drops them. Reports the drops.
* ``fragments``: N connections (one an address) each beginning a message and sending empty continuation frames (6
  bytes each) as fast as they go, up to ``FRAGMENTS`` on one connection, never ending it; again after each close.
  Reports the frames sent, the most on one connection, the close codes and the connections left open.
* ``pings``, ``pongs``: N connections (one an address) sending WebSocket ping (pong) frames as fast as they go, reading
  every answer; again after each close or refusal. Reports the pongs got, the ``rate_limited`` errors, the close codes.
* ``big``: N connections each announcing a 100 MB message and pushing its bytes as fast as they go; again after each
  close. Reports the connections opened, the bytes pushed (into the kernel's buffers too) and the close codes.
* ``bighttp``: the same over HTTP, a request announcing ``Content-Length: 100000000``. Reports the statuses.
* ``refused``: N seats (two a table, created by the flooder) each resending one refused command (a gift of more
  than it has) under one key at ``--rate`` a second, reading every answer. Reports what it sent and the refusals.
* ``tables``: from each of ``--addresses`` addresses, N tables of its own, each seat a connection of its own
  sending gifts of 1 at ``--rate`` a second (events only, read and dropped), and one create more (refused at the
  cap); 3 s before the end each table's seat 0 quits, which ends its game. Reports the tables, what was sent,
  the creates refused and the quits.
* ``hsrate``: 8 clients (4 an address from 2 addresses on) making WebSocket handshakes (and ``hello``) and closing, as fast as they can. Reports the
  handshakes made and refused (429).

``--addresses`` spreads every flood's connections over that many source addresses (127.0.0.2 upwards).

Each prints ``READY`` once its flood is on (for ``idle``: once all N are open), then, after S seconds,
one line ``RESULT {json}``, and closes everything it opened.
"""

from __future__ import annotations

import argparse
import itertools
import json
import socket
import sys

import msgpack
import trio
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, BytesMessage, CloseConnection, Ping, Pong, RejectConnection, Request

from protocol.messages import PROTOCOL_VERSION

PER_ADDRESS = 200
FROM = "127.0.0.2"  # the flooder's own address (the normal table and the accept checks come from 127.0.0.1)
UPGRADE = (b"GET / HTTP/1.1\r\nhost: 127.0.0.1\r\nupgrade: websocket\r\nconnection: Upgrade\r\n"
           b"sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n\r\n")
pack = msgpack.Packer(use_bin_type=True).pack


class Client:
    """A bare WebSocket client over wsproto: enough to flood with, nothing more."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.ws = WSConnection(ConnectionType.CLIENT)
        self.closed = False
        self._sending = trio.Lock()  # the reader answers the server's pings while a flood may be sending

    @classmethod
    async def open(cls, port: int, source: str = FROM, rcvbuf: int | None = None) -> "Client":
        sock = trio.socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        await sock.bind((source, 0))
        await sock.connect(("127.0.0.1", port))
        client = cls(trio.SocketStream(sock))
        await client.stream.send_all(client.ws.send(Request(host="127.0.0.1", target="/")))
        while True:
            event = await client.next_event()
            if isinstance(event, AcceptConnection):
                return client
            if isinstance(event, RejectConnection) or event is None:
                await client.stream.aclose()
                raise ConnectionRefusedError("the server refused the WebSocket handshake")

    async def next_event(self) -> object | None:
        """The next wsproto event (pings answered on the way), None once the connection is over."""
        while True:
            for event in self.ws.events():
                if isinstance(event, Ping):  # the server pings every connection to time its round trip
                    await self.send_bytes(self.ws.send(event.response()))
                    continue
                if isinstance(event, CloseConnection):
                    self.closed = True
                    return None
                return event
            try:
                data = await self.stream.receive_some(65536)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
            if not data:
                self.closed = True
                return None
            self.ws.receive_data(data)

    async def next_message(self) -> dict | None:
        parts = []  # wsproto hands a message over in pieces as its bytes arrive
        while (event := await self.next_event()) is not None:
            if isinstance(event, BytesMessage):
                parts.append(event.data)
                if event.message_finished:
                    return msgpack.unpackb(b"".join(parts))
        return None

    async def send_bytes(self, data: bytes) -> None:
        async with self._sending:
            await self.stream.send_all(data)

    def frame(self, message: dict) -> bytes:
        return self.ws.send(BytesMessage(data=pack(message)))

    async def send(self, message: dict) -> None:
        await self.send_bytes(self.frame(message))

    async def hello(self, name: str) -> None:
        await self.send({"type": "hello", "id": 0, "version": PROTOCOL_VERSION, "client": name})
        welcome = await self.next_message()
        assert welcome is not None and welcome["type"] == "welcome", welcome


async def rate(args: argparse.Namespace, result: dict, source: str = FROM) -> None:
    result.update(sent=0, pongs=0, rate_limited=0, closes=0)
    print("READY", flush=True)
    while True:
        try:
            client = await Client.open(args.port, source=source)
            await client.hello("flood-rate")
        except (OSError, AssertionError, trio.BrokenResourceError):  # refused (429), or closed before its welcome
            await trio.sleep(0.1)
            continue
        batch = b"".join(client.frame({"type": "ping", "id": n}) for n in range(100))

        async def read() -> None:
            try:
                while (msg := await client.next_message()) is not None:
                    if msg["type"] == "pong":
                        result["pongs"] += 1
                    elif msg.get("code") == "rate_limited":
                        result["rate_limited"] += 1
            except (trio.BrokenResourceError, trio.ClosedResourceError):  # a ping answered as the server closed
                pass

        async with trio.open_nursery() as nursery:
            nursery.start_soon(read)
            try:
                while not client.closed:
                    await client.send_bytes(batch)
                    result["sent"] += 100
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
        result["closes"] += 1
        await client.stream.aclose()


async def _held(port: int, opening: bytes, trickle: bool, result: dict) -> None:
    """One connection that never finishes its handshake; how long until the server closes it."""
    stream = await trio.open_tcp_stream("127.0.0.1", port, local_address=FROM)
    started = trio.current_time()
    async with stream:
        try:
            if trickle:
                async with trio.open_nursery() as nursery:
                    async def drip() -> None:
                        for i in range(len(UPGRADE) - 2):  # the head's last CRLF never comes
                            await stream.send_all(UPGRADE[i:i + 1])
                            await trio.sleep(1)

                    nursery.start_soon(drip)
                    while await stream.receive_some(65536):
                        pass
                    nursery.cancel_scope.cancel()
            else:
                if opening:
                    await stream.send_all(opening)
                while await stream.receive_some(65536):
                    pass
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
    result["closed_by_server"] += 1
    result["longest_held_s"] = max(result["longest_held_s"], round(trio.current_time() - started, 2))


async def held(args: argparse.Namespace, result: dict, trickle: bool) -> None:
    result.update(opened=0, closed_by_server=0, longest_held_s=0.0)
    openings = [b"", UPGRADE[: len(UPGRADE) // 2], UPGRADE]
    async with trio.open_nursery() as nursery:
        for n in range(args.count):
            nursery.start_soon(_held, args.port, openings[n % 3], trickle, result)
            result["opened"] += 1
            if n % 50 == 49:
                await trio.sleep(0.01)  # under the listen backlog
        print("READY", flush=True)


async def stalled(args: argparse.Namespace, result: dict, source: str = FROM) -> None:
    result.update(drops=0, seconds_to_drop=[], asked=0)
    print("READY", flush=True)
    while True:
        client = await Client.open(args.port, source=source, rcvbuf=4096)
        await client.hello("flood-stalled")
        await client.send({"type": "watch", "id": 1, "table": args.table, "views": False})
        started = trio.current_time()
        try:
            n = 2
            while True:  # nothing reads from here on
                await client.send({"type": "view", "id": n, "table": args.table})
                result["asked"] += 1
                n += 1
                await trio.sleep(1 / 150)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            result["drops"] += 1
            result["seconds_to_drop"].append(round(trio.current_time() - started, 2))
        await client.stream.aclose()


async def busy(args: argparse.Namespace, result: dict) -> None:
    result.update(sent=0, opened=0, refused=0, closes=0, bytes_read=0)
    limit = trio.Semaphore(32)
    per_batch = max(1, round(args.rate / 10))

    async def one(n: int) -> None:
        source = f"127.0.0.{2 + n % args.addresses}"
        while True:
            try:
                async with limit:
                    client = await Client.open(args.port, source=source)
                    await client.hello("flood-busy")
            except (OSError, AssertionError, trio.BrokenResourceError):
                result["refused"] += 1
                await trio.sleep(0.5)
                continue
            result["opened"] += 1
            batch = b"".join(client.frame({"type": "ping", "id": i}) for i in range(per_batch))

            async with trio.open_nursery() as inner:
                async def drain() -> None:
                    try:
                        while data := await client.stream.receive_some(65536):
                            result["bytes_read"] += len(data)
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        pass
                    inner.cancel_scope.cancel()  # the server closed it

                inner.start_soon(drain)
                try:
                    while True:
                        await client.stream.send_all(batch)
                        result["sent"] += per_batch
                        await trio.sleep(0.1)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    inner.cancel_scope.cancel()
            result["closes"] += 1
            await client.stream.aclose()
            await trio.sleep(0.5)

    async with trio.open_nursery() as nursery:
        for n in range(args.count):
            nursery.start_soon(one, n)
        with trio.move_on_after(5):  # each one opened, or refused, once (or the server too busy to say)
            while result["opened"] + result["refused"] < args.count:
                await trio.sleep(0.05)
        print("READY", flush=True)


async def idle(args: argparse.Namespace, result: dict) -> None:
    result.update(opened=0, refused=0, still_open=0)
    clients: list[Client] = []
    limit = trio.Semaphore(64)

    async def one(n: int) -> None:
        async with limit:
            try:
                client = await Client.open(args.port, source=f"127.0.0.{2 + n // PER_ADDRESS}")
                await client.hello("flood-idle")
            except (OSError, AssertionError):
                result["refused"] += 1
                return
        clients.append(client)
        result["opened"] += 1

    started = trio.current_time()
    async with trio.open_nursery() as nursery:
        for n in range(args.count):
            nursery.start_soon(one, n)
    result["open_s"] = round(trio.current_time() - started, 2)
    print("READY", flush=True)
    await trio.sleep(args.seconds)
    for client in clients:
        result["still_open"] += still_open(client.stream.socket)
        client.stream.socket.close()


def still_open(sock: trio.socket.SocketType) -> bool:
    """Whether an idle connection is still open: what waits to be read holds no close frame, nor the end. (The
    server pings every connection as it says hello, to time its round trip: a ping may wait there unread.)"""
    with socket.fromfd(sock.fileno(), socket.AF_INET, socket.SOCK_STREAM) as plain:  # a blocking peek of our own
        try:
            data = plain.recv(65536, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except BlockingIOError:
            return True  # nothing to read
        except OSError:
            return False
    if not data:
        return False
    at = 0
    while at + 1 < len(data):  # the server's frames are unmasked; a ping's or a close's payload is under 126
        if data[at] & 0x0F == 0x8:
            return False
        at += 2 + (data[at + 1] & 0x7F)
    return True


def source_of(args: argparse.Namespace, n: int) -> str:
    return f"127.0.0.{2 + n % args.addresses}"


async def opened(args: argparse.Namespace, n: int, name: str, rcvbuf: int | None = None) -> Client:
    client = await Client.open(args.port, source=source_of(args, n), rcvbuf=rcvbuf)
    await client.hello(name)
    return client


async def resume(args: argparse.Namespace, result: dict) -> None:
    result.update(drops=0, asked=0, refused=0)
    seats: list[tuple[str, str]] = []
    for n in range(args.addresses):  # each address's own seat (the creator joins its own table)
        setup = await opened(args, n, "flood-resume-setup")
        await setup.send({"type": "create", "id": 1, "game": "parsimonia", "seats": 2})
        table = (await setup.next_message())["table"]
        await setup.send({"type": "join", "id": 2, "table": table, "name": "stalled"})
        seats.append((table, (await setup.next_message())["token"]))
        await setup.stream.aclose()
    result["created"] = len(seats)  # tables that wait for their second player, a task each (test_floods.py)
    print("READY", flush=True)

    async def one(n: int) -> None:
        table, token = seats[n]
        while True:
            try:
                client = await opened(args, n, "flood-resume", rcvbuf=4096)
            except (OSError, AssertionError, trio.BrokenResourceError):
                result["refused"] += 1
                await trio.sleep(0.5)
                continue
            try:
                i = 1
                while True:  # nothing reads from here on
                    await client.send({"type": "resume", "id": i, "table": table, "token": token, "last_seq": 0})
                    await client.send({"type": "view", "id": i + 1, "table": args.table})
                    result["asked"] += 2
                    i += 2
                    await trio.sleep(1 / 150)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                result["drops"] += 1
            await client.stream.aclose()

    async with trio.open_nursery() as nursery:
        for n in range(args.addresses):
            nursery.start_soon(one, n)


async def creates(args: argparse.Namespace, result: dict) -> None:
    result.update(created=0, refused=0, connections=0, not_opened=0)
    limit = trio.Semaphore(16)

    async def one(n: int) -> None:
        while True:
            try:
                async with limit:
                    client = await opened(args, n, "flood-creates")
            except (OSError, AssertionError, trio.BrokenResourceError):
                result["not_opened"] += 1
                await trio.sleep(0.2)
                continue
            result["connections"] += 1
            try:
                for i in range(16):
                    await client.send({"type": "create", "id": i + 1, "game": "parsimonia", "seats": 2})
                    reply = await client.next_message()
                    if reply is None:
                        break
                    result["created" if reply["type"] == "created" else "refused"] += 1
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
            await client.stream.aclose()

    async with trio.open_nursery() as nursery:
        for n in range(args.count):
            nursery.start_soon(one, n)
        print("READY", flush=True)


async def sockets(args: argparse.Namespace, result: dict) -> None:
    result.update(opened=0, refused=0)
    clients: list[Client] = []

    async def one(n: int) -> None:
        try:
            clients.append(await opened(args, n, "flood-sockets"))
            result["opened"] += 1
        except (OSError, AssertionError, trio.BrokenResourceError):
            result["refused"] += 1

    try:
        async with trio.open_nursery() as nursery:
            for n in range(args.count):  # all at once
                nursery.start_soon(one, n)
        print("READY", flush=True)
        await trio.sleep_forever()
    finally:
        for client in clients:
            client.stream.socket.close()


async def http(args: argparse.Namespace, result: dict) -> None:
    result.update(answered=0, refused=0, stalled=0, opened=0)
    request = (f"GET {args.target} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n").encode()
    held: list[trio.SocketStream] = []

    async def one(n: int) -> None:
        while True:
            try:
                stream = await trio.open_tcp_stream("127.0.0.1", args.port, local_address=source_of(args, n))
            except OSError:
                result["refused"] += 1
                await trio.sleep(0.5)
                continue
            result["opened"] += 1
            try:
                if n % 3 == 2:  # asks, never reads
                    stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                    await stream.send_all(request * 64)
                    result["stalled"] += 1
                    held.append(stream)
                    return
                buffered = b""
                while True:
                    await stream.send_all(request)
                    while b"\r\n\r\n" not in buffered:
                        data = await stream.receive_some(65536)
                        if not data:
                            raise trio.BrokenResourceError
                        buffered += data
                    head, _, buffered = buffered.partition(b"\r\n\r\n")
                    if not head.startswith(b"HTTP/1.1 200"):
                        result["refused"] += 1
                        raise trio.BrokenResourceError
                    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                                      if line.lower().startswith(b"content-length")))
                    while len(buffered) < length:
                        data = await stream.receive_some(65536)
                        if not data:
                            raise trio.BrokenResourceError
                        buffered += data
                    buffered = buffered[length:]
                    result["answered"] += 1
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError, StopIteration, ValueError):
                await stream.aclose()
                await trio.sleep(0.5)

    print("READY", flush=True)  # it ramps up (3,000 connections took more than the flood's 12 s on a loaded machine)
    try:
        async with trio.open_nursery() as nursery:
            for n in range(args.count):
                nursery.start_soon(one, n)
                if n % 50 == 49:
                    await trio.sleep(0.01)  # under the listen backlog
    finally:
        for stream in held:
            stream.socket.close()


async def bulletin(args: argparse.Namespace, result: dict) -> None:
    result.update(followed=0, connections=0, refused=0)
    topics = itertools.count()
    limit = trio.Semaphore(16)

    async def one(n: int) -> None:
        while True:
            try:
                async with limit:
                    client = await opened(args, n, "flood-bulletin")
            except (OSError, AssertionError, trio.BrokenResourceError):
                result["refused"] += 1
                await trio.sleep(0.2)
                continue
            result["connections"] += 1
            try:
                for i in range(32):
                    await client.send({"type": "bulletin", "id": i + 1, "topic": f"t{next(topics)}", "follow": True})
                for _ in range(32):
                    if await client.next_message() is None:
                        break
                    result["followed"] += 1
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
            await client.stream.aclose()

    async with trio.open_nursery() as nursery:
        for n in range(args.count):
            nursery.start_soon(one, n)
        print("READY", flush=True)


async def watchers(args: argparse.Namespace, result: dict) -> None:
    result.update(drops=0, refused=0, watching=0)
    limit = trio.Semaphore(32)
    ready = trio.Event()

    async def one(n: int) -> None:
        while True:
            try:
                async with limit:
                    client = await opened(args, n, "flood-watcher", rcvbuf=4096)
                    await client.send({"type": "watch", "id": 1, "table": args.table, "views": True})
            except (OSError, AssertionError, trio.BrokenResourceError):
                result["refused"] += 1
                await trio.sleep(0.5)
                continue
            result["watching"] += 1
            if result["watching"] >= args.count:
                ready.set()
            try:  # nothing reads from here on: wait for the server to drop it
                while True:
                    await client.send({"type": "ping", "id": 2})
                    await trio.sleep(0.5)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                result["drops"] += 1
            await client.stream.aclose()

    async with trio.open_nursery() as nursery:
        for n in range(args.count):
            nursery.start_soon(one, n)
        with trio.move_on_after(10):
            await ready.wait()
        print("READY", flush=True)


async def hsrate(args: argparse.Namespace, result: dict) -> None:
    result.update(handshakes=0, refused=0)

    async def one(n: int) -> None:
        while True:
            try:
                client = await opened(args, n, "flood-hsrate")
                result["handshakes"] += 1
                await client.stream.aclose()
            except (OSError, AssertionError, trio.BrokenResourceError):
                result["refused"] += 1

    print("READY", flush=True)
    async with trio.open_nursery() as nursery:
        for n in range(max(8, 4 * args.addresses)):  # 4 an address: one alone waits for each answer, under 20/s
            nursery.start_soon(one, n)


FRAGMENTS = 3_000_000  # empty continuation frames one connection sends at most (issue 37)
EMPTY_CONTINUATION = b"\x00\x80\x00\x00\x00\x00"  # not final, masked, no payload
BIG = 100_000_000


def masked(first: int, payload: bytes, announce: int | None = None) -> bytes:
    """A client frame with ``first`` (FIN and opcode); its mask is zero, so the payload goes as it is."""
    n = len(payload) if announce is None else announce
    length = bytes([0x80 | n]) if n < 126 else bytes([0xFE]) + n.to_bytes(2, "big") if n < 65536 else \
        bytes([0xFF]) + n.to_bytes(8, "big")
    return bytes([first]) + length + b"\x00\x00\x00\x00" + payload


async def _pushing(args: argparse.Namespace, result: dict, n: int, name: str, opening: bytes, push: bytes,
                   most: int) -> None:
    """Again and again: one connection of ``source_of(n)`` says hello, sends ``opening``, then ``push`` as fast as
    it goes (at most ``most`` bytes); what the server sends is read meanwhile: pongs and ``rate_limited`` errors
    counted, the close code kept. After the server ends it (or refuses it), again, a tenth of a second later."""
    codes: dict = result["closes"]
    while True:
        try:
            client = await opened(args, n, name)
        except (OSError, AssertionError, trio.BrokenResourceError):
            result["refused"] += 1
            await trio.sleep(0.1)
            continue
        result["opened"] += 1
        pushed = 0
        async with trio.open_nursery() as inner:
            async def read() -> None:
                try:
                    while True:
                        for event in client.ws.events():
                            if isinstance(event, Pong):
                                result["pongs"] += 1
                            elif isinstance(event, BytesMessage) and b"rate_limited" in event.data:
                                result["rate_limited"] += 1
                            elif isinstance(event, CloseConnection):
                                codes[str(event.code)] = codes.get(str(event.code), 0) + 1
                        data = await client.stream.receive_some(65536)
                        if not data:
                            break
                        client.ws.receive_data(data)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    pass
                inner.cancel_scope.cancel()  # the server ended it

            inner.start_soon(read)
            try:
                await client.stream.send_all(opening)
                while pushed < most:
                    await client.stream.send_all(push)
                    pushed += len(push)
                result["unclosed"] += 1  # all of it sent, and still open: held to the end
                await trio.sleep_forever()
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
            finally:
                result["pushed"] += pushed
                result["most_on_one"] = max(result["most_on_one"], pushed)
        await client.stream.aclose()
        await trio.sleep(0.1)


async def pushing(args: argparse.Namespace, result: dict) -> None:
    result.update(opened=0, refused=0, pushed=0, most_on_one=0, unclosed=0, pongs=0, rate_limited=0, closes={})
    if args.kind == "fragments":
        opening, push, most = masked(0x02, b""), EMPTY_CONTINUATION * 10_000, FRAGMENTS * len(EMPTY_CONTINUATION)
    elif args.kind == "big":
        opening, push, most = masked(0x82, b"", announce=BIG), b"\x00" * 65536, BIG
    else:  # pings, pongs: a batch of 1,000 frames, each with a 4-byte payload
        first = 0x89 if args.kind == "pings" else 0x8A
        opening, push, most = b"", b"".join(masked(first, b"%04d" % i) for i in range(1000)), 1 << 62
    print("READY", flush=True)
    async with trio.open_nursery() as nursery:
        for n in range(args.count):
            nursery.start_soon(_pushing, args, result, n, f"flood-{args.kind}", opening, push, most)


async def bighttp(args: argparse.Namespace, result: dict) -> None:
    """Connections announcing a 100 MB request body and pushing it, again and again; the statuses they got."""
    result.update(opened=0, refused=0, pushed=0, statuses={})
    head = b"POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: %d\r\n\r\n" % BIG
    chunk = b"\x00" * 65536

    async def one(n: int) -> None:
        while True:
            try:
                stream = await trio.open_tcp_stream("127.0.0.1", args.port, local_address=source_of(args, n))
            except OSError:
                result["refused"] += 1
                await trio.sleep(0.1)
                continue
            result["opened"] += 1
            answer = b""
            async with trio.open_nursery() as inner:
                async def read() -> None:
                    nonlocal answer
                    try:
                        while data := await stream.receive_some(65536):
                            answer += data
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        pass
                    inner.cancel_scope.cancel()

                inner.start_soon(read)
                try:
                    await stream.send_all(head)
                    for _ in range(BIG // len(chunk)):
                        await stream.send_all(chunk)
                        result["pushed"] += len(chunk)
                    await trio.sleep_forever()
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    pass
            status = answer[9:12].decode(errors="replace") or "none"
            result["statuses"][status] = result["statuses"].get(status, 0) + 1
            await stream.aclose()
            await trio.sleep(0.1)

    print("READY", flush=True)
    async with trio.open_nursery() as nursery:
        for n in range(args.count):
            nursery.start_soon(one, n)


async def seated(args: argparse.Namespace, n: int, tables: int, name: str) -> list[tuple[Client, str]]:
    """``tables`` new 2-seat Parsimonia tables of address ``n`` (one connection creates them), each seat held by
    a connection of its own from that address, events only: [(seat 0, table), (seat 1, table)] for each."""
    creator = await opened(args, n, f"{name}-creator")
    seats: list[tuple[Client, str]] = []
    for i in range(tables):
        await creator.send({"type": "create", "id": i + 1, "game": "parsimonia", "seats": 2})
        created = await creator.next_message()
        assert created is not None and created["type"] == "created", created
        for seat in range(2):
            client = await opened(args, n, f"{name}-{seat}")
            await client.send({"type": "join", "id": 1, "table": created["table"], "name": f"{name}-{seat}",
                               "views": False})
            joined = await client.next_message()
            assert joined is not None and joined["type"] == "joined", joined
            seats.append((client, created["table"]))
    await creator.stream.aclose()
    return seats


async def drained(client: Client, result: dict, count: str | None = None) -> None:
    """Read and drop what the server sends (pings unanswered: the client is never silent), counting the bytes;
    with ``count``, every error frame decoded and counted under it (a slower reader: for a few connections)."""
    try:
        if count is None:
            while data := await client.stream.receive_some(65536):
                result["bytes_read"] += len(data)
            return
        while (message := await client.next_message()) is not None:
            result[count] += message.get("type") == "error" and message.get("code") == "illegal_action"
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass


async def refused(args: argparse.Namespace, result: dict) -> None:
    """``--count`` seats (two a table, their own) each resending one refused command under one key at
    ``--rate`` a second (a gift of more than it has): the server answers each with the same refusal."""
    result.update(sent=0, refusals=0, tables=0)
    seats: list[tuple[Client, str]] = []
    for n in range((args.count + 1) // 2):
        seats += await seated(args, n, 1, "flood-refused")
    result["tables"] = len(seats) // 2
    per_batch = max(1, round(args.rate / 10))
    async with trio.open_nursery() as nursery:
        for i, (client, table) in enumerate(seats):
            nursery.start_soon(drained, client, result, "refusals")
        print("READY", flush=True)
        for i, (client, table) in enumerate(seats[: args.count]):
            act = {"type": "act", "id": 7, "table": table, "key": "refused",
                   "command": {"type": "give", "to": 1 - i % 2, "amount": 10**8}}
            batch = b"".join(client.frame(act) for _ in range(per_batch))

            async def resend(client: Client = client, batch: bytes = batch) -> None:
                try:
                    while True:
                        await client.send_bytes(batch)
                        result["sent"] += per_batch
                        await trio.sleep(0.1)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    result["closed"] = result.get("closed", 0) + 1
            nursery.start_soon(resend)


async def tables(args: argparse.Namespace, result: dict) -> None:
    """``--addresses`` addresses each keeping ``--count`` tables of their own busy: two seats a table, each a
    connection sending gifts of 1 at ``--rate`` a second, events read and dropped; 3 s before the end each
    table's seat 0 quits (its game ends: the address leaves)."""
    result.update(sent=0, bytes_read=0, tables=0, refused_creates=0, quits=0)
    seats: list[tuple[Client, str]] = []
    for n in range(args.addresses):
        seats += await seated(args, n, args.count, "flood-tables")
    result["tables"] = len(seats) // 2
    per_batch = max(1, round(args.rate / 10))
    async with trio.open_nursery() as nursery:
        for client, _ in seats:
            nursery.start_soon(drained, client, result)
        # and one more table than the cap: refused
        extra = await opened(args, 0, "flood-tables-extra")
        await extra.send({"type": "create", "id": 1, "game": "parsimonia", "seats": 2})
        answer = await extra.next_message()
        result["refused_creates"] += answer is not None and answer.get("code") == "rate_limited"
        await extra.stream.aclose()
        print("READY", flush=True)
        busy_until = trio.current_time() + max(1.0, args.seconds - 3)
        for i, (client, table) in enumerate(seats):
            give = {"type": "act", "table": table, "command": {"type": "give", "to": 1 - i % 2, "amount": 1}}
            batch = b"".join(client.frame({**give, "id": k}) for k in range(per_batch))

            async def send(client: Client = client, batch: bytes = batch, seat: int = i % 2,
                           table: str = table) -> None:
                try:
                    with trio.move_on_at(busy_until):
                        while True:
                            await client.send_bytes(batch)
                            result["sent"] += per_batch
                            await trio.sleep(0.1)
                    if seat == 0:  # the game ends
                        await client.send({"type": "act", "id": 1, "table": table, "command": {"type": "quit"}})
                        result["quits"] += 1
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    pass
            nursery.start_soon(send)


KINDS = {"refused": refused, "tables": tables, "resume": resume, "creates": creates, "sockets": sockets,
         "http": http, "bulletin": bulletin, "watchers": watchers, "hsrate": hsrate, "fragments": pushing,
         "pings": pushing, "pongs": pushing, "big": pushing, "bighttp": bighttp}


async def main(args: argparse.Namespace) -> None:
    result: dict = {"kind": args.kind}
    if args.kind == "idle":
        await idle(args, result)
    else:
        with trio.move_on_after(args.seconds):
            if args.kind in ("rate", "stalled") and args.addresses > 1:
                await from_many(args, result)
            elif args.kind in KINDS:
                await KINDS[args.kind](args, result)
            elif args.kind == "rate":
                await rate(args, result)
            elif args.kind == "busy":
                await busy(args, result)
            elif args.kind == "stalled":
                await stalled(args, result)
            else:
                await held(args, result, trickle=args.kind == "slowloris")
    print("RESULT " + json.dumps(result), flush=True)


async def from_many(args: argparse.Namespace, result: dict) -> None:
    """The rate or stalled flood from ``--addresses`` addresses at once, one each; ``result`` sums theirs
    (lists are joined), each one's also kept under ``each``."""
    flood = rate if args.kind == "rate" else stalled
    each: list[dict] = [{} for _ in range(args.addresses)]
    try:
        async with trio.open_nursery() as nursery:
            for n, part in enumerate(each):
                nursery.start_soon(flood, args, part, f"127.0.0.{2 + n}")
    finally:
        for part in each:
            for key, value in part.items():
                result[key] = result.get(key, [] if isinstance(value, list) else 0) + value
        result["addresses"] = args.addresses


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.faults.flood")
    parser.add_argument("kind", choices=["rate", "handshakes", "slowloris", "stalled", "idle", "busy", *KINDS])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--addresses", type=int, default=1, help="busy: source addresses, 127.0.0.2 upwards")
    parser.add_argument("--rate", type=float, default=190.0, help="busy: pings a second per connection")
    parser.add_argument("--table", default="", help="the table the stalled client watches")
    parser.add_argument("--target", default="/", help="http: the path asked for")
    return parser.parse_args(argv)


if __name__ == "__main__":
    trio.run(main, parse(sys.argv[1:]))
