"""Game-neutral words for people: clock readings, seat names, a result, and one progress line per turn
for a bot. A game's own wording comes from ``clients.games.words_for(game)``."""

from __future__ import annotations

from typing import Any, Callable

from clients.games import words_for
from clients.players.base import Player
from clients.words.common import clock


def seat_names(seats: Any) -> list[str] | None:
    """Names by seat from a list of ``{"seat", "name"}`` (a view's ``seats``, ``game_started``'s), else None.
    A name two seats share gets its seat: "greedy-bot (seat 1)"."""
    if not isinstance(seats, list) or not seats:
        return None
    names = [f"seat {i}" for i in range(max(s["seat"] for s in seats) + 1)]
    for s in seats:
        names[s["seat"]] = s["name"]
    return [f"{name} (seat {i})" if names.count(name) > 1 else name for i, name in enumerate(names)]


def default_names(count: int) -> list[str]:
    return [f"seat {i}" for i in range(count)]


def result_lines(result: dict[str, Any], names: list[str]) -> list[str]:
    """A finished game's result for people: how it ended, then each seat's score, winners marked."""
    scores = result.get("scores", result.get("dollars", []))
    words = words_for(str(result.get("game")))
    as_text = getattr(words, "score", str)
    names = names if len(names) >= len(scores) else default_names(len(scores))
    length = f" after {_length(result['game_ms'])}" if "game_ms" in result else ""
    turns = f", {result['turns']} turns" if "turns" in result else ""
    lines = [f"game over ({result.get('reason')}){length}{turns}"]
    for seat, score in enumerate(scores):
        mark = "  winner" if seat in result.get("winners", []) else ""
        lines.append(f"  {names[seat]}: {as_text(score)}{mark}")
    if "company_dollars" in result:
        lines.append(f"  the Company: ${result['company_dollars']}")
    return lines


def _length(ms: int) -> str:
    """A game's length: m:ss, or seconds to a tenth under a minute (a bot game may take less than one)."""
    return clock(ms) if ms >= 60_000 else f"{ms / 1000:.1f} s"


def headline(view: dict[str, Any]) -> str:
    """One line on where a game stands, from a view."""
    names = seat_names(view.get("seats")) or default_names(len(view.get("players", [])))
    words = words_for(str(view.get("game")))
    if words is None:
        return f"{view.get('phase')}, turn {view.get('turn')}"
    return words.summary(view, names)[0]


class Narrated:
    """A player that prints a line each time the phase or turn changes, then plays as ``player`` does."""

    def __init__(self, player: Player, out: Callable[[str], None] = print) -> None:
        self.player = player
        self.out = out
        self.names: list[str] = []  # by seat, from the last view; this bot's marked
        self._at: tuple[Any, Any] | None = None

    def act(self, view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any] | None:
        self.names = seat_names(view.get("seats")) or default_names(len(view.get("players", [])))
        if isinstance(view.get("seat"), int) and view["seat"] < len(self.names):
            self.names[view["seat"]] += " (this bot)"
        at = (view.get("phase"), view.get("turn"))
        if at != self._at and view.get("phase") not in (None, "waiting"):
            self._at = at
            self.out(headline(view))
        return self.player.act(view, legal)
