"""Health that tells the truth: ``/healthz`` answers 503 with the reason when the log has failed, the disk is full
or the loop is stalled, and names the stopped tables; ``/metrics`` counts them."""

from __future__ import annotations

import json

import trio

from server.runtime import health
from server.runtime.health import LoopWatch, assess
from tests.server.conftest import SHORT, connect, create_table
from tests.server.transport.test_transport_http import gauge, get


def test_a_healthy_server_has_no_reasons_and_each_fault_gives_one_line():
    assert assess(None, [], 10 << 30, 0.01) == health.Health(True, [], [], 10)
    full = OSError(28, "No space left on device")
    sick = assess(full, ["t10", "t2"], 0, 2.5, stall_s=1.0)
    assert not sick.ok and sick.stopped == ["t2", "t10"] and sick.loop_lag_ms == 2500
    assert sick.reasons == ["the log failed: No space left on device; its tables are stopped",
                            "the disk is full: 0 bytes free", "the loop is stalled: 2.5 s late"]
    assert assess(None, [], None, 0.9, stall_s=1.0).ok  # late, but within the bound; no data directory
    assert not assess(None, [], health.MIN_FREE_BYTES - 1, 0.0).ok


async def test_the_watch_sees_a_loop_that_woke_late_and_one_that_has_not_woken_yet(mock_clock, captured_logs):
    watch = LoopWatch(period_s=0.25, stall_s=1.0)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch.run)
        await trio.testing.wait_all_tasks_blocked()
        assert watch.late_s() == 0.0
        mock_clock.jump(2.25)  # nothing ran for 2.25 s: the watcher, due after 0.25, has not woken yet
        assert watch.late_s() == 2.0
        await trio.testing.wait_all_tasks_blocked()  # now it has, 2 s late, and sleeps again
        assert watch.lag_s == 2.0 and watch.late_s() == 2.0
        mock_clock.jump(0.25)
        await trio.testing.wait_all_tasks_blocked()
        assert watch.late_s() == 0.0  # on time again: no longer stalled
        nursery.cancel_scope.cancel()
    (line,) = [json.loads(line) for line in captured_logs.getvalue().splitlines()]
    assert line["event"] == "loop_stalled" and line["late_ms"] == 2000 and line["level"] == "warning"


async def test_healthz_says_503_and_the_stopped_tables_once_the_log_fails(start_server, tmp_path):
    server = await start_server(data_dir=str(tmp_path))
    status, _, body = await get(server, "/healthz")
    assert status == 200 and json.loads(body)["status"] == "ok" and json.loads(body)["stopped"] == []
    async with connect(server, "a") as a:
        first = await create_table(a, 2, options=SHORT)
        second = await create_table(a, 2, options=SHORT)

        def disk_full(data: bytes, tables: list[str]) -> None:
            raise OSError(28, "No space left on device")

        server.lobby.data.syncer._write = disk_full
        await a.send({"type": "join", "id": 7, "table": first, "name": "a"})
        await a.expect(lambda m: m["type"] == "error" and m.get("table") == first)
    status, headers, body = await get(server, "/healthz")
    answer = json.loads(body)
    assert status == 503 and headers["content-type"] == "application/json" and answer["status"] == "unhealthy"
    assert answer["stopped"] == [first, second] and answer["tables"] == 2
    assert answer["reasons"] == ["the log failed: No space left on device; its tables are stopped"]
    assert gauge((await get(server, "/metrics"))[2].decode(), "parsimonia_tables_stopped") == 2


async def test_healthz_says_503_while_the_disk_is_full(start_server, tmp_path, monkeypatch):
    server = await start_server(data_dir=str(tmp_path))
    monkeypatch.setattr(health, "free_bytes", lambda path: 4096 if path == str(tmp_path) else 1 << 40)
    status, _, body = await get(server, "/healthz")
    assert status == 503 and json.loads(body)["reasons"] == ["the disk is full: 4096 bytes free"]


async def test_healthz_says_503_while_the_loop_is_stalled_and_200_once_it_is_on_time(start_server, mock_clock):
    server = await start_server(loop_stall_s=1.0)
    await trio.testing.wait_all_tasks_blocked()
    mock_clock.jump(1.5)  # the loop ran nothing for 1.5 s
    status, _, body = await get(server, "/healthz")
    assert status == 503 and json.loads(body)["reasons"] == ["the loop is stalled: 1.2 s late"]
    assert gauge((await get(server, "/metrics"))[2].decode(), "parsimonia_loop_lag_seconds") == 1.25
    mock_clock.jump(0.25)
    await trio.testing.wait_all_tasks_blocked()
    status, _, body = await get(server, "/healthz")
    assert status == 200 and json.loads(body)["loop_lag_ms"] == 0
