"""The ``parsimonia`` commands that play or look on: ``simulate``, ``bot``, ``demo``, ``watch``, ``tables``,
``replay``. Each takes the parsed arguments (``server.cli.args``) and returns the exit status."""

from __future__ import annotations

import argparse
import json
import logging
import os
import secrets
import sys
from typing import Any, Callable

from protocol.values import Map
from server.games.fields import int_field, str_field, strs_field
from server.games.parsimonia.config import preset_options


def cmd_simulate(args: argparse.Namespace) -> int:
    from clients.narrate import default_names, result_lines
    from server.games import game_class
    from server.cli.simulate import simulate, summary

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
    kinds = strs_field(out, "kinds")
    print(f"{game_class(args.game).TITLE}, {int_field(out, 'players')} players ({', '.join(kinds)}), "
          f"seed {int_field(out, 'seed')}, {int_field(out, 'actions')} actions")
    names = [f"{name} ({kind})" for name, kind in zip(default_names(int_field(out, "players")), kinds)]
    print("\n".join(result_lines(out, names)))
    return 0


def cmd_bot(args: argparse.Namespace) -> int:
    import trio

    from clients.narrate import Narrated, result_lines
    from clients.players import make_player
    from clients.sdk import run_bot, say_on_stderr, stop_on_signals

    player = make_player(args.kind, args.seed, args.game)
    narrated = None if args.json else Narrated(player)
    # waiting for players, reconnecting, a refusal: beside the narration, else apart from the JSON
    say: Callable[[str], None] = say_on_stderr
    if narrated is not None:
        line_buffered()
        say = print
    name = args.name or f"{args.kind}-bot-{secrets.token_hex(2)}"  # two bots started alike differ
    token = args.token or os.environ.get("PARSIMONIA_TOKEN") or None
    table = args.table or os.environ.get("PARSIMONIA_TABLE") or None
    if token and not table:
        print("parsimonia bot: a seat token goes with --table", file=sys.stderr)
        return 2
    create: Map = {} if args.time_scale is None else {"time_scale": args.time_scale}
    options = {}
    if args.preset is not None:
        if args.game != "parsimonia":
            print(f"parsimonia bot: --preset is for parsimonia tables (not {args.game}): set --option", file=sys.stderr)
            return 2
        options = preset_options(args.preset)
    options.update(args.options)
    if options:
        create["options"] = options
    result = trio.run(lambda: stop_on_signals(lambda: run_bot(args.url, narrated or player, name=name, table=table,
                                                              seats=args.seats, token=token, game=args.game,
                                                              create_options=create, say=say)))
    if narrated is None:
        print(json.dumps(result, sort_keys=True))
    else:
        print("\n".join(result_lines(result, narrated.names)))
    return 0


def line_buffered() -> None:
    """Progress lines reach a pipe (a log file, ``tee``) as they are printed, not in 8 KiB lumps."""
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(line_buffering=True)


def cmd_demo(args: argparse.Namespace) -> int:
    import trio

    from server.ops import logs
    from server.cli.demo import demo

    if args.url is None:
        logs.configure(level=logging.WARNING)  # the in-process server's log would drown the result
    if not args.json:
        line_buffered()
    progress = None if args.json else print
    out = trio.run(demo, args.players, args.seed, args.time_scale, args.players_kind, args.url, progress, args.game,
                   args.options)
    if args.json:
        print(json.dumps(out, sort_keys=True))
    else:
        from clients.narrate import result_lines

        names = [f"{k}-{seat}" for seat, k in enumerate(strs_field(out, "kinds"))]
        print(f"demo game on table {str_field(out, 'table')}, {int_field(out, 'actions')} actions")
        print("\n".join(result_lines(out, names)))
    return 0


def cmd_watch(args: argparse.Namespace) -> int:
    import trio

    from clients.watch import watch

    line_buffered()
    trio.run(watch, args.url, args.table, print, args.from_start)
    return 0


def cmd_tables(args: argparse.Namespace) -> int:
    import trio

    from clients.sdk import request_once

    async def ask() -> dict[str, Any] | None:
        with trio.move_on_after(args.timeout_s):
            return await request_once(args.url, "tables", client="parsimonia-tables")
        return None

    reply = trio.run(ask)
    if reply is None:  # e.g. a frozen worker of a cluster, handed the connection
        print(f"parsimonia tables: the server at {args.url} did not answer within {args.timeout_s:g} s",
              file=sys.stderr)
        return 1
    listing, away = reply["tables"], reply.get("away", [])
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
    for worker in away:  # a cluster's worker away (restarting, frozen): the listing lacks its tables
        print(f"parsimonia tables: worker {worker} did not answer: its tables are not listed", file=sys.stderr)
    return 1 if away else 0


def cmd_replay(args: argparse.Namespace) -> int:
    from server.cli.replay import replay_file

    return replay_file(args.file, quiet=args.quiet)

