"""The ``parsimonia`` command line: its parser, each command's options, and the argument types that check them."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Protocol, TypeGuard

from clients.players import all_kinds
from clients.sdk import BadUrl, check_url
from protocol.values import Options
from server.cli import examples
from server.cli.play import cmd_bot, cmd_demo, cmd_replay, cmd_simulate, cmd_tables, cmd_watch
from server.cli.serve import cmd_serve, cmd_tournament
from server.games import DEFAULT_GAME, GAMES
from server.games.parsimonia.config import PRESETS
from server.transport.limits import ClientLimits
from server.plugins import load_entry_points

COMMANDS = "parsimonia.commands"  # the entry-point group of the commands other packages add (``commands``)
PROBLEMS: list[str] = []  # those that could not be loaded or added, one line each (``server.cli.main.main`` says them)
DESCRIPTION = ("Parsimonia: a real-time auction and timer server for timed card games, with reference bots, "
               "a spectator view and a tournament director. Run parsimonia COMMAND --help for a command's options.")
STOPPED_TOURNAMENT = "stopped; run the same command again to carry on"


def option(text: str) -> tuple[str, str]:
    """An argparse type: ``KEY=VALUE`` for a game option (the value is read by ``game_options``)."""
    key, eq, value = text.partition("=")
    if not eq or not key:
        raise argparse.ArgumentTypeError(f"{text!r}: give KEY=VALUE, e.g. turn_ms=60000 or deck=@deck.json")
    return key, value


def game_options(pairs: list[tuple[str, str]]) -> Options:
    """The options map from ``--option KEY=VALUE`` pairs: VALUE is JSON (a bare word is a string), or
    ``@FILE`` for a JSON file. ``ValueError`` naming the option when a file cannot be read."""
    out: Options = {}
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


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Every option's help ends with its default, unless there is none to show (a flag, or a default the
    help text already explains)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default in (None, False) or action.default == [] or "default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith(examples.HEAD):  # the examples keep their lines, one command each
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


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
    try:
        return check_url(text)
    except BadUrl as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


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
    parser = argparse.ArgumentParser(prog="parsimonia", description=DESCRIPTION, epilog=examples.epilog(""),
                                     formatter_class=HelpFormatter)
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help: str, run: Callable[[argparse.Namespace], int],
                lines: Sequence[str] | None = None) -> argparse.ArgumentParser:
        cmd = sub.add_parser(name, help=help, description=help[0].upper() + help[1:] + ".",
                             epilog=examples.epilog(name, lines), formatter_class=HelpFormatter)
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

    sim = command("simulate", "play one game in process at simulated time (no sockets, no waiting)", cmd_simulate)
    game_arguments(sim)
    sim.add_argument("--players", type=int, default=4, help="number of players, 2 to 6")
    sim.add_argument("--seed", type=int, default=1, help="the table's seed: the same seed plays the same game")
    sim.add_argument("--players-kind", choices=[*all_kinds(), "mix"], default="greedy",
                     help="which reference bots play (mix: greedy and random in turn)")
    sim.add_argument("--time-scale", type=float, default=1.0, help="divide every time control by this")
    sim.add_argument("--json", action="store_true", help="print one JSON object instead of a summary")

    serve = command("serve", "run the table server", cmd_serve)
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
    serve.add_argument("--max-http-requests-per-s", type=positive_float, default=limits.http_requests_per_s,
                       help="plain HTTP requests (pages, /metrics) one address may make per second (2 s burst)")
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
    serve.add_argument("--max-playing-tables-per-ip", type=positive_int, default=limits.playing_tables_per_ip,
                       help="tables one address created that may be live (waiting or running) at once (the "
                            "organiser's: any)")
    serve.add_argument("--rtt-ping-s", type=non_negative_float, default=limits.rtt_ping_s,
                       help="ping every connection this often to time its round trip, shown to it and the organiser "
                            "(0: only idle connections are pinged)")
    serve.add_argument("--waiting-expiry-ms", type=positive_int, default=600_000,
                       help="a table still waiting for players this long after its creation or last join ends "
                            "(reason expired)")
    cluster = serve.add_argument_group("cluster (docs/cluster.md)")
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
    cluster.add_argument("--worker-timeout-ms", type=positive_int, default=1500, help="a worker whose event loop "
                         "is silent this long (frozen, stalled) is killed and started again")
    serve.add_argument("--worker-id", type=positive_int, help=argparse.SUPPRESS)  # given by the supervisor
    serve.add_argument("--alive-fd", type=int, help=argparse.SUPPRESS)  # the worker's pipe to its supervisor
    serve.add_argument("--own-port", type=port, default=0, help=argparse.SUPPRESS)

    bot = command("bot", "seat a reference bot at a table over the network", cmd_bot)
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

    demo = command("demo", "play one game of bots over real WebSocket connections", cmd_demo)
    game_arguments(demo)
    demo.add_argument("--players", type=int, default=4, help="number of players, 2 to 6")
    demo.add_argument("--seed", type=int, default=1, help="the table's seed")
    demo.add_argument("--players-kind", choices=[*all_kinds(), "mix"], default="greedy",
                      help="which reference bots play (mix: greedy and random in turn)")
    demo.add_argument("--time-scale", type=float, default=200.0, help="divide every time control by this")
    demo.add_argument("--url", type=ws_url, help="play on this server (default: one started in this process)")
    demo.add_argument("--json", action="store_true", help="print only the result, as one JSON object")

    replay = command("replay", "re-run a finished game's journal and check its result", cmd_replay)
    replay.add_argument("file", help="a journal, e.g. data/replays/t1.journal")
    replay.add_argument("--quiet", action="store_true", help="print only the result")

    tour = command("tournament", "run a tournament from a roster file (docs/tournament.md)", cmd_tournament)
    tour.set_defaults(stopped=STOPPED_TOURNAMENT)
    tour.add_argument("--roster", required=True, help="the roster (TOML), e.g. examples/league.toml")
    tour.add_argument("--data", default="tournament-data", help="where the tournament, its server's journals, "
                      "replays, bot logs and exports go (not a server's own --data)")
    tour.add_argument("--url", type=ws_url, help="direct a server running elsewhere (default: run one in this "
                      "process)")
    tour.add_argument("--host", default="127.0.0.1", help="the in-process server's address (0.0.0.0 for a LAN)")
    tour.add_argument("--port", type=port, default=8765, help="the in-process server's port (0: any free one)")
    tour.add_argument("--time-scale", type=float, default=1.0, help="divide every time control (bot leagues)")
    tour.add_argument("--admin-token-file", help="the server's admin token, for --url (default: "
                      "$PARSIMONIA_ADMIN_TOKEN)")
    tour.add_argument("--seed", type=int, help="override the roster's seed (default: the roster's)")
    tour.add_argument("--json", action="store_true", help="print the final standings and rounds as JSON")

    from server.cli.ratings import cmd_ratings

    ratings = command("ratings", "the ladder: every registered entrant's rating, per game (docs/ratings.md)",
                      cmd_ratings)
    ratings.add_argument("--data", default=tour.get_default("data"), help="the data directory of the tournaments "
                         "or the server whose ratings to show (the same as theirs)")
    ratings.add_argument("--game", choices=sorted(GAMES), help="only this game's ratings (default: every game's)")
    ratings.add_argument("--json", action="store_true", help="print the ladder as a JSON array")
    ratings.add_argument("--issue", metavar="NAME", help="the organiser's: issue NAME a new key, for its casual "
                         "rated tables (join's entrant field), and print it")

    from server.cli.ratings import cmd_ladder

    ladder = command("ladder", "a league for bots: the roster's bots in rated events, seated by rating, until "
                     "stopped (docs/ratings.md)", cmd_ladder)
    ladder.set_defaults(stopped="stopped; run the same command again to carry on the event under way")
    ladder.add_argument("--roster", required=True, help="a roster of bots (TOML, docs/roster.md): each event plays "
                        "its rounds, e.g. examples/league.toml")
    ladder.add_argument("--data", default=tour.get_default("data"), help="where the events, their ratings, journals "
                        "and replays go (one directory for the whole ladder)")
    ladder.add_argument("--host", default="127.0.0.1", help="the in-process server's address")
    ladder.add_argument("--port", type=port, default=8765, help="the in-process server's port (0: any free one)")
    ladder.add_argument("--time-scale", type=positive_float, default=1.0, help="divide every time control")
    ladder.add_argument("--events", type=positive_int, help="stop after this many events (default: until Ctrl-C)")

    watch = command("watch", "follow a table as a spectator, one line per event", cmd_watch)
    watch.add_argument("--url", type=ws_url, default=default_url, help=url_help)
    watch.add_argument("--table", required=True, help="the table's id (see parsimonia tables)")
    watch.add_argument("--from-start", action="store_true",
                       help="first print every event since the table opened (a late spectator's catch-up)")

    tables = command("tables", "list a server's tables: id, game, seats taken, state, spectators", cmd_tables)
    tables.add_argument("--url", type=ws_url, default=default_url, help=url_help)
    tables.add_argument("--json", action="store_true", help="print the list as JSON")
    tables.add_argument("--timeout-s", type=positive_float, default=10.0, help="give up (exit status 1) after "
                        "this long without an answer; a cluster's worker that did not answer is named, status 1")

    for register in commands():
        try:
            register(command)
        except Exception as exc:  # noqa: BLE001 - e.g. a name already taken: that package's problem
            where = f"{getattr(register, '__module__', '?')}.{getattr(register, '__qualname__', register)}"
            PROBLEMS.append(f"command entry point {where} failed: {exc}")
    return parser


class AddCommand(Protocol):
    """What a package's command registers with (``build_parser``'s ``command``): its name, its one-line help, the
    function that runs it and returns the exit status, the example lines its ``--help`` ends with; returns the
    command's parser, for its arguments."""

    def __call__(self, name: str, help: str, run: Callable[[argparse.Namespace], int],
                 lines: Sequence[str] | None = None) -> argparse.ArgumentParser: ...


Register = Callable[[AddCommand], None]


def _is_register(value: object) -> TypeGuard[Register]:
    return callable(value)


def commands() -> list[Register]:
    """The commands other packages add (``parsimonia bench``: this project's ``bench``), named by their register
    functions in the entry-point group ``COMMANDS``; looked up as the parser is built, so ``parsimonia --help`` lists
    them. One that does not load is said in ``PROBLEMS`` and left out."""
    PROBLEMS.clear()  # the last parser's: a process that builds one per command says each once
    return load_entry_points(COMMANDS, _is_register, "function", PROBLEMS, "command")

