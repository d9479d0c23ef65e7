"""The listening socket: accepts TCP connections and gives each its own task.

Each connection is handed over as a trio ``SocketStream`` together with the plain socket under it, so
that the WebSocket layer can write to it at once, without a task switch (``server.transport.websocket``).
"""

from __future__ import annotations

import errno
import socket
from collections.abc import Awaitable, Callable

import trio

from server import logs

BACKLOG = 1024
# the process or the system is out of descriptors or memory: wait, and accept again
_CAPACITY_ERRORS = {errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS}
Handler = Callable[[trio.SocketStream, socket.socket, str, str], Awaitable[None]]


async def serve_tcp(handler: Handler, host: str, port: int, *, reuse_port: bool = False,
                    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
    """Listen on ``host:port`` (port 0: any free one, told through ``task_status``) and run
    ``handler(stream, sock, ip, "ip:port")`` for every connection, each in its own task. ``reuse_port``:
    other processes may listen on the same port (``SO_REUSEPORT``; the kernel spreads the connections)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.create_server((host, port), family=family, backlog=BACKLOG, reuse_port=reuse_port)
    listener.setblocking(False)
    log = logs.get()
    try:
        async with trio.open_nursery() as nursery:
            task_status.started(listener.getsockname()[1])
            while True:
                await trio.lowlevel.wait_readable(listener)
                while True:  # everyone waiting, then wait again
                    try:
                        sock, address = listener.accept()
                    except BlockingIOError:
                        break
                    except OSError as exc:
                        if exc.errno not in _CAPACITY_ERRORS:
                            continue  # e.g. ECONNABORTED: that client gave up already
                        log.error("accept_failed", error=str(exc))
                        await trio.sleep(0.1)
                        break
                    ip, client_port = str(address[0]), address[1]
                    stream = trio.SocketStream(trio.socket.from_stdlib_socket(sock))
                    nursery.start_soon(handler, stream, sock, ip, f"{ip}:{client_port}")
    finally:
        listener.close()
