"""Kupcy over the WebSocket protocol: SDK bots play a whole game (the autojump clock), and every frame that reaches
another seat or a spectator is checked for what must stay hidden: a sealed offer or split before its reveal,
another seat's ship, a drawn card kept out of sight, the deck's order."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import trio

from clients.players import make_player
from clients.sdk import BotSession
from server.runtime.app import Server, ServerConfig
from tests.server.conftest import connect
from tests.server.core.test_secrecy import leaks_order, windows

OPTIONS = {"decide_ms": 3000, "bid_ms": 2000, "stow_ms": 1500}
SEALED = {"split_chosen", "offer_made"}
PRIVATE_KEYS = {"ship", "sealed", "drawn"}


@dataclass
class RecordingBot(BotSession):
    """An SDK bot that keeps every push it receives."""

    frames: list[dict[str, Any]] = field(default_factory=list)

    async def _on_push(self, ws, msg: dict[str, Any]) -> None:
        self.frames.append(msg)
        await super()._on_push(ws, msg)


def check_frames(frames: list[dict[str, Any]], seat: int | None, kinds: dict[int, str]) -> int:
    """Everything a seat (None: a spectator) was sent hides what is not its own; returns the events checked."""
    checked = 0
    for msg in frames:
        if msg["type"] == "event" and msg["event"]:
            event = msg["event"]
            checked += 1
            mine = event.get("seat") == seat
            if event["type"] in SEALED and not mine:
                assert set(event) == {"type", "at", "seat"}, event
            if event["type"] == "card_drawn" and not mine and "card" in event:
                assert kinds[event["card"]] in ("goods", "charter"), event
            if event["type"] == "kept" and not mine and event["where"] == "ship":
                assert "card" not in event, event
        elif msg["type"] == "view":
            view, private = msg["view"], msg.get("private")
            assert not PRIVATE_KEYS & set(view), "a private key in the public part"
            for p in view.get("players", []):
                assert "ship" not in p
            assert (private is None) == (seat is None) and msg["seat"] == seat
            market = view.get("market")
            if market:
                assert all(rnd < market["round"] for _, _, rnd in market["offers"]), market
    return checked


async def test_sdk_bots_play_kupcy_to_the_end_and_no_frame_leaks_a_secret(autojump_clock, tmp_path):
    decks: list[list[int]] = []
    async with trio.open_nursery() as nursery:
        server = await nursery.start(Server(ServerConfig(port=0, data_dir=str(tmp_path), sync="write")).run)
        url = f"ws://127.0.0.1:{server.port}"
        async with connect(server, "fan") as fan:
            created = await fan.request("create", game="kupcy", seats=4, seed=77, options=OPTIONS)
            table = created["table"]
            assert (await fan.request("watch", table=table))["type"] == "watching"
            bots = [RecordingBot(url, make_player("greedy" if s % 2 == 0 else "random", s, "kupcy"), name=f"b{s}",
                                 table=table, game="kupcy") for s in range(4)]
            async with trio.open_nursery() as players:
                for bot in bots:
                    players.start_soon(bot.run)
                    await bot.joined.wait()
                await fan.event("game_started")
                engine = server.lobby.tables[table].match.engine
                decks.append(list(engine.deck))
                ships = [list(s) for s in engine.ships]
            decks.append(list(engine.deck))
            await fan.event("result")
            spectator_frames = fan.frames
        nursery.cancel_scope.cancel()

    results = [b.result for b in bots]
    assert all(r == results[0] for r in results) and results[0]["game"] == "kupcy"
    assert results[0]["reason"] == "last_round" and len(results[0]["scores"]) == 4
    kinds = {c[0]: c[1] for c in bots[0].static["cards"]}
    assert sum(check_frames(b.frames, s, kinds) for s, b in enumerate(bots)) > 100
    assert check_frames(spectator_frames, None, kinds) > 50

    # the checks can see what they look for: each bot's own sealed choices and ship reached it alone
    for s, bot in enumerate(bots):
        own = [m["event"] for m in bot.frames if m["type"] == "event" and m["event"].get("type") == "split_chosen"
               and m["event"].get("seat") == s]
        assert own and "choice" in own[0]
        first_view = next(m for m in bot.frames if m["type"] == "view" and m.get("private"))
        assert sorted(first_view["private"]["ship"]) == sorted(ships[s]) or first_view["view"]["phase"] != "split"
    # the deck's order shows up in no frame
    secret = set().union(*(windows(d) for d in decks if len(d) >= 4))
    assert secret and leaks_order({"deck": decks[0]}, secret)
    for frames in [spectator_frames] + [b.frames for b in bots]:
        assert not leaks_order(frames, secret)
