"""What a seat may send now, as command templates; every template is accepted as it stands."""

from __future__ import annotations

from protocol.values import LegalAction

from .phases import Action, Phase
from .state import TulipsState


def legal_actions(g: TulipsState, seat: int) -> list[LegalAction]:
    if not 0 <= seat < g.n:
        return []
    if g.phase == Phase.SETUP:
        return [{"type": "choose", "bouquet": c} for c in g.hands[seat]] if g.setup.owes(seat) else []
    if g.phase != Phase.TURNS or g.current != seat or g.drawn is None:
        return []
    out: list[LegalAction] = []
    if Action.KEEP not in g.done:
        out.append({"type": "keep"})
    if Action.GIVE not in g.done:
        out += [{"type": "give", "to": s} for s in range(g.n) if s != seat]
    if Action.ADD not in g.done:
        out += [{"type": "add", "secret": False}, {"type": "add", "secret": True}]
    return out
