"""A Kupcy table recovered with sealed offers pending: the offers made before the crash are kept, and still
sealed; the operation goes on and reveals them with the rest."""

from __future__ import annotations

from tests.server.conftest import connect, join
from tests.server.storage.test_recovery import act, launch, wire_history

SEED = 1  # the first player, seat 1, draws goods at once: a trading operation opens after the split
OPTIONS = {"decide_ms": 60_000, "bid_ms": 60_000, "stow_ms": 60_000}


async def test_sealed_offers_made_before_a_crash_are_kept_and_still_sealed(nursery, tmp_path, mock_clock):
    server, crash = await launch(nursery, str(tmp_path), sync="fsync")
    async with connect(server, "a") as a, connect(server, "b") as b, connect(server, "c") as c:
        table = (await a.request("create", game="kupcy", seats=3, seed=SEED, options=OPTIONS))["table"]
        clients = [a, b, c]
        tokens = [(await join(client, table))["token"] for client in clients]
        live = server.lobby.tables[table]
        for seat, client in enumerate(clients):
            mock_clock.jump(0.1)
            hand = sorted(live.match.engine.ships[seat])
            assert (await act(client, table, type="split", warehouse=hand[:2]))["type"] == "ok"
        opened = (await c.event("trade_opened"))["event"]
        assert opened["seller"] == 1 and opened["seats"] == [0, 2]
        offer = live.match.engine.offerable(0, opened["goods"])[0]
        mock_clock.jump(0.5)
        assert (await act(a, table, type="offer", card=offer))["type"] == "ok"
        made = await c.event("offer_made", seat=0)
        assert made["event"] == {"type": "offer_made", "at": made["event"]["at"], "seat": 0}
        await c.view(lambda m: m["seq"] == made["seq"])
        before = {"digest": live.match.engine.digest(), "history": wire_history(live.match),
                  "public": live.match.engine.public_view(), "private0": live.match.engine.private_view(0)}
        await crash()

    mock_clock.jump(600)
    server2, _ = await launch(nursery, str(tmp_path), sync="fsync")
    t = server2.lobby.tables[table]
    assert t.match.engine.digest() == before["digest"] and wire_history(t.match) == before["history"]
    market = t.match.engine.market
    assert market is not None and market.sealed.choices == {0: offer} and market.sealed.pending == [2]
    assert t.match.engine.public_view()["market"]["chosen"] == [0]
    assert t.match.engine.private_view(0)["sealed"] == offer == before["private0"]["sealed"]

    async with connect(server2, "a again") as a2, connect(server2, "c again") as c2, \
            connect(server2, "fan") as fan:
        assert (await a2.request("resume", table=table, token=tokens[0], last_seq=0))["type"] == "resumed"
        assert (await c2.request("resume", table=table, token=tokens[2], last_seq=0))["type"] == "resumed"
        assert (await fan.request("watch", table=table))["type"] == "watching"
        fan_view = await fan.view()
        c_view = await c2.view()
        for frames in (fan.frames, c2.frames):
            for m in frames:
                if m["type"] == "event" and m["event"].get("type") == "offer_made":
                    assert "choice" not in m["event"]
        assert offer not in fan_view["view"]["players"][0]["warehouse"] and "private" not in fan_view
        assert c_view["private"]["sealed"] is None and fan_view["view"]["market"]["offers"] == []
        resumed_a = [m for m in a2.frames if m["type"] == "event" and m["event"].get("type") == "offer_made"]
        assert resumed_a and resumed_a[-1]["event"]["choice"] == offer  # its own offer, again, to its owner

        mock_clock.jump(0.5)
        other = t.match.engine.offerable(2, opened["goods"])[0]
        assert (await act(c2, table, type="offer", card=other))["type"] == "ok"
        revealed = (await fan.event("offers_revealed"))["event"]
        assert revealed["offers"] == [[0, offer], [2, other]] and revealed["defaulted"] == []
