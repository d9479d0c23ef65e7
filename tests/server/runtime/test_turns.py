"""Turns (server/runtime/turns.py): one at a time, given out fairly between addresses however many connections each has;
and, end to end, one address's many flooding connections get no more turns than another's one."""

from __future__ import annotations

import contextlib

import trio

from server.runtime.turns import BUSY_WINDOW_S, FREE_EVENTS, Turns
from tests.server.conftest import connect


class Costs:
    """The CPU clock the turns are charged by, advanced by what each turn says it cost."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def take_turns(turns: Turns, costs: Costs, address: str, log: list[str], cost: float = 1.0) -> None:
    """Turn after turn, each logged, each costing ``cost``."""

    def handle() -> None:
        log.append(address)
        costs.now += cost

    while True:
        await turns.turn(address, handle)


def fair_turns() -> tuple[Turns, Costs]:
    costs = Costs()
    return Turns(cpu_time=costs), costs


async def test_busy_addresses_share_the_turns_equally_however_many_connections_each_has():
    (turns, costs), log = fair_turns(), []
    async with trio.open_nursery() as nursery:
        for _ in range(16):
            nursery.start_soon(take_turns, turns, costs, "crowd", log)
        nursery.start_soon(take_turns, turns, costs, "single", log)
        while len(log) < 400:
            await trio.sleep(0)
        nursery.cancel_scope.cancel()
    window = log[17:400]  # once all have asked
    assert abs(window.count("crowd") - window.count("single")) <= 2, window


async def test_an_address_quiet_until_now_goes_next_before_the_busy_ones():
    (turns, costs), log = fair_turns(), []
    async with trio.open_nursery() as nursery:
        for address in ("a", "a", "b", "c"):
            nursery.start_soon(take_turns, turns, costs, address, log)
        while len(log) < 100:
            await trio.sleep(0)
        asked = len(log)
        nursery.start_soon(take_turns, turns, costs, "quiet", log, 0.0)  # costs nothing: asks again and again
        while len(log) < asked + 30:
            await trio.sleep(0)
        nursery.cancel_scope.cancel()
    first = log.index("quiet")
    assert first <= asked + 4, log[asked:]  # at most the turns of the scheduler pass under way
    # what costs nothing is not starved, nor does it starve the others (each busy address still gets its turns)
    assert {"a", "b", "c"} <= set(log[first:first + 30])


async def test_while_reading_is_not_busy_a_turn_runs_at_once_and_once_it_is_turns_wait_for_rounds(monkeypatch):
    costs, passes = Costs(), []
    turns = Turns(cpu_time=costs)
    yielded = trio.lowlevel.cancel_shielded_checkpoint

    async def counted() -> None:  # a round begins with a pass of the scheduler, so that the others ask
        passes.append(1)
        await yielded()

    monkeypatch.setattr(trio.lowlevel, "cancel_shielded_checkpoint", counted)
    assert await turns.turn("a", lambda: "cheap") == "cheap" and passes == []  # at once

    def costly() -> str:  # reading took more than half the server's time: busy
        costs.now += 1.0
        return "costly"

    assert await turns.turn("a", costly) == "costly" and passes == []
    assert await turns.turn("b", lambda: "cheap") == "cheap" and passes == [1]  # a round, now


async def test_the_server_busy_outside_the_turns_takes_them_in_rounds_too(monkeypatch):
    """A flood of handshakes or HTTP requests does most of its work outside the turns: the thread's time says
    the server is busy, not only the turns' own."""
    costs, passes = Costs(), []
    turns = Turns(cpu_time=costs)
    yielded = trio.lowlevel.cancel_shielded_checkpoint

    async def counted() -> None:
        passes.append(1)
        await yielded()

    monkeypatch.setattr(trio.lowlevel, "cancel_shielded_checkpoint", counted)
    assert await turns.turn("a", lambda: "cheap") == "cheap" and passes == []  # the first window begins
    costs.now += 1.0  # the thread's time, spent outside any turn (accepting, handshakes, sending)
    # over the short window's CPU time (AT_ONCE_S), and found busy as it ends: a round, then rounds
    assert await turns.turn("a", lambda: "cheap") == "cheap" and passes == [1]
    assert await turns.turn("b", lambda: "cheap") == "cheap" and passes == [1, 1]


async def test_work_outside_the_turns_is_charged_to_a_flooding_address_and_free_for_one_connecting_now_and_then():
    (turns, costs), log = fair_turns(), []
    await turns.turn("x", lambda: None)  # the first window begins
    for _ in range(40):  # a flood's handshakes: 2 ms each of the thread's time, outside any turn
        turns.debit("flood")
        costs.now += 0.002
    await trio.sleep(BUSY_WINDOW_S)
    await turns.turn("x", lambda: None)  # the window ends: the server was busy, a piece of work cost 2 ms
    for _ in range(200):
        turns.debit("flood")  # its free pieces used up: 400 ms owed, less its share of the time since
    for _ in range(FREE_EVENTS):
        turns.debit("table")  # a table's seats connecting: free
    async with trio.open_nursery() as nursery:  # both ask in the same pass: the first to run takes them in order
        nursery.start_soon(turns.turn, "flood", lambda: log.append("flood"))
        nursery.start_soon(turns.turn, "table", lambda: log.append("table"))
    assert log == ["table", "flood"]  # owing nothing, the table goes first; and the flood's turn is not lost


async def test_turns_are_run_one_at_a_time_in_one_task_each_asker_getting_its_own_result_or_exception():
    (turns, _), running, log = fair_turns(), [], []

    def handle(n: int) -> int:
        assert not running
        running.append(trio.lowlevel.current_task())
        log.append(n)
        running.pop()
        if n == 3:
            raise ValueError("three")
        return n * 10

    results: dict[int, object] = {}

    async def ask(n: int) -> None:
        try:
            results[n] = await turns.turn(f"address {n % 2}", lambda: handle(n))
        except ValueError as exc:
            results[n] = exc

    async with trio.open_nursery() as nursery:
        for n in range(6):
            nursery.start_soon(ask, n)
    assert sorted(log) == list(range(6)) and turns.waiting == 0
    assert {n: r for n, r in results.items() if n != 3} == {0: 0, 1: 10, 2: 20, 4: 40, 5: 50}
    assert str(results[3]) == "three"


async def test_an_asker_that_gives_up_before_its_turn_leaves_nothing_behind_and_one_under_way_is_finished():
    (turns, _), log = fair_turns(), []
    names = ("a", "b", "c")
    scopes = {name: trio.CancelScope() for name in names}
    gave_up: list[str] = []

    def handle(name: str) -> str:
        if not log:  # the first turn run: the others wait; one of them gives up, and this one is cancelled too
            gave_up.append(next(other for other in names if other != name))
            scopes[gave_up[0]].cancel()
            scopes[name].cancel()  # its own turn is under way: finished, and the cancel comes after
        log.append(name)
        return name

    async def ask(name: str) -> None:
        with scopes[name]:
            assert await turns.turn(name, lambda: handle(name)) == name
            log.append(f"{name} got it")
            await trio.sleep(0)  # a cancel is delivered here, after its result
            log.append(f"{name} went on")

    async with trio.open_nursery() as nursery:
        for name in names:
            nursery.start_soon(ask, name)
    first, (other,) = log[0], set(names) - {log[0], *gave_up}
    assert sorted(log) == sorted([first, other, f"{first} got it", f"{other} got it", f"{other} went on"]), log
    assert turns.waiting == 0
    assert await turns.turn("later", lambda: 7) == 7  # a free turn is taken at once


async def test_one_address_flooding_from_many_connections_gets_no_more_turns_than_one_flooding_from_one(
        server, autojump_clock, memory_net, monkeypatch):
    crowd = 8
    turns, log = server.turns, []
    turn = turns.turn

    async def logged(address: str, handle):  # noqa: ANN001, ANN202
        return await turn(address, lambda: (log.append(address), handle())[1])

    monkeypatch.setattr(turns, "turn", logged)
    async with contextlib.AsyncExitStack() as stack:
        memory_net.address = "10.0.0.2"
        many = [await stack.enter_async_context(connect(server, f"crowd {n}")) for n in range(crowd)]
        memory_net.address = "10.0.0.3"
        one = await stack.enter_async_context(connect(server, "single"))
        turns._running = True  # as if a task ran the turns: the server handles nothing until every ping waits
        # each connection under its own burst (400) and its address's (4,000): the crowd sends 1,200, the single 380
        pings = {client: 150 for client in many} | {one: 380}
        async with trio.open_nursery() as nursery:
            for client, count in pings.items():
                for n in range(count):
                    nursery.start_soon(client.send, {"type": "ping", "id": n + 1})
        await trio.sleep(1)
        log.clear()  # the hellos' turns
        turns._hand_over()  # the first waiting turn's connection runs them
        with trio.fail_after(600):
            while any(len(client.frames) < count + 1 for client, count in pings.items()):
                await trio.sleep(0.01)
    assert all(m["type"] == "pong" for client in pings for m in client.frames[1:])
    # the single needs about 95 turns (4 pings a turn), the crowd 300. Fair: half the first 150 turns each (as many
    # for one connection as for eight; the first few go to the crowd, whose hellos came first); by connection, a ninth
    window = log[:150]
    assert window.count("10.0.0.3") >= 50, window


async def test_an_address_asking_now_and_then_goes_next_though_its_turns_cost_more_than_the_busy_ones():
    (turns, costs), log = fair_turns(), []
    async with trio.open_nursery() as nursery:
        for address in ("a", "a", "b", "c"):
            nursery.start_soon(take_turns, turns, costs, address, log, 0.0001)
        while len(log) < 100:
            await trio.sleep(0)

        def bid() -> None:  # a table's bid: five times a busy turn's cost
            log.append("table")
            costs.now += 0.0005

        for _ in range(3):  # each after a quiet while
            await trio.sleep(0.05)
            asked = len(log)
            await turns.turn("table", bid)
            assert log.index("table", asked) <= asked + 4, log[asked:]  # the pass under way's turns at most
        nursery.cancel_scope.cancel()
