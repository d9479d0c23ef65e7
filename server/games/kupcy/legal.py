"""What a seat may send now, as command templates (every field concrete: Kupcy has no ranges).

Every template here is accepted by the engine; the property tests hold the engine to that.
"""

from __future__ import annotations

from itertools import combinations

from protocol.values import LegalAction

from .defaults import WAREHOUSE_AT_START
from .phases import Phase, Step
from .state import KupcyState


def legal_actions(g: KupcyState, seat: int) -> list[LegalAction]:
    if g.phase == Phase.OVER or not 0 <= seat < g.n:
        return []
    if g.phase == Phase.SPLIT:
        if not g.split.owes(seat):
            return []
        return [{"type": "split", "warehouse": list(pair)}
                for pair in combinations(sorted(g.ships[seat]), WAREHOUSE_AT_START)]
    out: list[LegalAction] = []
    if g.market is not None and g.market.sealed.owes(seat):
        out += [{"type": "offer", "card": c} for c in g.offerable(seat, g.market.goods)]
    if seat in g.stowing:
        out += [{"type": "load", "card": c} for c in g.warehouses[seat]]  # a stowing ship is under its size
        out += [{"type": "unload", "card": c} for c in g.ships[seat]]
    if g.current == seat:
        if g.step == Step.KEEP:
            out.append({"type": "keep", "where": "warehouse", "out": None})
            out += [{"type": "keep", "where": "ship", "out": c} for c in g.ships[seat]]
        elif g.step == Step.PAY:
            out += [{"type": "pay", "card": c} for c in g.payable()]
        elif g.step == Step.SELL:
            out += [{"type": "sell", "card": c} for c in g.sellable(seat)]
            out.append({"type": "pass"})
    return out
