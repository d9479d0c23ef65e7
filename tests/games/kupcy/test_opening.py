"""The deal (charters returned and replaced) and the sealed, simultaneous split."""

from __future__ import annotations

from .conftest import SEED, Table, make_game


def test_seven_cards_each_and_no_charter_dealt_stays_dealt():
    returned = 0
    for seed in range(20):
        g = make_game(6, seed)
        assert all(len(g.ships[s]) == 7 and not g.warehouses[s] for s in range(6))
        assert not any(g.cards[c].kind == "charter" for ship in g.ships for c in ship)
        assert sum(1 for c in g.deck if g.cards[c].kind == "charter") == 10
        returned += sum(g.returned)
        assert [p["returned"] for p in g.public_view()["players"]] == g.returned
    assert returned > 0


def test_a_split_is_sealed_until_every_player_has_split():
    t = Table(make_game(3))
    hand = sorted(t.g.ships[1])
    [event] = t.do(1, "split", warehouse=hand[:2])
    assert event.audience == {1} and event.data["choice"] == hand[:2] and event.redacted == {"seat": 1}
    view = t.g.public_view()
    assert view["split"]["chosen"] == [1] and all(p["warehouse"] == [] for p in view["players"])
    assert t.g.private_view(1)["sealed"] == hand[:2] and t.g.private_view(0)["sealed"] is None
    t.refuse(1, "already_chosen", "split", warehouse=hand[2:4])
    t.do(0, "split", warehouse=sorted(t.g.ships[0])[:2])
    t.do(2, "split", warehouse=sorted(t.g.ships[2])[-2:])
    revealed = t.last("split_revealed")
    assert revealed.data["warehouses"][1] == hand[:2] and revealed.data["defaulted"] == []
    assert all(len(t.g.ships[s]) == 5 or s == t.g.first for s in range(3))
    assert t.g.phase == "turns" and t.last("card_drawn").data["seat"] == t.g.first


def test_a_split_must_name_two_different_cards_of_the_hand():
    t = Table(make_game(3))
    hand = sorted(t.g.ships[0])
    t.refuse(0, "bad_split", "split", warehouse=hand[:1])
    t.refuse(0, "bad_split", "split", warehouse=[hand[0], hand[0]])
    t.refuse(0, "bad_split", "split", warehouse=[hand[0], sorted(t.g.ships[1])[0]])
    t.refuse(0, "bad_split", "split", warehouse=hand[:3])
    t.refuse(0, "no_trade", "offer", card=hand[0])


def test_at_the_split_deadline_the_cards_missed_least_go_to_the_warehouse():
    t = Table(make_game(3, SEED, decide_ms=5000))
    t.do(0, "split", warehouse=sorted(t.g.ships[0])[:2])
    t.timeout("split")
    revealed = t.last("split_revealed")
    assert revealed.data["defaulted"] == [1, 2]
    for s in (1, 2):
        values = sorted((t.g.cards[c].value for c in revealed.data["warehouses"][s]))
        assert all(t.g.cards[c].priced for c in revealed.data["warehouses"][s])
        assert values[-1] <= min(t.g.cards[c].value for c in t.g.ships[s] if t.g.cards[c].priced) or s == t.g.first


def test_a_split_after_the_split_is_refused():
    t = Table(make_game(3))
    for s in range(3):
        t.do(s, "split", warehouse=sorted(t.g.ships[s])[:2])
    t.refuse(0, "not_splitting", "split", warehouse=sorted(t.g.ships[0])[:2])


def test_turn_commands_during_the_split_are_not_anyones_turn():
    t = Table(make_game(3))
    for seat in range(3):
        t.refuse(seat, "not_your_turn", "pass")
        t.refuse(seat, "not_your_turn", "sell", card=t.g.ships[seat][0])
