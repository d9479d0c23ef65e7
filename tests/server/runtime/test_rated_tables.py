"""Casual rated tables on a real server: only a table whose creator asks is rated, never one whose seed its
creator chose; a seat is rated as a registered entrant only with the entrant's key, and a rated table refuses
that entrant's name typed without it; the ``ratings`` request answers the ladder."""

from __future__ import annotations

from typing import Any

import trio

from clients.players import make_player
from server.runtime.app import Server
from server.transport.limits import ClientLimits
from server.ratings.store import RATINGS_FILE, RatingStore
from tests.server.conftest import SHORT, RawClient, connect, create_table, join, play_seat


async def play_out(server: Server, table: str, seats: list[RawClient]) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []

    async def seat(client: RawClient, index: int) -> None:
        results.append(await play_seat(client, index, make_player("greedy", index)))

    async with trio.open_nursery() as nursery:
        for index, client in enumerate(seats):
            nursery.start_soon(seat, client, index)
    return results


def games(path) -> dict[str, int]:
    with RatingStore(path) as store:
        return {r.entrant: r.games for r in store.ladder()}


async def test_a_rated_table_rates_only_the_seats_that_proved_their_entrant(tmp_path, start_server, autojump_clock):
    with RatingStore(tmp_path / RATINGS_FILE) as store:
        ada, bea = store.issue_key("Ada"), store.issue_key("Bea")
    server = await start_server(data_dir=str(tmp_path), client=ClientLimits(rtt_ping_s=0))
    async with connect(server, "c0") as c0, connect(server, "c1") as c1, connect(server, "c2") as c2, \
            connect(server, "impostor") as impostor:
        table = await create_table(c0, 3, options=SHORT, rated=True)
        assert (await join(c0, table, name="anything", entrant_key=ada))["seat"] == 0
        for name, fields in (("Bea", {}), ("bea", {}), ("Cy", {"entrant_key": "not-a-key-anyone-issued"})):
            refused = await impostor.request("join", table=table, name=name, **fields)
            assert refused["type"] == "error" and refused["code"] == "bad_field", refused
        await join(c1, table, name="Bea", entrant_key=bea)
        await join(c2, table, name="Cy")  # no key: plays, is not rated
        assert [s.name for s in server.lobby.tables[table].match.seats] == ["Ada", "Bea", "Cy"]
        results = await play_out(server, table, [c0, c1, c2])
        assert results[0]["winners"]
        assert games(tmp_path / RATINGS_FILE) == {"Ada": 1, "Bea": 1}

        casual = await create_table(c0, 2, options=SHORT)  # not rated: anyone may call themselves Bea there
        await join(c0, casual, name="Ada")
        await join(c2, casual, name="Bea")
        await play_out(server, casual, [c0, c2])
        assert games(tmp_path / RATINGS_FILE) == {"Ada": 1, "Bea": 1}

        seeded = await c0.request("create", game="parsimonia", seats=2, seed=7, rated=True)
        assert seeded["type"] == "error" and seeded["code"] == "bad_field" and "seed" in seeded["message"]

        ladder = await c2.request("ratings", game="parsimonia")
        assert ladder["type"] == "ratings" and ladder["total"] == 2
        assert {row["entrant"] for row in ladder["ratings"]} == {"Ada", "Bea"}
        assert all(row["games"] == 1 and row["sigma"] < 25 / 3 for row in ladder["ratings"])
        assert (await c2.request("ratings", game="kupcy"))["ratings"] == []


async def test_a_server_without_a_data_directory_rates_nothing_and_says_so(start_server, autojump_clock):
    server = await start_server(client=ClientLimits(rtt_ping_s=0))
    async with connect(server, "c0") as c0:
        refused = await c0.request("create", game="parsimonia", seats=2, rated=True)
        assert refused["type"] == "error" and refused["code"] == "bad_field" and "no ratings" in refused["message"]
        table = await create_table(c0, 2, options=SHORT)
        refused = await c0.request("join", table=table, name="Ada", entrant_key="x" * 32)
        assert refused["type"] == "error" and refused["code"] == "bad_field"
        answer = await c0.request("ratings")
        assert (answer["type"], answer["ratings"], answer["total"]) == ("ratings", [], 0)


async def test_a_ratings_file_that_fails_refuses_what_needs_it_and_nothing_else(tmp_path, start_server,
                                                                               autojump_clock):
    with RatingStore(tmp_path / RATINGS_FILE) as store:
        ada = store.issue_key("Ada")
    server = await start_server(data_dir=str(tmp_path), client=ClientLimits(rtt_ping_s=0))
    async with connect(server, "c0") as c0, connect(server, "c1") as c1:
        table = await create_table(c0, 2, options=SHORT, rated=True)
        await join(c0, table, name="Ada", entrant_key=ada)
        await join(c1, table, name="Cy")
        assert server.rater is not None
        server.rater.store.db.close()  # as a disk that fails: every use of the file raises sqlite3.Error
        for request in ({"type": "ratings"}, {"type": "create", "game": "parsimonia", "seats": 2, "rated": True}):
            answer = await c1.request(request.pop("type"), **request)
            assert answer["type"] == "error" and answer["code"] == "internal", answer
        results = await play_out(server, table, [c0, c1])  # the rated game ends all the same, unrated
        assert results[0] == results[1] and server.lobby.tables[table].state == "over"
        assert (await c1.request("ping"))["type"] == "pong"


async def test_a_rated_game_interrupted_by_a_crash_is_rated_once_it_ends_after_the_restart(
        tmp_path, nursery, autojump_clock):
    from tests.server.storage.test_recovery import launch

    with RatingStore(tmp_path / RATINGS_FILE) as store:
        keys = [store.issue_key("Ada"), store.issue_key("Bea")]
    server, crash = await launch(nursery, str(tmp_path), client=ClientLimits(rtt_ping_s=0))
    async with connect(server, "c0") as c0, connect(server, "c1") as c1:
        table = await create_table(c0, 2, options=SHORT, rated=True)
        tokens = [(await join(c, table, name=f"p{i}", entrant_key=keys[i]))["token"] for i, c in enumerate((c0, c1))]
    await crash()  # the game has begun: what makes it rated lives in the ratings file, not in memory
    server, crash = await launch(nursery, str(tmp_path), client=ClientLimits(rtt_ping_s=0))
    async with connect(server, "c0") as c0, connect(server, "c1") as c1:
        for client, token in zip((c0, c1), tokens):
            resumed = await client.request("resume", table=table, token=token, last_seq=0)
            assert resumed["type"] == "resumed", resumed
        await play_out(server, table, [c0, c1])
        assert games(tmp_path / RATINGS_FILE) == {"Ada": 1, "Bea": 1}
    await crash()
    server, crash = await launch(nursery, str(tmp_path), client=ClientLimits(rtt_ping_s=0))
    assert games(tmp_path / RATINGS_FILE) == {"Ada": 1, "Bea": 1}  # found over again after a restart: once
    await crash()
