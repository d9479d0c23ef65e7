"""The session around one table's match, sans-IO: who is subscribed (seats and spectators), the requests they
send, the replies, and the frames each audience is given (events redacted per seat, views). It knows no socket
and no clock: each call takes ``now`` in integer ms, and what it would send goes out as ``(subscriber, frame)``
pairs (``take_frames``) for the driver (``server.runtime.table``) to deliver.

A subscriber is anything with ``send(frame: bytes)`` (a WebSocket connection, a list in a test, an in-process
client) and serves only as an opaque key here: it is never called from this module.

The session owns its match (``server.core.match``) and feeds it through its one entry, ``Match.apply``: a request
becomes one of the match's typed inputs, and the events that input numbered become frames for every subscriber
that may see them. What the match holds (state, seq, history, result, engine) is read as ``session.match``'s.
"""

from __future__ import annotations

import hmac
from collections import deque
from typing import Callable, TypeVar, cast

from protocol import messages
from protocol.codec import encode
from protocol.errors import ProtocolError
from protocol.frames import ViewFrames, event_frame
from protocol.messages import TableSummary
from protocol.views import player_view
from protocol.values import Command, LegalAction, Message, Value, ViewPart
from server.games import Event
from server.core.records import CloseRecord, Input, LeaveRecord, PauseRecord, StartRecord, TickRecord, UnpauseRecord
from server.core.match import RUNNING, WAITING, Match, Refusal, Seat, Subscriber

REPLAY_LIMIT = 2000  # a resume further behind than this gets a fresh view instead of the events
# a waiting table's seat whose connection went away is freed this long after, unless it was resumed meanwhile: a
# bot killed before its table filled leaves no seat nobody holds (the SDKs reconnect within a few seconds)
SEAT_GRACE_MS = 10_000
# a live table's events kept in memory (for resumes, and history pages): at most 2 * REPLAY_LIMIT of them and
# 2 * HISTORY_BYTES, trimmed to REPLAY_LIMIT and HISTORY_BYTES when over either (older pages are replayed from the
# journal). An event's bytes: its frame's, and EVENT_BYTES for its objects (a 60-byte gift event holds ~430 bytes).
# Small: busy tables' events are small objects spread over the heap, and what outlives them pins their pages
HISTORY_BYTES = 64 << 10
EVENT_BYTES = 360


def _acting(match: Match) -> bool:
    """Whether the seats may act now, so that their views carry legal moves: the game running, its clocks going."""
    return match.engine is not None and match.paused_at is None and match.state == RUNNING


class Session:
    def __init__(self, match: Match) -> None:
        self.match = match
        self.spectators: dict[Subscriber, bool] = {}  # subscriber -> wants views
        self._frames: list[tuple[Subscriber, bytes]] = []
        self._views_due = False
        self._gone: list[tuple[int, Seat]] = []  # (when it is freed, seat): a waiting table's seats left unheld
        self._sizes: deque[int] = deque()  # what each of the history's events costs, oldest first
        self._new_sizes: list[int] = []  # of the events sent since the last forget_old_events
        self.history_bytes = 0  # the sum of _sizes

    # ------------------------------------------------------------------ what the driver reads

    def take_frames(self) -> list[tuple[Subscriber, bytes]]:
        frames, self._frames = self._frames, []
        return frames

    @property
    def views_due(self) -> bool:
        """Whether a round of views is owed: something changed since the last ``flush_views``, and someone
        wants views (a bot that asked for events only costs no round)."""
        return self._views_due and (any(s.views and s.sub is not None for s in self.match.seats)
                                    or any(self.spectators.values()))

    def summary(self) -> TableSummary:
        match = self.match
        summary: TableSummary = {"table": match.id, "game": match.game_name, "seats": match.seat_count,
                                 "taken": len(match.seats), "state": match.state, "spectators": len(self.spectators),
                                 "paused": match.paused_at is not None}
        return {**summary, "seeded": True} if match.seeded else summary

    def seat_of(self, sub: Subscriber) -> Seat | None:
        for seat in self.match.seats:
            if seat.sub is sub:
                return seat
        return None

    def subscribers(self) -> list[tuple[Subscriber, int | None]]:
        out: list[tuple[Subscriber, int | None]] = [(s.sub, s.index) for s in self.match.seats if s.sub is not None]
        out += [(sub, None) for sub in self.spectators]
        return out

    # ------------------------------------------------------------------ driving

    def next_deadline(self) -> int | None:
        """The match's next deadline, or sooner the end of a waiting seat's grace (``SEAT_GRACE_MS``)."""
        deadline = self.match.next_deadline()
        if not self._gone:
            return deadline
        freed = min(at for at, _ in self._gone)
        return freed if deadline is None else min(deadline, freed)

    def tick(self, now: int) -> None:
        """The deadlines due at ``now`` fire (the server's own input), and a waiting table's seats left unheld a
        grace ago are freed."""
        deadline = self.match.next_deadline()
        if deadline is not None and deadline <= now:
            self.match.apply(TickRecord(now))
            self._fan_out()
        if self._gone:
            _free_seats(self, now)

    def handle(self, kind: str, sub: Subscriber, msg: Message, now: int) -> None:
        """One request from ``sub``; a refusal is answered to it with an ``error`` frame."""
        try:
            REQUESTS[kind](self, sub, msg, now)
        except ProtocolError as err:
            self._fan_out()  # whatever the match numbered before it refused
            self._send(sub, encode(messages.error(err, re=_field(msg, "id", int), table=self.match.id)))

    def expire(self, now: int) -> None:
        """Nobody joined in time (the lobby's, not a client's input): a table still waiting ends, "expired"."""
        if self.match.state == WAITING:
            self.match.apply(CloseRecord(now, ended="expired"))
            self._fan_out()

    def detach(self, sub: Subscriber) -> None:
        """A subscriber went away: a seat stays in the game (its clock keeps running), a spectator is gone. (A
        waiting table's seat is freed a grace later: the ``detach`` request.)"""
        self.spectators.pop(sub, None)
        for seat in self.match.seats:
            if seat.sub is sub:
                seat.sub = None

    # ------------------------------------------------------------------ what subscribers see

    def flush_views(self, now: int, only: Subscriber | None = None, re: int | None = None) -> None:
        """Send a fresh view to every subscriber that wants views (if the step changed anything), or to
        ``only``. The public part is built and encoded once, and so is the spectators' whole frame."""
        if only is None and not self._views_due:
            return
        held = self.seat_of(only) if only is not None else None
        targets = [(only, None if held is None else held.index)] if only is not None else []
        if self._views_due:
            self._views_due = False
            targets = [(s.sub, s.index) for s in self.match.seats if s.sub is not None and s.views]
            targets += [(sub, None) for sub, views in self.spectators.items() if views]
            if only is not None and all(t[0] is not only for t in targets):
                targets.append((only, None if held is None else held.index))
        if not targets:
            return
        match, queue = self.match, self._frames
        engine = match.engine
        acting = _acting(match)
        frames = ViewFrames(match.id, match.seq, now, self.public_view())
        spectators: bytes | None = None  # the one frame every spectator gets (unless it answers a request)
        for target, seat in targets:
            assert target is not None
            answers = re if target is only else None
            if seat is None:
                if answers is not None:
                    queue.append((target, frames.for_seat(None, None, [], answers)))
                    continue
                if spectators is None:
                    spectators = frames.for_seat(None, None, [])
                queue.append((target, spectators))
                continue
            private = engine.private_view(seat) if engine is not None else {}
            legal = engine.legal_actions(seat) if acting and engine is not None else []
            queue.append((target, frames.for_seat(seat, private, legal, answers)))

    def public_view(self) -> ViewPart:
        match = self.match
        if match.engine is None:
            body: ViewPart = {"game": match.game_name, "phase": "waiting"}
        else:
            body = dict(match.views.public(match.engine))  # a copy: the table's own fields go in it
            if match.result is not None:
                body["result"] = match.result
        body["seats"] = [{"seat": s.index, "name": s.name, "connected": s.sub is not None} for s in match.seats]
        body["seat_count"] = match.seat_count
        body["paused"] = match.paused_at is not None
        if match.paused_at is not None:  # the clocks stand where they stopped: every deadline minus this
            body["paused_at"] = match.paused_at
            if match.held:
                body["held"] = True
        if match.seeded:
            body["seeded"] = True
        return body

    def legal(self, seat: int | None) -> list[LegalAction]:
        match = self.match
        if seat is None or not _acting(match):
            return []
        assert match.engine is not None
        return match.engine.legal_actions(seat)

    def player_view(self, seat: int | None) -> ViewPart:
        """The whole view as a player is given it (the in-process form of a ``view`` frame)."""
        match = self.match
        private = match.views.private(match.engine, seat) if seat is not None and match.engine is not None else None
        return player_view(match.static, self.public_view(), private, seat)

    def _fan_out(self) -> None:
        """The events the match numbered since the last look, to every subscriber that may see each;
        views follow at the step's end."""
        events = self.match.take_events()
        if not events:
            return
        table, subscribers, queue = self.match.id, self.subscribers(), self._frames
        sizes = self._new_sizes
        for seq, at, event in events:
            full = event_frame(table, seq, at, event.to_wire())
            sizes.append(EVENT_BYTES + len(full))
            if event.audience is None:
                queue.extend([(sub, full) for sub, _ in subscribers])
                continue
            other = event_frame(table, seq, at, event.redacted_wire())
            queue.extend([(sub, full if event.visible_to(seat) else other) for sub, seat in subscribers])
        self._views_due = True

    def _send(self, sub: Subscriber, frame: bytes) -> None:
        self._frames.append((sub, frame))


def _free_seats(s: Session, now: int) -> None:
    """The seats of a waiting table whose connection went away a grace ago and that nobody resumed since leave
    the table, as a ``leave`` would (the seat's number goes to the next player to join)."""
    match = s.match
    if match.state != WAITING:
        s._gone.clear()
        return
    due = [seat for at, seat in s._gone if at <= now]
    s._gone = [(at, seat) for at, seat in s._gone if at > now]
    for seat in due:
        if seat.sub is None and any(other is seat for other in match.seats):
            match.apply(LeaveRecord(seat.index))
            s._views_due = True


def forget_old_events(s: Session) -> None:
    """Trim the history to ``REPLAY_LIMIT`` events and ``HISTORY_BYTES`` once it holds twice either (but never
    the last event): a table that plays on for hours (a long opening of many bids, gifts sent as fast as allowed)
    keeps a bounded memory. A resume further behind gets what is left and ``capped``, and pages the rest with
    ``history``, replayed from the journal, which keeps every record. After ``retire``: the sizes go too."""
    history, sizes = s.match.history, s._sizes
    if s._new_sizes:
        sizes.extend(s._new_sizes)
        s.history_bytes += sum(s._new_sizes)
        s._new_sizes.clear()
    while len(sizes) > len(history):  # trimmed meanwhile (retired)
        s.history_bytes -= sizes.popleft()
    if len(sizes) < len(history):  # events never sent (a recovered match's, replayed): measured once
        if len(history) > 2 * REPLAY_LIMIT:  # only those the count keeps
            del history[: min(len(history) - len(sizes), len(history) - REPLAY_LIMIT)]
        table = s.match.id
        older = [EVENT_BYTES + len(event_frame(table, seq, at, event.to_wire()))
                 for seq, at, event in history[: len(history) - len(sizes)]]
        sizes.extendleft(reversed(older))
        s.history_bytes += sum(older)
    if len(history) <= 2 * REPLAY_LIMIT and s.history_bytes <= 2 * HISTORY_BYTES:
        return
    drop = 0
    while len(history) - drop > 1 and (len(history) - drop > REPLAY_LIMIT or s.history_bytes > HISTORY_BYTES):
        s.history_bytes -= sizes.popleft()
        drop += 1
    del history[:drop]


# ---------------------------------------------------------------------- the requests, each an input of the match

T = TypeVar("T")


def _field(msg: Message, key: str, kind: type[T]) -> T | None:
    """A field of a request ``messages.parse_client`` checked: of type ``kind`` if present."""
    value = msg.get(key)
    return value if isinstance(value, kind) else None


def _text(msg: Message, key: str) -> str:
    """A string field the catalogue requires."""
    value = msg[key]
    assert isinstance(value, str)
    return value


def encode_ok(ok: messages.Ok) -> bytes:
    return encode(cast(Message, ok))  # every field of an ``ok`` is a value

# a table's request handler: the session, who asked, the checked client message (or the server's own), now
Handler = Callable[["Session", Subscriber, Message, int], None]


def _reply(s: Session, sub: Subscriber, kind: str, msg: Message, **fields: Value) -> None:
    s._send(sub, encode(messages.reply(kind, _field(msg, "id", int), **fields)))


def _reattach(s: Session, seat: Seat, sub: Subscriber, msg: Message, now: int, reply: str, last_seq: int,
              **fields: Value) -> None:
    """``seat`` held by ``sub`` again (a resume, or a join sent again): the events after ``last_seq``,
    then a view."""
    match = s.match
    if seat.sub is not None and seat.sub is not sub:
        notice = ProtocolError("not_seated", "your seat was resumed on another connection")
        s._send(seat.sub, encode(messages.error(notice, table=match.id)))
    seat.sub, seat.views, seat.connected = sub, _field(msg, "views", bool) is not False, True
    missed = match.seq - last_seq
    replay = []
    if 0 < missed <= REPLAY_LIMIT:
        first = match.seq - len(match.history)  # a finished match keeps only its last events
        replay = match.history[max(0, last_seq - first):]
    if reply == "resumed":  # what follows, and whether the server lost events the client had seen
        fields = {"last_seq": match.seq, "replayed": len(replay)}
        if missed < 0:
            fields["lost"] = -missed
        elif len(replay) < missed:  # more than the cap: the client pages the rest with `history`
            fields["capped"] = True
    _reply(s, sub, reply, msg, table=match.id, seat=seat.index, **fields, game=match.game_name,
           static=match.static)
    for seq, at, event in replay:
        s._send(sub, event_frame(match.id, seq, at, event.wire_for(seat.index)))
    s.flush_views(now, only=sub)


def _seat_holding(match: Match, secret: str, value: str) -> Seat | None:
    """The seat whose ``token`` or join ``key`` is ``value``, compared in constant time (as bytes:
    compare_digest refuses str with non-ASCII characters, and a client may send any)."""
    wanted = value.encode()
    for seat in match.seats:
        held = getattr(seat, secret)
        if held is not None and hmac.compare_digest(held.encode(), wanted):
            return seat
    return None


def _on_join(s: Session, sub: Subscriber, msg: Message, now: int) -> None:
    match = s.match
    if s.seat_of(sub) is not None:
        raise ProtocolError("already_seated", "this connection already holds a seat here")
    key = _field(msg, "key", str)
    again = None if key is None else _seat_holding(match, "key", key)
    if again is not None:  # the same join sent again (its `joined` was lost with a connection): the same seat
        _reattach(s, again, sub, msg, now, "joined", last_seq=0, token=again.token)
        return
    if match.state != WAITING or len(match.seats) >= match.seat_count:
        raise ProtocolError("table_full", "every seat at this table is taken")
    seat = match.join(_text(msg, "name"), key=key)
    seat.sub, seat.views, seat.connected = sub, _field(msg, "views", bool) is not False, True
    _reply(s, sub, "joined", msg, table=match.id, seat=seat.index, token=seat.token, game=match.game_name,
             static=match.static)
    if len(match.seats) == match.seat_count:
        match.apply(StartRecord(now))
        s._fan_out()
    s._views_due = True


def _on_watch(s: Session, sub: Subscriber, msg: Message, now: int) -> None:
    s.spectators[sub] = _field(msg, "views", bool) is not False
    _reply(s, sub, "watching", msg, table=s.match.id, game=s.match.game_name, static=s.match.static)
    s.flush_views(now, only=sub)


def _on_leave(s: Session, sub: Subscriber, msg: Message, now: int) -> None:
    seat = s.seat_of(sub)
    if seat is None and sub not in s.spectators:
        raise ProtocolError("not_seated", "this connection neither holds a seat nor watches here")
    s.spectators.pop(sub, None)
    if seat is not None and s.match.state == WAITING:
        s.match.apply(LeaveRecord(seat.index))
        s._views_due = True
    elif seat is not None:
        seat.sub = None  # the seat stays in the game; quitting is the game's own command
    _reply(s, sub, "left", msg, table=s.match.id)


def _on_resume(s: Session, sub: Subscriber, msg: Message, now: int) -> None:
    seat = _seat_holding(s.match, "token", _text(msg, "token"))
    if seat is None:
        raise ProtocolError("bad_token", "that token holds no seat at this table")
    _reattach(s, seat, sub, msg, now, "resumed", last_seq=_field(msg, "last_seq", int) or 0)


def _on_detach(s: Session, sub: Subscriber, msg: Message, now: int) -> None:
    seat = s.seat_of(sub)
    s.detach(sub)
    if seat is not None and s.match.state == WAITING:  # freed after a grace, unless resumed meanwhile
        s._gone.append((now + SEAT_GRACE_MS, seat))


def _on_view(s: Session, sub: Subscriber, msg: Message, now: int) -> None:
    if s.seat_of(sub) is None and sub not in s.spectators:
        raise ProtocolError("not_seated", "join, resume or watch this table first")
    s.flush_views(now, only=sub, re=_field(msg, "id", int))


def _on_act(s: Session, sub: Subscriber, msg: Message, now: int) -> None:
    seat = s.seat_of(sub)
    if seat is None:
        raise ProtocolError("not_seated", "only a seated player may act; join or resume first")
    key = _field(msg, "key", str)
    answer = seat.answers.get(key) if key is not None else None
    if isinstance(answer, Refusal):
        s.match.rejected += 1  # refused again: each refused message counts, as the result reports
        raise answer.error()
    if answer is not None:  # sent again: the first answer, and nothing changes
        s._send(sub, encode_ok(messages.ok(_field(msg, "id", int), answer)))
        return
    try:
        answer = s.match.act(seat.index, _field(msg, "command", dict) or {}, now, key)
    except ProtocolError as err:
        if key is not None and err.code == "illegal_action":
            seat.remember(key, Refusal.of(err))
        raise
    s._send(sub, encode_ok(messages.ok(_field(msg, "id", int), answer)))  # before what it caused
    s._fan_out()


def _organiser(change: Callable[[int, Message], Input]) -> Handler:
    """An organiser's request (pause, unpause, close): the match's input, its events, then the ``ok``."""
    def handle(s: Session, sub: Subscriber, msg: Message, now: int) -> None:
        s.match.apply(change(now, msg))
        s._fan_out()
        _reply(s, sub, "ok", msg)
    return handle


REQUESTS: dict[str, Handler] = {
    "join": _on_join,
    "watch": _on_watch,
    "leave": _on_leave,
    "resume": _on_resume,
    "view": _on_view,
    "detach": _on_detach,
    "act": _on_act,
    "pause_clocks": _organiser(lambda now, msg: PauseRecord(now, hold=bool(msg.get("hold", False)))),
    "unpause_clocks": _organiser(lambda now, msg: UnpauseRecord(now)),
    "close_table": _organiser(lambda now, msg: CloseRecord(now)),
}
