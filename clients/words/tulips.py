"""Gift of Tulips in words, for a spectator's screen (``parsimonia watch``), replays and a bot's progress lines.

* ``describe(event, static, names)``: one line for an event, or None to let the caller print its generic form.
  ``static`` is the table's unchanging part (``{"cards": [[id, variety, value, five_six], ...], ...}``);
  ``names`` the players' names by seat. A private event reaches others as ``{"type", "at", "seat"}``: it is
  described without its card.
* ``summary(view, names)``: a few lines giving the state of a game from its public view; the first is a headline
  (turn, whose move, points) fit for one line of progress per turn.
* ``started_at(view, static)``: the server time the game began, or None.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clients.words.common import clock, seat_name

PLACE = {1: "1st", 2: "2nd", 3: "3rd", 4: "4th"}


_name = seat_name


def _card(static: Mapping[str, Any], card: int | None) -> str:
    for cid, variety, value, _ in static.get("cards", ()):
        if cid == card:
            return f"{variety} {value}"
    return f"card {card}"


def _ranking(ranking: list[list[Any]]) -> str:
    return ", ".join(f"{v} {total}" for v, total in ranking)


def _points(names: Sequence[str], points: list[int]) -> str:
    return ", ".join(f"{_name(names, s)} {p}" for s, p in enumerate(points))


def describe(event: Mapping[str, Any], static: Mapping[str, Any], names: Sequence[str]) -> str | None:
    kind, at = event.get("type"), event.get("at", 0)
    seat = _name(names, event.get("seat"))
    if kind == "chosen":
        return f"{seat} puts {_card(static, event['choice'])} in the bouquet" if "choice" in event \
            else f"{seat} has chosen"
    if kind == "setup_revealed":
        shown = ", ".join(f"{_name(names, s)} {_card(static, c)}" for s, c in enumerate(event["bouquets"]))
        return f"the bouquets open with {shown}; {_name(names, event['first'])} starts"
    if kind == "turn_started":
        return f"turn {event['turn']} (round {event['round']}): {seat} to play"
    if kind == "card_drawn":
        card = f" {_card(static, event['card'])}" if "card" in event else " a card"
        return f"{seat} draws{card}, to play in {clock(event['deadline'] - at)}"
    if kind == "kept":
        return f"{seat} keeps {_card(static, event['card'])} ({PLACE[event['place']]}): {event['points']} point(s)"
    if kind == "given":
        return (f"{seat} gives {_card(static, event['card'])} ({PLACE[event['place']]}) to "
                f"{_name(names, event['to'])}: {event['points']} point(s)")
    if kind == "added":
        return f"{seat} adds {_card(static, event['card'])} to the festival: {_ranking(event['ranking'])}"
    if kind == "hidden":
        card = f" {_card(static, event['card'])}" if "card" in event else " a card"
        return f"{seat} puts{card} face down on the Secret Festival"
    if kind == "timed_out":
        return f"{seat}'s time is up: the card is {'kept' if event['action'] == 'keep' else 'added face down'}"
    if kind == "turn_ended":
        return f"{seat}'s turn {event['turn']} ends"
    if kind == "secret_revealed":
        return f"the Secret Festival shows {_card(static, event['card'])}: {_ranking(event['ranking'])}"
    if kind == "majority":
        won = ", ".join(f"{_name(names, s)} {p}" for s, p in event["awards"]) or "nobody"
        return f"{PLACE[event['place']]} place, {event['variety']}: {won}"
    if kind == "game_ended":
        winners = " and ".join(_name(names, w) for w in event["winners"]) or "nobody"
        return f"game over: {winners} won; {_points(names, event['points'])}"
    return None


def started_at(view: Mapping[str, Any], static: Mapping[str, Any]) -> int | None:
    return view.get("started_at")


def summary(view: Mapping[str, Any], names: Sequence[str]) -> list[str]:
    now, deadlines, phase = view.get("now", 0), view.get("deadlines") or {}, view.get("phase")
    players = view.get("players", [])
    if phase == "setup":
        head = f"set-up: {len(view['setup']['chosen'])} of {len(players)} have chosen"
        if deadlines.get("setup") is not None:
            head += f", {clock(deadlines['setup'] - now)} left"
    elif phase == "turns":
        head = f"turn {view['turn']} (round {view['round']}), {_name(names, view['current'])} to play"
        if deadlines.get("action") is not None:
            head += f" in {clock(deadlines['action'] - now)}"
    else:
        head = str(phase)
    lines = [head + ": " + _points(names, [p["points"] for p in players])]
    lines.append(f"  festival: {_ranking(view['festival']['ranking'])}; deck {view.get('deck_count', 0)}, "
                 f"Secret Festival {view.get('secret_count', 0)}")
    for p in players:
        lines.append(f"  {_name(names, p['seat'])}: {p['points']} point(s), {len(p['bouquet'])} tulip(s)")
    return lines
