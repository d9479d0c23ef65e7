"""Ratings across events: every rated game moves its seats' skill estimates, per game, in ``DATA/ratings.sqlite``.

The model is openskill's Plackett-Luce (a Weng-Lin Bayesian approximation): a rating is a mean ``mu`` and an
uncertainty ``sigma``; a game's finishing places (ties shared) update every rated seat at once. The ladder orders
by the conservative ordinal ``mu - 3 sigma``.

A rating belongs to a registered entrant: a tournament roster's entry, or a name the organiser issued a key for
(``issue_key``); the name a client types proves nothing. Names are matched ignoring case.

Invariants: a game counts once (its id is stored in the same SQLite transaction as the ratings it moved, so a
game rated again, or a process killed mid-update, leaves every rating as if it were rated exactly once); a key
is stored only as its SHA-256.
"""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TypedDict

from openskill.models import PlackettLuce

if TYPE_CHECKING:
    from server.tournament.store import Snapshot, TableRecord

RATINGS_FILE = "ratings.sqlite"  # in the data directory
MIN_SEATS_RATED = 2
MAX_NAME = 64
BUSY_TIMEOUT_S = 10.0  # the director and its server may write the same file at once

_MODEL = PlackettLuce()

_SCHEMA = """
CREATE TABLE IF NOT EXISTS rating (
    entrant TEXT NOT NULL,          -- the name, case folded: the entrant's identity
    name TEXT NOT NULL,             -- as last spelled
    game TEXT NOT NULL,
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    games INTEGER NOT NULL,
    last_played TEXT NOT NULL,      -- ISO 8601, UTC
    PRIMARY KEY (entrant, game)
);
CREATE TABLE IF NOT EXISTS rated_game (
    id TEXT PRIMARY KEY,            -- e.g. tournament:Bot league:1:r1.2:t7, or table:t12
    game TEXT NOT NULL,
    at TEXT NOT NULL,
    seats TEXT NOT NULL             -- the rated names in seat order and their places, for the record
);
CREATE TABLE IF NOT EXISTS entrant_key (
    entrant TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    key_sha256 TEXT NOT NULL UNIQUE,
    issued TEXT NOT NULL
);
"""


class RatingsError(ValueError):
    """A ratings file that cannot be used (not SQLite, not ours, not readable); the message says which."""


class RatingRow(TypedDict):
    """A ladder row as ``parsimonia ratings --json`` and the ``ratings`` reply give it."""

    entrant: str
    game: str
    mu: float
    sigma: float
    ordinal: float
    games: int
    last_played: str


@dataclass(frozen=True)
class Rating:
    entrant: str
    game: str
    mu: float
    sigma: float
    games: int
    last_played: str

    @property
    def ordinal(self) -> float:
        """The conservative estimate: the skill the entrant is very likely (about 99.7 %) to be above."""
        return self.mu - 3 * self.sigma

    def to_dict(self) -> RatingRow:
        return {"entrant": self.entrant, "game": self.game, "mu": round(self.mu, 4), "sigma": round(self.sigma, 4),
                "ordinal": round(self.ordinal, 4), "games": self.games, "last_played": self.last_played}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _sha(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class RatingStore:
    """One data directory's ratings file. Use as a context manager, or call ``close``."""

    def __init__(self, path: str | Path, create: bool = True) -> None:
        path = Path(path)
        if not create and not path.is_file():
            raise RatingsError(f"{path}: no ratings here yet (no rated game was played with this data directory)")
        try:
            if create:
                path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S)
        except (OSError, sqlite3.Error) as exc:
            raise RatingsError(f"{path}: cannot open the ratings file: {exc}") from None
        try:
            self.db.execute("PRAGMA synchronous = FULL")  # a committed game survives the machine's crash
            with self.db:
                self.db.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            self.db.close()
            raise RatingsError(f"{path}: not a ratings file ({exc})") from None
        self.path = path

    def __enter__(self) -> RatingStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    def rate(self, game_id: str, game: str, names: Sequence[str], places: Sequence[int],
             at: str | None = None) -> bool:
        """Rate one finished game: ``names`` by seat (the registered entrants only), ``places`` their finishing
        places (1 = first, equal places tie). False, and nothing changed, when ``game_id`` was rated already or
        fewer than two seats are rated."""
        if len(names) != len(places):
            raise ValueError(f"{len(names)} names, {len(places)} places")
        if len(names) < MIN_SEATS_RATED or len({n.casefold() for n in names}) != len(names):
            return False
        at = at or _now()
        with self.db:  # one transaction: the game's id and the ratings it moved, or neither
            try:
                self.db.execute("INSERT INTO rated_game (id, game, at, seats) VALUES (?, ?, ?, ?)",
                                (game_id, game, at, repr(list(zip(names, places)))))
            except sqlite3.IntegrityError:
                return False
            before = [self._get(name, game) for name in names]
            teams = [[_MODEL.rating(mu=r.mu, sigma=r.sigma) if r else _MODEL.rating()] for r in before]
            after = _MODEL.rate(teams, ranks=[float(p) for p in places])
            for name, old, [new] in zip(names, before, after):
                self.db.execute(
                    "INSERT INTO rating (entrant, name, game, mu, sigma, games, last_played) "
                    "VALUES (?, ?, ?, ?, ?, 1, ?) ON CONFLICT (entrant, game) DO UPDATE SET "
                    "name = excluded.name, mu = excluded.mu, sigma = excluded.sigma, games = games + 1, "
                    "last_played = excluded.last_played",
                    (name.casefold(), name, game, new.mu, new.sigma, at))
        return True

    def _get(self, name: str, game: str) -> Rating | None:
        row = self.db.execute("SELECT name, game, mu, sigma, games, last_played FROM rating "
                              "WHERE entrant = ? AND game = ?", (name.casefold(), game)).fetchone()
        return None if row is None else Rating(*row)

    def rated(self, game_id: str) -> bool:
        return self.db.execute("SELECT 1 FROM rated_game WHERE id = ?", (game_id,)).fetchone() is not None

    def ladder(self, game: str | None = None) -> list[Rating]:
        """Every rating (of one game, or all), best ordinal first, then name."""
        rows = self.db.execute("SELECT name, game, mu, sigma, games, last_played FROM rating "
                               "WHERE ? IS NULL OR game = ?", (game, game)).fetchall()
        return sorted((Rating(*row) for row in rows), key=lambda r: (r.game, -r.ordinal, r.entrant.casefold()))

    def ordinals(self, game: str) -> dict[str, float]:
        """Each rated entrant's ordinal in ``game``, by case-folded name (for seating by rating)."""
        return {r.entrant.casefold(): r.ordinal for r in self.ladder(game)}

    def registered(self, name: str) -> bool:
        """Whether ``name`` is a registered entrant's: issued a key, or rated (a roster's entrant)."""
        folded = name.casefold()
        return (self.db.execute("SELECT 1 FROM entrant_key WHERE entrant = ?", (folded,)).fetchone() is not None
                or self.db.execute("SELECT 1 FROM rating WHERE entrant = ?", (folded,)).fetchone() is not None)

    def issue_key(self, name: str) -> str:
        """A new key that proves ``name`` (its earlier key, if any, no longer does); only its hash is kept."""
        if not name or name != name.strip() or len(name) > MAX_NAME:
            raise RatingsError(f"{name!r}: an entrant's name is 1..{MAX_NAME} characters, no spaces around it")
        key = secrets.token_urlsafe(24)  # 32 characters
        with self.db:
            self.db.execute("INSERT INTO entrant_key (entrant, name, key_sha256, issued) VALUES (?, ?, ?, ?) "
                            "ON CONFLICT (entrant) DO UPDATE SET name = excluded.name, "
                            "key_sha256 = excluded.key_sha256, issued = excluded.issued",
                            (name.casefold(), name, _sha(key), _now()))
        return key

    def entrant_of_key(self, key: str) -> str | None:
        """The registered entrant ``key`` proves, or None."""
        row = self.db.execute("SELECT name FROM entrant_key WHERE key_sha256 = ?", (_sha(key),)).fetchone()
        return None if row is None else str(row[0])


def rate_result(store: RatingStore, game_id: str, game: str, names: Sequence[str | None],
                result: Mapping[str, Any], forfeits: Collection[int] = ()) -> bool:
    """Rate a game from its result (``scores`` and ``winners`` by seat, as a table ends): ``names`` by seat, None
    for a seat no registered entrant holds (not rated; the others are ranked among themselves); ``forfeits`` the
    seats of no-shows, ranked last as the standings rank them. False when the
    result has no scores, too few seats are rated, or the game was rated already."""
    from server.tournament.standings import finishing_places, result_scores

    scores = result_scores(result)
    winners = result.get("winners")
    if scores is None or not isinstance(winners, Collection) or len(scores) != len(names):
        return False
    places = finishing_places(scores, set(winners), forfeits)
    rated = [(name, place) for name, place in zip(names, places) if name is not None]
    return store.rate(game_id, game, [n for n, _ in rated], [p for _, p in rated])


def tournament_game_id(roster_name: str, seed: int, round_number: int, position: int, server_table: str) -> str:
    """A tournament game's id in the ratings file: unique across the tournaments of one data directory."""
    return f"tournament:{roster_name}:{seed}:r{round_number}.{position}:{server_table}"


def rate_table(data_dir: str, snap: Snapshot, table: TableRecord, result: Mapping[str, Any],
               out: Callable[[str], None], forfeits: Collection[int] = ()) -> bool:
    """Rate a tournament table's game in ``DATA/ratings.sqlite``, its seats being the roster's entrants; called
    before the result is recorded, so a director killed in between rates it again, which counts once. A ratings
    file that cannot be written is said (``out``) and the tournament goes on."""
    if table.server_table is None:
        return False
    game_id = tournament_game_id(snap.roster.name, snap.seed, table.round, table.position, table.server_table)
    names: list[str | None] = [snap.entrant(e).name for e in table.seats]
    try:
        with RatingStore(Path(data_dir) / RATINGS_FILE) as store:
            return rate_result(store, game_id, snap.roster.game, names, result, forfeits)
    except (RatingsError, sqlite3.Error) as exc:
        out(f"table {table.server_table}: not rated: {exc}")
        return False


def seating_ratings(data_dir: str, snap: Snapshot) -> dict[str, float] | None:
    """The ordinals a tournament seated by rating (roster ``seating = "rating"``) seats its next round by, from
    ``DATA/ratings.sqlite`` (none yet: everyone a newcomer); None for a tournament seated by its standings."""
    if snap.roster.seating != "rating":
        return None
    path = Path(data_dir) / RATINGS_FILE
    if not path.is_file():
        return {}
    with RatingStore(path, create=False) as store:
        return store.ordinals(snap.roster.game)
