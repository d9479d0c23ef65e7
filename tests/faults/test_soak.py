"""The soak (docs/reliability.md, "Soak"): the real server process for ``PARSIMONIA_SOAK_S`` seconds (10
minutes under ``make faults``, 35 s in ``make test``) with

* pairs of greedy bots playing whole Parsimonia games over raw connections, one table after another, each
  keeping every command the server acknowledged (``tests.server.storage.test_recovery.Player``);
* drops: every 0.2-1 s (seeded) one bot's connection is cut without a close; it resumes its seat at once;
* the bench load generator (bench/loadgen.py) bidding on tables of its own, in one run per server life;
* SIGKILL of the server twice (once in ``make test``), each time restarted on the same port and data.

Afterwards every acknowledged command must be in its table's journal (live or finished), the server's
memory is reported per life (a few seconds into it, and at its end), and once the load has stopped its
descriptors and trio tasks must be those of its live tables, no more."""

from __future__ import annotations

import json
import os
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import trio

from server.storage.journal import read_journal, read_table
from tests.faults.conftest import FULL, scale
from tests.faults.served import Served, raise_nofile, scrape
from tests.server.conftest import RawClient, connect
from tests.server.storage.test_crash import ENV, ROOT, _subsequence, dropped, free_port
from tests.server.storage.test_recovery import Player, commands_by_seat

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

SOAK_S = float(os.environ.get("PARSIMONIA_SOAK_S") or (600 if FULL else 35))
KILLS = 2 if FULL else 1
BOT_TABLES = scale(6, 24)  # pairs of bots, each playing one game after another
LOAD_TABLES = scale(10, 50)  # the load generator's tables of 6 seats, in each server life
LOAD_RATE = float(os.environ.get("PARSIMONIA_SOAK_RATE") or scale(200, 1000))  # its bids per second; 0: none
TIME_SCALE = 200  # a bot game (40 game minutes) lasts 12 s
OPTIONS = {"game_ms": 2_400_000}
LIFTED = ("--max-tables-per-client", "1000000", "--max-connections-per-ip", "100000",  # for the load generator
          "--max-http-connections-per-ip", "100000", "--max-handshakes-per-s", "1e9",
          "--max-http-requests-per-s", "1e9",
          "--max-address-messages-per-s", "1e9", "--max-address-bytes-per-s", "1e12",
          "--max-waiting-tables-per-ip", "100000", "--max-playing-tables-per-ip", "100000")


@dataclass
class Soak:
    port: int
    data: Path
    end: float
    rng: random.Random = field(default_factory=lambda: random.Random(15))
    online: dict[tuple[str, int], RawClient] = field(default_factory=dict)
    seats: list[tuple[str, Player]] = field(default_factory=list)
    drops: int = 0
    late_results: int = 0  # seats that came back to a finished game
    games: int = 0

    @property
    def where(self) -> SimpleNamespace:
        return SimpleNamespace(port=self.port)

    def records(self, table: str) -> list[dict[str, Any]]:
        """The table's journal: its replay file once finished, its live journal before."""
        finished = self.data / "replays" / f"{table}.journal"
        return read_journal(str(finished)).records if finished.exists() else read_table(str(self.data / "log"), table)


async def retried(soak: Soak, what: Any) -> Any:
    """``what()`` again until the server answers it (it may be down, killed, restarting)."""
    while True:
        try:
            return await what()
        except Exception as exc:  # noqa: BLE001
            if not dropped(exc):
                raise
        await trio.sleep(0.1)


async def new_table(soak: Soak) -> tuple[str, list[Player]]:
    async with connect(soak.where, "bot-0") as first, connect(soak.where, "bot-1") as second:
        created = await first.request("create", game="parsimonia", seats=2, time_scale=TIME_SCALE, options=OPTIONS)
        assert created["type"] == "created", created
        players = []
        for seat, client in enumerate((first, second)):
            joined = await client.request("join", table=created["table"], name=client.name)
            assert joined["type"] == "joined" and joined["seat"] == seat, joined
            players.append(Player(seat, joined["token"]))
        return created["table"], players


async def keep_seat(soak: Soak, table: str, player: Player) -> None:
    """Play the seat to its result, resuming after every drop and every kill."""
    key = (table, player.seat)
    while player.result is None:
        try:
            async with connect(soak.where, f"bot-{player.seat}") as client:
                reply = await client.request("resume", table=table, token=player.token, last_seq=player.last_seq)
                if reply["type"] == "error" and (soak.data / "replays" / f"{table}.journal").exists():
                    # finished while this seat was away, and the server restarted since: the result is on disk
                    player.result = soak.records(table)[-1]["result"]
                    return
                assert reply["type"] == "resumed", reply
                soak.online[key] = client
                first = await client.next()
                if first["type"] == "event" and first["event"].get("type") == "result" \
                        and first["seq"] > player.last_seq + 1:
                    # finished while this seat was away: a finished table keeps only its result event
                    # (Match.retire), so the events just before it are not replayed, by design
                    player.result = first["event"]["result"]
                    soak.late_results += 1
                    return
                client.pos -= 1  # the seat's player reads it
                await player.play(client)
        except Exception as exc:  # noqa: BLE001
            if not dropped(exc):
                raise
        finally:
            soak.online.pop(key, None)
        if player.result is None:
            await trio.sleep(0.05)


async def bots(soak: Soak) -> None:
    """One pair of bots: a table, its game to the end, the next table, until the soak's end."""
    while trio.current_time() < soak.end:
        table, players = await retried(soak, lambda: new_table(soak))
        soak.seats.extend((table, p) for p in players)
        async with trio.open_nursery() as nursery:
            for player in players:
                nursery.start_soon(keep_seat, soak, table, player)
        soak.games += 1


async def dropper(soak: Soak) -> None:
    while True:
        await trio.sleep(soak.rng.uniform(0.2, 1.0))
        if soak.online:
            key = soak.rng.choice(sorted(soak.online))
            await soak.online[key].drop()
            soak.drops += 1


async def load(port: int, seconds: float, out: Path, seed: int) -> dict[str, Any] | None:
    """One run of the bench load generator on tables of its own; its RESULT, or None if it got none."""
    with open(out, "ab") as f:
        await trio.run_process(
            [sys.executable, str(ROOT / "bench" / "loadgen.py"), "--url", f"ws://127.0.0.1:{port}", "--tables",
             str(LOAD_TABLES), "--rate", str(LOAD_RATE), "--warmup", "1", "--duration", str(max(1.0, seconds - 1)),
             "--drain", "1", "--seed", str(seed)], stdout=f, stderr=f, cwd=ROOT, env=ENV, check=False)
    lines = [line for line in out.read_text().splitlines() if line.startswith("RESULT ")]
    return json.loads(lines[-1][len("RESULT "):]) if lines else None


async def keep_sampling(served: Served, series: list[tuple[int, int]], started: float) -> None:
    """The server's resident memory every 10 s: (seconds into the soak, KiB)."""
    while True:
        try:
            series.append((round(trio.current_time() - started), served.sample().rss_kb))
        except (OSError, KeyError, AssertionError):
            pass  # killed, or not started again yet
        await trio.sleep(10)


async def test_a_soak_of_bots_drops_load_and_kills_loses_no_acknowledged_command(tmp_path):
    raise_nofile(8192)
    data = tmp_path / "data"
    served = Served(tmp_path, "--data", str(data), *LIFTED, port=free_port())
    await served.start()
    start_sample, start_metrics = served.sample(), await scrape(served.port)
    soak = Soak(served.port, data, trio.current_time() + SOAK_S)
    lives: list[dict[str, Any]] = []
    loads: list[dict[str, Any] | None] = []
    life_s = SOAK_S / (KILLS + 1)
    series: list[tuple[int, int]] = []
    try:
        async with trio.open_nursery() as nursery:
            for _ in range(BOT_TABLES):
                nursery.start_soon(bots, soak)
            nursery.start_soon(dropper, soak)
            nursery.start_soon(keep_sampling, served, series, trio.current_time())
            for life in range(KILLS + 1):
                async with trio.open_nursery() as living:
                    living.start_soon(lambda: trio.sleep(life_s))
                    result: list[dict[str, Any] | None] = []

                    async def run_load(n: int = life) -> None:
                        result.append(await load(served.port, life_s - 2, tmp_path / f"load-{n}.out", n + 1))

                    if LOAD_RATE:
                        living.start_soon(run_load)
                    await trio.sleep(min(5.0, life_s / 3))
                    early = served.sample()
                loads.extend(result)
                late = served.sample()
                lives.append({"rss_kb": [early.rss_kb, late.rss_kb], "fds": [early.fds, late.fds]})
                if life < KILLS:
                    await served.kill()
                    await served.start()
            nursery.cancel_scope.cancel()  # the bots stop where they are; their tables stay live
        await trio.sleep(4)  # the bots' connections are closed (a close handshake takes at most 2 s)
        end_sample, end_metrics = served.sample(), await scrape(served.port)
    finally:
        await served.kill()

    live_tables = end_metrics["parsimonia_tables"]
    acked = lost = 0
    for table, player in soak.seats:
        journaled = commands_by_seat(soak.records(table), player.seat)
        acked += len(player.acked)
        lost += not _subsequence(player.acked, journaled)
    figures = {
        "soak_s": SOAK_S, "kills": KILLS, "bot_tables": BOT_TABLES, "games": soak.games, "drops": soak.drops,
        "late_results": soak.late_results,
        "acked": acked, "seats_losing_commands": lost, "lives": lives,
        "rss_kb_start_end": [lives[0]["rss_kb"][0], lives[-1]["rss_kb"][1]],
        "fresh": {"rss_kb": start_sample.rss_kb, "fds": start_sample.fds, "tasks": start_metrics["parsimonia_tasks"]},
        "end": {"rss_kb": end_sample.rss_kb, "fds": end_sample.fds, "tasks": end_metrics["parsimonia_tasks"],
                "connections": end_metrics["parsimonia_connections"], "live_tables": live_tables},
        "rss_series_kb": series, "load_rate": LOAD_RATE,
        "load": [None if r is None else {k: r.get(k) for k in ("sent", "accepted", "errors", "disconnects")}
                 for r in loads],
    }
    print("\nSOAK " + json.dumps(figures))
    path = os.environ.get("PARSIMONIA_FAULTS_FIGURES")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(figures) + "\n")

    assert lost == 0, figures  # every acknowledged command of every seat is in its table's journal
    assert acked > 100 and soak.drops > 10 and soak.games >= BOT_TABLES, figures
    assert len(loads) == (KILLS + 1 if LOAD_RATE else 0), figures
    assert all(r is not None and r.get("accepted", 0) > 0 for r in loads), figures
    # once the load is gone: no connection left, and per live table one task and one journal, no more
    assert end_metrics["parsimonia_connections"] == 0, figures
    assert end_sample.fds <= start_sample.fds + live_tables + 2, figures
    assert end_metrics["parsimonia_tasks"] <= start_metrics["parsimonia_tasks"] + live_tables + 2, figures
    assert "Traceback" not in served.errors()
