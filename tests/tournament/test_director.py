"""The director end to end: a small bot league to the end in process, and one killed mid-round (director
and its server together) that finishes after a restart with every game counted once."""

from __future__ import annotations

import csv
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

from server import logs
from server.dirlock import DataDirBusy, DirLock
from server.journal import read_journal
from server.tournament.director import Director, DirectorConfig, run_tournament
from server.tournament.guide import entrant_key
from server.tournament.roster import load_roster
from server.tournament.seeds import SECRET_FILE, directory_secret, seed_key, table_seeds
from server.tournament.standings import compute_standings
from server.tournament.store import Store
from tests.server.test_cli import run


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
        argv = [sys.executable, "-m", "server.cli", "bot"] + [a.replace("{kind}", kind).replace("{seed}", str(i))
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
    headings = [line.splitlines()[0] for line in lines if ": after round " in line]
    assert [h.rsplit(": ", 1)[1] for h in headings] == ["after round 0 of 2", "after round 1 of 2", "after round 2 of 2"]


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
    argv = [sys.executable, "-m", "server.cli", "tournament", "--roster", str(roster), "--data", str(data),
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
        argv = [sys.executable, "-m", "server.cli", "bot", "greedy", "--seed", str(i), "--url", "{url}",
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
        while not (directors and directors[0]._running):
            await trio.sleep(0.05)
        director = directors[0]
        [sid] = director._running
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
    assert "table t1: its clocks run without Ada (started by the organiser)" in told
    assert seen[0] == "resumed 1 tables"
    assert seen[1].startswith("a greedy bot plays Ada's seat")
    assert seen[2] == "Ada is dropped from the next round on"
    assert seen[3] == "Nobody is not at a running table" and seen[4].startswith("commands:")
    ada = next(e for e in doc["entrants"] if e["name"] == "Ada")
    assert ada["dropped"] and ada["games"] == 1  # played round 1 (by the stand-in), not round 2
    seats = {s["name"]: s["no_show"] for s in doc["rounds"][0]["tables"][0]["seats"]}
    assert seats == {"Ada": True, "bot-0": None, "bot-1": None}  # the stand-in is not Ada
    assert len(doc["rounds"][1]["tables"]) == 1 and len(doc["rounds"][1]["tables"][0]["seats"]) == 2


def human_roster(path: Path, grace_s: int) -> Path:
    bot = [sys.executable, "-m", "server.cli", "bot", "greedy", "--url", "{url}", "--table", "{table}",
           "--token", "{token}"]
    lines = ['name = "a human and a bot"', "rounds = 1", "table_size = 2", "seed = 5", f"human_grace_s = {grace_s}",
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
        while not (directors and directors[0]._running):
            await trio.sleep(0.05)
        director = directors[0]
        [(sid, table)] = director._running.items()
        await trio.sleep(2)  # three games' length
        assert sid in director._running and sid in director.seats.waiting  # no result: its clocks are still
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
    assert {s["name"]: s["no_show"] for s in doc["rounds"][0]["tables"][0]["seats"]} == {"Ada": False, "bot-0": None}
    with (tmp_path / "d" / "export" / "results.csv").open() as f:
        assert {r["name"]: r["no_show"] for r in csv.DictReader(f)} == {"Ada": "False", "bot-0": ""}


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


def held_director(tmp_path: Path, grace_s: int) -> tuple[Director, FakeLink, list[str]]:
    roster = load_roster(human_roster(tmp_path / "r.toml", grace_s))
    store = Store(tmp_path / "t.sqlite")
    snap = store.begin(roster, None)
    store.start_round(1, [[2, 1]], snap.table_seeds(1, 1))
    store.table_started(1, 1, "t1", ["bot-token", "ada-token"], held=True)
    link, told = FakeLink(), []
    director = Director(DirectorConfig(roster=""), roster, store, link, told.append)
    director._running = {"t1": store.load().rounds[0].tables[0]}
    director.seats.follow("t1", {1: "Ada"}, held=True, now=trio.current_time())
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
    assert told == ["table t1: its clocks run without Ada (not connected after 300 s)"]
    assert director.store.load().rounds[0].tables[0].no_show(1) is True


async def test_a_held_table_starts_as_soon_as_its_human_connects(tmp_path, autojump_clock):
    director, link, told = held_director(tmp_path, grace_s=300)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(director._watch_seats, director.seats)
        await trio.sleep(42)
        assert link.resumed == [] and "t1" in director.seats.waiting
        assert (await director.command("seat Ada")) == "Ada: table t1, seat 1, token ada-token (not connected)"
        link.listing = [{"conn": 9, "seats": [{"table": "t1", "seat": 1}]}]
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
    assert screen.startswith("\x1b[2J\x1b[H" + "a human and a bot: after round 0 of 1")
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
