"""The ``parsimonia`` command: discover the games (``server.games.discover``), parse (``server.cli.args``, with
the commands other packages add), run the command (``server.cli.play``, ``server.cli.serve``), and turn a user's
mistake into one line and an exit status (``server.cli.errors``)."""

from __future__ import annotations

import sys
from typing import Sequence

from clients.games import problems as client_problems
from server.cli import args as cli_args
from server.cli.args import build_parser, game_options
from server.games import PROBLEMS as GAME_PROBLEMS
from server.games import discover
from server.ops.memory import run_on_system_allocator


def main(argv: Sequence[str] | None = None) -> None:
    """Run one command. A user's mistake (no server there, a port in use, a wrong token, Ctrl-C) ends it
    with one line naming the cause and what to do, and a non-zero status; a bug keeps its traceback."""
    discover()  # the games, before the parser offers them
    args = build_parser().parse_args(argv)
    if argv is None and args.command in ("serve", "tournament"):  # a server in a process of its own
        run_on_system_allocator()  # started again on the C library's allocator (server/ops/memory.py)
    for problem in (*GAME_PROBLEMS, *client_problems(), *cli_args.PROBLEMS):  # a package that did not load: said once
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
        from server.cli.errors import explain

        explained = explain(exc, args)
        if explained is None:
            raise
        line, status = explained
        print(f"parsimonia {args.command}: {line}", file=sys.stderr)
    raise SystemExit(status)


if __name__ == "__main__":
    main()
