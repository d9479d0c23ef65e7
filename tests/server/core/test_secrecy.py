"""Secrets stay secret: no seat token and no admin token in the server's logs, no seat's token in any
other connection's frames, and the hidden order of the tourists deck in neither."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import trio
from trio_websocket import ConnectionClosed

from clients.players import make_player
from server.games import new_game
from tests.server.conftest import SHORT, RawClient, connect, create_table, join, play_seat, walk

ADMIN = "organiser-secret-token-0123456789"
OPTIONS = {**SHORT, "game_ms": 30_000}


def int_lists(value: Any) -> Iterator[list[int]]:
    for item in walk(value):
        if isinstance(item, list) and len(item) >= 4 and all(type(x) is int for x in item):
            yield item


def windows(order: list[int], size: int = 4) -> set[tuple[int, ...]]:
    return {tuple(order[i:i + size]) for i in range(len(order) - size + 1)}


def leaks_order(value: Any, secret: set[tuple[int, ...]]) -> bool:
    """Whether some list of integers in ``value`` holds four cards in a row in the hidden order."""
    return any(windows(lst) & secret for lst in int_lists(value))


async def test_no_token_or_hidden_card_order_in_logs_or_in_other_connections_frames(start_server, autojump_clock,
                                                                                      captured_logs):
    server = await start_server(admin_token=ADMIN)
    decks: list[list[int]] = []
    async with connect(server, "organiser") as org, connect(server, "fan") as fan, \
            connect(server, "s0") as s0, connect(server, "s1") as s1, connect(server, "s2") as s2:
        seats = [s0, s1, s2]
        table = await create_table(org, 3, seed=17, admin=ADMIN, options=OPTIONS)
        assert (await org.request("create", game="parsimonia", seats=2))["code"] == "forbidden"
        assert (await org.request("admin", token="not-" + ADMIN, action="connections"))["code"] == "forbidden"
        assert (await fan.request("watch", table=table))["type"] == "watching"
        tokens = [(await join(client, table))["token"] for client in seats]
        t = server.lobby.tables[table]
        decks.append(list(t.match.engine.deck))
        results: list[dict[str, Any]] = []
        kicked: list[RawClient] = []

        async def seat(index: int) -> None:
            results.append(await play_seat(seats[index], index, make_player("greedy", index)))

        async def organise() -> None:
            listing = await org.request("admin", token=ADMIN, action="connections")
            s1_conn = next(c["conn"] for c in listing["connections"] if c["client"] == "s1")
            await fan.event("turn_started")
            assert (await org.request("admin", token=ADMIN, action="pause", table=table))["type"] == "ok"
            await trio.sleep(5)
            assert (await org.request("admin", token=ADMIN, action="unpause", table=table))["type"] == "ok"
            await fan.event("turn_started")
            decks.append(list(t.match.engine.deck))
            assert (await org.request("admin", token=ADMIN, action="kick", conn=s1_conn))["type"] == "ok"
            kicked.append(s1)

        with trio.fail_after(600):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(seat, 0)
                nursery.start_soon(seat, 2)
                nursery.start_soon(organise)
                try:
                    await play_seat(s1, 1, make_player("greedy", 1))
                except (AssertionError, ConnectionClosed):  # kicked while reading, or while sending a command
                    assert s1.closed is not None or kicked  # it comes back with its token
                async with connect(server, "s1 again") as back:
                    rid = back.new_id()
                    await back.send({"type": "resume", "id": rid, "table": table, "token": tokens[1], "last_seq": 0})
                    results.append(await play_seat(back, 1, make_player("greedy", 1)))
                    frames_back = back.frames
                # a client guessing tokens is refused, and its guesses are not logged either
                async with connect(server, "guesser") as guesser:
                    near_miss = tokens[0][:-1] + ("B" if tokens[0].endswith("A") else "A")
                    guessed = [near_miss, "Ω" + tokens[2]]
                    for guess in guessed:
                        assert (await guesser.request("resume", table=table, token=guess, last_seq=0))["code"] \
                            == "bad_token"
                    frames_guesser = guesser.frames
        # (the aside pile is left out: its order is that of the public card_aside and tourists_cleared
        # events, and it is shuffled before it is drawn from again)
        decks.append(list(t.match.engine.deck))
        assert kicked and len(results) == 3 and all(r == results[0] for r in results) and t.state == "over"

    log_text = captured_logs.getvalue()
    log_lines = [json.loads(line) for line in log_text.splitlines()]
    events = {line["event"] for line in log_lines}
    assert {"seat_joined", "seat_resumed", "admin_request", "table_started", "table_ended"} <= events
    assert any(line["event"] == "auction_opened" for line in log_lines)  # debug lines were captured too

    # no token, admin or seat (nor a guessed one), anywhere in the logs
    for secret in [ADMIN, "not-" + ADMIN, *tokens, *guessed]:
        assert secret not in log_text
        assert secret.encode("unicode_escape").decode() not in log_text

    # a seat's token reaches only the connection that joined with it
    connections = {"organiser": org.frames, "fan": fan.frames, "s0": s0.frames, "s1": s1.frames,
                   "s2": s2.frames, "s1 again": frames_back, "guesser": frames_guesser}
    owners = {tokens[0]: {"s0"}, tokens[1]: {"s1"}, tokens[2]: {"s2"}}
    for token, (owner,) in owners.items():  # the check can see a token where one is
        assert token in walk(connections[owner])
    for name, frames in connections.items():
        strings = [x for x in walk(frames) if isinstance(x, str)]
        for token, owner in owners.items():
            if name not in owner:
                assert not [s for s in strings if token in s], (name, token)
        assert not [s for s in strings if ADMIN in s]

    # the order of the tourists deck shows up in no frame and no log line
    secret = set().union(*(windows(d) for d in decks if len(d) >= 4))
    assert secret and leaks_order({"deck": decks[0]}, secret)  # the check can see the order where it is
    for name, frames in connections.items():
        assert not leaks_order(frames, secret), name
    assert not leaks_order(log_lines, secret)


async def test_the_seed_that_orders_the_deck_is_not_revealed_before_the_end(server, autojump_clock):
    async with connect(server, "a") as a, connect(server, "b") as b:
        table = await create_table(a, 2, options=OPTIONS)  # a random seed, unknown to the players
        await join(a, table)
        await join(b, table)
        started = (await b.event("game_started"))["event"]
        t = server.lobby.tables[table]
        deck = list(t.match.engine.deck)
        # what a seat could do with the seed if it had it: compute the hidden order
        if "seed" in started:
            guess = new_game("parsimonia", 2, started["seed"], OPTIONS, 1.0).snapshot()["deck"]
            assert guess != deck, "the seed in game_started gives away the deck order"
        assert t.match.seed not in list(walk(b.frames))
