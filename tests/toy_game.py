"""A toy game for the tests, registered the way any game is: "highest sealed number wins".

Every seat picks a number 0..100, sealed (the others see only that it has chosen) until all have chosen
or the deadline passes (a seat that has not chosen gets 0); then all are revealed at once and the highest
wins, ties sharing. It exercises what Parsimonia does not: private events with a redacted form, a private
view part, a reveal.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from protocol.schema import Int, Record
from server.games import GAMES, MANIFESTS, Game, IllegalAction, Manifest, Option, Outcome, discover, register
from server.games.manifest import GROUP


class Sealed(Game):
    NAME = "toy-sealed"
    TITLE = "Highest sealed number"
    MIN_SEATS, MAX_SEATS = 2, 6
    COMMANDS = {"choose": Record({"value": Int(0, 100)})}
    OPTIONS = {"choose_ms": Option(Int(1, 10**9), 10_000, "time to choose", duration=True)}

    def __init__(self, players: int, seed: int, choose_ms: int = 10_000, start_ms: int = 0) -> None:
        super().__init__(players, seed, start_ms)
        self.choices: dict[int, int] = {}
        self.revealed = False
        self.timers.set("choose", start_ms + choose_ms)

    @classmethod
    def from_options(cls, players: int, seed: int, options: dict[str, Any], start_ms: int) -> "Sealed":
        return cls(players, seed, options["choose_ms"], start_ms)

    def _choose(self, seat: int, value: int) -> None:
        if self.revealed:
            raise IllegalAction("game_over", "the numbers are revealed")
        if seat in self.choices:
            raise IllegalAction("already_chosen", "you have chosen")
        self.choices[seat] = value
        self._emit("chose", frozenset({seat}), {"seat": seat}, seat=seat, value=value)

    def _deadline(self, key: str) -> None:
        for seat in range(self.n):
            self.choices.setdefault(seat, 0)

    def _settle(self) -> None:
        if not self.revealed and len(self.choices) == self.n:
            self.revealed = True
            self.timers.cancel("choose")
            self._emit("revealed", numbers=[self.choices[s] for s in range(self.n)])

    HANDLERS = {"choose": _choose}
    DEADLINES = {"choose": _deadline}

    def public_view(self) -> dict[str, Any]:
        return {"chosen": sorted(self.choices), "revealed": self.revealed,
                "numbers": [self.choices[s] for s in range(self.n)] if self.revealed else None,
                "deadline": self.timers.get("choose")}

    def private_view(self, seat: int) -> dict[str, Any]:
        return {"mine": self.choices.get(seat)}

    def legal_actions(self, seat: int) -> list[dict[str, Any]]:
        if self.revealed or seat in self.choices:
            return []
        return [{"type": "choose", "value": {"min": 0, "max": 100}}]

    def outcome(self) -> Outcome | None:
        if not self.revealed:
            return None
        scores = tuple(self.choices[s] for s in range(self.n))
        best = max(scores)
        return Outcome("revealed", tuple(s for s in range(self.n) if scores[s] == best), scores)

    def _standing(self) -> Outcome:
        return Outcome(None, (), tuple(0 for _ in range(self.n)))

    def snapshot(self) -> dict[str, Any]:
        return {"choices": sorted(self.choices.items()), "revealed": self.revealed, "timers": self.timers.snapshot()}


MANIFEST = Manifest(Sealed)  # what its entry point names (``installed`` below)


def installed(site: Path, entry: str = "tests.toy_game:MANIFEST") -> Path:
    """The toy game's distribution metadata in ``site``, naming ``entry`` as its game: what pip would write. A
    server with ``site`` on its path has the game, with nothing else changed."""
    info = site / "toy_game-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-game\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{GROUP}]\ntoy-sealed = {entry}\n")
    return site


def install() -> type[Game]:
    """Register the toy game, after the server's own (idempotent): a program's start, as in a test's subprocess."""
    discover()
    if Sealed.NAME not in GAMES:
        register(Sealed)
    return Sealed


@pytest.fixture
def toy() -> Iterator[type[Game]]:
    """The toy game, registered for one test only (other tests see the server's own games)."""
    yield install()
    GAMES.pop(Sealed.NAME, None)
    MANIFESTS.pop(Sealed.NAME, None)
