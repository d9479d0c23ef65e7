"""One data directory, many events: a tournament that is over makes way for the next one.

A director started with a roster other than the finished tournament's moves that tournament's file and exports
into ``DATA/past/K-NAME/`` (K counting from 1) and begins the new one in their place. What the events of a
directory share stays where it is: the server's journals and replays (its table ids keep counting), the ratings
(``server/ratings/store.py``), the admin token and the seeds' secret. A tournament still being played is never moved:
its roster is checked as before (``Store.begin``).
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from server.tournament.roster import Roster, parse_roster

TOURNAMENT_FILE = "tournament.sqlite"
PAST = "past"


def put_aside_finished(data_dir: str | Path, roster: Roster) -> Path | None:
    """If ``DATA/tournament.sqlite`` holds a finished tournament of a roster other than ``roster`` (beyond a
    renamed entrant's name or bot command), move it and ``DATA/export`` into ``DATA/past/K-NAME`` and return
    where; else None and nothing moved. Called with the directory's lock held."""
    data = Path(data_dir)
    path = data / TOURNAMENT_FILE
    if not path.is_file():
        return None
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = db.execute("SELECT roster, state FROM tournament").fetchone()
        finally:
            db.close()
        stored = None if row is None else parse_roster(json.loads(row[0]), "stored roster")
    except (sqlite3.Error, ValueError):
        return None  # not ours to judge: Store says what is wrong with it
    if stored is None or row[1] != "finished" or _same_event(stored, roster):
        return None
    past = data / PAST
    past.mkdir(exist_ok=True)
    number = 1 + max((int(p.name.split("-", 1)[0]) for p in past.iterdir() if p.name.split("-", 1)[0].isdigit()),
                     default=0)
    where = past / f"{number}-{''.join(c if c.isalnum() or c in '-_.' else '_' for c in stored.name)}"
    where.mkdir()
    for name in (TOURNAMENT_FILE, f"{TOURNAMENT_FILE}-journal", "export"):
        if (data / name).exists():
            os.replace(data / name, where / name)
    fd = os.open(data, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)  # the moves are durable before the new tournament's file is made
    finally:
        os.close(fd)
    return where


def _same_event(stored: Roster, roster: Roster) -> bool:
    """The roster the tournament was started with, give or take its entrants' names and bot commands."""
    if len(stored.entrants) != len(roster.entrants):
        return False
    same_kinds = all(a.kind == b.kind for a, b in zip(stored.entrants, roster.entrants))
    return same_kinds and _without_entrants(stored) == _without_entrants(roster)


def _without_entrants(roster: Roster) -> dict[str, object]:
    doc = dict(roster.to_dict())
    doc.pop("entrant")
    return doc
