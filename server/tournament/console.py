"""What the organiser's terminal shows: the standings table, and the running tables with every seat's
presence and each human's token (kept on screen, since a redraw clears what was printed before); and the ratings
ladder (``parsimonia ratings``, ``parsimonia ladder``)."""

from __future__ import annotations

import math

from server.ratings.store import Rating

from .export import TournamentDocument
from .presence import SeatWatch
from .store import Snapshot, TableRecord

LADDER_COLUMNS = ("entrant", "game", "mu", "sigma", "ordinal", "games", "last played")


def render_standings(doc: TournamentDocument) -> str:
    lines = [f"{doc.get('name', 'tournament')}: {progress(doc)}",
             f"{'#':>3} {'name':<24} {'points':>7} {'score':>8} {'games':>5}"]
    for e in doc["entrants"]:
        dropped = " (dropped)" if e.get("dropped") else ""
        lines.append(f"{e['rank']:>3} {e['name'][:24]:<24} {e['points']:>7} {e['score']:>8} {e['games']:>5}{dropped}")
    return "\n".join(lines)


def progress(doc: TournamentDocument) -> str:
    """Where the tournament is: ``before round 1 of 3``, ``round 2 of 3, 1 of 4 tables finished``, ``after round
    2 of 3``."""
    rounds, planned = doc["rounds"], doc["rounds_planned"]
    if not rounds:
        return f"before round 1 of {planned}"
    last = rounds[-1]
    if last["finished"]:
        return f"after round {last['round']} of {planned}"
    done = sum(t["state"] == "finished" for t in last["tables"])
    return f"round {last['round']} of {planned}, {done} of {len(last['tables'])} tables finished"


def render_tables(snap: Snapshot, watch: SeatWatch | None, now: float) -> str:
    """Every running table of the round, a line per seat: who, here or away (? without the admin token),
    and a human's token. Empty between rounds."""
    lines = []
    for table in snap.unfinished_tables():
        if table.server_table is None:
            continue
        sid = table.server_table
        wait = "" if watch is None or sid not in watch.waiting else \
            f"  (clocks held for its players: at most {math.ceil(max(0.0, watch.waiting[sid] - now))} s more)"
        lines.append(f"table {sid} (round {table.round}, table {table.position}){wait}")
        for seat in range(len(table.seats)):
            lines.append("  " + _seat(snap, table, seat, watch))
    return "\n".join(lines)


def seat_line(snap: Snapshot, table: TableRecord, seat: int, watch: SeatWatch | None, url: str | None = None) -> str:
    """``Ada: table t3, seat 1, token ... (connected)``: what the organiser reads out to a player; with the
    server's ``url``, followed by the seat's link for the web page, ``http://HOST:PORT/#t3/TOKEN``."""
    entrant = snap.entrant(table.seats[seat])
    line = f"{entrant.name}: table {table.server_table}, seat {seat}, token {table.tokens[seat]}" \
           f" ({_presence(table, seat, watch)})"
    if url is None:
        return line
    page = "http" + url[2:].rstrip("/") if url.startswith("ws") else url.rstrip("/")
    return f"{line}: {page}/#{table.server_table}/{table.tokens[seat]}"


def _seat(snap: Snapshot, table: TableRecord, seat: int, watch: SeatWatch | None) -> str:
    entrant = snap.entrant(table.seats[seat])
    token = f"  token {table.tokens[seat]}" if entrant.kind == "human" else ""
    return f"seat {seat}  {entrant.name[:24]:<24} {entrant.kind:<5} {_presence(table, seat, watch):<13}{token}".rstrip()


def _presence(table: TableRecord, seat: int, watch: SeatWatch | None) -> str:
    if watch is None:
        return "presence unknown"
    return "connected" if (table.server_table, seat) in watch.connected else "not connected"


def render_ladder(ladder: list[Rating]) -> str:
    """The ladder as an aligned text table, best ordinal first within each game."""
    if not ladder:
        return "no ratings yet"
    rows = [LADDER_COLUMNS] + [(r.entrant, r.game, f"{r.mu:.2f}", f"{r.sigma:.2f}", f"{r.ordinal:.2f}",
                                str(r.games), r.last_played) for r in ladder]
    widths = [max(len(row[i]) for row in rows) for i in range(len(LADDER_COLUMNS))]
    numeric = {2, 3, 4, 5}
    return "\n".join("  ".join(cell.rjust(w) if i in numeric else cell.ljust(w)
                               for i, (cell, w) in enumerate(zip(row, widths))).rstrip() for row in rows)
