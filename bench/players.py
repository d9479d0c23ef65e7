"""Players per worker: what a seat costs the server, per game and kind of seat; how many one worker holds.

    .venv/bin/python bench/players.py [--tables T] [--seats 4] [--idle-seats 1000] [--idle-s 10.5] [--json PATH]
    .venv/bin/python bench/players.py --quick   # a smoke run

Per game, the server as shipped runs in its own process; T tables of S reference players play whole games, sped up,
over real sockets. Seats join with **views on** (the page, the SDK's bots: a view pushed after every change) or
**views off** (events only; a view asked for when the table changed). CPU per action: the server's CPU over the
games, less its idle share, over the actions accepted. Idle: seats held at waiting tables, pinging as the SDK does.
From both: the seats a worker holds within ``BUDGET`` of a core at a few rates. A busy worker spends less a
message than a quiet one. Output: ``bench/results/players.json``.
"""

from __future__ import annotations

import argparse
import json
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from collections.abc import Awaitable, Callable
from typing import Any, cast

import trio
from trio_websocket import WebSocketConnection, open_websocket_url

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.stats import CpuMeter, machine, positive_int, raise_nofile_limit, run_script  # noqa: E402
from bench.storm import free_port, server_command, stop, wait_listening  # noqa: E402
from clients.players import Player, make_player  # noqa: E402
from clients.sdk import PING_EVERY_S, BotSession  # noqa: E402
from protocol.codec import decode, encode  # noqa: E402
from protocol.messages import PROTOCOL_VERSION  # noqa: E402
from protocol.views import player_view  # noqa: E402
from server.games.parsimonia.config import preset_options  # noqa: E402

BUDGET = 0.7  # of one core: what a worker is given, leaving room for bursts
RATES = {"1 / 10 s": 0.1, "1 / s": 1.0, "10 / s": 10.0}  # actions per seat per second: a human, a slow bot, a fast bot
KINDS = ("views-off", "views-on")
# each game: the reference player, the table's options, its time scale (a game of a few seconds) and how many tables
# play at once by default (a Parsimonia game runs out its clock: more tables keep the server as busy as the others')
GAMES: dict[str, tuple[str, dict[str, Any], float, int]] = {
    "parsimonia": ("greedy", preset_options("quick"), 100.0, 80),
    "kupcy": ("greedy", {}, 20.0, 20),
    "gift-of-tulips": ("random", {}, 20.0, 40),
}
GAME_TIMEOUT_S = 120.0
MAX_TIME_SCALE = 10000.0  # protocol/SPEC.md, create
RESULT = ROOT / "bench" / "results" / "players.json"


def _quiet(line: str) -> None:
    """A reference bot's refusal (a bid overtaken) is no news here: refusals are counted instead."""


class PullingSeat:
    """A seat joined with ``views: false``: it gets the table's events, asks for a view when the table has
    changed since its last look and nothing of its own is in flight, and sends what its player picks."""

    def __init__(self, url: str, table: str, player: Player, name: str) -> None:
        self.url, self.table, self.player, self.name = url, table, player, name
        self.actions = self.refusals = 0
        self.joined = trio.Event()
        self.result: dict[str, Any] | None = None

    async def run(self) -> None:
        async with open_websocket_url(self.url) as ws:
            await ws.send_message(encode({"type": "hello", "id": 1, "version": PROTOCOL_VERSION,
                                          "client": "bench/players"}))
            await _reply(ws, 1)
            await ws.send_message(encode({"type": "join", "id": 2, "table": self.table, "name": self.name,
                                          "views": False, "key": secrets.token_urlsafe(12)}))
            joined = await _reply(ws, 2)
            seat, static = joined["seat"], joined["static"]
            self.joined.set()
            ids, stale, pending = 2, True, None  # pending: the id of our view request or command in flight
            act_id = None
            while self.result is None:
                if stale and pending is None:
                    ids += 1
                    pending, stale = ids, False
                    await ws.send_message(encode({"type": "view", "id": pending, "table": self.table}))
                msg = _message(await ws.get_message())
                kind = msg["type"]
                if kind == "event":
                    stale = True
                    if msg["event"].get("type") == "result":
                        self.result = msg["event"]["result"]
                elif msg.get("re") != pending or pending is None:
                    continue
                elif kind == "view":
                    pending = None
                    if msg["legal"]:
                        view = player_view(static, msg["view"], msg.get("private"), seat)
                        command = self.player.act(view, msg["legal"])
                        if command is not None:
                            ids += 1
                            pending = act_id = ids
                            self.actions += 1
                            await ws.send_message(encode({"type": "act", "id": act_id, "table": self.table,
                                                          "command": command, "key": secrets.token_urlsafe(12)}))
                else:  # the answer to our command (or a refused view request)
                    if kind == "error" and pending == act_id:
                        self.refusals += 1
                    pending, stale = None, True


def _message(frame: bytes | str) -> dict[str, Any]:
    """A server frame as the map it is (``decode`` types its fields as any value)."""
    return cast(dict[str, Any], decode(frame))


async def _reply(ws: WebSocketConnection, rid: int) -> dict[str, Any]:
    while True:
        msg = _message(await ws.get_message())
        if msg.get("re") == rid:
            if msg["type"] == "error":
                raise RuntimeError(f"the server refused request {rid}: {msg.get('code')}: {msg.get('message')}")
            return msg


async def _create(url: str, game: str, seats: int, tables: int, options: dict[str, Any],
                  time_scale: float) -> list[str]:
    ids = []
    async with open_websocket_url(url) as ws:
        await ws.send_message(encode({"type": "hello", "id": 1, "version": PROTOCOL_VERSION, "client": "bench/players"}))
        await _reply(ws, 1)
        for n in range(tables):
            await ws.send_message(encode({"type": "create", "id": 10 + n, "game": game, "seats": seats, "seed": n + 1,
                                          "time_scale": time_scale, "options": options}))
            ids.append((await _reply(ws, 10 + n))["table"])
    return ids


async def play(url: str, pid: int, game: str, kind: str, tables: int, seats: int, base: float,
               speed: float = 1.0) -> dict[str, Any]:
    """T whole games of one kind of seat; the server's CPU from before the last seat of each table joined (the
    game's start) to the last result, less ``base`` (its share of a core with no one connected)."""
    player_kind, options, time_scale, _ = GAMES[game]
    time_scale *= speed
    ids = await _create(url, game, seats, tables, options, time_scale)
    players: list[Any] = []
    for t, table in enumerate(ids):
        for s in range(seats):
            player = make_player(player_kind, t * 1009 + s, game)
            name = f"{kind}-{t}-{s}"
            players.append(PullingSeat(url, table, player, name) if kind == "views-off"
                           else BotSession(url, player, name=name, table=table, game=game, say=_quiet))
    meter = CpuMeter(pid)
    with trio.fail_after(GAME_TIMEOUT_S):
        async with trio.open_nursery() as nursery:
            for n, seat in enumerate(players):
                if n % seats == seats - 1:
                    continue  # the last seat of each table: its join starts the game, inside the window
                nursery.start_soon(seat.run)
                await seat.joined.wait()
            started = time.monotonic()
            meter.start(started)
            for seat in players[seats - 1::seats]:
                nursery.start_soon(seat.run)
    ended = time.monotonic()
    cpu_s = meter.stop(ended) * (ended - started)
    net_s = max(0.0, cpu_s - base * (ended - started))
    actions = sum(p.actions - p.refusals for p in players)
    return {"game": game, "kind": kind, "views": kind == "views-on", "tables": tables, "seats": seats,
            "player": player_kind, "time_scale": time_scale, "seconds": round(ended - started, 2),
            "server_cpu": round(cpu_s / (ended - started), 3),
            "actions": actions, "refusals": sum(p.refusals for p in players), "server_cpu_s": round(cpu_s, 3),
            "cpu_per_action_us": round(net_s / actions * 1e6, 1) if actions else None}


async def idle(url: str, pid: int, seats: int, window_s: float) -> dict[str, Any]:
    """The server's CPU with no one connected, then with ``seats`` seats held at waiting tables (6 seats, 5
    taken, views on), each window ``window_s`` long; the difference per seat and second."""
    meter = CpuMeter(pid)
    meter.start(time.monotonic())
    await trio.sleep(window_s)
    base = meter.stop(time.monotonic())
    ids = await _create(url, "parsimonia", 6, -(-seats // 5), {}, 1.0)

    async def hold(table: str, n: int, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        async with open_websocket_url(url) as ws:
            await ws.send_message(encode({"type": "hello", "id": 1, "version": PROTOCOL_VERSION,
                                          "client": "bench/players-idle"}))
            await _reply(ws, 1)
            await ws.send_message(encode({"type": "join", "id": 2, "table": table, "name": f"idle-{n}"}))
            await _reply(ws, 2)
            task_status.started()
            ask_at = trio.current_time() + PING_EVERY_S * (n % 10 + 1) / 10  # as the SDK, spread over its period
            while True:
                with trio.move_on_at(ask_at):
                    await ws.get_message()
                    continue
                await ws.send_message(encode({"type": "ping"}))
                ask_at += PING_EVERY_S

    async with trio.open_nursery() as nursery:
        for n in range(seats):
            await nursery.start(hold, ids[n // 5], n)
        await trio.sleep(1.0)  # the joins' views delivered
        meter.start(time.monotonic())
        await trio.sleep(window_s)
        held = meter.stop(time.monotonic())
        nursery.cancel_scope.cancel()
    return {"seats": seats, "window_s": window_s, "server_cpu_alone": round(base, 4),
            "server_cpu_held": round(held, 4),
            "cpu_per_seat_us_per_s": round(max(0.0, held - base) / seats * 1e6, 2)}


def capacity(cpu_per_action_us: float | None, idle_us_per_s: float, rate: float, budget: float) -> int | None:
    """Seats one worker holds at ``rate`` actions per seat and second within ``budget`` of a core (what its own
    idle work leaves)."""
    if cpu_per_action_us is None:
        return None
    per_seat_us = rate * cpu_per_action_us + idle_us_per_s
    return int(budget * 1e6 / per_seat_us) if per_seat_us > 0 else None


def run(tables: int | None, seats: int, idle_seats: int, idle_s: float, games: list[str],
        speed: float = 1.0) -> dict[str, Any]:
    """The idle seats, then every game's two kinds of seat, each on a fresh server; ``tables`` None: each game's
    default."""
    raise_nofile_limit()
    idle_row = trio.run(on_server, idle, idle_seats, idle_s)
    rows = [trio.run(on_server, play, game, kind, tables or GAMES[game][3], seats, idle_row["server_cpu_alone"], speed)
            for game in games for kind in KINDS]
    per_seat, left = idle_row["cpu_per_seat_us_per_s"], BUDGET - idle_row["server_cpu_alone"]
    for row in rows:
        row["seats_per_worker"] = {label: capacity(row["cpu_per_action_us"], per_seat, rate, left)
                                   for label, rate in RATES.items()}
    return {"budget": BUDGET, "rates": RATES, "idle": idle_row, "rows": rows}


async def on_server(measure: Callable[..., Awaitable[dict[str, Any]]], *args: Any) -> dict[str, Any]:
    """``measure(url, pid, *args)`` against a fresh server as shipped, settled for a second; always stopped."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="parsimonia-players-") as data:
        srv = subprocess.Popen(server_command("parsimonia", port, data), cwd=ROOT, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_listening(port, srv)
            await trio.sleep(1.0)
            return await measure(f"ws://127.0.0.1:{port}/", srv.pid, *args)
        finally:
            stop(srv)


def table_lines(out: dict[str, Any]) -> list[str]:
    head = f"{'game':<15} {'seat':<10} {'actions':>8} {'us/action':>10}" + "".join(f" {r:>10}" for r in out["rates"])
    lines = [head]
    for row in out["rows"]:
        kind = row["kind"].replace("-", " ")
        lines.append(f"{row['game']:<15} {kind:<10} {row['actions']:>8} {row['cpu_per_action_us'] or '-':>10}"
                     + "".join(f" {row['seats_per_worker'][r] or '-':>10}" for r in out["rates"]))
    idle_row = out["idle"]
    lines.append(f"idle: {idle_row['cpu_per_seat_us_per_s']} us of CPU per seat per second "
                 f"({idle_row['seats']} seats held); seats per worker within {out['budget']:.0%} of a core")
    return lines


def positive_float(text: str) -> float:
    """An argparse type: a number above 0."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"not a positive number: {text!r}")
    return value


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="players", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=positive_int, help="tables a game and kind of seat (default: "
                        + ", ".join(f"{game} {spec[3]}" for game, spec in GAMES.items()) + "; quick 2)")
    parser.add_argument("--seats", type=positive_int, default=4, help="seats a table, 3 to 6 (default 4)")
    parser.add_argument("--idle-seats", type=positive_int, help="seats held idle (default 1000; quick 20)")
    parser.add_argument("--idle-s", type=positive_float,
                        help="each idle window in seconds (default 10.5: a round-trip ping a seat; quick 2)")
    parser.add_argument("--games", default=",".join(GAMES), help=f"comma-separated (default {','.join(GAMES)})")
    parser.add_argument("--speed", type=positive_float, default=1.0,
                        help="every game's time scale times this (default 1)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 2 tables a game, 20 idle seats, 2 s windows")
    parser.add_argument("--json", metavar="PATH", default=str(RESULT), help=f"results file (default {RESULT})")
    args = parser.parse_args(argv)
    games = [g.strip() for g in args.games.split(",")]
    unknown = [g for g in games if g not in GAMES]
    if unknown:
        parser.error(f"no game {', '.join(unknown)}: choose from {', '.join(GAMES)}")
    if not 3 <= args.seats <= 6:
        parser.error(f"--seats {args.seats}: every game takes 3 to 6")
    if max(GAMES[g][2] for g in games) * args.speed > MAX_TIME_SCALE:
        parser.error(f"--speed {args.speed:g}: a time scale above {MAX_TIME_SCALE:g}")
    tables = args.tables or (2 if args.quick else None)
    idle_seats = args.idle_seats or (20 if args.quick else 1000)
    idle_s = args.idle_s or (2.0 if args.quick else 10.5)
    started = time.monotonic()
    try:
        out = {"command": " ".join(["bench/players.py", *(sys.argv[1:] if argv is None else argv)]),
               "machine": machine(), **run(tables, args.seats, idle_seats, idle_s, games, args.speed)}
    except (RuntimeError, trio.TooSlowError) as exc:
        raise SystemExit(f"players: {exc or 'a game did not end within ' + str(GAME_TIMEOUT_S) + ' s'}") from None
    out["elapsed_s"] = round(time.monotonic() - started, 1)
    Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    print("\n".join(table_lines(out)))


if __name__ == "__main__":
    run_script(main, "players")
