"""The ``parsimonia`` command."""

from __future__ import annotations

import argparse
import json
import logging
import os
import secrets
import sys
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Sequence
from urllib.parse import urlsplit

from clients.players import all_kinds
from server.games import DEFAULT_GAME, GAMES
from server.games import PROBLEMS as GAME_PROBLEMS
from server.games.parsimonia.config import PRESETS, preset_options
from server.limits import ClientLimits

DESCRIPTION = ("Parsimonia: a real-time auction and timer server for timed card games, with reference bots, "
               "a spectator view and a tournament director. Run parsimonia COMMAND --help for a command's options.")
STOPPED_TOURNAMENT = "stopped; run the same command again to carry on"


def _simulate(args: argparse.Namespace) -> int:
    from clients.narrate import default_names, result_lines
    from server.games import game_class
    from server.simulate import simulate, summary

    try:
        sim = simulate(args.players, args.seed, args.players_kind, options=args.options, time_scale=args.time_scale,
                       game=args.game)
    except (KeyError, ValueError) as exc:  # a bad table size or option, or a kind of bot the game has not
        print(f"parsimonia simulate: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    out = summary(sim)
    if args.json:
        print(json.dumps(out, sort_keys=True))
        return 0
    print(f"{game_class(args.game).TITLE}, {out['players']} players ({', '.join(out['kinds'])}), seed {out['seed']}, "
          f"{out['actions']} actions")
    names = [f"{name} ({kind})" for name, kind in zip(default_names(out["players"]), out["kinds"])]
    print("\n".join(result_lines(out, names)))
    return 0


def option(text: str) -> tuple[str, str]:
    """An argparse type: ``KEY=VALUE`` for a game option (the value is read by ``game_options``)."""
    key, eq, value = text.partition("=")
    if not eq or not key:
        raise argparse.ArgumentTypeError(f"{text!r}: give KEY=VALUE, e.g. turn_ms=60000 or deck=@deck.json")
    return key, value


def game_options(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """The options map from ``--option KEY=VALUE`` pairs: VALUE is JSON (a bare word is a string), or
    ``@FILE`` for a JSON file. ``ValueError`` naming the option when a file cannot be read."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if value.startswith("@"):
            try:
                with open(value[1:], encoding="utf-8") as f:
                    out[key] = json.load(f)
            except (OSError, ValueError) as exc:
                raise ValueError(f"option {key}: cannot read {value[1:]}: {exc}") from None
            continue
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out


def _serve(args: argparse.Namespace) -> int:
    import trio

    from server import logs
    from server.app import Server, ServerConfig
    from server.descriptors import capacity, raise_open_files_limit

    logs.configure(json_lines=args.log_json, level=getattr(logging, args.log_level.upper()))
    try:
        admin_token = _admin_token(args.admin_token_file)
        _arm_fault()
    except (OSError, ValueError) as exc:
        print(f"parsimonia serve: {exc}", file=sys.stderr)
        return 2
    config = ServerConfig(
        host=args.host,
        port=args.port,
        data_dir=None if args.sync == "off" else args.data,
        sync=args.sync,
        admin_token=admin_token,
        max_tables=args.max_tables,
        waiting_expiry_ms=args.waiting_expiry_ms,
        client=ClientLimits(
            messages_per_s=args.max_messages_per_s,
            bytes_per_s=args.max_bytes_per_s,
            connections_per_ip=args.max_connections_per_ip,
            http_connections_per_ip=args.max_http_connections_per_ip,
            handshakes_per_s=args.max_handshakes_per_s,
            address_messages_per_s=args.max_address_messages_per_s,
            address_bytes_per_s=args.max_address_bytes_per_s,
            tables_per_client=args.max_tables_per_client,
            waiting_tables_per_ip=args.max_waiting_tables_per_ip,
            rtt_ping_s=args.rtt_ping_s,
        ),
    )

    if args.worker_id is None and (args.workers > 1 or args.redis):
        return _supervise(args)
    worker = None
    if args.worker_id is not None:  # one worker of a cluster, started by its supervisor (server/cluster/)
        import structlog

        from server.cluster.worker import Worker, stop_with_supervisor

        if config.data_dir is not None:
            config.data_dir = os.path.join(config.data_dir, f"worker-{args.worker_id}")
        worker = config.cluster = Worker(args.worker_id, args.redis, args.own_port, _public_host(args),
                                         args.heartbeat_ms)
        structlog.contextvars.bind_contextvars(worker=args.worker_id)  # every line of this worker's log says so

    open_files = raise_open_files_limit()

    async def serve() -> None:
        async with trio.open_nursery() as nursery:
            server = await nursery.start(Server(config).run)
            # once listening (a server that cannot start says only why): one descriptor each, server/descriptors.py
            logs.get().info("open_files_limit", descriptors=open_files, connections_and_tables=capacity(open_files))
            if worker is None:
                print(_banner(args.host, server.port), flush=True)  # once listening: the port is ours
            else:  # the supervisor says where the cluster is
                nursery.start_soon(stop_with_supervisor, nursery.cancel_scope)

    try:
        trio.run(serve)
    except* KeyboardInterrupt:  # Ctrl-C is how a server is stopped
        pass
    return 0


def _supervise(args: argparse.Namespace) -> int:
    """``serve --workers N --redis URL``: a supervisor and its workers (server/cluster/supervisor.py)."""
    import importlib.util

    import trio

    if not args.redis:
        print(f"parsimonia serve: --workers {args.workers} needs Redis: give --redis URL (e.g. "
              "redis://127.0.0.1:6379/0; make run-cluster starts one), or serve with --workers 1", file=sys.stderr)
        return 2
    if not args.redis.startswith(("redis://", "unix://")):
        print(f"parsimonia serve: --redis {args.redis!r} is not a Redis URL: give redis://HOST:PORT/DB",
              file=sys.stderr)
        return 2
    if importlib.util.find_spec("coredis") is None:
        print("parsimonia serve: a cluster needs the Redis client: pip install 'parsimonia[cluster]'", file=sys.stderr)
        return 2
    from coredis import Redis

    from server.cluster.supervisor import Plan, WorkerRefused, pick_ports, supervise

    try:
        Redis.from_url(args.redis)  # parsed only: a Redis not running yet is waited for by the workers
    except ValueError as exc:
        print(f"parsimonia serve: --redis {args.redis!r}: {exc}; give redis://HOST:PORT/DB", file=sys.stderr)
        return 2

    workers = list(range(args.first_worker, args.first_worker + args.workers))
    plan: Plan = pick_ports(args.host, args.port, args.worker_ports, workers)
    plan.argv = args.argv

    def ready() -> None:
        own = ", ".join(f"worker {w} on {_public_host(args)}:{p}" for w, p in plan.ports.items())
        print(_banner(args.host, plan.port), flush=True)
        print(f"  {len(workers)} workers (Redis {args.redis}): {own}", flush=True)

    refused: list[BaseException] = []
    try:
        trio.run(supervise, plan, ready, args.heartbeat_ms)
    except* KeyboardInterrupt:  # Ctrl-C is how a cluster is stopped too
        pass
    except* WorkerRefused as group:
        refused.extend(group.exceptions)
    if refused:
        print(f"parsimonia serve: {refused[0]}", file=sys.stderr)
        return 2
    return 0


def _public_host(args: argparse.Namespace) -> str:
    """The host other machines reach this one's workers at: --public-host, else the address served on."""
    if args.public_host:
        return str(args.public_host)
    return "127.0.0.1" if args.host in ("0.0.0.0", "") else "::1" if args.host == "::" else str(args.host)


def _arm_fault() -> None:
    """The fault campaign's hook (server/faults.py), from its environment variable; ValueError if bad."""
    from server import faults

    faults.configure(os.environ.get(faults.ENV))


def _banner(host: str, port: int) -> str:
    where = f"{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}"
    url = f"ws://{where}"
    return (
        f"Parsimonia server on {url} (protocol: protocol/SPEC.md)\n"
        f"  the page:          http://{where}/ (play, watch; #admin for the organiser)\n"
        f"  play a demo game:  parsimonia demo --url {url}\n"
        f"  seat a bot:        parsimonia bot greedy --url {url} [--table ID]\n"
        f"  watch a table:     parsimonia watch --url {url} --table ID\n"
        f"  list the tables:   parsimonia tables --url {url}\n"
        "  stop with Ctrl-C"
    )


def _admin_token(path: str | None) -> str | None:
    """The organiser's token: from a file (first line) or PARSIMONIA_ADMIN_TOKEN; never from the command
    line, where other users of the machine could read it. A file given but empty or blank is refused: a
    server started so would take anyone for the organiser's equal (no token: anyone may create tables)."""
    if path:
        with open(path, encoding="utf-8") as f:
            token = f.readline().strip()
        if not token:
            raise ValueError(f"{path}: the admin token file is empty or blank; write the token on its first line")
    else:
        token = os.environ.get("PARSIMONIA_ADMIN_TOKEN", "").strip()
    if token and len(token) < 16:
        raise ValueError("the admin token must be at least 16 characters")
    return token or None


def _bot(args: argparse.Namespace) -> int:
    import trio

    from clients.narrate import Narrated, result_lines
    from clients.players import make_player
    from clients.sdk import run_bot

    player = make_player(args.kind, args.seed, args.game)
    if not args.json:
        _line_buffered()
        player = Narrated(player)
    name = args.name or f"{args.kind}-bot-{secrets.token_hex(2)}"  # two bots started alike differ
    token = args.token or os.environ.get("PARSIMONIA_TOKEN") or None
    table = args.table or os.environ.get("PARSIMONIA_TABLE") or None
    if token and not table:
        print("parsimonia bot: a seat token goes with --table", file=sys.stderr)
        return 2
    create: dict[str, Any] = {} if args.time_scale is None else {"time_scale": args.time_scale}
    options = {}
    if args.preset is not None:
        if args.game != "parsimonia":
            print(f"parsimonia bot: --preset is for parsimonia tables (not {args.game}): set --option", file=sys.stderr)
            return 2
        options = preset_options(args.preset)
    options.update(args.options)
    if options:
        create["options"] = options
    result = trio.run(lambda: run_bot(args.url, player, name=name, table=table, seats=args.seats, token=token,
                                      game=args.game, create_options=create))
    if args.json:
        print(json.dumps(result, sort_keys=True))
    else:
        print("\n".join(result_lines(result, player.names)))
    return 0


def _line_buffered() -> None:
    """Progress lines reach a pipe (a log file, ``tee``) as they are printed, not in 8 KiB lumps."""
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(line_buffering=True)


def _demo(args: argparse.Namespace) -> int:
    import trio

    from server import logs
    from server.demo import demo

    if args.url is None:
        logs.configure(level=logging.WARNING)  # the in-process server's log would drown the result
    if not args.json:
        _line_buffered()
    progress = None if args.json else print
    out = trio.run(demo, args.players, args.seed, args.time_scale, args.players_kind, args.url, progress, args.game,
                   args.options)
    if args.json:
        print(json.dumps(out, sort_keys=True))
    else:
        from clients.narrate import result_lines

        names = [f"{k}-{seat}" for seat, k in enumerate(out["kinds"])]
        print(f"demo game on table {out['table']}, {out['actions']} actions")
        print("\n".join(result_lines(out, names)))
    return 0


def _watch(args: argparse.Namespace) -> int:
    import trio

    from clients.watch import watch

    _line_buffered()
    trio.run(watch, args.url, args.table, print, args.from_start)
    return 0


def _tables(args: argparse.Namespace) -> int:
    import trio

    from clients.sdk import request_once

    listing = trio.run(lambda: request_once(args.url, "tables", client="parsimonia-tables"))["tables"]
    if args.json:
        print(json.dumps(listing, sort_keys=True))
    elif not listing:
        print(f"no tables on {args.url}: create one with parsimonia bot greedy --url {args.url}")
    else:
        tw = max(8, *(len(t["table"]) + 1 for t in listing))  # columns as wide as their longest entry
        gw = max(12, *(len(t["game"]) + 1 for t in listing))
        print(f"{'table':<{tw}} {'game':<{gw}} {'seats':>5}  {'state':<8} spectators")
        for t in listing:
            print(f"{t['table']:<{tw}} {t['game']:<{gw}} {t['taken']:>2}/{t['seats']:<2}  {t['state']:<8} "
                  f"{t['spectators']}")
    return 0


def _bench(args: argparse.Namespace) -> int:
    from bench.storm import run_from_args

    return run_from_args(args)


def _replay(args: argparse.Namespace) -> int:
    from server.replay import replay_file

    return replay_file(args.file, quiet=args.quiet)


def _tournament(args: argparse.Namespace) -> int:
    import trio

    from server import logs
    from server.tournament.director import DirectorConfig, run_tournament
    from server.tournament.roster import RosterError
    from server.tournament.store import StoreError

    logs.configure(level=logging.WARNING)
    try:
        admin_token = _admin_token(args.admin_token_file)
        _arm_fault()
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
    except (RosterError, StoreError) as exc:
        print(f"parsimonia tournament: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(doc, sort_keys=True))
    return 0


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Every option's help ends with its default, unless there is none to show (a flag, or a default the
    help text already explains)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default in (None, False) or action.default == [] or "default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


def port(text: str) -> int:
    """An argparse type: a TCP port, 0 (any free one) to 65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0-65535)") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a port: give 0-65535 (0: any free one)")
    return value


def ws_url(text: str) -> str:
    """An argparse type: a plain WebSocket URL with a host and a valid port (the server speaks no TLS)."""
    example = "give ws://HOST:PORT, e.g. ws://127.0.0.1:8765"
    if text.startswith("wss://"):
        raise argparse.ArgumentTypeError(f"{text!r}: wss:// (TLS) is not supported, the server speaks plain ws://; "
                                         + example)
    if not text.startswith("ws://"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a WebSocket URL: {example}")
    try:
        host, _ = urlsplit(text).hostname, urlsplit(text).port  # the port raises ValueError if out of range
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} has no valid port (0-65535): {example}") from None
    if not host:
        raise argparse.ArgumentTypeError(f"{text!r} names no host: {example}")
    return text


def positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is too small: give 1 or more")
    return value


def positive_float(text: str) -> float:
    """An argparse type: a finite number above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text} is not above 0: give a positive number")
    return value


def non_negative_float(text: str) -> float:
    """An argparse type: a finite number of at least 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text} is not 0 or more: give a number of seconds, 0 for none")
    return value


def _version() -> str:
    try:
        return f"parsimonia {version('parsimonia')}"
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "parsimonia (not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="parsimonia", description=DESCRIPTION, formatter_class=HelpFormatter)
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help: str, run: Any) -> argparse.ArgumentParser:
        cmd = sub.add_parser(name, help=help, description=help[0].upper() + help[1:] + ".",
                             formatter_class=HelpFormatter)
        cmd.set_defaults(run=run)
        return cmd

    url_help = "the server's WebSocket URL (default: $PARSIMONIA_URL, else ws://127.0.0.1:8765)"
    default_url = os.environ.get("PARSIMONIA_URL", "ws://127.0.0.1:8765")

    game_help = "the game (" + ", ".join(sorted(GAMES)) + ")"
    option_help = ("a game option KEY=VALUE, repeatable: VALUE is JSON, or @FILE for a JSON file "
                   "(e.g. --option turn_ms=60000 --option deck=@deck.json; the options are in docs/rules/)")

    def game_arguments(cmd: argparse.ArgumentParser) -> None:
        cmd.add_argument("--game", choices=sorted(GAMES), default=DEFAULT_GAME, help=game_help)
        cmd.add_argument("--option", type=option, action="append", dest="option_list", default=[],
                         metavar="KEY=VALUE", help=option_help)

    sim = command("simulate", "play one game in process at simulated time (no sockets, no waiting)", _simulate)
    game_arguments(sim)
    sim.add_argument("--players", type=int, default=4, help="number of players, 2 to 6")
    sim.add_argument("--seed", type=int, default=1, help="the table's seed: the same seed plays the same game")
    sim.add_argument("--players-kind", choices=[*all_kinds(), "mix"], default="greedy",
                     help="which reference bots play (mix: greedy and random in turn)")
    sim.add_argument("--time-scale", type=float, default=1.0, help="divide every time control by this")
    sim.add_argument("--json", action="store_true", help="print one JSON object instead of a summary")

    serve = command("serve", "run the table server", _serve)
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (0.0.0.0 for a LAN)")
    serve.add_argument("--port", type=port, default=8765, help="TCP port to listen on (0: any free one)")
    serve.add_argument("--log-json", action="store_true", help="log one JSON object per line")
    serve.add_argument("--log-level", choices=["debug", "info", "warning", "error"], default="info",
                       help="the least important log lines shown")
    serve.add_argument("--data", default="data", help="data directory: the log of every table, and replay files")
    serve.add_argument(
        "--sync", default="fsync", choices=["fsync", "write", "off"],
        help="when a command counts as durable: after the log's fdatasync (one per round for every table), "
             "after write (survives a crash of the server, not of the machine), or off (no journal, nothing "
             "survives)",
    )
    serve.add_argument("--admin-token-file", help="file whose first line is the organiser's admin token "
                       "(default: $PARSIMONIA_ADMIN_TOKEN; none: admin requests are refused, anyone may create tables)")
    limits = ClientLimits()
    serve.add_argument("--max-messages-per-s", type=positive_float, default=limits.messages_per_s,
                       help="messages a connection may send per second (2 s burst)")
    serve.add_argument("--max-bytes-per-s", type=positive_float, default=limits.bytes_per_s,
                       help="bytes a connection may send per second (2 s burst)")
    serve.add_argument("--max-connections-per-ip", type=positive_int, default=limits.connections_per_ip,
                       help="WebSocket connections one address may hold at once")
    serve.add_argument("--max-http-connections-per-ip", type=positive_int, default=limits.http_connections_per_ip,
                       help="other TCP connections (HTTP, handshakes under way) one address may hold at once")
    serve.add_argument("--max-handshakes-per-s", type=positive_float, default=limits.handshakes_per_s,
                       help="WebSocket handshakes one address may make per second (2 s burst)")
    serve.add_argument("--max-address-messages-per-s", type=positive_float, default=limits.address_messages_per_s,
                       help="messages all the connections of one address may send per second together (2 s burst)")
    serve.add_argument("--max-address-bytes-per-s", type=positive_float, default=limits.address_bytes_per_s,
                       help="bytes all the connections of one address may send per second together (2 s burst)")
    serve.add_argument("--max-tables", type=positive_int, default=10_000,
                       help="tables playing at once (finished tables do not count)")
    serve.add_argument("--max-tables-per-client", type=positive_int, default=limits.tables_per_client,
                       help="tables one connection may create")
    serve.add_argument("--max-waiting-tables-per-ip", type=positive_int, default=limits.waiting_tables_per_ip,
                       help="tables one address created that may wait for players at once (the organiser's: any)")
    serve.add_argument("--rtt-ping-s", type=non_negative_float, default=limits.rtt_ping_s,
                       help="ping every connection this often to time its round trip, shown to it and the organiser "
                            "(0: only idle connections are pinged)")
    serve.add_argument("--waiting-expiry-ms", type=positive_int, default=600_000,
                       help="a table still waiting for players this long after its creation or last join ends "
                            "(reason expired)")
    cluster = serve.add_argument_group("cluster (README: Run a cluster)")
    cluster.add_argument("--workers", type=positive_int, default=1,
                         help="worker processes sharing --port, each with its own tables and DATA/worker-K "
                         "(1: one process, no Redis)")
    cluster.add_argument("--redis", help="the cluster's Redis, e.g. redis://127.0.0.1:6379/0 (given with "
                         "--workers 1: a cluster of one worker, e.g. one machine's share of a larger cluster)")
    cluster.add_argument("--worker-ports", type=port, help="worker K's own port is this plus K minus "
                         "--first-worker (default: the ports after --port; free ones if --port is 0)")
    cluster.add_argument("--public-host", help="the address other machines and clients reach this machine's "
                         "workers at (default: --host, or 127.0.0.1 for 0.0.0.0)")
    cluster.add_argument("--first-worker", type=positive_int, default=1, help="the first worker's number: "
                         "each machine of a cluster numbers its workers apart (e.g. 1 and 101)")
    cluster.add_argument("--heartbeat-ms", type=positive_int, default=500, help="how often a worker renews its "
                         "entry in Redis and reads the others'; an entry expires after 4 of them")
    serve.add_argument("--worker-id", type=positive_int, help=argparse.SUPPRESS)  # given by the supervisor
    serve.add_argument("--own-port", type=port, default=0, help=argparse.SUPPRESS)

    bot = command("bot", "seat a reference bot at a table over the network", _bot)
    bot.add_argument("--game", choices=sorted(GAMES), default=os.environ.get("PARSIMONIA_GAME", DEFAULT_GAME),
                     help=game_help + " of a table the bot looks for or creates (default: $PARSIMONIA_GAME, else "
                     f"{DEFAULT_GAME})")
    bot.add_argument("kind", choices=all_kinds(), help="which reference bot")
    bot.add_argument("--url", type=ws_url, default=default_url, help=url_help)
    bot.add_argument("--table", help="table id (default: $PARSIMONIA_TABLE, else the first waiting table, "
                     "else a new one)")
    bot.add_argument("--seats", type=positive_int, help="seats of a table the bot creates (default 4); given, the "
                     "bot joins only a waiting table with that many seats")
    bot.add_argument("--time-scale", type=float, help="speed up the clocks of a table the bot creates by this "
                     "(120: a 2-hour game in a minute; default: real time); given, the bot creates its own table, "
                     "never joining one whose clocks it cannot see: seat the next bots with --table, or without "
                     "--time-scale")
    bot.add_argument("--option", type=option, action="append", dest="option_list", default=[], metavar="KEY=VALUE",
                     help=option_help + ", for a table the bot creates; given, the bot creates its own table")
    bot.add_argument("--preset", choices=sorted(PRESETS), help="named clocks for a Parsimonia table with people "
                     "(" + "; ".join(f"{k}: {v['title']}" for k, v in PRESETS.items()) + "; docs/rules/parsimonia.md); "
                     "--option overrides its values; given, the bot creates its own table")
    bot.add_argument("--token", help="take this seat (a token given by the organiser) instead of joining; "
                     "default $PARSIMONIA_TOKEN, with the table from --table or $PARSIMONIA_TABLE")
    bot.add_argument("--name", help="the name shown to the other players (default: KIND-bot-XXXX, "
                     "XXXX random, so that two bots started alike can be told apart)")
    bot.add_argument("--seed", type=int, default=0, help="seed of the bot's own choices")
    bot.add_argument("--json", action="store_true", help="print only the result, as one JSON object")

    demo = command("demo", "play one game of bots over real WebSocket connections", _demo)
    game_arguments(demo)
    demo.add_argument("--players", type=int, default=4, help="number of players, 2 to 6")
    demo.add_argument("--seed", type=int, default=1, help="the table's seed")
    demo.add_argument("--players-kind", choices=[*all_kinds(), "mix"], default="greedy",
                      help="which reference bots play (mix: greedy and random in turn)")
    demo.add_argument("--time-scale", type=float, default=200.0, help="divide every time control by this")
    demo.add_argument("--url", type=ws_url, help="play on this server (default: one started in this process)")
    demo.add_argument("--json", action="store_true", help="print only the result, as one JSON object")

    replay = command("replay", "re-run a finished game's journal and check its result", _replay)
    replay.add_argument("file", help="a journal, e.g. data/replays/t1.journal")
    replay.add_argument("--quiet", action="store_true", help="print only the result")

    tour = command("tournament", "run a tournament from a roster file (README: Run a LAN tournament)", _tournament)
    tour.set_defaults(stopped=STOPPED_TOURNAMENT)
    tour.add_argument("--roster", required=True, help="the roster (TOML), e.g. examples/league.toml")
    tour.add_argument("--data", default="data", help="where the tournament, journals, replays and exports go")
    tour.add_argument("--url", type=ws_url, help="direct a server running elsewhere (default: run one in this "
                      "process)")
    tour.add_argument("--host", default="127.0.0.1", help="the in-process server's address (0.0.0.0 for a LAN)")
    tour.add_argument("--port", type=port, default=8765, help="the in-process server's port (0: any free one)")
    tour.add_argument("--time-scale", type=float, default=1.0, help="divide every time control (bot leagues)")
    tour.add_argument("--admin-token-file", help="the server's admin token, for --url (default: "
                      "$PARSIMONIA_ADMIN_TOKEN)")
    tour.add_argument("--seed", type=int, help="override the roster's seed (default: the roster's)")
    tour.add_argument("--json", action="store_true", help="print the final standings and rounds as JSON")

    watch = command("watch", "follow a table as a spectator, one line per event", _watch)
    watch.add_argument("--url", type=ws_url, default=default_url, help=url_help)
    watch.add_argument("--table", required=True, help="the table's id (see parsimonia tables)")
    watch.add_argument("--from-start", action="store_true",
                       help="first print every event since the table opened (a late spectator's catch-up)")

    tables = command("tables", "list a server's tables: id, game, seats taken, state, spectators", _tables)
    tables.add_argument("--url", type=ws_url, default=default_url, help=url_help)
    tables.add_argument("--json", action="store_true", help="print the list as JSON")

    from bench.storm import add_arguments as add_bench_arguments

    bench = command("bench", "benchmark concurrent auctions over WebSocket (bench/README.md)", _bench)
    add_bench_arguments(bench)
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    """Run one command. A user's mistake (no server there, a port in use, a wrong token, Ctrl-C) ends it
    with one line naming the cause and what to do, and a non-zero status; a bug keeps its traceback."""
    args = build_parser().parse_args(argv)
    for problem in GAME_PROBLEMS:  # a game package that did not load: said once, the others play on
        print(f"parsimonia {args.command}: {problem}", file=sys.stderr)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # what a cluster's supervisor gives its workers
    try:
        args.options = game_options(getattr(args, "option_list", []))
    except ValueError as exc:
        print(f"parsimonia {args.command}: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    try:
        status = args.run(args)
    except BaseException as exc:
        from server.cli_errors import explain

        explained = explain(exc, args)
        if explained is None:
            raise
        line, status = explained
        print(f"parsimonia {args.command}: {line}", file=sys.stderr)
    raise SystemExit(status)


if __name__ == "__main__":
    main()
