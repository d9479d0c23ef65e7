"""The relay: a table created on the least-loaded worker, the organiser's actions and bulletins on any worker."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import pytest
import trio
from trio_websocket import ConnectionClosed, open_websocket_url

from clients.sdk import call, request_once
from protocol.codec import decode, encode
from protocol.messages import PROTOCOL_VERSION
from server.storage.clock import ServerClock
from server.cluster import names
from server.cluster.directory import Directory
from server.cluster.relay import Relay
from server.runtime.health import STALL_S, LoopWatch
from server.runtime.lobby import Lobby
from tests.cluster.conftest import Cluster, Redis

TOKEN = "the-organisers-token-0123456789"


async def test_a_table_goes_to_the_least_loaded_worker(cluster: Cluster) -> None:
    async with open_websocket_url(cluster.workers[1]) as ws:
        await call(ws, "hello", version=PROTOCOL_VERSION, client="test")
        made = [(await call(ws, "create", game="parsimonia", seats=2))["table"] for _ in range(4)]
    # a tie stays where it was asked; tables created faster than the directory's beat spread all the same (which
    # worker gets the second and third depends on whether worker 1 has read worker 2's new count yet)
    assert made[0] == "w1-t1"
    assert sorted(t.split("-")[0] for t in made) == ["w1", "w1", "w2", "w2"]


def _admin_cluster(tmp_path: Path, redis: Redis) -> Cluster:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    return Cluster(tmp_path, redis.url, 2, "--admin-token-file", str(token_file))


async def test_the_organiser_closes_a_table_held_by_another_worker(tmp_path: Path, redis: Redis) -> None:
    cluster = _admin_cluster(tmp_path, redis)
    try:
        table = (await request_once(cluster.workers[2], "create", game="parsimonia", seats=2, admin=TOKEN))["table"]
        assert table.startswith("w2-")
        reply = await request_once(cluster.workers[1], "admin", token=TOKEN, action="close", table=table)
        assert reply["type"] == "ok"
        listing = (await request_once(cluster.workers[2], "tables"))["tables"]
        assert [t["state"] for t in listing if t["table"] == table] == ["over"]
        again = await _admin_error(cluster.workers[1], table)
        assert again["code"] == "bad_field"  # the table's own refusal, brought back from worker 2
    finally:
        cluster.stop()


async def _admin_error(url: str, table: str) -> dict:
    async with open_websocket_url(url) as ws:
        await call(ws, "hello", version=PROTOCOL_VERSION, client="test")
        await ws.send_message(encode(
            {"type": "admin", "id": 5, "token": TOKEN, "action": "close", "table": table}))
        while True:
            msg = decode(await ws.get_message())
            if msg.get("re") == 5:
                return msg


async def test_the_organisers_listing_shows_every_workers_connections_with_ids_that_tell_their_worker(
        tmp_path: Path, redis: Redis) -> None:
    cluster = _admin_cluster(tmp_path, redis)
    try:
        async with open_websocket_url(cluster.workers[1]) as one, open_websocket_url(cluster.workers[2]) as two:
            await call(one, "hello", version=PROTOCOL_VERSION, client="on-one")
            await call(two, "hello", version=PROTOCOL_VERSION, client="on-two")
            await _until_both_workers_listed(cluster)
            reply = await request_once(cluster.workers[1], "admin", token=TOKEN, action="connections")
            over_http = await trio.to_thread.run_sync(_http_listing, cluster.workers[2])
        for listing in (reply["connections"], over_http["connections"]):
            held = {c["client"]: c["conn"] for c in listing}
            assert names.worker_of_connection(held["on-one"]) == 1
            assert names.worker_of_connection(held["on-two"]) == 2
            assert len({c["conn"] for c in listing}) == len(listing)  # no id twice across the cluster
    finally:
        cluster.stop()


async def test_the_organiser_kicks_a_connection_held_by_another_worker(tmp_path: Path, redis: Redis) -> None:
    cluster = _admin_cluster(tmp_path, redis)
    try:
        async with open_websocket_url(cluster.workers[2]) as two:
            await call(two, "hello", version=PROTOCOL_VERSION, client="to-kick")
            await _until_both_workers_listed(cluster)
            listing = (await request_once(cluster.workers[1], "admin", token=TOKEN, action="connections"))
            conn = next(c["conn"] for c in listing["connections"] if c["client"] == "to-kick")
            reply = await request_once(cluster.workers[1], "admin", token=TOKEN, action="kick", conn=conn)
            assert reply["type"] == "ok"
            with trio.fail_after(10), pytest.raises(ConnectionClosed) as closed:
                while True:
                    await two.get_message()
        assert closed.value.reason.code == 1008
        gone = await _admin_frame(cluster.workers[1], {"action": "kick", "conn": conn})
        assert (gone["type"], gone["code"]) == ("error", "bad_field")  # worker 2's refusal: no longer connected
    finally:
        cluster.stop()


async def _until_both_workers_listed(cluster: Cluster) -> None:
    """Until worker 1's copy of the directory has worker 2 (asked only of the live workers it knows)."""
    with trio.fail_after(20):
        while len((await trio.to_thread.run_sync(_cluster_page, cluster.workers[1]))["workers"]) < 2:
            await trio.sleep(0.1)


def _cluster_page(ws_url: str) -> dict:
    with urllib.request.urlopen(ws_url.replace("ws://", "http://") + "cluster", timeout=10) as page:
        return json.loads(page.read())


def _http_listing(ws_url: str) -> dict:
    request = urllib.request.Request(ws_url.replace("ws://", "http://") + "admin/connections",
                                     headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(request, timeout=10) as page:
        return json.loads(page.read())


async def _admin_frame(url: str, fields: dict) -> dict:
    async with open_websocket_url(url) as ws:
        await call(ws, "hello", version=PROTOCOL_VERSION, client="test")
        await ws.send_message(encode({"type": "admin", "id": 6, "token": TOKEN, **fields}))
        while True:
            msg = decode(await ws.get_message())
            if msg.get("re") == 6:
                return msg


async def test_a_bulletin_published_on_one_worker_reaches_followers_on_another(tmp_path: Path, redis: Redis) -> None:
    cluster = _admin_cluster(tmp_path, redis)
    try:
        async with open_websocket_url(cluster.workers[2]) as follower:
            await call(follower, "hello", version=PROTOCOL_VERSION, client="test")
            await call(follower, "bulletin", topic="standings", follow=True)
            reply = await request_once(cluster.workers[1], "admin", token=TOKEN, action="publish",
                                       topic="standings", data={"round": 1})
            assert reply["type"] == "ok"
            with trio.fail_after(10):
                pushed = decode(await follower.get_message())
        assert (pushed["type"], pushed["topic"], pushed["data"]) == ("bulletin", "standings", {"round": 1})
    finally:
        cluster.stop()


async def test_what_arrives_from_redis_is_checked_and_a_bad_message_changes_nothing() -> None:
    async with trio.open_nursery() as nursery:
        lobby = Lobby(nursery, ServerClock())
        server = SimpleNamespace(lobby=lobby, connections={}, loop_watch=LoopWatch(),
                                 config=SimpleNamespace(loop_stall_s=STALL_S))  # what server.runtime.health reads
        relay = Relay(1, Directory(1, "ws://127.0.0.1:1/"), server)  # type: ignore[arg-type]
        reply = f"{names.ROOT}reply:abc"
        for channel, data in [
            (names.inbox(1), "not json"), (names.inbox(1), "[1, 2]"), (names.inbox(1), '{"op": "explode"}'),
            (names.inbox(1), '{"op": "create", "game": "parsimonia", "seats": 2}'),  # no reply key
            (names.inbox(1), json.dumps({"op": "create", "reply": reply, "game": "parsimonia", "seats": 99})),
            (names.inbox(1), json.dumps({"op": "create", "reply": reply, "game": "chess", "seats": 2})),
            (names.inbox(1), json.dumps({"op": "admin", "reply": reply, "action": "explode", "table": "w1-t1"})),
            (names.inbox(1), json.dumps({"op": "admin", "reply": reply, "action": "close", "table": 7})),
            (names.inbox(1), json.dumps({"op": "kick", "reply": reply, "conn": "x"})),
            (names.inbox(1), json.dumps({"op": "kick", "reply": reply, "conn": 2**70})),
            (names.inbox(1), json.dumps({"op": "kick", "conn": 5})),  # no reply key
            (names.inbox(1), json.dumps({"op": "kick", "reply": reply, "conn": 5})),  # no such connection
            (names.inbox(1), json.dumps({"op": "connections", "reply": 7})),
            (names.BULLETINS, json.dumps({"from": 2, "topic": "", "data": {}})),
            (names.BULLETINS, json.dumps({"from": 2, "topic": "standings", "data": "x"})),
            (names.CHANGES, None), (names.CHANGES, "2"), ("elsewhere", "{}"), (None, b"\xff"),
        ]:
            relay.carry_out(channel, data)
        assert lobby.tables == {} and lobby.bulletins == {}
        relay.carry_out(names.BULLETINS, json.dumps({"from": 2, "topic": "standings", "data": {"round": 1}}))
        assert lobby.bulletin("standings")["data"] == {"round": 1}  # a good one is carried out
        nursery.cancel_scope.cancel()


async def test_after_a_redis_restart_the_workers_hear_each_other_again(tmp_path: Path, redis: Redis) -> None:
    cluster = _admin_cluster(tmp_path, redis)
    try:
        redis.stop()
        redis.start()  # empty: every subscription and entry is gone
        with trio.fail_after(20):
            while redis.entry(1) is None or redis.entry(2) is None:
                await trio.sleep(0.1)
            async with open_websocket_url(cluster.workers[2]) as follower:
                await call(follower, "hello", version=PROTOCOL_VERSION, client="test")
                await call(follower, "bulletin", topic="standings", follow=True)
                while True:  # until worker 2 has subscribed again: each try is a new version of the bulletin
                    await request_once(cluster.workers[1], "admin", token=TOKEN, action="publish",
                                       topic="standings", data={"round": 2})
                    with trio.move_on_after(1):
                        pushed = decode(await follower.get_message())
                        break
        assert (pushed["topic"], pushed["data"]) == ("standings", {"round": 2})
    finally:
        cluster.stop()
