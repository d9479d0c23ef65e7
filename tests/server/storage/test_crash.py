"""The real thing: ``parsimonia serve --data DIR`` in its own process, killed with SIGKILL three times in
one game (during the opening, in the middle of a turn, with an auction open) and started again on the
same port and directory each time. A ``parsimonia demo`` process plays through it all with SDK bots that
reconnect on their own, and a table of our own, played over raw connections, keeps every command the
server acknowledged: each of them must be in the journal the kill left behind."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
from pathlib import Path
from types import SimpleNamespace
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest
import trio
from trio_websocket import ConnectionClosed, HandshakeError

from server.storage.journal import read_journal, read_log, read_table
from server.cli.replay import replay_file
from server.core.match import Match
from tests.server.conftest import BANK, connect
from tests.server.storage.test_recovery import Player, commands_by_seat

T = TypeVar("T")

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and POSIX processes")

TIME_SCALE = 400
SCRIPT = Path(sys.executable).with_name("parsimonia")
ROOT = Path(__file__).resolve().parents[3]


def command(*args: str) -> list[str]:
    if SCRIPT.exists():
        return [str(SCRIPT), *args]
    return [sys.executable, "-c", "from server.cli.main import main; main()", *args]


# the server and the demo read the organiser's token from here; this test plays without one
ENV = {k: v for k, v in os.environ.items() if k != "PARSIMONIA_ADMIN_TOKEN"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dropped(exc: BaseException) -> bool:
    """The connection went away (the server was killed, or is not up yet), as opposed to a failed check."""
    if isinstance(exc, BaseExceptionGroup):
        return all(dropped(e) for e in exc.exceptions)
    if isinstance(exc, (OSError, HandshakeError, ConnectionClosed, trio.BrokenResourceError)):
        return True
    return isinstance(exc, AssertionError) and "connection closed" in str(exc)


class Processes:
    """Every process the test starts, killed by its id at the end whatever happens."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.procs: list[trio.Process] = []

    async def start(self, name: str, *args: str) -> trio.Process:
        out = open(self.tmp / f"{name}.out", "ab")
        err = open(self.tmp / f"{name}.err", "ab")
        try:
            proc = await trio.lowlevel.open_process(command(*args), stdout=out, stderr=err, cwd=ROOT, env=ENV)
        finally:
            out.close()
            err.close()
        self.procs.append(proc)
        return proc

    async def kill(self, proc: trio.Process) -> None:
        if proc.returncode is None:
            proc.send_signal(signal.SIGKILL)
        with trio.CancelScope(shield=True):
            await proc.wait()

    async def kill_all(self) -> None:
        for proc in self.procs:
            await self.kill(proc)


async def until_up(port: int) -> int:
    """Wait until the server answers; return its server time from welcome."""
    with trio.fail_after(15):
        while True:
            try:
                async with connect(SimpleNamespace(port=port), "probe") as probe:
                    return probe.frames[0]["server_time"]
            except Exception as exc:  # noqa: BLE001 - not up yet
                if not dropped(exc):
                    raise
                await trio.sleep(0.02)


def _stray(exc: BaseException) -> bool:
    """Whether ``exc`` is only Cancelled (alone or in groups) and drops."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_stray(inner) for inner in exc.exceptions)
    return isinstance(exc, trio.Cancelled) or (isinstance(exc, Exception) and dropped(exc))


async def keep_seat(player: Player, table: str, port: int, online: dict[int, bool]) -> None:
    """Play a seat of our own table, resuming it after every drop, until the result."""
    while player.result is None:
        try:
            async with connect(SimpleNamespace(port=port), f"raw-{player.seat}") as client:
                reply = await client.request("resume", table=table, token=player.token, last_seq=player.last_seq)
                assert reply["type"] == "resumed", reply
                online[player.seat] = True
                await player.play(client)
        except Exception as exc:  # noqa: BLE001
            if not dropped(exc):
                raise
        except BaseException as exc:
            # a Cancelled (or a group of them) while this task's own scopes are not cancelled is not ours:
            # trio-websocket 0.12 lets one out of open_websocket as a killed server's connection goes. Let out, it
            # cancelled the test's nursery, whose scope then took every Cancelled for its own and the test's body
            # ended early, in silence (the demo's exit status never read)
            if trio.current_effective_deadline() == float("-inf") or not _stray(exc):
                raise
        online[player.seat] = False
        if player.result is None:
            await trio.sleep(0.05)


async def keep_seats(players: list[Player], table: str, port: int, online: dict[int, bool]) -> None:
    """Keep every seat until its result, in a nursery of their own: should a stray Cancelled still get out of a
    seat's keeper (see ``keep_seat``), it cancels that nursery only, which takes it for its own and ends quietly,
    and the seats are kept again; in the test's nursery it would have ended the test's body early, in silence."""
    while any(player.result is None for player in players):
        async with trio.open_nursery() as nursery:
            for player in players:
                if player.result is None:
                    nursery.start_soon(keep_seat, player, table, port, online)
        for player in players:  # each keeper ended (or was cancelled, with no word): none holds its seat now
            online[player.seat] = False


async def without_strays(fn: Callable[..., Awaitable[T]], *args: Any) -> T:
    """``await fn(*args)`` in a nursery of its own, again should a stray Cancelled end it (see ``keep_seat``): in
    the test's nursery one would end the test's body early, in silence. A cancellation of ours still ends it (the
    checkpoint after an empty try raises it)."""
    while True:
        done: list[T] = []

        async def run() -> None:
            done.append(await fn(*args))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(run)
        if done:
            return done[0]
        await trio.lowlevel.checkpoint()


async def watch_until(port: int, table: str, point: str) -> dict[str, Any]:
    """Watch the demo's table until the moment to kill; return the frame that marks it."""
    async with connect(SimpleNamespace(port=port), "spy") as spy:
        assert (await spy.request("watch", table=table, views=False))["type"] == "watching"
        events = 0
        while True:
            msg = await spy.next(timeout=30)
            if msg["type"] != "event":
                continue
            events += 1
            event = msg["event"]
            if point == "opening":
                assert event["type"] != "opening_ended", "the opening ended before the kill"
                if events >= 8 and event["type"] in ("bid", "auction_opened"):
                    return msg
            elif point == "mid-turn" and event["type"] == "turn_started" and event["turn"] >= 5:
                return msg
            elif point == "auction" and event["type"] == "auction_opened" and events >= 3:
                return msg


def hit(point: str, crashed: Match, mark: dict[str, Any]) -> bool:
    """Whether the kill came at the moment it was aimed at."""
    engine = crashed.engine
    assert engine is not None and not engine.over
    if point == "opening":
        return engine.phase in ("opening", "opening_closing")
    if point == "mid-turn":
        return engine.phase == "turns" and engine.turn >= mark["event"]["turn"]
    # the auction may close (75 ms of quiet at this time scale) before a loaded machine kills the server
    return engine.phase == "turns" and bool(engine.auctions)


async def test_kill_9_at_three_points_of_a_game_loses_no_acknowledged_command(tmp_path):
    data = tmp_path / "data"
    port = free_port()
    serve = ("serve", "--port", str(port), "--data", str(data), "--log-level", "warning")
    procs = Processes(tmp_path)
    players: list[Player] = []
    online: dict[int, bool] = {}
    code = None  # the demo's exit status; still None if the body was cut short by a stray Cancelled
    try:
        server = await procs.start("serve", *serve)
        await until_up(port)
        async with trio.open_nursery() as nursery:
            # our own table, created first (t1): two seats we play and whose acknowledgements we keep
            async with connect(SimpleNamespace(port=port), "raw-0") as first, \
                    connect(SimpleNamespace(port=port), "raw-1") as second:
                created = await first.request("create", game="parsimonia", seats=2, seed=77, time_scale=TIME_SCALE)
                own = created["table"]
                for seat, client in enumerate((first, second)):
                    joined = await client.request("join", table=own, name=client.name)
                    assert joined["seat"] == seat
                    players.append(Player(seat, joined["token"]))
            nursery.start_soon(keep_seats, players, own, port, online)

            demo = await procs.start("demo", "demo", "--url", f"ws://127.0.0.1:{port}", "--players", "4",
                                     "--time-scale", str(TIME_SCALE), "--json")
            async with connect(SimpleNamespace(port=port), "lobby") as lobby:
                with trio.fail_after(15):
                    while True:
                        others = [t for t in (await lobby.request("tables"))["tables"] if t["table"] != own]
                        if others:
                            break
                        await trio.sleep(0.01)
            (demo_table,) = [t["table"] for t in others]

            points = ["opening", "mid-turn", "auction"]
            kills = 0
            while points:
                point = points.pop(0)
                kills += 1
                mark = await without_strays(watch_until, port, demo_table, point)
                seen_at = trio.current_time()
                await procs.kill(server)
                with trio.fail_after(10):
                    while any(online.values()):
                        await trio.sleep(0.01)
                # what the kill left on disk is what recovery will see
                crashed = Match.replay(read_table(str(data / "log"), demo_table))
                if not hit(point, crashed, mark):
                    assert point == "auction" and kills < 6, f"the kill missed its moment ({point})"
                    points.append(point)  # once more
                assert len(crashed.history) >= mark["seq"]  # every event the spectator saw was durable
                ours = read_table(str(data / "log"), own)
                for player in players:
                    journaled = commands_by_seat(ours, player.seat)
                    assert _subsequence(player.acked, journaled), (point, player.seat)
                    assert len(journaled) - len(player.acked) <= kills
                    assert [(m["seq"], m["event"]) for m in player.events] == \
                        [(seq, e.to_wire()) for seq, _, e in Match.replay(ours).history[: len(player.events)]]
                pause_s = 1.0 if point == "mid-turn" else 0.0
                await trio.sleep(pause_s)  # a longer downtime once, which no clock may count
                server = await procs.start("serve", *serve)
                welcome_time = await without_strays(until_up, port)
                wall_ms = (trio.current_time() - seen_at) * 1000
                # server time went on from (at most) the moment of the kill: it did not count the downtime
                # (200 ms: the most the marking event may have taken to reach us)
                assert welcome_time - mark["time"] < wall_ms - 1000 * pause_s + 200, \
                    (point, welcome_time, mark["time"], wall_ms)

            with trio.fail_after(60):
                code = await demo.wait()
                while any(p.result is None for p in players):
                    await trio.sleep(0.05)
    finally:
        await procs.kill_all()

    assert code == 0, (tmp_path / "demo.err").read_text()
    out = json.loads((tmp_path / "demo.out").read_text().strip().splitlines()[-1])
    assert out["table"] == demo_table and out["players"] == 4
    assert sum(out["dollars"]) + out["company_dollars"] == BANK
    assert out["reason"] == "clock" and out["reconnects"] >= 4 * kills  # every bot came back after every kill
    assert "Traceback" not in (tmp_path / "serve.err").read_text()
    assert not os.listdir(data / "corrupt") and not read_log(str(data / "log")).tables

    # the finished game's replay file reproduces the demo's result, digest included
    replay = data / "replays" / f"{demo_table}.journal"
    lines: list[str] = []
    assert replay_file(str(replay), quiet=True, out=lines.append) == 0
    assert json.loads(lines[0])["digest"] == out["digest"]
    cli = await trio.run_process(command("replay", "--quiet", str(replay)), capture_stdout=True, cwd=ROOT, env=ENV)
    printed = cli.stdout.decode().splitlines()
    assert printed[-1] == "replay reproduces the recorded result"
    assert json.loads(printed[0])["dollars"] == out["dollars"]

    # our own table finished too, with every acknowledged command in its record
    result = players[0].result
    assert result is not None and players[1].result == result
    assert sum(result["dollars"]) + result["company_dollars"] == BANK
    records = read_journal(str(data / "replays" / f"{own}.journal")).records
    assert records[-1]["result"] == result
    for player in players:
        assert _subsequence(player.acked, commands_by_seat(records, player.seat))
    assert sum(len(p.acked) for p in players) > 20

    # each command is accounted for from its answer alone: the keyed commands sent again after the kills were
    # applied once, so what the table recorded of a seat is exactly what that seat was told `ok` to, in order,
    # and each ok names the events the command made (the first of them, if it names a seat, names this one) and
    # the auction it opened
    for player in players:
        journaled = commands_by_seat(records, player.seat)
        pending = [player.unanswered["command"]] if player.unanswered is not None else []
        assert journaled in (player.acked, player.acked + pending), player.seat
        seen = {m["seq"]: m["event"] for m in player.events}
        for ok in player.oks:
            made = [seen[seq] for seq in range(ok["seq"], ok["seq"] + ok["events"])]
            assert made and made[0].get("seat", player.seat) == player.seat, (ok, made)
            opened = [e["auction"]["id"] for e in made if e["type"] == "auction_opened"]
            assert ok.get("created", {}).get("auction") == (opened[0] if opened else None), (ok, made)
    assert any("created" in ok for player in players for ok in player.oks)


def _subsequence(short: list[Any], long: list[Any]) -> bool:
    it = iter(long)
    return all(any(x == y for y in it) for x in short)
