"""The supervisor: N workers, a worker killed with -9 started again with its tables, --workers 1 needing no Redis,
Ctrl-C stopping them all."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import trio

from clients.players import make_player
from clients.sdk import BotSession, request_once
from server.cli.replay import replay_file
from tests.cluster.conftest import ENV, SHORT, TIME_SCALE, Cluster, Redis


async def _two_bots(url: str, table: str) -> list[BotSession]:
    return [BotSession(url, make_player("greedy", seat, "parsimonia"), name=f"{table}-{seat}", table=table)
            for seat in range(2)]


async def test_a_worker_killed_mid_game_comes_back_with_its_table_and_the_other_plays_on(
        cluster: Cluster, redis: Redis) -> None:
    options = {**SHORT, "game_ms": 240_000}  # long enough to be killed in the middle
    tables = {w: (await request_once(cluster.workers[w], "create", game="parsimonia", seats=2, seed=w,
                                     time_scale=TIME_SCALE / 2, options=options))["table"] for w in (1, 2)}
    assert [t.split("-")[0] for t in tables.values()] == ["w1", "w2"]
    bots = {w: await _two_bots(cluster.url, tables[w]) for w in (1, 2)}
    results: dict[int, list] = {1: [], 2: []}
    killed = redis.entry(2)
    assert killed is not None

    async def play(worker: int, bot: BotSession) -> None:
        results[worker].append(await bot.run())

    with trio.fail_after(120):
        async with trio.open_nursery() as nursery:
            for w in (1, 2):
                for bot in bots[w]:
                    nursery.start_soon(play, w, bot)
            while min(bot.actions for bot in bots[2]) < 3:
                await trio.sleep(0.02)
            os.kill(killed["pid"], signal.SIGKILL)
    assert all(len(r) == 2 and r[0] == r[1] for r in results.values())
    assert min(bot.reconnects for bot in bots[2]) >= 1  # the killed worker's clients resumed there
    assert sum(bot.reconnects for bot in bots[1]) == 0  # the other worker's never noticed
    restarted = redis.entry(2)
    assert restarted is not None and restarted["pid"] != killed["pid"] and restarted["url"] == killed["url"]
    # every command the killed worker acknowledged is in its journal, which replays to the result the bots saw
    journal = Path(cluster.tmp, "data", "worker-2", "replays", f"{tables[2]}.journal")
    with trio.fail_after(10):
        while not journal.exists():
            await trio.sleep(0.05)
    assert replay_file(str(journal), quiet=True, out=lambda line: None) == 0
    assert "worker_died" in cluster.errors()
    assert "Traceback" not in cluster.errors(), cluster.errors()[-3000:]
    assert "spare=True" in cluster.errors()  # it became the spare kept ready, its imports done: no cold start


async def test_one_worker_serves_without_redis_as_before(tmp_path: Path) -> None:
    single = Cluster(tmp_path, None, 1)
    try:
        created = await request_once(single.url, "create", game="parsimonia", seats=2)
        assert created["table"] == "t1"  # no worker's prefix: today's server
        assert "workers (Redis" not in (tmp_path / "cluster.out").read_text()
    finally:
        assert single.stop() == 0, single.errors()[-3000:]


def test_workers_without_redis_or_with_a_bad_address_are_refused_in_one_line(tmp_path: Path) -> None:
    for given, said in (([], "--redis URL"), (["--redis", "http://x/"], "not a Redis URL"),
                        (["--redis", "redis://127.0.0.1:six/0"], "could not be cast")):
        run = subprocess.run([sys.executable, "-m", "server.cli.main", "serve", "--workers", "2", "--data", str(tmp_path),
                              *given], capture_output=True, text=True, env=ENV, timeout=60)
        assert run.returncode == 2
        assert run.stderr.count("\n") == 1 and said in run.stderr


def test_ctrl_c_stops_every_worker_in_silence(cluster: Cluster, redis: Redis) -> None:
    pids = [redis.entry(w)["pid"] for w in (1, 2)]  # type: ignore[index]
    assert cluster.stop() == 0, cluster.errors()[-3000:]
    assert "Traceback" not in cluster.errors()
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        raise AssertionError(f"worker {pid} still runs after Ctrl-C")


def test_a_worker_that_cannot_start_stops_the_cluster_saying_why(tmp_path: Path, redis: Redis) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = subprocess.run([sys.executable, "-m", "server.cli.main", "serve", "--workers", "2", "--redis", redis.url,
                              "--port", "0", "--worker-ports", str(port), "--data", str(tmp_path)],
                             capture_output=True, text=True, env=ENV, timeout=60)
    assert run.returncode == 2, run.stderr
    assert "worker 1 did not start" in run.stderr and "Traceback" not in run.stderr
    assert "already in use" in run.stderr  # the worker's own line: why


async def test_a_frozen_worker_is_started_again_within_its_timeout_and_costs_no_create_after_2_s(
        tmp_path: Path, redis: Redis) -> None:
    cluster = Cluster(tmp_path, redis.url, 2, "--worker-timeout-ms", "1000")
    frozen = redis.entry(2)
    assert frozen is not None
    try:
        table = (await request_once(cluster.workers[2], "create", game="parsimonia", seats=2))["table"]
        os.kill(frozen["pid"], signal.SIGSTOP)  # as a hung process or a stalled disk would
        await trio.sleep(2)
        for _ in range(6):  # through the shared port, which the kernel also hands to the frozen worker
            with trio.fail_after(5):
                created = await request_once(cluster.url, "create", game="parsimonia", seats=2)
            assert created["table"].startswith("w")
        with trio.fail_after(10):
            while (back := redis.entry(2)) is None or back["pid"] == frozen["pid"]:
                await trio.sleep(0.05)
        assert cluster.errors().count("worker_not_answering") == 1
        with trio.fail_after(10):  # its tables came back from its log
            while table not in {t["table"] for t in (await request_once(cluster.workers[2], "tables"))["tables"]}:
                await trio.sleep(0.1)
    finally:
        try:
            os.kill(frozen["pid"], signal.SIGCONT)
        except ProcessLookupError:
            pass
        cluster.stop()


async def test_the_directory_left_with_redis_gone_is_a_log_line_not_a_crash(monkeypatch):
    """make run-cluster's Ctrl-C stops its redis-server with the supervisor: the workers' leaving is logged,
    whatever shape the Redis client's connection error takes (it raised a group, a traceback, once)."""
    from server.cluster import supervisor
    from server.cluster.supervisor import Plan, _leave_directory

    logged: list[dict[str, object]] = []

    class Recorder:  # the log's lines as the supervisor writes them (a logger another test cached is not seen)
        def info(self, event: str, **fields: object) -> None:
            logged.append({"event": event, **fields})

    monkeypatch.setattr(supervisor.logs, "get", lambda *_: Recorder())
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    plan = Plan("127.0.0.1", 0, {1: 0}, [], redis_url=f"redis://127.0.0.1:{port}/0")
    for why in ("stopped", "away", "started"):
        await _leave_directory(plan, [1], why)  # returns: no exception
    told = [e["why"] for e in logged if e["event"] == "directory_not_updated"]
    assert told == ["stopped", "away", "started"]
