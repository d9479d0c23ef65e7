"""Gift of Tulips through the whole runtime: SDK bots over the WebSocket protocol, every frame to every other seat and
to a spectator checked for what is hidden (the Secret Festival, a drawn card before it is played, the deck's
order), a crash and a recovery that plays on to the end, and ``simulate`` for 2 to 6 players."""

from __future__ import annotations

import os
from typing import Any

import pytest
import trio

from clients.players import make_player
from clients.sdk import BotSession, request_once
from server.runtime.app import Server, ServerConfig
from server.storage.journal import read_table
from server.core.match import Match
from server.cli.replay import replay_file
from server.cli.simulate import simulate, summary
from server.storage.datadir import DataDir
from protocol.views import player_view
from tests.server.conftest import RawClient, connect, join
from tests.server.storage.test_recovery import launch, wire_history
from tests.server.core.test_secrecy import leaks_order, windows

GAME = "gift-of-tulips"
FAST = {"choose_ms": 5000, "action_ms": 3000}


def event_cards(event: dict[str, Any]) -> set[int]:
    out = {event[k] for k in ("card", "choice") if k in event}
    return out | set(event["bouquets"]) if event.get("type") == "setup_revealed" else out


def view_cards(view: dict[str, Any]) -> set[int]:
    out = {c for p in view.get("players", []) for c in p.get("bouquet", [])}
    out |= set(view.get("festival", {}).get("cards", [])) | set(view.get("revealed", []))
    out |= set(view.get("hand", [])) | set(view.get("my_secret", []))
    return out | {view[k] for k in ("drawn", "chosen") if view.get(k) is not None}


def frame_cards(frame: dict[str, Any]) -> set[int]:
    if frame["type"] == "event":
        return event_cards(frame["event"])
    if frame["type"] == "view":
        return view_cards(frame["view"])
    return set()


async def test_sdk_bots_play_a_whole_game_over_websockets(autojump_clock, tmp_path):
    async with trio.open_nursery() as nursery:
        server = await nursery.start(Server(ServerConfig(port=0, data_dir=str(tmp_path), sync="write")).run)
        url = f"ws://127.0.0.1:{server.port}"
        created = await request_once(url, "create", game=GAME, seats=4, options=FAST)
        bots = [BotSession(url, make_player("greedy" if s % 2 else "random", s, GAME), name=f"b{s}",
                           table=created["table"], game=GAME) for s in range(4)]
        async with trio.open_nursery() as players:
            for bot in bots:
                players.start_soon(bot.run)
                await bot.joined.wait()
        nursery.cancel_scope.cancel()
    first = bots[0].result
    assert all(b.result == first for b in bots) and first["game"] == GAME and first["reason"] == "festival"
    assert first["scores"] == first["points"] and first["turns"] == 4 * 7 and sum(b.actions for b in bots) > 4


async def test_no_frame_shows_another_seats_secret_festival_a_drawn_card_or_the_deck_order(server, autojump_clock):
    async with connect(server, "fan") as fan, connect(server, "s0") as s0, connect(server, "s1") as s1, \
            connect(server, "s2") as s2:
        seats = [s0, s1, s2]
        reply = await s0.request("create", game=GAME, seats=3, seed=41, options=FAST)
        table = reply["table"]
        assert (await fan.request("watch", table=table))["type"] == "watching"
        players = [Seat(index, await join(client, table)) for index, client in enumerate(seats)]
        engine = server.lobby.tables[table].match.engine
        deck = list(engine.deck)
        secret_at_start = {c: s for s, h in enumerate(engine.hands) for c in h}  # a dealt pair is private too
        with trio.fail_after(3000):
            async with trio.open_nursery() as nursery:
                for player, client in zip(players, seats):
                    nursery.start_soon(player.play, client)
        await fan.event("result")
        history = server.lobby.tables[table].match.history
    results = [p.result for p in players]
    assert results[0] is not None and all(r == results[0] for r in results)
    final_secret = {c: s for c, s in engine.secret}
    assert final_secret
    drawn_by = {e.data["card"]: e.data["seat"] for _, _, e in history if e.type == "card_drawn"}
    played = {e.data["card"] for _, _, e in history if e.type in ("kept", "given", "added", "secret_revealed")}
    assert set(drawn_by) == played | {c for _, _, e in history if e.type == "hidden" for c in [e.data["card"]]}

    observers: list[tuple[int | None, RawClient]] = [(None, fan), *enumerate(seats)]
    for who, client in observers:
        assert client.frames, who
        shown: set[int] = set()
        for frame in client.frames:
            cards = frame_cards(frame)
            if frame["type"] == "event" and frame["event"].get("type") in ("kept", "given", "added",
                                                                          "secret_revealed", "setup_revealed"):
                shown |= cards  # played: public from here on
            hidden = {c for c, s in final_secret.items() if s != who}
            hidden |= {c for c, s in drawn_by.items() if s != who and c not in shown}
            hidden |= {c for c, s in secret_at_start.items() if s != who and c not in shown}
            assert not cards & hidden, (who, frame)
        assert not leaks_order(client.frames, windows(deck)), who
    assert leaks_order({"deck": deck}, windows(deck))  # the check sees the order where it is


class Seat:
    """A seat played by a reference player over a raw connection, as the SDK plays it (the view is the static,
    public and private parts together), keeping every event and counting acknowledged commands."""

    def __init__(self, seat: int, joined: dict[str, Any]) -> None:
        self.seat, self.token, self.static = seat, joined["token"], joined["static"]
        self.player = make_player("greedy" if seat % 2 else "random", 70 + seat, GAME)
        self.acked = 0
        self.events: list[dict[str, Any]] = []
        self.result: dict[str, Any] | None = None

    @property
    def last_seq(self) -> int:
        return self.events[-1]["seq"] if self.events else 0

    async def play(self, client: RawClient) -> None:
        in_flight: int | None = None
        while self.result is None:
            try:
                msg = await client.next()
            except AssertionError:
                if client.closed is not None:
                    return
                raise
            if msg["type"] == "event":
                self.events.append(msg)
                if msg["event"].get("type") == "result":
                    self.result = msg["event"]["result"]
            elif msg["type"] == "view" and msg["seat"] == self.seat and msg["seq"] >= self.last_seq \
                    and in_flight is None:
                view = player_view(self.static, msg["view"], msg.get("private"), self.seat)
                command = self.player.act(view, msg["legal"])
                if command is not None:
                    in_flight = client.new_id()
                    try:
                        await client.send({"type": "act", "id": in_flight, "table": msg["table"], "command": command})
                    except AssertionError:  # the server went away as we sent: the crash
                        return
            elif in_flight is not None and msg.get("re") == in_flight:
                self.acked += msg["type"] == "ok"
                in_flight = None


async def test_a_crash_mid_game_recovers_the_table_and_it_plays_on_to_the_end(nursery, tmp_path):
    data = DataDir(str(tmp_path))
    data.close()
    server, crash = await launch(nursery, str(tmp_path), sync="fsync")
    players: list[Seat] = []
    async with connect(server, "p0") as c0, connect(server, "p1") as c1, connect(server, "p2") as c2:
        clients = [c0, c1, c2]
        reply = await c0.request("create", game=GAME, seats=3, seed=29, time_scale=100)
        table = reply["table"]
        for index, client in enumerate(clients):
            players.append(Seat(index, await join(client, table)))
        live = server.lobby.tables[table]
        with trio.fail_after(60):
            async with trio.open_nursery() as bots:
                for player, client in zip(players, clients):
                    bots.start_soon(player.play, client)
                while not (live.match.engine.turn >= 4 and sum(p.acked for p in players) >= 8):
                    await trio.sleep(0.001)
                await crash()
        assert all(p.result is None for p in players)

    crashed = Match.replay(read_table(data.log_path, table))
    server2, _ = await launch(nursery, str(tmp_path), sync="fsync")
    recovered = server2.lobby.tables[table]
    assert recovered.match.engine.digest() == crashed.engine.digest() and wire_history(recovered.match) == wire_history(crashed)
    assert crashed.engine.phase == "turns" and not crashed.engine.over
    async with connect(server2, "p0") as c0, connect(server2, "p1") as c1, connect(server2, "p2") as c2:
        with trio.fail_after(120):
            async with trio.open_nursery() as bots:
                for player, client in zip(players, (c0, c1, c2)):
                    reply = await client.request("resume", table=table, token=player.token, last_seq=player.last_seq)
                    assert reply["type"] == "resumed" and reply["seat"] == player.seat
                    bots.start_soon(player.play, client)
    result = players[0].result
    assert result is not None and all(p.result == result for p in players) and result["reason"] == "festival"
    last = server2.lobby.tables[table].match.seq
    for player in players:  # each seat saw every event number once, in order, across both servers
        assert [m["seq"] for m in player.events] == list(range(1, last + 1))
    replay_path = os.path.join(data.replays, f"{table}.journal")
    with trio.fail_after(10):  # written behind the log, once the last records are durable
        while not os.path.exists(replay_path):
            await trio.sleep(0.01)
    lines: list[str] = []
    assert replay_file(replay_path, quiet=True, out=lines.append) == 0
    assert lines[-1] == "replay reproduces the recorded result"


@pytest.mark.parametrize("players", range(2, 7))
def test_simulate_plays_gift_of_tulips_deterministically(players):
    one = summary(simulate(players, seed=9, kind="mix", game=GAME))
    two = summary(simulate(players, seed=9, kind="mix", game=GAME))
    assert one == two and one["game"] == GAME and one["reason"] == "festival" and len(one["scores"]) == players
    assert one["turns"] == players * {2: 12, 3: 10, 4: 7, 5: 7, 6: 6}[players]
    assert summary(simulate(players, seed=10, kind="mix", game=GAME))["digest"] != one["digest"]
