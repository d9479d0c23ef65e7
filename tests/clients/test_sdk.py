"""The bot SDK against a real server on 127.0.0.1: requests, finding or creating a table, whole games,
and resuming after the server drops a bot's connection."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from clients.players import make_player
from clients.sdk import UNAVAILABLE_BACKOFF_S, UNAVAILABLE_GIVE_UP_S, BotSession, ServerError, request_once, run_bot
from server.transport.limits import ClientLimits
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
    said: list[list[str]] = [[], []]
    bots = [BotSession(url(server), make_player("greedy", s), name=f"b{s}", table=table_id, say=said[s].append)
            for s in range(2)]
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
    # each waited for the other, said once; the dropped one said it reconnects, then that it is back
    assert said[0] == [f"b0: seat 0 at table {table_id}: waiting for players, 1 of 2 seats taken"]
    assert [line.split(" (")[0] for line in said[1]] == [f"b1: the connection to table {table_id} was lost",
                                                         f"b1: seat 1 at table {table_id} resumed"]
    assert "reconnecting to ws://" in said[1][0] and "for up to 600 s" in said[1][0]
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


class RefusedFirst:
    """Sends a `pair` without its `resource` at its first chance (the server refuses it), then plays greedy."""

    def __init__(self) -> None:
        self.greedy = make_player("greedy", 3)
        self.sent_bad = False

    def act(self, view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any] | None:
        if not self.sent_bad:
            self.sent_bad = True
            return {"type": "pair"}
        return self.greedy.act(view, legal)


async def play_refused_once(server: Any, **options: Any) -> BotSession:
    """Seat ``RefusedFirst`` and a greedy bot at a new table until the first has had its refusal."""
    table = (await request_once(url(server), "create", game="parsimonia", seats=2, seed=2, options=SHORT))["table"]
    bot = BotSession(url(server), RefusedFirst(), name="refused", table=table, **options)
    other = BotSession(url(server), make_player("greedy", 4), name="other", table=table, say=lambda line: None)
    with trio.fail_after(600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(bot.run)
            nursery.start_soon(other.run)
            while bot.refusals == 0:
                await trio.sleep(0.1)
            nursery.cancel_scope.cancel()
    return bot


async def test_a_refused_command_reaches_the_bots_hook_with_its_code(server, autojump_clock):
    refused: list[tuple[dict[str, Any], ServerError]] = []
    bot = await play_refused_once(server, on_refused=lambda command, err: refused.append((command, err)))
    [(command, err)] = refused
    assert command == {"type": "pair"}
    assert err.code == "missing_field" and err.table == bot.seat.table and "resource" in err.message


async def test_a_refused_command_is_a_line_on_stderr_by_default(server, autojump_clock, capsys):
    await play_refused_once(server)
    err = capsys.readouterr().err
    [line] = [line for line in err.splitlines() if "the server refused" in line]  # "refused:" is also its name
    assert line.startswith("refused: the server refused pair {}: missing_field: ") and "resource" in line


def answering_unavailable(monkeypatch: pytest.MonkeyPatch, kinds: dict[str, int]) -> list[str]:
    """The server answers the first ``kinds[kind]`` requests of each kind with `unavailable`, as a cluster's worker
    does before it has read the directory; the kinds of every request it sees are returned, in order."""
    from protocol.client_messages import kind_of
    from protocol.errors import ProtocolError
    from server.runtime import requests

    seen: list[str] = []
    handle = requests.handle

    def flaky(conn: Any, msg: Any) -> Any:
        kind = kind_of(msg)
        seen.append(kind)
        if kinds.get(kind, 0) > 0:
            kinds[kind] -= 1
            conn.fail(ProtocolError("unavailable", "this worker has not yet read the directory"), msg.re)
            return None
        return handle(conn, msg)

    monkeypatch.setattr(requests, "handle", flaky)
    return seen


async def test_requests_answered_unavailable_are_sent_again_after_a_backoff(server, autojump_clock, monkeypatch):
    seen = answering_unavailable(monkeypatch, {"create": 2, "join": 3, "tables": 1})
    said: list[str] = []
    start = trio.current_time()
    listing = await request_once(url(server), "tables", say=said.append)
    assert listing["tables"] == [] and len(said) == 1 and "unavailable" in said[0]
    bot = BotSession(url(server), make_player("greedy", 1), name="patient", seats=2, say=said.append)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(bot.run)
        await bot.joined.wait()
        assert bot.seat is not None and server.lobby.tables[bot.seat.table].summary()["taken"] == 1
        nursery.cancel_scope.cancel()
    assert seen.count("tables") == 3 and seen.count("create") == 3 and seen.count("join") == 4
    assert len([line for line in said if "is unavailable" in line]) == 1 + 2 + 3  # one line each
    assert trio.current_time() - start < UNAVAILABLE_GIVE_UP_S


async def test_a_resume_answered_unavailable_is_sent_again_and_the_seat_plays_on(server, autojump_clock,
                                                                                 monkeypatch):
    created = await request_once(url(server), "create", game="parsimonia", seats=2, seed=5, options=SHORT)
    tokens = []
    for _ in range(2):
        async with connect(server, "taker") as taker:
            tokens.append((await taker.request("join", table=created["table"], name="entrant"))["token"])
    seen = answering_unavailable(monkeypatch, {"resume": 4})
    bots = [BotSession(url(server), make_player("greedy", s), table=created["table"], token=t, say=lambda line: None)
            for s, t in enumerate(tokens)]
    with trio.fail_after(600):
        async with trio.open_nursery() as nursery:
            for bot in bots:
                nursery.start_soon(bot.run)
    assert seen.count("resume") == 6
    assert bots[0].result == bots[1].result and bots[0].result["over"]


async def test_unavailable_for_longer_than_the_bound_is_final(server, autojump_clock, monkeypatch):
    answering_unavailable(monkeypatch, {"tables": 10**6})
    start = trio.current_time()
    with pytest.raises(ServerError) as refused:
        await request_once(url(server), "tables", say=lambda line: None)
    assert refused.value.code == "unavailable"
    assert UNAVAILABLE_GIVE_UP_S <= trio.current_time() - start <= UNAVAILABLE_GIVE_UP_S + UNAVAILABLE_BACKOFF_S[1] * 2


async def test_no_such_table_stays_final(server, autojump_clock, monkeypatch):
    seen = answering_unavailable(monkeypatch, {})
    with pytest.raises(ServerError) as refused:
        await run_bot(url(server), make_player("greedy", 0), table="t404", say=lambda line: None)
    assert refused.value.code == "no_such_table" and seen.count("join") == 1


async def test_a_command_answered_unavailable_is_sent_again_with_its_key_and_not_refused(server, autojump_clock,
                                                                                       monkeypatch):
    seen = answering_unavailable(monkeypatch, {"act": 2})
    create = {"seed": 9, "options": SHORT}
    bots = [BotSession(url(server), make_player("greedy", 1), name="a", seats=2, create_options=create,
                       say=lambda line: None)]
    with trio.fail_after(600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(bots[0].run)
            await bots[0].joined.wait()
            bots.append(BotSession(url(server), make_player("greedy", 2), name="b", table=bots[0].seat.table,
                                   say=lambda line: None))
            nursery.start_soon(bots[1].run)
    assert seen.count("act") > 2 and seen.count("resume") == 2  # each resumed, then sent its command again
    assert sum(b.refusals for b in bots) == 0 and bots[0].result == bots[1].result and bots[0].result["over"]
