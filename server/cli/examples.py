"""The examples every ``parsimonia`` command's ``--help`` ends with: each runs as written from a fresh clone (with
the venv's ``bin`` on PATH), and ``tests/server/cli/test_main.py`` runs every one. A line ending in ``&`` runs in
the background, as in a shell, while the next ones run; ``# ...`` says what it does. Where an example needs a server
it uses the default URL (ws://127.0.0.1:8765, or $PARSIMONIA_URL), which ``parsimonia serve`` listens on."""

from __future__ import annotations

from collections.abc import Sequence

HEAD = "examples:"

EXAMPLES: dict[str, list[str]] = {
    "": [
        "parsimonia simulate --players 3                     # a game of bots, at once, in this process",
        "parsimonia demo --time-scale 1000                   # the same over real WebSockets",
        "parsimonia serve --help                             # then run a server for people and bots",
    ],
    "simulate": [
        "parsimonia simulate --players 3 --seed 7            # one game of greedy bots, its result",
        "parsimonia simulate --game kupcy --players 4 --players-kind mix --json",
    ],
    "serve": [
        "parsimonia serve                                    # ws://127.0.0.1:8765, the page at http://127.0.0.1:8765/",
        "parsimonia serve --port 9000 --data data-9000       # a second server beside the first",
        "parsimonia serve --sync off --max-tables 100        # nothing kept on disk: for a quick try",
    ],
    "bot": [
        "parsimonia bot greedy --seats 2 --time-scale 400 &  # creates a table (t1 on a fresh server), waits",
        "parsimonia bot random --table t1                    # takes its other seat: the game plays out",
    ],
    "demo": [
        "parsimonia demo --players 3 --time-scale 1000       # 3 greedy bots on a server in this process",
        "parsimonia demo --game gift-of-tulips --players 3 --time-scale 1000 --json",
        "parsimonia demo --players-kind mix --time-scale 1000 --url ws://127.0.0.1:8765   # on a running server",
    ],
    "watch": [
        "parsimonia watch --table t1                         # t1's events from now on, until its result",
        "parsimonia watch --table t1 --from-start            # every event since it opened",
    ],
    "tables": [
        "parsimonia tables",
        "parsimonia tables --json --url ws://127.0.0.1:8765",
    ],
    "replay": [
        "parsimonia replay data/replays/t1.journal           # a game a server with --data data (the default) finished",
        "parsimonia replay data/replays/t1.journal --quiet",
    ],
    "tournament": [
        "parsimonia tournament --roster examples/duel.toml --data data-duel --port 0 --time-scale 100",
        "parsimonia tournament --roster examples/duel.toml --data data-duel --port 0 --time-scale 100 --json"
        "   # again: it is over, its standings",
    ],
    "ratings": [
        "parsimonia tournament --roster examples/duel.toml --data data-duel --port 0 --time-scale 100   # rated games",
        "parsimonia ratings --data data-duel                 # its entrants' ratings (docs/ratings.md)",
        "parsimonia ratings --data data-duel --game parsimonia --json",
    ],
    "ladder": [
        "parsimonia ladder --roster examples/duel.toml --data data-duel-ladder --port 0 --time-scale 100 --events 2",
        "parsimonia ratings --data data-duel-ladder          # after the night: the ladder",
    ],
}


def epilog(command: str, lines: Sequence[str] | None = None) -> str:
    """The examples ``command``'s ``--help`` ends with: ``lines``, a command another package adds gives its own."""
    return HEAD + "\n" + "\n".join("  " + line for line in (EXAMPLES[command] if lines is None else lines))
