"""The in-memory network (tests/memory_net.py) reaches the clients through trio's own hooks: the run's socket
factory and hostname resolver, not a patched ``trio.open_tcp_stream``."""

from __future__ import annotations

import pytest
import trio

from clients.sdk import request_once
from server.runtime.app import Server, ServerConfig


async def test_a_client_gets_trios_socket_stream_over_the_runs_socket_factory(autojump_clock, memory_net):
    async with trio.open_nursery() as nursery:
        server = await nursery.start(Server(ServerConfig(host="127.0.0.1", port=0)).run)
        stream = await trio.open_tcp_stream("127.0.0.1", server.port)
        assert isinstance(stream, trio.SocketStream)
        assert type(stream.socket) is type(trio.socket.socket())  # what the run's factory makes
        assert stream.socket.getpeername() == ("127.0.0.1", server.port)
        await stream.aclose()
        assert (await request_once(f"ws://localhost:{server.port}/", "ping"))["type"] == "pong"
        for host, port in (("127.0.0.1", server.port + 1000), ("10.1.2.3", server.port)):
            with pytest.raises(OSError):  # refused at once, as a port nobody listens on is
                await trio.open_tcp_stream(host, port)
        nursery.cancel_scope.cancel()
