"""The server's side of ratings (``server.ratings.store``): casual tables rated at their creator's request, the seats that
prove a registered entrant with its key, and the ``ratings`` request's ladder.

A table is rated only when its creator asks (the ``create`` request's ``rated``) and never when its creator chose
its seed. A seat that gives an entrant's key (``join``'s ``entrant_key``) plays under the entrant's registered
name; a rated table refuses a join that types a registered name without its key. When a rated table ends with
winners, the seats that proved an entrant are rated among themselves; the others are not rated.

Rated tables and their proven entrants are kept in the ratings file, not in memory, so a server restarted
mid-game still rates the game when it ends, once (the game's id is the server's scope and the table's id).
Each call is one short SQLite transaction on the server's loop.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, cast

from protocol import messages
from protocol.client_messages import Create, Join, given
from protocol.errors import ProtocolError
from protocol.values import Map, Value
from server.ops import logs
from server.ratings.store import RatingsError, RatingStore, rate_result

if TYPE_CHECKING:
    from server.core.match import Match

_SCHEMA = """
CREATE TABLE IF NOT EXISTS rated_table (
    id TEXT PRIMARY KEY                 -- table:SCOPE:TABLE, the id its game is rated under
);
CREATE TABLE IF NOT EXISTS table_entrant (
    table_id TEXT NOT NULL,
    entrant TEXT NOT NULL,              -- case folded: a name that proved it is this entrant at this table
    PRIMARY KEY (table_id, entrant)
);
"""


class Rater:
    """One server's rated tables, in the ratings file at ``path``; ``scope`` tells its table ids from another
    server's that shares the file (its data directory)."""

    def __init__(self, path: str, scope: str) -> None:
        self.store = RatingStore(path)
        with self.store.db:
            self.store.db.executescript(_SCHEMA)
        self.scope = os.path.abspath(scope)
        self.log = logs.get(part="ratings")

    def close(self) -> None:
        self.store.close()

    def game_id(self, table_id: str) -> str:
        return f"table:{self.scope}:{table_id}"

    def created(self, table_id: str) -> None:
        """The table ``table_id`` was created rated. ``ProtocolError`` internal if that cannot be written: the
        creator is refused, and the table, unannounced and empty, expires as any table nobody joins."""
        with _unwritten("no rated table for you"), self.store.db:
            self.store.db.execute("INSERT OR IGNORE INTO rated_table (id) VALUES (?)", (self.game_id(table_id),))

    def is_rated(self, table_id: str) -> bool:
        return self.store.db.execute("SELECT 1 FROM rated_table WHERE id = ?",
                                     (self.game_id(table_id),)).fetchone() is not None

    def join(self, table_id: str, msg: Join) -> str:
        """The name a join plays under: its entrant's, when it gives a key (noted for this table); the typed one
        otherwise. ``ProtocolError`` for a key that proves no one, and, at a rated table, for a registered
        entrant's name typed without its key."""
        key, name = given(msg.entrant_key), msg.name
        if key is None:
            if self.is_rated(table_id) and self.store.registered(name):
                raise ProtocolError("bad_field", f"name: {name!r} is a registered entrant at this rated table: join "
                                    "with its entrant_key, or under another name")
            return name
        entrant = self.store.entrant_of_key(key)
        if entrant is None:
            raise ProtocolError("bad_field", "entrant_key: not a key this server's organiser issued (or one replaced "
                                "since)")
        if self.is_rated(table_id):
            with self.store.db:
                self.store.db.execute("INSERT OR IGNORE INTO table_entrant (table_id, entrant) VALUES (?, ?)",
                                      (self.game_id(table_id), entrant.casefold()))
        return entrant

    def finished(self, match: Match) -> bool:
        """Rate a rated table's game once it is over with winners; True if it moved ratings now. A ratings file
        that fails is logged: the table ends all the same, unrated."""
        if match.result is None or not match.result.get("winners"):
            return False
        try:
            if not self.is_rated(match.id):
                return False
            game_id = self.game_id(match.id)
            proven = {row[0] for row in self.store.db.execute(
                "SELECT entrant FROM table_entrant WHERE table_id = ?", (game_id,))}
            names = [seat.name if seat.name.casefold() in proven else None
                     for seat in sorted(match.seats, key=lambda s: s.index)]
            rated = rate_result(self.store, game_id, match.game_name, names, match.result)
        except (RatingsError, sqlite3.Error) as exc:
            self.log.error("rating_failed", table=match.id, error=str(exc))
            return False
        if rated:
            self.log.info("table_rated", table=match.id, entrants=[n for n in names if n is not None])
        return rated


def ratings_reply(rater: Rater | None, game: str | None, re: int | None) -> Map:
    """The ``ratings`` reply: the best ``MAX_LISTED_RATINGS`` rows of the ladder (of ``game``, if the request names
    one), and how many there are; none from a server that keeps no ratings."""
    with _unwritten("the ladder cannot be read now"):
        rows = [] if rater is None else rater.store.ladder(game)
    listed: list[Value] = [cast(Map, r.to_dict()) for r in rows[: messages.MAX_LISTED_RATINGS]]
    return messages.reply("ratings", re, ratings=listed, total=len(rows))


def open_rater(ratings_file: str | None, data_dir: str | None) -> Rater | None:
    """The server's rater: ``ratings_file`` (default ``DATA/ratings.sqlite``); None without a data directory, or
    when the file cannot be used (logged: the server serves its tables all the same, rating none)."""
    from server.ratings.store import RATINGS_FILE

    if ratings_file is None and data_dir is None:
        return None
    path = ratings_file if ratings_file is not None else os.path.join(str(data_dir), RATINGS_FILE)
    try:
        return Rater(path, data_dir if data_dir is not None else os.path.dirname(path))
    except (RatingsError, sqlite3.Error) as exc:  # the tables are served all the same; none is rated
        logs.get(part="ratings").error("ratings_unavailable", path=path, error=str(exc))
        return None


@contextmanager
def _unwritten(what: str) -> Iterator[None]:
    """The ratings file failed (disk full, locked too long): the request is refused, nothing else fails."""
    try:
        yield
    except sqlite3.Error as exc:
        logs.get(part="ratings").error("ratings_file_failed", error=str(exc))
        raise ProtocolError("internal", f"the ratings file failed ({exc}): {what}") from None


def may_rate(rater: Rater | None, msg: Create) -> Rater | None:
    """The rater a ``create`` asking for a rated table is noted by; None when it does not ask. ``ProtocolError``
    when it may not be rated: its creator chose its seed, or the server keeps no ratings."""
    if not msg.rated:
        return None
    if given(msg.seed) is not None:
        raise ProtocolError("bad_field", "rated: a table whose seed its creator chose is never rated (its deal "
                            "can be known in advance); leave out seed or rated")
    if rater is None:
        raise ProtocolError("bad_field", "rated: this server keeps no ratings (it runs without a data directory)")
    return rater


def rated_name(rater: Rater | None, table_id: str, msg: Join) -> str:
    """The name a ``join`` plays under (``Rater.join``); a key given to a server that keeps no ratings is refused."""
    if rater is not None:
        with _unwritten("the seat is not taken"):
            return rater.join(table_id, msg)
    if given(msg.entrant_key) is not None:
        raise ProtocolError("bad_field", "entrant_key: this server keeps no ratings (it runs without a data "
                            "directory)")
    return msg.name
