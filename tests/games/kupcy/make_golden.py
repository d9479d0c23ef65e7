"""Write the golden Kupcy games that ``test_golden.py`` replays (``tests/games/golden.py`` does the work).

Run ``.venv/bin/python -m tests.games.kupcy.make_golden`` after an intended change to the rules, the players or
the simulator, and review the diff.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.games.golden import Goldens, dumps

GAME = "kupcy"

# name -> the arguments of ``server.cli.simulate.simulate``; time_scale keeps each log small
CASES: dict[str, dict[str, Any]] = {
    "3p_random": {"players": 3, "seed": 101, "kind": "random", "options": None, "time_scale": 10.0},
    "4p_greedy": {"players": 4, "seed": 202, "kind": "greedy", "options": None, "time_scale": 10.0},
    "6p_mix": {"players": 6, "seed": 303, "kind": "mix", "options": {"bid_ms": 20_000, "stow_ms": 10_000},
               "time_scale": 10.0},
}
RESULT_KEYS = ("winners", "scores", "reason", "turns", "owned", "actions", "game_ms")
GOLDENS = Goldens(GAME, Path(__file__).resolve().parent / "golden", CASES, RESULT_KEYS)
play, record, path_of, load, replay = GOLDENS.play, GOLDENS.record, GOLDENS.path_of, GOLDENS.load, GOLDENS.replay

__all__ = ["CASES", "GAME", "GOLDENS", "RESULT_KEYS", "dumps", "load", "path_of", "play", "record", "replay"]

if __name__ == "__main__":
    GOLDENS.write_all()
