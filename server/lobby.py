"""The lobby: the server's tables by id, and creating new ones."""

from __future__ import annotations

import secrets
from typing import Any

import trio

from protocol.errors import ProtocolError
from server.clock import ServerClock
from server.games import GAMES, new_game
from server.table import Table


class Lobby:
    def __init__(self, nursery: trio.Nursery, clock: ServerClock, max_tables: int = 10_000) -> None:
        self.nursery = nursery
        self.clock = clock
        self.max_tables = max_tables
        self.tables: dict[str, Table] = {}
        self._next = 1

    def create(
        self, game: str, seats: int, seed: int | None = None, time_scale: float = 1.0, options: Any = None
    ) -> Table:
        cls = GAMES.get(game)
        if cls is None:
            raise ProtocolError("no_such_game", f"this server has no game {game!r}; it has {', '.join(GAMES)}")
        if not cls.MIN_SEATS <= seats <= cls.MAX_SEATS:
            raise ProtocolError("bad_field", f"seats: {game} takes {cls.MIN_SEATS} to {cls.MAX_SEATS} players")
        if len(self.tables) >= self.max_tables:
            raise ProtocolError("rate_limited", "the server holds as many tables as it may")
        seed = secrets.randbits(63) if seed is None else seed
        try:
            new_game(game, seats, seed, options, time_scale)  # checks the options before anyone joins
        except ValueError as exc:
            raise ProtocolError("bad_field", f"options: {exc}") from None
        table = Table(f"t{self._next}", game, seats, seed, time_scale, dict(options or {}), self.clock)
        self._next += 1
        self.tables[table.id] = table
        self.nursery.start_soon(table.run)
        return table

    def get(self, table_id: str) -> Table:
        table = self.tables.get(table_id)
        if table is None:
            raise ProtocolError("no_such_table", f"no table {table_id!r}")
        return table

    def summaries(self) -> list[dict[str, Any]]:
        return [t.summary() for t in self.tables.values()]
