"""Gift of Tulips in words: every event of a whole game, as a seat and as a spectator sees it, has its line."""

from __future__ import annotations

from clients.games import words_for
from server.core.session import Session
from server.cli.simulate import simulate

NAMES = ["ada", "bob", "cy"]


def test_every_event_a_game_makes_is_described_for_a_seat_and_for_a_spectator():
    words = words_for("gift-of-tulips")
    sim = simulate(3, seed=4, kind="mix", game="gift-of-tulips")
    static, kinds = sim.match.static, set()
    for _, _, event in sim.match.history:
        if event.type in ("game_started", "result"):
            continue
        for seat in (0, None):
            wire = event.wire_for(seat)
            if wire:
                line = words.describe(wire, static, NAMES)
                assert line, wire
        kinds.add(event.type)
    assert {"chosen", "card_drawn", "kept", "given", "majority", "game_ended"} <= kinds
    view = Session(sim.match).public_view()
    assert words.started_at(view, static) == 0
    lines = words.summary(view, NAMES)
    assert lines[0].startswith("over") and len(lines) == 2 + 3
