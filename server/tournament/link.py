"""The director's side of the protocol: one connection to the server for requests and for following the
tournament's tables, plus short-lived connections to take seats (one connection holds one seat a table).
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio
from trio_websocket import WebSocketConnection, open_websocket_url

from clients.sdk import ServerError, call, request_once
from protocol.codec import decode, encode
from protocol.messages import PROTOCOL_VERSION
from protocol.values import Map, Message, Options, Result, Value
from server.games.fields import str_field

CLIENT = "parsimonia-director"


def _result_of(msg: Message) -> Result | None:
    """The game's result a table's message carries: its ``result`` event, or a view of it after its end (a table
    followed once it ended)."""
    if msg["type"] == "event":
        event = msg["event"]
        found = event["result"] if isinstance(event, dict) and event.get("type") == "result" else None
    elif msg["type"] == "view":
        view = msg["view"]
        found = view.get("result") if isinstance(view, dict) else None
    else:
        return None
    return found if isinstance(found, dict) else None


class ServerLink:
    def __init__(self, ws: WebSocketConnection, url: str, admin_token: str | None) -> None:
        self.ws = ws
        self.url = url
        self.admin_token = admin_token
        self._ids = itertools.count(1)
        self._replies: dict[int, tuple[trio.Event, list[Message]]] = {}
        self._results_in, self.results = trio.open_memory_channel[tuple[str, Result]](1024)
        self._nursery: trio.Nursery | None = None
        self._others: dict[str, ServerLink] = {}  # on a cluster: a link to each other worker holding a table

    async def _reader(self) -> None:
        """Hand replies to their requests and every table's `result` event to ``results``."""
        while True:
            msg = decode(await self.ws.get_message())
            re = msg.get("re")
            waiter = self._replies.pop(re, None) if isinstance(re, int) else None
            if waiter is not None:
                waiter[1].append(msg)
                waiter[0].set()
                continue
            result, table = _result_of(msg), msg.get("table")
            if result is not None and isinstance(table, str):
                await self._results_in.send((table, result))

    async def request(self, kind: str, **fields: Value) -> Message:
        rid = next(self._ids)
        done: tuple[trio.Event, list[Message]] = (trio.Event(), [])
        self._replies[rid] = done
        await self.ws.send_message(encode({"type": kind, "id": rid, **fields}))
        await done[0].wait()
        reply = done[1][0]
        if reply["type"] == "error":
            raise ServerError(reply)
        return reply

    async def admin(self, action: str, **fields: Value) -> Message:
        if self.admin_token is None:
            raise RuntimeError(f"{action} needs the server's admin token")
        return await self.request("admin", token=self.admin_token, action=action, **fields)

    async def create_table(self, game: str, seats: int, seed: int, options: Options, time_scale: float) -> str:
        fields: Map = {"game": game, "seats": seats, "seed": seed, "options": options,
                      "time_scale": time_scale}
        if self.admin_token is not None:
            fields["admin"] = self.admin_token
        return str_field(await self.request("create", **fields), "table")

    async def take_seats(self, table: str, names: list[str]) -> list[str]:
        """Join every seat of ``table`` in order; return the seat tokens (seat i for names[i])."""
        tokens = []
        for i, name in enumerate(names):
            joined = await request_once(self.url, "join", CLIENT, table=table, name=name, views=False)
            if joined["seat"] != i:
                raise RuntimeError(f"table {table}: {name} got seat {joined['seat']}, expected {i}")
            tokens.append(joined["token"])
        return tokens

    async def follow(self, table: str) -> None:
        """Receive the table's events here: its result arrives on ``results`` (at once, from the view,
        if it has already ended). A result may arrive twice; recording one must be idempotent. On a cluster, a
        table another worker holds is watched from a link to that worker, its results arriving here too."""
        try:
            await self.request("watch", table=table, views=False)
        except ServerError as err:
            if err.code != "moved" or not isinstance(err.url, str) or self._nursery is None:
                raise
            other = self._others.get(err.url)
            if other is None:
                other = self._others[err.url] = await self._nursery.start(self._other_worker, err.url)
            await other.request("watch", table=table, views=False)

    async def _other_worker(self, url: str, *, task_status: trio.TaskStatus[ServerLink]) -> None:
        async with open_websocket_url(url) as ws:
            await call(ws, "hello", version=PROTOCOL_VERSION, client=CLIENT)
            other = ServerLink(ws, url, self.admin_token)
            other._results_in = self._results_in  # its tables' results come with everyone's
            async with trio.open_nursery() as nursery:
                nursery.start_soon(other._reader)
                task_status.started(other)


@asynccontextmanager
async def open_link(url: str, admin_token: str | None) -> AsyncIterator[ServerLink]:
    async with open_websocket_url(url) as ws:
        await call(ws, "hello", version=PROTOCOL_VERSION, client=CLIENT)
        link = ServerLink(ws, url, admin_token)
        async with trio.open_nursery() as nursery:
            link._nursery = nursery
            nursery.start_soon(link._reader)
            yield link
            nursery.cancel_scope.cancel()
