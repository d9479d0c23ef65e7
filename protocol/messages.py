"""The message catalogue: what a client may send, and builders for everything the server sends.

``decode_client`` turns a client's frame into its typed message (``protocol.client_messages``), refusing it with
the words of ``parse_client``, which checks a decoded map against ``CLIENT_MESSAGES`` (read from those structs).
The reply builders check what they build against
``SERVER_REPLIES`` / ``SERVER_PUSHES``, so the server never writes an envelope by hand and never sends a field that
``protocol/SPEC.md`` does not describe. The pushes a table sends on every step (``event``, ``view``) are built
without a check, on the hot path (``protocol.frames``); the tests hold every frame to the same catalogue with
``check_server``.
"""

from __future__ import annotations

from dataclasses import asdict, fields
from functools import lru_cache
from typing import Literal, NotRequired, TypedDict, TypeVar

import msgspec

from protocol import client_messages as catalogue
from protocol.client_messages import (  # noqa: F401 (spelled there once, read from here too)
    ADMIN_ACTIONS,
    HISTORY_PAGE,
    MAX_SEATS,
    REPLAY_PAGE,
    SERVER_ADMIN,
    TABLE_ADMIN,
    TABLE_REQUESTS,
    AnyClientMessage,
    ClientMessage,
)
from protocol.codec import Limits, check_part, decode
from protocol.errors import ProtocolError
from protocol.schema import AnyMap, Bool, Enum, Float, Int, List, Nullable, Record, SchemaError, Spec, Str
from protocol.values import Map, ReadMap

PROTOCOL_VERSION = 2  # the shape SPEC.md describes; a change of shape changes it (SPEC.md's change log)
VERSIONS_SPOKEN = (PROTOCOL_VERSION,)

MAX_LISTED_TABLES = 1024
MAX_ERROR_MESSAGE = 512
HISTORY_PAGE_BYTES = 60_000  # under the smallest frame limit a client may have (SPEC.md: 64 KiB)
MAX_LISTED_RATINGS = 256  # ladder rows in one `ratings` answer (about 120 bytes each: well under 64 KiB)

REQUEST_ID = catalogue.spec_of(catalogue.RequestId)
# a table's id: t7, or on a cluster w2-t7 (worker 2's: server/cluster/names.py); ASCII digits only, no leading zero
TABLE = catalogue.spec_of(catalogue.TableId)
GAME = catalogue.spec_of(catalogue.GameName)
SEAT = Int(0, MAX_SEATS - 1)
MILLIS = Int(0, 2**63 - 1)
MAX_RTT_MS = 2**31 - 1
RTT = Int(0, MAX_RTT_MS)  # a round trip the server timed, in ms
TOPIC = catalogue.spec_of(catalogue.Topic)
# The request kinds are spelled once, in protocol.client_messages: the server's router (server/runtime/requests.py), the
# table's session (server/core/session.py) and SPEC.md's check (tests/protocol) read them from there.
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


CLIENT_MESSAGES: dict[str, Record] = {kind: catalogue.record_of(cls) for kind, cls in catalogue.KINDS.items()}


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
    """What an ``ok`` to a command says it made (``server.core.match``): the seq of its first event, how many events it
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


def parse_client(obj: ReadMap) -> Map:
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
        found: int | None = REQUEST_ID.check(obj.get("id"), "id")
        return found
    except SchemaError:
        return None


_TYPED = msgspec.msgpack.Decoder(AnyClientMessage)
M = TypeVar("M", bound=ClientMessage)


def decode_client(frame: bytes | str, limits: Limits) -> AnyClientMessage:
    """One client frame to its typed message, or ``ProtocolError`` (``re``: the refused message's id, when it has a
    valid one).

    The typed decoder only accepts: a frame it takes is one ``codec.decode`` and ``parse_client`` take too (short
    enough for no size limit to bite, its free-form map walked as the codec walks it). Whatever it does not take
    goes the reference way, which accepts it or words the refusal, so every code and message is that path's."""
    if type(frame) is bytes and len(frame) <= limits.unbounded_below:
        try:
            msg = _TYPED.decode(frame)
        except (msgspec.DecodeError, ValueError):  # a field out of its bounds, nesting past msgspec's own, ...
            pass
        else:
            part = catalogue.FREE_FORM.get(type(msg))
            value = None if part is None else getattr(msg, part)
            if type(value) is not dict:
                return msg
            try:
                check_part(value, catalogue.FREE_FORM_DEPTH, limits)
                return msg
            except ProtocolError:
                pass
    return parse_message(decode(frame, limits))


def parse_message(raw: ReadMap) -> AnyClientMessage:
    """A decoded client map to its typed message, checked against the catalogue (``parse_client``'s refusals, with
    ``re`` set)."""
    try:
        checked = parse_client(raw)
    except ProtocolError as err:
        err.re = request_id(raw)
        raise
    typed: AnyClientMessage = msgspec.convert(checked, AnyClientMessage)
    return typed


def parse_as(kind: type[M], raw: ReadMap) -> M:
    """``raw`` as a message of ``kind`` (a map relayed between workers, say), or ``ProtocolError``."""
    msg = parse_message(raw)
    if not isinstance(msg, kind):
        raise ProtocolError("bad_field", f"type: expected {kind.__struct_config__.tag}")
    return msg


def as_map(msg: ClientMessage) -> Map:
    """``msg`` as the map ``parse_client`` gives (its ``type`` and the fields it carries; a field at its default may
    be left out), for what still takes maps (the table's requests, a cluster's relay)."""
    built: Map = msgspec.to_builtins(msg)
    return built


def _build(kind: str, spec: Record, body: dict[str, object], re: int | None) -> Map:
    if re is not None:
        body["re"] = re
    return {"type": kind, **spec.check(body)}


def reply(kind: str, re: int | None, **body: object) -> Map:
    """A direct reply (``tables``, ``created``, ``joined``, ``watching``, ``left``, ``resumed``, ``ok``, ...); its
    fields may be any values (a ``TypedDict`` row, say): the catalogue checks them, whatever their static type."""
    return _build(kind, SERVER_REPLIES[kind], body, re)


def ok(re: int | None, answer: Answer) -> Ok:
    """The ``ok`` to a command, built without a pass of the schema: it is the hot path's reply, and ``answer`` is
    the match's own (``server.core.match``), which the tests check against ``SERVER_REPLIES["ok"]``."""
    reply: Ok = {"type": "ok", "seq": answer["seq"], "events": answer["events"]} if re is None else \
        {"type": "ok", "re": re, "seq": answer["seq"], "events": answer["events"]}
    if "created" in answer:
        reply["created"] = answer["created"]
    return reply


def welcome(*, re: int | None, server_time: int, limits: Limits, display: dict[str, dict[str, str]]) -> Map:
    """``display``: each game the server runs, by name, with what a client shows of it (its title, its currency)."""
    return reply(
        "welcome", re, version=PROTOCOL_VERSION, versions=list(VERSIONS_SPOKEN), server_time=server_time,
        limits=dict(_limits_map(limits)), games=sorted(display), display=display
    )


@lru_cache(maxsize=8)
def _limits_map(limits: Limits) -> Map:
    """``limits`` as the map ``welcome`` sends, made once per value (``asdict`` is most of a ``welcome``'s cost)."""
    return asdict(limits)


def pong(*, re: int | None, server_time: int, **round_trip: int) -> Map:
    """``round_trip``: the connection's ``rtt_ms`` and ``rtt_last_ms``, once the server has timed one."""
    return reply("pong", re, server_time=server_time, **round_trip)


def error(err: ProtocolError, *, re: int | None = None, table: str | None = None) -> Map:
    """The error reply for ``err``; a message longer than ``MAX_ERROR_MESSAGE`` is cut short.

    ``table`` must be an id that passed ``parse_client``: the builder checks it like any other field.
    """
    body: dict[str, object] = {"code": err.code, "message": err.message[:MAX_ERROR_MESSAGE]}
    if err.reason is not None:
        body["reason"] = err.reason
    if err.url is not None:
        body["url"] = err.url
    if table is not None:
        body["table"] = table
    return _build("error", SERVER_PUSHES["error"], body, re)


def check_server(msg: Map) -> Map:
    """Check a decoded server message against the catalogue (for tests: the hot path does not)."""
    kind = msg.get("type")
    spec = (SERVER_REPLIES.get(kind) or SERVER_PUSHES.get(kind)) if isinstance(kind, str) else None
    if spec is None:
        raise SchemaError("unknown_type", "type", f"the server has no message {kind!r}")
    spec.check({k: v for k, v in msg.items() if k != "type"})
    return msg
