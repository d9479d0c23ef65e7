"""The directory: every worker's tables in any worker's lobby, and a table held elsewhere answered with moved."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from trio_websocket import open_websocket_url

from clients.players import make_player
from clients.watch import watch
from clients.sdk import BotSession, ServerError, call, request_once
from protocol.errors import ProtocolError
from protocol.messages import PROTOCOL_VERSION
from server.cluster.directory import Directory, Peer, _json, _listing, _peer
from tests.cluster.conftest import ENV, SHORT, TIME_SCALE, Cluster, Redis, play_to_the_end


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
    directory.members, directory.read = {1, 2, 3}, True
    assert [directory.least_loaded(2) for _ in range(3)] == [3, None, None]  # 3 had 1, then 2: a tie with here
    assert directory.least_loaded(3) == 3  # 3 has 2 now, here 3
    assert directory.locate("w2-t9") == "ws://b/" and directory.locate("w1-t9") is None
    assert directory.locate("t9") is None and directory.locate("w8-t1") is None


def test_a_sick_worker_gets_no_new_table_and_sends_its_own_to_the_healthy_least_loaded() -> None:
    directory = Directory(1, "ws://a/")
    directory.peers = {2: Peer(2, "ws://b/", 0, 0, healthy=False), 3: Peer(3, "ws://c/", 7, 0)}
    assert directory.least_loaded(5) is None  # 2 has fewest but its log failed; 3 has more than here
    assert directory.least_loaded(9) == 3
    assert directory.least_loaded(0, healthy_here=False) == 3  # sick here: the healthy one, however loaded
    directory.peers[3].healthy = False
    assert directory.least_loaded(0, healthy_here=False) is None  # none healthy: here, the last resort
    assert _peer(2, _json('{"url": "ws://b/", "tables": 0, "connections": 0, "healthy": false}')).healthy is False
    assert _peer(2, _json('{"url": "ws://b/", "tables": 0, "connections": 0}')).healthy is True


def test_a_table_of_a_worker_away_or_asked_before_the_directory_is_read_is_unavailable() -> None:
    directory = Directory(1, "ws://a/")
    for table in ("w2-t9", "w8-t1"):  # not read yet: any other worker's table may exist
        with pytest.raises(ProtocolError) as refused:
            directory.locate(table)
        assert refused.value.code == "unavailable"
    assert directory.locate("w1-t3") is None and directory.locate("t3") is None  # its own: it knows
    directory.peers, directory.members, directory.read = {3: Peer(3, "ws://c/", 1, 0)}, {1, 2, 3}, True
    with pytest.raises(ProtocolError) as refused:
        directory.locate("w2-t9")  # registered, its entry gone: away, never a moved that would hang
    assert refused.value.code == "unavailable" and "worker 2" in refused.value.message
    assert directory.locate("w3-t1") == "ws://c/" and directory.locate("w8-t1") is None  # never a worker
    assert directory.away() == [2]


async def test_a_new_table_is_listed_by_every_worker_before_the_next_beat(tmp_path: Path, redis: Redis) -> None:
    slow = Cluster(tmp_path, redis.url, 2, "--heartbeat-ms", "4000")  # beats 4 s apart: a wait would show
    try:
        table = await _create_on(slow.workers[2])
        with trio.fail_after(3):  # less than a beat: the new table woke worker 2's beat, which woke worker 1's
            await _listed(slow.workers[1], {table})
    finally:
        slow.stop()


async def test_a_worker_whose_log_failed_takes_no_new_tables_and_says_so(tmp_path: Path, redis: Redis) -> None:
    healthy = Cluster(tmp_path / "a", redis.url, 1)  # two machines' supervisors, one worker each
    sick = Cluster(tmp_path / "b", redis.url, 1, "--first-worker", "2", env={"PARSIMONIA_FAULT": "enospc@write#2"})
    try:
        first = await _create_on(sick.url)  # a tie: it stays there (the log's first write)
        assert first.startswith("w2-")
        with trio.move_on_after(2):  # the second write: the disk is full (the join is never acknowledged)
            await request_once(sick.url, "join", table=first, name="x")
        with trio.fail_after(10):
            while (entry := redis.entry(2)) is None or entry.get("healthy") is not False:
                await trio.sleep(0.05)
        made = [await _create_on(sick.url) for _ in range(4)]  # it has fewest tables playing: none
        assert all(t.startswith("w1-") for t in made), made
    finally:
        sick.stop()
        healthy.stop()


async def test_tables_names_a_worker_that_did_not_answer_and_gives_up_on_one_that_hangs(
        tmp_path: Path, redis: Redis) -> None:
    cluster = Cluster(tmp_path, redis.url, 2, "--worker-timeout-ms", "600000")  # frozen, and left so
    table = await _create_on(cluster.workers[2])
    frozen = redis.entry(2)
    assert frozen is not None
    os.kill(frozen["pid"], signal.SIGSTOP)
    try:
        with trio.fail_after(10):
            while redis.entry(2) is not None:  # its entry expires: it is away
                await trio.sleep(0.1)
        await trio.sleep(1)  # worker 1 has read the directory since
        async with open_websocket_url(cluster.workers[1]) as ws:
            await call(ws, "hello", version=PROTOCOL_VERSION, client="test")
            with pytest.raises(ServerError) as refused:
                await call(ws, "watch", table=table)
            assert refused.value.code == "unavailable"  # not a moved that would hang
        cli = [sys.executable, "-m", "server.cli.main", "tables", "--url"]
        listing = subprocess.run([*cli, cluster.workers[1]], capture_output=True, text=True, env=ENV, timeout=60)
        assert listing.returncode == 1 and table not in listing.stdout
        assert "worker 2 did not answer" in listing.stderr
        hung = subprocess.run([*cli, cluster.workers[2], "--timeout-s", "1"], capture_output=True, text=True,
                              env=ENV, timeout=60)
        assert hung.returncode == 1 and "did not answer within 1 s" in hung.stderr, hung.stderr
    finally:
        os.kill(frozen["pid"], signal.SIGCONT)
        cluster.stop()
