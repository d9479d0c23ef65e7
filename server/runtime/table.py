"""The trio shell around a table's session: it owns time, the table's task and the order in which frames leave;
everything the table decides is decided by its session (``server.core.session``) and the match it drives
(``server.core.match``).

A request is a synchronous step (``Table.submit``) run by the connection's reader: no lock is needed. The table's
task fires the deadlines and sends the views the requests made due, once per scheduler pass.

Sending never blocks (``Connection.send`` drops a client that cannot keep up), so no client stalls a table. With a
journal, every frame a step causes is held back until the records that step wrote are durable. A finished table's
task ends once its journal is finished; the lobby keeps it as a ``FinishedTable``, which still answers watch, view
and resume with the result.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from typing import Callable, Protocol

import trio

from protocol import messages
from protocol.codec import encode
from protocol.errors import ProtocolError
from protocol.values import EventData, Message
from server.ops import logs
from server.ops import metrics
from server.storage.clock import ServerClock
from server.games import Event
from server.storage.journal import Journal
from server.storage.journal_format import RawRecord, Record
from server.core.match import OVER, Match, ReplayMismatch, Seat, Subscriber
from server.core.session import REPLAY_LIMIT, Session, forget_old_events

Records = Callable[[], list[RawRecord]]  # a table's records, read in a worker thread (server.runtime.history)

__all__ = ["FinishedTable", "REPLAY_LIMIT", "ReplayMismatch", "Request", "Seat", "Table", "TableInstrument"]


@dataclass
class Request:
    kind: str  # join / watch / leave / resume / act / view / detach, or pause_clocks / unpause_clocks / close_table
    conn: Subscriber
    msg: Message


class TableInstrument(Protocol):
    """A seam around tables, for an instrument (the fault campaign's: docs/reliability.md); a server in service has
    none. Both are called in the trio thread."""

    def created(self, table: str) -> None:
        """A table was created: its first record is appended to its journal, not yet durable."""

    def stepped(self, table: str, request: str | None, events: list[str]) -> Callable[[], None] | None:
        """A part of a table's step is done: its deadlines due (``request`` None) or a request of that kind,
        which made events of these types. A callable returned ends the table there: it takes no more requests
        nor steps, and the callable runs once this step's records are durable, before anything the step caused
        is sent."""


def _answer_now(session: Session, clock: ServerClock, request: Request) -> None:
    """A request to a match that is over, handled in the caller's task: nothing is left to journal, no deadline
    to fire."""
    now = clock.now_ms()
    session.handle(request.kind, request.conn, request.msg, now)
    session.flush_views(now)
    _send_all(session.take_frames())


def _send_all(frames: list[tuple[Subscriber, bytes]]) -> None:
    for sub, frame in frames:
        sub.send(frame)


class _Shell:
    """What connections and the lobby read of a table, live or finished: all of it is its session's."""

    session: Session  # who is subscribed, what they are sent
    match: Match  # the session's match: what is played

    def seat_of(self, conn: Subscriber) -> Seat | None:
        return self.session.seat_of(conn)

    def summary(self) -> messages.TableSummary:
        return self.session.summary()

    @property
    def state(self) -> str:
        return self.match.state

    def records(self) -> Records | None:
        """How to read every record of the table (in a worker thread: ``server.runtime.history``); None if it has none."""
        raise NotImplementedError


class Table(_Shell):
    """A live table: its session (around its match), its task, its journal."""

    def __init__(self, match: Match, clock: ServerClock, journal: Journal | None = None,
                 on_finish: Callable[["Table"], None] | None = None,
                 instrument: TableInstrument | None = None) -> None:
        self.session = Session(match)
        self.match = match
        self.expiry_ms: int | None = None  # how long it may wait for players, from its creation or last join
        self.expires_ms: int | None = None  # when it expires if it is still waiting then (server time)
        self.id = match.id
        self.clock = clock
        self.journal = journal
        self.on_finish = on_finish
        self._wait = trio.CancelScope()  # the task's wait, whose deadline follows the match's next one
        self._closing = False  # the task is closing: what comes now is answered at once, with nothing to journal
        self.log = logs.get(table=self.id, game=match.game_name)
        match.on_event = self._log_event
        self.stopped: OSError | None = None  # why the journal failed: nothing more is accepted or acknowledged
        self.instrument = instrument
        self._halted = False  # its instrument ended it: no step after this one (``TableInstrument.stepped``)
        self._on_halt: Callable[[], None] | None = None  # the instrument's, once the last step is durable
        self._last_ms = 0  # the latest time a step handed the match: no later step is dated before it

    # ------------------------------------------------------------------ called from connections

    def submit(self, request: Request) -> None:
        """Handle a request now, in the caller's task, then let the table's task know its next deadline."""
        if self.stopped is not None:
            raise self._stopped_error()
        if self._closing:
            _answer_now(self.session, self.clock, request)
            return
        if self._halted:
            return  # never handled: as if it had come after the table's end
        self._step(self.clock.now_ms(), request)
        self._reschedule()

    def expire(self) -> None:
        """Nobody joined in time (the lobby's own input, no client's request): a table still waiting ends, with
        reason "expired"."""
        if self.stopped is None and not self._closing:
            self._step(self.clock.now_ms(), None, expire=True)
            self._reschedule()

    def detach(self, conn: Subscriber) -> None:
        """A connection went away: its seat stays in the game, its clock keeps running. A spectator is forgotten
        with no step of the table, as nothing of the game changes (200 stalled watchers dropped together were 200
        steps in one pass of the scheduler)."""
        if self.stopped is not None or self._closing or self._halted or self.session.seat_of(conn) is None:
            self.session.detach(conn)
        else:
            self.submit(Request("detach", conn, {}))

    def records(self) -> Records | None:
        """The durable records as they are now (the later ones' events are still in the match's memory)."""
        if self.journal is None:
            return None
        return self.journal.records()

    def journal_failed(self, exc: OSError) -> None:
        """The log cannot be written: stop the table, tell its clients, acknowledge nothing more."""
        self.log.error("journal_failed", error=str(exc))
        self.stopped = exc
        notice = encode(messages.error(self._stopped_error(), table=self.id))
        for sub, _ in self.session.subscribers():
            sub.send(notice)
        self._wait.cancel()

    def summary(self) -> messages.TableSummary:
        summary = self.session.summary()
        if self.expires_ms is not None and self.match.state == "waiting":
            summary["expires"] = self.expires_ms
        return summary

    def _stopped_error(self) -> ProtocolError:
        assert self.stopped is not None
        why = self.stopped.strerror or str(self.stopped)
        return ProtocolError("internal", f"the server's journal could not be written ({why}); every table is "
                             "stopped until the server is restarted")

    # ------------------------------------------------------------------ the task

    async def run(self) -> None:
        match = self.match
        forget_old_events(self.session)  # a recovered match was replayed with all its events
        self.log.info("table_open", seats=match.seat_count, taken=len(match.seats), state=match.state)
        if match.state != OVER:
            await self._play()
        await self._close()

    async def _play(self) -> None:
        match, session = self.match, self.session
        while match.state != OVER and self.stopped is None:
            with trio.CancelScope() as self._wait:
                self._reschedule()
                await trio.sleep_forever()
            if self.stopped is not None or self._halted:
                break
            now, deadline = self.clock.now_ms(), session.next_deadline()
            if deadline is not None and self.clock.to_trio(deadline) <= trio.current_time():
                metrics.observe_lateness(now - deadline)
                now = max(now, deadline)
            self._step(now, None)
        if self._halted:
            await trio.sleep_forever()  # its instrument ended it: nothing more happens here

    def _reschedule(self) -> None:
        """Wake the task at the match's next deadline, or at once for a round of views, or when it is over."""
        session = self.session
        if session.views_due or self.match.state == OVER:
            self._wait.deadline = -math.inf
        else:
            deadline = self.clock.to_trio(session.next_deadline())
            if deadline != self._wait.deadline:
                self._wait.deadline = deadline

    def _step(self, now: int, request: Request | None, expire: bool = False) -> None:
        """The deadlines due, then the request if any (or the expiry); with no request (the task's step, or the
        expiry), the round of views.

        A deadline is handled at its own ms even when the clock, rounding trio's float time down, reads the
        ms before at the instant it fires; a request right after it is dated no earlier (an engine refuses
        time that goes backwards, and that would stop the game with server_error)."""
        started = time.perf_counter()
        now = self._last_ms = max(now, self._last_ms)
        match, session = self.match, self.session
        was, seen = match.state, match.seq
        session.tick(now)
        if self.instrument is not None:
            seen = self._instrumented(seen, None)
        if expire:
            session.expire(now)
        if request is not None and not self._halted:
            self._handle(now, request)
            if self.instrument is not None:
                self._instrumented(seen, request.kind)
        else:
            session.flush_views(now)
        if match.failure is not None:
            self.log.error("rules_failed", error=repr(match.failure)[:500])
        if was != match.state:
            self.log.info("table_" + ("started" if match.state == "running" else "ended"),
                          reason=(match.result or {}).get("reason"))
        self._release(match.take_records(), session.take_frames())
        forget_old_events(session)
        metrics.observe_step((time.perf_counter() - started) * 1000)

    def _handle(self, now: int, request: Request) -> None:
        match, session = self.match, self.session
        refused = match.rejected
        was_seated = session.seat_of(request.conn) if request.kind == "detach" else None
        session.handle(request.kind, request.conn, request.msg, now)
        if request.kind == "act":
            metrics.count_command(refused=match.rejected > refused)
        elif was_seated is not None:
            self.log.info("seat_disconnected", seat=was_seated.index)
        elif request.kind in ("join", "resume") and (seat := session.seat_of(request.conn)) is not None:
            self.log.info("seat_joined" if request.kind == "join" else "seat_resumed", seat=seat.index,
                          name=seat.name)
        if request.kind == "join" and self.expiry_ms is not None:  # someone came: it may wait as long again
            self.expires_ms = now + self.expiry_ms

    def _release(self, records: list[Record], frames: list[tuple[Subscriber, bytes]]) -> None:
        """Send what the last step produced, once the journal holds every record it wrote."""
        if self.journal is None:
            if self._on_halt is not None:
                self._on_halt()
            _send_all(frames)
            return
        for record in records:
            self.journal.append(record)
        if self._on_halt is not None:  # the table's last step: its instrument's callable runs once it is durable
            self.journal.after_durable(self._on_halt)
            self._on_halt = None
        if frames:
            self.journal.after_durable(lambda: _send_all(frames))

    def _instrumented(self, seen: int, request: str | None) -> int:
        """Tell the instrument the events after ``seen``; it may end the table with this step. Returns the
        match's ``seq`` now."""
        assert self.instrument is not None
        history = self.match.history
        events = [e.type for _, _, e in history[len(history) - (self.match.seq - seen):]]
        then = self.instrument.stepped(self.id, request, events)
        if then is not None:
            self._halted, self._on_halt = True, then
        return self.match.seq

    async def _close(self) -> None:
        """The game is over: send its last views, then hand over to the lobby (which finishes the journal)."""
        self._closing = True
        if self.stopped is None:
            self._step(self.clock.now_ms(), None)
        if self.on_finish is not None:
            self.on_finish(self)

    def _log_event(self, event: Event) -> None:
        """Notable events at info, the rest at debug; never the fields of an event some seats may not see."""
        if event.type == "result":
            return
        notable = event.type.endswith("_ended") or event.type in ("paused", "unpaused", "game_started")
        level = logging.INFO if notable else logging.DEBUG
        if self.log.is_enabled_for(level):  # the fields are not even gathered for a line nobody will see
            self.log.log(level, event.type, **_loggable(event.data if event.audience is None else {}))


def _loggable(fields: EventData) -> EventData:
    return {k: v for k, v in fields.items() if k not in ("event", "type", "at", "seats")}


class FinishedTable(_Shell):
    """A table whose game is over and whose task has ended: its session, the match retired, answering late
    requests (watch, view, resume: the result and the final view) at once, with nothing more to journal."""

    def __init__(self, session: Session, clock: ServerClock, records: Records | None = None) -> None:
        session.match.retire()
        forget_old_events(session)  # the sizes of the events it no longer holds
        session.match.on_event = None
        self.session = session
        self.match = session.match
        self.id = self.match.id
        self.clock = clock
        self._records = records  # its replay file's, for a history page

    def records(self) -> Records | None:
        return self._records

    def submit(self, request: Request) -> None:
        _answer_now(self.session, self.clock, request)

    def detach(self, conn: Subscriber) -> None:
        self.session.detach(conn)
