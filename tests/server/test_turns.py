"""Turns (server/turns.py): one at a time, given out fairly between addresses however many connections each has;
and, end to end, one address's many flooding connections get no more turns than another's one."""

from __future__ import annotations

import contextlib

import trio

from server.turns import Turns
from tests.server.conftest import connect


async def take_turns(turns: Turns, address: str, log: list[str], busy: list[int], cost: float = 1.0) -> None:
    """Turn after turn, each logged, checking that no other turn is under way meanwhile."""
    while True:
        await turns.acquire(address)
        assert not busy
        busy.append(1)
        log.append(address)
        await trio.lowlevel.cancel_shielded_checkpoint()  # a turn under way while the others ask
        busy.pop()
        turns.release(address, cost)


async def test_busy_addresses_share_the_turns_equally_however_many_connections_each_has():
    turns, log, busy = Turns(), [], []
    async with trio.open_nursery() as nursery:
        for _ in range(16):
            nursery.start_soon(take_turns, turns, "crowd", log, busy)
        nursery.start_soon(take_turns, turns, "single", log, busy)
        while len(log) < 400:
            await trio.sleep(0)
        nursery.cancel_scope.cancel()
    window = log[17:400]  # once all have asked
    assert abs(window.count("crowd") - window.count("single")) <= 2, window


async def test_an_address_quiet_until_now_goes_next_before_the_busy_ones():
    turns, log, busy = Turns(), [], []
    async with trio.open_nursery() as nursery:
        for address in ("a", "a", "b", "c"):
            nursery.start_soon(take_turns, turns, address, log, busy)
        while len(log) < 100:
            await trio.sleep(0)
        asked = len(log)
        nursery.start_soon(take_turns, turns, "quiet", log, busy, 0.0)  # costs nothing: asks again and again
        while len(log) < asked + 30:
            await trio.sleep(0)
        nursery.cancel_scope.cancel()
    first = log.index("quiet")
    assert first <= asked + 2, log[asked:]  # at most the turn under way and the one already granted before it
    # what costs nothing is not starved, nor does it starve the others (each busy address still gets its turns)
    assert {"a", "b", "c"} <= set(log[first:first + 30])


async def test_a_waiter_that_gives_up_leaves_the_turns_to_the_others_and_nothing_behind():
    turns = Turns()
    await turns.acquire("holder")
    with trio.move_on_after(1) as waited:
        await turns.acquire("impatient")
    assert waited.cancelled_caught and turns.waiting == 0
    got = []

    async def next_one() -> None:
        await turns.acquire("next")
        got.append("next")
        turns.release("next", 0.0)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(next_one)
        await trio.sleep(0.1)
        assert got == []  # still the holder's turn
        turns.release("holder", 0.5)
    assert got == ["next"] and turns.waiting == 0
    await turns.acquire("impatient")  # a free turn is taken at once
    turns.release("impatient", 0.0)


async def test_one_address_flooding_from_many_connections_gets_no_more_turns_than_one_flooding_from_one(
        server, autojump_clock, memory_net, monkeypatch):
    crowd = 8
    turns, log = server.turns, []
    release = turns.release

    def logged(address: str, cost: float) -> None:
        log.append(address)
        release(address, cost)

    monkeypatch.setattr(turns, "release", logged)
    async with contextlib.AsyncExitStack() as stack:
        memory_net.address = "10.0.0.2"
        many = [await stack.enter_async_context(connect(server, f"crowd {n}")) for n in range(crowd)]
        memory_net.address = "10.0.0.3"
        one = await stack.enter_async_context(connect(server, "single"))
        await turns.acquire("the test")  # the server handles nothing until every ping is waiting
        # each connection under its own burst (400) and its address's (4,000): the crowd sends 1,200, the single 380
        pings = {client: 150 for client in many} | {one: 380}
        async with trio.open_nursery() as nursery:
            for client, count in pings.items():
                for n in range(count):
                    nursery.start_soon(client.send, {"type": "ping", "id": n + 1})
        await trio.sleep(1)
        log.clear()  # the hellos' turns
        release("the test", 0.0)
        with trio.fail_after(600):
            while any(len(client.frames) < count + 1 for client, count in pings.items()):
                await trio.sleep(0.01)
    assert all(m["type"] == "pong" for client in pings for m in client.frames[1:])
    # the single needs about 95 turns (4 pings a turn), the crowd 300. Fair: half the first 150 turns each (as many
    # for one connection as for eight; the first few go to the crowd, whose hellos came first); by connection, a ninth
    window = log[:150]
    assert window.count("10.0.0.3") >= 50, window
