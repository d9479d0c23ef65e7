"""A table over the WebSocket protocol: whole games, turn deadlines, auctions across turns and the opening, and
hidden information checked frame by frame. Game time runs on trio's autojump clock, the bytes in memory
(tests/memory_net.py)."""

from __future__ import annotations

from typing import Any

import trio

from clients.players import make_player
from clients.sdk import BotSession, request_once
from tests.server.conftest import BANK, SHORT, RawClient, connect, create_table, join, play_seat, step, url, walk
from server.core import session as session_module
from server.runtime import table as table_module
from tests.toy_game import toy  # noqa: F401 (the fixture)

RESULT_KEYS = {"game", "seed", "players", "over", "reason", "winners", "scores", "dollars", "company_dollars", "turns",
               "actions", "rejected", "game_ms", "digest", "seeded"}  # these tables' seeds are chosen: seeded


async def act(client: RawClient, table: str, **command: Any) -> dict[str, Any]:
    return await client.request("act", table=table, command=command)


async def start_turns(table: str, *clients: RawClient) -> None:
    """Every seat declares ready: the opening ends and seat 0's first turn starts."""
    for client in clients:
        assert (await act(client, table, type="ready"))["type"] == "ok"


# ------------------------------------------------------------------ whole games


async def test_full_game_of_reference_bots_ends_with_same_result_for_every_bot(server, autojump_clock):
    created = await request_once(url(server), "create", game="parsimonia", seats=3, seed=11, options=SHORT)
    table = created["table"]
    kinds = ["greedy"] * 3  # (random players act on every view: under the autojump clock time would stand still)
    bots = [BotSession(url(server), make_player(k, 100 + s), name=f"{k}-{s}", table=table)
            for s, k in enumerate(kinds)]
    with trio.fail_after(10 * 60):
        async with trio.open_nursery() as nursery:
            for bot in bots:
                nursery.start_soon(bot.run)
                await bot.joined.wait()  # one at a time: seat i is bots[i]
    assert [b.seat.seat for b in bots] == [0, 1, 2]
    result = bots[0].result
    assert result is not None and set(result) == RESULT_KEYS
    assert all(b.result == result for b in bots)
    assert result["over"] and result["players"] == 3 and result["seed"] == 11
    assert sum(result["dollars"]) + result["company_dollars"] == BANK
    assert result["reason"] == "clock" and result["game_ms"] == SHORT["game_ms"]
    assert result["actions"] > 0 and result["turns"] > 0
    t = server.lobby.tables[table]
    assert t.state == "over" and t.match.history[-1][2].type == "result"
    assert result["digest"] == t.match.engine.digest()
    # every bot saw the last event
    assert all(b.seat.last_seq == t.match.seq for b in bots)


async def test_a_live_table_keeps_only_the_events_a_resume_may_replay(server, autojump_clock, monkeypatch):
    """A table that plays on and on (here: 30 bids in a long opening) does not keep its whole history in
    memory, and a seat that resumes within the replay limit still gets every event it missed."""
    for module in (session_module, table_module):
        monkeypatch.setattr(module, "REPLAY_LIMIT", 5)
    options = {"opening_ms": 3_600_000, "game_ms": 7_200_000, "quiet_ms": 600_000}
    async with connect(server, "seller") as seller, connect(server, "bidder") as bidder:
        table = await create_table(seller, 2, seed=5, options=options)
        await join(seller, table, views=False)
        token = (await join(bidder, table, views=False))["token"]
        view = await seller.request("view", table=table)
        (me,) = [p for p in view["view"]["players"] if p["seat"] == 0]
        assert (await act(seller, table, type="auction", card=me["resources"][0][0], start_price=0))["type"] == "ok"
        auction = (await seller.event("auction_opened"))["event"]["auction"]["id"]
        for amount in range(1, 31):
            assert (await act(bidder, table, type="bid", auction=auction, amount=amount))["type"] == "ok"
        match = server.lobby.tables[table].match
        assert match.seq > 30 and len(match.history) <= 10 and match.history[-1][0] == match.seq
        async with connect(server, "bidder again") as again:
            resumed = await again.request("resume", table=table, token=token, last_seq=match.seq - 4, views=False)
            assert resumed["type"] == "resumed"
            missed = [await again.next() for _ in range(4)]
    assert [m["seq"] for m in missed] == list(range(match.seq - 3, match.seq + 1))
    assert [m["event"]["amount"] for m in missed] == [27, 28, 29, 30]


# ------------------------------------------------------------------ turn deadlines


async def test_turn_times_out_at_its_deadline_and_next_turn_starts(server, autojump_clock):
    async with connect(server, "a") as a, connect(server, "b") as b:
        table = await create_table(a, 2, seed=3, options=SHORT)
        await join(a, table)
        await join(b, table)
        await start_turns(table, a, b)
        started = await a.event("turn_started", seat=0, turn=1)
        deadline = started["event"]["deadline"]
        assert deadline == started["event"]["at"] + SHORT["turn_ms"]
        drawn = await a.event("card_drawn", seat=0)
        # seat 0 never acts: at the deadline its turn ends by timeout, the undecided card is placed for it
        ended = await a.event("turn_ended", seat=0, turn=1)
        assert ended["event"]["reason"] == "timeout"
        assert ended["event"]["at"] == deadline and ended["time"] == deadline
        card = drawn["event"]["card"]
        between = [m["event"] for m in a.events() if drawn["seq"] < m["seq"] < ended["seq"]]
        placed = [(e["type"], e.get("tourist", e.get("card")), e.get("reason"), e.get("paid")) for e in between]
        assert placed in ([("card_placed", card, "no_sale", 0)], [("card_aside", card, None, None)]), placed
        nxt = await a.event("turn_started")
        assert nxt["seq"] > ended["seq"]
        assert nxt["event"]["seat"] == 1 and nxt["event"]["turn"] == 2
        assert nxt["event"]["at"] == deadline and nxt["event"]["deadline"] == deadline + SHORT["turn_ms"]
        # the other seat saw the same
        b_ended = await b.event("turn_ended", seat=0, turn=1)
        assert b_ended == ended
        # and seat 1's own turn times out in its turn, too
        ended2 = await b.event("turn_ended", seat=1, turn=2)
        assert ended2["event"]["reason"] == "timeout" and ended2["time"] == deadline + SHORT["turn_ms"]


async def test_next_turn_waits_for_auction_open_when_turn_ended(server, autojump_clock):
    options = {**SHORT, "turn_ms": 2000, "quiet_ms": 5000}
    async with connect(server, "a") as a, connect(server, "b") as b:
        table = await create_table(a, 2, seed=3, options=options)
        await join(a, table)
        await join(b, table)
        await start_turns(table, a, b)
        started = await a.event("turn_started", seat=0, turn=1)
        assert (await act(a, table, type="auction_drawn", start_price=0))["type"] == "ok"
        opened = await a.event("auction_opened")
        auction = opened["event"]["auction"]
        assert auction["seller"] == 0 and auction["closes_at"] == opened["time"] + 5000
        ended = await a.event("turn_ended", seat=0, turn=1)
        assert ended["event"]["reason"] == "timeout" and ended["time"] == started["event"]["deadline"]
        after_end = await a.view(lambda m: m["seq"] == ended["seq"])
        assert after_end["view"]["turn_over"] and after_end["view"]["phase"] == "turns"
        assert [x["id"] for x in after_end["view"]["auctions"]] == [auction["id"]]
        closed = await a.event("auction_closed", auction=auction["id"])
        assert closed["event"]["reason"] == "quiet" and closed["event"]["outcome"] == "no_sale"
        assert closed["time"] == auction["closes_at"]
        nxt = await a.event("turn_started")
        assert nxt["event"]["seat"] == 1 and nxt["event"]["turn"] == 2
        assert nxt["seq"] > closed["seq"] > ended["seq"] and nxt["time"] == closed["time"]
        assert not [m for m in a.events() if ended["seq"] < m["seq"] < closed["seq"]
                    and m["event"]["type"] == "turn_started"]


async def test_seller_closes_auction_after_own_turn_timed_out_and_next_turn_starts_then(server, autojump_clock):
    options = {**SHORT, "turn_ms": 2000, "quiet_ms": 50_000}
    async with connect(server, "a") as a, connect(server, "b") as b:
        table = await create_table(a, 2, seed=3, options=options)
        await join(a, table)
        await join(b, table)
        await start_turns(table, a, b)
        await a.event("turn_started", seat=0, turn=1)
        await act(a, table, type="auction_drawn", start_price=0)
        auction = (await a.event("auction_opened"))["event"]["auction"]
        ended = await a.event("turn_ended", seat=0, turn=1)
        await trio.sleep(1)
        reply = await act(a, table, type="close", auction=auction["id"], winner=None)
        assert reply["type"] == "ok"
        closed = await a.event("auction_closed", auction=auction["id"])
        assert closed["event"]["reason"] == "seller" and closed["time"] == ended["time"] + 1000
        nxt = await a.event("turn_started", seat=1, turn=2)
        assert nxt["time"] == closed["time"]


# ------------------------------------------------------------------ the opening


async def test_opening_runs_several_auctions_from_different_players_at_once(server, autojump_clock):
    options = {**SHORT, "opening_ms": 10_000, "quiet_ms": 3000}
    async with connect(server, "a") as a, connect(server, "b") as b, connect(server, "c") as c:
        table = await create_table(a, 3, seed=9, options=options)
        for client in (a, b, c):
            await join(client, table)
        view = (await a.request("view", table=table))["view"]
        card_a = view["players"][0]["resources"][0][0]
        card_b = view["players"][1]["resources"][0][0]
        assert (await act(a, table, type="auction", card=card_a, start_price=5))["type"] == "ok"
        assert (await act(b, table, type="auction", card=card_b, start_price=5))["type"] == "ok"
        first = await c.event("auction_opened")
        second = await c.event("auction_opened")
        id_a, id_b = first["event"]["auction"]["id"], second["event"]["auction"]["id"]
        assert first["event"]["auction"]["seller"] == 0 and second["event"]["auction"]["seller"] == 1
        assert first["event"]["auction"]["lot"] == [card_a] and second["event"]["auction"]["lot"] == [card_b]
        both = await c.view(lambda m: m["seq"] == second["seq"])
        assert both["view"]["phase"] == "opening"
        assert sorted(x["id"] for x in both["view"]["auctions"]) == sorted([id_a, id_b])
        # bids cross: seat 1 and seat 2 in seat 0's auction, seat 0 in seat 1's
        assert (await act(b, table, type="bid", auction=id_a, amount=10))["type"] == "ok"
        assert (await act(c, table, type="bid", auction=id_a, amount=11))["type"] == "ok"
        assert (await act(a, table, type="bid", auction=id_b, amount=12))["type"] == "ok"
        # the seller picks a bidder other than the highest: seat 1 pays its own bid
        assert (await act(a, table, type="close", auction=id_a, winner=1))["type"] == "ok"
        closed_a = await c.event("auction_closed", auction=id_a)
        assert closed_a["event"]["outcome"] == "sold" and closed_a["event"]["winner"] == 1
        assert closed_a["event"]["price"] == 10 and closed_a["event"]["reason"] == "seller"
        closed_b = await c.event("auction_closed", auction=id_b)
        (bid_b,) = [m for m in c.events() if m["event"]["type"] == "bid" and m["event"]["auction"] == id_b]
        assert bid_b["event"]["seat"] == 0 and bid_b["event"]["closes_at"] == bid_b["time"] + 3000
        assert closed_b["event"]["reason"] == "quiet" and closed_b["event"]["winner"] == 0
        assert closed_b["event"]["price"] == 12 and closed_b["time"] == bid_b["event"]["closes_at"]
        # both were open together: two openings before any close
        kinds = [m["event"]["type"] for m in c.events() if m["event"]["type"] in ("auction_opened", "auction_closed")]
        assert kinds[:2] == ["auction_opened", "auction_opened"]
        final = (await c.request("view", table=table))["view"]
        assert [p["dollars"] for p in final["players"]] == [1000 + 10 - 12, 1000 - 10 + 12, 1000]
        assert card_a in [r for r, _ in final["players"][1]["resources"]]
        assert card_b in [r for r, _ in final["players"][0]["resources"]]
        assert final["auctions"] == [] and final["phase"] == "opening"
        # the opening ends by its deadline and the first turn follows
        ended = await c.event("opening_ended")
        game_started = c.events()[0]
        assert game_started["event"]["type"] == "game_started"
        assert ended["event"]["reason"] == "deadline" and ended["time"] == game_started["time"] + 10_000
        await c.event("turn_started", seat=0, turn=1)


# ------------------------------------------------------------------ hidden information

# the public part of a view (the same for every seat); the card table and the configuration come once, in
# joined / watching, as the static part
VIEW_KEYS = {"game", "now", "phase", "turn", "current", "step", "turn_over", "deadlines", "players", "drawn",
             "company", "deck_count", "aside", "bought", "auctions", "seats", "seat_count", "paused", "seeded"}
EVENT_FIELDS = {
    "game_started": {"seats"},
    "opening_ended": {"reason", "open_auctions"},
    "turn_started": {"seat", "turn", "deadline"},
    "deck_reshuffled": {"count"},
    "card_drawn": {"seat", "card"},
    "no_card_drawn": {"seat"},
    "auction_opened": {"auction"},
    "bid": {"auction", "seat", "amount", "closes_at"},
    "auction_closed": {"auction", "outcome", "winner", "price", "reason"},
    "card_placed": {"seat", "resource", "tourist", "reason", "profit", "paid"},
    "card_aside": {"seat", "card"},
    "tourists_cleared": {"seat", "cards"},
    "turn_ended": {"seat", "turn", "reason"},
    "gift": {"seat", "to", "amount"},
    "ready": {"seat"},
    "end_vote": {"seat", "agree"},
    "player_quit": {"seat", "dollars", "cards"},
    "placement_owed": {"seat", "card", "deadline"},
    "bid_lapsed": {"auction", "seat", "amount", "min_bid"},
    "game_ended": {"reason", "dollars", "winners"},
    "result": {"result"},
}
TURN_ONLY = {"pair", "auction_drawn", "place", "company_auction", "end_turn"}


def _int_lists(frame: dict[str, Any]) -> list[list[int]]:
    return [v for v in walk(frame) if isinstance(v, list) and v and all(type(x) is int for x in v)]


def _contains_run(haystack: list[int], needle: tuple[int, ...]) -> bool:
    n = len(needle)
    return any(tuple(haystack[i:i + n]) == needle for i in range(len(haystack) - n + 1))


async def test_hidden_information_frame_by_frame_for_spectator_and_every_seat(server, autojump_clock):
    seats = 3
    options = {**SHORT, "game_ms": 25_000}
    decks: set[tuple[int, ...]] = set()  # every order of the tourists deck seen at a sampled point

    def sample(table_id: str) -> None:
        engine = server.lobby.tables[table_id].match.engine
        if engine is not None:
            decks.add(tuple(engine.deck))

    async with connect(server, "spectator") as spectator:
        table = await create_table(spectator, seats, seed=77, options=options)
        assert (await spectator.request("watch", table=table))["type"] == "watching"
        waiting = await spectator.view()
        assert waiting["seat"] is None and waiting["legal"] == [] and waiting["seq"] == 0
        async with connect(server, "s0") as c0, connect(server, "s1") as c1, connect(server, "s2") as c2:
            clients = [c0, c1, c2]
            tokens = []
            for s, client in enumerate(clients):
                joined = await join(client, table)
                assert joined["seat"] == s
                tokens.append(joined["token"])
            results: list[dict[str, Any]] = []

            async def seat_task(s: int) -> None:
                results.append(await play_seat(clients[s], s, make_player("greedy", s)))

            async def sampler() -> None:
                while True:  # sample the engine after every frame the spectator gets
                    msg = await spectator.next()
                    sample(table)
                    if msg["type"] == "event" and msg["event"].get("type") == "result":
                        return

            with trio.fail_after(10 * 60):
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(sampler)
                    for s in range(seats):
                        nursery.start_soon(seat_task, s)
            sample(table)

    t = server.lobby.tables[table]
    engine = t.match.engine
    assert t.state == "over" and len(results) == seats and all(r == results[0] for r in results)
    final_deck, final_aside = tuple(engine.deck), tuple(engine.aside)
    secret_orders = {d for d in decks | {final_deck} if len(d) >= 6}
    assert secret_orders, "the sampled decks are too short to check"
    history = t.match.seq
    streams = {"spectator": (spectator, None)} | {f"seat {s}": (clients[s], s) for s in range(seats)}
    reference_events = [m["event"] for m in spectator.events()]
    for name, (client, seat) in streams.items():
        others = [tok for i, tok in enumerate(tokens) if i != seat]
        last_seq = 0
        seqs = []
        for frame in client.frames:
            # 1. no tourists-deck order, as a whole list or inside one, forwards or backwards
            for values in _int_lists(frame):
                for order in secret_orders:
                    if len(values) >= len(order):
                        assert not _contains_run(values, order), f"{name}: deck order in {frame['type']}"
                        assert not _contains_run(values, order[::-1]), f"{name}: deck order in {frame['type']}"
            # 2. no other seat's token anywhere
            strings = [v for v in walk(frame) if isinstance(v, str)]
            assert not any(tok in s for tok in others for s in strings), f"{name} got another seat's token"
            if frame["type"] == "event":
                seqs.append(frame["seq"])
                last_seq = frame["seq"]
                event = frame["event"]
                assert event.get("type") in EVENT_FIELDS, f"{name}: an event SPEC.md does not list: {event}"
                assert set(event) == {"type", "at"} | EVENT_FIELDS[event["type"]], event
            elif frame["type"] == "view":
                assert frame["seq"] == last_seq, f"{name}: a view's seq is not the last event's"
                view, legal = frame["view"], frame["legal"]
                if view.get("phase") == "waiting":
                    assert frame["seat"] == seat and legal == []
                    continue
                # 3. views carry the deck's size only, and the aside pile sorted (its order is hidden)
                assert set(view) - {"result"} == VIEW_KEYS, set(view) ^ VIEW_KEYS
                assert isinstance(view["deck_count"], int) and view["aside"] == sorted(view["aside"])
                assert frame["seat"] == seat and "seat" not in view
                assert frame.get("private", {}) == {}  # nothing in Parsimonia is a seat's alone
                if seat is None:
                    assert legal == [], f"{name}: a spectator view with legal commands"
                elif {c["type"] for c in legal} & TURN_ONLY:
                    assert view["current"] == seat and view["phase"] == "turns"
        # 4. seq: every number from 1, no gap, none twice
        assert seqs == list(range(1, history + 1)), f"{name}: seq gaps or repeats"
        # 5. every Parsimonia event is public: every connection got the same events
        assert [m["event"] for m in client.events()] == reference_events
        # 6. the last view of every connection shows the final sizes, not the cards
        last_view = [m for m in client.frames if m["type"] == "view"][-1]["view"]
        assert last_view["deck_count"] == len(final_deck) and last_view["aside"] == sorted(final_aside)
    # 7. only a seat's own connection ever got its token, in `joined`
    for s, client in enumerate(clients):
        holders = [m for m in client.frames if any(v == tokens[s] for v in walk(m))]
        assert [m["type"] for m in holders] == ["joined"]


async def test_a_failing_clock_stops_its_table_not_the_server(server, autojump_clock):
    """An engine bug at a deadline ends that table with reason server_error; other tables go on."""
    async with connect(server, "a") as a, connect(server, "b") as b, connect(server, "c") as c:
        broken = await create_table(a, 2, options=SHORT)
        healthy = await create_table(c, 2, options=SHORT)
        await join(a, broken)
        await join(b, broken)
        engine = server.lobby.tables[broken].match.engine

        def explode(now_ms: int) -> list:
            raise RuntimeError("a bug in the game's clock")

        engine.advance = explode
        ended = await a.event("result")
        assert ended["event"]["result"]["reason"] == "server_error"
        assert ended["event"]["result"]["winners"] == []
        await join(c, healthy)
        async with connect(server, "d") as d:
            await join(d, healthy)
            assert (await c.event("turn_started"))["table"] == healthy  # the healthy table's clocks still run


async def test_a_log_that_cannot_be_written_stops_the_tables_not_the_server(start_server, tmp_path):
    from server.runtime.app import Instruments

    class DiskFull:  # through the log's seam (server.storage.journal.LogInstrument): every write fails once it is full
        full = False

        def before_write(self, path: str, fd: int, data: bytes, tables: list[str]) -> None:
            if self.full:
                raise OSError(28, "No space left on device")

        def before_sync(self, path: str, tables: list[str]) -> None:
            pass

    disk = DiskFull()
    srv = await start_server(data_dir=str(tmp_path), instruments=Instruments(log=disk))
    async with connect(srv, "a") as a, connect(srv, "b") as b:
        failing = await create_table(a, 2, options=SHORT)
        disk.full = True
        await a.send({"type": "join", "id": 7, "table": failing, "name": "a"})
        notice = await a.expect(lambda m: m["type"] == "error" and m.get("table") == failing)
        assert notice["code"] == "internal" and "No space left on device" in notice["message"]
        assert not [m for m in a.frames if m.get("re") == 7]  # the join was never acknowledged
        refused = await b.request("create", game="parsimonia", seats=2, options=SHORT)  # answered, not left hanging
        assert refused["type"] == "error" and "No space left on device" in refused["message"]
        assert (await b.request("ping"))["type"] == "pong"


async def test_a_request_reaching_a_table_whose_task_is_closing_is_still_answered(toy):
    from protocol.codec import decode
    from server.storage.clock import ServerClock
    from server.core.match import Match
    from server.core.session import Session
    from server.runtime.table import Request, Table

    class Inbox:
        def __init__(self) -> None:
            self.frames: list[dict] = []

        def send(self, frame: bytes) -> None:
            self.frames.append(decode(frame))

    match = Session(Match("t1", toy.NAME, 2, seed=1))
    players = [Inbox(), Inbox()]
    for i, sub in enumerate(players):
        step(match, 0, "join", sub, {"table": "t1", "name": f"p{i}"})
    step(match, 10_000)  # the choice times out: the game is over
    table = Table(match.match, ServerClock())
    await table.run()  # the game is over: the task sends the last views and closes at once
    late = Inbox()
    table.submit(Request("watch", late, {"table": "t1", "id": 3}))  # type: ignore[arg-type]
    assert [f["type"] for f in late.frames] == ["watching", "view"]
    assert late.frames[1]["view"]["result"]["reason"] == "revealed"


async def test_an_instrument_may_end_a_table_at_a_step_and_act_once_it_is_durable_before_its_frames_leave(
        autojump_clock):
    """The seam the fault campaign's kills go through (server.runtime.table.TableInstrument): told each part of each
    step, the instrument ends the table at the step that started the game; nothing after it is handled, and its
    callable runs once the step's records are durable, before the step's answers leave."""
    from protocol.codec import decode
    from server.storage.clock import ServerClock
    from server.core.match import Match
    from server.runtime.table import Request, Table

    class Inbox:
        def __init__(self) -> None:
            self.frames: list[dict] = []

        def send(self, frame: bytes) -> None:
            self.frames.append(decode(frame))

    class Journal:  # the records are durable when the test says so
        def __init__(self) -> None:
            self.records: list[dict] = []
            self.waiting: list[Any] = []

        def append(self, record: dict) -> None:
            self.records.append(record)

        def after_durable(self, callback: Any, on_failure: Any = None) -> None:
            self.waiting.append(callback)

    players, journal = [Inbox(), Inbox()], Journal()

    class EndsAtTheStart:
        def __init__(self) -> None:
            self.steps: list[tuple[str | None, list[str]]] = []
            self.answers_out_when_ran: list[int] = []

        def created(self, table: str) -> None:
            raise AssertionError("a table made by hand is not created by the lobby")

        def stepped(self, table: str, request: str | None, events: list[str]) -> Any:
            self.steps.append((request, events))
            if "game_started" in events:
                return lambda: self.answers_out_when_ran.append(len(players[1].frames))
            return None

    instrument = EndsAtTheStart()
    table = Table(Match("t1", "parsimonia", 2, seed=1, options=SHORT), ServerClock(), journal,  # type: ignore[arg-type]
                  instrument=instrument)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(table.run)
        for i, sub in enumerate(players):
            table.submit(Request("join", sub, {"table": "t1", "name": f"p{i}", "id": 1}))  # type: ignore[arg-type]
        assert instrument.steps == [(None, []), ("join", []), (None, []), ("join", ["game_started"])]
        durable = len(journal.records)
        table.submit(Request("act", players[0], {"table": "t1", "id": 2,  # type: ignore[arg-type]
                                                 "command": {"type": "give", "to": 1, "amount": 1}}))
        await trio.sleep(3600)  # the game's deadlines pass: the table takes no step
        assert len(journal.records) == durable and len(instrument.steps) == 4
        assert not players[1].frames  # the last join's answer waits for its records, behind the callable
        for callback in journal.waiting:  # the records are durable
            callback()
        assert instrument.answers_out_when_ran == [0] and players[1].frames[0]["type"] == "joined"
        assert not [f for f in players[0].frames if f.get("re") == 2]  # the act after the end is never answered
        nursery.cancel_scope.cancel()


async def test_a_request_in_the_instant_after_a_deadline_is_not_dated_before_it(autojump_clock):
    """Found by the fault campaign's fuzzer: a deadline is handled at its own ms even when the clock reads the
    ms before (trio's float time, rounded down, at the very instant it fires); a request in that same instant
    was then dated a ms earlier than the engine's time, which the engine refuses, stopping the game."""
    from protocol.codec import decode
    from server.storage.clock import ServerClock
    from server.core.match import Match
    from server.runtime.table import Request, Table

    class ReadsTheMsBefore(ServerClock):
        def now_ms(self) -> int:
            return super().now_ms() - 1

    class Inbox:
        def __init__(self) -> None:
            self.frames: list[dict] = []

        def send(self, frame: bytes) -> None:
            self.frames.append(decode(frame))

    table = Table(Match("t1", "parsimonia", 2, seed=1, options=SHORT), ReadsTheMsBefore(start_ms=1000))
    players = [Inbox(), Inbox()]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(table.run)
        for i, sub in enumerate(players):
            table.submit(Request("join", sub, {"table": "t1", "name": f"p{i}", "id": 1}))  # type: ignore[arg-type]
        await trio.testing.wait_all_tasks_blocked()
        deadline = table.match.next_deadline()
        assert table.match.state == "running" and deadline is not None
        await trio.sleep_until(table.clock.to_trio(deadline))
        await trio.testing.wait_all_tasks_blocked()  # the table has handled the deadline, at its own ms
        assert table.match.engine.now == deadline and table.clock.now_ms() == deadline - 1
        table.submit(Request("act", players[0], {"table": "t1", "id": 2,  # type: ignore[arg-type]
                                                 "command": {"type": "give", "to": 1, "amount": 1}}))
        await trio.testing.wait_all_tasks_blocked()
        assert table.match.failure is None and table.match.state == "running"
        assert any(f.get("re") == 2 and f["type"] == "ok" for f in players[0].frames), players[0].frames
        nursery.cancel_scope.cancel()


async def test_a_watcher_leaving_is_forgotten_with_no_step_of_the_table_and_a_seat_leaving_takes_one(
        server, autojump_clock, monkeypatch):
    """200 stalled watchers dropped together were 200 steps of their table in one pass of the scheduler."""
    async with connect(server, "seller") as seller:
        table = await create_table(seller, 2)
        await join(seller, table)
        steps: list[str | None] = []
        step = table_module.Table._step

        def counted(self: Any, now: int, request: Any) -> None:
            steps.append(None if request is None else request.kind)
            step(self, now, request)

        monkeypatch.setattr(table_module.Table, "_step", counted)
        async with connect(server, "watcher") as watcher:
            assert (await watcher.request("watch", table=table))["type"] == "watching"
        with trio.fail_after(10):
            while server.lobby.tables[table].session.spectators:
                await trio.sleep(0.01)
        assert "detach" not in steps
    with trio.fail_after(10):
        while "detach" not in steps:  # the seat's connection went: a step (its seat shows disconnected)
            await trio.sleep(0.01)


async def test_a_waiting_seat_whose_connection_went_is_freed_after_a_grace_unless_resumed(server, autojump_clock):
    """A bot killed before its table filled left its seat taken with nobody there, and the next players joined a
    table with a dead seat (issue 38)."""
    grace_s = session_module.SEAT_GRACE_MS / 1000
    async with connect(server, "host") as host:
        table = await create_table(host, 3)

        async def taken() -> list[tuple[int, str, bool]]:
            view = (await host.request("view", table=table))["view"]
            return [(s["seat"], s["name"], s["connected"]) for s in view["seats"]]

        assert (await host.request("watch", table=table))["type"] == "watching"
        async with connect(server, "killed") as killed:
            await join(killed, table)
            await killed.drop()  # killed: no leave, no close handshake
        async with connect(server, "dropped") as dropped:
            token = (await join(dropped, table))["token"]
            await dropped.drop()
        await trio.sleep(grace_s / 2)
        assert await taken() == [(0, "killed", False), (1, "dropped", False)]  # within the grace: kept
        async with connect(server, "back") as back:
            resumed = await back.request("resume", table=table, token=token, last_seq=0)
            assert resumed["type"] == "resumed" and resumed["seat"] == 1
            await trio.sleep(grace_s)
            assert await taken() == [(1, "dropped", True)]  # the killed bot's seat is free, the resumed one kept
            async with connect(server, "p0") as p0, connect(server, "p2") as p2:
                assert (await join(p0, table))["seat"] == 0 and (await join(p2, table))["seat"] == 2
                started = await host.view(lambda m: m["view"]["phase"] != "waiting")
                assert [s["connected"] for s in started["view"]["seats"]] == [True, True, True]
    assert server.lobby.tables[table].state == "running"
