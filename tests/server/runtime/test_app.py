"""The server's admission of connections (``Server._admit``) and its per-address budget of HTTP requests."""

from __future__ import annotations

import pytest
import trio
from trio_websocket import ConnectionRejected

from server.transport.limits import ClientLimits
from server.transport import listen
from tests.server.conftest import connect
from tests.server.transport.test_transport_http import Client


async def read_all(stream: trio.SocketStream) -> bytes:
    answer = b""
    with trio.fail_after(10):
        while chunk := await stream.receive_some(65536):
            answer += chunk
    return answer


async def test_http_requests_over_an_address_budget_get_429_and_its_new_connections_are_refused_unread(
        start_server, autojump_clock):
    # slow, and no round-trip pings: the autojump clock, jumping to the next timer while a socket is read, gives
    # back little
    server = await start_server(client=ClientLimits(http_requests_per_s=0.5, burst_s=4.0, rtt_ping_s=0))
    client = await Client.open(server)
    assert [(await client.get("/healthz"))[0] for _ in range(2)] == [200, 200]  # its budget: 2 at once
    status, headers, body = await client.get("/healthz")
    assert status == 429 and headers["retry-after"] == "1" and b"too many HTTP requests" in body
    assert headers["connection"] == "close"
    await client.stream.aclose()
    # nothing left: the address's next connection is refused as it is accepted, before its request is read
    stream = await trio.open_tcp_stream("127.0.0.1", server.port)
    await stream.send_all(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
    answer = await read_all(stream)
    assert answer.startswith(b"HTTP/1.1 429") and b"too many HTTP requests" in answer, answer
    with pytest.raises(ConnectionRejected) as info:  # a WebSocket too, as its address asks more than it may
        async with connect(server, "behind the same address"):
            pass
    assert info.value.status_code == 429
    await trio.sleep(2.0)  # a request's worth back
    client = await Client.open(server)
    assert (await client.get("/healthz"))[0] == 200
    await client.stream.aclose()


async def test_an_address_out_of_handshakes_has_its_next_connection_refused_unread(start_server, autojump_clock):
    server = await start_server(client=ClientLimits(handshakes_per_s=0.5, burst_s=2.0, rtt_ping_s=0))
    async with connect(server, "1", hello=False):
        stream = await trio.open_tcp_stream("127.0.0.1", server.port)
        answer = await read_all(stream)  # it asked nothing yet: refused all the same
        assert answer.startswith(b"HTTP/1.1 429") and b"handshakes" in answer, answer
        await trio.sleep(2.0)
        async with connect(server, "2") as client:  # the budget refilled
            assert (await client.request("ping"))["type"] == "pong"


async def test_connections_refused_as_they_are_accepted_hold_nothing(start_server, autojump_clock):
    """More connections at once than one accept batch: the address's bound holds, and every refused one is
    closed at once, its count given back."""
    server = await start_server(client=ClientLimits(http_connections_per_ip=3))
    held = [await trio.open_tcp_stream("127.0.0.1", server.port) for _ in range(listen.ACCEPT_BATCH + 8)]
    answers = []
    for stream in held[3:]:
        answers.append(await read_all(stream))
    assert all(a.startswith(b"HTTP/1.1 429") and b"too many HTTP connections" in a for a in answers)
    assert server._http_per_ip["127.0.0.1"] == 3
    for stream in held[:3]:
        await stream.aclose()
    with trio.fail_after(10):
        while server._http_per_ip:
            await trio.sleep(0.01)


async def test_an_address_that_made_requests_lately_is_admitted_only_as_many_unasking_connections_as_it_has_left(
        start_server, autojump_clock):
    """A crowd of connections reconnecting at once, from an address whose request budget is not full: as many
    are admitted as it has requests left, the rest are refused unread, and the counts come back."""
    server = await start_server(client=ClientLimits(http_requests_per_s=1.0, burst_s=4.0, rtt_ping_s=0))
    client = await Client.open(server)
    assert (await client.get("/healthz"))[0] == 200  # 3 requests left
    await client.stream.aclose()
    crowd = [await trio.open_tcp_stream("127.0.0.1", server.port) for _ in range(8)]
    answers = [await read_all(stream) for stream in crowd[3:]]  # refused before they asked anything
    assert all(a.startswith(b"HTTP/1.1 429") and b"too many HTTP requests" in a for a in answers), answers
    assert server._unasked["127.0.0.1"] == 3
    for stream in crowd[:3]:
        await stream.send_all(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n")
        assert (await read_all(stream)).startswith(b"HTTP/1.1 200")
    with trio.fail_after(10):
        while server._unasked or server._http_per_ip:
            await trio.sleep(0.01)


async def test_an_address_that_made_no_plain_request_lately_may_open_its_whole_handshake_burst_at_once(
        start_server, autojump_clock):
    """No reservation for an address whose request budget is full: a bot farm opens 40 WebSockets together."""
    server = await start_server(client=ClientLimits(rtt_ping_s=0))
    async with trio.open_nursery() as nursery:
        opened = trio.Event()
        count = 0

        async def one(i: int) -> None:
            nonlocal count
            async with connect(server, f"bot {i}") as client:
                assert (await client.request("ping"))["type"] == "pong"
                count += 1
                if count == 40:
                    opened.set()
                await opened.wait()

        for i in range(40):
            nursery.start_soon(one, i)
    assert count == 40
