"""``parsimonia tournament``: the director that runs a roster's rounds on a server, to the end.

Everything it decides is in SQLite before it acts on it, so a director that is stopped or crashes carries on when
started again with the same roster and data directory: rounds played stay played, tables already created are
followed again (the server recovers them from its log), and results are recorded once.

By default it runs the server in the same process, its data under ``DATA/server``; with ``--url`` it directs a
server running elsewhere (with that server's admin token, if it has one).

A table is created with every seat taken (the director hands out the tokens) and its clocks paused; they run
when every seat is connected, or after the roster's ``human_grace_s`` / ``bot_grace_s`` (``presence``). An
entrant never connected forfeits. Without the admin token tables start at once, and nobody forfeits.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable

import trio

from clients.sdk import ServerError
from protocol.values import Result
from server.ops import logs
from server.runtime.app import Instruments, Server, ServerConfig
from server.storage.dirlock import DirLock
from server.games.fields import maps_field
from server.ratings.store import RATINGS_FILE, rate_table, seating_ratings
from server.tournament.bots import TableBots
from server.tournament.commands import obey, read_commands
from server.tournament.console import render_standings, render_tables, seat_line
from server.tournament.guide import entrant_key, guide_value, guides, page_link, topic
from server.tournament.events import put_aside_finished
from server.tournament.export import TournamentDocument, document_value, tournament_document, write_exports
from server.tournament.link import ServerLink, open_link
from server.tournament.presence import SeatWatch, connected_seats
from server.tournament.roster import MAX_NAME, Entrant, Roster, load_roster
from server.tournament.seeds import SECRET_FILE, random_seed
from server.tournament.store import Snapshot, Store, TableRecord

STANDINGS_TOPIC = "standings"
SEATS_POLL_S = 1.0  # how often the director asks the server who is connected
SLOW_START_S = 5.0  # a table of bots that waited this long for them is told
# `replace NAME`: a reference bot of this very Python (and source tree) plays the seat for the rest of the game
STAND_IN_BOT = (sys.executable, "-m", "server.cli.main", "bot", "greedy", "--url={url}", "--table={table}",
                "--token={token}", "--name={name}")


@dataclass
class DirectorConfig:
    roster: str
    data_dir: str = "tournament-data"
    url: str | None = None
    host: str = "127.0.0.1"
    port: int = 8765
    time_scale: float = 1.0
    admin_token: str | None = None
    seed: int | None = None
    live: bool = True  # print the standings after each game
    instruments: Instruments = field(default_factory=Instruments, repr=False)  # its server's, and between rounds


@dataclass
class Director:
    cfg: DirectorConfig
    roster: Roster
    store: Store
    link: ServerLink
    out: Callable[[str], None]
    bots: TableBots = field(init=False)  # the entrants' bot programs and the stand-ins
    _held_at: dict[str, float] = field(default_factory=dict)  # held table -> when its wait began
    _running: dict[str, TableRecord] = field(default_factory=dict)  # server table -> record
    seats: SeatWatch | None = None  # who is connected; None without the admin token
    _shown: str = ""  # the standings last printed: the same again (a round's last result, then its end) is not
    log: Any = field(default_factory=lambda: logs.get(part="director"))

    def __post_init__(self) -> None:
        self.bots = TableBots(os.path.join(self.cfg.data_dir, "bots"), self.out)
        if self.link.admin_token is not None:
            self.seats = SeatWatch(self.roster.human_grace_s, self.roster.bot_grace_s)

    @property
    def url(self) -> str:
        return self.link.url

    @property
    def running(self) -> Mapping[str, TableRecord]:
        """The round's tables still playing, by server table id."""
        return self._running

    async def run(self) -> Snapshot:
        if self.seats is None:
            self.out("without the server's admin token, tables start at once and who is connected is not known")
        else:
            self._print_links(self.store.load())
        while True:
            snap = self.store.load()
            if snap.between_rounds:
                if snap.rounds and self.cfg.instruments.between_rounds is not None:
                    self.cfg.instruments.between_rounds()
                await self._publish(snap)
                if snap.rounds_left == 0:
                    self.store.set_state("finished")
                    return self.store.load()
                tables = snap.next_tables(seating_ratings(self.cfg.data_dir, snap))
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
        held = sum(t.held for t in self._running.values())
        self.out(f"round {snap.current_round}: {len(self._running)} tables"
                 + (f" ({held} held until their players are connected)" if held else ""))
        async with trio.open_nursery() as nursery:
            self.bots.nursery = nursery
            for sid, table in self._running.items():
                self._seat_players(snap, sid, table)
            for sid in list(self._running):
                await self._follow(sid)
            if self.seats is not None:
                nursery.start_soon(self._watch_seats, self.seats)
            while self._running:
                sid, result = await self.link.results.receive()
                if sid in self._running:
                    await self._record(sid, result)
            nursery.cancel_scope.cancel()

    async def _record(self, sid: str, result: Result) -> None:
        """A running table's game has ended: its result is stored (once), its bots stopped, and the organiser
        told of its no-shows. The one place where a game's result is recorded."""
        seen_known = self.seats is not None and sid in self.seats.observed
        before = self.store.load()
        table = next(t for rnd in before.rounds for t in rnd.tables if t.server_table == sid)
        forfeits = [seat for seat in range(len(table.seats)) if seen_known and table.no_show(seat)]
        # rated before it is recorded (no-shows last, as the standings place them): a game rated twice counts once
        rate_table(self.cfg.data_dir, before, table, result, self.out, forfeits)
        if not self.store.record_result(sid, result, seen_known):
            return
        del self._running[sid]
        self._held_at.pop(sid, None)
        if self.seats is not None:
            self.seats.forget(sid)
        self.bots.stop(sid)
        self.log.info("table_result", table=sid, winners=result.get("winners"))
        snap = self.store.load()
        self._tell_no_shows(snap, sid, result)
        await self._publish(snap)

    def _tell_no_shows(self, snap: Snapshot, sid: str, result: Result) -> None:
        """Who never connected to the table (a forfeit), and a game in which nobody acted."""
        table = next(t for rnd in snap.rounds for t in rnd.tables if t.server_table == sid)
        for seat, entrant_id in enumerate(table.seats):
            if table.no_show(seat):
                entrant = snap.entrant(entrant_id)
                hint = f"; `drop {entrant.name}` leaves them out of the next rounds" \
                    if snap.rounds_left > 0 and not entrant.dropped else ""
                self.out(f"{entrant.name} never connected to table {sid}: a no-show, last at the table with no "
                         f"points{hint}")
        if result.get("actions") == 0:
            self.out(f"table {sid}: nobody acted in the whole game (it ended by {result.get('reason')}); are the "
                     f"bots too slow to start? Their output is in {os.path.join(self.cfg.data_dir, 'bots')}")

    async def _create(self, snap: Snapshot, table: TableRecord) -> None:
        seed = random_seed() if table.seed is None else table.seed  # None: paired by a director that stored none
        sid = await self.link.create_table(self.roster.game, len(table.seats), seed, dict(self.roster.options),
                                           self.cfg.time_scale)
        tokens = await self.link.take_seats(sid, [snap.entrant(e).name for e in table.seats])
        kinds = {snap.entrant(e).kind for e in table.seats}
        held = self.seats is not None and ((self.roster.human_grace_s > 0 and "human" in kinds)
                                           or (self.roster.bot_grace_s > 0 and "bot" in kinds))
        if held:  # every seat is taken, so the game has begun: its clocks wait for the players
            try:
                await self.link.admin("pause", table=sid, hold=True)  # a hold for the players, not a pause
            except ServerError as exc:
                self.log.warning("admin_refused", action="pause", table=sid, code=exc.code)
                self.out(f"table {sid}: its clocks could not be held for its players ({exc.code}); they run")
                held = False
        self.store.table_started(table.round, table.position, sid, tokens, held, watched=self.seats is not None)
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
        from server.storage.journal import read_journal
        from server.storage.journal_format import EndRecord, typed

        path = os.path.join(self.cfg.data_dir, "server", "replays", f"{sid}.journal")
        if not os.path.exists(path):
            return None
        for record in reversed(read_journal(path).records):
            if record.get("k") == "end" and isinstance(end := typed(record), EndRecord):
                return end.result
        return None

    def _seat_players(self, snap: Snapshot, sid: str, table: TableRecord) -> None:
        by_kind: dict[str, dict[int, str]] = {"human": {}, "bot": {}}
        for seat, e in enumerate(table.seats):
            by_kind[snap.entrant(e).kind][seat] = snap.entrant(e).name
        humans = by_kind["human"]
        if self.seats is not None:
            self.seats.follow(sid, humans, table.held, trio.current_time(), by_kind["bot"])
            if table.held:
                self._held_at[sid] = trio.current_time()
            if table.held and humans:
                self.out(f"table {sid}: its clocks wait for {', '.join(humans.values())} to connect "
                         f"(at most {self.roster.human_grace_s} s; `start {sid}` starts it now)")
        for seat, (entrant_id, token) in enumerate(zip(table.seats, table.tokens)):
            entrant = snap.entrant(entrant_id)
            assert token is not None
            if table.stand_in(seat):  # the organiser's `replace`, before a restart
                self.stand_in(sid, seat, entrant.name, token)
                continue
            if entrant.bot is None:
                self.out("  " + seat_line(snap, table, seat, self.seats, self.url))
                continue
            spec = next(e for e in self.roster.entrants if e.name == entrant.name)
            game = self.roster.game
            argv, env = spec.argv(self.url, sid, token, game), spec.env(self.url, sid, token, game)
            self.bots.start(sid, seat, entrant.name, argv, env)

    def stand_in(self, sid: str, seat: int, name: str, token: str) -> bool:
        """A greedy reference bot plays ``name``'s seat for the rest of the game (instead of their own bot), kept in
        the store so that a director started again starts it again; False if one already does."""
        stand_in = Entrant(f"{name} (stand-in)"[:MAX_NAME], STAND_IN_BOT)
        game = self.roster.game
        argv, env = stand_in.argv(self.url, sid, token, game), stand_in.env(self.url, sid, token, game)
        if not self.bots.stand_in(sid, seat, name, argv, env):
            return False
        self.store.seat_replaced(sid, seat)
        return True

    async def _watch_seats(self, seats: SeatWatch) -> None:
        """Every ``SEATS_POLL_S``: who is connected (humans' arrivals noted and told), and the held tables'
        clocks started once their humans are in or their grace is over."""
        while True:
            listing = maps_field(await self.link.admin("connections"), "connections")
            changes = seats.update(connected_seats(listing), trio.current_time())
            for sid, seat in changes.seen:
                if not self.bots.stood_in(sid, seat):
                    self.store.seat_seen(sid, seat)
            for sid, seat, name in changes.arrived:
                if not self.bots.stood_in(sid, seat):
                    self.out(f"{name} is connected to table {sid}, seat {seat}")
            for sid, seat, name in changes.left:
                if not self.bots.stood_in(sid, seat):
                    self.out(f"{name} is no longer connected to table {sid}, seat {seat}")
            for sid, missing in changes.start:
                why = "not connected after " + _graces(self.roster, seats, sid, missing)
                await self.start_clocks(sid, missing, why)
            await trio.sleep(SEATS_POLL_S)

    async def start_clocks(self, sid: str, missing: list[str], why: str) -> None:
        """Resume a held table's clocks (the seat watch's, or the organiser's ``start``); ``why`` they run although
        ``missing`` are not connected."""
        try:
            await self.link.admin("unpause", table=sid)
        except ServerError as exc:  # e.g. the table was closed meanwhile
            self.log.warning("admin_refused", action="unpause", table=sid, code=exc.code)
        self.store.clocks_started(sid)
        waited = trio.current_time() - self._held_at.pop(sid, trio.current_time())
        humans = self.seats is not None and bool(self.seats.humans.get(sid))
        if missing:
            self.out(f"table {sid}: its clocks run without {', '.join(missing)} ({why}); a player who never "
                     "connects forfeits the game, even with a stand-in (`replace NAME`: a greedy bot plays for "
                     "the others)")
        elif humans:
            self.out(f"table {sid}: every player is connected; its clocks run")
        elif waited >= SLOW_START_S:
            self.out(f"table {sid}: its bots took {waited:.0f} s to connect; its clocks run")

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
            await self.link.admin("publish", topic=topic(key), data=guide_value(doc))

    async def _publish(self, snap: Snapshot) -> None:
        doc = tournament_document(snap)
        if self.link.admin_token is not None:
            await self.link.admin("publish", topic=STANDINGS_TOPIC, data=document_value(doc))
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
        """An organiser's command (``commands``); returns what happened."""
        return await obey(self, line)


def _graces(roster: Roster, seats: SeatWatch, sid: str, missing: list[str]) -> str:
    """How long the ``missing`` players of ``sid`` were waited for: ``300 s``, or ``60 s (bots), 300 s (humans)``."""
    bots = seats.bots.get(sid, {}).values()
    kinds = {"bot" if name in bots else "human" for name in missing}
    if kinds == {"bot"}:
        return f"{roster.bot_grace_s} s"
    if kinds == {"human"}:
        return f"{roster.human_grace_s} s"
    return f"{roster.bot_grace_s} s (bots), {roster.human_grace_s} s (humans)"


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
    """Run the tournament; one that fails (or is stopped) before its first round began leaves no claim on the
    directory: the tournament file (and a seed secret) this run made are removed."""
    if (past := put_aside_finished(cfg.data_dir, roster)) is not None:  # a new event in the same directory
        out(f"the finished tournament of this directory is now in {past}")
    path = os.path.join(cfg.data_dir, "tournament.sqlite")
    made = [p for p in (path, os.path.join(cfg.data_dir, SECRET_FILE)) if not os.path.exists(p)]
    store = Store(path)
    try:
        return await _direct(cfg, roster, store, out)
    except BaseException:
        begun = bool(store.db.execute("SELECT count(*) FROM round").fetchone()[0])
        store.close()
        if path in made and not begun:
            for name in made + [path + "-journal"]:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name)
        raise
    finally:
        store.close()


async def _direct(cfg: DirectorConfig, roster: Roster, store: Store,
                  out: Callable[[str], None]) -> TournamentDocument:
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
                ratings_file=os.path.join(cfg.data_dir, RATINGS_FILE), instruments=cfg.instruments,
            )).run)
            url = f"ws://{'127.0.0.1' if cfg.host in ('0.0.0.0', '::') else cfg.host}:{server.port}"
            out(f"tournament server on {url}; spectators: parsimonia watch --url {url} --table ID")
            if where is not None:
                out(f"the organiser's admin token (for the page's #admin) is in {where}")
        async with open_link(url, admin) as link:
            director = Director(cfg, roster, store, link, out)
            async with trio.open_nursery() as inner:
                if sys.stdin is not None:
                    inner.start_soon(read_commands, director, out)
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
