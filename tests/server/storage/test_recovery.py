"""Recovery in process: a server with a data directory is cancelled mid-game (a crash: its nursery goes,
nothing is flushed beyond what was durable) and a new server on the same directory brings the table back
as it was: the same state, history, sequence numbers and seat tokens, with every acknowledged command,
and with server time continuing from where it stopped so that no clock ran while the server was down."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from clients.players import make_player
from server.runtime.app import Server, ServerConfig
from server.storage.journal import read_journal, read_table
from server.cli.replay import replay_file
from server.storage.datadir import DataDir
from server.core.match import Match
from protocol.views import player_view
from tests.server.conftest import BANK, RawClient, connect, create_table, join, static_of


Crash = Callable[[], Awaitable[None]]


async def launch(nursery: trio.Nursery, data_dir: str, **config: Any) -> tuple[Server, Crash]:
    """A server on ``data_dir``, and a function that kills it the way a crash would."""
    scope = trio.CancelScope()
    stopped = trio.Event()

    async def run(task_status: trio.TaskStatus[Server]) -> None:
        try:
            with scope:
                await Server(ServerConfig(host="127.0.0.1", port=0, data_dir=data_dir, **config)).run(
                    task_status=task_status)
        finally:
            stopped.set()

    server = await nursery.start(run)

    async def crash() -> None:
        scope.cancel()
        await stopped.wait()

    return server, crash


async def act(client: RawClient, table: str, **command: Any) -> dict[str, Any]:
    return await client.request("act", table=table, command=command)


def wire_history(match: Match) -> list[tuple[int, int, dict[str, Any]]]:
    return [(seq, at, event.to_wire()) for seq, at, event in match.history]


# ------------------------------------------------------------------ one table, stopped mid-auction


async def test_recovered_table_is_the_same_and_its_clocks_lost_no_time(nursery, tmp_path, mock_clock):
    """Time is trio's mock clock, standing still but for the test's jumps: the server is down for an
    hour of it."""
    options = {"opening_ms": 60_000, "turn_ms": 120_000, "quiet_ms": 30_000, "game_ms": 3_600_000}
    server, crash = await launch(nursery, str(tmp_path), sync="fsync")
    async with connect(server, "ada") as ada, connect(server, "bob") as bob:
        table = await create_table(ada, 2, seed=11, options=options)
        tokens = [(await join(ada, table))["token"], (await join(bob, table))["token"]]
        mock_clock.jump(1.0)
        assert (await act(ada, table, type="ready"))["type"] == "ok"
        assert (await act(bob, table, type="ready"))["type"] == "ok"
        turn = await bob.event("turn_started", seat=0, turn=1)
        await ada.event("card_drawn", seat=0)
        mock_clock.jump(2.0)
        assert (await act(ada, table, type="auction_drawn", start_price=5))["type"] == "ok"
        auction = (await bob.event("auction_opened"))["event"]["auction"]
        mock_clock.jump(0.25)
        assert (await act(bob, table, type="bid", auction=auction["id"], amount=7))["type"] == "ok"
        bid = await ada.event("bid", seat=1)
        await ada.view(lambda m: m["seq"] == bid["seq"])
        await bob.view(lambda m: m["seq"] == bid["seq"])

        live = server.lobby.tables[table].match
        heartbeat = os.path.join(tmp_path, "clock")
        mock_clock.jump(1.0)  # the heartbeat catches up with the clock (nothing else is due)
        now = server.lobby.clock.now_ms()
        for _ in range(10_000):  # (the mock clock stands still: a bounded loop instead of a timeout)
            with open(heartbeat) as f:
                if f.read() == str(now):
                    break
            await trio.sleep(0)
        else:
            raise AssertionError("the heartbeat did not catch up")
        before = {
            "digest": live.engine.digest(), "history": wire_history(live), "tokens": [s.token for s in live.seats],
            "names": [s.name for s in live.seats], "view": live.engine.view(None), "actions": live.actions,
        }
        assert before["tokens"] == tokens and len(before["history"]) == bid["seq"]
        deadlines = before["view"]["deadlines"]
        assert deadlines["turn"] == turn["event"]["deadline"] > now
        closes_at = bid["event"]["closes_at"]
        assert closes_at == before["view"]["auctions"][0]["closes_at"] > now

        await crash()
        for client in (ada, bob):
            await client.wait_closed()
        seen_by_ada = [m for m in ada.frames if m["type"] == "event"]

    # every acknowledged command is in the journal, in order, and nothing else
    records = read_table(os.path.join(tmp_path, "log"), table)
    assert commands_by_seat(records, 0) == [{"type": "ready"}, {"type": "auction_drawn", "start_price": 5}]
    assert commands_by_seat(records, 1) == [{"type": "ready"}, {"type": "bid", "auction": auction["id"], "amount": 7}]

    mock_clock.jump(3600)  # an hour of downtime
    server2, _ = await launch(nursery, str(tmp_path), sync="fsync")
    assert server2.lobby.clock.now_ms() == now  # server time continues from the heartbeat
    t = server2.lobby.tables[table]
    assert t.state == "running" and t.match.engine.digest() == before["digest"]
    assert wire_history(t.match) == before["history"]
    assert [s.token for s in t.match.seats] == before["tokens"] and [s.name for s in t.match.seats] == before["names"]
    assert t.match.engine.view(None) == before["view"]  # deadlines included: the same server times as before
    assert t.match.actions == before["actions"]

    async with connect(server2, "ada again") as ada2, connect(server2, "bob again") as bob2:
        assert ada2.frames[0]["server_time"] == now
        # the old token takes the seat back, and the events after last_seq arrive again, unchanged
        last_seq = 3
        rid = ada2.new_id()
        await ada2.send({"type": "resume", "id": rid, "table": table, "token": tokens[0], "last_seq": last_seq})
        resumed = await ada2.answer(rid)
        assert {k: resumed[k] for k in ("type", "re", "table", "seat", "game")} == {
            "type": "resumed", "re": rid, "table": table, "seat": 0, "game": "parsimonia"}
        missed = [await ada2.next() for _ in range(len(seen_by_ada) - last_seq)]
        assert missed == seen_by_ada[last_seq:]
        view = await ada2.next()
        assert view["type"] == "view" and view["seq"] == bid["seq"] and view["view"]["deadlines"] == deadlines
        assert view["time"] == now
        resumed = await bob2.request("resume", table=table, token=tokens[1], last_seq=bid["seq"])
        assert resumed["type"] == "resumed" and resumed["seat"] == 1
        assert (await bob2.view())["seq"] == bid["seq"]  # nothing was missed

        # the auction still has all of its quiet time, and closes when it would have without the crash
        assert (await act(bob2, table, type="give", to=0, amount=1))["type"] == "ok"
        mock_clock.jump((closes_at - server2.lobby.clock.now_ms()) / 1000)
        closed = await ada2.event("auction_closed", auction=auction["id"])
        assert closed["time"] == closes_at and closed["event"]["reason"] == "quiet"
        assert closed["seq"] == bid["seq"] + 2
        # and the turn ends at its deadline from before the crash
        mock_clock.jump((deadlines["turn"] - server2.lobby.clock.now_ms()) / 1000)
        ended = await bob2.event("turn_ended", seat=0, turn=1)
        assert ended["event"]["reason"] == "timeout" and ended["time"] == deadlines["turn"]
        seqs = [m["seq"] for m in bob2.events()]
        assert seqs[: ended["seq"] - bid["seq"]] == list(range(bid["seq"] + 1, ended["seq"] + 1))


# ------------------------------------------------------------------ a crash in the middle of play


class Player:
    """A seat played by a reference player over raw connections, keeping every acknowledged command.

    As SPEC.md's ``act`` says a client may: every command carries a key of its own, and the one whose answer a
    drop lost is sent again, with its key, on the next connection, so every command gets one answer."""

    def __init__(self, seat: int, token: str, kind: str = "greedy") -> None:
        self.seat = seat
        self.token = token
        self.player = make_player(kind, 40 + seat)
        self.acked: list[dict[str, Any]] = []  # commands answered `ok`, in order
        self.oks: list[dict[str, Any]] = []  # their answers
        self.events: list[dict[str, Any]] = []  # every event frame received, over every connection
        self.result: dict[str, Any] | None = None
        self.unanswered: dict[str, Any] | None = None  # the `act` sent and not yet answered
        self.sent = 0  # commands sent (not counting a command sent again)

    @property
    def last_seq(self) -> int:
        return self.events[-1]["seq"] if self.events else 0

    async def play(self, client: RawClient) -> None:
        """Act on every fresh view until the result, or until the connection is gone."""
        in_flight: int | None = None
        if self.unanswered is not None:
            in_flight = client.new_id()
            try:
                await client.send({**self.unanswered, "id": in_flight})
            except AssertionError:
                return
        while self.result is None:
            try:
                msg = await client.next()
            except AssertionError:
                if client.closed is not None:
                    return
                raise
            if msg["type"] == "event":
                assert msg["seq"] == self.last_seq + 1, "a gap in the events"
                self.events.append(msg)
                if msg["event"].get("type") == "result":
                    self.result = msg["event"]["result"]
            elif msg["type"] == "view" and msg["seat"] == self.seat and msg["seq"] >= self.last_seq \
                    and in_flight is None:
                if not msg["legal"]:
                    continue
                view = player_view(static_of(client), msg["view"], msg.get("private"), self.seat)
                command = self.player.act(view, msg["legal"])
                if command is not None:
                    self.sent += 1
                    in_flight = client.new_id()
                    self.unanswered = {"type": "act", "table": msg["table"], "command": command,
                                       "key": f"s{self.seat}-{self.sent}"}
                    try:
                        await client.send({**self.unanswered, "id": in_flight})
                    except AssertionError:  # the server went away as we sent: the crash
                        return
            elif in_flight is not None and msg.get("re") == in_flight:
                assert self.unanswered is not None
                if msg["type"] == "ok":
                    self.acked.append(self.unanswered["command"])
                    self.oks.append(msg)
                in_flight = self.unanswered = None


def opened_seen(players: list[Player]) -> set[int]:
    """Auctions whose opening a player has seen: their records are durable."""
    return {m["event"]["auction"]["id"] for p in players for m in p.events
            if m["event"].get("type") == "auction_opened"}


def commands_by_seat(records: list[dict[str, Any]], seat: int) -> list[dict[str, Any]]:
    return [r["command"] for r in records if r["k"] == "cmd" and r["seat"] == seat]


async def test_acknowledged_commands_survive_a_crash_mid_play_and_the_game_finishes(nursery, tmp_path):
    """Real time, a table 1000 times faster than real, fsync'ed journal; the crash comes while the bots
    are busy and an auction is open."""
    options = {"game_ms": 3_000_000}  # 3 s of play at this time scale
    data = DataDir(str(tmp_path))
    data.close()  # its paths only: the server under test holds the directory
    server, crash = await launch(nursery, str(tmp_path), sync="fsync")
    players: list[Player] = []
    async with connect(server, "p0") as c0, connect(server, "p1") as c1, connect(server, "p2") as c2:
        clients = [c0, c1, c2]
        table = await create_table(c0, 3, seed=23, time_scale=1000, options=options)
        for seat, client in enumerate(clients):
            players.append(Player(seat, (await join(client, table))["token"]))
        live = server.lobby.tables[table].match
        with trio.fail_after(20):
            async with trio.open_nursery() as bots:
                for player, client in zip(players, clients):
                    bots.start_soon(player.play, client)
                while not (live.engine.turn >= 3 and sum(len(p.acked) for p in players) >= 30
                           and set(live.engine.auctions) & opened_seen(players)):
                    await trio.sleep(0.001)
                await crash()  # the bots' connections close, and their tasks end
        assert all(p.result is None for p in players)

    # what the kill left on disk: every acknowledged command, and every event a client saw
    at_crash = read_table(data.log_path, table)
    for player in players:
        journaled = commands_by_seat(at_crash, player.seat)
        assert journaled[: len(player.acked)] == player.acked
        assert len(journaled) - len(player.acked) <= 1  # at most the command in flight, durable but unanswered
    crashed = Match.replay(at_crash)
    assert crashed.engine.auctions  # auctions were open at the crash
    history = wire_history(crashed)
    for player in players:
        assert [(m["seq"], m["time"], m["event"]) for m in player.events] == history[: len(player.events)]

    server2, _ = await launch(nursery, str(tmp_path), sync="fsync")
    recovered = server2.lobby.tables[table].match
    # the table runs on real time: by now it may have fired a deadline that fell due while the server was down; it
    # holds its latest events only (server.core.session.HISTORY_BYTES), the same as those played
    kept = wire_history(recovered)
    first = kept[0][0]
    assert first <= history[-1][0]
    assert kept[: history[-1][0] - first + 1] == [h for h in history if h[0] >= first]
    if recovered.seq == crashed.seq:
        assert recovered.engine.digest() == crashed.engine.digest()
    async with connect(server2, "p0") as c0, connect(server2, "p1") as c1, connect(server2, "p2") as c2:
        with trio.fail_after(30):
            async with trio.open_nursery() as bots:
                for player, client in zip(players, (c0, c1, c2)):
                    reply = await client.request("resume", table=table, token=player.token,
                                                 last_seq=player.last_seq)
                    assert reply["type"] == "resumed" and reply["seat"] == player.seat
                    bots.start_soon(player.play, client)

    result = players[0].result
    assert result is not None and all(p.result == result for p in players)
    assert sum(result["dollars"]) + result["company_dollars"] == BANK
    replay_path = os.path.join(data.replays, f"{table}.journal")
    with trio.fail_after(10):  # written behind the log, once the last records are durable
        while not os.path.exists(replay_path):
            await trio.sleep(0.01)
    records = read_journal(replay_path).records
    final = wire_history(Match.replay(records))  # the finished table keeps only its result in memory
    for player in players:  # each seat saw every event once, in order, across both servers
        seen = [(m["seq"], m["time"], m["event"]) for m in player.events]
        assert seen[:-1] == final[:-1]  # the result itself counts refusals, which leave no record to replay
        assert seen[-1][2]["result"] == records[-1]["result"] and len(seen) == len(final)
    for player in players:
        journaled = commands_by_seat(records, player.seat)
        assert _subsequence(player.acked, journaled) and len(journaled) - len(player.acked) <= 1
    assert records[-1]["result"] == result
    lines: list[str] = []
    assert replay_file(replay_path, quiet=True, out=lines.append) == 0
    assert lines[-1] == "replay reproduces the recorded result"


def _subsequence(short: list[Any], long: list[Any]) -> bool:
    it = iter(long)
    return all(any(x == y for y in it) for x in short)
