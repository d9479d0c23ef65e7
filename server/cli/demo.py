"""``parsimonia demo``: one whole game of reference bots over real WebSocket connections."""

from __future__ import annotations

import os
from typing import Callable, TypedDict

import trio

from clients.narrate import Narrated
from clients.players import make_player
from clients.sdk import BotSession, request_once
from protocol.values import Map, Options
from server.runtime.app import Server, ServerConfig
from server.games import DEFAULT_GAME
from server.cli.simulate import game_summary, player_kinds

DEFAULT_TIME_SCALE = 200.0  # a 2-hour game in 36 s


Progress = Callable[[str], None] | None  # where to print a line per turn, or None for silence


def _unsaid(line: str) -> None:
    """The demo's own bots wait for each other, and a reference bot's refusal (a bid overtaken) is no news."""


class AdminField(TypedDict, total=False):
    """The ``admin`` field of a request: the server's admin token, when it has one."""

    admin: str


async def play(url: str, players: int, seed: int, time_scale: float, kind: str, progress: Progress = None,
               game: str = DEFAULT_GAME, options: Options | None = None) -> Map:
    token = os.environ.get("PARSIMONIA_ADMIN_TOKEN")
    admin: AdminField = {"admin": token} if token else {}
    kinds = player_kinds(players, kind)
    made = [make_player(k, seed * 1009 + s, game) for s, k in enumerate(kinds)]  # a kind the game has not: now
    created = await request_once(url, "create", game=game, seats=players, seed=seed, time_scale=time_scale,
                                 options=options or {}, **admin)
    bots = [BotSession(url, player, name=f"{k}-{s}", table=created["table"], game=game, say=_unsaid)
            for s, (k, player) in enumerate(zip(kinds, made))]
    if progress is not None:  # seat 0 sees every view of the table: it tells the story
        bots[0].player = Narrated(bots[0].player, progress)
    async with trio.open_nursery() as nursery:
        for bot in bots:  # one at a time, so seat i is bots[i]
            nursery.start_soon(bot.run)
            await bot.joined.wait()
    result = bots[0].result
    assert result is not None
    return {**game_summary(result, kinds), "table": created["table"], "reconnects": sum(b.reconnects for b in bots)}


async def demo(
    players: int, seed: int, time_scale: float = DEFAULT_TIME_SCALE, kind: str = "greedy", url: str | None = None,
    progress: Progress = None, game: str = DEFAULT_GAME, options: Options | None = None,
) -> Map:
    """Play against ``url``, or against a server started in process on a free loopback port."""
    if url is not None:
        return await play(url, players, seed, time_scale, kind, progress, game, options)
    async with trio.open_nursery() as nursery:
        server = await nursery.start(Server(ServerConfig(port=0)).run)
        out = await play(f"ws://127.0.0.1:{server.port}", players, seed, time_scale, kind, progress, game, options)
        nursery.cancel_scope.cancel()
    return out
