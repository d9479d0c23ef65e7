"""The organiser's commands to a running director, a line each: typed into its terminal, or piped or redirected
into its standard input (``read_commands``). ``obey`` carries one out and returns what happened, in one line
(``standings``: the table). A name is an entrant's, ignoring case for ``seat``; a name that is no entrant is
told apart from one not seated now."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any, Callable, Protocol

import trio

from clients.sdk import ServerError
from server.tournament.console import render_standings, render_tables, seat_line
from server.tournament.export import tournament_document
from server.tournament.link import ServerLink
from server.tournament.presence import SeatWatch
from server.tournament.store import Snapshot, Store, TableRecord

COMMANDS = "commands: pause, resume, start TABLE, seat NAME, replace NAME, drop NAME, standings"


class DirectorPort(Protocol):
    """What the commands use of the director that reads them (``server.tournament.director.Director``)."""

    @property
    def store(self) -> Store: ...

    @property
    def link(self) -> ServerLink: ...

    @property
    def seats(self) -> SeatWatch | None: ...  # who is connected; None without the admin token

    @property
    def running(self) -> Mapping[str, TableRecord]: ...  # server table -> record

    @property
    def log(self) -> Any: ...

    def stand_in(self, sid: str, seat: int, name: str, token: str) -> bool: ...

    async def start_clocks(self, sid: str, missing: list[str], why: str) -> None: ...


async def obey(director: DirectorPort, line: str) -> str:
    """``pause``, ``resume``, ``start TABLE``, ``seat NAME``, ``replace NAME``, ``drop NAME`` or
    ``standings``; returns what happened."""
    word, _, arg = line.strip().partition(" ")
    arg = arg.strip()
    seats = director.seats
    if word in ("pause", "resume"):  # the tables under way: a held table waits for its players
        done = 0
        for sid in [sid for sid in director.running if seats is None or sid not in seats.waiting]:
            try:
                await director.link.admin("pause" if word == "pause" else "unpause", table=sid)
                done += 1
            except ServerError as exc:  # e.g. a table already paused, or just ended
                director.log.warning("admin_refused", action=word, table=sid, code=exc.code)
        return f"{word}d {done} tables"
    if word == "drop":
        snap = director.store.load()
        entrant = next((e for e in snap.entrants if e.name == arg), None)
        if entrant is None:
            return not_playing(snap, arg)
        if entrant.dropped:
            return f"{arg} is already dropped"
        director.store.drop(entrant.id)
        return f"{arg} is dropped from the next round on"
    if word == "replace":
        return replace(director, arg)
    if word == "seat":
        return seat(director, arg)
    if word == "start":
        if seats is None or arg not in seats.waiting:
            return f"{arg or 'TABLE'} is not a table waiting for its players"
        seats.start(arg)
        await director.start_clocks(arg, seats.missing(arg), "started by the organiser")
        return f"started {arg}"
    if word == "standings":
        snap = director.store.load()
        tables = render_tables(snap, seats, trio.current_time())
        return render_standings(tournament_document(snap)) + (f"\n\n{tables}" if tables else "")
    return COMMANDS


def seat(director: DirectorPort, name: str) -> str:
    """Where ``name`` plays now: table, seat, token and presence."""
    snap = director.store.load()
    if not name:
        return "seat NAME: which entrant?"
    for table in director.running.values():
        for number, entrant_id in enumerate(table.seats):
            if snap.entrant(entrant_id).name.casefold() == name.casefold():
                return seat_line(snap, table, number, director.seats)
    return not_playing(snap, name)


def replace(director: DirectorPort, name: str) -> str:
    """A greedy reference bot plays ``name``'s seat for the rest of the game; kept in the store, so that a
    director started again starts it again."""
    snap = director.store.load()
    if not name:
        return "replace NAME: which entrant?"
    for sid, table in director.running.items():
        for number, (entrant_id, token) in enumerate(zip(table.seats, table.tokens)):
            if snap.entrant(entrant_id).name == name and token is not None:
                if not director.stand_in(sid, number, name, token):
                    return f"a greedy bot already plays {name}'s seat {number} at {sid}"
                return f"a greedy bot plays {name}'s seat {number} at {sid} for the rest of the game"
    return not_playing(snap, name)


def not_playing(snap: Snapshot, name: str) -> str:
    """Why ``name`` has no seat now: no such entrant, or not at a table still playing."""
    entrant = next((e for e in snap.entrants if e.name.casefold() == name.casefold()), None)
    if entrant is None:
        more = ", ..." if len(snap.entrants) > 8 else ""
        return f"no entrant {name!r} (the roster's names: {', '.join(e.name for e in snap.entrants[:8])}{more})"
    return f"{entrant.name} is not at a running table"


async def read_commands(director: DirectorPort, out: Callable[[str], None]) -> None:
    """The organiser's commands, a line each, from standard input: a terminal, or a pipe or file. Says once
    when it cannot be read or has ended."""
    while True:
        try:
            line = await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
        except (OSError, ValueError) as exc:  # closed, or not readable here
            out(f"the director reads no commands: its standard input cannot be read ({exc})")
            return
        if not line:
            out("the director's standard input is closed: it reads no more commands (the organiser's page, "
                "#admin, still pauses and closes tables)")
            return
        if line.strip():
            out(await obey(director, line))
