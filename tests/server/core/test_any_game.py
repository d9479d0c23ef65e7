"""A game registered in the tests alone plays through everything: the runtime over the WebSocket protocol, the SDK,
simulate, recovery. Nothing outside its own module knows it."""

from __future__ import annotations

import pytest
import trio

from clients.players import make_player
from clients.sdk import BotSession, request_once
from server.runtime.app import Server, ServerConfig
from server.cli.simulate import simulate, summary
from tests.toy_game import Sealed, toy  # noqa: F401 (the fixture)


pytestmark = pytest.mark.usefixtures("toy")


async def play(url: str, seats: int) -> list[dict]:
    created = await request_once(url, "create", game=Sealed.NAME, seats=seats, options={"choose_ms": 2000})
    bots = [BotSession(url, make_player("random", s, Sealed.NAME), name=f"r{s}", table=created["table"],
                       game=Sealed.NAME) for s in range(seats)]
    async with trio.open_nursery() as nursery:
        for bot in bots:
            nursery.start_soon(bot.run)
            await bot.joined.wait()
    return [b.result for b in bots]


async def test_a_toy_game_plays_to_its_end_over_websockets_with_sdk_bots(autojump_clock, tmp_path):
    async with trio.open_nursery() as nursery:
        server = await nursery.start(Server(ServerConfig(port=0, data_dir=str(tmp_path), sync="write")).run)
        results = await play(f"ws://127.0.0.1:{server.port}", 3)
        nursery.cancel_scope.cancel()
    first = results[0]
    assert all(r == first for r in results)
    assert first["game"] == Sealed.NAME and first["reason"] == "revealed" and len(first["scores"]) == 3
    assert first["winners"] == [s for s in range(3) if first["scores"][s] == max(first["scores"])]
    assert (tmp_path / "replays" / "t1.journal").exists()


def test_simulate_plays_a_toy_game_deterministically():
    one = summary(simulate(4, seed=5, kind="random", game=Sealed.NAME))
    two = summary(simulate(4, seed=5, kind="random", game=Sealed.NAME))
    assert one == two and one["game"] == Sealed.NAME and one["reason"] == "revealed"


def test_simulate_refuses_a_player_kind_the_game_has_not():
    with pytest.raises(KeyError, match="no 'greedy' player"):
        simulate(2, seed=1, kind="greedy", game=Sealed.NAME)


TOY_BOT = ["-c", "import sys; from tests.toy_game import install; install(); from server.cli.main import main; "
           "main(sys.argv[1:])", "bot", "random", "--game", Sealed.NAME, "--seed", "{name}", "--url", "{url}",
           "--table", "{table}", "--token", "{token}"]


async def test_a_league_of_a_toy_game_runs_in_the_tournament_director(tmp_path):
    import json
    import logging
    import sys

    from server.ops import logs
    from server.tournament.director import DirectorConfig, run_tournament

    logs.configure(level=logging.WARNING)
    lines = ['name = "toy league"', 'format = "swiss"', "rounds = 2", "table_size = 2", "seed = 5",
             f'game = "{Sealed.NAME}"', "[options]", "choose_ms = 5000"]
    for i in range(4):
        bot = [sys.executable, *[a.replace("{name}", str(i)) for a in TOY_BOT]]
        lines += ["[[entrant]]", f'name = "toy-{i}"', f"bot = {json.dumps(bot)}"]
    roster = tmp_path / "toy.toml"
    roster.write_text("\n".join(lines) + "\n")
    cfg = DirectorConfig(roster=str(roster), data_dir=str(tmp_path / "data"), port=0, time_scale=10, live=False)
    with trio.fail_after(120):
        doc = await run_tournament(cfg, lambda line: None)
    assert doc["state"] == "finished" and [r["finished"] for r in doc["rounds"]] == [True, True]
    assert {e["name"]: e["games"] for e in doc["entrants"]} == {f"toy-{i}": 2 for i in range(4)}
    points = [e["points"] for e in doc["entrants"]]
    assert points == sorted(points, reverse=True) and sum(points) > 0
