"""The bot SDK against a real server on 127.0.0.1: requests, finding or creating a table, whole games,
and resuming after the server drops a bot's connection."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from clients.players import make_player
from clients.sdk import BotSession, ServerError, request_once, run_bot
from server.limits import ClientLimits
from tests.server.conftest import (  # noqa: F401 (fixtures)
    BANK, SHORT, _quiet_server_logs, connect, server, start_server, url)


async def test_request_once_returns_the_reply(server):
    created = await request_once(url(server), "create", game="parsimonia", seats=2, seed=4)
    assert created["type"] == "created" and created["table"] in server.lobby.tables
    listing = await request_once(url(server), "tables")
    assert [t["table"] for t in listing["tables"]] == [created["table"]]


async def test_request_once_raises_server_error_with_the_code(server):
    with pytest.raises(ServerError) as refused:
        await request_once(url(server), "create", game="chess", seats=2)
    assert refused.value.code == "no_such_game" and refused.value.reason is None
    with pytest.raises(ServerError) as refused:
        await request_once(url(server), "join", table="t404", name="x")
    assert refused.value.code == "no_such_table"


async def test_run_bot_creates_a_table_when_none_waits_and_the_next_bot_joins_it(start_server, autojump_clock):
    # no round-trip pings: on the autojump clock the server's ping comes exactly as both bots close, and
    # trio-websocket 0.12.2 fails a client that gets a ping while it closes (python-trio/trio-websocket#184)
    server = await start_server(client=ClientLimits(rtt_ping_s=0))
    create = {"seed": 6, "options": SHORT}
    first = BotSession(url(server), make_player("greedy", 1), name="first", seats=2, create_options=create)
    results: list[dict[str, Any]] = []
    with trio.fail_after(600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(first.run)
            await first.joined.wait()
            nursery.start_soon(lambda: _collect(results, run_bot(url(server), make_player("greedy", 2), name="next")))
    assert list(server.lobby.tables) == [first.seat.table]  # one table: the second bot joined the first's
    table = server.lobby.tables[first.seat.table]
    assert table.match.seat_count == 2 and table.match.seed == 6 and table.state == "over"
    assert results == [first.result]
    assert sum(first.result["dollars"]) + first.result["company_dollars"] == BANK


async def _collect(out: list[dict[str, Any]], game: Any) -> None:
    out.append(await game)


async def test_bot_joining_a_full_table_raises_table_full(server, autojump_clock):
    async with connect(server, "a") as a, connect(server, "b") as b:
        table = (await a.request("create", game="parsimonia", seats=2, options=SHORT))["table"]
        await a.request("join", table=table, name="a")
        await b.request("join", table=table, name="b")
        with pytest.raises(ServerError) as refused:
            await run_bot(url(server), make_player("greedy", 0), table=table)
        assert refused.value.code == "table_full"


async def test_bot_resumes_after_server_drops_it_and_plays_to_the_result(server, autojump_clock):
    created = await request_once(url(server), "create", game="parsimonia", seats=2, seed=12, options=SHORT)
    table_id = created["table"]
    bots = [BotSession(url(server), make_player("greedy", s), name=f"b{s}", table=table_id) for s in range(2)]
    table = server.lobby.tables[table_id]
    dropped_at: list[int] = []

    async def drop_seat_1_mid_game() -> None:
        while table.match.seq < 50:
            await trio.sleep(0.01)
        conn = table.match.seats[1].sub
        assert conn is not None
        dropped_at.append(table.match.seq)
        conn.close("test: dropping a bot")

    async with connect(server, "spectator") as spectator:
        assert (await spectator.request("watch", table=table_id, views=False))["type"] == "watching"
        with trio.fail_after(600):
            async with trio.open_nursery() as nursery:
                for bot in bots:
                    nursery.start_soon(bot.run)
                    await bot.joined.wait()
                nursery.start_soon(drop_seat_1_mid_game)
        events = [m["event"] for m in spectator.events()]
    assert dropped_at and dropped_at[0] < table.match.seq // 2
    assert bots[1].reconnects == 1 and bots[0].reconnects == 0
    assert bots[0].result == bots[1].result == events[-1]["result"]
    assert all(b.seat.last_seq == table.match.seq == len(events) for b in bots)
    # the resumed bot went on playing: it ended turns of its own after the drop
    own_turns = [e for e in events[dropped_at[0]:]
                 if e["type"] == "turn_ended" and e["seat"] == 1 and e["reason"] == "ended"]
    assert own_turns


async def test_bot_takes_a_seat_by_token_instead_of_joining(server, autojump_clock):
    """A director joins the seats and hands the tokens out; each bot resumes its seat and plays."""
    async with connect(server, "director") as director:
        reply = await director.request("create", game="parsimonia", seats=2, seed=3, options=SHORT)
        table = reply["table"]
        tokens = []
        for _ in range(2):
            async with connect(server, "seat-taker") as taker:
                tokens.append((await taker.request("join", table=table, name="entrant"))["token"])
    bots = [BotSession(url(server), make_player("greedy", s), table=table, token=t) for s, t in enumerate(tokens)]
    with trio.fail_after(600):
        async with trio.open_nursery() as nursery:
            for bot in bots:
                nursery.start_soon(bot.run)
    assert sorted(b.seat.seat for b in bots) == [0, 1]
    assert bots[0].result == bots[1].result and bots[0].result["over"]
    assert sum(bots[0].result["dollars"]) + bots[0].result["company_dollars"] == BANK


def test_a_token_without_its_table_is_refused():
    with pytest.raises(ValueError):
        BotSession("ws://127.0.0.1:1", make_player("greedy", 0), token="abc")


class ListingOnly:
    """Stands in for the server in ``BotSession._find_table``: these tables wait, and a create makes t9."""

    def __init__(self, *tables: dict[str, Any]) -> None:
        self.tables = list(tables)
        self.created: list[dict[str, Any]] = []

    async def request(self, ws: Any, kind: str, **fields: Any) -> dict[str, Any]:
        if kind == "tables":
            return {"tables": self.tables}
        self.created.append(fields)
        return {"table": "t9"}


def waiting(table: str, seats: int, game: str = "parsimonia") -> dict[str, Any]:
    return {"table": table, "game": game, "seats": seats, "taken": 1, "state": "waiting", "spectators": 0}


def find_table(fake: ListingOnly, **options: Any) -> str:
    bot = BotSession("ws://127.0.0.1:9", make_player("greedy", 1), **{"admin": None, **options})
    bot._request = fake.request  # type: ignore[method-assign]
    return trio.run(bot._find_table, None)


def test_a_bot_with_a_time_scale_creates_its_own_table_rather_than_join_a_stale_one():
    fake = ListingOnly(waiting("t1", 3))
    assert find_table(fake, seats=2, create_options={"time_scale": 60}) == "t9"
    assert fake.created == [{"game": "parsimonia", "seats": 2, "time_scale": 60}]


def test_a_bot_given_a_seat_count_joins_only_a_waiting_table_with_that_many_seats():
    fake = ListingOnly(waiting("t1", 3), waiting("t2", 2, game="kupcy"), waiting("t3", 2))
    assert find_table(fake, seats=2) == "t3"
    assert find_table(ListingOnly(waiting("t1", 3)), seats=2) == "t9"
    assert find_table(ListingOnly(waiting("t1", 3))) == "t1"  # no count given: any waiting table of the game


def test_a_bot_creates_with_the_admin_token_from_the_environment(monkeypatch):
    monkeypatch.setenv("PARSIMONIA_ADMIN_TOKEN", "an-organiser-token-long-enough")
    fake = ListingOnly()
    bot = BotSession("ws://127.0.0.1:9", make_player("greedy", 1), seats=2)
    bot._request = fake.request  # type: ignore[method-assign]
    assert trio.run(bot._find_table, None) == "t9"
    assert fake.created == [{"game": "parsimonia", "seats": 2, "admin": "an-organiser-token-long-enough"}]


async def test_a_seated_bot_knows_its_round_trip_as_the_server_timed_it(start_server, autojump_clock):
    server = await start_server(client=ClientLimits(rtt_ping_s=1000))  # its one ping, as the bot says hello
    bot = BotSession(url(server), make_player("greedy", 1), name="timed", seats=2)
    assert (bot.rtt_ms, bot.rtt_last_ms) == (None, None)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(bot.run)
        await bot.joined.wait()
        await trio.sleep(1)  # the pong to its first ping (in memory, the round trip takes 0 ms)
        assert (bot.rtt_ms, bot.rtt_last_ms) == (0, 0)
        [conn] = server.connections.values()
        conn.ws.rtt.ms, conn.ws.rtt.last_ms = 35, 40  # as a LAN's would be: the next ping tells it
        await trio.sleep(10)  # the bot asks again
        assert (bot.rtt_ms, bot.rtt_last_ms) == (35, 40)
        nursery.cancel_scope.cancel()
