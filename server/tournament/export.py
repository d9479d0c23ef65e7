"""A tournament's standings and every game's result, as one JSON document and two CSV files.

``tournament_document`` is what ``parsimonia tournament --json`` prints and clients may be sent::

    {"name", "format", "state", "rounds_planned",
     "entrants": [{"rank", "name", "kind", "points", "score", "games", "opponents_points", "dropped"}, ...],
     "rounds": [{"round", "finished", "tables": [{"table", "server_table", "state", "reason", "replay",
                                                  "seats": [{"seat", "name", "score", "place", "points",
                                                             "no_show"}]}]}]}

Entrants in standings order, rounds, tables and seats in order; a seat's score, place and points (and the
table's reason and replay) are null until its game has ended. ``no_show`` is true for an entrant not connected
to the seat (yet; ever, once it has ended: a forfeit), false once they have, null when not known.
``write_exports`` writes ``tournament.json``, ``standings.csv`` (one row per entrant) and ``results.csv`` (one
row per seat of every finished game), and copies each finished game's replay file (``<server table>.journal``)
into ``replays/`` when given the server's replay directory.
"""

from __future__ import annotations

import csv
import json
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal, TypedDict, cast

from protocol.values import Value

from .roster import Format
from .standings import StandingRow, number
from .store import Snapshot, TableRecord, TableState, TournamentState

STANDINGS_COLUMNS = ("rank", "name", "kind", "points", "score", "games", "opponents_points", "dropped")
RESULTS_COLUMNS = ("round", "table", "server_table", "reason", "seat", "name", "score", "place", "points", "no_show")


class EntrantRow(StandingRow):
    kind: Literal["human", "bot"]


class SeatRow(TypedDict):
    """A seat of a table; score, place and points are None until its game has ended."""

    seat: int
    name: str
    score: int | None
    place: int | None
    points: int | float | None
    no_show: bool | None  # None when not known (no admin token, or the director did not see the game)


class TableRow(TypedDict):
    table: int  # its position in the round
    server_table: str | None
    state: TableState
    reason: Value  # the game's end reason, from its result: None until it has ended
    replay: str | None  # the replay file's path in the exports
    seats: list[SeatRow]


class RoundRow(TypedDict):
    round: int
    finished: bool
    tables: list[TableRow]


class TournamentDocument(TypedDict):
    """What ``parsimonia tournament --json`` prints (the module's docstring)."""

    name: str
    format: Format
    state: TournamentState
    rounds_planned: int
    entrants: list[EntrantRow]
    rounds: list[RoundRow]


def document_value(doc: TournamentDocument) -> Mapping[str, Value]:
    """``doc`` as a ``Value``: every field of ``TournamentDocument`` is one (mypy sees a TypedDict as a map of
    object)."""
    return cast("Mapping[str, Value]", doc)


def tournament_document(snapshot: Snapshot) -> TournamentDocument:
    names = {e.id: e.name for e in snapshot.entrants}
    kinds: dict[int, Literal["human", "bot"]] = {e.id: e.kind for e in snapshot.entrants}
    return {
        "name": snapshot.roster.name,
        "format": snapshot.roster.format,
        "state": snapshot.state,
        "rounds_planned": snapshot.roster.rounds,
        "entrants": [{**s.to_dict(), "kind": kinds[s.entrant]} for s in snapshot.standings()],
        "rounds": [
            {"round": rnd.number, "finished": rnd.finished,
             "tables": [_table(table, names, snapshot.roster.points) for table in rnd.tables]}
            for rnd in snapshot.rounds
        ],
    }


def write_exports(snapshot: Snapshot, directory: str | Path, replays: str | Path | None = None) -> list[Path]:
    """Write the exports into ``directory`` (made if need be); returns the files written."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    doc = tournament_document(snapshot)
    written = [out / "tournament.json", out / "standings.csv", out / "results.csv"]
    written[0].write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    _write_csv(written[1], STANDINGS_COLUMNS, doc["entrants"])
    _write_csv(written[2], RESULTS_COLUMNS, [
        {"round": rnd["round"], **{k: table[k] for k in ("table", "server_table", "reason")}, **seat}
        for rnd in doc["rounds"] for table in rnd["tables"] if table["state"] == "finished" for seat in table["seats"]
    ])
    if replays is not None:
        for rnd in doc["rounds"]:
            for table in rnd["tables"]:
                source = Path(replays) / f"{table['server_table']}.journal"
                if table["replay"] is not None and source.is_file():
                    (out / "replays").mkdir(exist_ok=True)
                    written.append(Path(shutil.copy2(source, out / table["replay"])))
    return written


def _table(table: TableRecord, names: dict[int, str], by_place: tuple[int, ...]) -> TableRow:
    game = table.game_result()
    seats: list[SeatRow] = [
        {"seat": seat, "name": names[e], "score": None, "place": None, "points": None, "no_show": table.no_show(seat)}
        for seat, e in enumerate(table.seats)
    ]
    if game is not None:
        places, earned = game.places_and_points(by_place)
        for seat, points in enumerate(earned):
            row = seats[seat]
            row["score"], row["place"], row["points"] = game.scores[seat], places[seat], number(points)
    return {
        "table": table.position,
        "server_table": table.server_table,
        "state": table.state,
        "reason": None if table.result is None else table.result.get("reason"),
        "replay": None if game is None else f"replays/{game.table}.journal",
        "seats": seats,
    }


def _write_csv(path: Path, columns: tuple[str, ...], rows: Iterable[Mapping[str, object]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, columns, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
