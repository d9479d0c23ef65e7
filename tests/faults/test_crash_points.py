"""Crash points (docs/reliability.md): the server process killed with SIGKILL at chosen events of each game
and of the runtime, started again on the same data until every game finishes (tests/faults/campaign.py).
``make test`` runs a slice of them; ``make faults`` all."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import sys

import pytest
import trio

from server.faults import ENV as FAULT_ENV
from server.storage.journal import read_journal, read_log
from server.core.match import Match
from server.cli.replay import replay_file
from tests.faults.campaign import KILL_S, TIME_SCALE, Point, Run
from tests.faults.conftest import FULL
from tests.server.storage.test_crash import ENV, ROOT, command

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and POSIX processes")

P, K, T = "parsimonia", "kupcy", "gift-of-tulips"
SHORT_OPENING = {"opening_ms": 1000}
POINTS = [
    Point("parsimonia-first-auction", P, ["kill@event:auction_opened"], phase="running/opening"),
    Point("parsimonia-opening-bid", P, ["kill@event:bid#3"], phase="running/opening"),
    # the opening ends into opening_closing while auctions are open, else straight into the turns
    Point("parsimonia-opening-ended", P, ["kill@event:opening_ended"]),
    # a short opening (5 ms at this time scale): the 6th auction opens in the turns
    Point("parsimonia-auction-open", P, ["kill@event:auction_opened#6"], options=SHORT_OPENING, phase="running/turns"),
    Point("parsimonia-auction-closing", P, ["kill@event:auction_closed#6"], options=SHORT_OPENING,
          phase="running/turns"),
    Point("parsimonia-mid-turn", P, ["kill@event:card_drawn#3"], phase="running/turns"),
    Point("parsimonia-game-ended", P, ["kill@event:game_ended"]),
    Point("kupcy-split-sealed", K, ["kill@event:split_chosen#2"], phase="running/split"),
    Point("kupcy-split-revealed", K, ["kill@event:split_revealed"]),
    Point("kupcy-offers-pending", K, ["kill@event:offer_made#3"], phase="running/turns"),
    Point("kupcy-rebid-half-revealed", K, ["kill@event:rebid"], phase="running/turns"),
    Point("kupcy-stow", K, ["kill@event:stow_owed#2"]),
    Point("kupcy-last-round", K, ["kill@event:last_round"], phase="running/final"),
    Point("kupcy-game-ended", K, ["kill@event:game_ended"]),
    Point("tulips-setup-sealed", T, ["kill@event:chosen#2"], phase="running/setup"),
    Point("tulips-setup-revealed", T, ["kill@event:setup_revealed"]),
    Point("tulips-mid-turn", T, ["kill@event:given#5"], phase="running/turns"),
    Point("tulips-festival", T, ["kill@event:added"]),
    Point("tulips-game-ended", T, ["kill@event:game_ended"]),
    Point("table-being-created", P, ["kill@create#2"], extra_create_after=2),
    Point("resume-in-progress", K, ["kill@event:offer_made#2", "kill@resume#2"]),
    Point("journal-written-not-synced", P, ["kill@write#40"]),
    Point("journal-half-written", K, ["kill@half-write#30"]),
    Point("three-kills-one-game", T, ["kill@event:chosen", "kill@event:turn_ended#3", "kill@write#10"]),
    # the last join durable (the game starts) but its `joined`, with the token, never sent: the player joins
    # again with the same key (SPEC.md, join) and gets the same seat back
    Point("join-reply-lost", P, ["kill@event:game_started"]),
]
SLICE = {"parsimonia-auction-open", "kupcy-offers-pending", "journal-half-written", "table-being-created"}


@pytest.mark.parametrize("point", [p for p in POINTS if FULL or p.name in SLICE], ids=lambda p: p.name)
async def test_kill_9_loses_no_acknowledged_command_and_the_game_finishes(point: Point, tmp_path):
    outcome = await Run(tmp_path, point).run()
    print(f"\n{outcome}")  # the line docs/reliability.md's table is made from (pytest -s)
    assert outcome.kills == len(point.faults)
    assert outcome.finished and outcome.digest_matched and outcome.acked > 0


ROSTER = """name = "Crash league"
format = "swiss"
rounds = 2
table_size = 3
game = "parsimonia"
seed = 5

[options]
game_ms = 600000
opening_ms = 60000
turn_ms = 60000
quiet_ms = 5000
"""
BOT = ('bot = ["parsimonia", "bot", "greedy", "--seed", "{seed}", "--name", "{{name}}", "--url", "{{url}}", '
       '"--table", "{{table}}", "--token", "{{token}}"]')


@pytest.mark.full_campaign
async def test_kill_9_of_a_tournament_between_rounds_plays_each_round_once_to_the_end(tmp_path):
    """``parsimonia tournament`` (director and server in one process) killed once round 1's results are stored
    and round 2 is not paired yet; the same command again plays round 2 alone, and every game's replay file
    reproduces the digest of the result the tournament stored."""
    roster = tmp_path / "league.toml"
    roster.write_text(ROSTER + "".join(f'\n[[entrant]]\nname = "greedy-{n}"\n{BOT.format(seed=n)}\n'
                                       for n in range(1, 7)))
    data = tmp_path / "data"
    args = command("tournament", "--roster", str(roster), "--data", str(data), "--time-scale", str(TIME_SCALE),
                   "--port", "0", "--json")
    env = {k: v for k, v in ENV.items() if k != FAULT_ENV}
    with trio.fail_after(KILL_S):
        killed = await trio.run_process(args, env={**env, FAULT_ENV: "kill@between-rounds"}, cwd=ROOT,
                                        check=False, capture_stdout=True, capture_stderr=True)
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()[-2000:]
    with sqlite3.connect(data / "tournament.sqlite") as db:
        assert db.execute("SELECT number, state FROM round").fetchall() == [(1, "finished")]
        first = db.execute("SELECT server_table FROM game_table WHERE round = 1").fetchall()
    with trio.fail_after(KILL_S):
        done = await trio.run_process(args, env=env, cwd=ROOT, check=False, capture_stdout=True,
                                      capture_stderr=True)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    doc = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert doc["state"] == "finished" and [r["round"] for r in doc["rounds"]] == [1, 2]
    assert all(r["finished"] and len(r["tables"]) == 2 for r in doc["rounds"])
    with sqlite3.connect(data / "tournament.sqlite") as db:
        stored = db.execute("SELECT g.round, g.server_table, r.result FROM game_table g JOIN result r "
                            "USING (round, position) ORDER BY g.round, g.position").fetchall()
    assert [(rnd, sid) for rnd, sid, _ in stored[:2]] == [(1, sid) for (sid,) in first]  # round 1 not played again
    assert len({sid for _, sid, _ in stored}) == 4
    for _, sid, result in stored:
        replay = data / "server" / "replays" / f"{sid}.journal"
        assert replay_file(str(replay), quiet=True, out=lambda _: None) == 0
        assert Match.replay(read_journal(str(replay)).records).result["digest"] == json.loads(result)["digest"]
    assert not read_log(str(data / "server" / "log")).tables and not os.listdir(data / "server" / "corrupt")
