"""``parsimonia watch`` against a real server on 127.0.0.1, at autojump-clock time: what an organiser's second
screen shows from the start, from the middle, and of a table that is already over."""

from __future__ import annotations

import pytest
import trio

from clients.games import words_for
from clients.players import make_player
from clients.sdk import BotSession, ServerError, request_once
from clients.watch import Spectator, replay_url, watch
from tests.server.conftest import SHORT, _quiet_server_logs, server, url  # noqa: F401 (fixtures)

NAMES = ["Ada", "Bob"]


async def play_game(server, nursery: trio.Nursery) -> tuple[str, list[BotSession]]:
    table = (await request_once(url(server), "create", game="parsimonia", seats=2, seed=3, options=SHORT))["table"]
    bots = [BotSession(url(server), make_player("greedy", i), name=name, table=table) for i, name in enumerate(NAMES)]
    for bot in bots:
        nursery.start_soon(bot.run)
        await bot.joined.wait()
    return table, bots


async def test_watching_from_the_start_names_players_and_stamps_game_time(server, autojump_clock):
    lines: list[str] = []
    table = (await request_once(url(server), "create", game="parsimonia", seats=2, seed=3, options=SHORT))["table"]
    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch, url(server), table, lines.append)
            await trio.sleep(1)
            for i, name in enumerate(NAMES):
                nursery.start_soon(BotSession(url(server), make_player("greedy", i), name=name, table=table).run)
                await trio.sleep(1)
    assert lines[0] == f"{table}: waiting for players"
    assert lines[1] == "[   0:00] game started: Ada (seat 0), Bob (seat 1)"
    assert any(line.startswith("[") and "turn 1: Ada to play, turn ends in 0:02" in line for line in lines)
    assert any("Bob bids $" in line for line in lines)
    assert any(" resource ($" in line for line in lines)  # cards by type and profit, not by id
    assert not any("seat=" in line or "auction={" in line for line in lines)  # every event in words
    assert lines[-5].startswith("[   1:00] game over (clock)")  # the 60 s game clock, not server uptime
    assert lines[-4].startswith("  Ada: $") and lines[-3].startswith("  Bob: $")
    assert lines[-1] == f"replay: http://127.0.0.1:{server.port}/replay/{table}"


async def test_joining_mid_game_prints_a_summary_first(server, autojump_clock):
    lines: list[str] = []
    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            table, _ = await play_game(server, nursery)
            await trio.sleep(10)  # well into the game (the opening is 3 s)
            result = await watch(url(server), table, lines.append)
    assert lines[0] == f"{table}: joined mid-game"
    assert lines[1].startswith("turn ") and "game ends in" in lines[1]
    assert any(line.startswith("  the Company: $") for line in lines[:12])
    assert lines[-2].startswith("  the Company: $") and result["over"]


async def test_a_late_spectator_from_the_start_reads_the_whole_story_then_follows_live(server, autojump_clock):
    early: list[str] = []
    late: list[str] = []
    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            table = (await request_once(url(server), "create", game="parsimonia", seats=2, seed=3,
                                        options=SHORT))["table"]
            nursery.start_soon(watch, url(server), table, early.append)
            await trio.sleep(1)
            for i, name in enumerate(NAMES):
                nursery.start_soon(BotSession(url(server), make_player("greedy", i), name=name, table=table).run)
            await trio.sleep(10)  # well into the game
            await watch(url(server), table, late.append, from_start=True)
    assert "joined mid-game" not in late[0]
    assert late == early[1:]  # every line the spectator from the start printed, but its "waiting" line


async def test_watching_a_finished_table_prints_the_result_and_returns(server, autojump_clock):
    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            table, bots = await play_game(server, nursery)
    lines: list[str] = []
    with trio.fail_after(1):
        result = await watch(url(server), table, lines.append)
    assert result.items() <= bots[0].result.items()  # the game's result (the event adds the table's counts)
    assert lines[0].startswith("game over (clock)")
    assert len(lines) == 1 + 2 + 1 + 1  # how it ended, two seats, the Company, where its replay is
    assert lines[-1].endswith(f"/replay/{table}")


async def test_watching_a_table_that_does_not_exist_raises_the_refusal(server):
    with pytest.raises(ServerError) as refused:
        await watch(url(server), "t404", print)
    assert refused.value.code == "no_such_table"


def test_the_replay_address_is_the_servers_http_port_with_the_table_quoted():
    assert replay_url("ws://10.0.0.7:8801/", "w1-t3") == "http://10.0.0.7:8801/replay/w1-t3"
    assert replay_url("wss://example.org/", "t/1") == "https://example.org/replay/t%2F1"


def test_names_come_from_the_view_seats_when_the_server_sends_them():
    spectator = Spectator([].append)
    view = {"game": "parsimonia", "phase": "waiting", "seats": [{"seat": 0, "name": "Ada", "connected": True},
                                                                  {"seat": 1, "name": "Bob", "connected": False}]}
    spectator.on_view({"table": "t1", "time": 0, "view": view})
    assert spectator.names == ["Ada", "Bob"]


def test_the_card_table_is_taken_from_the_watching_reply_when_it_has_one():
    spectator = Spectator([].append)
    static = {"cards": [[7, "tourists", 3, 45]], "config": {"game_ms": 60_000}}
    spectator.on_watching({"type": "watching", "table": "t1", "static": static})
    spectator.on_view({"table": "t1", "time": 0, "view": {"game": "parsimonia", "phase": "waiting", "seats": [
        {"seat": 0, "name": "Ada", "connected": True}, {"seat": 1, "name": "Bob", "connected": True}]}})
    assert spectator.describe({"type": "card_drawn", "at": 5, "seat": 1, "card": 7}) == "Bob draws type-3 tourists ($45)"


def test_an_event_without_words_is_shown_generically_with_names_and_times():
    spectator = Spectator([].append)
    spectator.names = NAMES
    line = spectator.describe({"type": "offer_made", "at": 1_000, "seat": 1, "deadline": 273_000})
    assert line == "offer_made seat=Bob deadline=in 4:32"
    assert words_for("checkers") is None  # a game without words (or none at all): the generic form


def test_a_hold_for_the_players_reads_as_one_and_not_as_the_organisers_pause():
    spectator = Spectator([].append)
    assert spectator.describe({"type": "paused", "at": 5, "hold": True}) == "the clocks wait for the players to connect"
    assert spectator.describe({"type": "paused", "at": 5}) == "the organiser paused the clocks"
