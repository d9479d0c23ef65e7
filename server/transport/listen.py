"""The listening socket: accepts TCP connections and gives each its own task.

Each connection is handed over as a trio ``SocketStream`` together with the plain socket under it, so
that the WebSocket layer can write to it at once, without a task switch (``server.transport.websocket``).

``admit`` is asked about every connection as it is accepted, before any task is started for it: a refused one
(its refusal already written by ``admit``) is closed there and costs the server no more. At most ``ACCEPT_BATCH``
are accepted in one go, and for at most ``ACCEPT_S`` of the thread's CPU time, so that a crowd connecting at once
starts its tasks over several of trio's scheduler passes, not in one pass that every other task would wait out.
"""

from __future__ import annotations

import errno
import socket
import time
from collections.abc import Awaitable, Callable

import trio

from server.ops import logs

BACKLOG = 1024
ACCEPT_BATCH = 32  # connections accepted before the listener lets the others run
ACCEPT_S = 0.001  # or the thread's CPU time accepting may take first
# the process or the system is out of descriptors or memory: wait, and accept again
_CAPACITY_ERRORS = {errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS}
Handler = Callable[[trio.SocketStream, socket.socket, str, str], Awaitable[None]]
Admit = Callable[[socket.socket, str], bool]  # (the accepted socket, its ip): serve it, or it was refused


def _admit_all(sock: socket.socket, ip: str) -> bool:
    return True


async def serve_tcp(handler: Handler, host: str, port: int, *, reuse_port: bool = False, admit: Admit = _admit_all,
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
                until = time.thread_time() + ACCEPT_S
                for _ in range(ACCEPT_BATCH):  # those waiting, up to a batch, then wait again
                    if time.thread_time() >= until:
                        break
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
                    if not admit(sock, ip):
                        sock.close()
                        continue
                    stream = trio.SocketStream(trio.socket.from_stdlib_socket(sock))
                    nursery.start_soon(handler, stream, sock, ip, f"{ip}:{client_port}")
    finally:
        listener.close()
