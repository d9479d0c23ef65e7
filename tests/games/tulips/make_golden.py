"""Write the golden Gift of Tulips games that ``test_golden.py`` replays (``tests/games/golden.py`` does the work).

Run ``.venv/bin/python -m tests.games.tulips.make_golden`` after an intended change to the rules, the players or
the simulator, and review the diff.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.games.golden import Goldens, dumps

GAME = "gift-of-tulips"

# name -> the arguments of ``server.cli.simulate.simulate``; time_scale keeps each log small
CASES: dict[str, dict[str, Any]] = {
    "2p_random": {"players": 2, "seed": 101, "kind": "random", "options": None, "time_scale": 1.0},
    "4p_greedy": {"players": 4, "seed": 202, "kind": "greedy", "options": None, "time_scale": 1.0},
    "6p_mix": {"players": 6, "seed": 303, "kind": "mix", "options": {"action_ms": 2000}, "time_scale": 1.0},
}
RESULT_KEYS = ("winners", "points", "bouquets", "festival", "majorities", "reason", "turns", "actions", "game_ms")
GOLDENS = Goldens(GAME, Path(__file__).resolve().parent / "golden", CASES, RESULT_KEYS)
play, record, path_of, load, replay = GOLDENS.play, GOLDENS.record, GOLDENS.path_of, GOLDENS.load, GOLDENS.replay

__all__ = ["CASES", "GAME", "GOLDENS", "RESULT_KEYS", "dumps", "load", "path_of", "play", "record", "replay"]

if __name__ == "__main__":
    GOLDENS.write_all()
