"""Kupcy in words, for a spectator's screen (``watch``), ``replay`` and a bot's progress lines.

* ``describe(event, static, names)``: one line for an event, or None to let the caller print its generic
  form. ``static`` is the table's unchanging part (``cards``: ``[id, kind, origin, value, charter]`` each);
  ``names`` the players' names by seat. A sealed event a seat may not see reaches it with the seat alone.
* ``summary(view, names)``: a few lines giving the state of a game from its public view; the first is a
  headline (phase, turn, whose move, scores) fit for one line of progress per turn. Cards are named when the
  view carries the static part's ``cards`` (a bot's view does; ``watch`` adds them), else by id.
* ``started_at(view, static)``: the server time the game began, or None (Kupcy has no game clock).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clients.words.common import clock, seat_name

ORIGINS = {"rus": "Rus", "byzantium": "Byzantine", "arabia": "Arabian", "west": "Western"}
COINS = {"rus": "grivna", "byzantium": "solidus", "arabia": "dirham", "west": "thaler"}  # as the page says
PHASES = {"split": "the opening split", "turns": "turns", "final": "the last round", "over": "over"}
STEPS = {"keep": "to keep the drawn card", "pay": "to pay a charter", "trade": "sealed offers",
         "stow": "stowing ships", "sell": "to sell or pass"}
NO_SALE = {"passed": "passes", "timeout": "lets the time run out", "no_goods": "has no goods to sell"}


_name = seat_name


def card_name(static: Mapping[str, Any], card: int | None) -> str:
    for cid, kind, origin, value, charter in static.get("cards", ()):
        if cid == card:
            if kind == "charter":
                return f"the {str(charter).replace('_', ' ')} charter"
            if kind == "merchant":
                return f"the {ORIGINS.get(origin, origin)} merchant"
            if kind == "money":
                return f"{ORIGINS.get(origin, origin)} {COINS.get(origin, 'money')} {value}"
            return f"{ORIGINS.get(origin, origin)} {kind} {value}"
    return f"card {card}"


def _cards(static: Mapping[str, Any], cards: list[int]) -> str:
    return ", ".join(card_name(static, c) for c in cards) or "nothing"


def describe(event: Mapping[str, Any], static: Mapping[str, Any], names: Sequence[str]) -> str | None:
    kind, at = event.get("type"), event.get("at", 0)
    seat = _name(names, event.get("seat"))
    if kind == "split_chosen":
        return f"{seat} splits their hand" + (f": {_cards(static, event['choice'])} to the warehouse"
                                              if "choice" in event else "")
    if kind == "split_revealed":
        return "the warehouses open: " + "; ".join(
            f"{_name(names, s)} {_cards(static, w)}" for s, w in enumerate(event["warehouses"]))
    if kind == "card_drawn":
        drawn = card_name(static, event["card"]) if "card" in event else "a card"
        return f"turn {event['turn']}: {seat} draws {drawn} ({event['deck_count']} left)"
    if kind == "kept":
        if "card" not in event:
            return f"{seat} puts the drawn card in the ship" + (
                f", moving {card_name(static, event['out'])} to the warehouse" if event.get("out") is not None else "")
        swap = f", moving {card_name(static, event['out'])} out" if event.get("out") is not None else ""
        return f"{seat} puts {card_name(static, event['card'])} in the {event['where']}{swap}"
    if kind == "charter":
        lost = f": {_cards(static, event['lost'])} lost" if event["lost"] else ""
        owed = event.get("owed")
        due = ""
        if owed:
            due = f"; owes {owed['cards']} card(s)" if owed["cards"] is not None else f"; owes {owed['worth']} in value"
        return f"{seat} suffers {card_name(static, event['card'])} ({event['zone']}){lost}{due}"
    if kind == "paid":
        return f"{seat} pays {card_name(static, event['card'])}"
    if kind == "trade_opened":
        bidders = ", ".join(_name(names, s) for s in event["seats"]) or "nobody can bid"
        return (f"{_name(names, event['seller'])} puts {card_name(static, event['goods'])} on the market; "
                f"offers from {bidders} within {clock(event['deadline'] - at)}")
    if kind == "offer_made":
        return f"{seat} makes a sealed offer" + (f": {card_name(static, event['choice'])}" if "choice" in event else "")
    if kind == "offers_revealed":
        offers = "; ".join(f"{_name(names, s)} {card_name(static, c)}" for s, c in event["offers"])
        return f"offers revealed (round {event['round']}): {offers}"
    if kind == "rebid":
        return f"a tie: {', '.join(_name(names, s) for s in event['seats'])} offer again (round {event['round']})"
    if kind == "trade_closed":
        taker = _name(names, event["winner"]) if event["winner"] is not None else "nobody; it stays with the seller"
        joker = f"; {_cards(static, event['to_deck'])} back into the deck" if event["to_deck"] else ""
        return (f"{card_name(static, event['goods'])} goes to {taker}; {_name(names, event['seller'])} takes "
                f"{_cards(static, event['to_seller'])}{joker}")
    if kind == "stow_owed":
        return f"{', '.join(_name(names, s) for s in event['seats'])} stow their ships ({clock(event['deadline'] - at)})"
    if kind in ("loaded", "unloaded"):
        return f"{seat} {kind} {card_name(static, event['card'])}"
    if kind == "last_round":
        return "the deck is empty: the last round, one operation each, " + ", ".join(
            _name(names, s) for s in event["seats"])
    if kind == "sale_owed":
        return f"{seat} may sell a goods card ({clock(event['deadline'] - at)})"
    if kind == "sale":
        return f"{seat} sells {card_name(static, event['card'])}"
    if kind == "no_sale":
        return f"{seat} {NO_SALE.get(event['reason'], event['reason'])}"
    if kind == "game_ended":
        winners = " and ".join(_name(names, w) for w in event["winners"]) or "nobody"
        scores = ", ".join(f"{_name(names, s)} {v}" for s, v in enumerate(event["scores"]))
        return f"game over: {winners} won; {scores}"
    return None


def started_at(view: Mapping[str, Any], static: Mapping[str, Any]) -> int | None:
    return None


def summary(view: Mapping[str, Any], names: Sequence[str]) -> list[str]:
    phase, players = view.get("phase"), view.get("players", [])
    head = PHASES.get(phase, phase) if isinstance(phase, str) else str(phase)
    if phase in ("turns", "final"):
        head = f"turn {view['turn']}, {_name(names, view['current'])}" + (
            f" {STEPS[view['step']]}" if view.get("step") in STEPS else "") + f" ({head})"
    lines = [f"{head}: deck {view.get('deck_count', 0)}"]
    for p in players:
        lines.append(f"  {_name(names, p['seat'])}: ship {p['ship_count']}, warehouse {len(p['warehouse'])}, "
                     f"{p['owned']} card(s)")
    market = view.get("market")
    if market:
        lines.append(f"  market: {card_name(view, market['goods'])} from {_name(names, market['seller'])}, round "
                     f"{market['round']}, {len(market['chosen'])}/{len(market['seats'])} offers in")
    result = view.get("result")
    if result:
        lines.append("  scores: " + ", ".join(f"{_name(names, s)} {v}" for s, v in enumerate(result["scores"])))
    return lines
