"""Floods and slow clients against the real server process (docs/reliability.md, "Floods and slow clients").

Each test starts ``parsimonia serve``, measures a normal table's bid-to-broadcast latency unloaded, then
again while one flood runs in a process of its own (tests/faults/flood.py), and checks from outside what
must hold: the normal table keeps working, the server keeps accepting (a fresh connection and ``hello``
every half second), its memory stays bounded, its descriptors come back once the flood is over, and the
flooder is limited or dropped. The latency ratio is printed, and recorded in the file named by
``PARSIMONIA_FAULTS_FIGURES`` if set; it is not asserted (no wall-clock assertions in tests).

``make test`` runs a slice at small sizes (``SLICE``); ``make faults`` runs them all at the sizes of the doc, among
them the busy floods (256 connections of one address, or of 16) and every other flood from 16 addresses at once.
``python -m tests.faults.figures FILE`` makes the doc's table of the figures recorded."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import trio

from tests.faults.conftest import FULL
from tests.faults.normal_table import normal_table, p50, p99
from tests.faults.served import Served, raise_nofile, scrape
from tests.faults.flood import Client
from server.core.session import HISTORY_BYTES
from tests.server.storage.test_crash import ENV, ROOT

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

UNLOADED_S = 5.0
MB = 1024
RSS_BACK_MB = 20  # the server's memory after a flood: within this of its start (issue #19)


@dataclass(frozen=True)
class Flood:
    count: int  # connections (the rate and stalled floods use one, again and again)
    seconds: float  # how long the flood lasts once it is on
    rss_per_conn_kb: int = 0  # what each flooding connection may cost the server at most, beyond 32 MiB
    addresses: int = 1  # busy: the source addresses its connections come from
    rate: float = 190.0  # busy: pings a second per connection


FLOODS = {
    "rate": Flood(1, 10.0),
    "handshakes": Flood(1000, 14.0, 64),
    "slowloris": Flood(500, 14.0, 64),
    "stalled": Flood(1, 8.0),
    "idle": Flood(5000, 15.0, 96, addresses=25),  # 200 an address (tests/faults/flood.py: PER_ADDRESS)
    # 256 connections of one address, each under its own rate (200/s), all together far over the address's (2,000/s)
    "busy": Flood(256, 12.0, 64),
    # 16 addresses, each under its own budget (16 x 120/s = 1,920/s), 30,720 pings a second in all: more than the
    # server can answer, so each address gets its share of the server's time (server/runtime/turns.py)
    "busy16": Flood(256, 12.0, 64, addresses=16, rate=120.0),
    # the floods of one connection, from 16 addresses at once (127.0.0.2 ... 127.0.0.17), one each
    "rate16": Flood(16, 10.0, 256, addresses=16),
    "stalled16": Flood(16, 8.0, 1024, addresses=16),
    # the rest of issue 19's table, each also from 16 addresses at once
    "resume": Flood(1, 10.0, 1024),  # a seat that never reads, resuming (and asking for views) 150 times a second
    "resume16": Flood(16, 10.0, 1024, addresses=16),
    "creates": Flood(64, 10.0, 64),  # tables created, 16 a connection, reconnecting
    "creates16": Flood(256, 10.0, 64, addresses=16),
    "sockets": Flood(2000, 10.0, 64),  # WebSockets opened at once
    "sockets16": Flood(2000, 10.0, 64, addresses=16),
    "http": Flood(3000, 12.0, 16),  # keep-alive connections asking again and again, a third never reading
    "http16": Flood(3000, 12.0, 16, addresses=16),
    "bulletin": Flood(64, 10.0, 64),  # 32 new topics followed a connection, then left, again and again
    "bulletin16": Flood(256, 10.0, 64, addresses=16),
    "watchers": Flood(200, 10.0, 256),  # watchers of the normal table that never read
    "watchers16": Flood(200, 10.0, 256, addresses=16),
    "hsrate": Flood(8, 10.0, 64),  # WebSocket handshakes as fast as they come
    "hsrate16": Flood(16, 10.0, 64, addresses=16),
    # issue 37: what a connection holds, reads and answers for what it is not to be given
    "fragments": Flood(1, 10.0),  # a message of empty fragments, 3 million at most on one connection
    "fragments16": Flood(16, 10.0, 1024, addresses=16),
    "pings": Flood(1, 10.0),  # WebSocket pings as fast as they go
    "pings16": Flood(16, 10.0, 256, addresses=16),
    "pongs": Flood(1, 10.0),
    "big": Flood(20, 10.0, 1024),  # 20 connections announcing 100 MB messages and pushing them
    "bighttp": Flood(20, 10.0, 1024),  # and HTTP requests announcing 100 MB bodies
    # a seat resending one refused command under its key at its rate (issue 37: ~3 KB kept a resend), and 4 seats
    "refused": Flood(1, 60.0, 256, rate=190.0),
    "refused4": Flood(4, 60.0, 256, rate=190.0),
    # 4 addresses keeping 16 tables of their own each (the cap) as busy as their address may (32 seats x 60 gifts
    # a second), then leaving: count is the tables of an address, rss_per_conn_kb what each may cost (below)
    "tables": Flood(16, 60.0, 0, addresses=4, rate=60.0),
}
# what make test runs: the stalled reader, and a few of the rest at small sizes
SLICE = {"stalled": FLOODS["stalled"], "resume": Flood(1, 9.0, 1024), "creates": Flood(8, 5.0, 64),
         "sockets16": Flood(400, 5.0, 64, addresses=16), "http": Flood(150, 5.0, 16),
         "pings16": Flood(16, 5.0, 256, addresses=16), "big": Flood(8, 5.0, 1024),
         "refused4": Flood(4, 8.0, 256, rate=190.0), "tables": Flood(4, 8.0, 0, addresses=2, rate=60.0)}
MB_READ = 1 << 20  # what a refused connection (1009, 413) may have read from it at most (issue 37)
LIFTED = ("--max-handshakes-per-s", "1000000", "--max-http-connections-per-ip", "1000",
          "--max-http-requests-per-s", "1000000")
# the floods run with the handshake and HTTP bounds lifted (they stand for many hosts): the rest meet the defaults
LIFTED_FOR = {"idle", "busy", "busy16", "watchers", "watchers16", "bulletin", "bulletin16", "creates", "creates16"}


def cpu_s(pid: int) -> float:
    """The CPU time (user and system) process ``pid`` has taken, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def busy_tables_kb(flood: Flood, result: dict[str, Any]) -> int:
    """What the tables flood's tables may make the server hold (docs/operations.md): each table's events in
    memory (at most 2 * HISTORY_BYTES, server/core/session.py) and its two seats' connections (64 KiB each), however
    many commands they play (a journal keeps none of its records in memory)."""
    if "tables" not in result or result.get("kind") != "tables":
        return 0
    return result["tables"] * (2 * HISTORY_BYTES // 1024 + 2 * 64)


def web_target() -> str:
    """The largest file of the built web client (the page's script), or the placeholder page."""
    dist = ROOT / "clients" / "web" / "dist"
    files = [f for f in dist.rglob("*") if f.is_file()] if dist.is_dir() else []
    return "/" + str(max(files, key=lambda f: f.stat().st_size).relative_to(dist)) if files else "/"


async def wait_line(path: Path, word: str, proc: trio.Process, timeout: float) -> str:
    """The first line of the flooder's output ``path`` that starts with ``word``; fails at once when the flooder
    ended without printing one, with what it wrote to stderr (``path`` with ``.err``)."""
    with trio.fail_after(timeout):
        while True:
            ended = proc.returncode is not None  # before reading: what it printed before it ended is read below
            for line in path.read_text().splitlines() if path.exists() else []:
                if line.startswith(word):
                    return line
            assert not ended, (path.read_text(), path.with_suffix(".err").read_text()[-3000:])
            await trio.sleep(0.05)


async def keep_checking(port: int, seen: dict[str, Any], stop: trio.Event, creates: int = 0) -> None:
    """Until ``stop``: a fresh connection and hello every half second, counted; on the first ``creates`` of them
    (a second apart) it also creates a table and joins it. (Nothing else: even listing the server's descriptors,
    5,000 of them, stalls this process's normal-table client and reads as latency.)

    Through the floods' bare client, not trio_websocket's: closing one of those while the server's first
    round-trip ping comes in fails its reader (a pong sent while closing), and the failure leaves it as a
    Cancelled, which cancelled the normal table's measure mid-auction."""
    checks = 0
    while not stop.is_set():
        try:
            with trio.fail_after(5):
                client = await Client.open(port, source="127.0.0.1")
                try:
                    await client.hello("newcomer")
                    if checks % 2 == 0 and checks // 2 < creates:
                        await client.send({"type": "create", "id": 1, "game": "parsimonia", "seats": 2})
                        created = await client.next_message()
                        assert created is not None and created["type"] == "created", created
                        await client.send({"type": "join", "id": 2, "table": created["table"], "name": "newcomer"})
                        joined = await client.next_message()
                        assert joined is not None and joined["type"] == "joined", joined
                        seen["created"] = seen.get("created", 0) + 1
                    seen["accepted"] += 1
                finally:
                    await client.stream.aclose()
        except Exception as exc:  # noqa: BLE001 - any failure to connect is what is counted
            seen["refused"] += 1
            seen.setdefault("why", []).append(repr(exc)[:200])
        checks += 1
        with trio.move_on_after(0.5):
            await stop.wait()


def record(figures: dict[str, Any]) -> None:
    print("\nFLOOD " + json.dumps(figures))
    path = os.environ.get("PARSIMONIA_FAULTS_FIGURES")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(figures) + "\n")


@pytest.mark.parametrize("kind", [kind for kind in FLOODS if FULL or kind in SLICE])  # make faults: every flood
async def test_a_flood_leaves_a_normal_table_working_and_the_server_accepting(kind, tmp_path):
    flood = FLOODS[kind] if FULL else SLICE[kind]
    raise_nofile(2 * flood.count + 1024)
    # idle: 200 connections an address, opened at once, stand for 200 hosts; over one address's handshake rate
    lifted = LIFTED if kind in LIFTED_FOR else ()
    if kind == "tables":  # the flood's tables an address are the cap (16 by default): one more is refused
        lifted = ("--max-playing-tables-per-ip", str(flood.count))
    served = Served(tmp_path, "--data", str(tmp_path / "data"), "--sync", "write", *lifted)
    port = await served.start()
    flooder: trio.Process | None = None
    try:
        async with normal_table(port) as table:
            unloaded = await table.measure(UNLOADED_S)
            before, metrics_before = served.sample(), await scrape(port)
            out = tmp_path / "flood.out"
            with open(out, "wb") as f, open(tmp_path / "flood.err", "wb") as err:
                flooder = await trio.lowlevel.open_process(
                    # niced: the flooder stands for another host, not for a process taking the normal table's CPU
                    ["nice", "-n", "10", sys.executable, "-m", "tests.faults.flood", kind.rstrip("0123456789"),
                     "--port", str(port), "--count", str(flood.count), "--seconds", str(flood.seconds),
                     "--table", table.table, "--addresses", str(flood.addresses), "--rate", str(flood.rate),
                     "--target", web_target()],
                    stdout=f, stderr=err, cwd=ROOT, env={**ENV, "PYTHONPATH": str(ROOT)})
            await wait_line(out, "READY", flooder, timeout=120)
            during, metrics_during = served.sample(), await scrape(port)  # the flood on, before measuring
            seen = {"accepted": 0, "refused": 0}
            stop = trio.Event()
            cpu_before = cpu_s(served.pid)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(keep_checking, port, seen, stop, 4 if kind.startswith("creates") else 0)
                loaded = await table.measure(flood.seconds - (4.5 if kind == "tables" else 1.5))
                stop.set()
            seen["cpu_s"] = round(cpu_s(served.pid) - cpu_before, 2)
            end = served.sample()  # the flood still on (the tables flood: before its tables end)
            seen["peak_rss_kb"], seen["peak_fds"] = end.peak_rss_kb, during.fds
            result = json.loads((await wait_line(out, "RESULT", flooder, timeout=60))[len("RESULT "):])
            await flooder.wait()
            # the flood is over: its connections leave (a close handshake takes at most 2 s)
            with trio.move_on_after(20):
                while served.sample().fds > before.fds + 2 or \
                        (await scrape(port))["parsimonia_tasks"] > metrics_before["parsimonia_tasks"] + 2:
                    await trio.sleep(0.25)
            # and its memory is given back: 1, 3 and 7 s after a crowd of connections left (server/ops/memory.py)
            with trio.move_on_after(12):
                while served.sample().rss_kb - before.rss_kb >= RSS_BACK_MB * MB:
                    await trio.sleep(0.25)
            after, metrics_after = served.sample(), await scrape(port)
            still = await table.measure(1.0)
    finally:
        if flooder is not None and flooder.returncode is None:
            flooder.kill()
            await flooder.wait()
        await served.kill()

    figures = {
        "flood": kind, "count": flood.count, "seconds": flood.seconds,
        "addresses": flood.addresses,
        "unloaded_p50_ms": round(p50(unloaded), 2), "loaded_p50_ms": round(p50(loaded), 2),
        "unloaded_p99_ms": round(p99(unloaded), 2), "loaded_p99_ms": round(p99(loaded), 2),
        "ratio": round(p99(loaded) / p99(unloaded), 2), "bids_unloaded": len(unloaded), "bids_loaded": len(loaded),
        "rss_kb": [before.rss_kb, seen["peak_rss_kb"], after.rss_kb], "rss_end_kb": end.rss_kb,
        "fds": [before.fds, seen["peak_fds"], after.fds],
        "accept_checks": [seen["accepted"], seen["refused"]], "tasks": [metrics_before["parsimonia_tasks"],
                                                                         metrics_after["parsimonia_tasks"]],
        "flooder": result,
        "server_cpu_s": seen["cpu_s"],  # the server's CPU time (user and system) while the loaded bids were measured
        # every byte the server read from clients meanwhile (the normal table's and the checks' too: a few KB)
        "bytes_read": metrics_after["parsimonia_bytes_read_total"] - metrics_before["parsimonia_bytes_read_total"],
    }
    record(figures)

    # the normal table kept working throughout (every bid broadcast within its wait), and after
    assert loaded and still
    # the server never stopped accepting
    assert seen["accepted"] >= 2 and seen["refused"] == 0, seen.get("why")
    # memory bounded: what the flood's connections may cost, and descriptors given back once it is over
    assert seen["peak_rss_kb"] - before.rss_kb < 32 * MB + flood.count * flood.rss_per_conn_kb + \
        busy_tables_kb(flood, result), figures
    assert after.rss_kb - before.rss_kb < RSS_BACK_MB * MB, figures
    assert after.fds <= before.fds + 2, figures
    # every task given back but the tables' (a table created waits for players, a task of its own, 10 minutes)
    tables = result.get("created", 0) + seen.get("created", 0)
    assert metrics_after["parsimonia_tasks"] <= metrics_before["parsimonia_tasks"] + 2 + tables, figures
    assert "Traceback" not in served.errors()

    base = kind.rstrip("0123456789")
    if base == "rate":  # each connection held at its rate: the limit (200/s) and one burst (2 s of it) answered,
        # then closed; a new connection starts with a burst of its own (docs/reliability.md)
        assert result["rate_limited"] > 0 and result["closes"] >= 1, result
        assert result["pongs"] <= flood.addresses * (200 * flood.seconds + 400) + 400 * result["closes"], result
    elif kind in ("handshakes", "slowloris"):  # every one closed by the server, none held to the end
        assert result["closed_by_server"] == result["opened"] == flood.count, result
        assert result["longest_held_s"] < flood.seconds, result
    elif base == "stalled":  # dropped as too slow, again each time it came back
        assert result["drops"] >= 1, result
        dropped = metrics_after["parsimonia_slow_clients_dropped_total"] - \
            metrics_before["parsimonia_slow_clients_dropped_total"]
        assert dropped >= result["drops"], (dropped, result)
    elif base == "busy":  # served (its share of the server's time: server/runtime/turns.py), its connections held
        assert result["opened"] >= 1 and result["bytes_read"] > 0, result
    elif base == "resume":  # a resume's room lapses after 5 s: then dropped, again and again
        assert result["drops"] >= 1, result
    elif base == "creates":  # each address's waiting tables capped; honest ones created and joined throughout
        assert 0 < result["created"] <= 8 * flood.addresses and result["refused"] > 0, result
        assert seen["created"] >= 2, seen
    elif base == "sockets":  # counted before the handshake's await: at most the bound of each address
        assert 0 < result["opened"] <= min(flood.count, 256 * flood.addresses), result
        assert result["opened"] + result["refused"] == flood.count, result
    elif base == "http":  # answered, each address held to its HTTP connections (64)
        assert result["answered"] > 0 and result["refused"] > 0, result
        assert during.fds <= before.fds + 64 * flood.addresses + 16, figures
    elif base == "bulletin":  # followed, and the topics left with their followers
        assert result["followed"] > 0 and result["connections"] > flood.count, result
    elif base == "watchers":  # the watchers that never read are dropped
        dropped = metrics_after["parsimonia_slow_clients_dropped_total"] - \
            metrics_before["parsimonia_slow_clients_dropped_total"]
        assert result["drops"] >= 1 and dropped >= result["drops"], (dropped, result)
    elif base == "hsrate":  # held to the handshake rate (20 a second and a 2 s burst, an address); from 16
        # addresses the server's own pace (about 200 handshakes a second on a loaded machine) may keep each under it
        assert result["handshakes"] <= flood.addresses * 20 * (flood.seconds + 2) + 40, result
        assert result["refused"] > 0 or flood.addresses > 1, result
    elif base == "fragments":  # each connection refused 1009 long before its 3 million fragments, none left open
        assert result["closes"].get("1009", 0) >= 1 and result["unclosed"] == 0, result
        assert result["most_on_one"] < 100 * 65536, result  # 1,024 frames, and what the kernel's buffers took
    elif base in ("pings", "pongs"):  # held to the rates as messages are: refused, struck out and closed (1008), each
        assert result["rate_limited"] > 0 and result["closes"].get("1008", 0) >= flood.count, result
        closes = sum(result["closes"].values())
        assert result["pongs"] <= flood.addresses * (200 * flood.seconds + 400) + 400 * closes, result
    elif base in ("big", "bighttp"):  # refused from the header, and read no further than a short drain
        refused = result["closes"].get("1009", 0) if base == "big" else result["statuses"].get("413", 0)
        assert refused >= 1 and figures["bytes_read"] <= MB_READ * result["opened"], figures
    elif base == "refused":  # each resend refused again, and nothing kept for it: memory flat (issue 37: +3 KB each)
        assert result["refusals"] >= result["sent"] // 2 > 0, result
        assert end.rss_kb - before.rss_kb < 5 * MB, figures
    elif base == "tables":  # the address's tables capped (one more refused), played, and ended by their seats
        assert result["tables"] == flood.addresses * flood.count and result["refused_creates"] == 1, result
        assert result["sent"] > 0 and result["bytes_read"] > 0 and result["quits"] == result["tables"], result
    elif kind == "idle":  # every idle connection held open, and counted
        assert result["opened"] == result["still_open"] == flood.count, result
        assert metrics_during["parsimonia_connections"] >= flood.count + 2
