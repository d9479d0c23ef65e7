"""Each human entrant's permanent link: one bulletin topic per entrant that says where they play now (their
table and seat token), or that they wait for the next round, or that the tournament is over. The web page's
``#me/KEY`` follows it from table to table, so the organiser hands out one link for the whole event.

The key is a keyed hash of the entrant under the server's admin token (which the director needs to publish
at all): the same on every run of the director, and unguessable, since the bulletin carries a seat token.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from typing import Literal, NotRequired, TypedDict, cast

from protocol.values import Value

from .store import Snapshot

TOPIC_PREFIX = "me."


class Place(TypedDict):
    """Where a human entrant plays now: the server's table, their seat and its token."""

    table: str
    seat: int
    token: str


class Guide(TypedDict):
    """An entrant's bulletin (``guides``)."""

    tournament: str
    name: str
    round: int
    state: NotRequired[Literal["playing", "waiting", "finished"]]  # set once the entrant's place is known
    table: NotRequired[str]  # playing: the Place
    seat: NotRequired[int]
    token: NotRequired[str]
    next_round: NotRequired[int]  # waiting


def guide_value(doc: Guide) -> Mapping[str, Value]:
    """``doc`` as a ``Value``: every field of ``Guide`` is one (mypy sees a TypedDict as a map of object)."""
    return cast("Mapping[str, Value]", doc)


def entrant_key(admin_token: str, tournament: str, entrant_id: int) -> str:
    """The entrant's link key: 32 hex characters."""
    message = f"{tournament}\x00{entrant_id}".encode()
    return hmac.new(admin_token.encode(), message, hashlib.sha256).hexdigest()[:32]


def topic(key: str) -> str:
    return TOPIC_PREFIX + key


def page_link(url: str, key: str) -> str:
    """``http://HOST:PORT/#me/KEY`` for the server at WebSocket ``url``."""
    page = "http" + url[2:].rstrip("/") if url.startswith("ws") else url.rstrip("/")
    return f"{page}/#me/{key}"


def guides(snap: Snapshot) -> dict[int, Guide]:
    """Every human entrant's bulletin now, by entrant id: ``state`` "playing" (with ``table``, ``seat`` and
    ``token``), "waiting" (for ``next_round``) or "finished"; always the tournament's and the entrant's name and
    the current ``round``."""
    at: dict[int, Place] = {}
    for table in snap.unfinished_tables():
        for seat, entrant_id in enumerate(table.seats):
            token = table.tokens[seat] if seat < len(table.tokens) else None
            if table.server_table is not None and token is not None:
                at[entrant_id] = {"table": table.server_table, "seat": seat, "token": token}
    out = {}
    for e in snap.entrants:
        if e.kind != "human":
            continue
        doc: Guide = {"tournament": snap.roster.name, "name": e.name, "round": snap.current_round}
        if e.id in at and not e.dropped:
            doc["state"] = "playing"
            doc.update(at[e.id])
        elif snap.rounds_left > 0 and not e.dropped:
            doc["state"], doc["next_round"] = "waiting", snap.current_round + 1
        else:
            doc["state"] = "finished"
        out[e.id] = doc
    return out
