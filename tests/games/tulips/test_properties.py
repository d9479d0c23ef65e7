"""Properties over whole games for 2 to 6 players, with choices and timeouts drawn by hypothesis: every card in
one place, points never falling before the final scoring, equal turns, the Secret Festival never shown to a seat
but its contributor, every legal template accepted, and the game always ending."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from server.games.tulips import Tulips

from .conftest import check_invariants

CARD_FIELDS = ("card", "choice")


def seen_cards(wire: dict) -> set[int]:
    """The card ids an event shows (its ``card`` and ``choice`` fields, the set-up reveal's ``bouquets``)."""
    out = {wire[k] for k in CARD_FIELDS if k in wire}
    return out | set(wire["bouquets"]) if wire.get("type") == "setup_revealed" else out


def view_cards(view: dict) -> set[int]:
    return {c for p in view["players"] for c in p["bouquet"]} | set(view["festival"]["cards"]) | set(view["revealed"])


@settings(max_examples=60, deadline=None)
@given(players=st.integers(2, 6), seed=st.integers(0, 2**32), data=st.data())
def test_whole_games_keep_every_rule(players, seed, data):
    g = Tulips.create(players, seed, {"action_ms": 1000, "choose_ms": 2000})
    t, steps = 0, 0
    points = list(g.points)
    turns = [0] * players
    while not g.over:
        steps += 1
        assert steps < 2000, "the game did not end"
        movers = [s for s in range(players) if g.legal_actions(s)]
        if movers and data.draw(st.integers(0, 9)) > 0:
            seat = data.draw(st.sampled_from(movers))
            command = data.draw(st.sampled_from(g.legal_actions(seat)))
            t += data.draw(st.integers(0, 400))
            events = g.advance(t)
            if command in g.legal_actions(seat):  # else a deadline fired meanwhile
                events += g.apply(seat, command, t)
        else:
            t = g.next_deadline()
            events = g.advance(t)
        check_invariants(g)
        if g.phase != "over":
            assert all(a >= b for a, b in zip(g.points, points)), "points fell before the final scoring"
        points = list(g.points)
        turns = [n + sum(1 for e in events if e.type == "turn_started" and e.data["seat"] == s)
                 for s, n in enumerate(turns)]
        for observer in [None, *range(players)]:
            secret = {c for c, s in g.secret if s != observer}  # never shown to this observer
            unplayed = {g.drawn} if g.drawn is not None and g.current != observer else set()
            for event in events:
                assert not seen_cards(event.wire_for(observer)) & (secret | unplayed), (event, observer)
            view = g.view(observer)
            assert not view_cards(view) & (secret | unplayed | set(g.deck) | set(g.removed))
            if observer is not None:
                assert set(view["my_secret"]) == {c for c, s in g.secret if s == observer}
                assert view["drawn"] is None or observer == g.current
    assert turns == [g.turns_each] * players and g.turn == players * g.turns_each and not g.deck
    assert g.result()["winners"] and len(g.result()["scores"]) == players


@settings(max_examples=25, deadline=None)
@given(players=st.integers(2, 6), seed=st.integers(0, 2**32))
def test_the_same_seed_and_commands_replay_to_the_same_digest(players, seed):
    def play() -> str:
        g = Tulips.create(players, seed, {"action_ms": 500})
        t = 0
        while not g.over:
            movers = [s for s in range(players) if g.legal_actions(s)]
            if (t // 500) % 3 and movers:
                s = movers[t % len(movers)]
                g.advance(t)
                options = g.legal_actions(s)
                g.apply(s, options[t % len(options)], t)
                t += 37
            else:
                t = g.next_deadline()
                g.advance(t)
        return g.digest()

    assert play() == play()
