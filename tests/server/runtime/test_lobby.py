"""The lobby over the WebSocket protocol: listing, creating, joining, watching and leaving tables."""

from __future__ import annotations

import os

import pytest
import trio

from protocol.messages import PROTOCOL_VERSION
from server.transport.limits import ClientLimits

from tests.toy_game import toy  # noqa: F401 (the fixture)
from tests.server.conftest import SHORT, connect, create_table, join


async def test_welcome_names_games_and_limits(server):
    async with connect(server, "hello") as client:
        welcome = client.frames[0]
        assert welcome["version"] == PROTOCOL_VERSION and welcome["games"] == ["gift-of-tulips", "kupcy", "parsimonia"]
        assert welcome["limits"]["max_frame_bytes"] == server.config.limits.max_frame_bytes
        assert isinstance(welcome["server_time"], int) and welcome["server_time"] >= 0
        pong = await client.request("ping")
        assert pong["type"] == "pong" and pong["server_time"] >= welcome["server_time"]


async def test_tables_lists_every_table_with_seats_state_and_spectators(server, autojump_clock):
    async with connect(server, "a") as a, connect(server, "b") as b, connect(server, "fan") as fan:
        assert (await a.request("tables"))["tables"] == []
        t1 = await create_table(a, 2, options=SHORT)
        t2 = await create_table(a, 4)
        assert t1 != t2
        await join(a, t1)
        assert (await fan.request("watch", table=t2))["type"] == "watching"
        listing = await b.request("tables")
        assert listing["type"] == "tables"
        assert listing["tables"] == [  # a waiting table says when it expires (10 minutes of server time)
            {"table": t1, "game": "parsimonia", "seats": 2, "taken": 1, "state": "waiting", "spectators": 0,
             "paused": False, "expires": 600_000},
            {"table": t2, "game": "parsimonia", "seats": 4, "taken": 0, "state": "waiting", "spectators": 1,
             "paused": False, "expires": 600_000},
        ]
        await join(b, t1)
        await b.event("game_started")
        (first,) = [t for t in (await fan.request("tables"))["tables"] if t["table"] == t1]
        assert first["taken"] == 2 and first["state"] == "running" and "expires" not in first


async def test_create_refuses_unknown_game_bad_seat_counts_and_bad_options(server):
    async with connect(server, "creator") as client:
        cases = [
            ({"game": "chess", "seats": 2}, "no_such_game"),
            ({"game": "parsimonia", "seats": 7}, "bad_field"),  # Parsimonia takes 2 to 6
            ({"game": "parsimonia", "seats": 1}, "bad_field"),
            ({"game": "parsimonia", "seats": 17}, "bad_field"),  # over the protocol's 16
            ({"game": "parsimonia", "seats": 2, "options": {"turn_ms": 0}}, "bad_field"),
            ({"game": "parsimonia", "seats": 2, "options": {"turn_ms": "soon"}}, "bad_field"),
            ({"game": "parsimonia", "seats": 2, "options": {"overtime": 1}}, "bad_field"),
            ({"game": "parsimonia", "seats": 6, "options": {"bank": 100}}, "bad_field"),  # cannot pay 6 players
            ({"game": "parsimonia", "seats": 2, "time_scale": 0}, "bad_field"),
            ({"game": "parsimonia", "seats": 2, "seed": -1}, "bad_field"),
            ({"game": "parsimonia"}, "missing_field"),
        ]
        for fields, code in cases:
            reply = await client.request("create", **fields)
            assert reply["type"] == "error" and reply["code"] == code, (fields, reply)
        assert (await client.request("tables"))["tables"] == []  # none of them made a table
        assert client.closed is None
        ok = await client.request("create", game="parsimonia", seats=6, seed=1, time_scale=60, options={"turn_ms": 1})
        assert ok["type"] == "created"


async def test_join_full_table_is_table_full_and_join_twice_is_already_seated(server, autojump_clock):
    async with connect(server, "a") as a, connect(server, "b") as b, connect(server, "late") as late:
        table = await create_table(a, 2, options=SHORT)
        first = await join(a, table)
        assert first["seat"] == 0 and first["table"] == table and first["token"]
        again = await a.request("join", table=table, name="a again")
        assert again["type"] == "error" and again["code"] == "already_seated" and again["table"] == table
        second = await join(b, table)
        assert second["seat"] == 1 and second["token"] != first["token"]
        full = await late.request("join", table=table, name="late")
        assert full["type"] == "error" and full["code"] == "table_full"
        missing = await late.request("join", table="t404", name="late")
        assert missing["code"] == "no_such_table"
        # the late connection may still watch
        assert (await late.request("watch", table=table))["type"] == "watching"
        view = await late.view()
        assert view["seat"] is None and view["legal"] == []


async def test_leave_before_start_frees_the_seat_and_others_keep_theirs(server, autojump_clock):
    async with connect(server, "a") as a, connect(server, "b") as b, connect(server, "c") as c, \
            connect(server, "d") as d:
        table = await create_table(a, 3, options=SHORT)
        assert (await join(a, table))["seat"] == 0
        assert (await join(b, table))["seat"] == 1
        left = await a.request("leave", table=table)
        assert left == {"type": "left", "re": left["re"], "table": table}
        (entry,) = (await d.request("tables"))["tables"]
        assert entry["taken"] == 1 and entry["state"] == "waiting"
        not_seated = await a.request("leave", table=table)
        assert not_seated["code"] == "not_seated"
        # the freed seat is taken by the next player; b keeps the seat `joined` gave it
        assert (await join(c, table))["seat"] == 0
        assert (await join(d, table))["seat"] == 2
        started = await b.event("game_started")
        assert started["event"]["seats"] == [{"seat": 0, "name": "c"}, {"seat": 1, "name": "b"},
                                             {"seat": 2, "name": "d"}]
        view = await b.view(lambda m: m["seq"] >= 1)
        assert view["seat"] == 1 and "seat" not in view["view"]  # the public part is the same for every seat
        # a, who left, gets nothing of the game and cannot act in it
        assert not a.events()
        assert (await a.request("act", table=table, command={"type": "ready"}))["code"] == "not_seated"


async def test_leave_mid_game_only_stops_pushes_and_the_seat_plays_on(server, autojump_clock):
    async with connect(server, "a") as a, connect(server, "b") as b:
        table = await create_table(a, 2, options=SHORT)
        token = (await join(a, table))["token"]
        await join(b, table)
        await a.event("game_started")
        assert (await a.request("leave", table=table))["type"] == "left"
        seen = len(a.events())
        assert (await b.request("act", table=table, command={"type": "ready"}))["type"] == "ok"
        await b.event("ready", seat=1)
        assert (await a.request("ping"))["type"] == "pong"
        assert len(a.events()) == seen  # no more pushes
        (entry,) = (await b.request("tables"))["tables"]
        assert entry["taken"] == 2 and entry["state"] == "running"
        resumed = await a.request("resume", table=table, token=token, last_seq=seen)
        assert resumed["type"] == "resumed" and resumed["seat"] == 0
        missed = await a.event("ready", seat=1)
        assert missed["seq"] == seen + 1


@pytest.mark.parametrize("kind", ["watch", "leave", "view", "resume", "act"])
async def test_table_requests_for_a_missing_table_are_no_such_table(server, kind):
    fields = {"resume": {"token": "x", "last_seq": 0}, "act": {"command": {"type": "ready"}}}.get(kind, {})
    async with connect(server, "lost") as client:
        reply = await client.request(kind, table="t42", **fields)
        assert reply["type"] == "error" and reply["code"] == "no_such_table"


ADMIN = "organiser-token-0123456789"


async def test_bulletin_unpublished_topic_is_empty(server):
    async with connect(server) as client:
        reply = await client.request("bulletin", topic="standings")
    assert reply["type"] == "bulletin" and reply["version"] == 0 and reply["data"] is None


async def test_published_bulletin_is_read_and_pushed_to_followers(start_server):
    srv = await start_server(admin_token=ADMIN)
    async with connect(srv, "follower") as follower, connect(srv, "reader") as reader, connect(srv, "admin") as admin:
        first = await follower.request("bulletin", topic="standings", follow=True)
        assert first["version"] == 0
        ok = await admin.request("admin", token=ADMIN, action="publish", topic="standings", data={"round": 1})
        assert ok["type"] == "ok"
        pushed = await follower.expect(lambda m: m["type"] == "bulletin" and "re" not in m)
        assert pushed["version"] == 1 and pushed["data"] == {"round": 1}
        read = await reader.request("bulletin", topic="standings")
        assert read["version"] == 1 and read["data"] == {"round": 1}
        await admin.request("admin", token=ADMIN, action="publish", topic="standings", data={"round": 2})
        pushed = await follower.expect(lambda m: m["type"] == "bulletin" and m.get("version") == 2)
        assert pushed["data"] == {"round": 2}
        assert not [m for m in reader.frames if m["type"] == "bulletin" and "re" not in m]  # not following


async def test_a_connection_follows_only_so_many_topics_and_leaves_none_behind(start_server):
    srv = await start_server(client=ClientLimits(topics_per_client=3))
    async with connect(srv, "follower") as follower, connect(srv, "other") as other:
        for topic in ("a", "b", "c", "a"):  # following one again takes no second place
            assert (await follower.request("bulletin", topic=topic, follow=True))["type"] == "bulletin"
        refused = await follower.request("bulletin", topic="d", follow=True)
        assert refused["code"] == "rate_limited" and follower.closed is None
        assert (await follower.request("bulletin", topic="d"))["type"] == "bulletin"  # reading needs no place
        await other.request("bulletin", topic="a", follow=True)
        await follower.drop()
        with trio.fail_after(10):
            while len(srv.connections) > 1:
                await trio.sleep(0.01)
        assert set(srv.lobby.followers) == {"a"}  # the topics only the dropped one followed are gone


async def test_publish_needs_the_admin_token_and_a_topic(start_server):
    srv = await start_server(admin_token=ADMIN)
    async with connect(srv) as client:
        refused = await client.request("admin", token="wrong-token-000000", action="publish", topic="x", data={})
        assert refused["code"] == "forbidden"
        missing = await client.request("admin", token=ADMIN, action="publish", data={})
        assert missing["code"] == "bad_field"
        assert (await client.request("bulletin", topic="x"))["version"] == 0


async def test_finished_tables_leave_the_live_count_and_a_bounded_index_still_answers_with_the_result(
        start_server, autojump_clock, toy):
    server = await start_server(max_tables=1, finished_kept=1)
    async with connect(server, "a") as a, connect(server, "b") as b:
        done = []
        for _ in range(2):  # max_tables=1: the second table can be created only once the first has finished
            table = (await a.request("create", game=toy.NAME, seats=2, options={"choose_ms": 1000}))["table"]
            await join(a, table)
            await join(b, table)
            await a.event("result")
            await trio.sleep(0.1)  # the table's task ends; the lobby keeps it as finished
            assert table not in server.lobby.live and table in server.lobby.finished
            done.append(table)
        full = await a.request("create", game=toy.NAME, seats=2)
        assert full["type"] == "created"  # a live table again: the finished ones did not count
        assert (await a.request("watch", table=done[0]))["code"] == "no_such_table"  # beyond finished_kept
        watching = await a.request("watch", table=done[1])
        assert watching["type"] == "watching"
        view = await a.view(lambda m: m["table"] == done[1])
        assert view["view"]["result"]["reason"] == "revealed" and view["legal"] == []
        assert len(server.lobby.finished[done[1]].match.history) == 1  # only the result is kept


# ------------------------------------------------------------------ waiting tables: expiry, a cap per address


async def test_a_waiting_table_expires_ten_minutes_after_its_creation_or_its_last_join(server, autojump_clock):
    async with connect(server, "a") as a, connect(server, "b") as b:
        lonely, joined = await create_table(a, 2), await create_table(a, 3)
        listing = {t["table"]: t for t in (await b.request("tables"))["tables"]}
        assert listing[lonely]["expires"] == listing[joined]["expires"] == 600_000
        await trio.sleep(300)
        await join(a, joined)  # someone came: it may wait ten minutes more
        assert {t["table"]: t for t in (await b.request("tables"))["tables"]}[joined]["expires"] == 900_000
        await trio.sleep(301)
        listing = {t["table"]: t for t in (await b.request("tables"))["tables"]}
        assert listing[lonely]["state"] == "over" and "expires" not in listing[lonely]
        assert listing[joined]["state"] == "waiting"
        watched = await b.request("watch", table=lonely)
        assert watched["type"] == "watching"
        view = await b.view()
        assert view["view"]["result"]["reason"] == "expired" and view["view"]["result"]["winners"] == []
        refused = await b.request("join", table=lonely, name="late")
        assert refused["type"] == "error"
        await trio.sleep(300)
        assert server.lobby.tables[joined].state == "over"
        assert server.lobby.tables[joined].match.result["reason"] == "expired"


async def test_a_table_that_starts_never_expires(server, autojump_clock):
    async with connect(server, "a") as a, connect(server, "b") as b:
        table = await create_table(a, 2, options={"opening_ms": 3_600_000, "game_ms": 7_200_000, "quiet_ms": 600_000})
        await join(a, table)
        await join(b, table)
        await b.event("game_started")
        await trio.sleep(1200)
        assert server.lobby.tables[table].state == "running"


async def test_an_address_may_have_eight_tables_of_its_own_waiting_then_another_when_one_starts(
        server, autojump_clock, memory_net):
    async with connect(server, "a") as a:
        tables = [await create_table(a, 2) for _ in range(8)]
        refused = await a.request("create", game="parsimonia", seats=2)
        assert refused["type"] == "error" and refused["code"] == "rate_limited" and "8 tables" in refused["message"]
        memory_net.address = "10.0.0.9"
        async with connect(server, "elsewhere") as other, connect(server, "sitter") as sitter:
            assert await create_table(other, 2)  # another address: its own eight
            await join(a, tables[0])
            await join(sitter, tables[0])  # it starts: no longer waiting
            await sitter.event("game_started")
        assert await create_table(a, 2)


async def test_the_organiser_may_have_any_number_of_tables_waiting(start_server, autojump_clock):
    server = await start_server(admin_token="s3cret")
    async with connect(server, "director") as director:
        for _ in range(12):
            assert await create_table(director, 2, admin="s3cret")


async def test_table_ids_are_never_given_twice_across_restarts(start_server, autojump_clock, tmp_path):
    data = str(tmp_path / "data")
    first = await start_server(data_dir=data, waiting_expiry_ms=1000)
    async with connect(first, "a") as a:
        gone = [await create_table(a, 2) for _ in range(3)]
        await trio.sleep(2)  # they expire
    assert all(first.lobby.tables[t].state == "over" for t in gone)
    first.lobby.nursery.cancel_scope.cancel()
    await trio.sleep(1)
    for name in os.listdir(tmp_path / "data" / "replays"):  # even their replay files lost
        os.remove(tmp_path / "data" / "replays" / name)
    second = await start_server(data_dir=data)
    async with connect(second, "b") as b:
        fresh = await create_table(b, 2)
    assert fresh not in gone and int(fresh[1:]) > 3


async def test_a_seeded_table_says_so_in_tables_its_views_and_its_result(server, autojump_clock):
    async with connect(server, "a") as a, connect(server, "b") as b:
        seeded, unseeded = await create_table(a, 2, seed=7, options=SHORT), await create_table(a, 2)
        listing = {t["table"]: t for t in (await b.request("tables"))["tables"]}
        assert listing[seeded]["seeded"] is True and "seeded" not in listing[unseeded]
        await join(a, seeded)
        assert (await a.view())["view"]["seeded"] is True
        await join(b, unseeded)
        assert "seeded" not in (await b.view())["view"]
        await trio.sleep(601)  # both expire
        assert server.lobby.tables[seeded].match.result["seeded"] is True
        assert "seeded" not in server.lobby.tables[unseeded].match.result


async def test_an_address_may_have_so_many_tables_of_its_own_playing_then_another_when_one_ends(
        start_server, autojump_clock, memory_net, toy):
    """Waiting tables were capped, running ones not: an address could keep any number of its own tables busy, each
    holding its events in memory."""
    server = await start_server(client=ClientLimits(playing_tables_per_ip=3, rtt_ping_s=0))
    async with connect(server, "a") as a, connect(server, "b") as b:
        tables = []
        for n in range(3):
            created = await a.request("create", game=toy.NAME, seats=2, options={"choose_ms": 1000 * (n + 1)})
            tables.append(created["table"])
            await join(a, tables[-1])
            await join(b, tables[-1])  # it starts: running, still counted
        assert [server.lobby.tables[t].state for t in tables] == ["running"] * 3
        refused = await b.request("create", game=toy.NAME, seats=2)  # the address's, whichever connection
        assert refused["type"] == "error" and refused["code"] == "rate_limited" and "3 tables" in refused["message"]
        memory_net.address = "10.0.0.9"
        async with connect(server, "elsewhere") as other:
            assert (await other.request("create", game=toy.NAME, seats=2))["type"] == "created"  # its own three
        await trio.sleep(1.5)  # the first game is over
        assert [server.lobby.tables[t].state for t in tables] == ["over", "running", "running"]
        assert (await a.request("create", game=toy.NAME, seats=2))["type"] == "created"
        refused = await a.request("create", game=toy.NAME, seats=2)
        assert refused["type"] == "error" and refused["code"] == "rate_limited"
