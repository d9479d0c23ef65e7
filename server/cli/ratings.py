"""``parsimonia ratings``: the ladder of a data directory's ratings (``server.ratings.store``), as a table or JSON, and
the organiser's keys that let a registered entrant be rated at a casual table. A directory that is not one, or a
file that is not a ratings file, is one line and status 2."""

from __future__ import annotations

import argparse
import json
import os
import sys

from server.ratings.store import RATINGS_FILE, RatingsError, RatingStore
from server.tournament.console import render_ladder


def cmd_ratings(args: argparse.Namespace) -> int:
    data = args.data
    if not os.path.isdir(data):
        print(f"parsimonia ratings: {data}: no such directory; give --data the directory a tournament or a "
              "server used", file=sys.stderr)
        return 2
    try:
        if args.issue is not None:
            with RatingStore(os.path.join(data, RATINGS_FILE)) as store:
                key = store.issue_key(args.issue)
            print(f"{args.issue}'s key (give it once, to its player: a casual table created with rated=true rates "
                  f"a seat joined with this entrant key; an earlier key of theirs no longer works):\n{key}")
            return 0
        with RatingStore(os.path.join(data, RATINGS_FILE), create=False) as store:
            ladder = store.ladder(args.game)
    except (RatingsError, OSError) as exc:
        print(f"parsimonia ratings: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps([r.to_dict() for r in ladder]))
    else:
        print(render_ladder(ladder))
    return 0


def cmd_ladder(args: argparse.Namespace) -> int:
    """``parsimonia ladder``: the roster's bots in rated events until stopped (``server.tournament.ladder``)."""
    import logging

    import trio

    from server.ops import logs
    from server.tournament.director import DirectorConfig
    from server.tournament.ladder import run_ladder
    from server.tournament.roster import RosterError
    from server.tournament.store import StoreError

    logs.configure(level=logging.WARNING)
    cfg = DirectorConfig(roster=args.roster, data_dir=args.data, host=args.host, port=args.port,
                         time_scale=args.time_scale, live=False)
    try:
        trio.run(run_ladder, cfg, args.events, lambda line: print(line, flush=True))
    except (RosterError, StoreError) as exc:
        print(f"parsimonia ladder: {exc}", file=sys.stderr)
        return 2
    return 0
