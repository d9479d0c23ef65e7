"""The directory: every worker's tables in any worker's lobby, and a table held elsewhere answered with moved."""

from __future__ import annotations

from pathlib import Path

import trio
from trio_websocket import open_websocket_url

from clients.players import make_player
from clients.watch import watch
from clients.sdk import BotSession, ServerError, call, request_once
from protocol.messages import PROTOCOL_VERSION
from server.cluster.directory import Directory, Peer, _json, _listing, _peer
from tests.cluster.conftest import SHORT, TIME_SCALE, Cluster, Redis, play_to_the_end


async def _create_on(url: str, seats: int = 2) -> str:
    created = await request_once(url, "create", game="parsimonia", seats=seats, time_scale=TIME_SCALE, options=SHORT)
    return str(created["table"])


async def _listed(url: str, wanted: set[str]) -> set[str]:
    """The tables ``url`` lists, once it lists every one of ``wanted`` (the directory is a beat behind)."""
    with trio.fail_after(10):
        while True:
            listed = {t["table"] for t in (await request_once(url, "tables"))["tables"]}
            if wanted <= listed:
                return listed
            await trio.sleep(0.1)


async def test_the_lobby_of_any_worker_lists_every_workers_tables(cluster: Cluster) -> None:
    on_two = await _create_on(cluster.workers[2])  # each worker is least loaded when asked first: kept there
    on_one = await _create_on(cluster.workers[1])
    assert (on_one.split("-")[0], on_two.split("-")[0]) == ("w1", "w2")
    for url in (cluster.workers[1], cluster.workers[2], cluster.url):
        assert {on_one, on_two} <= await _listed(url, {on_one, on_two})


async def test_a_table_held_elsewhere_is_answered_with_moved_and_that_workers_address(cluster: Cluster) -> None:
    table = await _create_on(cluster.workers[2])
    await _listed(cluster.workers[1], {table})
    async with open_websocket_url(cluster.workers[1]) as ws:
        await call(ws, "hello", version=PROTOCOL_VERSION, client="test")
        for kind, fields in (("join", {"name": "x"}), ("watch", {}), ("view", {})):
            try:
                await call(ws, kind, table=table, **fields)
            except ServerError as err:
                assert (err.code, err.url) == ("moved", cluster.workers[2])
            else:
                raise AssertionError(f"{kind} of a table on worker 2 answered by worker 1")


async def test_a_table_on_worker_b_is_played_by_bots_sent_there_from_worker_a(cluster: Cluster) -> None:
    table = await _create_on(cluster.workers[2])
    await _listed(cluster.workers[1], {table})
    bots = [BotSession(cluster.workers[1], make_player("greedy", seat, "parsimonia"), name=f"b{seat}", table=table)
            for seat in range(2)]
    results = await play_to_the_end(bots)
    assert len(results) == 2 and results[0] == results[1]
    assert all(bot.url == cluster.workers[2] for bot in bots)
    lines: list[str] = []  # and parsimonia watch, given worker 1, follows the table there too
    assert await watch(cluster.workers[1], table, lines.append) == results[0]


def test_the_copy_of_the_directory_passes_over_what_it_cannot_trust() -> None:
    assert _peer(3, _json('{"url": "ws://10.0.0.7:8801/", "tables": 2, "connections": 9}')).url == "ws://10.0.0.7:8801/"
    for bad in (None, "", "[]", "not json", '{"url": "http://x/", "tables": 0, "connections": 0}',
                '{"url": "ws://x/", "tables": -1, "connections": 0}', '{"url": "ws://x/", "tables": "2"}'):
        assert _peer(3, _json(bad)) is None
    good = {"table": "w3-t1", "game": "parsimonia", "seats": 2, "taken": 1, "state": "waiting", "spectators": 0,
            "paused": False}
    listing = [good, {**good, "table": "w4-t1"}, {**good, "seats": "2"}, "x", {**good, "extra": 1}]
    assert _listing(3, listing) == [good]  # not its own, or not a summary: left out
    assert _listing(3, "[]") == [] and _listing(3, None) == []


def test_a_new_table_goes_to_the_worker_with_fewest_and_a_tie_stays_here() -> None:
    directory = Directory(1, "ws://a/")
    assert directory.least_loaded(5) is None  # no other worker known
    directory.peers = {2: Peer(2, "ws://b/", 3, 0), 3: Peer(3, "ws://c/", 1, 0)}
    directory.addresses = {2: "ws://b/", 3: "ws://c/"}
    assert [directory.least_loaded(2) for _ in range(3)] == [3, None, None]  # 3 had 1, then 2: a tie with here
    assert directory.least_loaded(3) == 3  # 3 has 2 now, here 3
    assert directory.locate("w2-t9") == "ws://b/" and directory.locate("w1-t9") is None
    assert directory.locate("t9") is None and directory.locate("w8-t1") is None


async def test_a_new_table_is_listed_by_every_worker_before_the_next_beat(tmp_path: Path, redis: Redis) -> None:
    slow = Cluster(tmp_path, redis.url, 2, "--heartbeat-ms", "4000")  # beats 4 s apart: a wait would show
    try:
        table = await _create_on(slow.workers[2])
        with trio.fail_after(3):  # less than a beat: the new table woke worker 2's beat, which woke worker 1's
            await _listed(slow.workers[1], {table})
    finally:
        slow.stop()
