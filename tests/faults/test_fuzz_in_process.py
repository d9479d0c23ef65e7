"""Fuzzing at volume, in process: hostile frames (``tests.faults.hostile``) through the real request path
(``Connection`` reading and decoding, ``parse_client``, the lobby, the tables' ``Match``) while reference
bots play a table of each game; the fuzzing connection holds a seat at each of them, so its commands reach
the engines. After every frame: no task raised (a crash fails the nursery), no error is ``internal``, a
connection is closed only after a fatal error (or its kick), and a frame answered with nothing but errors
changed nothing: neither any table (its state, history, seats, tokens, engine digest, journal records)
nor, unless it was closed, any subscription. ``make test`` sends a slice; ``make faults`` a million."""

from __future__ import annotations

import collections
import faulthandler
import logging
import random
import time
from collections.abc import Iterator
from typing import Any

import pytest
import structlog
import trio

from clients.players import make_player
from protocol.codec import decode, encode
from protocol.errors import ERROR_CODES, FATAL_CODES, ProtocolError
from protocol.messages import PROTOCOL_VERSION
from server.ops import logs
from server.games import GAMES
from tests.faults.conftest import scale
from tests.faults.hostile import Hostile, Known
from tests.faults.rig import Bot, ListSocket, Rig, settle

FRAMES = scale(40_000, 1_000_000)
SEED = 20261201
ADMIN = "fuzz-admin-token-0123456789abcdef"
SEATS = {"parsimonia": 3, "kupcy": 3, "gift-of-tulips": 3}
# the answers of requests that may change state
CHANGING = {"created", "joined", "watching", "left", "resumed", "ok", "bulletin", "welcome"}
UNCOUNTED = {"game_over", "not_started", "paused"}  # refused by the table before the rules: not in ``rejected``
HANG_S = 120  # 20 frames and a bots' round taking this long is a hang: the run stops, every stack dumped


class Campaign:
    def __init__(self, rig: Rig, seed: int) -> None:
        self.rig = rig
        self.rng = random.Random(seed)
        self.known = Known(admin=ADMIN)
        self.hostile = Hostile(seed, self.known)
        self.tables: dict[str, str] = {}  # game -> the id of its table the bots play now
        self.tokens: dict[str, str] = {}  # table -> the fuzzing seat's token
        self.bots: list[Bot] = []
        self.fuzz: ListSocket | None = None
        self.fuzz_conn: Any = None
        self.raw: ListSocket | None = None  # a fuzzing connection that holds no seat
        self.raw_conn: Any = None
        self.tally: collections.Counter[str] = collections.Counter()
        self.families: collections.Counter[str] = collections.Counter()
        self.games_done: collections.Counter[str] = collections.Counter()
        self.sent = 0

    # ------------------------------------------------------------------ set-up

    async def new_table(self, game: str) -> None:
        table = self.rig.create(game, SEATS[game], self.rng.randrange(2**31))
        tid = table.id
        self.tables[game] = tid
        self.known.tables[tid] = game
        if len(self.known.tables) > 12:  # finished tables stay fuzzable a while
            del self.known.tables[next(iter(self.known.tables))]
        assert self.fuzz is not None
        self.fuzz.push(encode({"type": "join", "id": 1, "table": tid, "name": "fuzz"}))
        await settle()
        joined = next(m for m in reversed(self.fuzz.sent) if m["type"] == "joined" and m["table"] == tid)
        self.tokens[tid] = joined["token"]
        for seat in range(1, SEATS[game]):
            conn, sock = await self.rig.greeted(f"bot-{seat}", check=False)
            sock.push(encode({"type": "join", "id": 1, "table": tid, "name": f"bot-{seat}"}))
            await settle()
            reply = next(m for m in sock.sent if m["type"] == "joined")
            bot = Bot(conn, sock, tid, reply["seat"], reply["token"], make_player("greedy", seat, game))
            self.bots.append(bot)
        assert self.rig.lobby.tables[tid].state == "running"

    async def greet(self) -> tuple[Any, ListSocket]:
        """A fresh fuzzing connection; its first frame is sometimes fuzzed too (a failed hello closes it)."""
        while True:
            before = self.rig.state()
            conn, sock = self.rig.open()
            if self.rng.random() < 0.25:
                family, frame = self.hostile.frame()
                self.count("first:" + family)
                sock.push(frame)
                await settle()
                assert self.rig.state() == before
                self.check_replies(sock.sent, conn.closed, first=True)
                if conn.closed:
                    continue
                if sock.sent and sock.sent[-1]["type"] == "welcome":
                    return conn, sock
            sock.push(encode({"type": "hello", "id": 0, "version": PROTOCOL_VERSION, "client": "fuzz"}))
            await settle()
            if not conn.closed:
                return conn, sock

    async def open_fuzz(self) -> None:
        """A fresh seated fuzzing connection: it resumes its seat at every table the bots play."""
        self.fuzz_conn, self.fuzz = await self.greet()
        await self.reseat()

    async def reseat(self) -> None:
        """Resume the fuzzing seat wherever the fuzzing connection does not hold it (a fuzzed leave)."""
        assert self.fuzz is not None
        for tid in self.tables.values():
            table = self.rig.lobby.tables[tid]
            match = table.match
            if table.seat_of(self.fuzz_conn) is None:
                self.fuzz.push(encode({"type": "resume", "id": 2, "table": tid, "token": self.tokens[tid],
                                       "last_seq": match.seq}))
                self.tally["reseated"] += 1
        await settle()

    # ------------------------------------------------------------------ the bots' side

    async def bots_round(self) -> bool:
        """Every bot acts once if it has something to do; finished tables are replaced. Whether any acted."""
        acted = False
        for bot in list(self.bots):
            if bot.conn.closed:  # kicked by a fuzzed admin request: it comes back with its token
                conn, sock = await self.rig.greeted("bot-again", check=False)
                sock.push(encode({"type": "resume", "id": 1, "table": bot.table, "token": bot.token,
                                  "last_seq": bot.last_seq}))
                bot.conn, bot.sock, bot.pos = conn, sock, 0
                bot.in_flight = None
                self.tally["bot_reconnects"] += 1
                continue
            acted |= bot.act()
        await settle()
        for bot in self.bots:
            bot.read()
            assert not [e for e in bot.errors if e["code"] == "internal"], bot.errors
        for game, tid in list(self.tables.items()):
            match = self.rig.lobby.tables[tid].match
            assert match.failure is None, repr(match.failure)
            if match.state == "over":
                self.games_done[game] += 1
                for bot in [b for b in self.bots if b.table == tid]:
                    self.tally["bot_commands"] += bot.commands
                    bot.conn.close("game over")
                    self.bots.remove(bot)
                await self.new_table(game)
            elif match.paused_at is not None and self.rng.random() < 0.2:  # a fuzzed pause, undone
                assert self.fuzz is not None
                self.fuzz.push(encode({"type": "admin", "id": 3, "token": ADMIN, "action": "unpause", "table": tid}))
                await settle()
        return acted

    def focus(self) -> None:
        """What the fuzzer knows of the table it aims at now: its id, its seat's token and legal commands."""
        assert self.fuzz is not None
        tid = self.tables[self.rng.choice(sorted(self.tables))] if self.rng.random() < 0.1 or \
            self.known.own_table not in self.tables.values() else self.known.own_table
        self.known.own_table, self.known.own_token = tid, self.tokens[tid]
        self.known.last_seq = self.rig.lobby.tables[tid].match.seq
        view = next((m for m in reversed(self.fuzz.sent[-200:]) if m["type"] == "view" and m["table"] == tid), None)
        self.known.legal = view["legal"] if view is not None else []

    # ------------------------------------------------------------------ one hostile frame

    def count(self, family: str) -> None:
        self.families[family] += 1
        self.sent += 1

    def check_replies(self, replies: list[dict[str, Any]], closed: bool, first: bool = False,
                      kick: bool = False) -> None:
        """Known codes, never ``internal``; closed only after a fatal error, a kick (``kick``: the frame was
        one, which may have kicked its own connection before its ``ok``), or a failed hello (whatever its
        code: SPEC.md, the session never began)."""
        for msg in replies:
            if msg["type"] == "error":
                assert msg["code"] in ERROR_CODES and msg["code"] != "internal", msg
                self.tally["error:" + msg["code"]] += 1
            elif msg.get("re") is not None:
                self.tally["answer:" + msg["type"]] += 1
        if closed:
            self.tally["closed"] += 1
            errors = [m for m in replies if m["type"] == "error"]
            kicked = kick or any(m["type"] == "ok" for m in replies)
            assert kicked or (errors and (first or errors[-1]["code"] in FATAL_CODES)), replies

    async def one(self) -> None:
        family, frame = self.hostile.frame()
        self.count(family)
        target = None
        try:  # the codec's verdict picks the connection; the frame itself goes through the server's path
            peek = decode(frame)
        except ProtocolError:  # fatal: it goes on a connection holding no seat, cheaper to open again
            peek = None
        seated = peek is not None
        if seated and peek.get("type") == "act" and isinstance(peek.get("table"), str):
            target = peek["table"]
        before, subs, refusals = self.rig.state(target), self.rig.subscriptions(), self.rig.refusals()
        fuzz, conn = (self.fuzz, self.fuzz_conn) if seated else (self.raw, self.raw_conn)
        assert fuzz is not None
        mark = len(fuzz.sent)
        fuzz.push(frame)
        await settle()
        replies = fuzz.sent[mark:]
        self.check_replies(replies, conn.closed, kick=seated and peek.get("action") == "kick")
        changed = any(m["type"] in CHANGING for m in replies)
        if not changed:
            assert self.rig.state(target) == before, (family, frame, replies)
            illegal = sum(m["type"] == "error" and m["code"] == "illegal_action" and m["reason"] not in UNCOUNTED
                          for m in replies)
            assert self.rig.refusals() == refusals + illegal, (family, frame, replies)
            if not conn.closed:
                assert self.rig.subscriptions() == subs, (family, frame, replies)
            self.tally["refused_unchanged"] += 1
        else:
            self.tally["accepted"] += 1
        if conn.closed:
            if seated:
                await self.open_fuzz()
            else:
                self.raw_conn, self.raw = await self.greet()

    async def run(self, frames: int, hang_file: Any = None) -> None:
        """Send ``frames`` hostile frames; with ``hang_file``, a watchdog re-armed every 20 frames dumps every
        stack there and ends the process if they take ``HANG_S``."""
        self.fuzz_conn, self.fuzz = await self.rig.greeted("fuzz")
        self.raw_conn, self.raw = await self.rig.greeted("fuzz-raw")
        for game in sorted(SEATS):
            await self.new_table(game)
        idle = 0
        while self.sent < frames:
            if self.sent % 20 == 0:
                if hang_file is not None:
                    faulthandler.dump_traceback_later(HANG_S, exit=True, file=hang_file)
                idle = 0 if await self.bots_round() else idle + 1
                if idle >= 3 and (due := self.rig.next_deadline()) is not None:
                    clock: Any = trio.lowlevel.current_clock()  # the test's MockClock
                    clock.jump(max(0.0, due - trio.current_time()) + 0.001)
                    await settle()
                    self.tally["clock_jumps"] += 1
                    idle = 0
                await self.reseat()
                self.focus()
                assert self.fuzz is not None
                del self.fuzz.sent[:-200]  # what focus reads; a million frames' answers would fill the memory
            await self.one()


@pytest.fixture(autouse=True)
def quiet_logs() -> Iterator[None]:
    """The server logs every connection and protocol error at info: at this volume, only warnings."""
    saved = structlog.get_config()
    logs.configure(level=logging.WARNING)
    yield
    structlog.configure(**saved)


async def test_hostile_frames_in_process_crash_nothing_and_a_refused_one_changes_nothing(mock_clock, capsys,
                                                                                         tmp_path):
    assert set(SEATS) == set(GAMES)
    hang = tmp_path / "hang.txt"
    with capsys.disabled():
        print(f"\n(a hang ends the run and dumps every stack to {hang})")
    started, cpu = time.perf_counter(), time.process_time()
    with open(hang, "w") as hang_file:
        try:
            async with trio.open_nursery() as nursery:
                rig = Rig(nursery, ADMIN)
                campaign = Campaign(rig, SEED)
                await campaign.run(FRAMES, hang_file)
                nursery.cancel_scope.cancel()
        finally:
            faulthandler.cancel_dump_traceback_later()
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu  # the machine may be shared
    tally = campaign.tally
    assert campaign.sent >= FRAMES
    assert tally["accepted"] + tally["refused_unchanged"] >= FRAMES * 0.75  # the first frames are counted apart
    assert sum(campaign.games_done.values()) >= 1  # the bots' games went on
    assert tally["error:internal"] == 0
    with capsys.disabled():
        print(f"\nin-process fuzz: {campaign.sent} frames in {elapsed:.1f} s ({campaign.sent / elapsed:.0f} frames/s; "
              f"{cpu:.1f} s of CPU, {campaign.sent / cpu:.0f} frames per CPU second), "
              f"seed {SEED}; refused and unchanged {tally['refused_unchanged']}, accepted {tally['accepted']}, "
              f"connections closed {tally['closed']}, clock jumps {tally['clock_jumps']}, "
              f"bot commands {tally['bot_commands'] + sum(b.commands for b in campaign.bots)}, games finished "
              f"{dict(campaign.games_done)}, bot reconnects {tally['bot_reconnects']}")
        print("  families: " + ", ".join(f"{k} {v}" for k, v in campaign.families.most_common()))
        print("  answers: " + ", ".join(f"{k} {v}" for k, v in sorted(tally.items()) if ":" in k))
