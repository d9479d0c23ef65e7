"""What workers ask of each other, over Redis pub/sub.

A worker publishes ``{"op": ..., "reply": KEY, ...}`` on the asked worker's inbox; the asked worker carries it out
and pushes its answer onto the list ``KEY``, on which the asker waits at most ``ASK_TIMEOUT_MS``. The operations:
``create`` (a table on the least loaded healthy worker, with the asker's address and its place under the cluster's
cap; unanswered, or ``unavailable`` from a sick worker, the asker creates it itself), ``admin`` (pause, unpause or
close a table there; the asker checked the token), ``kick`` (close a connection held there) and ``connections``
(its listing; a worker that does not answer in time is left out, and logged).

Two broadcasts: a new table (``names.CHANGES``) and a bulletin (``names.BULLETINS``). Redis is trusted (reachable
by the cluster only), yet every message read from it is checked as a client's, and a bad one logged and dropped.
"""

from __future__ import annotations

import json
import secrets
from typing import Any, Literal, NotRequired, TypedDict

import trio
from coredis import Redis
from coredis.exceptions import RedisError

from protocol import messages
from protocol.client_messages import Create
from protocol.codec import decode
from protocol.errors import ERROR_CODES, ProtocolError
from protocol.schema import AnyMap, Int, List, SchemaError, Str
from protocol.values import Map, Message, Options, ReadMap
from server.ops import logs
from server.runtime import requests
from server.cluster import caps, names
from server.cluster.directory import Directory, sick
from server.games.fields import as_map, int_field, int_or_none, maps_field, number_or, str_field, strs_field
from server.runtime.ports import ConnectionPort, ServerPort
from server.runtime.table import Request, Table

ASK_TIMEOUT_MS = 3000
REPLY_KEPT_S = 10  # an answer nobody took (the asker gave up) is gone after this
RESUBSCRIBE_MS = 1000  # the wait before subscribing again after Redis went away
_BULLETIN_DATA = AnyMap(256)
_CONNECTIONS = List(messages.CONNECTION_SUMMARY, 100_000)
_CONN_ID = Int(1, 2**62)
_ADDRESS = Str(64, min_len=1)
_PLACE = Str(32, min_len=1)


# What one worker asks another (``reply``, the key to answer on, is added as it goes out).
class CreateAsk(TypedDict):
    op: Literal["create"]
    game: str
    seats: int
    seed: NotRequired[int]
    time_scale: NotRequired[float]
    options: NotRequired[Options]
    address: NotRequired[str]  # the asking client's, held to the cluster's waiting-table cap
    place: NotRequired[str]  # its place under that cap (``caps``), kept by the worker that holds the table


class AdminAsk(TypedDict):
    op: Literal["admin"]
    action: str  # one of messages.TABLE_ADMIN
    table: str


class KickAsk(TypedDict):
    op: Literal["kick"]
    conn: int


class ConnectionsAsk(TypedDict):
    op: Literal["connections"]


Ask = CreateAsk | AdminAsk | KickAsk | ConnectionsAsk


# What the asked worker answers.
class Created(TypedDict):
    table: str


class Refused(TypedDict):
    """An error as ``_error_of`` reads it back: a protocol error code and its message."""

    code: str
    message: str


class Frame(TypedDict):
    """The table's or the server's own reply (``ok`` or ``error``), as a client would have been sent it."""

    frame: Message


class Connections(TypedDict):
    connections: list[messages.ConnectionSummary]


Answer = Created | Refused | Frame | Connections


# a bulletin set on worker "from", broadcast on names.BULLETINS ("from" is a keyword: the functional form)
BulletinNote = TypedDict("BulletinNote", {"from": int, "topic": str, "data": Map})


class Relay:
    def __init__(self, worker: int, directory: Directory, server: ServerPort) -> None:
        assert server.lobby is not None
        self.worker = worker
        self.directory = directory
        self.server = server
        self.lobby = server.lobby
        self.redis: Redis | None = None  # None while the worker has no client (Redis gone, being reconnected)
        self.places = caps.Places(self.lobby)
        self.log = logs.get(worker=worker)

    # -- asked by this worker's connections (never waiting: the asking runs in a task of its own)

    def create_elsewhere(self, conn: ConnectionPort, msg: Message, re: int | None) -> bool:
        """Take on ``create`` while Redis answers: a place under the cluster's waiting-table cap for the asking
        address (not the organiser's), then the table on the least-loaded healthy worker (this one, if it is that
        or no other is healthy). False: Redis is away, create it here (this worker's own count is the cap)."""
        if self.redis is None or not self.directory.reachable:
            return False
        admin = msg.get("admin")
        address = None if self.server.is_admin(admin if isinstance(admin, str) else None) else conn.address
        target = self.directory.least_loaded(len(self.lobby.live), healthy_here=sick(self.server) is None)
        if target is None and address is None:
            return False
        self.lobby.nursery.start_soon(self._create_via, conn, target, msg, re, address)
        return True

    def forward_admin(self, conn: ConnectionPort, msg: Message, re: int | None) -> bool:
        """Send the organiser's pause, unpause or close of a table another worker holds to that worker."""
        table, action = msg.get("table"), msg.get("action")
        if not isinstance(table, str) or not isinstance(action, str):
            return False
        worker = names.worker_of(table)
        if worker is None or worker == self.worker or action not in messages.TABLE_ADMIN:
            return False
        ask: AdminAsk = {"op": "admin", "action": action, "table": table}
        self.lobby.nursery.start_soon(self._admin_via, conn, worker, ask, re)
        return True

    def forward_kick(self, conn: ConnectionPort, msg: Message, re: int | None) -> bool:
        """Send the organiser's kick of a connection another worker holds to that worker."""
        target = msg.get("conn")
        if not isinstance(target, int):
            return False
        worker = names.worker_of_connection(target)
        if worker in (0, self.worker):
            return False
        ask: KickAsk = {"op": "kick", "conn": target}
        self.lobby.nursery.start_soon(self._admin_via, conn, worker, ask, re)
        return True

    async def connections(self) -> list[messages.ConnectionSummary]:
        """Every worker's connections: this one's, and those of each live worker that answers in time."""
        listing = [c.summary() for c in self.server.connections.values()]
        answers: dict[int, Map | None] = {}

        async def ask(worker: int) -> None:
            answers[worker] = await self._ask(worker, {"op": "connections"})

        async with trio.open_nursery() as nursery:
            for worker in self.directory.peers:
                nursery.start_soon(ask, worker)
        for worker, answer in sorted(answers.items()):
            try:
                theirs = _CONNECTIONS.check(None if answer is None else answer.get("connections"), "connections")
            except SchemaError as exc:
                self.log.warning("connections_not_listed", worker=worker, why=str(exc)[:200])
                continue
            rows = [_summary(as_map(row, "connections")) for row in theirs]
            listing.extend(c for c in rows if names.worker_of_connection(c["conn"]) == worker)
        return listing

    def publish(self, topic: str, data: Map) -> None:
        """A bulletin set here goes to every other worker too."""
        if self.redis is not None:
            bulletin: BulletinNote = {"from": self.worker, "topic": topic, "data": data}
            note = json.dumps(bulletin)
            self.lobby.nursery.start_soon(self._publish, names.BULLETINS, note)

    async def _create_via(self, conn: ConnectionPort, target: int | None, msg: Message, re: int | None,
                          address: str | None) -> None:
        place = None
        if address is not None and self.redis is not None:
            place = caps.new_place()
            reserved = await caps.reserve(self.redis, address, self.lobby.waiting_per_address, place)
            if reserved is False:
                conn.send(messages.error(ProtocolError("rate_limited", "an address may have at most "
                          f"{self.lobby.waiting_per_address} tables it created waiting for players at once on "
                          "this cluster"), re=re))
                return
            if reserved is None:
                place = None  # Redis did not answer: this worker's own count decides
        if target is not None:
            fields = {k: v for k, v in msg.items() if k not in ("type", "id", "admin")}  # the table's own
            if address is not None and place is not None:
                fields.update(address=address, place=place)
            answer = await self._ask(target, {"op": "create", **fields})
            if answer is not None and answer.get("code") != "unavailable":
                table = answer.get("table")
                if isinstance(table, str) and names.worker_of(table) == target:
                    conn.log.info("table_created", table=table, worker=target)
                    conn.send(messages.reply("created", re, table=table))
                    return
                conn.send(messages.error(_error_of(answer), re=re))
            else:  # the chosen worker did not answer, or is sick: the table goes here after all
                self.log.warning("create_not_answered" if answer is None else "create_refused_unavailable",
                                 target=target)
                self._create_here(conn, msg, re, address, place)
                return
        else:
            self._create_here(conn, msg, re, address, place)
            return
        if address is not None and place is not None:
            self.places.give_back(address, place)

    def _create_here(self, conn: ConnectionPort, msg: Message, re: int | None, address: str | None,
                     place: str | None) -> None:
        """The table on this worker (its own count of the address's waiting tables applies too)."""
        table: Table | None = None
        tracked = address is not None and place is not None
        try:
            before = set(self.lobby.live) if tracked else set()
            requests.create_here(conn, messages.parse_as(Create, dict(msg)), re)
            table = next((self.lobby.live[t] for t in set(self.lobby.live) - before), None) if tracked else None
        except ProtocolError as err:
            conn.send(messages.error(err, re=re))
        if address is not None and place is not None:
            if table is None:
                self.places.give_back(address, place)
            else:
                self.places.hold(table.id, address, place)

    async def _admin_via(self, conn: ConnectionPort, worker: int, ask: AdminAsk | KickAsk, re: int | None) -> None:
        answer = await self._ask(worker, ask)
        frame = None if answer is None else answer.get("frame")
        if isinstance(frame, dict) and frame.get("type") == "ok":
            conn.send(messages.reply("ok", re))
        elif isinstance(frame, dict) and frame.get("type") == "error":
            conn.send(messages.error(_error_of(frame), re=re, table=ask["table"] if ask["op"] == "admin" else None))
        else:
            held = ask["table"] if ask["op"] == "admin" else f"connection {ask['conn']}"
            conn.send(messages.error(ProtocolError(
                "unavailable", f"worker {worker}, which holds {held}, did not answer: ask again in a moment"), re=re))

    async def _ask(self, worker: int, request: Ask | Map) -> Map | None:
        """Publish ``request`` on ``worker``'s inbox and wait for its answer; None if none came in time."""
        redis = self.redis
        if redis is None:
            return None
        key = f"{names.ROOT}reply:{secrets.token_hex(12)}"
        got = None
        try:
            with trio.move_on_after(2 * ASK_TIMEOUT_MS / 1000):  # a Redis that hangs: no answer
                listeners = await redis.publish(names.inbox(worker), json.dumps({**request, "reply": key}))
                if not listeners:
                    return None
                got = await redis.blpop([key], timeout=ASK_TIMEOUT_MS / 1000)
        except (RedisError, OSError) as exc:
            self.log.warning("ask_failed", worker=worker, op=request.get("op"), error=str(exc)[:200])
            return None
        answer = None if got is None else _json(got[1])
        return answer if isinstance(answer, dict) else None

    async def keep_places(self, redis: Redis, every_ms: int) -> None:
        """Renew the places of this worker's waiting tables under the cluster's cap, and give back the others',
        every beat, for ever (a Redis that fails is tried again at the next beat)."""
        while True:
            try:
                with trio.move_on_after(max(every_ms, caps.REDIS_TIMEOUT_MS) / 1000):
                    await self.places.renew(redis)
            except (RedisError, OSError):
                pass  # the heartbeat says once that Redis is gone
            await trio.sleep(every_ms / 1000)

    async def _publish(self, channel: str, note: str) -> None:
        redis = self.redis
        try:
            if redis is not None:
                await redis.publish(channel, note)
        except (RedisError, OSError) as exc:
            self.log.warning("publish_failed", channel=channel, error=str(exc)[:200])

    async def _answer(self, key: str, answer: Answer) -> None:
        redis = self.redis
        try:
            if redis is not None:
                await redis.lpush(key, [json.dumps(answer)])
                await redis.expire(key, REPLY_KEPT_S)
        except (RedisError, OSError) as exc:
            self.log.warning("answer_failed", error=str(exc)[:200])

    # -- asked by other workers

    async def listen(self, redis: Redis) -> None:
        """Carry out what arrives on this worker's inbox and the bulletins channel, until cancelled; subscribe
        again whenever Redis goes away."""
        self.redis = redis
        while True:
            try:
                channels = [names.inbox(self.worker), names.BULLETINS, names.CHANGES]
                async with redis.pubsub(channels=channels) as subscription:
                    async for message in subscription:
                        if message.get("type") == "message":
                            self.carry_out(message.get("channel"), message.get("data"))
            except* (RedisError, OSError):
                pass  # the heartbeat says once that Redis is gone
            await trio.sleep(RESUBSCRIBE_MS / 1000)

    def carry_out(self, channel: Any, data: Any) -> None:
        if channel == names.CHANGES:
            if data != str(self.worker):
                self.directory.refresh()
            return
        note = _json(data)
        if not isinstance(note, dict):
            self.log.warning("relay_message_dropped", channel=str(channel)[:80], why="not a JSON object")
            return
        try:
            if channel == names.BULLETINS:
                self._bulletin(note)
            elif note.get("op") == "create":
                self._create(note)
            elif note.get("op") == "admin":
                self._admin(note)
            elif note.get("op") == "kick":
                self._kick(note)
            elif note.get("op") == "connections":
                listed: Connections = {"connections": [c.summary() for c in self.server.connections.values()]}
                self.lobby.nursery.start_soon(self._answer, self._reply_key(note), listed)
            else:
                raise ValueError(f"no operation {str(note.get('op'))[:32]!r}")
        except (SchemaError, ValueError) as exc:
            self.log.warning("relay_message_dropped", channel=str(channel)[:80], why=str(exc)[:200])

    def _reply_key(self, note: Map) -> str:
        key = note.get("reply")
        if not (isinstance(key, str) and key.startswith(f"{names.ROOT}reply:") and len(key) <= 64):
            raise ValueError("no reply key")
        return key

    def _create(self, note: Map) -> None:
        key = self._reply_key(note)
        fields = {k: v for k, v in note.items() if k not in ("op", "reply")}
        try:
            address = None if fields.get("address") is None else _ADDRESS.check(fields.pop("address"), "address")
            place = None if fields.get("place") is None else _PLACE.check(fields.pop("place"), "place")
            why = sick(self.server)
            if why is not None:  # the asker makes it itself
                raise ProtocolError("unavailable", f"worker {self.worker} takes no new tables: {why}")
            msg = messages.parse_client({"type": "create", **fields})
            table = self.lobby.create(str_field(msg, "game"), int_field(msg, "seats"), int_or_none(msg, "seed"),
                                      number_or(msg, "time_scale", 1.0), msg.get("options"), address=address)
        except ProtocolError as err:
            refused: Refused = {"code": err.code, "message": err.message}
            self.lobby.nursery.start_soon(self._answer, key, refused)
            return
        if address is not None and place is not None:
            self.places.hold(table.id, address, place)
        self.log.info("table_created", table=table.id, asked=True)
        answer: Created = {"table": table.id}
        if table.journal is None:
            self.lobby.nursery.start_soon(self._answer, key, answer)
        else:
            table.journal.after_durable(
                lambda: self.lobby.nursery.start_soon(self._answer, key, answer),
                lambda exc: self.lobby.nursery.start_soon(self._answer, key, _refused(
                    "internal", f"the table's journal could not be written ({exc})")))

    def _admin(self, note: Map) -> None:
        key = self._reply_key(note)
        action, table_id = note.get("action"), messages.TABLE.check(note.get("table"), "table")
        if action not in messages.TABLE_ADMIN:
            raise ValueError(f"no admin action {str(action)[:32]!r}")
        table = self.lobby.tables.get(table_id)
        if table is None:
            missing: Frame = {"frame": {"type": "error", "code": "no_such_table", "message": f"no table {table_id!r}"}}
            self.lobby.nursery.start_soon(self._answer, key, missing)
            return
        self.log.info("admin_request", action=action, table=table_id, asked=True)
        request = Request(messages.TABLE_ADMIN[action], _Answer(self, key), {"id": 0, "table": table_id})
        table.submit(request)

    def _kick(self, note: Map) -> None:
        key = self._reply_key(note)
        target = self.server.connections.get(_CONN_ID.check(note.get("conn"), "conn"))
        if target is None:
            answer: Map = {"type": "error", "code": "bad_field", "message": "conn: no such connection"}
        else:
            self.log.info("admin_request", action="kick", target=target.id, asked=True)
            target.close("kicked by the organiser", abort=True)
            answer = {"type": "ok"}
        framed: Frame = {"frame": answer}
        self.lobby.nursery.start_soon(self._answer, key, framed)

    def _bulletin(self, note: Map) -> None:
        if note.get("from") == self.worker:
            return
        topic = messages.TOPIC.check(note.get("topic"), "topic")
        self.lobby.publish(topic, _BULLETIN_DATA.check(note.get("data"), "data"))


class _Answer:
    """Stands for the asking worker's connection at a table: the table's reply to it goes back through Redis."""

    def __init__(self, relay: Relay, key: str) -> None:
        self.relay = relay
        self.key = key
        self.sent = False

    def send(self, frame: bytes) -> None:
        if not self.sent:  # the reply; nothing else goes to it
            self.sent = True
            framed: Frame = {"frame": decode(frame)}
            self.relay.lobby.nursery.start_soon(self.relay._answer, self.key, framed)


def _summary(row: ReadMap) -> messages.ConnectionSummary:
    """A row that ``CONNECTION_SUMMARY`` checked, read as the fields its specs give."""
    summary: messages.ConnectionSummary = {
        "conn": int_field(row, "conn"), "peer": str_field(row, "peer"), "client": str_field(row, "client"),
        "tables": strs_field(row, "tables"),
        "seats": [{"table": str_field(s, "table"), "seat": int_field(s, "seat"), "name": str_field(s, "name")}
                  for s in maps_field(row, "seats")],
    }
    if "rtt_ms" in row:
        summary["rtt_ms"] = int_field(row, "rtt_ms")
    if "rtt_last_ms" in row:
        summary["rtt_last_ms"] = int_field(row, "rtt_last_ms")
    return summary


def _refused(code: str, message: str) -> Refused:
    return {"code": code, "message": message}


def _error_of(answer: ReadMap) -> ProtocolError:
    code, message = answer.get("code"), answer.get("message")
    if code not in ERROR_CODES or code in ("illegal_action", "moved") or not isinstance(message, str):
        return ProtocolError("internal", "the worker asked gave an answer this one cannot read")
    return ProtocolError(code, message)


def _json(raw: Any) -> Any:
    if not isinstance(raw, (str, bytes)):
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None
