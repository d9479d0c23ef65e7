"""The storm load generator: one process, asyncio on uvloop, every connection a picows WebSocket client.

    python bench/loadgen.py --url ws://127.0.0.1:8765 --kind ours --tables 10 --rate 1000 \
        --warmup 3 --duration 10

It creates ``--tables`` tables of 6 seats, opens 6 connections per table and joins each with
``views: false`` (events only). Bids go out on a fixed schedule, ``--rate`` per second over all seats
together, not when earlier ones are answered (open loop). The schedule visits the seats in turn; at its
turn a seat first puts resource cards up for auction (``start_price`` 0) until it has ``--slots`` open,
then bids in a random open auction of another seat at its table, one above the highest bid known there
(the table's events, and this generator's own bids sent, so its seats do not outbid one another by
racing). A seller closes its auction with no sale after ``--bids-per-auction`` bids; the card goes back
to its hand and up again at its next turn, so money does not drain, commitments stay bounded, and the
auction traffic stays proportional to the bid rate.

Timers (our server only): every ``--timer-every``-th table has a quiet time of ``--quiet-ms``, the others
10 minutes (so at low rates the many tables of a big run do not all close and reopen their auctions at
once). On a timer table every ``--quiet-every``-th auction gets no bids and closes by quiet time, and
other auctions may too when bids are rare. Each timer-fired event (``auction_closed`` by ``quiet``,
``turn_ended`` by ``timeout``, ``opening_ended`` by ``deadline``) gives a lateness sample: the push's
``time`` (when the table handled it) minus the event's ``at`` (when it was due).

Measured over ``--duration`` seconds after ``--warmup``: bids sent, accepted (``ok``) and rejected
(``illegal_action``: bid races, not errors); frames received; for each bid the time from its send to the
moment its bidder's connection got the table's ``bid`` event for it; timer lateness; errors (any other
error, a malformed or unexpected message, a failed connect) and disconnects (any close not asked for).
It also measures itself: its CPU share and how late bids went out against their schedule.

``--kind`` names the server's protocol: ``ours``, ``bare`` (its subset, spoken by the bare baselines) or
``colyseus`` (the same messages inside Colyseus's client protocol: matchmaking over HTTP, the room's join
handshake, and room messages framed as ``bench/colyseus_dialect.py`` says). The dialect changes only how a
seat gets to its table and how a frame is wrapped and recognised; the schedule, the measures and the
counting are the same for every kind.

It prints ``MEASURE_START`` and ``MEASURE_END`` when the measured window opens and closes (the harness
samples the server's CPU then), and finally one line ``RESULT {json}``. Everything is bounded: setup by
``--setup-timeout``, the answers to the last bids by ``--drain``; then it closes every connection.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import sys
import time
from collections import Counter
from typing import Any

import msgpack

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench import colyseus_dialect as colyseus  # noqa: E402
from bench.stats import raise_nofile_limit, summarize  # noqa: E402
from protocol.messages import PROTOCOL_VERSION  # noqa: E402

try:
    from picows import WSCloseCode, WSListener, WSMsgType, ws_connect
except ImportError:  # pragma: no cover - picows is a bench/test extra
    sys.exit("loadgen: picows is not installed; pip install -e '.[bench]'")

SEATS = 6
SKIP_TRIES = 12
BID, AUCTION, CLOSE = 0, 1, 2
TIMER_REASONS = {"quiet", "timeout", "deadline"}
EVENT_PREFIX = b"\xa4type\xa5event"  # a map whose first entry is "type": "event" (after the map's header byte)
VIEW_PREFIX = b"\xa4type\xa4view"  # the same for a view push
now = time.perf_counter
pack = msgpack.Packer(use_bin_type=True).pack
unpackb = msgpack.unpackb


class Auction:
    __slots__ = ("id", "seller", "card", "high", "sent_high", "bids", "quiet", "closing")

    def __init__(self, auction_id: int, seller: int, card: int, high: int, quiet: bool) -> None:
        self.id = auction_id
        self.seller = seller
        self.card = card
        self.high = high  # the highest bid known from events (the start price before any)
        self.sent_high = high  # the highest bid this generator has sent
        self.bids = 0
        self.quiet = quiet  # left alone to close by quiet time
        self.closing = False


class Table:
    def __init__(self, table_id: str, timer: bool = False) -> None:
        self.id = table_id
        self.timer = timer  # a table with a short quiet time, where some auctions are left to close by it
        self.conns: list[Conn | None] = [None] * SEATS
        self.auctions: dict[int, Auction] = {}
        self.seen_seq = 0
        self.hands: list[list[int]] = [[] for _ in range(SEATS)]
        self.open = [0] * SEATS  # open auctions of each seat
        self.opening = [0] * SEATS  # auction commands sent and not yet seen opened


class Conn(WSListener):
    """One seat's connection. Frames are handled in the callback, without a task per connection."""

    def __init__(self, gen: "Generator", table: Table) -> None:
        self.gen = gen
        self.table = table
        self.seat: int | None = None
        self.transport: Any = None
        self.waiters: dict[int, asyncio.Future] = {}
        self.inflight: dict[int, tuple] = {}  # id -> (kind, auction, amount, sent at, in window)
        self.pending: dict[tuple[int, int], tuple[float, bool]] = {}  # (auction, amount) -> (sent at, in window)
        self.close_info = ""
        self.leaving = False  # we closed it ourselves

    # -- picows callbacks

    def on_ws_connected(self, transport: Any) -> None:
        self.transport = transport

    def on_ws_disconnected(self, transport: Any) -> None:
        gen = self.gen
        if not gen.closing and not self.leaving:
            gen.disconnects += 1
            gen.note(f"disconnect table {self.table.id} seat {self.seat}: {self.close_info or 'no close frame'}")
        for fut in self.waiters.values():
            if not fut.done():
                fut.set_exception(ConnectionError("disconnected"))
        self.waiters.clear()

    def on_ws_frame(self, transport: Any, frame: Any) -> None:
        t = now()
        gen = self.gen
        kind = frame.msg_type
        if kind is not WSMsgType.BINARY:
            if kind is WSMsgType.CLOSE:
                self.close_info = f"close {frame.get_close_code()} {frame.get_close_reason()!r}"
                transport.send_close(frame.get_close_code())
                transport.disconnect()
            elif kind is WSMsgType.TEXT:
                gen.error("text frame from the server")
            return
        if gen.win_start <= t < gen.win_end:
            gen.delivered += 1
        payload = frame.get_payload_as_memoryview()
        if not self.pending and self.table.conns[0] is not self and payload[gen.event_at] == gen.event_head:
            return  # an event this seat need not read: no bid of its own is waiting, another seat keeps the state
        if gen.colyseus:
            start = colyseus.body_start(payload)
            if not start:
                self.on_colyseus_frame(transport, payload)
                return
            payload = payload[start:]
        if not self.waiters and payload[1:11] == VIEW_PREFIX:
            return  # a view pushed after a change (with --views): counted as delivered, never read
        try:
            msg = unpackb(payload)
            typ = msg["type"]
        except Exception as exc:  # noqa: BLE001 - a bad frame is an error to count, not to crash on
            gen.error(f"undecodable frame: {exc}")
            return
        if typ == "event":
            gen.on_event(self, msg, t)
            return
        re = msg.get("re")
        if typ == "ok":
            entry = self.inflight.pop(re, None)
            if entry is not None:
                if entry[0] == BID and entry[4]:
                    gen.accepted += 1
                return
        elif typ == "error":
            entry = self.inflight.pop(re, None)
            if entry is not None:
                gen.on_refused(self, entry, msg)
                return
        if typ == "joined":  # take the seat now: its events may follow in the same read
            self.seat = msg["seat"]
            self.table.conns[self.seat] = self
        waiter = self.waiters.pop(re, None)
        if waiter is not None:
            if not waiter.done():
                waiter.set_result(msg)
        elif typ == "error":
            gen.error(f"error push: {msg.get('code')} {msg.get('message')}")
        elif typ != "view":
            gen.error(f"unexpected {typ} message")

    def on_colyseus_frame(self, transport: Any, payload: memoryview) -> None:
        """A Colyseus frame that is not a room message: the join handshake, or an error."""
        if payload[0] == colyseus.JOIN_ROOM:
            transport.send(WSMsgType.BINARY, colyseus.JOIN_ACK)  # the room then sends what it held: `joined`
            return
        text = colyseus.error_text(payload) if payload[0] == colyseus.ERROR else f"frame code {payload[0]}"
        self.gen.error(f"colyseus {text}")
        for fut in self.waiters.values():
            if not fut.done():
                fut.set_exception(RuntimeError(f"colyseus {text}"))
        self.waiters.clear()

    # -- sending

    def send(self, message: dict[str, Any]) -> None:
        self.transport.send(WSMsgType.BINARY, self.gen.encode(message))

    async def request(self, kind: str, timeout: float, **fields: Any) -> dict[str, Any]:
        rid = self.gen.next_id()
        fut = asyncio.get_running_loop().create_future()
        self.waiters[rid] = fut
        self.send({"type": kind, "id": rid, **fields})
        msg = await asyncio.wait_for(fut, timeout)
        if msg["type"] == "error":
            raise Refused(kind, msg)
        return msg


class Refused(RuntimeError):
    """An error reply; ``reply`` is it (a cluster's ``moved`` carries the URL of the worker to go to)."""

    def __init__(self, kind: str, reply: dict[str, Any]) -> None:
        super().__init__(f"{kind} refused: {reply.get('code')} {reply.get('message')}")
        self.reply = reply


class Generator:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.url = args.url
        self.ours = args.kind == "ours"
        self.colyseus = args.kind == "colyseus"
        # the dialect: how a message is framed, and where an event frame shows what it is
        self.encode = colyseus.frame if self.colyseus else pack
        self.event_at, self.event_head = ((slice(0, len(colyseus.EVENT_HEAD)), colyseus.EVENT_HEAD) if self.colyseus
                                          else (slice(1, 1 + len(EVENT_PREFIX)), EVENT_PREFIX))
        self.ctrl: Conn | None = None
        self.quiet_every = args.quiet_every if self.ours else 0  # the bare servers have no timers
        self.rnd = random.Random(args.seed)
        self.ids = itertools.count(1)
        self.tables: list[Table] = []
        self.closing = False
        self.win_start = self.win_end = float("inf")
        # counters (bids by send time in the window; frames and timers by arrival time in it)
        self.sent = self.accepted = self.rejected = self.skipped = 0
        self.other_sent = self.other_rejected = 0
        self.delivered = 0
        self.errors = self.disconnects = self.seq_gaps = 0
        self.reject_reasons: Counter[str] = Counter()
        self.closes: Counter[str] = Counter()
        self.latencies: list[float] = []
        self.timer_late: list[float] = []
        self.lags: list[float] = []
        self.notes: list[str] = []

    def next_id(self) -> int:
        return next(self.ids) & 0x7FFFFFFF

    def note(self, text: str) -> None:
        if len(self.notes) < 20:
            self.notes.append(text)

    def error(self, text: str) -> None:
        self.errors += 1
        self.note(text)

    # -- what comes back

    def on_refused(self, conn: Conn, entry: tuple, msg: dict[str, Any]) -> None:
        kind, auction, amount, _sent, in_window = entry
        if kind == AUCTION:  # the card stays out of play (it should not happen: say so)
            conn.table.opening[conn.seat] -= 1
        if msg.get("code") != "illegal_action":
            self.error(f"{msg.get('code')}: {msg.get('message')}")
            return
        if kind == BID:
            conn.pending.pop((auction, amount), None)
            if in_window:
                self.rejected += 1
                self.reject_reasons[msg.get("reason", "?")] += 1
        else:
            self.other_rejected += 1
            if kind == AUCTION:
                self.note(f"auction refused: {msg.get('reason')}")

    def on_event(self, conn: Conn, msg: dict[str, Any], t: float) -> None:
        ev = msg["event"]
        typ = ev.get("type")
        if typ == "bid" and ev["seat"] == conn.seat:
            sent = conn.pending.pop((ev["auction"], ev["amount"]), None)
            if sent is not None and sent[1]:
                self.latencies.append(t - sent[0])
        tb = conn.table
        if tb.conns[0] is not conn:
            return  # the table's state is kept from seat 0's copy of each event
        seq = msg["seq"]
        if seq != tb.seen_seq + 1:
            self.seq_gaps += 1
            self.error(f"table {tb.id}: seq {seq} after {tb.seen_seq}")
        tb.seen_seq = seq
        if typ == "bid":
            a = tb.auctions.get(ev["auction"])
            if a is not None:
                a.bids += 1
                if ev["amount"] > a.high:
                    a.high = ev["amount"]
                if a.bids >= self.args.bids_per_auction and not a.closing:
                    a.closing = True
                    self.command(tb, a.seller, CLOSE, {"type": "close", "auction": a.id, "winner": None}, a.id)
        elif typ == "auction_opened":
            view = ev["auction"]
            seller = view["seller"]
            aid = view["id"]
            quiet = tb.timer and self.quiet_every > 0 and aid % self.quiet_every == 0
            tb.auctions[aid] = Auction(aid, seller, view["lot"][0], view.get("start_price") or 0, quiet)
            tb.opening[seller] -= 1
            tb.open[seller] += 1
        elif typ == "auction_closed":
            a = tb.auctions.pop(ev["auction"], None)
            reason = ev.get("reason")
            self.closes[reason] += 1
            if reason in TIMER_REASONS:
                self._timer(msg, ev, t)
            if a is not None:
                tb.open[a.seller] -= 1
                winner = ev.get("winner")
                tb.hands[winner if ev.get("outcome") == "sold" and winner is not None else a.seller].append(a.card)
                # the seller puts a card up again on its next turn in the schedule, not now: so the
                # auction traffic stays bounded by the bid rate, whatever closes auctions
        elif ev.get("reason") in TIMER_REASONS:  # opening_ended by deadline, turn_ended by timeout
            self._timer(msg, ev, t)

    def _timer(self, msg: dict[str, Any], ev: dict[str, Any], t: float) -> None:
        if self.win_start <= t < self.win_end:
            self.timer_late.append(msg["time"] - ev["at"])

    # -- what goes out

    def command(self, tb: Table, seat: int, kind: int, command: dict[str, Any], auction: int = 0) -> None:
        conn = tb.conns[seat]
        if conn is None or conn.transport is None:
            return
        rid = self.next_id()
        conn.inflight[rid] = (kind, auction, 0, now(), False)
        conn.send({"type": "act", "id": rid, "table": tb.id, "command": command})
        self.other_sent += 1

    def refill(self, tb: Table, seat: int) -> None:
        if self.closing:
            return
        hand = tb.hands[seat]
        while hand and tb.open[seat] + tb.opening[seat] < self.args.slots:
            card = hand.pop(0)
            tb.opening[seat] += 1
            self.command(tb, seat, AUCTION, {"type": "auction", "card": card, "start_price": 0})

    def bid(self, tb: Table, seat: int, t: float) -> bool:
        """Send one bid from ``seat``; False when no auction at its table takes one now."""
        cands = [a for a in tb.auctions.values() if a.seller != seat and not a.quiet and not a.closing]
        if not cands:
            return False
        in_window = self.win_start <= t < self.win_end
        a = cands[self.rnd.randrange(len(cands))] if len(cands) > 1 else cands[0]
        amount = (a.high if a.high > a.sent_high else a.sent_high) + 1
        a.sent_high = amount
        conn = tb.conns[seat]
        rid = self.next_id()
        conn.inflight[rid] = (BID, a.id, amount, t, in_window)
        conn.pending[(a.id, amount)] = (t, in_window)
        conn.transport.send(WSMsgType.BINARY, self.encode(
            {"type": "act", "id": rid, "table": tb.id, "command": {"type": "bid", "auction": a.id, "amount": amount}}
        ))
        if in_window:
            self.sent += 1
        return True

    # -- the run

    async def setup(self) -> float:
        start = now()
        if self.colyseus:
            await self.seat_colyseus()
        else:
            await self.seat_bare()
        if self.ours:  # every table has started: learn the hands from one view each
            limit = asyncio.Semaphore(self.args.connect_concurrency)

            async def hands(tb: Table) -> None:
                async with limit:
                    conn = tb.conns[0]
                    assert conn is not None
                    view = await conn.request("view", 60, table=tb.id)
                    for p in view["view"]["players"]:
                        tb.hands[p["seat"]] = [r[0] for r in p["resources"]]

            await asyncio.gather(*(hands(tb) for tb in self.tables))
        else:  # the bare servers take any card id
            for tb in self.tables:
                tb.hands = [[seat * 100 + i for i in range(10)] for seat in range(SEATS)]
        for tb in self.tables:
            for seat in range(SEATS):
                self.refill(tb, seat)
        # wait until every first auction is open everywhere, so the server has no backlog from the
        # setup when the warm-up starts (bounded by --setup-timeout, around this whole setup)
        while any(any(tb.opening) for tb in self.tables):
            await asyncio.sleep(0.05)
        return now() - start

    async def seat_bare(self) -> None:
        """Our protocol (the bare servers speak its subset): a control connection creates the tables, then
        every seat connects, says hello and joins."""
        args = self.args
        ctrl_table = Table("-")
        _, ctrl = await ws_connect(lambda: Conn(self, ctrl_table), self.url, websocket_handshake_timeout=30)
        await ctrl.request("hello", 30, version=PROTOCOL_VERSION, client="parsimonia-bench/ctrl")
        # at most 64 creates in flight: a server may drop a connection whose replies queue up unread
        pipeline = asyncio.Semaphore(64)

        async def create_one(n: int) -> Table:
            timer = self.ours and args.timer_every > 0 and n % args.timer_every == 0
            create: dict[str, Any] = {"game": "parsimonia", "seats": SEATS, "seed": args.seed + n}
            if self.ours:  # the whole run stays in the opening; only timer tables have a short quiet time
                create["options"] = {"opening_ms": 3_600_000, "game_ms": 7_200_000,
                                     "quiet_ms": args.quiet_ms if timer else 600_000}
            async with pipeline:
                reply = await ctrl.request("create", 60, **create)
            return Table(reply["table"], timer)

        self.tables = list(await asyncio.gather(*(create_one(n) for n in range(args.tables))))
        ctrl.leaving = True
        ctrl.transport.send_close(WSCloseCode.OK)
        self.ctrl = ctrl

        limit = asyncio.Semaphore(args.connect_concurrency)

        async def seat_one(tb: Table, n: int) -> None:
            url = self.url
            async with limit:
                while True:  # on a cluster, once more at the worker holding the table (`moved`)
                    _, conn = await ws_connect(lambda: Conn(self, tb), url, websocket_handshake_timeout=60,
                                               enable_auto_pong=True)
                    await conn.request("hello", 60, version=PROTOCOL_VERSION, client="parsimonia-bench")
                    try:
                        await conn.request("join", 60, table=tb.id, name=f"bench{n}", views=args.views)
                        return
                    except Refused as refused:
                        if refused.reply.get("code") != "moved" or url != self.url:
                            raise
                        conn.leaving = True
                        conn.transport.send_close(WSCloseCode.OK)
                        url = refused.reply["url"]

        await asyncio.gather(*(seat_one(tb, n) for n in range(SEATS) for tb in self.tables))

    async def seat_colyseus(self) -> None:
        """Colyseus's matchmaking: the first seat of a table creates its room, the others join it by id; each
        connects right after its reservation (a reservation expires in 15 s) and waits for its `joined`."""
        limit = asyncio.Semaphore(self.args.connect_concurrency)
        loop = asyncio.get_running_loop()

        async def seat_one(tb: Table | None) -> Table:
            rid = self.next_id()  # the room answers `joined` with it as `re`
            async with limit:
                if tb is None:
                    reservation = await colyseus.reserve(self.url, "create", colyseus.ROOM, {"re": rid}, 60)
                    tb = Table(reservation["roomId"])
                else:
                    reservation = await colyseus.reserve(self.url, "joinById", tb.id, {"re": rid}, 60)
                joined = loop.create_future()

                def conn(table: Table = tb) -> Conn:
                    c = Conn(self, table)
                    c.waiters[rid] = joined  # before the first frame can arrive
                    return c

                await ws_connect(conn, colyseus.room_url(self.url, reservation), websocket_handshake_timeout=60,
                                 enable_auto_pong=True)
                msg = await asyncio.wait_for(joined, 60)
                if msg["type"] != "joined":
                    raise RuntimeError(f"join refused: {msg.get('code')} {msg.get('message')}")
            return tb

        self.tables = list(await asyncio.gather(*(seat_one(None) for _ in range(self.args.tables))))
        await asyncio.gather(*(seat_one(tb) for _ in range(1, SEATS) for tb in self.tables))

    async def storm(self) -> tuple[float, float]:
        args = self.args
        seats = [(tb, seat) for seat in range(SEATS) for tb in self.tables]
        rate = args.rate
        t0 = now()
        self.win_start = t0 + args.warmup
        self.win_end = self.win_start + args.duration
        cpu = [0.0, 0.0]
        started = False
        scheduled = 0
        i = 0
        n = len(seats)
        while True:
            t = now()
            if not started and t >= self.win_start:
                started = True
                cpu[0] = time.process_time()
                print("MEASURE_START", flush=True)
            if t >= self.win_end:
                break
            due = int((t - t0) * rate) + 1  # bids whose time has come: bid k is due at t0 + k / rate
            while scheduled < due:
                at = t0 + scheduled / rate
                if self.win_start <= at < self.win_end:
                    self.lags.append(t - at)
                # the next seat in turn bids; if nothing at its table takes a bid now (say every auction
                # there just closed by quiet time), the seats after it are tried, so the rate holds
                for _ in range(SKIP_TRIES):
                    tb, seat = seats[i]
                    i = i + 1 if i + 1 < n else 0
                    if tb.open[seat] + tb.opening[seat] < self.args.slots:
                        self.refill(tb, seat)
                    if self.bid(tb, seat, t):
                        break
                else:
                    if self.win_start <= t < self.win_end:
                        self.skipped += 1
                scheduled += 1
                t = now()
            # sleep until the next bid is due, at least a millisecond (the event loop's timer resolution):
            # above 1,000 bids/s the bids due within each millisecond go out together
            await asyncio.sleep(max(0.001, t0 + scheduled / rate - now()))
        cpu[1] = time.process_time()
        print("MEASURE_END", flush=True)
        return cpu[0], cpu[1]

    async def drain(self) -> None:
        deadline = now() + self.args.drain

        def waiting() -> bool:
            return any(
                any(e[4] for e in c.inflight.values()) or any(p[1] for p in c.pending.values())
                for tb in self.tables for c in tb.conns if c is not None
            )

        while waiting() and now() < deadline:
            await asyncio.sleep(0.05)

    async def close(self) -> None:
        self.closing = True
        conns = [c for tb in self.tables for c in tb.conns if c is not None and c.transport is not None]
        if self.ctrl is not None:
            conns.append(self.ctrl)
        for c in conns:
            try:
                c.transport.send_close(WSCloseCode.OK)
                c.transport.disconnect()
            except Exception:  # noqa: BLE001 - already gone
                pass
        try:
            await asyncio.wait_for(asyncio.gather(*(c.transport.wait_disconnected() for c in conns)), 10)
        except asyncio.TimeoutError:
            self.note("some connections did not close within 10 s")

    def result(self, setup_s: float, cpu: tuple[float, float]) -> dict[str, Any]:
        d = self.args.duration
        end = now()
        unanswered = 0  # bids of the window with no answer, or accepted and never seen broadcast
        for tb in self.tables:
            for c in tb.conns:
                if c is None:
                    continue
                waiting = {(e[1], e[2]) for e in c.inflight.values() if e[0] == BID and e[4]}
                unanswered += len(waiting)
                for key, (sent, in_window) in c.pending.items():
                    if in_window:  # never seen broadcast: count it as late as it is now
                        self.latencies.append(end - sent)
                        if key not in waiting:
                            unanswered += 1
        lat = summarize([x * 1000 for x in self.latencies])
        late = summarize(self.timer_late, (50, 99))
        lags = summarize([x * 1000 for x in self.lags])
        expected = int(self.args.rate * d)

        def r(x: float | None, nd: int = 2) -> float | None:
            return None if x is None else round(x, nd)

        return {
            "kind": self.args.kind,
            "tables": len(self.tables),
            "connections": sum(1 for tb in self.tables for c in tb.conns if c is not None),
            "rate": self.args.rate,
            "duration_s": d,
            "setup_s": round(setup_s, 2),
            "sent": self.sent,
            "accepted": self.accepted,
            "rejected": self.rejected,
            "skipped": self.skipped,
            "reject_reasons": dict(self.reject_reasons),
            "sent_per_s": round(self.sent / d, 1),
            "accepted_per_s": round(self.accepted / d, 1),
            "rejected_per_s": round(self.rejected / d, 1),
            "delivered_per_s": round(self.delivered / d, 1),
            "other_commands": self.other_sent,
            "other_rejected": self.other_rejected,
            "latency_samples": lat["count"],
            "p50_ms": r(lat["p50"]),
            "p99_ms": r(lat["p99"]),
            "p999_ms": r(lat["p99.9"]),
            "max_ms": r(lat["max"]),
            "timer_samples": late["count"],
            "timer_late_p50_ms": late["p50"],
            "timer_late_p99_ms": late["p99"],
            "timer_late_max_ms": late["max"],
            "closes": dict(self.closes),
            "errors": self.errors,
            "disconnects": self.disconnects,
            "unanswered": unanswered,
            "loadgen_cpu": round((cpu[1] - cpu[0]) / d, 3),
            "schedule_lag_p99_ms": r(lags["p99"]),
            "schedule_lag_max_ms": r(lags["max"]),
            "schedule_kept": self.sent + self.skipped >= 0.97 * expected,
            "notes": self.notes,
        }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    gen = Generator(args)
    try:
        setup_s = await asyncio.wait_for(gen.setup(), args.setup_timeout)
    except Exception as exc:  # noqa: BLE001 - a failed setup is reported, not raised
        gen.error(f"setup failed: {type(exc).__name__}: {exc}")
        gen.closing = True
        return {"kind": args.kind, "tables": args.tables, "rate": args.rate, "setup_failed": True,
                "errors": gen.errors, "disconnects": gen.disconnects, "notes": gen.notes}
    print("READY", flush=True)
    if args.wait_go:  # a harness starting several generators together says when
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    cpu = await gen.storm()
    await gen.drain()
    out = gen.result(setup_s, cpu)
    await gen.close()
    out["notes"] = gen.notes
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", required=True)
    parser.add_argument("--kind", choices=["ours", "bare", "colyseus"], default="ours",
                        help="the server's protocol: ours, its bare subset, or the bare subset in Colyseus rooms")
    parser.add_argument("--tables", type=int, default=10)
    parser.add_argument("--rate", type=float, default=1000, help="bids per second, all seats together")
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--drain", type=float, default=5.0, help="seconds to wait for the last answers")
    parser.add_argument("--slots", type=int, default=2, help="auctions each seat keeps open")
    parser.add_argument("--bids-per-auction", type=int, default=20)
    parser.add_argument("--quiet-ms", type=int, default=2000)
    parser.add_argument("--quiet-every", type=int, default=4,
                        help="on timer tables, every Nth auction gets no bids and closes by quiet time")
    parser.add_argument("--timer-every", type=int, default=10,
                        help="every Nth table (the first included) has --quiet-ms; the others 10 minutes")
    parser.add_argument("--connect-concurrency", type=int, default=64)
    parser.add_argument("--setup-timeout", type=float, default=180.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--views", action="store_true",
                        help="join with views on: every seat gets a view frame after every change (ours only)")
    parser.add_argument("--no-uvloop", action="store_true")
    parser.add_argument("--wait-go", action="store_true",
                        help="after READY (every table set up), wait for a line on stdin before the storm")
    args = parser.parse_args(argv)
    raise_nofile_limit()
    uvloop = None
    if not args.no_uvloop:
        try:
            import uvloop
        except ImportError:
            pass
    out = uvloop.run(run(args)) if uvloop is not None else asyncio.run(run(args))
    out["uvloop"] = uvloop is not None
    print("RESULT " + json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
