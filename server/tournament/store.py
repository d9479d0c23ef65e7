"""A tournament in one SQLite file (e.g. ``DATA/tournament.sqlite``), so a director that stops resumes.

It holds the tournament (its roster, as ``Roster.to_dict``, seed and state), its entrants, rounds, tables (each
with the server's table id and the game's seed), seats (with their tokens) and results; ``_SCHEMA`` is the
reference.

A table's life: ``start_round`` records the round's seating (pending, before anything exists on the server);
``table_started`` adds the server's table id and the seat tokens (running), maybe held until ``clocks_started``
while ``seat_seen`` notes who connects (a seat never seen forfeits); ``record_result`` stores the result (finished;
recording it again changes nothing) and finishes the round with its last table. Every change is one transaction.
``load`` reads everything back as a ``Snapshot``. A file written before a column existed gets it when opened
(``_COLUMNS``).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from protocol.values import Result

from server.games.fields import ints_field

from .pairing import History, next_round
from .roster import Roster, parse_roster
from .seeds import directory_secret, random_seed, seed_key, table_seeds
from .standings import GameResult, Standing, compute_standings, result_scores

TournamentState = Literal["running", "paused", "finished"]
TableState = Literal["pending", "running", "finished"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tournament (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    roster TEXT NOT NULL,
    seed INTEGER NOT NULL,
    seeded INTEGER NOT NULL DEFAULT 1,
    state TEXT NOT NULL CHECK (state IN ('running', 'paused', 'finished'))
);
CREATE TABLE IF NOT EXISTS entrant (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL CHECK (kind IN ('human', 'bot')),
    bot TEXT,
    dropped_after INTEGER
);
CREATE TABLE IF NOT EXISTS round (
    number INTEGER PRIMARY KEY,
    state TEXT NOT NULL CHECK (state IN ('running', 'finished'))
);
CREATE TABLE IF NOT EXISTS game_table (
    round INTEGER NOT NULL REFERENCES round (number),
    position INTEGER NOT NULL,
    server_table TEXT UNIQUE,
    state TEXT NOT NULL CHECK (state IN ('pending', 'running', 'finished')),
    seed INTEGER,
    held INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (round, position)
);
CREATE TABLE IF NOT EXISTS seat (
    round INTEGER NOT NULL,
    position INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    entrant INTEGER NOT NULL REFERENCES entrant (id),
    token TEXT,
    seen INTEGER,
    stand_in INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (round, position, seat),
    FOREIGN KEY (round, position) REFERENCES game_table (round, position)
);
CREATE TABLE IF NOT EXISTS result (
    round INTEGER NOT NULL,
    position INTEGER NOT NULL,
    result TEXT NOT NULL,
    PRIMARY KEY (round, position),
    FOREIGN KEY (round, position) REFERENCES game_table (round, position)
);
"""

# Columns added since the first files were written: (table, column, its declaration); older rows get the default.
# A tournament begun before `seeded` had its seed from the roster.
_COLUMNS = (
    ("tournament", "seeded", "INTEGER NOT NULL DEFAULT 1"),
    ("game_table", "seed", "INTEGER"),
    ("game_table", "held", "INTEGER NOT NULL DEFAULT 0"),
    ("seat", "seen", "INTEGER"),
    ("seat", "stand_in", "INTEGER NOT NULL DEFAULT 0"),
)


class StoreError(RuntimeError):
    """The file holds another tournament, or a change does not fit the tournament's state."""


@dataclass(frozen=True)
class EntrantRecord:
    id: int
    name: str
    bot: tuple[str, ...] | None  # None for a human
    dropped_after: int | None  # how many rounds had begun when the entrant dropped; None while playing

    @property
    def kind(self) -> Literal["human", "bot"]:
        return "human" if self.bot is None else "bot"

    @property
    def dropped(self) -> bool:
        return self.dropped_after is not None


@dataclass(frozen=True)
class TableRecord:
    round: int
    position: int  # 1.. within the round, top table first
    seats: tuple[int, ...]  # entrant id by seat
    state: TableState
    server_table: str | None  # None while pending
    tokens: tuple[str | None, ...]  # by seat; None until the table is started
    result: Result | None  # the game's result map once finished
    seed: int | None = None  # None only for a table paired before seeds were stored
    held: bool = False  # running with its clocks paused until its players are connected
    seen: tuple[bool | None, ...] = ()  # by seat, once started: has its entrant connected to it; None: not known
    stand_ins: tuple[bool, ...] = ()  # by seat: a reference bot plays it (the organiser's ``replace``)

    def no_show(self, seat: int) -> bool | None:
        """An entrant who never connected to ``seat`` (None when not known: no admin token, a table started
        before this was noted, or one whose game ended unseen)."""
        seen = self.seen[seat] if seat < len(self.seen) else None
        return None if seen is None else not seen

    def stand_in(self, seat: int) -> bool:
        return seat < len(self.stand_ins) and self.stand_ins[seat]

    def game_result(self) -> GameResult | None:
        """The finished game, a no-show's seat forfeited."""
        if self.result is None or self.server_table is None:
            return None
        scores = result_scores(self.result)
        assert scores is not None  # record_result stores no result without them
        forfeits = tuple(seat for seat in range(len(self.seats)) if self.no_show(seat))
        winners = tuple(ints_field(self.result, "winners"))
        return GameResult(self.round, self.server_table, self.seats, scores, winners, forfeits)


@dataclass(frozen=True)
class RoundRecord:
    number: int
    finished: bool
    tables: tuple[TableRecord, ...]


@dataclass(frozen=True)
class Snapshot:
    """Everything stored, and what a director needs to carry on."""

    roster: Roster
    seed: int  # the seating's, and with the directory's secret the key of the tables' seeds when ``seeded``
    seeded: bool  # chosen by the organiser (roster or --seed); else random, and so are the tables' seeds
    state: TournamentState
    entrants: tuple[EntrantRecord, ...]
    rounds: tuple[RoundRecord, ...]

    @property
    def current_round(self) -> int:
        """The number of the last round begun (0 before the first)."""
        return self.rounds[-1].number if self.rounds else 0

    @property
    def rounds_left(self) -> int:
        """Rounds not begun yet."""
        return max(0, self.roster.rounds - len(self.rounds))

    @property
    def between_rounds(self) -> bool:
        """No round is being played: the next one may be paired (or the tournament is over)."""
        return not self.rounds or self.rounds[-1].finished

    def unfinished_tables(self) -> list[TableRecord]:
        """The current round's tables still to create (pending) or to follow to the end (running)."""
        return [] if self.between_rounds else [t for t in self.rounds[-1].tables if t.state != "finished"]

    def results(self) -> list[GameResult]:
        return [r for rnd in self.rounds for t in rnd.tables if (r := t.game_result()) is not None]

    def history(self) -> History:
        """Every table seated so far, for pairing."""
        return History.from_tables(t.seats for rnd in self.rounds for t in rnd.tables)

    def standings(self) -> list[Standing]:
        return compute_standings({e.id: e.name for e in self.entrants}, self.results(), self.roster.points,
                                 {e.id for e in self.entrants if e.dropped})

    def next_tables(self, ratings: Mapping[str, float] | None = None) -> list[list[int]]:
        """The next round's seating (entrant ids in seat order, top table first) for the entrants not dropped;
        with the roster's ``seating = "rating"``, in the order of ``ratings`` (ordinals by case-folded name, an
        entrant without one at a newcomer's 0), best first, the standings breaking ties."""
        playing = [s.entrant for s in self.standings() if not s.dropped]
        roster = self.roster
        by_rating = roster.seating == "rating" and ratings is not None
        if by_rating:
            assert ratings is not None
            playing.sort(key=lambda e: -ratings.get(self.entrant(e).name.casefold(), 0.0))
        return next_round(roster.format, playing, self.history(), roster.table_size, self.rounds_left, self.seed,
                          shuffle_first=not by_rating)

    def table_seeds(self, round_number: int, count: int, secret: bytes | None = None) -> list[int]:
        """Seeds for round ``round_number``'s ``count`` tables: derived from the organiser's seed and the
        directory's ``secret`` (``Store.secret``; needed when seeded), else random."""
        if not self.seeded:
            return table_seeds(None, round_number, count)
        assert secret is not None, "a seeded tournament's table seeds need its directory's secret"
        return table_seeds(seed_key(secret, self.seed), round_number, count)

    def entrant(self, entrant_id: int) -> EntrantRecord:
        """The entrant with this id (``KeyError`` if none)."""
        return {e.id: e for e in self.entrants}[entrant_id]


class Store:
    """One tournament's SQLite file. Use as a context manager, or call ``close``."""

    def __init__(self, path: str | Path) -> None:
        self.renamed: list[tuple[str, str]] = []  # (old, new) names of the entrants ``begin`` renamed
        self.path = Path(path)
        self.directory = self.path.parent
        self.directory.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path)
        self.db.execute("PRAGMA foreign_keys = ON")
        self.db.execute("PRAGMA synchronous = FULL")
        with self.db:
            self.db.executescript(_SCHEMA)
            for table, column, declaration in _COLUMNS:
                if column not in {row[1] for row in self.db.execute(f"PRAGMA table_info({table})")}:
                    self.db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    def secret(self) -> bytes:
        """The tournament directory's secret (``seeds.directory_secret``): made the first time it is asked for.
        ``StoreError`` when the file there is not one."""
        try:
            return directory_secret(self.directory)
        except (OSError, ValueError) as exc:
            raise StoreError(str(exc)) from None

    def begin(self, roster: Roster, seed: int | None) -> Snapshot:
        """Start the tournament, or find it again: the file must then hold this very roster (its seed is kept),
        or one that differs only in its entrants' names and bot commands (a typo fixed mid-event: the entrants
        keep their places, games and points; ``renamed`` lists the names changed). ``seed`` None: a random one,
        and random table seeds."""
        row = self.db.execute("SELECT roster FROM tournament").fetchone()
        if row is None:
            with self.db:
                self.db.execute(
                    "INSERT INTO tournament (id, roster, seed, seeded, state) VALUES (1, ?, ?, ?, 'running')",
                    (json.dumps(roster.to_dict(), sort_keys=True),
                     random_seed() if seed is None else seed, seed is not None))
                self.db.executemany(
                    "INSERT INTO entrant (id, name, kind, bot) VALUES (?, ?, ?, ?)",
                    [(i, e.name, e.kind, None if e.bot is None else json.dumps(list(e.bot)))
                     for i, e in enumerate(roster.entrants, 1)],
                )
        else:
            stored = parse_roster(json.loads(row[0]), "stored roster")
            if stored != roster:
                self._fix_entrants(stored, roster)
        return self.load()

    def _fix_entrants(self, stored: Roster, roster: Roster) -> None:
        """Take ``roster``'s entrants' names and bot commands for the stored ones, entrant by entrant; anything
        else changed (or an entrant added, removed or turned from human to bot) is refused."""
        same_kinds = len(stored.entrants) == len(roster.entrants) and all(
            a.kind == b.kind for a, b in zip(stored.entrants, roster.entrants))
        if not same_kinds or replace(stored, entrants=roster.entrants) != roster:
            raise StoreError(f"{self.path} holds the tournament {stored.name!r}, begun with another roster; use "
                             "another data directory (--data), or the roster it was begun with (mid-event, only "
                             "entrants' names and bot commands may change, each entrant in its place)")
        changed = [(i, a, b) for i, (a, b) in enumerate(zip(stored.entrants, roster.entrants), 1) if a != b]
        with self.db:
            self.db.execute("UPDATE tournament SET roster = ?", (json.dumps(roster.to_dict(), sort_keys=True),))
            for i, _, _ in changed:  # names are unique: clear the way first, so that two may swap
                self.db.execute("UPDATE entrant SET name = ? WHERE id = ?", (f"\x00{i}", i))
            for i, _, b in changed:
                self.db.execute("UPDATE entrant SET name = ?, bot = ? WHERE id = ?",
                                (b.name, None if b.bot is None else json.dumps(list(b.bot)), i))
        self.renamed = [(a.name, b.name) for _, a, b in changed if a.name != b.name]

    def load(self) -> Snapshot:
        row = self.db.execute("SELECT roster, seed, seeded, state FROM tournament").fetchone()
        if row is None:
            raise StoreError("no tournament here yet")
        entrants = tuple(
            EntrantRecord(i, name, None if bot is None else tuple(json.loads(bot)), dropped)
            for i, name, bot, dropped in self.db.execute(
                "SELECT id, name, bot, dropped_after FROM entrant ORDER BY id")
        )
        seats: dict[tuple[int, int], list[tuple[int, str | None, bool | None, bool]]] = {}
        for rnd, pos, entrant, token, seen, stand_in in self.db.execute(
                "SELECT round, position, entrant, token, seen, stand_in FROM seat ORDER BY round, position, seat"):
            seats.setdefault((rnd, pos), []).append((entrant, token, None if seen is None else bool(seen),
                                                     bool(stand_in)))
        results = {(rnd, pos): json.loads(text) for rnd, pos, text in
                   self.db.execute("SELECT round, position, result FROM result")}
        tables: dict[int, list[TableRecord]] = {}
        for rnd, pos, server_table, state, seed, held in self.db.execute(
                "SELECT round, position, server_table, state, seed, held FROM game_table ORDER BY round, position"):
            sat = seats[(rnd, pos)]
            tables.setdefault(rnd, []).append(TableRecord(
                rnd, pos, tuple(s[0] for s in sat), state, server_table, tuple(s[1] for s in sat),
                results.get((rnd, pos)), seed, bool(held), tuple(s[2] for s in sat), tuple(s[3] for s in sat)))
        rounds = tuple(RoundRecord(n, state == "finished", tuple(tables.get(n, ())))
                       for n, state in self.db.execute("SELECT number, state FROM round ORDER BY number"))
        return Snapshot(parse_roster(json.loads(row[0]), "stored roster"), row[1], bool(row[2]), row[3], entrants,
                        rounds)

    def start_round(self, number: int, tables: Sequence[Sequence[int]], seeds: Sequence[int]) -> None:
        """Record round ``number``'s seating (entrant ids in seat order, top table first) and its tables' seeds,
        all tables pending."""
        if len(seeds) != len(tables):
            raise StoreError(f"round {number}: {len(tables)} tables, {len(seeds)} seeds")
        last = self.db.execute("SELECT number, state FROM round ORDER BY number DESC LIMIT 1").fetchone()
        if (last is None and number != 1) or (last is not None and (last[1] != "finished" or number != last[0] + 1)):
            raise StoreError(f"round {number} cannot begin now (last round: {last})")
        with self.db:
            self.db.execute("INSERT INTO round (number, state) VALUES (?, 'running')", (number,))
            for pos, (table, seed) in enumerate(zip(tables, seeds), 1):
                self.db.execute("INSERT INTO game_table (round, position, state, seed) VALUES (?, ?, 'pending', ?)",
                                (number, pos, seed))
                self.db.executemany("INSERT INTO seat (round, position, seat, entrant) VALUES (?, ?, ?, ?)",
                                    [(number, pos, seat, e) for seat, e in enumerate(table)])

    def table_started(self, round_number: int, position: int, server_table: str, tokens: Sequence[str],
                      held: bool = False, watched: bool = False) -> None:
        """The table exists on the server as ``server_table``; ``tokens`` by seat; ``held``: its clocks are
        paused until its players are connected. ``watched``: who connects is known (the admin token), so its
        seats are noted as not seen yet."""
        with self.db:
            changed = self.db.execute(
                "UPDATE game_table SET server_table = ?, state = 'running', held = ? "
                "WHERE round = ? AND position = ? AND state = 'pending'",
                (server_table, held, round_number, position))
            if changed.rowcount != 1:
                raise StoreError(f"table {round_number}.{position} is not pending")
            seats = self.db.execute("SELECT count(*) FROM seat WHERE round = ? AND position = ?",
                                    (round_number, position)).fetchone()[0]
            if len(tokens) != seats:
                raise StoreError(f"table {round_number}.{position} has {seats} seats, not {len(tokens)} tokens")
            self.db.executemany("UPDATE seat SET token = ? WHERE round = ? AND position = ? AND seat = ?",
                                [(token, round_number, position, seat) for seat, token in enumerate(tokens)])
            if watched:
                self.db.execute("UPDATE seat SET seen = 0 WHERE round = ? AND position = ?", (round_number, position))

    def clocks_started(self, server_table: str) -> None:
        """A held table's clocks run: every player is connected, or the grace is over."""
        with self.db:
            self.db.execute("UPDATE game_table SET held = 0 WHERE server_table = ?", (server_table,))

    def seat_seen(self, server_table: str, seat: int) -> None:
        """The entrant of ``seat`` of ``server_table`` is connected to it (noted once)."""
        with self.db:
            self.db.execute(
                "UPDATE seat SET seen = 1 WHERE seat = ? AND seen = 0 AND (round, position) = "
                "(SELECT round, position FROM game_table WHERE server_table = ?)", (seat, server_table))

    def seat_replaced(self, server_table: str, seat: int) -> None:
        """A reference bot plays ``seat`` of ``server_table`` from now on (the organiser's ``replace``)."""
        with self.db:
            self.db.execute(
                "UPDATE seat SET stand_in = 1 WHERE seat = ? AND (round, position) = "
                "(SELECT round, position FROM game_table WHERE server_table = ?)", (seat, server_table))

    def record_result(self, server_table: str, result: Mapping[str, Any], seen_known: bool = True) -> bool:
        """Store a running table's result (needs ``winners`` and ``scores``, or the ``dollars`` of older
        results); False if it was already stored. ``seen_known`` False: the game ended while nobody watched who
        connected, so its seats not seen are not known to be no-shows (and forfeit nothing)."""
        row = self.db.execute("SELECT round, position, state FROM game_table WHERE server_table = ?",
                              (server_table,)).fetchone()
        if row is None:
            raise StoreError(f"no table {server_table!r} in this tournament")
        if row[2] == "finished":
            return False
        if result_scores(result) is None or "winners" not in result:
            raise StoreError(f"the result of {server_table!r} has no scores or winners")
        rnd, pos, _ = row
        with self.db:
            self.db.execute("INSERT INTO result (round, position, result) VALUES (?, ?, ?)",
                            (rnd, pos, json.dumps(dict(result), sort_keys=True)))
            self.db.execute("UPDATE game_table SET state = 'finished' WHERE round = ? AND position = ?", (rnd, pos))
            if not seen_known:
                self.db.execute("UPDATE seat SET seen = NULL WHERE round = ? AND position = ? AND seen = 0",
                                (rnd, pos))
            self.db.execute(
                "UPDATE round SET state = 'finished' WHERE number = ? AND NOT EXISTS "
                "(SELECT 1 FROM game_table WHERE round = ? AND state != 'finished')", (rnd, rnd))
        return True

    def drop(self, entrant_id: int) -> None:
        """The entrant plays no more rounds (a game in progress is played out)."""
        with self.db:
            begun = self.db.execute("SELECT count(*) FROM round").fetchone()[0]
            changed = self.db.execute("UPDATE entrant SET dropped_after = ? WHERE id = ? AND dropped_after IS NULL",
                                      (begun, entrant_id))
            if changed.rowcount != 1:
                raise StoreError(f"no entrant {entrant_id} still playing")

    def set_state(self, state: TournamentState) -> None:
        with self.db:
            self.db.execute("UPDATE tournament SET state = ?", (state,))
