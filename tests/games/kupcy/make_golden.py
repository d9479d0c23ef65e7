"""Write the golden Kupcy games that ``test_golden.py`` replays.

Run ``.venv/bin/python -m tests.games.kupcy.make_golden`` after an intended change to the rules, the players or
the simulator, and review the diff: each file holds a table's arguments, the simulation's command log and the
final ``digest()`` (the file format is Parsimonia's: ``tests.games.parsimonia.make_golden.dumps``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from server.simulate import simulate, summary
from tests.games.parsimonia.make_golden import dumps

GOLDEN_DIR = Path(__file__).resolve().parent / "golden"
GAME = "kupcy"

CASES: dict[str, dict[str, Any]] = {
    "3p_random": {"players": 3, "seed": 101, "kind": "random", "options": None, "time_scale": 10.0},
    "4p_greedy": {"players": 4, "seed": 202, "kind": "greedy", "options": None, "time_scale": 10.0},
    "6p_mix": {"players": 6, "seed": 303, "kind": "mix", "options": {"bid_ms": 20_000, "stow_ms": 10_000},
               "time_scale": 10.0},
}
RESULT_KEYS = ("winners", "scores", "reason", "turns", "owned", "actions", "game_ms")


def play(case: dict[str, Any]):
    return simulate(case["players"], case["seed"], case["kind"], case["options"], case["time_scale"], game=GAME)


def record(name: str) -> dict[str, Any]:
    case = CASES[name]
    sim = play(case)
    out = summary(sim)
    return {"name": name, "game": GAME, **case, "result": {k: out[k] for k in RESULT_KEYS},
            "digest": out["digest"], "log": sim.log}


def path_of(name: str) -> Path:
    return GOLDEN_DIR / f"{name}.json"


def main() -> None:
    GOLDEN_DIR.mkdir(exist_ok=True)
    for name in CASES:
        doc = record(name)
        text = dumps(doc)
        assert json.loads(text) == json.loads(json.dumps(doc))
        path_of(name).write_text(text, encoding="utf-8")
        print(f"{path_of(name)}: {len(doc['log'])} entries, {len(text) // 1024} KB, digest {doc['digest'][:12]}")


if __name__ == "__main__":
    main()
