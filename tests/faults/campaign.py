"""One crash point of the campaign, end to end: a real ``parsimonia serve`` process armed with a fault
(``PARSIMONIA_FAULT``, server/faults.py) that kills it with SIGKILL at a chosen event of the game, started again
on the same data directory (armed with the next fault, if any) until it runs clean; the seats are played over
raw connections by reference players that resume by their tokens after every drop and keep every command the
server acknowledged.

After each kill the journal left on disk must hold every acknowledged command; at the end every game is
finished, its journal is a replay file, and replaying it gives the digest of the result the players saw.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import trio

from clients.players import make_player
from protocol.views import player_view
from server.journal import read_journal
from server.match import Match
from server.replay import replay_file
from tests.server.conftest import RawClient, connect, static_of
from server.faults import ENV as FAULT_ENV
from tests.server.test_crash import (ENV, ROOT, Processes, _subsequence, command, dropped, free_port, keep_seat,
                                     until_up)
from tests.server.test_recovery import Player, commands_by_seat

TIME_SCALE = 200
SEATS = 3
# short games: a few seconds of wall time each at TIME_SCALE
OPTIONS: dict[str, dict[str, Any]] = {
    "parsimonia": {"opening_ms": 60_000, "turn_ms": 60_000, "quiet_ms": 5_000, "game_ms": 600_000},
    "kupcy": {},
    "gift-of-tulips": {},
}
KILL_S = 60  # the most a fault may take to fire, or a game to finish, before the test fails


@dataclass
class Point:
    """A crash point: the game, the fault of each start of the server (the last start runs clean), and
    whether the harness creates a second table after ``extra_create_after`` seats of the first are taken."""

    name: str
    game: str
    faults: list[str]
    extra_create_after: int | None = None
    seed: int = 7


@dataclass
class Outcome:
    point: Point
    kills: int = 0
    acked: int = 0  # acknowledged commands, all seats, checked against the journal after every kill
    lost: int = 0
    finished: bool = False
    digest_matched: bool = False
    journal_after_kill: list[int] = field(default_factory=list)  # records on disk after each kill


class Seat(Player):
    """A seat played by a reference player of ``game``, keeping its acknowledged commands and its events."""

    def __init__(self, seat: int, token: str, game: str) -> None:
        super().__init__(seat, token)
        self.player = make_player("greedy", 40 + seat, game)

    async def play(self, client: RawClient) -> None:
        """Act on every fresh view until the result, or until the connection is gone. Events come without a
        gap, but for the one SPEC.md allows: a table whose game ended keeps only its result event, so a seat
        that resumes it after a crash that came before the last events were sent gets the result next."""
        in_flight: tuple[int, dict[str, Any]] | None = None
        while self.result is None:
            try:
                msg = await client.next()
            except AssertionError:
                if client.closed is not None:
                    return
                raise
            if msg["type"] == "event":
                is_result = msg["event"].get("type") == "result"
                assert msg["seq"] == self.last_seq + 1 or is_result and msg["seq"] > self.last_seq, \
                    f"seat {self.seat}: event {msg['seq']} after {self.last_seq}"
                self.events.append(msg)
                if is_result:
                    self.result = msg["event"]["result"]
            elif msg["type"] == "view" and msg["seat"] == self.seat and msg["seq"] >= self.last_seq \
                    and in_flight is None and msg["legal"]:
                view = player_view(static_of(client), msg["view"], msg.get("private"), self.seat)
                command = self.player.act(view, msg["legal"])
                if command is not None:
                    in_flight = (client.new_id(), command)
                    try:
                        await client.send({"type": "act", "id": in_flight[0], "table": msg["table"],
                                           "command": command})
                    except AssertionError:  # the server went away as we sent: the crash
                        return
            elif in_flight is not None and msg.get("re") == in_flight[0]:
                if msg["type"] == "ok":
                    self.acked.append(in_flight[1])
                in_flight = None


class Run:
    def __init__(self, tmp: Path, point: Point) -> None:
        self.tmp = tmp
        self.point = point
        self.data = tmp / "data"
        self.port = free_port()
        self.procs = Processes(tmp)
        self.players: list[Seat] = []
        self.online: dict[int, bool] = {}
        self.table: str | None = None
        self.outcome = Outcome(point)

    async def start(self, fault: str | None) -> trio.Process:
        """The server, armed with ``fault`` (None: clean), its output appended to serve.out / serve.err."""
        env = {k: v for k, v in ENV.items() if k != FAULT_ENV}
        if fault:
            env[FAULT_ENV] = fault
        args = ("serve", "--port", str(self.port), "--data", str(self.data), "--log-level", "info")
        with open(self.tmp / "serve.out", "ab") as out, open(self.tmp / "serve.err", "ab") as err:
            proc = await trio.lowlevel.open_process(command(*args), stdout=out, stderr=err, cwd=ROOT, env=env)
        self.procs.procs.append(proc)
        return proc

    async def run(self) -> Outcome:
        point = self.point
        try:
            server = await self.start(point.faults[0] if point.faults else None)
            await until_up(self.port)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._seat_everyone, nursery)
                for n in range(1, len(point.faults) + 1):
                    with trio.fail_after(KILL_S):
                        code = await server.wait()
                    assert code == -signal.SIGKILL, f"the server ended with {code}, not killed by its fault"
                    self.outcome.kills += 1
                    self._check_after_kill()
                    server = await self.start(point.faults[n] if n < len(point.faults) else None)
                with trio.fail_after(KILL_S):
                    while len(self.players) < SEATS or any(p.result is None for p in self.players):
                        assert server.returncode is None, "the server died unasked"
                        await trio.sleep(0.05)
                nursery.cancel_scope.cancel()
        finally:
            await self.procs.kill_all()
        self._check_end()
        return self.outcome

    # ------------------------------------------------------------------ the clients

    async def _retry(self, who: str, kind: str, **fields: Any) -> dict[str, Any]:
        """A request sent again after every drop until it is answered (the server may die on it)."""
        while True:
            try:
                async with connect(SimpleNamespace(port=self.port), who) as client:
                    return await client.request(kind, **fields)
            except Exception as exc:  # noqa: BLE001
                if not dropped(exc):
                    raise
            await trio.sleep(0.05)

    async def _seat_everyone(self, nursery: trio.Nursery) -> None:
        point = self.point
        created = await self._retry("organiser", "create", game=point.game, seats=SEATS, seed=point.seed,
                                    time_scale=TIME_SCALE, options=OPTIONS[point.game])
        assert created["type"] == "created", created
        self.table = created["table"]
        for seat in range(SEATS):
            if seat == point.extra_create_after:
                other = await self._retry("organiser", "create", game=point.game, seats=SEATS, seed=1)
                assert other["type"] == "created", other
            joined = await self._retry(f"p{seat}", "join", table=self.table, name=f"p{seat}")
            assert joined["type"] == "joined" and joined["seat"] == seat, joined
            self.players.append(Seat(seat, joined["token"], point.game))
        for player in self.players:
            nursery.start_soon(keep_seat, player, self.table, self.port, self.online)

    # ------------------------------------------------------------------ the checks

    def _journal(self) -> list[dict[str, Any]]:
        assert self.table is not None
        for where in ("tables", "replays"):
            path = self.data / where / f"{self.table}.journal"
            if path.exists():
                return read_journal(str(path)).records
        raise AssertionError(f"no journal for {self.table}")

    def _check_after_kill(self) -> None:
        """What the kill left on disk holds every command acknowledged before it."""
        if self.table is None:
            return
        records = self._journal()
        self.outcome.journal_after_kill.append(len(records))
        for player in self.players:
            lost = not _subsequence(player.acked, commands_by_seat(records, player.seat))
            self.outcome.lost += lost
            assert not lost, f"seat {player.seat}: an acknowledged command is not in the journal"

    def _check_end(self) -> None:
        assert self.table is not None
        replay = self.data / "replays" / f"{self.table}.journal"
        assert replay.exists(), "the finished game's journal did not become its replay file"
        records = read_journal(str(replay)).records
        results = {str(p.result) for p in self.players}
        assert len(results) == 1, "the seats saw different results"
        result = self.players[0].result
        assert result is not None and records[-1]["k"] == "end"
        assert records[-1]["result"] == result, (records[-1]["result"], result)
        self.outcome.finished = True
        for player in self.players:
            assert _subsequence(player.acked, commands_by_seat(records, player.seat)), player.seat
        self.outcome.acked = sum(len(p.acked) for p in self.players)
        lines: list[str] = []
        assert replay_file(str(replay), quiet=True, out=lines.append) == 0, lines
        assert Match.replay(records).result["digest"] == result["digest"]  # type: ignore[index]
        self.outcome.digest_matched = True
        assert not os.listdir(self.data / "corrupt"), os.listdir(self.data / "corrupt")
        err = (self.tmp / "serve.err").read_text()
        assert "Traceback" not in err, err[-3000:]
        assert err.count("fault_fired") >= self.outcome.kills
