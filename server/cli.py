"""The ``parsimonia`` command."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from typing import Sequence

from clients.players import PLAYERS
from server.limits import ClientLimits


def _simulate(args: argparse.Namespace) -> int:
    from server.simulate import simulate, summary

    try:
        sim = simulate(args.players, args.seed, args.players_kind, time_scale=args.time_scale, deck_path=args.deck)
    except (OSError, ValueError) as exc:  # a bad table, or a deck file that is missing or malformed
        print(f"parsimonia simulate: {exc}", file=sys.stderr)
        return 2
    out = summary(sim)
    if args.json:
        print(json.dumps(out, sort_keys=True))
        return 0
    minutes = out["game_ms"] / 60_000
    print(f"Parsimonia, {out['players']} players ({', '.join(out['kinds'])}), seed {out['seed']}")
    print(f"ended by {out['reason']} after {minutes:.1f} game minutes, {out['turns']} turns, {out['actions']} actions")
    for seat, dollars in enumerate(out["dollars"]):
        mark = "  winner" if seat in out["winners"] else ""
        print(f"  seat {seat} ({out['kinds'][seat]}): ${dollars}{mark}")
    print(f"  Company: ${out['company_dollars']}")
    return 0


def _serve(args: argparse.Namespace) -> int:
    import trio

    from server import logs
    from server.app import Server, ServerConfig

    logs.configure(json_lines=args.log_json, level=getattr(logging, args.log_level.upper()))
    try:
        admin_token = _admin_token(args.admin_token_file)
    except (OSError, ValueError) as exc:
        print(f"parsimonia serve: {exc}", file=sys.stderr)
        return 2
    url = f"ws://{'127.0.0.1' if args.host in ('0.0.0.0', '::') else args.host}:{args.port}"
    print(
        f"Parsimonia server on {url} (protocol: protocol/SPEC.md)\n"
        f"  play a demo game:  parsimonia demo --url {url}\n"
        f"  seat a bot:        parsimonia bot greedy --url {url} [--table ID]\n"
        f"  watch a table:     parsimonia watch --url {url} --table ID\n"
        "  stop with Ctrl-C",
        flush=True,
    )
    try:
        config = ServerConfig(
            host=args.host,
            port=args.port,
            data_dir=None if args.sync == "off" else args.data,
            sync=args.sync,
            admin_token=admin_token,
            client=ClientLimits(
                messages_per_s=args.max_messages_per_s,
                bytes_per_s=args.max_bytes_per_s,
                connections_per_ip=args.max_connections_per_ip,
                tables_per_client=args.max_tables_per_client,
            ),
        )
        trio.run(Server(config).run)
    except* KeyboardInterrupt:  # trio may deliver Ctrl-C wrapped in an exception group
        pass
    return 0


def _admin_token(path: str | None) -> str | None:
    """The organiser's token: from a file (first line) or PARSIMONIA_ADMIN_TOKEN; never from the command
    line, where other users of the machine could read it."""
    if path:
        with open(path, encoding="utf-8") as f:
            token = f.readline().strip()
    else:
        token = os.environ.get("PARSIMONIA_ADMIN_TOKEN", "").strip()
    if token and len(token) < 16:
        raise ValueError("the admin token must be at least 16 characters")
    return token or None


def _bot(args: argparse.Namespace) -> int:
    import trio

    from clients.players import make_player
    from clients.sdk import run_bot

    player = make_player(args.kind, args.seed)
    name = args.name or f"{args.kind}-bot"
    token = args.token or os.environ.get("PARSIMONIA_TOKEN") or None
    table = args.table or os.environ.get("PARSIMONIA_TABLE") or None
    if token and not table:
        print("parsimonia bot: a seat token goes with --table", file=sys.stderr)
        return 2
    result = trio.run(lambda: run_bot(args.url, player, name=name, table=table, seats=args.seats, token=token))
    print(json.dumps(result, sort_keys=True))
    return 0


def _demo(args: argparse.Namespace) -> int:
    import trio

    from server import logs
    from server.demo import demo

    if args.url is None:
        logs.configure(level=logging.WARNING)  # the in-process server's log would drown the result
    out = trio.run(demo, args.players, args.seed, args.time_scale, args.players_kind, args.url)
    if args.json:
        print(json.dumps(out, sort_keys=True))
    else:
        print(f"demo game on table {out['table']}: {out['actions']} actions in {out['game_ms'] / 1000:.1f} s of play")
        for seat, dollars in enumerate(out["dollars"]):
            mark = "  winner" if seat in out["winners"] else ""
            print(f"  seat {seat} ({out['kinds'][seat]}): ${dollars}{mark}")
    return 0


def _watch(args: argparse.Namespace) -> int:
    import trio

    from clients.watch import watch

    return 0 if trio.run(watch, args.url, args.table) is not None else 1


def _bench(args: argparse.Namespace) -> int:
    from bench.storm import run_from_args

    return run_from_args(args)


def _replay(args: argparse.Namespace) -> int:
    from server.replay import replay_file

    return replay_file(args.file, quiet=args.quiet)


def _interrupted(exc: BaseException) -> bool:
    """Ctrl-C, which trio may deliver wrapped in an exception group."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_interrupted(e) for e in exc.exceptions)
    return isinstance(exc, KeyboardInterrupt)


def _tournament(args: argparse.Namespace) -> int:
    import trio

    from server.tournament.director import DirectorConfig, run_tournament
    from server import logs
    from server.tournament.roster import RosterError

    logs.configure(level=logging.WARNING)
    try:
        admin_token = _admin_token(args.admin_token_file)
    except (OSError, ValueError) as exc:
        print(f"parsimonia tournament: {exc}", file=sys.stderr)
        return 2
    cfg = DirectorConfig(
        roster=args.roster, data_dir=args.data, url=args.url, host=args.host, port=args.port,
        time_scale=args.time_scale, admin_token=admin_token, seed=args.seed, live=not args.json,
    )

    def progress(line: str) -> None:
        print(line, file=sys.stderr if args.json else sys.stdout, flush=True)

    try:
        doc = trio.run(run_tournament, cfg, progress)
    except (RosterError, OSError) as exc:
        print(f"parsimonia tournament: {exc}", file=sys.stderr)
        return 2
    except BaseException as exc:
        if not _interrupted(exc):
            raise
        print("stopped; run the same command again to carry on", file=sys.stderr)
        return 130
    if args.json:
        print(json.dumps(doc, sort_keys=True))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="parsimonia", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    sim = sub.add_parser("simulate", help="play one game in process at simulated time")
    sim.add_argument("--players", type=int, default=4, help="2 to 6 (default 4)")
    sim.add_argument("--seed", type=int, default=1)
    sim.add_argument("--players-kind", choices=[*PLAYERS, "mix"], default="greedy")
    sim.add_argument("--time-scale", type=float, default=1.0, help="divide every time control by this")
    sim.add_argument("--deck", help="a deck file (JSON) to play with instead of the default deck")
    sim.add_argument("--json", action="store_true", help="print one JSON object")
    sim.set_defaults(run=_simulate)

    serve = sub.add_parser("serve", help="run the table server")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (0.0.0.0 for a LAN)")
    serve.add_argument("--port", type=int, default=8765)
    serve.add_argument("--log-json", action="store_true", help="log one JSON object per line")
    serve.add_argument("--log-level", choices=["debug", "info", "warning", "error"], default="info")
    serve.add_argument("--data", default="data", help="data directory: journals and replay files (default ./data)")
    serve.add_argument(
        "--sync", default="fsync", choices=["fsync", "write", "off"],
        help="when a command counts as durable: after fsync (default; group commit), after write "
             "(survives a crash of the server, not of the machine), or off (no journal, nothing survives)",
    )
    serve.add_argument("--admin-token-file", help="file whose first line is the organiser's admin token "
                       "(default: $PARSIMONIA_ADMIN_TOKEN; none: admin requests are refused, anyone may create tables)")
    limits = ClientLimits()
    serve.add_argument("--max-messages-per-s", type=float, default=limits.messages_per_s)
    serve.add_argument("--max-bytes-per-s", type=float, default=limits.bytes_per_s)
    serve.add_argument("--max-connections-per-ip", type=int, default=limits.connections_per_ip)
    serve.add_argument("--max-tables-per-client", type=int, default=limits.tables_per_client)
    serve.set_defaults(run=_serve)

    bot = sub.add_parser("bot", help="seat a reference bot at a table over the network")
    bot.add_argument("kind", choices=list(PLAYERS))
    bot.add_argument("--url", default=os.environ.get("PARSIMONIA_URL", "ws://127.0.0.1:8765"))
    bot.add_argument("--table", help="table id (default: the first waiting table, or a new one)")
    bot.add_argument("--seats", type=int, default=4, help="seats of a table the bot creates")
    bot.add_argument("--token", help="take this seat (a token given by the organiser) instead of joining; "
                     "default $PARSIMONIA_TOKEN, with the table from --table or $PARSIMONIA_TABLE")
    bot.add_argument("--name")
    bot.add_argument("--seed", type=int, default=0)
    bot.set_defaults(run=_bot)

    demo = sub.add_parser("demo", help="play one game of bots over real WebSocket connections")
    demo.add_argument("--players", type=int, default=4)
    demo.add_argument("--seed", type=int, default=1)
    demo.add_argument("--players-kind", choices=[*PLAYERS, "mix"], default="greedy")
    demo.add_argument("--time-scale", type=float, default=200.0, help="divide every time control (default 200)")
    demo.add_argument("--url", help="play against this server instead of one started in process")
    demo.add_argument("--json", action="store_true")
    demo.set_defaults(run=_demo)

    replay = sub.add_parser("replay", help="re-run a finished game's journal and check its result")
    replay.add_argument("file", help="a journal, e.g. data/replays/t1.journal")
    replay.add_argument("--quiet", action="store_true", help="print only the result")
    replay.set_defaults(run=_replay)

    tour = sub.add_parser("tournament", help="run a tournament from a roster file (README: Run a LAN tournament)")
    tour.add_argument("--roster", required=True, help="the roster (TOML), e.g. examples/league.toml")
    tour.add_argument("--data", default="data", help="where the tournament, journals, replays and exports go")
    tour.add_argument("--url", help="direct a server running elsewhere (default: run one in this process)")
    tour.add_argument("--host", default="127.0.0.1", help="the in-process server's address (0.0.0.0 for a LAN)")
    tour.add_argument("--port", type=int, default=8765, help="the in-process server's port (0: any free one)")
    tour.add_argument("--time-scale", type=float, default=1.0, help="divide every time control (bot leagues)")
    tour.add_argument("--admin-token-file", help="the server's admin token (with --url)")
    tour.add_argument("--seed", type=int, help="override the roster's seed")
    tour.add_argument("--json", action="store_true", help="print the final standings and rounds as JSON")
    tour.set_defaults(run=_tournament)

    watch = sub.add_parser("watch", help="follow a table as a spectator")
    watch.add_argument("--url", default="ws://127.0.0.1:8765")
    watch.add_argument("--table", required=True)
    watch.set_defaults(run=_watch)

    from bench.storm import add_arguments as add_bench_arguments

    bench = sub.add_parser("bench", help="benchmark concurrent auctions over WebSocket (bench/README.md)")
    add_bench_arguments(bench)
    bench.set_defaults(run=_bench)
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    raise SystemExit(args.run(args))


if __name__ == "__main__":
    main()
