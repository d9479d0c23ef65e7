"""``parsimonia demo``: a whole game of reference bots over real sockets, in process and from the CLI."""

from __future__ import annotations

import json

import pytest

from server.cli.main import main
from server.cli.demo import demo
from tests.server.conftest import BANK, url

DEMO_KEYS = {"game", "seed", "players", "winners", "dollars", "company_dollars", "actions", "game_ms"}


async def test_demo_plays_a_whole_game_in_process_and_conserves_money():
    # real time (a 2-hour game at time scale 2000 lasts 3.6 s): under the autojump clock the bots would
    # fill every game millisecond with actions and take longer
    out = await demo(players=3, seed=5, time_scale=2000)
    assert DEMO_KEYS <= set(out)
    assert out["game"] == "parsimonia" and out["seed"] == 5 and out["players"] == 3
    assert len(out["dollars"]) == 3 and sum(out["dollars"]) + out["company_dollars"] == BANK
    assert out["winners"] and all(out["dollars"][w] == max(out["dollars"]) for w in out["winners"])
    assert out["actions"] > 0 and out["game_ms"] >= 7_200_000 / 2000  # ended by the game clock
    assert out["reason"] == "clock" and out["kinds"] == ["greedy"] * 3


async def test_demo_against_a_running_server_plays_on_a_table_there(server):
    out = await demo(players=2, seed=8, time_scale=5000, url=url(server))
    table = server.lobby.tables[out["table"]]
    assert table.state == "over" and table.match.seed == 8
    assert out["digest"] == table.match.engine.digest()
    assert out["dollars"] == table.match.engine.result()["dollars"]
    assert sum(out["dollars"]) + out["company_dollars"] == BANK


def test_cli_demo_json_prints_one_json_object(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["demo", "--json", "--players", "2", "--time-scale", "5000"])
    assert exit_.value.code == 0
    printed = capsys.readouterr().out.strip().splitlines()
    assert len(printed) == 1
    out = json.loads(printed[0])
    assert DEMO_KEYS <= set(out)
    assert out["players"] == 2 and out["seed"] == 1 and len(out["dollars"]) == 2
    assert sum(out["dollars"]) + out["company_dollars"] == BANK
