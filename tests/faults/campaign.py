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
from server.storage.journal import read_journal, read_table
from server.core.match import Match
from server.cli.replay import replay_file
from tests.server.conftest import RawClient, connect, static_of
from server.faults import ENV as FAULT_ENV
from server.faults import parse
from tests.server.storage.test_crash import (ENV, ROOT, Processes, _subsequence, command, dropped, free_port, keep_seat,
                                     until_up)
from tests.server.storage.test_recovery import Player, commands_by_seat

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
    options: dict[str, Any] = field(default_factory=dict)  # over the game's OPTIONS
    phase: str | None = None  # where the first kill must find the game on disk, e.g. "running/turns"


@dataclass
class Outcome:
    point: Point
    kills: int = 0
    acked: int = 0  # acknowledged commands, all seats, checked against the journal after every kill (a lost one
    # fails the test where it is found)
    finished: bool = False
    digest_matched: bool = False
    journal_after_kill: list[int] = field(default_factory=list)  # records on disk after each kill
    phase_at_kill: list[str] = field(default_factory=list)  # the game's state and phase on disk after each kill


class Seat(Player):
    """A seat played by a reference player of ``game``, keeping its acknowledged commands and its events."""

    def __init__(self, seat: int, token: str, game: str) -> None:
        super().__init__(seat, token)
        self.player = make_player("greedy", 40 + seat, game)
        self.notices: list[dict[str, Any]] = []  # error pushes (no `re`)

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
            elif msg["type"] == "error" and msg.get("re") is None:
                self.notices.append(msg)  # e.g. the table stopped: its journal could not be written
            elif in_flight is not None and msg.get("re") == in_flight[0]:
                if msg["type"] == "ok":
                    self.acked.append(in_flight[1])
                in_flight = None


@dataclass
class Game:
    """One table of a run: its game, its seats as the players hold them."""

    game: str
    seed: int
    options: dict[str, Any] = field(default_factory=dict)
    table: str | None = None
    players: list[Seat] = field(default_factory=list)
    online: dict[int, bool] = field(default_factory=dict)

    @property
    def finished(self) -> bool:
        return len(self.players) == SEATS and all(p.result is not None for p in self.players)


class Run:
    """Server processes on one data directory, one after the other, and the games played through them."""

    def __init__(self, tmp: Path, point: Point | None = None, data: Path | None = None) -> None:
        self.tmp = tmp
        self.point = point
        self.data = data or tmp / "data"
        self.port = free_port()
        self.procs = Processes(tmp)
        self.games: list[Game] = []
        self.outcome = Outcome(point) if point is not None else None

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
        """The crash point: every start of the server but the last killed by its fault."""
        point, outcome = self.point, self.outcome
        assert point is not None and outcome is not None
        game = Game(point.game, point.seed, point.options)
        try:
            server = await self.start(point.faults[0] if point.faults else None)
            await until_up(self.port)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self.play, nursery, game, point.extra_create_after)
                for n in range(1, len(point.faults) + 1):
                    with trio.fail_after(KILL_S):
                        code = await server.wait()
                    assert code == -signal.SIGKILL, f"the server ended with {code}, not killed by its fault"
                    outcome.kills += 1
                    if game.table is not None:
                        outcome.journal_after_kill.append(self.check_acked(game))
                        outcome.phase_at_kill.append(self.check_hit(game, point.faults[n - 1]))
                        assert n > 1 or point.phase in (None, outcome.phase_at_kill[0]), outcome.phase_at_kill
                    server = await self.start(point.faults[n] if n < len(point.faults) else None)
                await self.until_finished(server)
                nursery.cancel_scope.cancel()
        finally:
            await self.procs.kill_all()
        outcome.acked = self.check_end(game)
        outcome.finished = outcome.digest_matched = True
        self.check_logs(fired=outcome.kills)
        return outcome

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

    async def play(self, nursery: trio.Nursery, game: Game, extra_create_after: int | None = None) -> None:
        """Create ``game``'s table, take its seats one by one and play them to the end in ``nursery``, each
        request sent again after a drop; with ``extra_create_after``, create another table once that many
        seats are taken."""
        self.games.append(game)
        created = await self._retry("organiser", "create", game=game.game, seats=SEATS, seed=game.seed,
                                    time_scale=TIME_SCALE, options={**OPTIONS[game.game], **game.options})
        assert created["type"] == "created", created
        game.table = created["table"]
        for seat in range(SEATS):
            if seat == extra_create_after:
                other = await self._retry("organiser", "create", game=game.game, seats=SEATS, seed=1)
                assert other["type"] == "created", other
            # the same key on every try: a join durable before a kill, its reply lost, gets its seat back
            joined = await self._retry(f"p{seat}", "join", table=game.table, name=f"p{seat}",
                                       key=f"campaign-{game.table}-seat-{seat}-{game.seed:08d}")
            assert joined["type"] == "joined" and joined["seat"] == seat, joined
            game.players.append(Seat(seat, joined["token"], game.game))
        for player in game.players:
            nursery.start_soon(keep_seat, player, game.table, self.port, game.online)

    async def until_finished(self, server: trio.Process) -> None:
        with trio.fail_after(KILL_S):
            while not self.games or not all(g.finished and self.exported(g) for g in self.games):
                assert server.returncode is None, "the server died unasked"
                await trio.sleep(0.05)

    def exported(self, game: Game) -> bool:
        """The finished game's replay file is written (behind the log, once its last records are durable)."""
        return (self.data / "replays" / f"{game.table}.journal").exists()

    # ------------------------------------------------------------------ the checks

    def journal(self, game: Game) -> list[dict[str, Any]]:
        live = read_table(str(self.data / "log"), game.table)
        if live:
            return live
        path = self.data / "replays" / f"{game.table}.journal"
        assert path.exists(), f"no journal for {game.table}"
        return read_journal(str(path)).records

    def check_acked(self, game: Game) -> int:
        """The journal on disk holds every command acknowledged so far; the number of its records."""
        records = self.journal(game)
        for player in game.players:
            assert _subsequence(player.acked, commands_by_seat(records, player.seat)), \
                f"{game.table} seat {player.seat}: an acknowledged command is not in the journal"
        return len(records)

    def check_hit(self, game: Game, fault: str) -> str:
        """A kill at an event left that event on disk (its step was durable); the table's state and phase."""
        crashed = Match.replay(self.journal(game))
        spec = parse(fault)
        if spec.point == "event":
            seen = sum(event.type == spec.arg for _, _, event in crashed.history)
            assert seen >= spec.n, f"{fault}: {seen} such events on disk"
        phase = crashed.engine.phase if crashed.engine is not None else None
        return f"{crashed.state}/{phase}" if phase else crashed.state

    def check_end(self, game: Game) -> int:
        """The game finished, its journal became its replay file holding every acknowledged command, and
        replaying it gives the result (digest included) its seats were told. The number of those commands."""
        replay = self.data / "replays" / f"{game.table}.journal"
        assert replay.exists(), f"{game.table}: the finished game's journal did not become its replay file"
        records = read_journal(str(replay)).records
        result = game.players[0].result
        assert all(p.result == result for p in game.players), "the seats were told different results"
        assert result is not None and records[-1]["k"] == "end"
        assert records[-1]["result"] == result, (records[-1]["result"], result)
        for player in game.players:
            assert _subsequence(player.acked, commands_by_seat(records, player.seat)), player.seat
        lines: list[str] = []
        assert replay_file(str(replay), quiet=True, out=lines.append) == 0, lines
        assert Match.replay(records).result["digest"] == result["digest"]  # type: ignore[index]
        return sum(len(p.acked) for p in game.players)

    def check_logs(self, fired: int) -> None:
        """Nothing set aside as corrupt, no traceback, and the faults fired as many times as meant."""
        assert not os.listdir(self.data / "corrupt"), os.listdir(self.data / "corrupt")
        err = (self.tmp / "serve.err").read_text()
        assert "Traceback" not in err, err[-3000:]
        assert err.count("fault_fired") == fired
