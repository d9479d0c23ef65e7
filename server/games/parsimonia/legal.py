"""What a seat may send now, as command templates (``{"min": a, "max": b}`` stands for any integer in it).

Every template here is accepted by the engine for every value in its ranges; the property tests hold the
engine to that.
"""

from __future__ import annotations

from protocol.values import LegalAction

from server.games.machines.auction import SELLER_PICKS

from .phases import Phase, Step
from .state import ParsimoniaState


def legal_actions(g: ParsimoniaState, seat: int) -> list[LegalAction]:
    if g.phase == Phase.OVER or not 0 <= seat < g.n or not g.active[seat]:
        return []
    out: list[LegalAction] = []
    closes: list[LegalAction] = []  # the seat's own auctions, offered after every bid
    free = g.free_dollars(seat)
    lone = g.lone_lots
    room: dict[int, bool] = {}  # card type -> whether the seat may take a lone tourists card of it
    for a in g.auctions.values():
        if seat == a.seller:
            if a.rule == SELLER_PICKS:
                closes.append({"type": "close", "auction": a.id, "winner": None})
                closes += [{"type": "close", "auction": a.id, "winner": b} for b in sorted(a.bids)]
            continue
        if lone:
            card_type = lone.get(a.id)
            if card_type is not None:
                if card_type not in room:
                    room[card_type] = g.room_for(seat, card_type) > 0
                if not room[card_type]:
                    continue
        lowest, top = a.min_bid(), free + a.bids.get(seat, 0)
        if lowest <= top:
            out.append({"type": "bid", "auction": a.id, "amount": {"min": lowest, "max": top}})
    out += closes
    for card, buyer in g.bought.items():
        if buyer == seat:
            out += [
                {"type": "place_bought", "card": card, "resource": r}
                for r in g.free_resources(seat, g.cards[card].type)
            ]
    if free >= 1:
        gift = {"min": 1, "max": free}  # one range for every give (as ``price`` below): read it, do not change it
        active = g.active
        out += [{"type": "give", "to": s, "amount": gift} for s in range(g.n) if s != seat and active[s]]
    out.append({"type": "vote_end", "agree": seat not in g.end_votes})
    out.append({"type": "quit"})
    price = {"min": 0, "max": g.cfg.bank}
    if g.phase == Phase.OPENING:
        if seat not in g.ready:
            out.append({"type": "ready"})
        out += [{"type": "auction", "card": c, "start_price": price} for c in g.hands[seat]]
    elif g.phase == Phase.TURNS and g.current == seat and not g.turn_over:
        if g.step == Step.DECIDE:
            assert g.drawn is not None
            out += [{"type": "pair", "resource": r} for r in g.free_resources(seat, g.cards[g.drawn].type)]
            out.append({"type": "auction_drawn", "start_price": price})
        elif g.step == Step.PLACE:
            assert g.drawn is not None
            out += [{"type": "place", "resource": r} for r in g.placement_candidates(seat, g.drawn)]
        elif g.step == Step.MAIN:
            out += [{"type": "auction", "card": c, "start_price": price} for c in g.hands[seat]]
            out += [{"type": "company_auction", "card": c, "start_price": price} for c in g.company_cards]
            out.append({"type": "end_turn"})
    return out
