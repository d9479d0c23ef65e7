"""A spare worker process: its imports done, it waits to become whichever worker its supervisor names.

A worker started cold spends most of its first second importing (the server, the games, the Redis client); a
spare has done that already, so a worker that died is listening again in a fraction of that. The supervisor
(``server.cluster.supervisor``) keeps one spare and, when a worker dies, writes that worker's arguments on the
spare's standard input as one JSON line; the spare then runs them as ``parsimonia`` would. End of input (the
supervisor is gone) or Ctrl-C ends a spare quietly.
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    try:
        import coredis  # noqa: F401  (what a worker imports, once, ahead of need)
        import structlog  # noqa: F401

        import server.runtime.app  # noqa: F401
        import server.cli.main
        import server.cli.serve  # noqa: F401
        import server.cluster.worker  # noqa: F401
        import server.ops.descriptors  # noqa: F401
        from server.cli.args import build_parser
        from server.games import discover

        discover()  # the games, as the command's main does before its parser offers them
        build_parser()  # and what building the parser imports
        line = sys.stdin.readline()
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    if not line:
        raise SystemExit(0)
    argv = json.loads(line)
    if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv)):
        raise SystemExit(f"parsimonia worker spare: not a list of arguments: {line[:200]!r}")
    server.cli.main.main(argv)


if __name__ == "__main__":
    main()
