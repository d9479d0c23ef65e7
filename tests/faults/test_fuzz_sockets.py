"""Fuzzing over real sockets: ``parsimonia serve`` in its own process; ``parsimonia demo`` processes play
every game, one after another, on tables of their own; meanwhile hostile connections
(``tests.faults.wsclient``) send frames from ``tests.faults.hostile`` and WebSocket-level violations,
reconnecting whenever the server closes them. One of them holds a seat at a table of each game, so its
commands reach the engines; all of them know the bots' tables. After each hostile frame a ping must be
answered (or the connection closed: after a fatal error or a WebSocket violation only). At the end every
bot game has finished with no reconnect and no error, the server's log has no error line, and the
server still accepts. ``make test`` sends a slice; ``make faults`` 100,000 frames."""

from __future__ import annotations

import collections
import json
import random
import time
from pathlib import Path
from typing import Any

import pytest
import trio

from protocol.codec import encode
from protocol.errors import ERROR_CODES, FATAL_CODES
from protocol.messages import PROTOCOL_VERSION, SERVER_PUSHES, SERVER_REPLIES
from server.games import GAMES
from tests.faults.conftest import scale
from tests.faults.hostile import Hostile, Known
from tests.faults.wsclient import Closed, HostileSocket, http_get, violation
from tests.server.storage.test_crash import Processes, free_port, until_up

FRAMES = scale(8_000, 100_000)
WORKERS = 4
SEED = 20261202
DEMO_SCALE = 400  # the bots' games: a couple of minutes of play in a few seconds
PROBE = 2**31 - 7  # the ping after each hostile frame (the generator's ids are often 0 or 2**31 - 1, never this)
SERVER_TYPES = set(SERVER_REPLIES) | set(SERVER_PUSHES)
MESSAGE_TOO_BIG = 1009
WAIT_S = 30  # a hostile frame not answered in this long is a hang

pytestmark = pytest.mark.skipif(not hasattr(trio.lowlevel, "open_process"), reason="needs processes")


class Campaign:
    def __init__(self, port: int) -> None:
        self.port = port
        self.sent = 0
        self.families: collections.Counter[str] = collections.Counter()
        self.tally: collections.Counter[str] = collections.Counter()
        self.tables: dict[str, str] = {}  # id -> game, from the server's listing
        self.own: dict[str, str] = {}  # table -> token of the seat the seated worker holds
        self.demos: list[dict[str, Any]] = []
        self.done = trio.Event()
        self.holders: list[HostileSocket] = []

    async def greeted(self) -> HostileSocket:
        sock = await HostileSocket.open(self.port)
        await sock.send(encode({"type": "hello", "id": 0, "version": PROTOCOL_VERSION, "client": "hostile"}))
        welcome = await sock.receive()
        assert welcome is not None and welcome["type"] == "welcome", welcome
        return sock

    async def ask(self, sock: HostileSocket, kind: str, **fields: Any) -> dict[str, Any]:
        await sock.send(encode({"type": kind, "id": PROBE - 1, **fields}))
        while True:
            msg = await sock.receive()
            assert msg is not None, f"closed while waiting for the answer to {kind}"
            if msg.get("re") == PROBE - 1:
                return msg

    # ------------------------------------------------------------------ the bots and the seats held

    async def bots(self, procs: Processes, game: str, url: str) -> None:
        """Demo games of ``game``, one after another, until the hostile frames are all sent."""
        n = 0
        while not self.done.is_set():
            n += 1
            name = f"demo-{game}-{n}"
            proc = await procs.start(name, "demo", "--url", url, "--game", game, "--players", "3", "--seed",
                                     str(n), "--time-scale", str(DEMO_SCALE), "--json")
            await proc.wait()
            out = (procs.tmp / f"{name}.out").read_text()
            err = (procs.tmp / f"{name}.err").read_text()
            assert proc.returncode == 0, (name, out, err[-2000:])
            self.demos.append({"game": game, **json.loads(out.splitlines()[-1])})

    async def hold(self, game: str, nursery: trio.Nursery) -> None:
        """A table of ``game`` whose seat 0 the seated worker plays; its other seats are held (and read)."""
        owner = await self.greeted()
        seats = GAMES[game].MIN_SEATS
        table = (await self.ask(owner, "create", game=game, seats=seats))["table"]
        self.own[table] = (await self.ask(owner, "join", table=table, name="hostile"))["token"]
        await owner.aclose()
        for seat in range(1, seats):
            holder = await self.greeted()
            assert (await self.ask(holder, "join", table=table, name=f"holder-{seat}"))["type"] == "joined"
            self.holders.append(holder)
            nursery.start_soon(self.drain, holder)

    async def drain(self, sock: HostileSocket) -> None:
        while await sock.receive() is not None:
            pass
        assert self.done.is_set(), "a seat holder was closed"

    # ------------------------------------------------------------------ the hostile side

    async def worker(self, index: int) -> None:
        rng = random.Random(SEED * 31 + index)
        known = Known()
        hostile = Hostile(SEED + index, known)
        seated = index == 0
        while self.sent < FRAMES:
            sock = await self.greeted()
            known.tables = {**self.tables, **{t: g for t, g in known.tables.items() if not g}}
            if seated:
                for table, token in self.own.items():
                    reply = await self.ask(sock, "resume", table=table, token=token, last_seq=2**62)
                    assert reply["type"] == "resumed", reply
            legal: dict[str, list[dict[str, Any]]] = {}
            recent: collections.deque[tuple[str, str]] = collections.deque(maxlen=4)  # for a failure's message
            while self.sent < FRAMES:
                if seated:
                    known.own_table = rng.choice(sorted(self.own))
                    known.own_token, known.legal = self.own[known.own_table], legal.get(known.own_table, [])
                if rng.random() < 0.03:
                    name, data, valid_stream = violation(rng)
                    family = "ws:" + name
                else:
                    family, frame = hostile.frame()
                    valid_stream = True
                self.sent += 1
                self.families[family] += 1
                sent = data if family.startswith("ws:") else frame
                recent.append((family, (sent.encode() if isinstance(sent, str) else sent)[:48].hex()))
                replies: list[dict[str, Any]] = []
                try:
                    with trio.fail_after(WAIT_S):
                        if family.startswith("ws:"):
                            await sock.send_raw(data)
                        else:
                            await sock.send(frame)
                        await sock.send(encode({"type": "ping", "id": PROBE}))
                        while (msg := await sock.receive()) is not None:
                            replies.append(msg)
                            if msg["type"] == "pong" and msg.get("re") == PROBE:
                                break
                except Closed:
                    sock.closed = True
                too_big = sock.close_code == MESSAGE_TOO_BIG  # cut off from its header (SPEC.md), unread
                # a client that reads too slowly (this one, starved of CPU beside the bots) is dropped alone
                too_slow = sock.close_reason.startswith("too slow")
                self.tally["dropped_too_slow"] += too_slow
                self.check(replies, sock.closed, (family.startswith("ws:") and not valid_stream) or too_big
                           or too_slow, (family, sock.close_code, sock.close_reason, list(recent)))
                for msg in replies:
                    if msg["type"] == "view" and msg["seat"] == 0 and msg["table"] in self.own:
                        legal[msg["table"]] = msg["legal"]
                    elif msg["type"] == "created":  # a table of its own making, waiting: fair game
                        known.tables[msg["table"]] = ""
                if sock.closed:
                    break
            await sock.aclose()

    def check(self, replies: list[dict[str, Any]], closed: bool, violated: bool, what: Any) -> None:
        for msg in replies:
            assert msg["type"] in SERVER_TYPES, msg
            if msg["type"] == "error":
                assert msg["code"] in ERROR_CODES and msg["code"] != "internal", msg
                self.tally["error:" + msg["code"]] += 1
            elif msg.get("re") is not None and msg.get("re") != PROBE:
                self.tally["answer:" + msg["type"]] += 1
        if closed:
            self.tally["closed"] += 1
            errors = [m["code"] for m in replies if m["type"] == "error"]
            if not (violated or (errors and errors[-1] in FATAL_CODES)):
                raise AssertionError(f"closed after {what}, answers {replies}")  # in full: no assert rewriting

    async def listing(self) -> None:
        """The tables the bots play, as any client sees them, every half second."""
        sock = await self.greeted()
        while not self.done.is_set():
            tables = (await self.ask(sock, "tables"))["tables"]
            # not the tables still waiting for their players: a hostile join there would take a bot's seat,
            # which is the game's rule, not a fault
            self.tables = {t["table"]: t["game"] for t in tables[-30:] if t["state"] != "waiting"}
            await trio.sleep(0.5)
        await sock.aclose()


async def test_hostile_frames_over_sockets_leave_the_bots_games_and_the_server_whole(tmp_path: Path, capsys):
    procs = Processes(tmp_path)
    port = free_port()
    url = f"ws://127.0.0.1:{port}"
    campaign = Campaign(port)
    try:
        server = await procs.start(
            "server", "serve", "--port", str(port), "--data", str(tmp_path / "data"), "--sync", "off",
            "--log-json", "--log-level", "warning", "--max-messages-per-s", "1000000",
            "--max-bytes-per-s", "1000000000", "--max-connections-per-ip", "10000",
            "--max-http-connections-per-ip", "10000", "--max-handshakes-per-s", "1e9",
            "--max-http-requests-per-s", "1e9",
            "--max-address-messages-per-s", "1e9", "--max-address-bytes-per-s", "1e12",
            "--max-waiting-tables-per-ip", "100000", "--max-playing-tables-per-ip", "100000")
        await until_up(port)
        started, cpu = time.perf_counter(), time.process_time()
        async with trio.open_nursery() as nursery:
            for game in sorted(GAMES):
                nursery.start_soon(campaign.bots, procs, game, url)
                await campaign.hold(game, nursery)
            nursery.start_soon(campaign.listing)
            async with trio.open_nursery() as workers:
                for index in range(WORKERS):
                    workers.start_soon(campaign.worker, index)
            elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu  # the hostile clients' CPU
            campaign.done.set()
            # still accepting, on both protocols
            sock = await campaign.greeted()
            assert (await campaign.ask(sock, "ping"))["type"] == "pong"
            await sock.aclose()
            assert (await http_get(port, "/healthz"))[0] == 200
            for holder in campaign.holders:
                await holder.aclose()
        assert server.returncode is None, "the server died"
    finally:
        await procs.kill_all()
    log = [json.loads(line) for line in (tmp_path / "server.err").read_text().splitlines() if line.startswith("{")]
    assert not [line for line in log if line.get("level") in ("error", "critical")], log[-20:]
    assert {d["game"] for d in campaign.demos} == set(GAMES)
    for demo in campaign.demos:
        assert demo["reconnects"] == 0 and demo.get("reason") not in ("server_error", "closed"), demo
    tally = campaign.tally
    with capsys.disabled():
        print(f"\nsocket fuzz: {campaign.sent} frames in {elapsed:.1f} s ({campaign.sent / elapsed:.0f} frames/s; "
              f"the hostile clients took {cpu:.1f} s of CPU) "
              f"from {WORKERS} connections, seed {SEED}; closed by the server {tally['closed']} (dropped as too slow "
              f"{tally['dropped_too_slow']}), "
              f"bot games finished {len(campaign.demos)} "
              f"({dict(collections.Counter(d['game'] for d in campaign.demos))}), server log lines "
              f"(warning and up) {len(log)}")
        print("  families: " + ", ".join(f"{k} {v}" for k, v in campaign.families.most_common()))
        print("  answers: " + ", ".join(f"{k} {v}" for k, v in sorted(tally.items()) if ":" in k))
