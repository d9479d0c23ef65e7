"""Secrets, for every game: a whole game of reference bots (3 seats) with a spectator and an organiser, on a
server in process, logging at debug. Every step of the table is audited as it happens (``Audit``, on the
frames the step hands out, against the engine's state at that moment):

* an event frame carries the event's full form only to a seat of its audience, and its redacted form to
  everyone else (spectators included), both worked out by the test from the event's fields; no frame to
  them in that step holds a list from the fields the redacted form leaves out (a sealed split);
* a view frame carries a ``private`` part only to the seat it belongs to, and exactly that seat's part;
* no frame to another seat or a spectator, and no log line written in the step, holds a hidden list of a
  seat (its ship, hand, sealed split or Secret Festival cards: two cards or more) or three cards in a row
  of the deck's hidden order (either way round), hidden before the step and still after it (``step``);

and at the end: a seat's token reached only its own connection, and no token (seat or admin) is in any log
line or in any answer of ``/``, ``/healthz``, ``/metrics`` and ``/admin/connections``, each fetched while
the game runs; the admin listing shows no secret of the game either."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import msgpack
import pytest
import trio

from clients.players import make_player
from server.runtime.app import Server, ServerConfig
from server.games import GAMES
from tests.faults.conftest import scale
from tests.faults.wsclient import http_get
from tests.server.conftest import SHORT, captured_logs, connect, join, play_seat, walk  # noqa: F401 (the fixture)

ADMIN = "organiser-secret-token-0123456789"
SEATS = 3
OPTIONS = {"parsimonia": {**SHORT, "game_ms": 30_000}, "kupcy": {}, "gift-of-tulips": {}}
GAMES_EACH = scale(1, 5)  # games of each kind, each with its own seed
HTTP_PATHS = ["/", "/healthz", "/metrics", "/admin/connections"]


def int_lists(value: Any) -> Iterator[tuple[int, ...]]:
    for item in walk(value):
        if isinstance(item, list) and len(item) >= 2 and all(type(x) is int for x in item):
            yield tuple(item)


def runs(order: list[int], size: int = 3) -> set[tuple[int, ...]]:
    """Every ``size`` cards in a row of ``order``, either way round."""
    out = {tuple(order[i:i + size]) for i in range(len(order) - size + 1)}
    return out | {tuple(reversed(run)) for run in out}


def holds_run(lst: tuple[int, ...], secret: set[tuple[int, ...]], size: int = 3) -> bool:
    return any(tuple(lst[i:i + size]) in secret for i in range(len(lst) - size + 1))


def normal(value: Any) -> Any:
    """A value as it arrives over the wire (tuples become lists, and so on)."""
    return msgpack.unpackb(msgpack.packb(value, use_bin_type=True), raw=False, strict_map_key=False)


def expected_form(event: Any, seat: int | None) -> dict[str, Any]:
    """What ``seat`` (None: a spectator) may receive of ``event``, worked out here from its audience, data
    and redacted fields (not with the server's own ``wire_for``)."""
    if event.audience is None or (seat is not None and seat in event.audience):
        return normal({"type": event.type, "at": event.at, **event.data})
    if event.redacted is None:
        return {}
    return normal({"type": event.type, "at": event.at, **event.redacted})


@dataclass
class Hidden:
    """What is hidden at one moment: each seat's lists and cards (its private part), the deck's cards and
    its runs."""

    lists: dict[int, set[tuple[int, ...]]]
    cards: dict[int, set[int]]
    deck_cards: set[int]
    runs: set[tuple[int, ...]]


class Audit:
    """Checks every step of one table as the table hands out its frames (see the module's docstring)."""

    def __init__(self, table: Any, log: io.StringIO) -> None:
        self.match, self.session = table.match, table.session
        self.log = log
        self.log_pos = log.tell()
        self.events: dict[int, Any] = {}
        self.steps = self.frames = self.redacted = self.privates = 0
        self.leaks: list[str] = []
        self.was: Hidden | None = None  # before the game: everything is hidden
        self.checked = 0  # secrets looked for, step by step
        self.revealed: set[tuple[int, ...]] = set()  # lists a public event has shown (a revealed split)
        on_event, take = self.match.on_event, self.session.take_frames

        def record(event: Any) -> None:
            self.events[self.match.seq] = event
            if on_event is not None:
                on_event(event)

        def take_frames() -> list[tuple[Any, bytes]]:
            frames = take()
            self.step(frames)
            return frames

        self.match.on_event = record
        self.session.take_frames = take_frames

    def hidden(self) -> Hidden | None:
        """What is hidden now; None before the game (when everything is), empty once it is over (the
        result may show what was hidden)."""
        engine = self.match.engine
        if engine is None:
            return None
        if self.match.state == "over":
            return Hidden({}, {}, set(), set())
        views = {seat: normal(engine.private_view(seat)) for seat in range(self.match.seat_count)}
        deck = list(engine.deck)
        return Hidden({seat: set(int_lists(view)) - self.revealed for seat, view in views.items()},
                      {seat: {x for x in walk(view) if type(x) is int} for seat, view in views.items()},
                      set(deck), runs(deck))

    def step(self, frames: list[tuple[Any, bytes]]) -> None:
        """Checked in a step's frames: a seat's list hidden after the step whose every card was hidden
        before it (in the deck, or that seat's own), and the deck's runs hidden both before and after. A
        list whose cards were public within the step (paid into a warehouse, then stowed), or that a public
        event has shown (a split revealed, still in the seat's private part), is no secret."""
        self.steps += 1
        engine = self.match.engine
        decoded = [(sub, msgpack.unpackb(frame, raw=False, strict_map_key=False)) for sub, frame in frames]
        for _, msg in decoded:  # what the rules show everyone is no secret from now on
            if msg["type"] == "event" and self.events[msg["seq"]].audience is None:
                self.revealed |= set(int_lists(msg["event"]))
        now, was = self.hidden(), self.was
        self.was = now
        lists: dict[int, set[tuple[int, ...]]] = {}
        deck: set[tuple[int, ...]] = set()
        if now is not None:
            for seat, secret in now.lists.items():
                lists[seat] = secret if was is None else {
                    lst for lst in secret if all(c in was.deck_cards or c in was.cards[seat] for c in lst)}
            deck = now.runs if was is None else now.runs & was.runs
        self.checked += sum(map(len, lists.values())) + len(deck)
        for sub, msg in decoded:
            self.frames += 1
            held = self.session.seat_of(sub)
            seat = held.index if held is not None else None
            if msg["type"] == "event":
                event = self.events[msg["seq"]]
                assert msg["event"] == expected_form(event, seat), (seat, msg, event)
                if event.audience is not None and seat not in event.audience:
                    self.redacted += 1
                    sealed = [v for k, v in event.data.items() if k not in (event.redacted or {})]
                    if set(int_lists(normal(sealed))) & set(int_lists(msg)):
                        self.leaks.append(f"a sealed field of {event} in a frame to {seat}: {msg}")
            elif msg["type"] == "view":
                assert msg["seat"] == seat, (seat, msg)
                if seat is None:
                    assert "private" not in msg, msg
                else:
                    private = engine.private_view(seat) if engine is not None else None
                    assert msg["private"] == (normal(private) if private is not None else {}), (seat, msg)
                    self.privates += 1
            for other, secret in lists.items():
                if other != seat and (shown := [lst for lst in int_lists(msg) if lst in secret]):
                    self.leaks.append(f"seat {other}'s hidden {shown} in a frame to {seat}: {msg}")
            if [lst for lst in int_lists(msg) if holds_run(lst, deck)]:
                self.leaks.append(f"the deck's order in a frame to {seat}: {msg}")
        self.log.seek(self.log_pos)
        written = self.log.read()
        self.log_pos = self.log.tell()
        for line in written.splitlines():
            found = list(int_lists(json.loads(line)))
            if [lst for lst in found if any(lst in s for s in lists.values()) or holds_run(lst, deck)]:
                self.leaks.append(f"a hidden list or the deck's order in the log: {line}")


@pytest.mark.parametrize("seed", [41 + n for n in range(GAMES_EACH)])
@pytest.mark.parametrize("game", sorted(GAMES))
async def test_no_frame_log_line_or_http_answer_shows_a_token_hidden_card_or_sealed_choice(game, seed, autojump_clock,
                                                                                            captured_logs, nursery,
                                                                                            capsys):
    server = await nursery.start(Server(ServerConfig(host="127.0.0.1", port=0, admin_token=ADMIN)).run)
    http: list[tuple[str, int, bytes]] = []

    async def fetch_all() -> None:
        for path in HTTP_PATHS:
            headers = {"authorization": f"Bearer {ADMIN}"} if path.startswith("/admin") else {}
            status, body = await http_get(server.port, path, headers)
            http.append((path, status, body))

    async with connect(server, "organiser") as org, connect(server, "fan") as fan, \
            connect(server, "s0") as s0, connect(server, "s1") as s1, connect(server, "s2") as s2:
        seats = [s0, s1, s2]
        created = await org.request("create", game=game, seats=SEATS, seed=seed, admin=ADMIN, options=OPTIONS[game])
        assert created["type"] == "created", created
        table = created["table"]
        audit = Audit(server.lobby.tables[table], captured_logs)
        assert (await fan.request("watch", table=table))["type"] == "watching"
        tokens = [(await join(client, table))["token"] for client in seats]
        results: list[dict[str, Any]] = []

        async def seat(index: int) -> None:
            results.append(await play_seat(seats[index], index, make_player("greedy", index, game)))

        async def organise() -> None:
            assert (await org.request("admin", token=ADMIN, action="connections"))["type"] == "connections"
            for _ in range(3):  # while the game runs
                await fan.expect(lambda m: m["type"] == "event")
                await fetch_all()
                await trio.sleep(1)

        with trio.fail_after(3600):
            async with trio.open_nursery() as players:
                for index in range(SEATS):
                    players.start_soon(seat, index)
                players.start_soon(organise)
        await fetch_all()
        assert len(results) == SEATS and all(r == results[0] for r in results)
        assert server.lobby.tables[table].state == "over"
        connections = {"organiser": org.frames, "fan": fan.frames, "s0": s0.frames, "s1": s1.frames,
                       "s2": s2.frames}

    assert not audit.leaks, audit.leaks[:5]
    assert audit.steps > 10 and audit.redacted + audit.privates > 0  # the audit saw hidden information

    log_text = captured_logs.getvalue()
    for secret in [ADMIN, *tokens]:
        assert secret not in log_text
    assert any(json.loads(line)["event"] == "seat_joined" for line in log_text.splitlines())

    owners = {token: f"s{i}" for i, token in enumerate(tokens)}
    for token, owner in owners.items():
        assert token in walk(connections[owner])  # the check can see a token where one is
    for name, frames in connections.items():
        strings = [x for x in walk(frames) if isinstance(x, str)]
        for token, owner in owners.items():
            if name != owner:
                assert not [s for s in strings if token in s], (name, token)
        assert not [s for s in strings if ADMIN in s]

    assert {path for path, status, _ in http if status == 200} == set(HTTP_PATHS), [(p, s) for p, s, _ in http]
    for path, _, body in http:
        text = body.decode("utf-8", "replace")
        for secret in [ADMIN, *tokens]:
            assert secret not in text, path
    listing = [json.loads(body) for path, _, body in http if path == "/admin/connections"]
    assert listing and all("token" not in json.dumps(x) for x in listing)
    with capsys.disabled():
        print(f"\nsecrets {game} seed {seed}: {audit.steps} steps, {audit.frames} frames audited "
              f"({audit.redacted} redacted events, {audit.privates} private parts), {audit.checked} hidden lists "
              f"and deck runs looked for, {len(log_text.splitlines())} log lines, {len(http)} HTTP answers")
