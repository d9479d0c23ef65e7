"""The message catalogue: what a client may send, and builders for everything the server sends.

``parse_client`` checks a decoded client map against ``CLIENT_MESSAGES``. The reply builders check what
they build against ``SERVER_REPLIES`` / ``SERVER_PUSHES``, so the server never writes an envelope by
hand and never sends a field that ``protocol/SPEC.md`` does not describe. The pushes a table sends on
every step (``event``, ``view``) are built without a check, on the hot path (``protocol.frames``); the
tests hold every frame to the same catalogue with ``check_server``.
"""

from __future__ import annotations

from dataclasses import asdict, fields
from functools import lru_cache
from typing import Literal, NotRequired, TypedDict
from protocol.codec import Limits
from protocol.errors import ProtocolError
from protocol.schema import AnyMap, Bool, Enum, Float, Int, List, Nullable, Pattern, Record, SchemaError, Spec, Str
from protocol.values import Map, Message, ReadMap, Value

PROTOCOL_VERSION = 2  # the shape SPEC.md describes; a change of shape changes it (SPEC.md's change log)
VERSIONS_SPOKEN = (PROTOCOL_VERSION,)

MAX_SEATS = 16
MAX_LISTED_TABLES = 1024
MAX_ERROR_MESSAGE = 512
HISTORY_PAGE = 256  # events in one `history` answer at most (and never more than HISTORY_PAGE_BYTES)
HISTORY_PAGE_BYTES = 60_000  # under the smallest frame limit a client may have (SPEC.md: 64 KiB)
REPLAY_PAGE = 256  # steps in one `replay` answer at most (and never more than HISTORY_PAGE_BYTES)
MAX_LISTED_RATINGS = 256  # ladder rows in one `ratings` answer (about 120 bytes each: well under 64 KiB)

REQUEST_ID = Int(0, 2**31 - 1)
# a table's id: t7, or on a cluster w2-t7 (worker 2's: server/cluster/names.py); ASCII digits only, no leading zero
TABLE = Pattern(64, r"(?:w[1-9][0-9]*-)?t[1-9][0-9]*", "table id (t7; w2-t7 on a cluster)")
GAME = Str(32, min_len=1)
SEAT = Int(0, MAX_SEATS - 1)
MILLIS = Int(0, 2**63 - 1)
MAX_RTT_MS = 2**31 - 1
RTT = Int(0, MAX_RTT_MS)  # a round trip the server timed, in ms
ADMIN_TOKEN = Str(256, min_len=1)
# The request kinds, each spelled here once: the server's router (server/connection.py), the table's session
# (server/session.py) and SPEC.md's check (tests/protocol) read them from here.
TABLE_REQUESTS = ("join", "watch", "leave", "resume", "act", "view")  # client messages a table handles
TABLE_ADMIN = {"pause": "pause_clocks", "unpause": "unpause_clocks", "close": "close_table"}  # action -> the
# table's request it becomes (an organiser's, with the admin token: only `admin` carries them)
SERVER_ADMIN = ("kick", "connections", "publish")  # admin actions the server answers itself
ADMIN_ACTIONS = (*TABLE_ADMIN, *SERVER_ADMIN)
TOPIC = Str(64, min_len=1)
CONNECTION_SUMMARY = Record(
    {
        "conn": Int(1, 2**62),
        "peer": Str(128),
        "client": Str(64),
        "tables": List(TABLE, 1024),
        "seats": List(Record({"table": TABLE, "seat": SEAT, "name": Str(64, min_len=1)}), 1024),
    },
    {"rtt_ms": RTT, "rtt_last_ms": RTT},
)


class SeatHeld(TypedDict):
    table: str
    seat: int
    name: str


class ConnectionSummary(TypedDict):
    """A row of the ``connections`` reply (``CONNECTION_SUMMARY``): a connection as the organiser lists it."""

    conn: int
    peer: str
    client: str
    tables: list[str]
    seats: list[SeatHeld]
    rtt_ms: NotRequired[int]  # once the server has timed a round trip
    rtt_last_ms: NotRequired[int]


def _request(required: dict[str, Spec] | None = None, optional: dict[str, Spec] | None = None) -> Record:
    return Record(required or {}, {"id": REQUEST_ID, **(optional or {})})


CLIENT_MESSAGES: dict[str, Record] = {
    "hello": _request({"version": Int(0, 2**31 - 1), "client": Str(64)}),
    "tables": _request(),
    "create": _request(
        {"game": GAME, "seats": Int(1, MAX_SEATS)},
        {"seed": Int(0, 2**63 - 1), "time_scale": Float(0.001, 10000), "options": AnyMap(32), "admin": ADMIN_TOKEN,
         "rated": Bool()},
    ),
    "join": _request({"table": TABLE, "name": Str(64, min_len=1)},
                     {"views": Bool(), "key": Str(64, min_len=16), "entrant_key": Str(64, min_len=16)}),
    "watch": _request({"table": TABLE}, {"views": Bool()}),
    "leave": _request({"table": TABLE}),
    "resume": _request(
        {"table": TABLE, "token": Str(128, min_len=1), "last_seq": Int(0, 2**62)}, {"views": Bool()}
    ),
    "act": _request({"table": TABLE, "command": AnyMap(32)}, {"key": Str(64, min_len=1)}),
    "view": _request({"table": TABLE}),
    "history": _request({"table": TABLE, "after": Int(0, 2**62)}, {"limit": Int(1, HISTORY_PAGE)}),
    "ping": _request(),
    "admin": _request(
        {"token": ADMIN_TOKEN, "action": Enum(ADMIN_ACTIONS)},
        {"table": TABLE, "conn": Int(1, 2**62), "topic": TOPIC, "data": AnyMap(256), "hold": Bool()},
    ),
    "bulletin": _request({"topic": TOPIC}, {"follow": Bool()}),
    "ratings": _request(optional={"game": GAME}),
    "replay": _request({"table": TABLE, "after": Int(0, 2**62)}, {"limit": Int(1, REPLAY_PAGE)}),
}


def _reply(required: dict[str, Spec] | None = None, optional: dict[str, Spec] | None = None) -> Record:
    return Record(required or {}, {"re": REQUEST_ID, **(optional or {})})


HISTORY_ENTRY = Record({"seq": Int(1, 2**62), "time": MILLIS, "event": AnyMap(256)})
REPLAY_STEP = Record({"seq": Int(1, 2**62), "time": MILLIS, "event": AnyMap(256)},
                     {"view": AnyMap(256), "private": List(Nullable(AnyMap(256)), MAX_SEATS)})
STATIC = AnyMap(64)  # a game's static part: what never changes during the game (protocol.views)

RATING_ROW = Record({
    "entrant": Str(64, min_len=1),
    "game": GAME,
    "mu": Float(-1e9, 1e9),
    "sigma": Float(0, 1e9),
    "ordinal": Float(-1e9, 1e9),
    "games": Int(0, 2**62),
    "last_played": Str(32, min_len=1),
})

TABLE_SUMMARY = Record(
    {
        "table": TABLE,
        "game": GAME,
        "seats": Int(1, MAX_SEATS),
        "taken": Int(0, MAX_SEATS),
        "state": Enum(("waiting", "running", "over")),
        "spectators": Int(0, 2**31 - 1),
        "paused": Bool(),
    },
    {"seeded": Bool(), "expires": MILLIS},
)



class TableSummary(TypedDict):
    """A row of the ``tables`` reply (``TABLE_SUMMARY``): a table as the lobby lists it."""

    table: str
    game: str
    seats: int
    taken: int
    state: Literal["waiting", "running", "over"]
    spectators: int
    paused: bool
    seeded: NotRequired[Literal[True]]  # its creator chose the seed
    expires: NotRequired[int]  # when a table still waiting ends if nobody joins (server ms)


class Answer(TypedDict):
    """What an ``ok`` to a command says it made (``server.match``): the seq of its first event, how many events it
    made, and the ids of what it created, by kind."""

    seq: int
    events: int
    created: NotRequired[dict[str, int]]


class Ok(Answer):
    """The ``ok`` to a command (``ok``)."""

    type: Literal["ok"]
    re: NotRequired[int]


SERVER_REPLIES: dict[str, Record] = {
    "welcome": _reply(
        {
            "version": Int(PROTOCOL_VERSION, PROTOCOL_VERSION),
            "versions": List(Int(1, 2**31 - 1), 16),
            "server_time": MILLIS,
            "limits": Record({limit.name: Int(0, 2**31 - 1) for limit in fields(Limits)}),
            "games": List(GAME, 256),
        },
        {"display": AnyMap(256)},
    ),
    "tables": _reply({"tables": List(TABLE_SUMMARY, MAX_LISTED_TABLES)}, {"away": List(Int(1, 999_999), 1024)}),
    "created": _reply({"table": TABLE}),
    "joined": _reply({"table": TABLE, "seat": SEAT, "token": Str(128, min_len=1), "game": GAME, "static": STATIC}),
    "watching": _reply({"table": TABLE, "game": GAME, "static": STATIC}),
    "left": _reply({"table": TABLE}),
    "resumed": _reply({"table": TABLE, "seat": SEAT, "game": GAME, "static": STATIC},
                      {"last_seq": Int(0, 2**62), "replayed": Int(0, 2**62), "lost": Int(1, 2**62),
                       "capped": Bool()}),
    "ok": _reply(optional={"seq": Int(0, 2**62), "events": Int(0, 2**31 - 1), "created": AnyMap(8)}),
    "history": _reply({"table": TABLE, "last_seq": Int(0, 2**62), "events": List(HISTORY_ENTRY, HISTORY_PAGE)},
                      {"next": Int(0, 2**62), "skipped": Int(1, 2**62)}),
    "connections": _reply({"connections": List(CONNECTION_SUMMARY, 100_000)}),
    "bulletin": _reply({"topic": TOPIC, "version": Int(0, 2**62), "data": Nullable(AnyMap(256))}),
    "pong": _reply({"server_time": MILLIS}, {"rtt_ms": RTT, "rtt_last_ms": RTT}),
    "ratings": _reply({"ratings": List(RATING_ROW, MAX_LISTED_RATINGS), "total": Int(0, 2**62)}),
    "replay": _reply({"table": TABLE, "game": GAME, "last_seq": Int(0, 2**62), "steps": List(REPLAY_STEP, REPLAY_PAGE)},
                     {"next": Int(0, 2**62), "static": STATIC}),
}

SERVER_PUSHES: dict[str, Record] = {
    "event": Record({"table": TABLE, "seq": Int(1, 2**62), "time": MILLIS, "event": AnyMap(256)}),
    "view": Record(
        {
            "table": TABLE,
            "seq": Int(0, 2**62),
            "time": MILLIS,
            "seat": Nullable(SEAT),
            "view": AnyMap(256),
            "legal": List(AnyMap(32), 1024),
        },
        {"re": REQUEST_ID, "private": AnyMap(256)},
    ),
    "error": Record(
        {"code": Str(32, min_len=1), "message": Str(MAX_ERROR_MESSAGE)},
        {"re": REQUEST_ID, "reason": Str(64, min_len=1), "table": TABLE, "url": Str(256, min_len=1)},
    ),
}


def parse_client(obj: ReadMap) -> Message:
    """Check a decoded client map; return ``{"type": ..., **fields}`` or raise ``ProtocolError``."""
    if "type" not in obj:
        raise ProtocolError("missing_field", "type: required field is missing")
    kind = obj["type"]
    if not isinstance(kind, str):
        raise ProtocolError("bad_field", f"type: expected a string, got {type(kind).__name__}")
    spec = CLIENT_MESSAGES.get(kind)
    if spec is None:
        raise ProtocolError("unknown_type", f"type: unknown message type {kind!r}")
    try:
        checked = spec.check({key: value for key, value in obj.items() if key != "type"})
    except SchemaError as exc:
        raise ProtocolError.from_schema(exc) from None
    return {"type": kind, **checked}


def request_id(obj: ReadMap) -> int | None:
    """The message's ``id`` if it is a valid one, so even a refused request gets its ``re``."""
    try:
        return REQUEST_ID.check(obj.get("id"), "id")
    except SchemaError:
        return None


def _build(kind: str, spec: Record, body: Map, re: int | None) -> Message:
    if re is not None:
        body["re"] = re
    return {"type": kind, **spec.check(body)}


def reply(kind: str, re: int | None, **body: Value) -> Message:
    """A direct reply (``tables``, ``created``, ``joined``, ``watching``, ``left``, ``resumed``, ``ok``, ...)."""
    return _build(kind, SERVER_REPLIES[kind], body, re)


def ok(re: int | None, answer: Answer) -> Ok:
    """The ``ok`` to a command, built without a pass of the schema: it is the hot path's reply, and ``answer`` is
    the match's own (``server.match``), which the tests check against ``SERVER_REPLIES["ok"]``."""
    return {"type": "ok", **answer} if re is None else {"type": "ok", "re": re, **answer}


def welcome(*, re: int | None, server_time: int, limits: Limits, display: dict[str, dict[str, str]]) -> Message:
    """``display``: each game the server runs, by name, with what a client shows of it (its title, its currency)."""
    return reply(
        "welcome", re, version=PROTOCOL_VERSION, versions=list(VERSIONS_SPOKEN), server_time=server_time,
        limits=dict(_limits_map(limits)), games=sorted(display), display=display
    )


@lru_cache(maxsize=8)
def _limits_map(limits: Limits) -> Map:
    """``limits`` as the map ``welcome`` sends, made once per value (``asdict`` is most of a ``welcome``'s cost)."""
    return asdict(limits)


def pong(*, re: int | None, server_time: int, **round_trip: int) -> Message:
    """``round_trip``: the connection's ``rtt_ms`` and ``rtt_last_ms``, once the server has timed one."""
    return reply("pong", re, server_time=server_time, **round_trip)


def error(err: ProtocolError, *, re: int | None = None, table: str | None = None) -> Message:
    """The error reply for ``err``; a message longer than ``MAX_ERROR_MESSAGE`` is cut short.

    ``table`` must be an id that passed ``parse_client``: the builder checks it like any other field.
    """
    body: Map = {"code": err.code, "message": err.message[:MAX_ERROR_MESSAGE]}
    if err.reason is not None:
        body["reason"] = err.reason
    if err.url is not None:
        body["url"] = err.url
    if table is not None:
        body["table"] = table
    return _build("error", SERVER_PUSHES["error"], body, re)


def check_server(msg: Message) -> Message:
    """Check a decoded server message against the catalogue (for tests: the hot path does not)."""
    kind = msg.get("type")
    spec = (SERVER_REPLIES.get(kind) or SERVER_PUSHES.get(kind)) if isinstance(kind, str) else None
    if spec is None:
        raise SchemaError("unknown_type", "type", f"the server has no message {kind!r}")
    spec.check({k: v for k, v in msg.items() if k != "type"})
    return msg
