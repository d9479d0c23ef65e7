"""The Python bot SDK: everything between a ``Player`` and the server.

A player is any object with ``act(view, legal) -> command | None`` (see ``clients.players.base``). The SDK
connects, finds or creates a table, joins it, and calls ``act`` with every fresh view of its seat, sending
back what it returns, each command with a key of its own. After a drop it resumes with the seat token and
the last sequence number seen, and sends again the command whose answer it lost (the key makes the server
answer it once). A refusal goes to ``on_refused`` (by default a line on stderr); a request answered
``unavailable`` is sent again with backoff, for ``UNAVAILABLE_GIVE_UP_S`` at most. ``run_bot`` returns the
game's result.

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
import random
import secrets
import signal
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlsplit

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
# `unavailable` (a cluster's worker restarting, or not yet caught up): the same request again after these waits
# (doubling from the first to the last, each times 0.75-1.25 at random), until this long has passed since the first
UNAVAILABLE_BACKOFF_S = (0.1, 5.0)
UNAVAILABLE_GIVE_UP_S = 30.0
URL_EXAMPLE = "give ws://HOST:PORT, e.g. ws://127.0.0.1:8765"

T = TypeVar("T")


class ServerError(Exception):
    def __init__(self, reply: dict[str, Any]) -> None:
        super().__init__(f"{reply.get('code')}: {reply.get('message')}")
        self.code = reply.get("code")
        self.message = reply.get("message")
        self.reason = reply.get("reason")
        self.table = reply.get("table")
        self.url = reply.get("url")  # with `moved`: the worker that holds the table


class BadUrl(ValueError):
    """A URL the SDK cannot connect to: not ``ws://HOST:PORT`` (``wss://`` included: the server speaks no TLS)."""


class Stopped(Exception):
    """The bot was stopped by SIGTERM or SIGHUP (``stop_on_signals``); its seat was given back if it still could."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(f"stopped ({signal.Signals(signum).name})")


def check_url(url: str) -> str:
    """``url`` if it is a plain WebSocket URL with a host and a valid port, else ``BadUrl`` saying what to give."""
    if url.startswith("wss://"):
        raise BadUrl(f"{url!r}: wss:// (TLS) is not supported, the server speaks plain ws://; {URL_EXAMPLE}")
    if not url.startswith("ws://"):
        raise BadUrl(f"{url!r} is not a WebSocket URL: {URL_EXAMPLE}")
    try:
        host, _ = urlsplit(url).hostname, urlsplit(url).port  # the port raises ValueError if out of range
    except ValueError:
        raise BadUrl(f"{url!r} has no valid port (0-65535): {URL_EXAMPLE}") from None
    if not host:
        raise BadUrl(f"{url!r} names no host: {URL_EXAMPLE}")
    return url


def say_on_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class Unavailable:
    """The backoff for requests answered ``unavailable``: ``wait`` sleeps the next delay, saying so in one line, or
    raises the error once ``UNAVAILABLE_GIVE_UP_S`` have passed since the first of a run of them."""

    def __init__(self, say: Callable[[str], None], who: str) -> None:
        self.say, self.who = say, who
        self.since: float | None = None
        self.tries = 0

    def reset(self) -> None:
        self.since, self.tries = None, 0

    async def wait(self, err: ServerError, url: str) -> None:
        now = trio.current_time()
        self.since = now if self.since is None else self.since
        if now - self.since > UNAVAILABLE_GIVE_UP_S:
            raise err
        low, high = UNAVAILABLE_BACKOFF_S
        delay = min(high, low * 2 ** self.tries) * (0.75 + 0.5 * random.random())
        self.tries += 1
        self.say(f"{self.who}: {url} is unavailable ({err.message}); trying again in {delay:.1f} s "
                 f"(try {self.tries}, until {UNAVAILABLE_GIVE_UP_S:.0f} s)")
        await trio.sleep(delay)


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
    # a command the server refused: called with the command and the error (its ``code``, ``reason``, ``message``);
    # None: a line on stderr (``say``). Play goes on: the next change at the table brings a fresh view to act on
    on_refused: Callable[[dict[str, Any], ServerError], None] | None = None
    say: Callable[[str], None] = say_on_stderr  # one line for a person: waiting for players, reconnecting, refusals
    seat: Seat | None = None
    static: dict[str, Any] = field(default_factory=dict)  # the game's static part, from joined / resumed
    started: bool = False  # the game has begun: a seat can no longer be given back with `leave`
    result: dict[str, Any] | None = None
    actions: int = 0
    refusals: int = 0
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
    _waiting_seen: tuple[int, int] | None = None  # (seats taken, seats) last said while the table waits

    def __post_init__(self) -> None:
        self.url = check_url(self.url)
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
        unavailable = Unavailable(self.say, self.name)
        while self.result is None:
            try:
                async with open_websocket_url(self.url) as ws:
                    failures, lost_since = 0, None
                    await self._session(ws, unavailable)
            except ServerError as err:
                if err.code == "unavailable":  # an `act` answered so: resumed, it is sent again with its key
                    self.url, self._redirects = self._home, 0
                    await unavailable.wait(err, self.url)
                    continue
                if err.code != "moved" or not isinstance(err.url, str) or self._redirects >= MAX_REDIRECTS:
                    raise
                self._redirects += 1
                self.url = err.url
                continue
            except (ConnectionClosed, HandshakeError, OSError, trio.BrokenResourceError) as exc:
                self.url, self._redirects = self._home, 0  # where it went may have moved: ask the first URL
                if self.seat is None and failures >= len(RECONNECT_DELAYS_S):
                    raise
                if lost_since is None and self.seat is not None and self.result is None:
                    self.say(f"{self.name}: the connection to table {self.seat.table} was lost ({_why(exc)}); "
                             f"reconnecting to {self.url} for up to {self.give_up_after_s:.0f} s")
                lost_since = trio.current_time() if lost_since is None else lost_since
                if trio.current_time() - lost_since > self.give_up_after_s:
                    raise
            if self.result is None:
                self.reconnects += 1
                await trio.sleep(RECONNECT_DELAYS_S[min(failures, len(RECONNECT_DELAYS_S) - 1)])
                failures += 1
        return self.result

    async def _request(self, ws: WebSocketConnection, kind: str, **fields: Any) -> dict[str, Any]:
        """Send a request and wait for its reply (pushes that arrive meanwhile are handled in order); one answered
        ``unavailable`` is sent again after a backoff (``Unavailable``)."""
        unavailable = Unavailable(self.say, self.name)
        while True:
            rid = next(self._ids)
            await ws.send_message(encode({"type": kind, "id": rid, **fields}))
            while True:
                msg = decode(await ws.get_message())
                if msg.get("re") == rid and msg["type"] != "view":
                    break
                await self._on_push(ws, msg)
            if msg["type"] != "error":
                return msg
            err = ServerError(msg)
            if err.code != "unavailable":
                raise err
            await unavailable.wait(err, self.url)

    async def _session(self, ws: WebSocketConnection, unavailable: Unavailable | None = None) -> None:
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
            if self.reconnects and self.result is None:
                self.say(f"{self.name}: seat {self.seat.seat} at table {self.seat.table} resumed")
            if self._unanswered is not None:  # its answer was lost: the same key gets the first answer, or applies it
                self._in_flight = next(self._ids)
                await ws.send_message(encode({"type": "act", "id": self._in_flight, **self._unanswered}))
        if unavailable is not None:
            unavailable.reset()
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
            if not self.started:
                self._say_waiting(msg["view"])
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
            if kind == "error" and msg.get("code") == "unavailable":
                raise ServerError(msg)  # ``run`` backs off, resumes, and sends it again with the same key
            command = (self._unanswered or {}).get("command", {})
            self._in_flight = self._unanswered = None
            if kind == "error":
                self.refusals += 1
                self._refused(command, ServerError(msg))

    def _refused(self, command: dict[str, Any], err: ServerError) -> None:
        if self.on_refused is not None:
            self.on_refused(command, err)
            return
        reason = f" ({err.reason})" if err.reason else ""
        self.say(f"{self.name}: the server refused {command.get('type', 'a command')} {_brief(command)}: "
                 f"{err.code}{reason}: {err.message}")

    def _say_waiting(self, view: dict[str, Any]) -> None:
        """One line each time the count of seats taken at the waiting table changes."""
        seats = view.get("seat_count")
        taken = len(view.get("seats") or ())
        if not isinstance(seats, int) or self.seat is None or (taken, seats) == self._waiting_seen:
            return
        self._waiting_seen = (taken, seats)
        self.say(f"{self.name}: seat {self.seat.seat} at table {self.seat.table}: waiting for players, "
                 f"{taken} of {seats} seats taken")


def _brief(command: dict[str, Any]) -> str:
    """A command's fields but its type, for a line: ``{'auction': 3, 'amount': 0}``."""
    return str({k: v for k, v in command.items() if k != "type"})


def _why(exc: BaseException) -> str:
    if isinstance(exc, ConnectionClosed) and exc.reason is not None:
        return f"close {exc.reason.code}"
    return type(exc).__name__ if not str(exc) else str(exc)[:120]


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
    """Play one game with ``player`` and return the table's result. ``options``: see ``BotSession`` (``game``,
    ``table``, ``token``, ``name``, ``seats``, ``create_options``, ``on_refused``...). ``url``, ``table`` and
    ``token`` left out (or None) come from ``seat_options()``, so a bot started by a tournament director takes the
    seat it was given. ``BadUrl`` for a URL that is not ``ws://HOST:PORT``."""
    seat = seat_options()
    options = {**options, **{k: seat[k] for k in ("table", "token") if options.get(k) is None}}
    return await BotSession(url or seat["url"], player, **options).run()


async def stop_on_signals(run: Callable[[], Awaitable[T]]) -> T:
    """``run()``, cancelled by SIGTERM or SIGHUP as Ctrl-C would (a bot stopped before the start gives its seat
    back), then ``Stopped``. A signal the process ignores (``nohup``) stays ignored; off the main thread, where no
    signal arrives, ``run()`` alone."""
    wanted = [s for s in (signal.SIGTERM, signal.SIGHUP) if signal.getsignal(s) is not signal.SIG_IGN]
    if threading.current_thread() is not threading.main_thread() or not wanted:
        return await run()
    got: list[int] = []
    out: list[T] = []
    with trio.open_signal_receiver(*wanted) as signals:
        try:
            async with trio.open_nursery() as nursery:
                async def watch() -> None:
                    async for signum in signals:
                        got.append(signum)
                        nursery.cancel_scope.cancel()
                        return

                nursery.start_soon(watch)
                out.append(await run())
                nursery.cancel_scope.cancel()
        except BaseExceptionGroup as group:  # what ``run()`` raised, as it would have without this wrapper
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise
    if got:
        raise Stopped(got[0])
    return out[0]


def play(player: Player, url: str | None = None, **options: Any) -> dict[str, Any]:
    """``run_bot`` for a script: run it under trio and return the result. Ctrl-C, SIGTERM or SIGHUP (a closed
    terminal), no server at the URL, a URL that is not ``ws://``, or a refusal of the seat end the script with
    one line on stderr and an exit status (130, 143, 129, 1, 2, 1) instead of a traceback."""
    try:
        return trio.run(lambda: stop_on_signals(lambda: run_bot(url, player, **options)))
    except BaseException as exc:
        explained = explain(exc, url or seat_options()["url"])
        if explained is None:
            raise
        line, status = explained
        print(line, file=sys.stderr)
        raise SystemExit(status) from None


def explain(exc: BaseException, url: str) -> tuple[str, int] | None:
    """``(line, exit status)`` for what stops a bot that is no bug in it: a stop, no server, a bad URL, a refusal of
    its seat; None for anything else."""
    found = _leaves(exc)
    if any(isinstance(e, KeyboardInterrupt) for e in found):
        return "stopped (Ctrl-C)", 130
    for e in found:
        if isinstance(e, Stopped):
            return str(e), 128 + e.signum
        if isinstance(e, BadUrl):
            return str(e), 2
        if isinstance(e, (HandshakeError, OSError)):
            return f"no Parsimonia server answers at {url}: start one (parsimonia serve) or give --url", 1
        if isinstance(e, ConnectionClosed):
            return f"the server at {url} closed the connection ({_why(e)}): it stopped, or dropped this bot", 1
        if isinstance(e, ServerError):
            reason = f" ({e.reason})" if e.reason else ""
            return f"the server at {url} refused: {e.code}{reason}: {e.message}", 1
    return None


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
        events = msg["events"]
        assert isinstance(events, list)  # the SPEC's history reply: a list of event maps, an int "next" or none
        for entry in events:
            assert isinstance(entry, dict)
            yield {"type": "event", "table": table, **entry}
        if "next" not in msg:
            return
        after_next = msg["next"]
        assert isinstance(after_next, int)
        after = after_next
        rid += 1


async def request_once(url: str, kind: str, client: str = "parsimonia-sdk", *, retry_unavailable: bool = True,
                       say: Callable[[str], None] = say_on_stderr, **fields: Any) -> dict[str, Any]:
    """Connect, say hello, send one request and return its reply (e.g. ``create`` or ``tables``); on a cluster,
    follow ``moved`` to the worker holding the table (at most ``MAX_REDIRECTS``). A request answered
    ``unavailable`` is sent again after a backoff (``Unavailable``; one line to ``say`` each), unless
    ``retry_unavailable`` is False."""
    unavailable = Unavailable(say, client)
    redirects = 0
    while True:
        async with open_websocket_url(check_url(url)) as ws:
            try:
                await call(ws, "hello", version=PROTOCOL_VERSION, client=client)
                return await call(ws, kind, **fields)
            except ServerError as err:
                if err.code == "unavailable" and retry_unavailable:
                    await unavailable.wait(err, url)
                    continue
                if err.code != "moved" or not isinstance(err.url, str) or redirects >= MAX_REDIRECTS:
                    raise
                redirects += 1
                url = err.url
