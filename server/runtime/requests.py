"""What a welcomed connection's requests do: each message after ``hello``, decoded into its typed message
(``protocol.client_messages``) and routed by its type to what answers it (``handle``).

The server answers its own requests here and at once: ``ping``, ``tables``, ``bulletin``, ``create`` and the
organiser's ``admin`` actions on the server itself (``connections``, ``publish``, ``kick``). A table's requests, and
the organiser's actions on a table, go to the table's task as a ``server.runtime.table.Request`` (which still carries the
message as a map). A ``history`` page may have to wait for a replay from the journal: it is a coroutine, which the
connection's reader awaits out of its address's turn. On a cluster (``server.cluster``) a new table goes to the least-loaded worker, and an organiser's
request about a table or a connection another worker holds is asked of that worker.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING

import msgspec

from protocol import messages
from protocol.client_messages import (
    Act,
    Admin,
    AnyClientMessage,
    Bulletin,
    Create,
    Hello,
    History,
    Join,
    Leave,
    Ping,
    Ratings,
    Replay,
    Resume,
    TableRequest,
    Tables,
    View,
    Watch,
    given,
    kind_of,
)
from protocol.errors import ProtocolError
from server.runtime import history
from server.runtime import replay_steps
from server.storage.journal import JournalCorrupt
from server.ratings.tables import may_rate, rated_name, ratings_reply
from server.runtime.table import REPLAY_LIMIT, ReplayMismatch, Request

if TYPE_CHECKING:
    from server.runtime.ports import ConnectionPort as Connection  # what the router needs of a connection

# what a connection's resumes may queue beyond its queue's bounds: the reply, the missed events, a view; once
# per connection (server/transport/websocket.py), so resuming again and again does not make it hold more
REPLAY_ROOM = REPLAY_LIMIT + 2
REPLAY_ROOM_BYTES = 4 << 20


def handle(conn: Connection, msg: AnyClientMessage) -> Awaitable[None] | None:
    """Answers one message (decoded and checked: ``messages.decode_client``) at once; or, for a history page that
    may have to wait for a replay, returns the coroutine that does."""
    re = msg.re
    try:
        match msg:
            case Act() | Join() | Watch() | Leave() | Resume() | View():
                _to_table(conn, msg)
            case Hello():
                raise ProtocolError("hello_required", "hello is only for the first message", fatal=False)
            case Ping():
                conn.send(messages.pong(re=re, server_time=conn.lobby.clock.now_ms(), **conn.round_trip()))
            case Tables():
                away = [] if conn.server.cluster is None else conn.server.cluster.away()  # workers not listed
                conn.send(messages.reply("tables", re, tables=conn.lobby.summaries()[: messages.MAX_LISTED_TABLES],
                                         **({"away": away} if away else {})))
            case Admin():
                _admin(conn, msg, re)
            case Bulletin():
                if msg.follow and msg.topic not in conn.topics:
                    if len(conn.topics) >= conn.client_limits.topics_per_client:
                        raise ProtocolError("rate_limited", "a connection may follow at most "
                                            f"{conn.client_limits.topics_per_client} bulletin topics")
                    conn.lobby.follow(msg.topic, conn)
                    conn.topics.add(msg.topic)
                conn.send(conn.lobby.bulletin(msg.topic, re))
            case Create():
                _may_create(conn, msg)
                cluster = conn.server.cluster  # on a cluster, the least-loaded worker gets it (server/cluster/)
                if cluster is None or not cluster.create_elsewhere(conn, messages.as_map(msg), re):
                    create_here(conn, msg, re)
                conn.created += 1
            case History():
                return _history(conn, msg, re)
            case Ratings():  # the ladder (server/ratings/tables.py)
                conn.send(ratings_reply(conn.server.rater, given(msg.game), re))
            case Replay():  # a finished game, step by step (server/runtime/replay_steps.py)
                return _replay(conn, msg, re)
    except ProtocolError as err:
        conn.fail(err, re)
    return None


def _to_table(conn: Connection, msg: TableRequest) -> None:
    """A table's request, to the table's task."""
    table = conn.lobby.get(msg.table)
    if isinstance(msg, Join):  # plays under its entrant's name when it proves one (server/ratings/tables.py)
        msg = msgspec.structs.replace(msg, name=rated_name(conn.server.rater, table.id, msg))
    conn.tables.add(table.id)
    if isinstance(msg, Resume):  # the missed events come all at once: not a sign of a slow client
        conn.ws.burst.grant(REPLAY_ROOM, REPLAY_ROOM_BYTES)
    table.submit(Request(kind_of(msg), conn, messages.as_map(msg)))


def create_here(conn: Connection, msg: Create, re: int | None) -> None:
    """Create the table ``msg`` asks for on this server (``ProtocolError`` if it may not be); answered once its
    first record is on disk."""
    organiser = conn.server.is_admin(given(msg.admin))  # the organiser's tables are not capped
    rated = may_rate(conn.server.rater, msg)
    table = conn.lobby.create(msg.game, msg.seats, given(msg.seed), msg.time_scale, given(msg.options),
                              address=None if organiser else conn.address)
    if rated is not None:
        rated.created(table.id)
    conn.log.info("table_created", table=table.id)
    created = messages.reply("created", re, table=table.id)
    if table.journal is None:
        conn.send(created)
    else:  # acknowledged once the table's first record is on disk; refused if it cannot be
        table.journal.after_durable(lambda: conn.send(created), lambda exc: _not_created(conn, exc, re))


def _not_created(conn: Connection, exc: OSError, re: int | None) -> None:
    """The new table's first record could not be written (disk full, I/O error): no table for the client."""
    conn.send(messages.error(ProtocolError(
        "internal", f"the table could not be created: its journal could not be written ({exc.strerror or exc})"),
        re=re))


def _may_create(conn: Connection, msg: Create) -> None:
    if conn.server.config.admin_token is not None:
        if not conn.server.is_admin(given(msg.admin)):
            raise ProtocolError("forbidden", "this server lets only its organiser create tables (admin token)")
    elif conn.created >= conn.client_limits.tables_per_client:
        raise ProtocolError("rate_limited",
                            f"a connection may create at most {conn.client_limits.tables_per_client} tables")


async def _history(conn: Connection, msg: History, re: int | None) -> None:
    table_id, after, limit = msg.table, msg.after, msg.limit
    lobby = conn.lobby
    try:
        table = lobby.tables.get(table_id)
        if table is not None:
            seat = table.seat_of(conn)
            frame = await history.page(lobby.history_cache, table.match, table.records(),
                                       None if seat is None else seat.index, after, limit, re)
        else:
            archived = lobby.data.archived(table_id) if lobby.data is not None else None
            if archived is None:
                lobby.get(table_id)  # raises: says where it is (a cluster's other worker), or that it is nowhere
                return
            frame = await history.archived_page(lobby.history_cache, table_id, archived, after, limit, re)
    except ProtocolError as err:
        conn.fail(err, re)
        return
    except (OSError, JournalCorrupt, ReplayMismatch) as exc:  # its records went missing or bad on disk
        conn.log.error("history_unreadable", table=table_id, error=str(exc))
        conn.fail(ProtocolError("internal", f"the history of {table_id} could not be read"), re)
        return
    conn.send(frame)


async def _replay(conn: Connection, msg: Replay, re: int | None) -> None:
    table_id = msg.table
    try:
        records = replay_steps.records_of(conn.lobby, table_id)
        folded = await conn.server.replays.folded(table_id, records, conn.address)
        if folded is None:  # its records do not reach the end yet: its replay file is being written
            raise ProtocolError("unavailable", f"the replay of {table_id} is being written: ask again shortly")
    except ProtocolError as err:
        conn.fail(err, re)
        return
    except (OSError, JournalCorrupt, ReplayMismatch) as exc:  # its records went missing or bad on disk
        conn.log.error("replay_unreadable", table=table_id, error=str(exc))
        conn.fail(ProtocolError("internal", f"the replay of {table_id} could not be read"), re)
        return
    conn.send(replay_steps.page(table_id, folded, msg.after, msg.limit, re))


def _admin(conn: Connection, msg: Admin, re: int | None) -> None:
    server = conn.server
    if server.config.admin_token is None:  # no token would do: say how to give the server one
        raise ProtocolError("forbidden", "this server has no admin token: start it with --admin-token-file FILE "
                            "(make run ADMIN_TOKEN_FILE=FILE)")
    if not server.is_admin(msg.token):
        raise ProtocolError("forbidden", "admin requests need the server's admin token")
    action, table_id, target_id = msg.action, given(msg.table), given(msg.conn)
    conn.log.info("admin_request", action=action, table=table_id, target=target_id)
    if action == "connections":
        if server.cluster is None:
            listing = [c.summary() for c in server.connections.values()]
            conn.send(messages.reply("connections", re, connections=listing))
        else:  # every worker's: asked of the others in a task of its own
            conn.lobby.nursery.start_soon(_list_cluster_connections, conn, re)
    elif action == "publish":
        topic, data = given(msg.topic), given(msg.data)
        if topic is None or data is None:
            raise ProtocolError("bad_field", "topic: publish needs a topic and its data")
        conn.lobby.publish(topic, data)
        if server.cluster is not None:  # and on every other worker
            server.cluster.publish(topic, data)
        conn.send(messages.reply("ok", re))
    elif action == "kick":
        target = server.connections.get(target_id or 0)
        cluster = server.cluster  # a connection another worker holds: that worker is asked
        if target is None and cluster is not None and target_id is not None and \
                cluster.forward_kick(conn, messages.as_map(msg), re):
            return
        if target is None:
            raise ProtocolError("bad_field", "conn: no such connection")
        if target is conn:  # the organiser's page would cut itself off
            raise ProtocolError("bad_field", "conn: that is this connection; the organiser cannot kick itself")
        target.close("kicked by the organiser", abort=True)
        conn.send(messages.reply("ok", re))
    else:
        if table_id is None:
            raise ProtocolError("bad_field", f"table: {action} needs a table")
        cluster = server.cluster  # a table another worker holds: that worker is asked
        if cluster is not None and table_id not in conn.lobby.tables and \
                cluster.forward_admin(conn, messages.as_map(msg), re):
            return
        conn.lobby.get(table_id).submit(Request(messages.TABLE_ADMIN[action], conn, messages.as_map(msg)))


async def _list_cluster_connections(conn: Connection, re: int | None) -> None:
    assert conn.server.cluster is not None
    listing = await conn.server.cluster.connections()
    conn.send(messages.reply("connections", re, connections=listing))
