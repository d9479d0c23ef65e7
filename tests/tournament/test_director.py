"""The director end to end: a small bot league to the end in process, and one killed mid-round (director
and its server together) that finishes after a restart with every game counted once."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import logging

import pytest
import trio

from server.ops import logs
from server.storage.dirlock import DataDirBusy, DirLock
from server.storage.journal import read_journal
from server.tournament import director as director_module
from server.tournament.director import Director, DirectorConfig, run_tournament
from server.tournament.guide import entrant_key
from server.tournament.roster import load_roster
from server.tournament.seeds import SECRET_FILE, directory_secret, seed_key, table_seeds
from server.tournament.standings import compute_standings
from server.tournament.store import Store
from tests.server.cli.test_main import run


@pytest.fixture(autouse=True)
def _quiet_logs() -> None:
    logs.configure(level=logging.WARNING)


BOT = ["{kind}", "--seed", "{seed}", "--name", "{name}", "--url", "{url}", "--table", "{table}", "--token", "{token}"]


def write_roster(path: Path, entrants: int, rounds: int, table_size: int, game_ms: int = 600_000) -> Path:
    lines = [
        'name = "test league"', 'format = "swiss"', f"rounds = {rounds}", f"table_size = {table_size}", "seed = 3",
        "[options]", f"game_ms = {game_ms}", "opening_ms = 120000", "turn_ms = 30000", "quiet_ms = 10000",
    ]
    for i in range(entrants):
        kind = "greedy" if i % 2 == 0 else "random"
        argv = [sys.executable, "-m", "server.cli.main", "bot"] + [a.replace("{kind}", kind).replace("{seed}", str(i))
                                                              for a in BOT]
        lines += ["[[entrant]]", f'name = "{kind}-{i}"', f"bot = {json.dumps(argv)}"]
    path.write_text("\n".join(lines) + "\n")
    return path


def games_by_name(doc: dict) -> dict[str, int]:
    return {e["name"]: e["games"] for e in doc["entrants"]}


def stored_standings(data: Path) -> list[dict]:
    with Store(data / "tournament.sqlite") as store:
        snap = store.load()
        names = {e.id: e.name for e in snap.entrants}
        fresh = compute_standings(names, snap.results(), snap.roster.points, set())
        return [s.to_dict() for s in fresh]


async def test_bot_league_plays_every_round_to_the_end(tmp_path):
    roster = write_roster(tmp_path / "league.toml", entrants=5, rounds=2, table_size=3)
    cfg = DirectorConfig(roster=str(roster), data_dir=str(tmp_path / "data"), port=0, time_scale=600, live=False)
    lines: list[str] = []
    with trio.fail_after(120):
        doc = await run_tournament(cfg, lines.append)
    assert doc["state"] == "finished" and [r["finished"] for r in doc["rounds"]] == [True, True]
    assert games_by_name(doc) == {f"{'greedy' if i % 2 == 0 else 'random'}-{i}": 2 for i in range(5)}
    for rnd in doc["rounds"]:
        assert sorted(len(t["seats"]) for t in rnd["tables"]) == [2, 3]  # balanced, no lone player
    points = [e["points"] for e in doc["entrants"]]
    assert points == sorted(points, reverse=True)
    assert [{k: e[k] for k in ("name", "points", "score", "games")} for e in doc["entrants"]] == [
        {k: e[k] for k in ("name", "points", "score", "games")} for e in stored_standings(tmp_path / "data")
    ]
    export = tmp_path / "data" / "export"
    assert {"standings.csv", "results.csv", "tournament.json"} <= {p.name for p in export.iterdir()}
    assert len(list((export / "replays").iterdir())) == 4  # every game's replay file is kept
    assert lines[-1] == f"exports written to {export}: standings.csv, results.csv, tournament.json, replays/"
    token_file = tmp_path / "data" / "admin-token"
    assert f"the organiser's admin token (for the page's #admin) is in {token_file}" in lines
    assert token_file.stat().st_mode & 0o077 == 0 and len(token_file.read_text().strip()) >= 16
    DirLock(str(tmp_path / "data")).close()  # the director let go of its directory
    # every table was dealt the seed derived from the roster's (seed = 3) and the directory's secret, which stays in
    # the directory (not in its exports)
    key = seed_key(directory_secret(tmp_path / "data"), 3)
    for rnd in doc["rounds"]:
        dealt = [read_journal(str(export / t["replay"])).records[0]["seed"] for t in rnd["tables"]]
        assert dealt == table_seeds(key, rnd["round"], len(rnd["tables"]))
    assert not [p for p in export.rglob("*") if p.name == SECRET_FILE]


async def test_the_organisers_terminal_shows_the_standings_once_a_round(tmp_path):
    """Not again between the round's last result and its end: the same table twice (#20)."""
    roster = write_roster(tmp_path / "duel.toml", entrants=2, rounds=2, table_size=2)
    cfg = DirectorConfig(roster=str(roster), data_dir=str(tmp_path / "data"), port=0, time_scale=600, live=True)
    lines: list[str] = []
    with trio.fail_after(120):
        await run_tournament(cfg, lines.append)
    headings = [line.splitlines()[0] for line in lines if ": after round " in line or ": before round " in line]
    assert [h.rsplit(": ", 1)[1] for h in headings] == [
        "before round 1 of 2", "after round 1 of 2", "after round 2 of 2"]


async def test_a_second_director_on_a_data_directory_in_use_stops_before_touching_it(tmp_path):
    roster = write_roster(tmp_path / "league.toml", entrants=4, rounds=1, table_size=2)
    data = tmp_path / "data"
    data.mkdir()
    holder = DirLock(str(data))  # e.g. a first director, still running
    try:
        with pytest.raises(DataDirBusy, match=f"data directory {data} is in use by process {os.getpid()}"):
            await run_tournament(DirectorConfig(roster=str(roster), data_dir=str(data), port=0, live=False))
    finally:
        holder.close()
    assert sorted(p.name for p in data.iterdir()) == ["lock"]


def test_director_killed_mid_round_finishes_after_restart_counting_every_game_once(tmp_path):
    roster = write_roster(tmp_path / "league.toml", entrants=6, rounds=3, table_size=3, game_ms=1_200_000)
    data = tmp_path / "data"
    argv = [sys.executable, "-m", "server.cli.main", "tournament", "--roster", str(roster), "--data", str(data),
            "--port", "0", "--time-scale", "400", "--json"]
    first = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        seen = b""
        while b"round 2:" not in seen and time.monotonic() < deadline:  # kill it once round 2 is under way
            seen += first.stderr.readline()
        assert b"round 2:" in seen, seen
        time.sleep(0.5)
    finally:
        os.killpg(first.pid, signal.SIGKILL)  # the director, its server and its bots, mid-round
        first.wait()
    second = subprocess.run(argv, capture_output=True, timeout=120)
    assert second.returncode == 0, second.stderr.decode()[-2000:]
    doc = json.loads(second.stdout)
    assert doc["state"] == "finished" and len(doc["rounds"]) == 3
    assert set(games_by_name(doc).values()) == {3}  # no game lost, none counted twice
    tables = [t["server_table"] for r in doc["rounds"] for t in r["tables"]]
    assert len(tables) == len(set(tables)) == 6
    assert [{k: e[k] for k in ("name", "points", "score", "games")} for e in doc["entrants"]] == [
        {k: e[k] for k in ("name", "points", "score", "games")} for e in stored_standings(data)
    ]


async def test_organiser_commands_pause_resume_replace_and_drop(tmp_path):
    """A human who never shows up: the organiser pauses and resumes the round, has a greedy bot take the
    human's seat, and drops the human from the next round."""
    lines = ['name = "with a human"', "rounds = 2", "table_size = 3", "seed = 5",
             "[options]", "game_ms = 600000", "opening_ms = 60000", "turn_ms = 20000", "quiet_ms = 5000",
             "[[entrant]]", 'name = "Ada"', "human = true"]
    for i in range(2):
        argv = [sys.executable, "-m", "server.cli.main", "bot", "greedy", "--seed", str(i), "--url", "{url}",
                "--table", "{table}", "--token", "{token}"]
        lines += ["[[entrant]]", f'name = "bot-{i}"', f"bot = {json.dumps(argv)}"]
    (tmp_path / "r.toml").write_text("\n".join(lines) + "\n")
    cfg = DirectorConfig(roster=str(tmp_path / "r.toml"), data_dir=str(tmp_path / "data"), port=0, time_scale=100,
                         live=False)
    seen: list[str] = []
    told: list[str] = []
    directors: list[Director] = []
    original_run = Director.run

    async def run_and_keep(self: Director):
        directors.append(self)
        return await original_run(self)

    async def organise() -> None:
        while not (directors and directors[0].running):
            await trio.sleep(0.05)
        director = directors[0]
        [sid] = director.running
        assert sid in director.seats.waiting  # its clocks wait for Ada
        assert (await director.command("seat ada")).startswith(f"Ada: table {sid}, seat ")
        assert (await director.command("seat ada")).endswith(" (not connected)")
        assert await director.command("pause") == "paused 0 tables"  # held: not the organiser's to pause
        assert await director.command("start t999") == "t999 is not a table waiting for its players"
        assert await director.command(f"start {sid}") == f"started {sid}"
        assert await director.command("pause") == "paused 1 tables"  # the server accepted it
        assert await director.command("pause") == "paused 0 tables"  # already paused: refused
        seen.append(await director.command("resume"))
        seen.append(await director.command("replace Ada"))
        seen.append(await director.command("drop Ada"))
        seen.append(await director.command("replace Nobody"))
        seen.append(await director.command("dance"))

    with trio.fail_after(120):
        async with trio.open_nursery() as nursery:
            Director.run = run_and_keep
            try:
                nursery.start_soon(organise)
                doc = await run_tournament(cfg, told.append)
            finally:
                Director.run = original_run
    assert any(line.startswith("table t1: its clocks run without Ada") and "(started by the organiser); " in line
               for line in told)  # and maybe without its bots, not connected yet
    assert seen[0] == "resumed 1 tables"
    assert seen[1].startswith("a greedy bot plays Ada's seat")
    assert seen[2] == "Ada is dropped from the next round on"
    assert seen[3] == "no entrant 'Nobody' (the roster's names: Ada, bot-0, bot-1)" and seen[4].startswith("commands:")
    ada = next(e for e in doc["entrants"] if e["name"] == "Ada")
    assert ada["dropped"] and ada["games"] == 1  # played round 1 (by the stand-in), not round 2
    assert ada["points"] == 0  # a no-show: the stand-in's game is not hers
    seats = {s["name"]: s["no_show"] for s in doc["rounds"][0]["tables"][0]["seats"]}
    assert seats == {"Ada": True, "bot-0": False, "bot-1": False}  # the stand-in is not Ada
    assert "Ada never connected to table t1: a no-show, last at the table with no points" in told
    assert len(doc["rounds"][1]["tables"]) == 1 and len(doc["rounds"][1]["tables"][0]["seats"]) == 2


def human_roster(path: Path, grace_s: int, rounds: int = 1) -> Path:
    bot = [sys.executable, "-m", "server.cli.main", "bot", "greedy", "--url", "{url}", "--table", "{table}",
           "--token", "{token}"]
    lines = ['name = "a human and a bot"', f"rounds = {rounds}", "table_size = 2", "seed = 5",
             f"human_grace_s = {grace_s}",
             "[options]", "game_ms = 600000", "opening_ms = 60000", "turn_ms = 20000", "quiet_ms = 5000",
             "[[entrant]]", 'name = "Ada"', "human = true", "[[entrant]]", 'name = "bot-0"', f"bot = {json.dumps(bot)}"]
    path.write_text("\n".join(lines) + "\n")
    return path


async def test_a_table_with_a_human_keeps_its_clocks_still_until_the_human_connects(tmp_path, monkeypatch):
    """At 1000x a 10-minute game ends in 0.6 s, bot or no bot: held, it waits until Ada connects with her
    token, then plays to its end."""
    from clients.players import make_player
    from clients.sdk import run_bot

    cfg = DirectorConfig(roster=str(human_roster(tmp_path / "r.toml", grace_s=600)), data_dir=str(tmp_path / "d"),
                         port=0, time_scale=1000, live=False)
    directors: list[Director] = []
    original_init = Director.__post_init__

    def keep(self: Director) -> None:
        original_init(self)
        directors.append(self)

    monkeypatch.setattr(Director, "__post_init__", keep)
    told: list[str] = []

    async def ada_arrives_late() -> None:
        while not (directors and directors[0].running):
            await trio.sleep(0.05)
        director = directors[0]
        [(sid, table)] = director.running.items()
        await trio.sleep(2)  # three games' length
        assert sid in director.running and sid in director.seats.waiting  # no result: its clocks are still
        seat = table.seats.index(1)  # Ada is entrant 1
        await run_bot(director.url, make_player("greedy", 0), name="Ada", table=sid, token=table.tokens[seat])

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(ada_arrives_late)
            doc = await run_tournament(cfg, told.append)
    assert any(line.startswith("Ada's link for every round: http://127.0.0.1:") for line in told)
    assert any(line.startswith("table t1: its clocks wait for Ada to connect") for line in told)
    assert any(line.startswith("  Ada: table t1, seat ") and "token" in line for line in told)
    assert any(line.startswith("Ada is connected to table t1") for line in told)
    assert "table t1: every player is connected; its clocks run" in told
    assert doc["state"] == "finished"
    assert {s["name"]: s["no_show"] for s in doc["rounds"][0]["tables"][0]["seats"]} == {"Ada": False, "bot-0": False}
    with (tmp_path / "d" / "export" / "results.csv").open() as f:
        assert {r["name"]: r["no_show"] for r in csv.DictReader(f)} == {"Ada": "False", "bot-0": "False"}


class FakeLink:
    """The admin requests a director makes while it watches seats: a scripted connections listing."""

    url = "ws://127.0.0.1:1"
    admin_token = "a" * 24

    def __init__(self) -> None:
        self.listing: list[dict] = []
        self.resumed: list[tuple[str, float]] = []
        self.published: list[tuple[str, dict]] = []

    async def admin(self, action: str, **fields):
        if action == "connections":
            return {"type": "connections", "connections": self.listing}
        if action == "publish":
            self.published.append((fields["topic"], fields["data"]))
            return {"type": "ok"}
        assert action == "unpause"
        self.resumed.append((fields["table"], trio.current_time()))
        return {"type": "ok"}


def held_director(tmp_path: Path, grace_s: int, rounds: int = 1) -> tuple[Director, FakeLink, list[str]]:
    roster = load_roster(human_roster(tmp_path / "r.toml", grace_s, rounds))
    store = Store(tmp_path / "t.sqlite")
    snap = store.begin(roster, None)
    store.start_round(1, [[2, 1]], snap.table_seeds(1, 1))
    store.table_started(1, 1, "t1", ["bot-token", "ada-token"], held=True, watched=True)
    link, told = FakeLink(), []
    director = Director(DirectorConfig(roster=""), roster, store, link, told.append)
    director._running = {"t1": store.load().rounds[0].tables[0]}
    director.seats.follow("t1", {1: "Ada"}, held=True, now=trio.current_time(), bots={0: "bot-0"})
    return director, link, told


async def test_a_held_table_starts_after_its_grace_without_the_missing_human(tmp_path, autojump_clock):
    director, link, told = held_director(tmp_path, grace_s=300)
    link.listing = [{"conn": 5, "seats": [{"table": "t1", "seat": 0}]}]  # the bot only
    async with trio.open_nursery() as nursery:
        nursery.start_soon(director._watch_seats, director.seats)
        while not link.resumed:
            await trio.sleep(1)
        nursery.cancel_scope.cancel()
    [(table, at)] = link.resumed
    assert table == "t1" and 300 <= at <= 302
    assert told == ["table t1: its clocks run without Ada (not connected after 300 s); a player who never connects "
                    "forfeits the game, even with a stand-in (`replace NAME`: a greedy bot plays for the others)"]
    assert director.store.load().rounds[0].tables[0].no_show(1) is True


async def test_a_held_table_starts_as_soon_as_its_human_connects(tmp_path, autojump_clock):
    director, link, told = held_director(tmp_path, grace_s=300)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(director._watch_seats, director.seats)
        await trio.sleep(42)
        assert link.resumed == [] and "t1" in director.seats.waiting
        assert (await director.command("seat Ada")) == "Ada: table t1, seat 1, token ada-token (not connected)"
        link.listing = [{"conn": 9, "seats": [{"table": "t1", "seat": 1}]},
                        {"conn": 5, "seats": [{"table": "t1", "seat": 0}]}]  # and the bot
        while not link.resumed:
            await trio.sleep(0.5)
        assert (await director.command("seat Ada")) == "Ada: table t1, seat 1, token ada-token (connected)"
        nursery.cancel_scope.cancel()
    assert 42 <= link.resumed[0][1] <= 43.5
    assert told == ["Ada is connected to table t1, seat 1", "table t1: every player is connected; its clocks run"]
    table = director.store.load().rounds[0].tables[0]
    assert (table.held, table.no_show(1)) == (False, False)


async def test_a_redrawn_console_keeps_every_humans_token_on_screen(tmp_path, monkeypatch, autojump_clock):
    director, link, told = held_director(tmp_path, grace_s=300)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    await director._publish(director.store.load())
    screen = told[-1]
    assert screen.startswith("\x1b[2J\x1b[H" + "a human and a bot: round 1 of 1, 0 of 1 tables finished")
    assert "table t1 (round 1, table 1)" in screen and "Ada" in screen and "token ada-token" in screen


async def test_each_human_gets_one_link_whose_bulletin_names_the_table_they_play_at(tmp_path, autojump_clock):
    director, link, told = held_director(tmp_path, grace_s=300)
    key = entrant_key(link.admin_token, "a human and a bot", 1)  # Ada is entrant 1
    director._print_links(director.store.load())
    assert told == [f"Ada's link for every round: http://127.0.0.1:1/#me/{key}"]
    await director._publish(director.store.load())
    assert link.published[-1] == (f"me.{key}", {"tournament": "a human and a bot", "name": "Ada", "round": 1,
                                                 "state": "playing", "table": "t1", "seat": 1, "token": "ada-token"})
    assert [t for t, _ in link.published] == ["standings", f"me.{key}"]  # the bot has no link


def test_the_in_process_servers_admin_token_is_kept_and_the_same_after_a_restart(tmp_path):
    from server.tournament.director import _own_admin_token

    token, where = _own_admin_token(str(tmp_path))
    assert where == str(tmp_path / "admin-token") and (tmp_path / "admin-token").read_text() == token + "\n"
    assert _own_admin_token(str(tmp_path)) == (token, where)


def test_a_seed_secret_that_is_not_ours_stops_the_director_in_one_line_before_anything_starts(tmp_path, capsys):
    roster = write_roster(tmp_path / "league.toml", entrants=4, rounds=1, table_size=2)
    data = tmp_path / "data"
    data.mkdir()
    (data / SECRET_FILE).write_text("not a secret\n")
    status, out, err = run(capsys, "tournament", "--roster", str(roster), "--data", str(data), "--port", "0")
    assert status == 2 and err.count("\n") == 1 and "seed secret" in err and "Traceback" not in err
    assert (data / SECRET_FILE).read_text() == "not a secret\n" and not (data / "server").exists()


async def test_a_no_show_forfeits_and_the_console_suggests_dropping_them(tmp_path, autojump_clock):
    """Ada never opens her link: the game is hers to lose, whatever her seat scored, and the organiser is told
    and offered `drop Ada` (#38)."""
    director, link, told = held_director(tmp_path, grace_s=300, rounds=2)
    link.listing = [{"conn": 5, "seats": [{"table": "t1", "seat": 0}]}]  # the bot only
    async with trio.open_nursery() as nursery:
        nursery.start_soon(director._watch_seats, director.seats)
        while not link.resumed:
            await trio.sleep(1)
        nursery.cancel_scope.cancel()
    await director._record("t1", {"scores": [900, 1400], "winners": [1], "reason": "clock", "actions": 40})
    assert told[-2] == ("Ada never connected to table t1: a no-show, last at the table with no points; `drop Ada` "
                        "leaves them out of the next rounds")
    assert told[-1].startswith("a human and a bot: after round 1 of 2")
    points = {s.name: s.points for s in director.store.load().standings()}
    assert points == {"bot-0": 6, "Ada": 0}
    assert director._running == {}


async def test_a_bot_that_never_connects_holds_its_table_for_the_bots_grace_then_forfeits(tmp_path, autojump_clock):
    director, link, told = held_director(tmp_path, grace_s=300)
    link.listing = [{"conn": 9, "seats": [{"table": "t1", "seat": 1}]}]  # Ada only: her bot opponent is slow
    async with trio.open_nursery() as nursery:
        nursery.start_soon(director._watch_seats, director.seats)
        await trio.sleep(30)
        assert link.resumed == [] and "t1" in director.seats.waiting  # its clocks wait for the bot
        while not link.resumed:
            await trio.sleep(1)
        nursery.cancel_scope.cancel()
    assert 60 <= link.resumed[0][1] <= 62
    assert ("table t1: its clocks run without bot-0 (not connected after 60 s); a player who never connects "
            "forfeits the game, even with a stand-in (`replace NAME`: a greedy bot plays for the others)") in told
    await director._record("t1", {"scores": [1000, 1000], "winners": [0, 1], "reason": "clock", "actions": 0})
    assert any(line.startswith("bot-0 never connected to table t1: a no-show") for line in told)
    assert any(line.startswith("table t1: nobody acted in the whole game (it ended by clock); are the bots too "
                               "slow to start?") for line in told)
    assert {s.name: s.points for s in director.store.load().standings()} == {"Ada": 6, "bot-0": 0}


SLOW_START = """import os, sys, time
time.sleep(float(sys.argv[1]))  # a loaded machine: the bot connects long after its table was made
os.execv(sys.executable, [sys.executable, "-m", "server.cli.main", "bot", *sys.argv[2:]])
"""


async def test_a_bot_league_whose_bots_start_slowly_still_plays_every_game(tmp_path, monkeypatch):
    """At 600x a 10-minute game lasts 1 s of real time; these bots connect 3 s after their table is made.
    The director holds each table's clocks until its bots are connected, so every game is played (#38: at
    --time-scale 200 on a busy machine, every game ended by the clock with nobody having acted)."""
    (tmp_path / "slow.py").write_text(SLOW_START)
    monkeypatch.setattr(director_module, "SLOW_START_S", 2.0)  # told: a wait of 2 s or more (here 3 s and more)
    lines = ['name = "slow bots"', "rounds = 1", "table_size = 2", "seed = 4",
             "[options]", "game_ms = 600000", "opening_ms = 120000", "turn_ms = 30000", "quiet_ms = 10000"]
    for i in range(2):
        argv = [sys.executable, str(tmp_path / "slow.py"), "3", "greedy", "--seed", str(i), "--url", "{url}",
                "--table", "{table}", "--token", "{token}"]
        lines += ["[[entrant]]", f'name = "slow-{i}"', f"bot = {json.dumps(argv)}"]
    (tmp_path / "r.toml").write_text("\n".join(lines) + "\n")
    cfg = DirectorConfig(roster=str(tmp_path / "r.toml"), data_dir=str(tmp_path / "data"), port=0, time_scale=600,
                         live=False)
    told: list[str] = []
    with trio.fail_after(90):
        doc = await run_tournament(cfg, told.append)
    [table] = doc["rounds"][0]["tables"]
    end = [r for r in read_journal(str(tmp_path / "data" / "export" / table["replay"])).records if r.get("k") == "end"]
    assert end[-1]["result"]["actions"] > 0  # the bots played
    assert {s["name"]: s["no_show"] for s in table["seats"]} == {"slow-0": False, "slow-1": False}
    assert "round 1: 1 tables (1 held until their players are connected)" in told
    assert any(line.startswith("table t1: its bots took ") for line in told)
    assert not any("nobody acted" in line for line in told)


async def test_a_stand_in_is_started_again_by_a_restarted_director(tmp_path, autojump_clock):
    """`replace Ada`, then the director stops: started again, it has the greedy bot play her seat again (#38)."""
    director, link, told = held_director(tmp_path, grace_s=300)
    director.store.seat_replaced("t1", 1)
    started: list[tuple[str, int, str, list[str]]] = []
    director.bots.start = lambda sid, seat, name, argv, env: started.append((sid, seat, name, argv))  # type: ignore
    table = director.store.load().rounds[0].tables[0]
    director._seat_players(director.store.load(), "t1", table)
    assert [(sid, seat, name) for sid, seat, name, _ in started] == [("t1", 0, "bot-0"), ("t1", 1, "Ada")]
    assert "greedy" in started[1][3] and "--token=ada-token" in started[1][3]
    assert director.bots.stood_in("t1", 1) and not any(line.startswith("  Ada: table") for line in told)


async def test_seat_and_replace_tell_a_name_that_is_no_entrant_from_one_not_playing(tmp_path, autojump_clock):
    director, link, told = held_director(tmp_path, grace_s=300)
    assert await director.command("seat Nobody") == "no entrant 'Nobody' (the roster's names: Ada, bot-0)"
    assert await director.command("replace Nobody") == "no entrant 'Nobody' (the roster's names: Ada, bot-0)"
    director._running = {}
    assert await director.command("seat ada") == "Ada is not at a running table"


async def test_typed_commands_are_read_when_standard_input_is_not_a_terminal(tmp_path, monkeypatch):
    """Commands piped in (or typed into a terminal the director does not see as one) are obeyed (#38)."""
    roster = write_roster(tmp_path / "duel.toml", entrants=2, rounds=1, table_size=2)
    monkeypatch.setattr(sys, "stdin", io.StringIO("seat random-1\n"))
    told: list[str] = []
    cfg = DirectorConfig(roster=str(roster), data_dir=str(tmp_path / "data"), port=0, time_scale=600, live=False)
    with trio.fail_after(60):
        await run_tournament(cfg, told.append)
    assert any(line.startswith("random-1: table t1, seat ") or line == "random-1 is not at a running table"
               for line in told)
    assert any(line.startswith("the director's standard input is closed: it reads no more commands") for line in told)


async def test_a_tournament_that_fails_to_start_leaves_no_claim_on_its_directory(tmp_path):
    """The port is taken: nothing was played, so the next try may use the directory with any roster (#38)."""
    import socket

    roster = write_roster(tmp_path / "league.toml", entrants=4, rounds=1, table_size=2)
    other = write_roster(tmp_path / "other.toml", entrants=6, rounds=2, table_size=3)
    data = tmp_path / "data"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        cfg = DirectorConfig(roster=str(roster), data_dir=str(data), port=taken.getsockname()[1], live=False)
        with pytest.raises(BaseException) as failed:
            await run_tournament(cfg, [].append)
    assert "Address already in use" in repr(failed.value)
    assert not (data / "tournament.sqlite").exists() and not (data / SECRET_FILE).exists()
    with Store(data / "tournament.sqlite") as store:
        assert store.begin(load_roster(other), None).roster.name == "test league"  # taken, not refused
