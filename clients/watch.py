"""``parsimonia watch``: follow a table as a spectator and print its events, one line each."""

from __future__ import annotations

from typing import Any, Callable

from trio_websocket import open_websocket_url

from protocol.codec import decode, encode
from protocol.messages import PROTOCOL_VERSION


def describe(msg: dict[str, Any]) -> str:
    event = msg["event"]
    fields = " ".join(f"{k}={v}" for k, v in event.items()
                      if k not in ("type", "at") and not (k == "auction" and isinstance(v, dict)))
    if isinstance(event.get("auction"), dict):
        a = event["auction"]
        fields = f"auction={a['id']} seller={a['seller']} lot={a['lot']} start={a['start_price']} " + fields
    return f"[{msg['seq']:>5}] {msg['time'] / 1000:9.3f}s {event.get('type', '(hidden)')} {fields}".rstrip()


async def watch(url: str, table: str, out: Callable[[str], None] = print) -> dict[str, Any] | None:
    """Print every event of ``table`` until its result; return the result."""
    async with open_websocket_url(url) as ws:
        await ws.send_message(encode({"type": "hello", "version": PROTOCOL_VERSION, "client": "parsimonia-watch"}))
        await ws.send_message(encode({"type": "watch", "table": table, "views": False}))
        while True:
            msg = decode(await ws.get_message())
            if msg["type"] == "error":
                out(f"error: {msg['code']}: {msg['message']}")
                return None
            if msg["type"] == "event":
                out(describe(msg))
                if msg["event"].get("type") == "result":
                    return msg["event"]["result"]
