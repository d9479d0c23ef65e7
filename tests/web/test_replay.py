"""The replay page in headless Chromium (``clients/web/e2e/replay.mjs``): a Parsimonia, a Kupcy and a Gift of Tulips
game played to their end by the reference bots over a real server, and a toy game (installed as a package of its
own: the generic view), each replayed at ``/replay/<table>`` from its first event to its last (next, previous, a step and a turn to jump to, play at 16x), with each seat's private view after
the end, on a phone's screen too; the lobby links a finished table to its replay; a running table's replay says so
and shows nothing of it.

It needs what ``make test`` installs (Node, ``npm ci``, the built page, Chromium), as ``test_browser`` does.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import trio
from trio_websocket import open_websocket_url

from clients.sdk import call
from protocol.messages import PROTOCOL_VERSION
from server.cli.demo import play
from tests.toy_game import Sealed, installed
from tests.web.test_browser import CHROMIUM, Served, _require, _run

GAMES = [("parsimonia", 3), ("kupcy", 3), ("gift-of-tulips", 3)]
TIME_SCALE = 200.0  # the longest, Parsimonia's 2 hours, in 36 s


async def _play_all(url: str) -> list[dict[str, object]]:
    played: list[dict[str, object]] = []

    async def one(game: str, seats: int) -> None:
        out = await play(url, seats, 7, TIME_SCALE, "greedy", game=game)
        played.append({"game": game, "table": out["table"], "seats": seats})

    with trio.fail_after(300):
        async with trio.open_nursery() as nursery:
            for game, seats in GAMES:
                nursery.start_soon(one, game, seats)
        ordered = sorted(played, key=lambda g: [name for name, _ in GAMES].index(str(g["game"])))
        return [*ordered, {"game": Sealed.NAME, "table": await _toy_game(url), "seats": 2}]


async def _toy_game(url: str) -> str:
    """A toy game played to its end by two connections: 7 and 9, sealed, then revealed."""
    async with open_websocket_url(url) as ann, open_websocket_url(url) as bo:
        for ws in (ann, bo):
            await call(ws, "hello", version=PROTOCOL_VERSION, client="replay-test")
        table: str = (await call(ann, "create", game=Sealed.NAME, seats=2))["table"]
        for ws, name in ((ann, "Ann"), (bo, "Bo")):
            await call(ws, "join", table=table, name=name)
        for ws, value in ((ann, 7), (bo, 9)):
            await call(ws, "act", table=table, command={"type": "choose", "value": value})
    return table


def test_replay_page(tmp_path: Path) -> None:
    node = _require(browser=True)
    server = Served(tmp_path, admin=False, site=installed(tmp_path / "site"), sync="write")  # a journal: replay files
    try:
        games = trio.run(_play_all, f"ws://127.0.0.1:{server.port}")
        shots = os.environ.get("PARSIMONIA_SCREENSHOTS") or str(tmp_path)
        done = _run([node, "e2e/replay.mjs"], {"PARSIMONIA_HTTP": f"http://127.0.0.1:{server.port}",
                                               "PARSIMONIA_REPLAYS": json.dumps(games), "PARSIMONIA_SCREENSHOTS": shots,
                                               "CHROMIUM": CHROMIUM}, timeout=400)
    finally:
        server.stop()
    assert done.returncode == 0, f"e2e failed:\n{done.stdout}\n{done.stderr}"
    assert "e2e: all passed" in done.stdout
    assert [g["game"] for g in games] == [*(name for name, _ in GAMES), Sealed.NAME]
