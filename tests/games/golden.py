"""Golden games, for every engine: a game's ``make_golden`` module names its cases; this module plays, records,
writes and replays them.

Each file holds a table's arguments, the simulation's command log (``["cmd", ms, seat, command]`` and
``["tick", ms]`` entries, one a line, so that a change shows as a readable diff) and the final ``digest()``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from server.games import Game, new_game
from server.cli.simulate import Simulation, simulate, summary


def dumps(doc: dict[str, Any]) -> str:
    """JSON with one log entry a line."""
    head = {k: v for k, v in doc.items() if k != "log"}
    lines = [json.dumps(entry, sort_keys=True, separators=(",", ":")) for entry in doc["log"]]
    text = json.dumps(head, sort_keys=True, indent=1)[:-2]  # drop the closing "\n}"
    return text + ',\n "log": [\n' + ",\n".join(lines) + "\n ]\n}\n"


@dataclass(frozen=True)
class Goldens:
    game: str
    directory: Path
    cases: dict[str, dict[str, Any]]  # name -> the arguments of ``server.cli.simulate.simulate``
    result_keys: tuple[str, ...]  # the result's fields stored beside the digest

    def play(self, case: dict[str, Any]) -> Simulation:
        return simulate(case["players"], case["seed"], case["kind"], case["options"], case["time_scale"],
                        game=self.game)

    def record(self, name: str) -> dict[str, Any]:
        case = self.cases[name]
        sim = self.play(case)
        out = summary(sim)
        return {"name": name, "game": self.game, **case, "result": {k: out[k] for k in self.result_keys},
                "digest": out["digest"], "log": sim.log}

    def path_of(self, name: str) -> Path:
        return self.directory / f"{name}.json"

    def load(self, name: str) -> dict[str, Any]:
        return json.loads(self.path_of(name).read_text(encoding="utf-8"))

    def replay(self, doc: dict[str, Any]) -> Game:
        """The engine after the stored log, straight through the engine's own ``advance`` and ``apply``."""
        g = new_game(self.game, doc["players"], doc["seed"], doc["options"], doc["time_scale"])
        for entry in doc["log"]:
            g.advance(entry[1])
            if entry[0] == "cmd":
                g.apply(entry[2], entry[3], entry[1])
        return g

    def write_all(self) -> None:
        self.directory.mkdir(exist_ok=True)
        for name in self.cases:
            doc = self.record(name)
            text = dumps(doc)
            assert json.loads(text) == json.loads(json.dumps(doc))
            self.path_of(name).write_text(text, encoding="utf-8")
            print(f"{self.path_of(name)}: {len(doc['log'])} entries, {len(text) // 1024} KB, "
                  f"digest {doc['digest'][:12]}")
