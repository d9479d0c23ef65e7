"""A turn's draw: money and merchants kept, the first player, stowing."""

from __future__ import annotations

from .conftest import ARB, BYZ, RUS, WEST, G, K, M, make_game, start, Table

SHIP0 = [G(WEST, 3), G(WEST, 4), G(WEST, 5), G(WEST, 6), G(WEST, 7)]
WH0 = [G(WEST, 8), G(WEST, 9)]


def drawn(card, ship=SHIP0, warehouse=WH0):
    return start(3, {0: list(ship)}, {0: list(warehouse)}, (card,))


def test_drawn_money_is_seen_by_its_drawer_alone():
    t = drawn(M(RUS, 5))
    event = t.last("card_drawn")
    assert event.audience == {0} and event.data["card"] == M(RUS, 5)
    assert "card" not in event.wire_for(1) and "card" not in event.wire_for(None)
    assert t.g.step == "keep" and t.g.private_view(0)["drawn"] == M(RUS, 5) and t.g.private_view(1)["drawn"] is None


def test_drawn_money_kept_in_the_warehouse():
    t = drawn(M(RUS, 5))
    t.do(0, "keep", where="warehouse", out=None)
    assert M(RUS, 5) in t.g.warehouses[0] and t.last("kept").audience is None and t.g.current == 1


def test_drawn_money_kept_in_the_ship_moves_a_ship_card_to_the_warehouse_unseen():
    t = drawn(M(RUS, 5))
    t.do(0, "keep", where="ship", out=G(WEST, 3))
    assert M(RUS, 5) in t.g.ships[0] and G(WEST, 3) in t.g.warehouses[0]
    kept = t.last("kept")
    assert kept.audience == {0} and kept.redacted == {"seat": 0, "where": "ship", "out": G(WEST, 3)}


def test_keep_refusals():
    t = drawn(K(ARB))
    t.refuse(0, "no_swap", "keep", where="warehouse", out=G(WEST, 3))
    t.refuse(0, "not_in_ship", "keep", where="ship", out=None)
    t.refuse(0, "not_in_ship", "keep", where="ship", out=G(WEST, 8))
    t.refuse(1, "not_your_turn", "keep", where="warehouse", out=None)
    t.refuse(0, "wrong_step", "pass")


def test_by_default_a_drawn_card_goes_to_the_warehouse():
    t = drawn(K(ARB))
    t.timeout("decide")
    assert K(ARB) in t.g.warehouses[0]


def test_a_drawn_card_goes_into_a_ship_that_is_not_full_at_once():
    t = drawn(M(BYZ, 1), ship=[G(WEST, 3), G(WEST, 4)], warehouse=[])
    assert M(BYZ, 1) in t.g.ships[0] and t.g.step != "keep" and t.g.current == 1


def test_the_first_player_is_drawn_by_lot_and_play_goes_clockwise():
    firsts = {make_game(4, seed).first for seed in range(40)}
    assert firsts == {0, 1, 2, 3}
    t = drawn(M(RUS, 5))
    t.do(0, "keep", where="warehouse", out=None)
    assert t.g.current == 1 and t.g.turn == 2


def test_stowing_may_swap_a_ship_card_for_a_warehouse_card():
    t = start(3, {1: [G(BYZ, 3), G(BYZ, 4), G(BYZ, 5), G(BYZ, 6), G(BYZ, 7)]}, {1: [G(BYZ, 8), M(BYZ, 1)]},
              (G(RUS, 9),))
    t.offer(1, G(BYZ, 7))
    t.offer(2, t.g.offerable(2, G(RUS, 9))[0])
    assert 1 in t.g.stowing
    t.do(1, "unload", card=G(BYZ, 3))
    t.refuse(1, "not_in_warehouse", "load", card=G(RUS, 3))
    t.do(1, "load", card=G(BYZ, 8))
    t.do(1, "load", card=M(BYZ, 1))
    assert 1 not in t.g.stowing and len(t.g.ships[1]) == 5
    t.refuse(1, "not_stowing", "unload", card=G(BYZ, 4))


def test_at_the_stow_deadline_the_cards_missed_least_are_loaded():
    t = start(3, {1: [G(BYZ, 3), G(BYZ, 4), G(BYZ, 5), G(BYZ, 6), G(BYZ, 7)]}, {1: [G(BYZ, 8), M(BYZ, 1)]},
              (G(RUS, 9),))
    t.offer(1, G(BYZ, 7))
    t.offer(2, t.g.offerable(2, G(RUS, 9))[0])
    assert 1 in t.g.stowing
    t.timeout("stow")
    assert M(BYZ, 1) in t.g.ships[1] and t.g.stowing == set()


def test_a_ship_whose_warehouse_holds_just_what_is_missing_is_stowed_at_once():
    t = start(3, {1: [G(BYZ, 3), G(BYZ, 4), G(BYZ, 5), G(BYZ, 6), G(BYZ, 7)]}, {1: []}, (G(RUS, 9),))
    t.offer(1, G(BYZ, 3))
    t.offer(2, t.g.offerable(2, G(RUS, 9))[-1])
    assert 1 not in t.g.stowing and len(t.g.ships[1]) == t.g.ship_target(1)


def test_no_table_waits_without_a_clock():
    t = Table(make_game(3))
    assert t.g.next_deadline() is not None
