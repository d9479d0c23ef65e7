"""Parsimonia in words, for a spectator's screen (``parsimonia watch``) and a bot's progress lines.

* ``describe(event, static, names)``: one line for an event, or None to let the caller print its
  generic form. ``static`` is the table's unchanging part, ``{"cards": [[id, kind, type, profit], ...],
  "config": {...}}``; ``names`` the players' names by seat.
* ``summary(view, names)``: a few lines giving the state of a game from its public view; the first is
  a headline (phase, turn, whose move, dollars) fit for one line of progress per turn.
* ``started_at(view, static)``: the server time the game began, read from its clock, or None.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clients.words.common import clock, seat_name

AUCTION_CLOSE_REASONS = {"seller": "by the seller", "quiet": "no bid for a while", "quit": "the seller quit",
                         "game_over": "the game ended"}
PHASES = {"opening": "opening", "opening_closing": "opening (closing auctions)", "turns": "turns", "over": "over"}
STEPS = {"decide": "to pair or auction the drawn card", "drawn_auction": "auctioning the drawn card",
         "place": "to place the unsold card", "main": "free to auction or end the turn"}


def _name(names: Sequence[str], seat: int | None) -> str:
    return seat_name(names, seat, none="the Company")


def _card(static: Mapping[str, Any], card: int | None) -> str:
    for cid, kind, kind_type, profit in static.get("cards", ()):
        if cid == card:
            return f"type-{kind_type} {kind} (${profit})"
    return f"card {card}"


def _lot(static: Mapping[str, Any], lot: list[int]) -> str:
    return " + ".join(_card(static, c) for c in lot)


def _money(names: Sequence[str], dollars: list[int]) -> str:
    return ", ".join(f"{_name(names, s)} ${d}" for s, d in enumerate(dollars))


def describe(event: Mapping[str, Any], static: Mapping[str, Any], names: Sequence[str]) -> str | None:
    kind, at = event.get("type"), event.get("at", 0)
    seat = _name(names, event.get("seat"))
    if kind == "opening_ended":
        why = "everyone is ready" if event["reason"] == "ready" else "its time is up"
        still = len(event.get("open_auctions", []))
        return f"the opening ends: {why}" + (f"; {still} auction(s) still open" if still else "")
    if kind == "turn_started":
        return f"turn {event['turn']}: {seat} to play, turn ends in {clock(event['deadline'] - at)}"
    if kind == "deck_reshuffled":
        return f"the aside pile is shuffled into the deck: {event['count']} cards"
    if kind == "card_drawn":
        return f"{seat} draws {_card(static, event['card'])}"
    if kind == "no_card_drawn":
        return f"{seat} draws nothing: the deck is empty"
    if kind == "auction_opened":
        a = event["auction"]
        rule = "seller picks the winner" if a.get("rule") == "seller_picks" else "highest bid wins"
        return (f"{_name(names, a['seller'])} opens auction {a['id']} for {_lot(static, a['lot'])}, bids from "
                f"${a['start_price']} ({rule}; it closes after {clock(a['closes_at'] - at)} with no bid)")
    if kind == "bid":
        return f"auction {event['auction']}: {seat} bids ${event['amount']}"
    if kind == "auction_closed":
        why = AUCTION_CLOSE_REASONS.get(event["reason"], event["reason"])
        if event["outcome"] == "sold" and event["price"] == 0:
            return f"auction {event['auction']}: {_name(names, event['winner'])} takes it for free ({why})"
        if event["outcome"] == "sold":
            return f"auction {event['auction']}: sold to {_name(names, event['winner'])} for ${event['price']} ({why})"
        return f"auction {event['auction']}: {event['outcome'].replace('_', ' ')} ({why})"
    if kind == "card_placed":
        how = {"paired": "pairs", "bought": "places the bought", "no_sale": "places the unsold"}[event["reason"]]
        paid = f"${event['paid']}" + (f" of ${event['profit']} due" if event["paid"] != event["profit"] else "")
        return (f"{seat} {how} {_card(static, event['tourist'])} on {_card(static, event['resource'])}"
                + (f": profit {paid}" if event["profit"] else ""))
    if kind == "placement_owed":
        return (f"{seat} owes a choice: where {_card(static, event['card'])} goes "
                f"(the most profitable card in {clock(event['deadline'] - at)})")
    if kind == "bid_lapsed":
        return (f"auction {event['auction']}: {seat}'s bid of ${event['amount']} lapses (no free card of that "
                f"type any more); the next bid must be ${event['min_bid']}")
    if kind == "card_aside":
        return f"{_card(static, event['card'])} goes aside ({seat})"
    if kind == "tourists_cleared":
        return f"{seat}'s tourists leave: {len(event['cards'])} card(s) aside"
    if kind == "turn_ended":
        why = {"ended": "", "timeout": " (time is up)", "quit": " (quit)"}.get(event["reason"], "")
        return f"{seat}'s turn {event['turn']} ends{why}"
    if kind == "gift":
        return f"{seat} gives {_name(names, event['to'])} ${event['amount']}"
    if kind == "ready":
        return f"{seat} is done auctioning"
    if kind == "end_vote":
        return f"{seat} {'votes to end the game' if event['agree'] else 'withdraws the vote to end'}"
    if kind == "player_quit":
        return f"{seat} quits the game: ${event['dollars']} and {len(event['cards'])} card(s) go to the Company"
    if kind == "game_ended":
        why = {"clock": "the game clock ran out", "agreement": "everyone agreed",
               "last_player": "one player is left"}.get(event["reason"], event["reason"])
        winners = " and ".join(_name(names, w) for w in event["winners"]) or "nobody"
        return f"game over, {why}: {winners} won; {_money(names, event['dollars'])}"
    return None


def score(value: int) -> str:
    """A seat's score as people read it: dollars."""
    return f"${value}"


def started_at(view: Mapping[str, Any], static: Mapping[str, Any]) -> int | None:
    deadline, game_ms = (view.get("deadlines") or {}).get("game"), static.get("config", {}).get("game_ms")
    return None if deadline is None or game_ms is None else deadline - game_ms


def summary(view: Mapping[str, Any], names: Sequence[str]) -> list[str]:
    now, deadlines = view.get("now", 0), view.get("deadlines") or {}
    phase, players = view.get("phase"), view.get("players", [])
    head = f"turn {view['turn']}, {_name(names, view['current'])} to play" if phase == "turns" \
        else PHASES.get(phase, phase) if isinstance(phase, str) else str(phase)
    clock_name = "opening" if deadlines.get("opening") is not None else "game"
    if deadlines.get(clock_name) is not None:
        head += f", {clock_name} ends in {clock(deadlines[clock_name] - now)}"
    lines = [head + ": " + _money(names, [p["dollars"] for p in players])]
    if phase == "turns" and deadlines.get("turn") is not None:
        lines.append(f"  {_name(names, view['current'])}: {STEPS.get(view['step'], view['step'])}; "
                     f"the turn ends in {clock(deadlines['turn'] - now)}")
    for p in players:
        paired = sum(1 for _, tourist in p["resources"] if tourist is not None)
        status = "" if p["active"] else " (quit)"
        committed = f", ${p['committed']} bid" if p["committed"] else ""
        lines.append(f"  {_name(names, p['seat'])}{status}: ${p['dollars']}{committed}, "
                     f"{len(p['resources'])} resource(s), {paired} with tourists")
    company = view.get("company")
    if company:
        lines.append(f"  the Company: ${company['dollars']}, {len(company['cards'])} card(s); "
                     f"deck {view.get('deck_count', 0)}, aside {view.get('aside_count', 0)}")
    for a in view.get("auctions", []):
        high = f"high ${a['high']} by {_name(names, a['high_bidder'])}" if a.get("high_bidder") is not None \
            else f"from ${a['start_price']}"
        lines.append(f"  auction {a['id']} by {_name(names, a['seller'])} ({a.get('lot_kind', 'lot')}): {high}, "
                     f"closes in {clock(a['closes_at'] - now)}")
    return lines
