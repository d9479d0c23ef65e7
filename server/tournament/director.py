"""``parsimonia tournament``: the director that runs a roster's rounds on a server, to the end.

Everything it decides is in SQLite before it acts on it, so a director that is stopped or crashes
carries on where it was when started again with the same roster and data directory: rounds already
played stay played, tables already created are followed again (the server recovers them from its
journals), and results are recorded once.

By default it runs the server in the same process, journaling under ``DATA/server``; with ``--url`` it
directs a server running elsewhere (then it needs that server's admin token if it has one).

A table with human entrants is created with every seat taken (the director hands out the tokens) and its
clocks paused at once; they run when every human is connected, or after the roster's ``human_grace_s``
(``presence``). Without the admin token the director can neither hold clocks nor see who is connected: such
tables start at once.
"""

from __future__ import annotations

import os
import secrets
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

import trio

from clients.sdk import ServerError
from protocol.values import Result
from server import faults, logs
from server.app import Server, ServerConfig
from server.dirlock import DirLock
from server.tournament.bots import run_bot_process
from server.tournament.console import render_standings, render_tables, seat_line
from server.tournament.guide import entrant_key, guides, page_link, topic
from server.tournament.export import TournamentDocument, tournament_document, write_exports
from server.tournament.link import ServerLink, open_link
from server.tournament.presence import SeatWatch, connected_seats
from server.tournament.roster import MAX_NAME, Entrant, Roster, load_roster
from server.tournament.seeds import random_seed
from server.tournament.store import Snapshot, Store, TableRecord

STANDINGS_TOPIC = "standings"
SEATS_POLL_S = 1.0  # how often the director asks the server who is connected
COMMANDS = "commands: pause, resume, start TABLE, seat NAME, replace NAME, drop NAME, standings"
# `replace NAME`: a reference bot of this very Python (and source tree) plays the seat for the rest of the game
STAND_IN_BOT = (sys.executable, "-m", "server.cli", "bot", "greedy", "--url={url}", "--table={table}",
                "--token={token}", "--name={name}")


@dataclass
class DirectorConfig:
    roster: str
    data_dir: str = "data"
    url: str | None = None
    host: str = "127.0.0.1"
    port: int = 8765
    time_scale: float = 1.0
    admin_token: str | None = None
    seed: int | None = None
    live: bool = True  # print the standings after each game


@dataclass
class Director:
    cfg: DirectorConfig
    roster: Roster
    store: Store
    link: ServerLink
    out: Callable[[str], None]
    _bots: dict[str, list[trio.CancelScope]] = field(default_factory=dict)  # server table -> its bots
    _running: dict[str, TableRecord] = field(default_factory=dict)  # server table -> record
    _round: trio.Nursery | None = None  # where the current round's bots run
    _stand_ins: set[tuple[str, int]] = field(default_factory=set)  # (table, seat) played by a `replace` bot
    seats: SeatWatch | None = None  # who is connected; None without the admin token
    _shown: str = ""  # the standings last printed: the same again (a round's last result, then its end) is not
    log: Any = field(default_factory=lambda: logs.get(part="director"))

    def __post_init__(self) -> None:
        if self.link.admin_token is not None:
            self.seats = SeatWatch(self.roster.human_grace_s)

    @property
    def url(self) -> str:
        return self.link.url

    async def run(self) -> Snapshot:
        if self.seats is None:
            self.out("without the server's admin token, tables start at once and who is connected is not known")
        else:
            self._print_links(self.store.load())
        while True:
            snap = self.store.load()
            if snap.between_rounds:
                if faults.ACTIVE is not None and snap.rounds:
                    faults.at("between-rounds")
                await self._publish(snap)
                if snap.rounds_left == 0:
                    self.store.set_state("finished")
                    return self.store.load()
                tables = snap.next_tables()
                secret = self.store.secret() if snap.seeded else None
                self.store.start_round(snap.current_round + 1, tables,
                                       snap.table_seeds(snap.current_round + 1, len(tables), secret))
                self.log.info("round_paired", round=snap.current_round + 1)
                continue
            await self._play_round(snap)

    async def _play_round(self, snap: Snapshot) -> None:
        for table in snap.unfinished_tables():
            if table.state == "pending":
                await self._create(snap, table)
        snap = self.store.load()
        await self._publish_guides(snap)  # before the round is seen running: each human's link finds the table
        self._running = {t.server_table: t for t in snap.unfinished_tables() if t.server_table is not None}
        self.out(f"round {snap.current_round}: {len(self._running)} tables")
        async with trio.open_nursery() as nursery:
            self._round = nursery
            for sid, table in self._running.items():
                self._seat_players(snap, sid, table)
            for sid in list(self._running):
                await self._follow(sid)
            if self.seats is not None:
                nursery.start_soon(self._watch_seats, self.seats)
            while self._running:
                sid, result = await self.link.results.receive()
                if sid in self._running and self.store.record_result(sid, result):
                    del self._running[sid]
                    if self.seats is not None:
                        self.seats.forget(sid)
                    for scope in self._bots.pop(sid, []):
                        scope.cancel()
                    self.log.info("table_result", table=sid, winners=result.get("winners"))
                    await self._publish(self.store.load())
            nursery.cancel_scope.cancel()

    async def _create(self, snap: Snapshot, table: TableRecord) -> None:
        seed = random_seed() if table.seed is None else table.seed  # None: paired by a director that stored none
        sid = await self.link.create_table(self.roster.game, len(table.seats), seed, dict(self.roster.options),
                                           self.cfg.time_scale)
        tokens = await self.link.take_seats(sid, [snap.entrant(e).name for e in table.seats])
        held = (self.seats is not None and self.roster.human_grace_s > 0
                and any(snap.entrant(e).kind == "human" for e in table.seats))
        if held:  # every seat is taken, so the game has begun: its clocks wait for the humans
            try:
                await self.link.admin("pause", table=sid, hold=True)  # a hold for the players, not a pause
            except ServerError as exc:
                self.log.warning("admin_refused", action="pause", table=sid, code=exc.code)
                self.out(f"table {sid}: its clocks could not be held for its players ({exc.code}); they run")
                held = False
        self.store.table_started(table.round, table.position, sid, tokens, held)
        self.log.info("table_created", table=sid, round=table.round, position=table.position, held=held)

    async def _follow(self, sid: str) -> None:
        try:
            await self.link.follow(sid)
        except ServerError as exc:
            if exc.code != "no_such_table":
                raise
            result = self._result_from_replay(sid)
            if result is None:
                raise RuntimeError(f"table {sid} is gone from the server and left no replay file") from None
            await self.link._results_in.send((sid, result))

    def _result_from_replay(self, sid: str) -> Result | None:
        """A table that ended while the director was down: its result is in the server's replay file."""
        from server.journal import read_journal

        path = os.path.join(self.cfg.data_dir, "server", "replays", f"{sid}.journal")
        if not os.path.exists(path):
            return None
        end = [r for r in read_journal(path).records if r.get("k") == "end"]
        return end[-1]["result"] if end else None

    def _seat_players(self, snap: Snapshot, sid: str, table: TableRecord) -> None:
        humans = {seat: snap.entrant(e).name for seat, e in enumerate(table.seats) if snap.entrant(e).kind == "human"}
        if self.seats is not None:
            self.seats.follow(sid, humans, table.held, trio.current_time())
            if table.held:
                self.out(f"table {sid}: its clocks wait for {', '.join(humans.values())} to connect "
                         f"(at most {self.roster.human_grace_s} s; `start {sid}` starts it now)")
        for seat, (entrant_id, token) in enumerate(zip(table.seats, table.tokens)):
            entrant = snap.entrant(entrant_id)
            assert token is not None
            if entrant.bot is None:
                self.out("  " + seat_line(snap, table, seat, self.seats, self.url))
                continue
            spec = next(e for e in self.roster.entrants if e.name == entrant.name)
            game = self.roster.game
            argv, env = spec.argv(self.url, sid, token, game), spec.env(self.url, sid, token, game)
            self._start_bot(sid, entrant.name, argv, env)

    def _start_bot(self, sid: str, name: str, argv: list[str], env: dict[str, str]) -> None:
        assert self._round is not None
        self._round.start_soon(self._bot, sid, name, argv, env)

    async def _bot(self, sid: str, name: str, argv: list[str], env: dict[str, str]) -> None:
        """One bot process for the rest of ``sid``'s game: it is stopped when the table's result is in."""
        log_dir = os.path.join(self.cfg.data_dir, "bots")
        os.makedirs(log_dir, exist_ok=True)
        with trio.CancelScope() as scope:
            self._bots.setdefault(sid, []).append(scope)
            if sid in self._running:
                await run_bot_process(name, argv, env, os.path.join(log_dir, f"{_safe(name)}.log"), self.out)

    async def _watch_seats(self, seats: SeatWatch) -> None:
        """Every ``SEATS_POLL_S``: who is connected (humans' arrivals noted and told), and the held tables'
        clocks started once their humans are in or their grace is over."""
        while True:
            listing = (await self.link.admin("connections"))["connections"]
            changes = seats.update(connected_seats(listing), trio.current_time())
            for sid, seat, name in changes.arrived:
                if (sid, seat) in self._stand_ins:
                    continue
                self.store.seat_seen(sid, seat)
                self.out(f"{name} is connected to table {sid}, seat {seat}")
            for sid, seat, name in changes.left:
                if (sid, seat) not in self._stand_ins:
                    self.out(f"{name} is no longer connected to table {sid}, seat {seat}")
            for sid, missing in changes.start:
                await self._start_clocks(sid, missing, f"not connected after {self.roster.human_grace_s} s")
            await trio.sleep(SEATS_POLL_S)

    async def _start_clocks(self, sid: str, missing: list[str], why: str) -> None:
        """Resume a held table's clocks; ``why`` they run although ``missing`` are not connected."""
        try:
            await self.link.admin("unpause", table=sid)
        except ServerError as exc:  # e.g. the table was closed meanwhile
            self.log.warning("admin_refused", action="unpause", table=sid, code=exc.code)
        self.store.clocks_started(sid)
        if missing:
            self.out(f"table {sid}: its clocks run without {', '.join(missing)} ({why})")
        else:
            self.out(f"table {sid}: every player is connected; its clocks run")

    def _print_links(self, snap: Snapshot) -> None:
        """Each human's one link for the whole tournament (the page follows it from table to table)."""
        assert self.link.admin_token is not None
        for e in snap.entrants:
            if e.kind == "human":
                key = entrant_key(self.link.admin_token, snap.roster.name, e.id)
                self.out(f"{e.name}'s link for every round: {page_link(self.url, key)}")

    async def _publish_guides(self, snap: Snapshot) -> None:
        """Tell each human's link where they play now, or that they wait, or that it is over."""
        if self.link.admin_token is None:
            return
        for entrant_id, doc in guides(snap).items():
            key = entrant_key(self.link.admin_token, snap.roster.name, entrant_id)
            await self.link.admin("publish", topic=topic(key), data=doc)

    async def _publish(self, snap: Snapshot) -> None:
        doc = tournament_document(snap)
        if self.link.admin_token is not None:
            await self.link.admin("publish", topic=STANDINGS_TOPIC, data=doc)
            await self._publish_guides(snap)
        if self.cfg.live:
            redraw = "\x1b[2J\x1b[H" if sys.stdout.isatty() else ""  # a table that updates in place ...
            tables = render_tables(snap, self.seats, trio.current_time())  # ... and keeps the tokens on screen
            shown = redraw + render_standings(doc) + (f"\n\n{tables}" if tables and redraw else "")
            if shown != self._shown:
                self._shown = shown
                self.out(shown)

    # ------------------------------------------------------------------ the organiser's console

    async def command(self, line: str) -> str:
        """``pause``, ``resume``, ``start TABLE``, ``seat NAME``, ``replace NAME``, ``drop NAME`` or
        ``standings``; returns what happened."""
        word, _, arg = line.strip().partition(" ")
        arg = arg.strip()
        if word in ("pause", "resume"):  # the tables under way: a held table waits for its players
            done = 0
            for sid in [sid for sid in self._running if self.seats is None or sid not in self.seats.waiting]:
                try:
                    await self.link.admin("pause" if word == "pause" else "unpause", table=sid)
                    done += 1
                except ServerError as exc:  # e.g. a table already paused, or just ended
                    self.log.warning("admin_refused", action=word, table=sid, code=exc.code)
            return f"{word}d {done} tables"
        if word == "drop":
            snap = self.store.load()
            entrant = next((e for e in snap.entrants if e.name == arg), None)
            if entrant is None:
                return f"no entrant {arg!r}"
            self.store.drop(entrant.id)
            return f"{arg} is dropped from the next round on"
        if word == "replace":
            return self._replace(arg)
        if word == "seat":
            return self._seat(arg)
        if word == "start":
            if self.seats is None or arg not in self.seats.waiting:
                return f"{arg or 'TABLE'} is not a table waiting for its players"
            del self.seats.waiting[arg]
            await self._start_clocks(arg, self.seats.missing(arg), "started by the organiser")
            return f"started {arg}"
        if word == "standings":
            snap = self.store.load()
            tables = render_tables(snap, self.seats, trio.current_time())
            return render_standings(tournament_document(snap)) + (f"\n\n{tables}" if tables else "")
        return COMMANDS

    def _seat(self, name: str) -> str:
        snap = self.store.load()
        for table in self._running.values():
            for seat, entrant_id in enumerate(table.seats):
                if snap.entrant(entrant_id).name.casefold() == name.casefold():
                    return seat_line(snap, table, seat, self.seats)
        return f"{name or 'NAME'} is not at a running table"

    def _replace(self, name: str) -> str:
        snap = self.store.load()
        for sid, table in self._running.items():
            for seat, (entrant_id, token) in enumerate(zip(table.seats, table.tokens)):
                if snap.entrant(entrant_id).name == name and token is not None:
                    stand_in = Entrant(f"{name} (stand-in)"[:MAX_NAME], STAND_IN_BOT)
                    self._stand_ins.add((sid, seat))
                    game = self.roster.game
                    self._start_bot(sid, name, stand_in.argv(self.url, sid, token, game),
                                    stand_in.env(self.url, sid, token, game))
                    return f"a greedy bot plays {name}'s seat {seat} at {sid} for the rest of the game"
        return f"{name} is not at a running table"


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


async def run_tournament(cfg: DirectorConfig, out: Callable[[str], None] = print) -> TournamentDocument:
    """Run (or carry on) the tournament of ``cfg.roster`` to its end; return its document."""
    roster = load_roster(cfg.roster)
    os.makedirs(cfg.data_dir, mode=0o700, exist_ok=True)
    lock = DirLock(cfg.data_dir)  # one director per directory (DataDirBusy), whose server has DATA/server
    try:
        return await _run_locked(cfg, roster, out)
    finally:
        lock.close()


async def _run_locked(cfg: DirectorConfig, roster: Roster, out: Callable[[str], None]) -> TournamentDocument:
    with Store(os.path.join(cfg.data_dir, "tournament.sqlite")) as store:
        if store.begin(roster, roster.seed if cfg.seed is None else cfg.seed).seeded:
            store.secret()  # made now, or refused (StoreError, one line) before anything starts
        for old, new in store.renamed:
            out(f"roster: entrant {old!r} is now {new!r} (their games and points stay theirs)")
        async with trio.open_nursery() as nursery:
            url, admin = cfg.url, cfg.admin_token
            if url is None:
                where = None
                if admin is None:
                    admin, where = _own_admin_token(cfg.data_dir)
                server = await nursery.start(Server(ServerConfig(
                    host=cfg.host, port=cfg.port, data_dir=os.path.join(cfg.data_dir, "server"), admin_token=admin,
                )).run)
                url = f"ws://{'127.0.0.1' if cfg.host in ('0.0.0.0', '::') else cfg.host}:{server.port}"
                out(f"tournament server on {url}; spectators: parsimonia watch --url {url} --table ID")
                if where is not None:
                    out(f"the organiser's admin token (for the page's #admin) is in {where}")
            async with open_link(url, admin) as link:
                director = Director(cfg, roster, store, link, out)
                async with trio.open_nursery() as inner:
                    if cfg.live and sys.stdin is not None and sys.stdin.isatty():
                        inner.start_soon(_console, director, out)
                    snap = await director.run()
                    inner.cancel_scope.cancel()
            nursery.cancel_scope.cancel()
        export = os.path.join(cfg.data_dir, "export")
        write_exports(snap, export, os.path.join(cfg.data_dir, "server", "replays"))
        out(f"exports written to {export}: standings.csv, results.csv, tournament.json, replays/")
        return tournament_document(snap)


def _own_admin_token(data_dir: str) -> tuple[str, str]:
    """The in-process server's admin token when none was given: kept in ``DATA/admin-token`` (readable by
    this user only), made on the first run, the same after a restart. Returns it and the file's path."""
    path = os.path.join(data_dir, "admin-token")
    try:
        with open(path, encoding="utf-8") as f:
            token = f.readline().strip()
        if len(token) >= 16:
            return token, path
    except FileNotFoundError:
        pass
    token = secrets.token_urlsafe(24)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(token + "\n")
    return token, path


async def _console(director: Director, out: Callable[[str], None]) -> None:
    while True:
        line = await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
        if not line:
            return
        out(await director.command(line))
