"""Send several WebSocket messages with one write.

trio-websocket writes every message with its own ``send_all``: one system call per frame per client,
which the profile of a loaded server shows as its largest cost (``bench/README.md``). A connection's
writer instead takes every frame already queued and sends them together. trio-websocket has no public
call for that, so this reaches into its connection the way its own ``_send`` does: frame each message
with the connection's wsproto state, then write the bytes once under its stream lock. The version range
is pinned in ``pyproject.toml``; the end-to-end tests run every frame through here.
"""

from __future__ import annotations

import trio
from trio_websocket import ConnectionClosed, WebSocketConnection
from wsproto.events import BytesMessage


async def send_frames(ws: WebSocketConnection, frames: list[bytes]) -> None:
    """Send ``frames`` as binary messages, in order, in one write. Raises ``ConnectionClosed``."""
    if len(frames) == 1:
        await ws.send_message(frames[0])
        return
    if ws._close_reason:
        raise ConnectionClosed(ws._close_reason)
    data = b"".join(ws._wsproto.send(BytesMessage(data=frame)) for frame in frames)
    async with ws._stream_lock:
        try:
            await ws._stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            await ws._abort_web_socket()
            raise ConnectionClosed(ws._close_reason) from None
