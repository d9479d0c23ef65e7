"""Connections over the WebSocket protocol (in memory: tests/memory_net.py): dropping and resuming a seat, a
client too slow to read, and every kind of bad message, each answered with its documented error code while the
table plays on."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import msgpack
import pytest
import trio
from trio_websocket import ConnectionClosed

from clients.players import make_player
from protocol.codec import decode, encode
from protocol.messages import PROTOCOL_VERSION
from server.runtime.connection import time_round_trips
from server.transport.limits import ClientLimits
from tests.server.conftest import SHORT, RawClient, connect, create_table, join, play_seat
from tests.server.storage.test_crash import ROOT

POLICY_VIOLATION = 1008


async def act(client: RawClient, table: str, **command: Any) -> dict[str, Any]:
    return await client.request("act", table=table, command=command)


async def until(predicate, step: float = 0.01) -> None:
    with trio.fail_after(60):
        while not predicate():
            await trio.sleep(step)


# ------------------------------------------------------------------ drop and resume


async def test_dropped_bidder_resumes_mid_auction_gets_missed_events_and_wins(server, autojump_clock):
    options = {**SHORT, "opening_ms": 60_000, "quiet_ms": 5000}
    async with connect(server, "seller") as a, connect(server, "rival") as c:
        table = await create_table(a, 3, seed=21, options=options)
        await join(a, table)
        async with connect(server, "bidder") as b:
            token = (await join(b, table))["token"]
            await join(c, table)
            t = server.lobby.tables[table]
            card = t.match.engine.hands[0][0]
            assert (await act(a, table, type="auction", card=card, start_price=5))["type"] == "ok"
            auction = (await b.event("auction_opened"))["event"]["auction"]["id"]
            assert (await act(b, table, type="bid", auction=auction, amount=10))["type"] == "ok"
            bid = await b.event("bid", seat=1)
            last_seq = bid["seq"]
            await b.drop()  # no close handshake: the TCP connection just goes
            await until(lambda: t.match.seats[1].sub is None)
            await trio.sleep(1)  # so that the second auction's quiet time ends after the first's
        # while seat 1 is away the table goes on: another auction, a bid in it, a ready
        card2 = t.match.engine.hands[0][0]
        assert (await act(a, table, type="auction", card=card2, start_price=1))["type"] == "ok"
        opened2 = await c.expect(lambda m: m["type"] == "event" and m["event"]["type"] == "auction_opened"
                                 and m["event"]["auction"]["lot"] == [card2])
        auction2 = opened2["event"]["auction"]["id"]
        assert (await act(c, table, type="bid", auction=auction2, amount=3))["type"] == "ok"
        assert (await act(c, table, type="ready"))["type"] == "ok"
        await c.event("ready", seat=2)
        missed = [m for m in c.events() if m["seq"] > last_seq]
        assert [m["event"]["type"] for m in missed] == ["auction_opened", "bid", "ready"]
        assert auction in [x["id"] for x in t.match.engine.view(None)["auctions"]]  # still open

        async with connect(server, "bidder again") as b2:
            other_last = "y" if token.endswith("x") else "x"  # a random token may already end in "x"
            wrong = await b2.request("resume", table=table, token=token[:-1] + other_last, last_seq=last_seq)
            assert wrong["type"] == "error" and wrong["code"] == "bad_token" and wrong["table"] == table
            rid = b2.new_id()
            await b2.send({"type": "resume", "id": rid, "table": table, "token": token, "last_seq": last_seq})
            resumed = await b2.answer(rid)
            assert resumed == {"type": "resumed", "re": rid, "table": table, "seat": 1, "game": "parsimonia",
                               "static": decode(encode(t.match.static)), "last_seq": missed[-1]["seq"],
                               "replayed": len(missed)}
            replay = [await b2.next() for _ in missed]
            assert replay == missed  # the same frames, in order
            view = await b2.next()
            assert view["type"] == "view" and view["seat"] == 1 and view["seq"] == missed[-1]["seq"]
            assert "re" not in view
            open_now = {x["id"]: x for x in view["view"]["auctions"]}
            assert open_now[auction]["high_bidder"] == 1 and open_now[auction]["high"] == 10
            assert any(cmd["type"] == "bid" and cmd["auction"] == auction2 for cmd in view["legal"])
            # the resumed connection acts for the seat
            assert (await act(b2, table, type="bid", auction=auction2, amount=4))["type"] == "ok"
            # quiet time closes the first auction: the dropped bidder wins it and pays its bid
            closed = await b2.event("auction_closed", auction=auction)
            assert closed["event"]["outcome"] == "sold" and closed["event"]["winner"] == 1
            assert closed["event"]["price"] == 10 and closed["event"]["reason"] == "quiet"
            assert closed["time"] == bid["event"]["closes_at"]
            assert t.match.engine.dollars[1] == 1000 - 10 and card in t.match.engine.hands[1]
            assert b2.closed is None


async def test_resume_with_wrong_token_is_bad_token_and_connection_stays_open(server, autojump_clock):
    async with connect(server, "a") as a, connect(server, "other") as other:
        table = await create_table(a, 2, options=SHORT)
        token = (await join(a, table))["token"]
        for bad in ("nope", token.upper() if token.upper() != token else token + "x"):
            reply = await other.request("resume", table=table, token=bad, last_seq=0)
            assert reply["type"] == "error" and reply["code"] == "bad_token" and reply["table"] == table
        reply = await other.request("resume", table="t999", token=token, last_seq=0)
        assert reply["code"] == "no_such_table"
        assert (await other.request("ping"))["type"] == "pong"
        assert server.lobby.tables[table].match.seats[0].sub is not None  # the seat was not taken over


async def test_resume_takes_the_seat_from_a_connection_still_open(server, autojump_clock):
    async with connect(server, "a") as a, connect(server, "b") as b, connect(server, "a2") as a2:
        table = await create_table(a, 2, options=SHORT)
        token = (await join(a, table))["token"]
        await join(b, table)
        resumed = await a2.request("resume", table=table, token=token, last_seq=0)
        assert resumed["type"] == "resumed" and resumed["seat"] == 0
        replay = [await a2.next() for _ in range(1)]
        assert replay[0]["type"] == "event" and replay[0]["seq"] == 1
        old = await a.expect(lambda m: m["type"] == "error")
        assert old["code"] == "not_seated"
        assert (await act(a, table, type="ready"))["code"] == "not_seated"
        assert (await act(a2, table, type="ready"))["type"] == "ok"


# ------------------------------------------------------------------ a client that stops reading


async def test_stalled_client_dropped_while_table_plays_on(start_server, autojump_clock, memory_net):
    server = await start_server(queue_size=8)
    options = {**SHORT, "game_ms": 30_000}
    async with connect(server, "s0") as c0, connect(server, "s2") as c2:
        # what the connection holds for a reader that never reads is 4 KiB, not whatever a kernel's buffers grow to
        memory_net.capacity = 4096
        async with connect(server, "stalled", pump=False) as stalled:
            table = await create_table(c0, 3, seed=5, options=options)
            await join(c0, table)
            await stalled.send({"type": "join", "id": 1, "table": table, "name": "stalled"})
            joined = await stalled.receive()  # the last frame it reads while the game is on
            assert joined["type"] == "joined" and joined["seat"] == 1
            t = server.lobby.tables[table]
            dropped_at: list[int] = []
            results: list[dict[str, Any]] = []

            async def watch_drop() -> None:
                await until(lambda: t.match.seats[1].sub is None, step=0.05)
                dropped_at.append(t.match.seq)

            async def seat(client: RawClient, index: int) -> None:
                results.append(await play_seat(client, index, make_player("greedy", index)))

            with trio.fail_after(600):
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(watch_drop)
                    await join(c2, table)
                    nursery.start_soon(seat, c0, 0)
                    nursery.start_soon(seat, c2, 2)
            # the server let go of the stalled seat while the game went on, and the others played it to its end
            assert dropped_at and dropped_at[0] < t.match.seq - 20
            assert len(results) == 2 and results[0] == results[1] and t.state == "over"
            for client in (c0, c2):
                seqs = [m["seq"] for m in client.events()]
                assert seqs == list(range(1, t.match.seq + 1))
            assert t.match.engine.result()["turns"] > 3  # the stalled seat's turns timed out and play went on

            # the stalled client finds its connection closed after the frames that were already on their way
            read: list[dict[str, Any]] = []
            with pytest.raises(ConnectionClosed), trio.fail_after(5):
                while True:
                    read.append(await stalled.receive())
            assert len(read) < t.match.seq
            assert not [m for m in read if m["type"] == "event" and m["event"]["type"] == "result"]
            last_seq = max((m["seq"] for m in read if m["type"] == "event"), default=0)
            assert last_seq < dropped_at[0]

    # it can take its seat back: the game is over and its table retired, so what it gets is the result
    # (a finished table keeps no more of its history in memory than that) and the final view
    async with connect(server, "stalled again") as again:
        resumed = await again.request("resume", table=table, token=joined["token"], last_seq=last_seq)
        assert resumed["type"] == "resumed" and resumed["seat"] == 1
        caught_up = await again.next()
        assert caught_up["seq"] == t.match.seq
        assert caught_up["event"]["type"] == "result" and caught_up["event"]["result"] == results[0]
        view = await again.next()
        assert view["type"] == "view" and view["view"]["phase"] == "over" and view["legal"] == []


# ------------------------------------------------------------------ bad messages

OVERSIZED = msgpack.packb({"type": "ping", "pad": "x" * 4000, "more": ["y" * 4000] * 16})  # over 64 KiB
FATAL_CASES = [
    # (case, send hello first, frame, code, re of the error)
    ("text frame", True, '{"type": "ping", "id": 3}', "malformed", None),
    ("not msgpack", True, b"\xc1\xc1\xc1", "malformed", None),
    ("truncated msgpack", True, b"\x82\xa4type", "malformed", None),
    ("bytes after the map", True, encode({"type": "ping", "id": 3}) + b"\x00", "malformed", None),
    ("not a map", True, msgpack.packb([1, 2, 3]), "malformed", None),
    ("string over max_str_len", True, msgpack.packb({"type": "ping", "pad": "x" * 4097}), "too_large", None),
    ("before hello", False, encode({"type": "tables", "id": 3}), "hello_required", 3),
    ("unsupported version", False, encode({"type": "hello", "id": 3, "version": 1, "client": "x"}),
     "version_unsupported", 3),
    # a first message that does not fit the catalogue: answered, then closed as any refused hello is
    ("hello with a bad field", False, encode({"type": "hello", "id": 3, "version": "2", "client": "x"}), "bad_field",
     3),
    ("hello missing a field", False, encode({"type": "hello", "id": 3, "client": "x"}), "missing_field", 3),
    ("first message of no type", False, encode({"type": "dance", "id": 3}), "unknown_type", 3),
]


@pytest.mark.parametrize(("hello", "frame", "code", "re"), [c[1:] for c in FATAL_CASES],
                         ids=[c[0] for c in FATAL_CASES])
async def test_fatal_protocol_error_answered_then_connection_closed(server, autojump_clock, hello, frame, code, re):
    async with connect(server, "bad", hello=hello) as client:
        await client.send_raw(frame)
        error = await client.expect(lambda m: m["type"] == "error")
        assert error["code"] == code and error["message"] and error.get("re") == re
        closed = await client.wait_closed()
        assert closed.code == POLICY_VIOLATION and closed.reason != "no hello in time"  # at once, not at the timeout
        assert [m["type"] for m in client.frames] == (["welcome"] if hello else []) + ["error"]


async def test_a_version_1_client_is_told_the_versions_the_server_speaks(server, autojump_clock):
    async with connect(server, "old", hello=False) as old:
        await old.send({"type": "hello", "id": 1, "version": 1, "client": "old"})
        error = await old.next()
        assert error["code"] == "version_unsupported" and "version 2, not 1" in error["message"]
    async with connect(server, "new", hello=False) as new:
        await new.send({"type": "hello", "id": 1, "version": PROTOCOL_VERSION, "client": "new"})
        welcome = await new.next()
        assert welcome["version"] == PROTOCOL_VERSION == 2 and welcome["versions"] == [2]


async def test_a_frame_over_max_frame_bytes_is_closed_1009_with_no_error(server, autojump_clock):
    assert len(OVERSIZED) > 65536
    async with connect(server, "big") as client:
        await client.send_raw(OVERSIZED)
        closed = await client.wait_closed()
        assert closed.code == 1009
        assert [m["type"] for m in client.frames] == ["welcome"]


async def test_bad_messages_refused_with_their_codes_while_table_plays_on(server, autojump_clock):
    async with connect(server, "a") as a, connect(server, "b") as b, connect(server, "outsider") as outsider:
        table = await create_table(a, 2, seed=4, options={**SHORT, "turn_ms": 60_000})
        await join(a, table)
        await join(b, table)
        assert (await act(a, table, type="ready"))["type"] == "ok"
        assert (await act(b, table, type="ready"))["type"] == "ok"
        await b.event("turn_started", seat=0, turn=1)

        async def refused(client: RawClient, message: dict[str, Any], code: str) -> dict[str, Any]:
            rid = client.new_id()
            await client.send({**message, "id": rid})
            reply = await client.answer(rid)
            assert reply["type"] == "error" and reply["code"] == code, reply
            return reply

        assert "dance" in (await refused(a, {"type": "dance"}, "unknown_type"))["message"]
        assert (await refused(a, {"type": "ping", "colour": "red"}, "unknown_field"))["message"].startswith("colour")
        assert (await refused(a, {"type": "view", "table": 5}, "bad_field"))["message"].startswith("table")
        assert (await refused(a, {"type": "join", "name": "x"}, "missing_field"))["message"].startswith("table")
        assert (await refused(a, {"type": "act", "table": table, "command": {"type": "fly"}},
                              "unknown_command"))["table"] == table
        reply = await refused(a, {"type": "act", "table": table, "command": {"type": "end_turn", "now": True}},
                              "unknown_field")
        assert reply["message"].startswith("command.now")
        reply = await refused(a, {"type": "act", "table": table,
                                  "command": {"type": "auction_drawn", "start_price": "free"}}, "bad_field")
        assert reply["message"].startswith("command.start_price")
        reply = await refused(b, {"type": "act", "table": table, "command": {"type": "end_turn"}}, "illegal_action")
        assert reply["reason"] == "not_your_turn" and reply["table"] == table
        reply = await refused(outsider, {"type": "act", "table": table, "command": {"type": "end_turn"}}, "not_seated")
        assert reply["table"] == table
        await refused(a, {"type": "act", "table": "t404", "command": {"type": "end_turn"}}, "no_such_table")
        assert (await refused(a, {"type": "hello", "version": PROTOCOL_VERSION, "client": "again"}, "hello_required"))
        # a message without an id is answered without re
        await a.send({"type": "dance"})
        anonymous = await a.expect(lambda m: m["type"] == "error")
        assert anonymous["code"] == "unknown_type" and "re" not in anonymous
        # meanwhile another connection breaks the framing and is thrown out
        async with connect(server, "vandal") as vandal:
            await vandal.send_raw("not binary")
            assert (await vandal.wait_closed()).code == POLICY_VIOLATION

        # nothing of that closed the players' connections or changed the game
        assert a.closed is None and b.closed is None and outsider.closed is None
        t = server.lobby.tables[table]
        assert t.match.rejected == 1 and t.match.engine.turn == 1 and t.match.engine.current == 0
        seen = len(b.events())
        # a later valid command works, and the other seat gets its events
        view = (await a.request("view", table=table))
        legal = {c["type"]: c for c in view["legal"]}
        command = ({"type": "pair", "resource": legal["pair"]["resource"]} if "pair" in legal
                   else {"type": "auction_drawn", "start_price": 0})
        assert (await act(a, table, **command))["type"] == "ok"
        follow = await b.expect(lambda m: m["type"] == "event" and m["event"]["type"] in ("card_placed",
                                                                                           "auction_opened"))
        assert follow["seq"] > seen
        before = list(t.match.engine.dollars)
        assert (await act(b, table, type="give", to=0, amount=1))["type"] == "ok"
        await a.event("gift", seat=1, to=0, amount=1)
        assert t.match.engine.dollars == [before[0] + 1, before[1] - 1]


async def test_clients_vanishing_mid_handshake_never_stop_the_server(server):
    """Connect, start (or not) the HTTP upgrade, and reset the TCP connection at once: the server logs it
    and keeps serving everyone else."""
    import socket as stdlib_socket
    import struct

    request = (b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    for i in range(30):
        sock = trio.socket.socket(stdlib_socket.AF_INET, stdlib_socket.SOCK_STREAM)
        await sock.connect(("127.0.0.1", server.port))
        if i % 3:
            await sock.send(request[: len(request) * (i % 3) // 2])
        sock.setsockopt(stdlib_socket.SOL_SOCKET, stdlib_socket.SO_LINGER, struct.pack("ii", 1, 0))  # RST
        sock.close()
        await trio.sleep(0)
    async with connect(server) as client:
        assert (await client.request("ping"))["type"] == "pong"


async def test_pong_and_the_organisers_listing_carry_the_round_trip_once_the_server_has_timed_one(
        start_server, autojump_clock):
    server = await start_server(admin_token="organiser-token-0123456789", client=ClientLimits(rtt_ping_s=0))
    async with connect(server, "org") as org:
        pong = await org.request("ping")
        assert pong["type"] == "pong" and "rtt_ms" not in pong  # with rtt_ping_s 0, only an idle client is pinged
    server = await start_server(admin_token="organiser-token-0123456789")
    async with connect(server, "org") as org:
        await trio.sleep(0.1)  # the ping sent once the hello is answered has had its pong (in memory: 0 ms)
        pong = await org.request("ping")
        assert (pong["rtt_ms"], pong["rtt_last_ms"]) == (0, 0)
        listing = await org.request("admin", token="organiser-token-0123456789", action="connections")
        [mine] = listing["connections"]
        assert (mine["client"], mine["rtt_ms"], mine["rtt_last_ms"]) == ("org", 0, 0)


async def test_every_request_of_the_server_itself_repeated_keeps_no_memory_per_request(server, autojump_clock):
    """What a connection asks of the server itself, answered or refused a thousand times over, leaves nothing
    behind in what the server's code allocated (the table's own requests: tests/server/core/test_session.py)."""
    import gc
    import tracemalloc

    ours = [tracemalloc.Filter(True, f"{ROOT}/server/*"), tracemalloc.Filter(True, f"{ROOT}/protocol/*")]
    async with connect(server, "asker") as asker:
        table = await create_table(asker, 2)
        requests: dict[str, dict[str, Any]] = {
            "ping": {"type": "ping"},
            "tables": {"type": "tables"},
            "bulletin": {"type": "bulletin", "topic": "news"},
            "history": {"type": "history", "table": table, "after": 0},
            "history of no table": {"type": "history", "table": "t999", "after": 0},
            "admin refused": {"type": "admin", "token": "wrong", "action": "connections"},
            "a table request refused": {"type": "join", "table": "t999", "name": "x"},
            "hello again": {"type": "hello", "version": PROTOCOL_VERSION, "client": "again"},
            "unknown field": {"type": "ping", "extra": 1},
        }

        async def repeat(message: dict[str, Any], times: int) -> None:
            for _ in range(times):
                answer = await asker.request(message["type"], **{k: v for k, v in message.items() if k != "type"})
                assert answer.get("code") != "rate_limited", answer
                asker.frames.clear()  # the test client's own record of what it received
                asker.pos = 0
                await trio.sleep(0.01)  # under the connection's rate

        for name, message in requests.items():
            await repeat(message, 200)  # the warm-up
            tracemalloc.start()
            try:  # what is held after 1,000 more against what was after 500: buffers in use cancel out
                await repeat(message, 500)
                gc.collect()
                before = tracemalloc.take_snapshot().filter_traces(ours)
                await repeat(message, 1000)
                gc.collect()
                after = tracemalloc.take_snapshot().filter_traces(ours)
            finally:
                tracemalloc.stop()
            grown = sum(stat.size_diff for stat in after.compare_to(before, "lineno"))
            assert grown < 16 * 1024, (name, grown)  # a leak of a few bytes a request would be 1000 times that


async def test_a_connection_gone_is_not_held_by_the_round_trip_pings_until_their_cycle_ends(autojump_clock):
    # a crowd that left is given back seconds later (server/ops/memory.py): nothing may hold it for a 10 s cycle
    class Pinged:
        welcomed, closed = True, False

        def __init__(self) -> None:
            self.ws = self
            self.pings = 0

        def ping(self) -> None:
            self.pings += 1

    connections: dict[int, Any] = {n: Pinged() for n in range(8)}
    gone = weakref.ref(connections[7])
    async with trio.open_nursery() as nursery:
        nursery.start_soon(time_round_trips, connections, 10.0)
        await trio.sleep(0.1)  # the cycle began with all eight
        del connections[7]
        gc.collect()
        assert gone() is None
        await trio.sleep(10.0)  # and the cycle pinged those left
        assert all(conn.pings >= 1 for conn in connections.values())
        nursery.cancel_scope.cancel()
