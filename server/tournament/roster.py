"""The roster file: who plays a tournament, and how.

A roster is a TOML file, described for its users in ``docs/roster.md``: a change here changes it there. Besides
the tournament's settings and the game's ``[options]`` (passed as-is to the ``create`` request), it has one
``[[entrant]]`` block per entrant, each exactly one of ``human = true`` or ``bot = [...]``.

A bot is a command line (a list of strings, no shell) whose placeholders (``{url}``, ``{table}``, ``{token}``,
``{name}``, ``{game}``) the director fills, and sets in ``PARSIMONIA_*`` environment variables too. A long option
followed by an argument that is one placeholder is passed as one argument (``--token=VALUE``): no value, a seat
token beginning with ``-`` included, is read as an option.

``load_roster`` raises ``RosterError`` naming the file, the line when it can find it, and the field.
``Roster.to_dict()`` gives back the same TOML-shaped mapping, which ``parse_roster`` reads again.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict

from protocol.values import Options
from server.games import GAMES, new_game
from server.games.parsimonia.config import HUMAN_GRACE_MS, HUMAN_QUIET_FLOOR_MS, PRESETS, preset_options

Format = Literal["swiss", "round_robin"]
FORMATS: tuple[Format, ...] = ("swiss", "round_robin")
Seating = Literal["standings", "rating"]
SEATINGS: tuple[Seating, ...] = ("standings", "rating")
DEFAULT_POINTS = (6, 3, 1, 0, 0, 0)
MIN_ENTRANTS, MAX_ENTRANTS = 2, 1000
MAX_ROUNDS = 100
MIN_TABLE, MAX_TABLE = 2, 6
MAX_NAME = 64  # the protocol's limit on a player's name
DEFAULT_GRACE_S, MAX_GRACE_S = 300, 86_400
DEFAULT_BOT_GRACE_S = 60
PLACEHOLDERS = ("url", "table", "token", "name", "game")

_TOP_KEYS = {"name", "format", "rounds", "table_size", "game", "seed", "human_grace_s", "bot_grace_s", "preset",
             "options", "points", "entrant", "seating"}
_ENTRANT_KEYS = {"name", "human", "bot"}
_PLACEHOLDER = re.compile(r"\{([A-Za-z_]\w*)\}")
_LONE_PLACEHOLDER = re.compile("|".join(re.escape("{" + p + "}") for p in PLACEHOLDERS))
_LONG_OPTION = re.compile(r"--[A-Za-z0-9][\w-]*")


class RosterError(ValueError):
    """A roster that cannot be used; the message names the file, the line (when known) and the field."""


@dataclass(frozen=True)
class Entrant:
    name: str
    bot: tuple[str, ...] | None = None  # the command line of a bot; None for a human

    @property
    def kind(self) -> Literal["human", "bot"]:
        return "human" if self.bot is None else "bot"

    def argv(self, url: str, table: str, token: str, game: str) -> list[str]:
        """The bot's command line with its placeholders filled in; ``--option {placeholder}`` becomes one
        argument ``--option=VALUE``, so that a value beginning with ``-`` is not taken for an option."""
        if self.bot is None:
            raise ValueError(f"{self.name} is a human, not a bot")
        values = self._values(url, table, token, game)
        out: list[str] = []
        for before, arg in zip(("",) + self.bot, self.bot):
            filled = _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), arg)
            if _LONE_PLACEHOLDER.fullmatch(arg) and _LONG_OPTION.fullmatch(before):
                out[-1] = f"{before}={filled}"
            else:
                out.append(filled)
        return out

    def env(self, url: str, table: str, token: str, game: str) -> dict[str, str]:
        """The variables to add to the bot's environment."""
        return {f"PARSIMONIA_{key.upper()}": value for key, value in self._values(url, table, token, game).items()}

    def _values(self, url: str, table: str, token: str, game: str) -> dict[str, str]:
        return {"url": url, "table": table, "token": token, "name": self.name, "game": game}


class EntrantDocument(TypedDict):
    """An ``[[entrant]]`` block: a name, and ``human = true`` or a bot's command line."""

    name: str
    human: NotRequired[bool]
    bot: NotRequired[list[str]]


class PointsDocument(TypedDict):
    by_place: list[int]


class RosterDocument(TypedDict):
    """A roster as ``Roster.to_dict`` writes it (and the store keeps it): the file's fields, every one given."""

    name: str
    format: Format
    rounds: int
    table_size: int
    game: str
    seed: NotRequired[int]
    human_grace_s: int
    seating: NotRequired[Seating]  # only when not the default, so a stored roster of before reads the same
    bot_grace_s: int
    options: Options
    points: PointsDocument
    entrant: list[EntrantDocument]


@dataclass(frozen=True)
class Roster:
    name: str
    entrants: tuple[Entrant, ...]
    rounds: int
    format: Format = "swiss"
    table_size: int = 4
    game: str = "parsimonia"
    seed: int | None = None  # None: the seating and the tables' seeds are random
    options: Options = field(default_factory=dict)
    points: tuple[int, ...] = DEFAULT_POINTS
    human_grace_s: int = DEFAULT_GRACE_S
    seating: Seating = "standings"
    bot_grace_s: int = DEFAULT_BOT_GRACE_S

    def to_dict(self) -> RosterDocument:
        """The roster as the TOML-shaped mapping ``parse_roster`` reads."""
        doc: RosterDocument = {
            "name": self.name,
            "format": self.format,
            "rounds": self.rounds,
            "table_size": self.table_size,
            "game": self.game,
            "human_grace_s": self.human_grace_s,
            "bot_grace_s": self.bot_grace_s,
            "options": dict(self.options),
            "points": {"by_place": list(self.points)},
            "entrant": [
                {"name": e.name, "human": True} if e.bot is None else {"name": e.name, "bot": list(e.bot)}
                for e in self.entrants
            ],
        }
        if self.seed is not None:
            doc["seed"] = self.seed
        if self.seating != "standings":
            doc["seating"] = self.seating
        return doc


def load_roster(path: str | Path) -> Roster:
    """Read and check a roster file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RosterError(f"{path}: cannot read the roster: {exc.strerror or exc}") from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RosterError(f"{path}: not valid TOML: {exc}") from exc
    return parse_roster(data, str(path), text)


def parse_roster(data: Mapping[str, object], source: str = "roster", text: str = "") -> Roster:
    """Check a TOML-shaped mapping; ``text`` (the file's text) lets errors name a line."""
    return _Parser(source, _KeyLines(text)).roster(data)


class _Parser:
    def __init__(self, source: str, lines: _KeyLines) -> None:
        self.source = source
        self.lines = lines

    def fail(self, path: tuple[str | int, ...], label: str, message: str) -> RosterError:
        line = self.lines.find(path)
        where = self.source if line is None else f"{self.source}:{line}"
        return RosterError(f"{where}: {label}: {message}" if label else f"{where}: {message}")

    def roster(self, data: Mapping[str, object]) -> Roster:
        self.known(data, _TOP_KEYS, (), "")
        name = self.name(data, ("name",), "name")
        fmt = data.get("format", "swiss")
        if fmt not in FORMATS:
            raise self.fail(("format",), "format", f"must be one of {', '.join(map(repr, FORMATS))}, not {fmt!r}")
        if "rounds" not in data:
            raise self.fail(("rounds",), "rounds", "missing (how many rounds to play)")
        rounds = self.integer(data["rounds"], ("rounds",), "rounds", 1, MAX_ROUNDS)
        table_size = self.integer(data.get("table_size", 4), ("table_size",), "table_size", MIN_TABLE, MAX_TABLE)
        seed = None if "seed" not in data else self.integer(data["seed"], ("seed",), "seed", -(2**63), 2**63 - 1)
        game = data.get("game", "parsimonia")
        if not isinstance(game, str) or game not in GAMES:
            raise self.fail(("game",), "game", f"unknown game {game!r} (known: {', '.join(sorted(GAMES))})")
        if not GAMES[game].MIN_SEATS <= table_size <= GAMES[game].MAX_SEATS:
            raise self.fail(("table_size",), "table_size", f"{game} seats {GAMES[game].MIN_SEATS} to "
                                                           f"{GAMES[game].MAX_SEATS} players, not {table_size}")
        grace = self.integer(data.get("human_grace_s", DEFAULT_GRACE_S), ("human_grace_s",), "human_grace_s", 0,
                             MAX_GRACE_S)
        bot_grace = self.integer(data.get("bot_grace_s", DEFAULT_BOT_GRACE_S), ("bot_grace_s",), "bot_grace_s", 0,
                                 MAX_GRACE_S)
        options = {**self.preset(data.get("preset"), game), **self.options(data.get("options", {}), game, table_size)}
        points = self.points(data.get("points", {}))
        seating = data.get("seating", "standings")
        if seating not in SEATINGS:
            raise self.fail(("seating",), "seating", f"must be one of {', '.join(map(repr, SEATINGS))}, not "
                            f"{seating!r}")
        entrants = self.entrants(data.get("entrant"))
        if game == "parsimonia" and any(e.bot is None for e in entrants):  # people: a quiet time they can bid in,
            options.setdefault("quiet_floor_ms", HUMAN_QUIET_FLOOR_MS)  # and a bid on its way at its end counts
            options.setdefault("grace_ms", HUMAN_GRACE_MS)
        return Roster(name, entrants, rounds, fmt, table_size, game, seed, options, points, grace, seating=seating,
                      bot_grace_s=bot_grace)

    def known(self, data: Mapping[str, object], keys: set[str], path: tuple[str | int, ...], label: str) -> None:
        unknown = sorted(set(data) - keys)
        if unknown:
            raise self.fail((*path, unknown[0]), f"{label}{unknown[0]}",
                            f"unknown field (expected {', '.join(sorted(keys))})")

    def name(self, data: Mapping[str, object], path: tuple[str | int, ...], label: str) -> str:
        value = data.get("name")
        if value is None:
            raise self.fail(path, label, "missing")
        if not isinstance(value, str) or not value.strip():
            raise self.fail(path, label, "must be a non-empty string")
        if value != value.strip() or len(value) > MAX_NAME:
            raise self.fail(path, label, f"{value!r}: at most {MAX_NAME} characters, no spaces around it")
        return value

    def integer(self, value: Any, path: tuple[str | int, ...], label: str, low: int, high: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(path, label, f"must be an integer, not {value!r}")
        if not low <= value <= high:
            raise self.fail(path, label, f"must be {low}..{high}, not {value}")
        return value

    def preset(self, value: Any, game: str) -> dict[str, int]:
        """The options of a named preset (``[options]`` overrides them); none without one."""
        if value is None:
            return {}
        if game != "parsimonia":
            raise self.fail(("preset",), "preset", f"the presets are Parsimonia's clocks, not {game}'s: set [options]")
        if value not in PRESETS:
            raise self.fail(("preset",), "preset", f"must be one of {', '.join(map(repr, PRESETS))}, not {value!r}")
        return preset_options(value)

    def options(self, value: Any, game: str, table_size: int) -> Options:
        if not isinstance(value, dict):
            raise self.fail(("options",), "options", "must be a table ([options])")
        try:
            new_game(game, table_size, 0, value)
        except ValueError as exc:  # the game's own check, e.g. "options.turn_ms: expected int, got str"
            key = next((k for k in value if str(exc).startswith(f"options.{k}:")), None)
            raise self.fail(("options",) if key is None else ("options", key), "", str(exc)) from exc
        return dict(value)

    def points(self, value: Any) -> tuple[int, ...]:
        if not isinstance(value, dict):
            raise self.fail(("points",), "points", "must be a table ([points])")
        self.known(value, {"by_place"}, ("points",), "points.")
        by_place = value.get("by_place", list(DEFAULT_POINTS))
        path, label = ("points", "by_place"), "points.by_place"
        if not isinstance(by_place, list) or not 1 <= len(by_place) <= MAX_TABLE:
            raise self.fail(path, label, f"must be a list of 1..{MAX_TABLE} integers (1st place first)")
        for place, points in enumerate(by_place, 1):
            self.integer(points, path, f"{label} (place {place})", 0, 10**9)
        if any(a < b for a, b in zip(by_place, by_place[1:])):
            raise self.fail(path, label, f"a place must not score more than the place before it: {by_place}")
        return tuple(by_place) + (0,) * (MAX_TABLE - len(by_place))

    def entrants(self, value: Any) -> tuple[Entrant, ...]:
        if value is None:
            raise self.fail(("entrant",), "entrant", "missing: add one [[entrant]] block per entrant")
        if not isinstance(value, list):
            raise self.fail(("entrant",), "entrant", "must be [[entrant]] blocks (double brackets), one per entrant")
        if not MIN_ENTRANTS <= len(value) <= MAX_ENTRANTS:
            raise self.fail(("entrant",), "entrant", f"{MIN_ENTRANTS}..{MAX_ENTRANTS} entrants, not {len(value)}")
        seen: dict[str, int] = {}
        out = []
        for i, raw in enumerate(value):
            entrant = self.entrant(raw, i)
            if (first := seen.setdefault(entrant.name.casefold(), i)) != i:
                raise self.fail(("entrant", i, "name"), f"entrant #{i + 1}.name",
                                f"{entrant.name!r} is already the name of entrant #{first + 1}")
            out.append(entrant)
        return tuple(out)

    def entrant(self, raw: Any, i: int) -> Entrant:
        label = f"entrant #{i + 1}"
        if not isinstance(raw, dict):
            raise self.fail(("entrant", i), label, "must be a table ([[entrant]])")
        name = self.name(raw, ("entrant", i, "name"), f"{label}.name")
        label = f"entrant #{i + 1} ({name})"
        self.known(raw, _ENTRANT_KEYS, ("entrant", i), f"{label}.")
        human = raw.get("human", False)
        if not isinstance(human, bool):
            raise self.fail(("entrant", i, "human"), f"{label}.human", "must be true or false")
        if human == ("bot" in raw):
            raise self.fail(("entrant", i), label, "must be exactly one of `human = true` or `bot = [...]`")
        if human:
            return Entrant(name)
        return Entrant(name, self.command(raw["bot"], ("entrant", i, "bot"), f"{label}.bot"))

    def command(self, value: Any, path: tuple[str | int, ...], label: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not value or not all(isinstance(a, str) and a for a in value):
            raise self.fail(path, label, "must be a command line: a non-empty list of non-empty strings")
        for arg in value:
            unknown = sorted(set(_PLACEHOLDER.findall(arg)) - set(PLACEHOLDERS))
            if unknown:
                raise self.fail(path, label, f"unknown placeholder {{{unknown[0]}}} in {arg!r} "
                                             f"(known: {', '.join('{' + p + '}' for p in PLACEHOLDERS)})")
        return tuple(value)


_HEADER = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\- ]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"""^\s*([A-Za-z0-9_-]+|"[^"]*"|'[^']*')\s*=""")


class _KeyLines:
    """Line numbers of a TOML text's keys and table headers, for error messages (best effort).

    A path is ``(key,)`` at the top, ``("options", key)`` in a table, ``("entrant", i, key)`` in the i-th
    (from 0) block of an array of tables; a path whose key is absent finds its table's header."""

    def __init__(self, text: str) -> None:
        self.lines: dict[tuple[str | int, ...], int] = {}
        section: tuple[str | int, ...] = ()
        counts: dict[str, int] = {}
        for number, line in enumerate(text.splitlines(), 1):
            if header := _HEADER.match(line):
                name = header.group(2)
                if header.group(1) == "[[":
                    counts[name] = counts.get(name, -1) + 1
                    section = (name, counts[name])
                    self.lines.setdefault((name,), number)
                else:
                    section = (name,)
                self.lines.setdefault(section, number)
            elif key := _KEY.match(line):
                self.lines.setdefault((*section, key.group(1).strip("\"'")), number)

    def find(self, path: tuple[str | int, ...]) -> int | None:
        for end in range(len(path), 0, -1):
            if path[:end] in self.lines:
                return self.lines[path[:end]]
        return None
