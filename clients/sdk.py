"""The Python bot SDK: everything between a ``Player`` and the server.

A player is any object with ``act(view, legal) -> command | None`` (see ``clients.players.base``). The SDK
connects, says hello, finds or creates a table, joins it, and then calls ``act`` with every fresh view of
its seat, sending back what it returns, each command with a key of its own. If the connection drops it
reconnects with the seat token and the last sequence number it saw, sends again the command whose answer it
had not had (the key makes the server answer it once: applied, or told how it was), and play goes on.
``run_bot`` returns the game's result.

    import trio
    from clients.sdk import run_bot

    class Bot:
        def act(self, view, legal):
            return next((c for c in legal if c["type"] == "end_turn"), None)

    result = trio.run(run_bot, "ws://127.0.0.1:8765", Bot())
"""

from __future__ import annotations

import argparse
import itertools
import os
import secrets
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import trio
from trio_websocket import ConnectionClosed, HandshakeError, WebSocketConnection, open_websocket_url

from clients.players.base import Player
from protocol.codec import decode, encode
from protocol.messages import PROTOCOL_VERSION
from protocol.views import player_view

RECONNECT_DELAYS_S = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0)
MAX_REDIRECTS = 4  # `moved` answers followed in a row (a cluster's workers send a table's clients to its worker)
DEFAULT_URL = "ws://127.0.0.1:8765"
DEFAULT_SEATS = 4  # of a table a bot creates when told no number
LEAVE_TIMEOUT_S = 2.0  # how long a bot stopped before the start waits to give its seat back
PING_EVERY_S = 10.0  # how often a seated bot asks the server for its round trip (``BotSession.rtt_ms``)


class ServerError(Exception):
    def __init__(self, reply: dict[str, Any]) -> None:
        super().__init__(f"{reply.get('code')}: {reply.get('message')}")
        self.code = reply.get("code")
        self.reason = reply.get("reason")
        self.url = reply.get("url")  # with `moved`: the worker that holds the table


@dataclass
class Seat:
    """What the SDK knows of its seat: enough to resume after a drop."""

    table: str
    seat: int
    token: str
    last_seq: int = 0


@dataclass
class BotSession:
    url: str
    player: Player
    name: str = "bot"
    table: str | None = None
    game: str = "parsimonia"
    seats: int | None = None  # None: any waiting table of the game will do, and a table created has DEFAULT_SEATS
    create_options: dict[str, Any] = field(default_factory=dict)
    token: str | None = None  # a seat already taken for us (e.g. by a tournament director): resume it
    admin: str | None = field(default_factory=lambda: os.environ.get("PARSIMONIA_ADMIN_TOKEN") or None)  # for create
    give_up_after_s: float = 600.0  # how long to keep reconnecting to a server that is gone
    seat: Seat | None = None
    static: dict[str, Any] = field(default_factory=dict)  # the game's static part, from joined / resumed
    started: bool = False  # the game has begun: a seat can no longer be given back with `leave`
    result: dict[str, Any] | None = None
    actions: int = 0
    reconnects: int = 0
    # this connection's round trip in ms as the server timed it (its pings' pongs), smoothed and the last one;
    # from the ``pong`` to a ``ping`` sent as the seat is taken and every ``PING_EVERY_S``; None until then
    rtt_ms: int | None = None
    rtt_last_ms: int | None = None
    joined: trio.Event = field(default_factory=trio.Event)
    _in_flight: int | None = None  # id of the command sent and not yet answered
    _unanswered: dict[str, Any] | None = None  # that command (its `act` fields, with its key): sent again after a drop
    _ids: itertools.count = field(default_factory=lambda: itertools.count(1))
    _join_key: str = field(default_factory=lambda: secrets.token_urlsafe(24))  # see `join` in SPEC.md
    _home: str = ""  # the URL first given; ``url`` is the worker a cluster sent us to
    _redirects: int = 0  # `moved` followed since the last seat taken or resumed

    def __post_init__(self) -> None:
        self._home = self.url
        if self.token is not None:
            if self.table is None:
                raise ValueError("a seat token goes with its table")
            self.seat = Seat(self.table, -1, self.token)  # the seat number comes with `resumed`

    async def run(self) -> dict[str, Any]:
        """Play until the table reports its result; reconnect and resume on every drop. On a cluster, follow
        ``moved`` to the worker holding the table (at most ``MAX_REDIRECTS`` in a row), and ask the first URL
        again when that worker cannot be reached."""
        failures = 0
        lost_since: float | None = None
        while self.result is None:
            try:
                async with open_websocket_url(self.url) as ws:
                    failures, lost_since = 0, None
                    await self._session(ws)
            except ServerError as err:
                if err.code != "moved" or not isinstance(err.url, str) or self._redirects >= MAX_REDIRECTS:
                    raise
                self._redirects += 1
                self.url = err.url
                continue
            except (ConnectionClosed, HandshakeError, OSError, trio.BrokenResourceError):
                self.url, self._redirects = self._home, 0  # where it went may have moved: ask the first URL
                lost_since = trio.current_time() if lost_since is None else lost_since
                if self.seat is None and failures >= len(RECONNECT_DELAYS_S):
                    raise
                if trio.current_time() - lost_since > self.give_up_after_s:
                    raise
            if self.result is None:
                self.reconnects += 1
                await trio.sleep(RECONNECT_DELAYS_S[min(failures, len(RECONNECT_DELAYS_S) - 1)])
                failures += 1
        return self.result

    async def _request(self, ws: WebSocketConnection, kind: str, **fields: Any) -> dict[str, Any]:
        """Send a request and wait for its reply (pushes that arrive meanwhile are handled in order)."""
        rid = next(self._ids)
        await ws.send_message(encode({"type": kind, "id": rid, **fields}))
        while True:
            msg = decode(await ws.get_message())
            if msg.get("re") == rid and msg["type"] != "view":
                if msg["type"] == "error":
                    raise ServerError(msg)
                return msg
            await self._on_push(ws, msg)

    async def _session(self, ws: WebSocketConnection) -> None:
        await self._request(ws, "hello", version=PROTOCOL_VERSION, client=f"parsimonia-sdk/{self.name}"[:64])
        if self.seat is None:
            # the table is kept before the join: tried again, it is the same table with the same key
            table = self.table = self.table or await self._find_table(ws)
            # the same key on every try: a join whose `joined` was lost with a connection gets its seat back
            joined = await self._request(ws, "join", table=table, name=self.name, key=self._join_key)
            self.seat = Seat(joined["table"], joined["seat"], joined["token"])
            self.static = joined["static"]
            self.joined.set()
            self._redirects = 0
        else:
            self._in_flight = None  # an answer lost with the old connection never comes
            resumed = await self._request(
                ws, "resume", table=self.seat.table, token=self.seat.token, last_seq=self.seat.last_seq
            )
            self.seat.seat = resumed["seat"]
            self.static = resumed["static"]
            self.joined.set()
            self._redirects = 0
            if self._unanswered is not None:  # its answer was lost: the same key gets the first answer, or applies it
                self._in_flight = next(self._ids)
                await ws.send_message(encode({"type": "act", "id": self._in_flight, **self._unanswered}))
        try:
            ask_at = trio.current_time()
            while self.result is None:
                if trio.current_time() >= ask_at:
                    await ws.send_message(encode({"type": "ping"}))
                    ask_at = trio.current_time() + PING_EVERY_S
                frame = None
                with trio.move_on_at(ask_at):  # only the wait: a push is never handled half
                    frame = await ws.get_message()
                if frame is not None:
                    await self._on_push(ws, decode(frame))
        except (trio.Cancelled, KeyboardInterrupt):  # stopped: give the seat back while the table still waits
            if self.seat is not None and not self.started:
                await _leave(ws, self.seat.table)
            raise

    async def _find_table(self, ws: WebSocketConnection) -> str:
        """A waiting table of the game (with ``seats`` seats, if given), else a new one. With
        ``create_options`` (a time scale...) always a new one: a listing does not show a table's clocks, so
        a stale waiting table with other settings would be joined unseen."""
        if not self.create_options:
            listing = await self._request(ws, "tables")
            for t in listing["tables"]:
                if (t["game"] == self.game and t["state"] == "waiting" and t["taken"] < t["seats"]
                        and self.seats in (None, t["seats"])):
                    return t["table"]
        admin = {"admin": self.admin} if self.admin else {}  # a server with an admin token lets only it create
        created = await self._request(ws, "create", game=self.game, seats=self.seats or DEFAULT_SEATS,
                                      **self.create_options, **admin)
        return created["table"]

    async def _on_push(self, ws: WebSocketConnection, msg: dict[str, Any]) -> None:
        seat = self.seat
        kind = msg["type"]
        if kind == "event" and seat is not None:
            if msg["seq"] > seat.last_seq + 1:  # a gap: ask for the whole picture
                await ws.send_message(encode({"type": "view", "table": seat.table}))
            seat.last_seq = max(seat.last_seq, msg["seq"])
            self.started = self.started or msg["event"].get("type") == "game_started"
            if msg["event"].get("type") == "result":
                self.result = msg["event"]["result"]
        elif kind == "view" and seat is not None and msg["seat"] == seat.seat:
            if msg["seq"] < seat.last_seq:
                return  # an older picture than events already seen; a fresher view follows
            seat.last_seq = msg["seq"]
            self.started = self.started or msg["view"].get("phase") != "waiting"
            if self._in_flight is not None:
                return  # this view predates our last command; the one after its answer is current
            if not msg["legal"]:
                return  # nothing may be sent now (the table waits for players, is paused, or is over)
            view = player_view(self.static, msg["view"], msg.get("private"), msg["seat"])
            command = self.player.act(view, msg["legal"])
            if command is not None:
                self.actions += 1
                self._in_flight = next(self._ids)
                self._unanswered = {"table": seat.table, "command": command, "key": secrets.token_urlsafe(12)}
                await ws.send_message(encode({"type": "act", "id": self._in_flight, **self._unanswered}))
        elif kind == "pong":
            self.rtt_ms, self.rtt_last_ms = msg.get("rtt_ms", self.rtt_ms), msg.get("rtt_last_ms", self.rtt_last_ms)
        elif kind in ("ok", "error") and msg.get("re") is not None and msg.get("re") == self._in_flight:
            # The answer to our command. Views sent after it show its effect; after a refusal
            # the next change at the table brings a fresh view to act on.
            self._in_flight = self._unanswered = None


async def _leave(ws: WebSocketConnection, table: str) -> None:
    """Send ``leave`` for ``table`` even from a cancelled task, giving up after ``LEAVE_TIMEOUT_S``."""
    with trio.CancelScope(shield=True), trio.move_on_after(LEAVE_TIMEOUT_S):
        try:
            await ws.send_message(encode({"type": "leave", "table": table}))
        except (ConnectionClosed, trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the connection is gone: the seat waits for a resume instead


def seat_options(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The seat a bot was given on its command line (``--url``, ``--table``, ``--token``, as ``--token X``
    or ``--token=X``) or, failing that, in ``PARSIMONIA_URL``, ``PARSIMONIA_TABLE`` and
    ``PARSIMONIA_TOKEN``: what a tournament director passes to every bot it starts. Other arguments are
    left alone. ``url`` defaults to ``ws://127.0.0.1:8765``; ``table`` and ``token`` to None."""
    argv = sys.argv[1:] if argv is None else argv
    environ = os.environ if environ is None else environ
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    for name in ("url", "table", "token"):
        parser.add_argument(f"--{name}")
    given = vars(parser.parse_known_args(list(argv))[0])
    seat = {name: given[name] or environ.get(f"PARSIMONIA_{name.upper()}") or None for name in given}
    seat["url"] = seat["url"] or DEFAULT_URL
    return seat


async def run_bot(url: str | None, player: Player, **options: Any) -> dict[str, Any]:
    """Play one game with ``player`` and return the table's result. ``options``: see ``BotSession``.
    ``url``, ``table`` and ``token`` left out (or None) come from ``seat_options()``, so a bot started
    by a tournament director takes the seat it was given."""
    seat = seat_options()
    options = {**options, **{k: seat[k] for k in ("table", "token") if options.get(k) is None}}
    return await BotSession(url or seat["url"], player, **options).run()


def play(player: Player, url: str | None = None, **options: Any) -> dict[str, Any]:
    """``run_bot`` for a script: run it under trio and return the result. Ctrl-C, or no server at the URL,
    ends the script with one line on stderr and exit status 130 or 1 instead of a traceback."""
    try:
        return trio.run(lambda: run_bot(url, player, **options))
    except BaseException as exc:
        found = _leaves(exc)
        if any(isinstance(e, KeyboardInterrupt) for e in found):
            print("stopped (Ctrl-C)", file=sys.stderr)
            raise SystemExit(130) from None
        if any(isinstance(e, (HandshakeError, OSError)) for e in found):
            where = url or seat_options()["url"]
            print(f"no Parsimonia server answers at {where}: start one (parsimonia serve) or give --url",
                  file=sys.stderr)
            raise SystemExit(1) from None
        raise


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


async def call(ws: WebSocketConnection, kind: str, **fields: Any) -> dict[str, Any]:
    """Send one request and return its reply, passing over any push; raise ``ServerError`` on an error."""
    await ws.send_message(encode({"type": kind, "id": 1, **fields}))
    while True:
        msg = decode(await ws.get_message())
        if msg.get("re") == 1 and msg["type"] != "view":
            if msg["type"] == "error":
                raise ServerError(msg)
            return msg


async def history(ws: WebSocketConnection, table: str, after: int = 0,
                  on_push: Callable[[dict[str, Any]], None] | None = None) -> AsyncIterator[dict[str, Any]]:
    """Every event of ``table`` after seq ``after``, in order, paged with ``history`` (as the seat this
    connection holds there saw them, else as a spectator did); each as an ``event`` push would carry it. What
    else arrives meanwhile goes to ``on_push`` (the table's live events, to be kept until the past is read)."""
    rid = 1 << 30  # apart from the ids a session numbers from 1
    while True:
        await ws.send_message(encode({"type": "history", "id": rid, "table": table, "after": after}))
        while True:
            msg = decode(await ws.get_message())
            if msg.get("re") == rid and msg["type"] in ("history", "error"):
                break
            if on_push is not None:
                on_push(msg)
        if msg["type"] == "error":
            raise ServerError(msg)
        for entry in msg["events"]:
            yield {"type": "event", "table": table, **entry}
        if "next" not in msg:
            return
        after = msg["next"]
        rid += 1


async def request_once(url: str, kind: str, client: str = "parsimonia-sdk", **fields: Any) -> dict[str, Any]:
    """Connect, say hello, send one request and return its reply (e.g. ``create`` or ``tables``); on a cluster,
    follow ``moved`` to the worker holding the table (at most ``MAX_REDIRECTS``)."""
    for redirects in itertools.count():
        async with open_websocket_url(url) as ws:
            await call(ws, "hello", version=PROTOCOL_VERSION, client=client)
            try:
                return await call(ws, kind, **fields)
            except ServerError as err:
                if err.code != "moved" or not isinstance(err.url, str) or redirects >= MAX_REDIRECTS:
                    raise
                url = err.url
    raise AssertionError("unreachable")
