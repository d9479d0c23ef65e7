"""``parsimonia ladder``: a league for bots that runs until stopped. It plays the roster's tournament again and
again in one data directory, each event named ``NAME #K`` and seated by rating (``seating = "rating"``), with the
director's seating, clocks and bots as they are; every game is rated (``server/ratings/store.py``), and the ladder is
printed after each event. A finished event is set aside in ``DATA/past/`` by the next (``events.py``).

Stopped (Ctrl-C, a crash) and started again on the same directory, it carries on the event under way; an event
that finished stays finished, and the next one begins.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from dataclasses import replace
from typing import Callable

from server.storage.dirlock import DirLock
from server.ratings.store import RATINGS_FILE, RatingStore
from server.tournament.console import render_ladder
from server.tournament.director import DirectorConfig, _run_locked
from server.tournament.events import TOURNAMENT_FILE
from server.tournament.roster import Roster, RosterError, load_roster, parse_roster


def event_roster(roster: Roster, number: int) -> Roster:
    """Event ``number``'s roster: the ladder's, named ``NAME #number``, seated by rating."""
    return replace(roster, name=f"{roster.name} #{number}", seating="rating")


def next_event(data_dir: str, roster: Roster) -> int:
    """The event to play now: the one under way in ``data_dir``, or the one after the last finished (1 first)."""
    path = os.path.join(data_dir, TOURNAMENT_FILE)
    if not os.path.isfile(path):
        return 1
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = db.execute("SELECT roster, state FROM tournament").fetchone()
        finally:
            db.close()
        name = None if row is None else parse_roster(json.loads(row[0]), "stored roster").name
    except (sqlite3.Error, ValueError):
        return 1  # the director says what is wrong with it
    found = None if name is None else re.fullmatch(re.escape(roster.name) + r" #(\d+)", name)
    if found is None:
        return 1
    return int(found.group(1)) + (1 if row[1] == "finished" else 0)


async def run_ladder(cfg: DirectorConfig, events: int | None, out: Callable[[str], None] = print) -> int:
    """Play events until stopped (or ``events`` of them); returns how many this call finished."""
    roster = load_roster(cfg.roster)
    humans = [e.name for e in roster.entrants if e.bot is None]
    if humans:
        raise RosterError(f"{cfg.roster}: a ladder seats bots only, and {humans[0]} is a human: run a tournament "
                          "for people (parsimonia tournament)")
    os.makedirs(cfg.data_dir, mode=0o700, exist_ok=True)
    lock = DirLock(cfg.data_dir)
    played = 0
    try:
        while events is None or played < events:
            number = next_event(cfg.data_dir, roster)
            this = event_roster(roster, number)
            out(f"ladder event {this.name}: {this.rounds} rounds, seated by rating")
            doc = await _run_locked(replace(cfg, live=False), this, out)
            played += 1
            games = sum(len(r["tables"]) for r in doc["rounds"])
            with RatingStore(os.path.join(cfg.data_dir, RATINGS_FILE)) as store:
                out(f"ladder event {this.name} over ({games} games); the ladder:\n"
                    + render_ladder(store.ladder(roster.game)))
    finally:
        lock.close()
    return played
