"""The normal table: two clients on a Parsimonia table, one putting a card up for auction, the other bidding
on it, and the bid-to-broadcast latency of every bid (from the bidder's send to the seller's receiving the
table's ``bid`` event). The floods measure it unloaded, then under each flood, and compare the p99s.

The table stays in its opening (an hour of it) with a quiet time of ten minutes, so nothing but the bids
moves it; after ``BIDS_PER_AUCTION`` bids the seller closes the auction unsold and puts the card up again,
so no money is spent and the run may last as long as it likes."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from types import SimpleNamespace

import trio

from tests.server.conftest import RawClient, connect

Frame = dict


async def arrives(client: RawClient, start: int, match: Callable[[Frame], bool]) -> Frame:
    """The first frame since ``client.frames[start]`` that ``match`` accepts, waiting for it: frames are
    searched, not consumed, so a reply and a broadcast may come in either order."""
    while True:
        for frame in client.frames[start:]:
            if match(frame):
                return frame
        start = len(client.frames)
        if client.closed is not None:
            raise AssertionError(f"{client.name}: connection closed ({client.closed.reason})")
        await client._arrived.wait()


def event(kind: str, **fields: object) -> Callable[[Frame], bool]:
    return lambda m: m["type"] == "event" and m["event"].get("type") == kind and \
        all(m["event"].get(k) == v for k, v in fields.items())


def answer(rid: int) -> Callable[[Frame], bool]:
    return lambda m: m.get("re") == rid

OPTIONS = {"opening_ms": 3_600_000, "game_ms": 7_200_000, "quiet_ms": 600_000}
BIDS_PER_AUCTION = 20
WAIT_S = 10.0  # one answer or broadcast may take this long before the normal table counts as stuck


def p50(samples: list[float]) -> float:
    """The median (nearest rank) of ``samples``."""
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(0.5 * len(ordered)) - 1)]


def p99(samples: list[float]) -> float:
    """The 99th percentile (nearest rank) of ``samples``."""
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(0.99 * len(ordered)) - 1)]


class NormalTable:
    def __init__(self, seller: RawClient, bidder: RawClient, table: str, hand: list[int]) -> None:
        self.seller = seller
        self.bidder = bidder
        self.table = table
        self.hand = hand

    async def _act(self, client: RawClient, command: dict, then: Callable[[Frame], bool]) -> Frame:
        """Send ``command``; once it is ``ok``, the seller's first frame since that ``then`` accepts."""
        start, mine, rid = len(self.seller.frames), len(client.frames), client.new_id()
        await client.send({"type": "act", "id": rid, "table": self.table, "command": command})
        reply = await arrives(client, mine, answer(rid))
        assert reply["type"] == "ok", reply
        return await arrives(self.seller, start, then)

    async def measure(self, seconds: float, every_ms: int = 20) -> list[float]:
        """Bid every ``every_ms`` for ``seconds``; each bid's latency in ms."""
        latencies: list[float] = []
        deadline = trio.current_time() + seconds
        while trio.current_time() < deadline:
            with trio.fail_after(WAIT_S):
                opened = await self._act(self.seller, {"type": "auction", "card": self.hand[0], "start_price": 0},
                                         event("auction_opened"))
            auction = opened["event"]["auction"]["id"]
            for amount in range(1, BIDS_PER_AUCTION + 1):
                with trio.fail_after(WAIT_S):
                    start, mine, rid = len(self.seller.frames), len(self.bidder.frames), self.bidder.new_id()
                    sent = trio.current_time()
                    await self.bidder.send({"type": "act", "id": rid, "table": self.table,
                                            "command": {"type": "bid", "auction": auction, "amount": amount}})
                    await arrives(self.seller, start, event("bid", auction=auction, amount=amount))
                    latencies.append((trio.current_time() - sent) * 1000)
                    assert (await arrives(self.bidder, mine, answer(rid)))["type"] == "ok"
                await trio.sleep(every_ms / 1000)
            with trio.fail_after(WAIT_S):
                await self._act(self.seller, {"type": "close", "auction": auction, "winner": None},
                                event("auction_closed", auction=auction))
        return latencies


@asynccontextmanager
async def normal_table(port: int) -> AsyncIterator[NormalTable]:
    """The table, created and joined by its two clients (events only, no view pushes)."""
    where = SimpleNamespace(port=port)
    async with connect(where, "seller") as seller, connect(where, "bidder") as bidder:
        created = await seller.request("create", game="parsimonia", seats=2, seed=5, options=OPTIONS)
        table = created["table"]
        for client in (seller, bidder):
            assert (await client.request("join", table=table, name=client.name, views=False))["type"] == "joined"
        view = await seller.request("view", table=table)
        (me,) = [p for p in view["view"]["players"] if p["seat"] == 0]
        yield NormalTable(seller, bidder, table, [r[0] for r in me["resources"]])
