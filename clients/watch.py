"""``parsimonia watch``: follow a table as a spectator, for a second screen at a tournament.

One line per event, stamped with the game time since the start; players by name, deadlines as "in 4:32",
and the game's own wording when it has one (``clients.games.words_for``). Joining mid-game prints a summary
of the state first (``--from-start``: every event since the table opened instead, paged with ``history``);
a table that is already over prints its result. The last line is the address of the game's replay page
(``/replay/<table>`` on the server's port). This file knows no game's rules.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Callable
from urllib.parse import quote, urlsplit

from trio_websocket import open_websocket_url

from clients.games import words_for
from clients.narrate import default_names, result_lines, seat_names
from clients.sdk import MAX_REDIRECTS, ServerError, call, history
from clients.words.common import clock
from protocol.codec import decode, encode
from protocol.messages import PROTOCOL_VERSION

SEAT_FIELDS = ("seat", "to", "winner", "seller", "current")
TIME_FIELDS = ("deadline", "closes_at")


class Spectator:
    """What a spectator knows of its table, and the lines it prints for each message."""

    def __init__(self, out: Callable[[str], None] = print) -> None:
        self.out = out
        self.static: dict[str, Any] | None = None
        self.names: list[str] = []
        self.words: ModuleType | None = None  # the game's words module (clients.words), if it has one
        self.started_at: int | None = None
        self.result: dict[str, Any] | None = None
        self.mid_game = True  # a first view of a game under way prints a summary of it
        self._seen_view = False

    def on_watching(self, reply: dict[str, Any]) -> None:
        if "static" in reply:
            self.static = reply["static"]
        self.words = words_for(str(reply.get("game")))

    def on_view(self, msg: dict[str, Any]) -> None:
        view = msg["view"]
        self.words = words_for(str(view.get("game")))
        if self.static is None and "cards" in view:  # the card table and options inside every view, for now
            self.static = {"cards": view["cards"], "config": view.get("config", {})}
        self.names = seat_names(view.get("seats")) or self.names or default_names(len(view.get("players", [])))
        if self.started_at is None and self.words is not None and self.static is not None:
            self.started_at = self.words.started_at(view, self.static)
        if self._seen_view:
            return
        self._seen_view = True
        if not self.mid_game:
            return
        if view.get("result") is not None:
            self._finish(msg["time"], view["result"])
        elif view.get("phase") == "waiting":
            self.out(f"{msg['table']}: waiting for players")
        elif self.words is not None:
            self.out(f"{msg['table']}: joined mid-game")
            for line in self.words.summary({**(self.static or {}), **view}, self.names):  # cards by name
                self.out(line)

    def on_event(self, msg: dict[str, Any]) -> None:
        event = msg["event"]
        kind = event.get("type")
        if kind == "game_started":
            self.started_at = event["at"]
            self.names = seat_names(event["seats"]) or self.names
        if kind == "result":
            self._finish(msg["time"], event["result"])
            return
        self.out(self._stamp(msg["time"]) + self.describe(event))

    def describe(self, event: dict[str, Any]) -> str:
        if not event:
            return "(a private event)"
        if self.words is not None and self.static is not None:
            line = self.words.describe(event, self.static, self.names)
            if line is not None:
                return line
        if event.get("type") == "game_started":
            return "game started: " + ", ".join(f"{s['name']} (seat {s['seat']})" for s in event["seats"])
        if event.get("type") == "paused":  # as the page says it
            return "the clocks wait for the players to connect" if event.get("hold") else "the organiser paused the clocks"
        if event.get("type") == "unpaused":
            return "the clocks run again"
        return self.generic(event)

    def generic(self, event: dict[str, Any]) -> str:
        """``type key=value ...``, seats by name and times as "in m:ss"."""
        at = event.get("at", 0)
        parts = [str(event.get("type"))]
        for key, value in event.items():
            if key in ("type", "at"):
                continue
            if key in SEAT_FIELDS and isinstance(value, int) and 0 <= value < len(self.names):
                value = self.names[value]
            elif key in TIME_FIELDS and isinstance(value, int):
                value = f"in {clock(value - at)}"
            elif isinstance(value, dict):
                value = "{" + " ".join(f"{k}={v}" for k, v in value.items()) + "}"
            parts.append(f"{key}={value}")
        return " ".join(parts)

    def _stamp(self, time: int) -> str:
        return f"[{clock(time - self.started_at):>7}] " if self.started_at is not None else ""

    def _finish(self, time: int, result: dict[str, Any]) -> None:
        self.result = result
        for line in result_lines(result, self.names):
            self.out(line if line.startswith(" ") else self._stamp(time) + line)


async def watch(url: str, table: str, out: Callable[[str], None] = print, from_start: bool = False) -> dict[str, Any]:
    """Print ``table``'s events until its result (at once if it is over) and return the result; with
    ``from_start``, every event since the table opened first (paged with ``history``). Raises ``ServerError``
    if the server refuses (e.g. ``no_such_table``) and ``ConnectionClosed`` if it goes away. On a cluster, a
    ``moved`` is followed to the worker holding the table (at most ``MAX_REDIRECTS`` in a row)."""
    for _ in range(MAX_REDIRECTS):
        try:
            return await _watch_at(url, table, out, from_start)
        except ServerError as err:
            if err.code != "moved" or not isinstance(err.url, str):
                raise
            url = err.url
    return await _watch_at(url, table, out, from_start)


async def _watch_at(url: str, table: str, out: Callable[[str], None], from_start: bool) -> dict[str, Any]:
    spectator = Spectator(out)
    view_request: dict[str, str | int] = {"type": "view", "id": 3, "table": table}
    async with open_websocket_url(url) as ws:
        await call(ws, "hello", version=PROTOCOL_VERSION, client="parsimonia-watch")
        await ws.send_message(encode({"type": "watch", "id": 2, "table": table, "views": False}))
        await ws.send_message(encode(view_request))
        waiting: list[dict[str, Any]] = []  # what came while the past was read
        printed = 0  # the last seq printed
        while spectator.result is None:
            msg = waiting.pop(0) if waiting else decode(await ws.get_message())
            if msg["type"] == "error" and msg.get("re") in (2, 3):
                raise ServerError(msg)
            if msg["type"] == "watching":
                spectator.on_watching(msg)
                if from_start:
                    spectator.mid_game = False  # the whole story follows: no summary of the state first
                    async for event in history(ws, table, 0, waiting.append):
                        spectator.on_event(event)
                        printed = event["seq"]
            elif msg["type"] == "view":
                spectator.on_view(msg)
            elif msg["type"] == "event" and isinstance(seq := msg["seq"], int) and seq > printed:
                spectator.on_event(msg)
                pushed = msg["event"]
                if spectator.static is None and isinstance(pushed, dict) and pushed.get("type") == "game_started":
                    await ws.send_message(encode(view_request))  # the card table comes with the first view
    out(f"replay: {replay_url(url, table)}")
    return spectator.result


def replay_url(url: str, table: str) -> str:
    """The replay page of ``table`` on the server at WebSocket ``url``: ``ws://h:p/`` -> ``http://h:p/replay/t1``."""
    parts = urlsplit(url)
    scheme = "https" if parts.scheme == "wss" else "http"
    return f"{scheme}://{parts.netloc}/replay/{quote(table, safe='')}"
