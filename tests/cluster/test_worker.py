"""A worker and Redis: cut off, it keeps playing its tables and says so once; Redis back (restarted, empty), every
worker is registered again and the lobby lists every table again."""

from __future__ import annotations

import json
import signal
import urllib.request
from types import SimpleNamespace

import pytest
import trio

from clients.players import make_player
from clients.sdk import BotSession, request_once
from protocol.errors import ProtocolError
from server.storage.clock import ServerClock
from server.cluster.worker import Worker
from server.runtime.lobby import Lobby
from tests.cluster.conftest import SHORT, TIME_SCALE, Cluster, Redis, play_to_the_end


async def _until(check, timeout_s: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    with trio.fail_after(timeout_s):
        while not check():
            await trio.sleep(0.05)


async def test_a_worker_without_redis_keeps_playing_and_registers_again_when_redis_is_back(
        cluster: Cluster, redis: Redis) -> None:
    table = (await request_once(cluster.workers[2], "create", game="parsimonia", seats=2, time_scale=TIME_SCALE,
                                options=SHORT))["table"]
    redis.stop()
    await _until(lambda: cluster.errors().count("redis_unreachable") >= 2)  # each worker says it, once
    bots = [BotSession(cluster.workers[2], make_player("greedy", seat, "parsimonia"), name=f"b{seat}", table=table)
            for seat in range(2)]
    results = await play_to_the_end(bots)
    assert len(results) == 2 and results[0] == results[1]
    assert cluster.errors().count("redis_unreachable") == 2
    redis.start()  # a new, empty Redis on the same port
    await _until(lambda: redis.entry(1) is not None and redis.entry(2) is not None)
    await _until(lambda: cluster.errors().count("redis_reachable") >= 2)
    with trio.fail_after(10):
        while table not in {t["table"] for t in (await request_once(cluster.workers[1], "tables"))["tables"]}:
            await trio.sleep(0.1)


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as reply:
        return str(reply.read().decode())


async def test_any_worker_shows_every_worker_and_its_metrics_count_its_own_tables(cluster: Cluster) -> None:
    table = (await request_once(cluster.workers[2], "create", game="parsimonia", seats=2))["table"]
    http = cluster.workers[1].replace("ws://", "http://")
    with trio.fail_after(10):
        while True:
            shown = json.loads(await trio.to_thread.run_sync(_get, http + "cluster"))
            if [w["tables"] for w in shown["workers"]] == [0, 1]:
                break
            await trio.sleep(0.1)
    assert shown["redis_reachable"] is True and shown["worker"] == 1
    assert [(w["worker"], w["url"]) for w in shown["workers"]] == [(1, cluster.workers[1]), (2, cluster.workers[2])]
    metrics = await trio.to_thread.run_sync(_get, http + "metrics")
    waiting = 'parsimonia_tables{game="parsimonia",state="waiting"} 1.0'
    assert waiting not in metrics  # worker 2's table is counted by worker 2 alone: the sums over workers add up
    assert waiting in await trio.to_thread.run_sync(_get, cluster.workers[2].replace("ws://", "http://") + "metrics")
    assert table.startswith("w2-")


async def test_a_redis_that_hangs_counts_as_unreachable_and_the_workers_go_on(cluster: Cluster, redis: Redis) -> None:
    assert redis.proc is not None
    redis.proc.send_signal(signal.SIGSTOP)  # it answers nothing, and keeps its connections open
    try:
        await _until(lambda: cluster.errors().count("redis_unreachable") >= 2, 20)
        created = await request_once(cluster.workers[1], "create", game="parsimonia", seats=2)
        assert created["table"].startswith("w1-")  # no worker to ask: it is created here, at once
    finally:
        redis.proc.send_signal(signal.SIGCONT)
    await _until(lambda: cluster.errors().count("redis_reachable") >= 2, 20)


async def test_before_it_listens_a_worker_answers_unavailable_for_other_workers_tables() -> None:
    async with trio.open_nursery() as nursery:
        lobby = Lobby(nursery, ServerClock(), id_prefix="w2-")
        worker = Worker(2, "redis://127.0.0.1:1/0", 0, "127.0.0.1")
        worker.prepare(SimpleNamespace(lobby=lobby))  # type: ignore[arg-type]
        with pytest.raises(ProtocolError) as refused:
            lobby.get("w1-t1")  # e.g. after a supervisor restart, worker 1 not back yet: not no_such_table
        assert refused.value.code == "unavailable"
        with pytest.raises(ProtocolError) as missing:
            lobby.get("w2-t9")  # its own: it knows
        assert missing.value.code == "no_such_table"
        with pytest.raises(ProtocolError) as listing:
            worker.away()  # a listing of every table would lack the others'
        assert listing.value.code == "unavailable"
        nursery.cancel_scope.cancel()
