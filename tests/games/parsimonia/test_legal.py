"""``legal_actions`` agrees with the engine: every template is accepted at its range ends (and middle),
and every command no template covers is refused, leaving the state unchanged."""

from __future__ import annotations

import copy
from typing import Any, Callable

import pytest

from protocol.schema import SchemaError
from server.games.base import IllegalAction
from server.games.parsimonia import Config, Parsimonia

from .conftest import MIN, R, T, Table, cover, make_table, set_hands, start_turns, tiny_deck


def _is_range(v: Any) -> bool:
    return isinstance(v, dict) and set(v) == {"min", "max"}


def matches(template: dict[str, Any], command: dict[str, Any]) -> bool:
    if template.keys() != command.keys():
        return False
    for key, want in template.items():
        got = command[key]
        if _is_range(want):
            if isinstance(got, bool) or not isinstance(got, int) or not want["min"] <= got <= want["max"]:
                return False
        elif type(want) is not type(got) or want != got:
            return False
    return True


def expand(template: dict[str, Any]) -> list[dict[str, Any]]:
    """The template at each end of its range, and in the middle."""
    ranges = [k for k, v in template.items() if _is_range(v)]
    if not ranges:
        return [dict(template)]
    assert len(ranges) == 1, template
    key = ranges[0]
    lo, hi = template[key]["min"], template[key]["max"]
    assert lo <= hi, template
    return [{**template, key: v} for v in sorted({lo, (lo + hi) // 2, hi})]


def candidates(g: Parsimonia, seat: int) -> list[dict[str, Any]]:
    """Commands of every type, with arguments around every boundary that matters."""
    out: list[dict[str, Any]] = []
    dollars, free, bank = g.dollars[seat], g.free_dollars(seat), g.cfg.bank
    for aid in list(g.auctions) + [999]:
        a = g.auctions.get(aid)
        amounts = {1, dollars, dollars + 1, free, free + 1}
        if a is not None:
            amounts |= {a.min_bid() - 1, a.min_bid(), free + a.bids.get(seat, 0), free + a.bids.get(seat, 0) + 1}
        out += [{"type": "bid", "auction": aid, "amount": x} for x in sorted(amounts) if x >= 1]
        out += [{"type": "close", "auction": aid, "winner": w} for w in [None, *range(g.n)]]
    for to in range(g.n + 1):
        out += [{"type": "give", "to": to, "amount": x} for x in sorted({1, free, free + 1}) if x >= 1]
    out += [{"type": "vote_end", "agree": True}, {"type": "vote_end", "agree": False}]
    out += [{"type": "quit"}, {"type": "ready"}, {"type": "end_turn"}]
    for card in g.cards:
        out.append({"type": "auction", "card": card, "start_price": 0})
        out.append({"type": "company_auction", "card": card, "start_price": 0})
        out.append({"type": "pair", "resource": card})
        out.append({"type": "place", "resource": card})
    for card in [*g.bought, min(g.cards)]:
        out += [{"type": "place_bought", "card": card, "resource": r} for r in g.cards]
    for card in g.hands[seat]:
        out += [{"type": "auction", "card": card, "start_price": p} for p in (bank, bank + 1)]
    for card in g.company_cards:
        out += [{"type": "company_auction", "card": card, "start_price": p} for p in (bank, bank + 1)]
    out += [{"type": "auction_drawn", "start_price": p} for p in (0, bank, bank + 1)]
    return out


def check_agreement(g: Parsimonia) -> int:
    """For every seat: templates accepted, everything else refused. Returns how many commands ran."""
    now = g.now
    count = 0
    for seat in range(g.n):
        templates = g.legal_actions(seat)
        for template in templates:
            for command in expand(template):
                trial = copy.deepcopy(g)
                trial.apply(seat, command, now)  # raises if the engine refuses a legal command
                count += 1
        for command in candidates(g, seat):
            if any(matches(t, command) for t in templates):
                copy.deepcopy(g).apply(seat, command, now)
            else:
                before = g.snapshot()
                with pytest.raises((IllegalAction, SchemaError)):
                    g.apply(seat, command, now)
                assert g.snapshot() == before, command
            count += 1
    return count


# ------------------------------------------------------------------ the states


def opening_fresh() -> Table:
    return make_table(3)


def opening_with_auctions_and_bids() -> Table:
    t = make_table(3)
    g = t.g
    t.at(14 * MIN + 40_000)
    a = t.open_auction(0, g.hands[0][0], 10)
    b = t.open_auction(1, g.hands[1][0], 300)
    t.bid(1, a, 400)
    t.bid(2, a, 500)
    t.bid(2, b, 301)  # seat 2: 801 committed, 199 free
    t.do(0, "ready")
    t.do(1, "vote_end", agree=True)
    return t


def opening_closing() -> Table:
    t = opening_with_auctions_and_bids()
    t.at(15 * MIN)
    assert t.g.phase == "opening_closing"
    return t


def decide_step() -> Table:
    t = make_table(3)
    start_turns(t, {0: [R(2, 0), R(2, 3), R(3, 0)], 1: [R(2, 1), R(4, 0)]}, draws=(T(2, 2),))
    return t


def drawn_auction_with_bids() -> Table:
    t = make_table(3)
    cover(t.g, R(2, 5), T(2, 5))
    start_turns(t, {0: [R(3, 0)], 1: [R(2, 1), R(4, 0)], 2: [R(2, 5), R(4, 1)]}, draws=(T(2, 2),), rest=None)
    a = t.auction_drawn(0, 50)
    t.bid(1, a, 60)
    return t


def company_tourists_auctions_after_a_lapse() -> Table:
    t = make_table(3)
    g = t.g
    set_hands(g, {0: [R(3, 0), R(2, 7)], 1: [R(2, 1), R(4, 0)], 2: [R(2, 5), R(4, 1)]}, rest=None)
    for card in (T(2, 3), T(2, 4)):
        g.deck.remove(card)
        g.company_cards.append(card)
    start_turns(t, draws=(T(3, 2),))
    t.do(0, "pair", resource=R(3, 0))
    a = t.company_auction(0, T(2, 3), 0)
    t.bid(1, a, 60)
    t.wait(1000)
    b = t.company_auction(0, T(2, 4), 0)
    t.bid(2, b, 20)
    t.bid(1, b, 70)
    t.at(30_000)  # a goes to seat 1, whose bid for b lapses: seat 2's stands again
    assert g.auctions[b].bids == {2: 20} and g.auctions[b].min_bid() == 21
    return t


def bought_card_owed() -> Table:
    t = make_table(3)
    start_turns(t, {0: [R(3, 0)], 1: [R(2, 0), R(2, 3), R(4, 0)]}, draws=(T(2, 1),))
    a = t.auction_drawn(0, 5)
    t.bid(1, a, 30)
    t.close(0, a, 1)
    assert t.g.bought
    return t


def place_step() -> Table:
    t = decide_step()
    a = t.auction_drawn(0, 0)
    t.close(0, a, None)
    assert t.g.step == "place"
    return t


def main_step_with_company_cards_and_own_auction() -> Table:
    t = make_table(4)
    set_hands(t.g, {0: [R(1, 0), R(5, 0), R(5, 1)]})
    t.do(3, "quit")
    start_turns(t, draws=(T(1, 1),))
    t.do(0, "pair", resource=R(1, 0))
    t.at(4 * MIN + 45_000)
    a = t.open_auction(0, R(5, 0), 100)
    t.bid(2, a, 1000)
    c = t.company_auction(0, t.g.company_cards[0], 0)
    t.bid(1, c, 3)
    return t


def turn_over_with_auction() -> Table:
    t = main_step_with_company_cards_and_own_auction()
    t.at(5 * MIN)
    assert t.g.turn_over
    return t


def no_draw_main_step() -> Table:
    """Two players, four resource cards, one tourists card: seat 1's turn finds deck and aside empty."""
    t = Table(Parsimonia(2, 5, Config(deck=tiny_deck([1, 1, 1, 1], [1]))))
    t.finish_opening()
    t.do(0, "pair", resource=t.g.hands[0][0])
    t.do(0, "end_turn")
    assert t.g.current == 1 and t.g.step == "main" and t.g.drawn is None
    return t


def game_over() -> Table:
    t = opening_with_auctions_and_bids()
    for s in range(3):
        if s not in t.g.end_votes:
            t.do(s, "vote_end", agree=True)
    assert t.g.over
    return t


STATES: list[Callable[[], Table]] = [
    opening_fresh,
    opening_with_auctions_and_bids,
    opening_closing,
    decide_step,
    drawn_auction_with_bids,
    company_tourists_auctions_after_a_lapse,
    bought_card_owed,
    place_step,
    main_step_with_company_cards_and_own_auction,
    turn_over_with_auction,
    game_over,
]


@pytest.mark.parametrize("state", STATES, ids=lambda f: f.__name__)
def test_legal_templates_accepted_and_all_else_refused(state: Callable[[], Table]) -> None:
    t = state()
    assert check_agreement(t.g) > 100


def test_no_legal_actions_for_seats_not_at_table_or_gone() -> None:
    t = make_table(3)
    t.do(1, "quit")
    assert t.g.legal_actions(1) == [] and t.g.legal_actions(3) == [] and t.g.legal_actions(-1) == []


def test_turn_commands_offered_only_to_current_player_in_their_step() -> None:
    t = decide_step()
    g = t.g
    kinds = lambda seat: {a["type"] for a in g.legal_actions(seat)}  # noqa: E731
    assert {"pair", "auction_drawn"} <= kinds(0) and not {"end_turn", "auction", "place"} & kinds(0)
    assert not {"pair", "auction_drawn", "end_turn", "auction"} & kinds(1)
    pairs = [a["resource"] for a in g.legal_actions(0) if a["type"] == "pair"]
    assert pairs == [R(2, 0), R(2, 3)]


def test_bid_and_give_ranges_top_out_at_uncommitted_dollars() -> None:
    t = opening_with_auctions_and_bids()
    g = t.g
    a, b = sorted(g.auctions)
    legal = g.legal_actions(2)
    [bid_a] = [x for x in legal if x["type"] == "bid" and x["auction"] == a]
    assert bid_a["amount"] == {"min": 501, "max": 199 + 500}  # raising a bid frees the old one
    assert [x["amount"] for x in legal if x["type"] == "give"] == [{"min": 1, "max": 199}] * 2
    [bid_a1] = [x for x in g.legal_actions(1) if x["type"] == "bid"]
    assert bid_a1 == {"type": "bid", "auction": a, "amount": {"min": 501, "max": 1000}}


def test_no_draw_step_offers_end_turn() -> None:
    t = no_draw_main_step()
    assert {"type": "end_turn"} in t.g.legal_actions(1)
    check_agreement(t.g)


def test_repeating_standing_vote_refused() -> None:
    """``legal_actions`` offers only the change of one's vote; repeating it is refused, state unchanged."""
    t = make_table(3)
    g = t.g
    assert {"type": "vote_end", "agree": False} not in g.legal_actions(0)
    t.refuse(0, "vote_unchanged", "vote_end", agree=False)
    t.do(1, "vote_end", agree=True)
    t.refuse(1, "vote_unchanged", "vote_end", agree=True)
    assert g.end_votes == {1}
    assert {"type": "vote_end", "agree": False} in g.legal_actions(1)
    assert {"type": "vote_end", "agree": True} not in g.legal_actions(1)
