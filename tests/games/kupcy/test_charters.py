"""Every charter of the brief, as the project's default effects, and the organiser's replacements."""

from __future__ import annotations

import pytest

from server.games import new_game
from server.games.kupcy import Config
from server.games.kupcy.charters import effects_from

from .conftest import ARB, BYZ, RUS, WEST, C, G, K, M, start

SHIP = [G(WEST, 3), G(WEST, 4), M(WEST, 5), K(WEST), G(ARB, 9)]
WAREHOUSE = [G(RUS, 9), G(RUS, 3), G(BYZ, 8), K(RUS), M(ARB, 2)]


def strike(name: str, ship=SHIP, warehouse=WAREHOUSE, **cfg):
    t = start(3, {0: list(ship)}, {0: list(warehouse)}, (C(name),), **cfg)
    return t, t.last("charter")


def test_robbery_loses_two_random_ship_cards_and_the_ship_is_restored_from_the_warehouse():
    t, charter = strike("robbery")
    assert len(charter.data["lost"]) == 2 and set(charter.data["lost"]) <= set(SHIP)
    assert set(charter.data["lost"]) <= set(t.g.out) and C("robbery") in t.g.out
    assert t.g.stowing == {0} and t.g.step == "stow"
    t.do(0, "load", card=G(RUS, 9))
    t.do(0, "load", card=G(BYZ, 8))
    assert len(t.g.ships[0]) == 5 and t.g.stowing == set()


def test_shipwreck_loses_every_ship_card():
    t, charter = strike("shipwreck", warehouse=[G(RUS, 9), G(RUS, 3)])
    assert charter.data["lost"] == SHIP
    assert sorted(t.g.ships[0]) == sorted([G(RUS, 9), G(RUS, 3)])  # the ship takes all there is, at once
    assert t.g.warehouses[0] == []


def test_duty_pays_one_ship_card_of_the_players_choice():
    t, charter = strike("duty")
    assert charter.data["lost"] == [] and charter.data["owed"]["cards"] == 1 and t.g.step == "pay"
    owed = charter.data["owed"]
    assert owed["card"] == charter.data["card"] and owed["charter"] == charter.data["charter"]  # one naming
    assert t.g.public_view()["debt"] == owed
    t.refuse(0, "cannot_pay", "pay", card=G(RUS, 9))
    t.refuse(1, "not_your_turn", "pay", card=G(WEST, 3))
    t.do(0, "pay", card=G(ARB, 9))
    assert G(ARB, 9) in t.g.out and C("duty") in t.g.out and t.g.step == "stow"


def test_fire_loses_half_the_warehouse_rounded_up_at_random():
    t, charter = strike("fire")
    assert len(charter.data["lost"]) == 3 and set(charter.data["lost"]) <= set(WAREHOUSE)
    assert len(t.g.warehouses[0]) == 2


def test_turmoil_loses_one_random_warehouse_card():
    t, charter = strike("turmoil")
    assert len(charter.data["lost"]) == 1 and charter.data["lost"][0] in WAREHOUSE


def test_invasion_loses_every_warehouse_card_of_the_most_valuable_origin_merchant_included():
    t, charter = strike("invasion")
    assert sorted(charter.data["lost"]) == sorted([G(RUS, 9), G(RUS, 3), K(RUS)])  # Rus 12 beats Byzantium 8


def test_invasion_takes_nothing_from_a_warehouse_of_merchants_alone():
    t, charter = strike("invasion", warehouse=[K(RUS)])
    assert charter.data["lost"] == []


def test_gambling_loss_pays_one_warehouse_card_of_choice_and_by_default_the_card_missed_least():
    t, charter = strike("gambling_loss")
    assert t.g.step == "pay" and t.g.debt.cards == 1
    t.refuse(0, "cannot_pay", "pay", card=G(WEST, 3))  # a ship card
    t.timeout("decide")
    assert t.last("paid").data["card"] == M(ARB, 2)


def test_fraud_pays_two_warehouse_cards_of_choice():
    t, _ = strike("fraud")
    t.do(0, "pay", card=G(RUS, 3))
    assert t.g.step == "pay" and t.g.debt.cards == 1
    t.do(0, "pay", card=M(ARB, 2))
    assert t.g.debt is None and {G(RUS, 3), M(ARB, 2), C("fraud")} <= set(t.g.out)


def test_tithe_pays_warehouse_cards_worth_a_tenth_of_the_warehouse_rounded_up():
    t, charter = strike("tithe")  # 9 + 3 + 8 + 2 = 22: 3 is due
    assert charter.data["owed"]["worth"] == 3
    t.refuse(0, "cannot_pay", "pay", card=K(RUS))  # a merchant has no face value
    t.do(0, "pay", card=M(ARB, 2))
    assert t.g.debt.worth == 1
    t.do(0, "pay", card=G(RUS, 3))
    assert t.g.debt is None


def test_theft_loses_the_most_valuable_warehouse_card():
    t, charter = strike("theft", warehouse=[G(RUS, 3), G(BYZ, 8), G(RUS, 9), K(RUS)])
    assert charter.data["lost"] == [G(RUS, 9)]


def test_a_charter_striking_an_empty_zone_takes_nothing_and_asks_nothing():
    t, charter = strike("fraud", warehouse=[])
    assert charter.data["lost"] == [] and t.g.debt is None and C("fraud") in t.g.out


def test_the_organiser_replaces_a_charters_effect():
    t, charter = strike("theft", charters={"theft": {"zone": "ship", "take": "all"}})
    assert charter.data["lost"] == SHIP and t.g.static()["charters"]["theft"] == {"zone": "ship", "take": "all"}


def start_cfg_effects(**options):
    return Config.from_options({"decide_ms": 1, "bid_ms": 1, "stow_ms": 1, "deck": None, **options})


def test_effects_given_through_options_go_over_the_defaults_by_name():
    cfg = start_cfg_effects(charters={"theft": {"zone": "ship", "take": "highest", "count": 2}})
    assert cfg.effects["theft"].zone == "ship" and cfg.effects["fire"].share == (1, 2)


@pytest.mark.parametrize("effect", [
    {"zone": "ship", "take": "all", "count": 2},
    {"zone": "ship", "take": "worth"},
    {"zone": "hold", "take": "all"},
    {"zone": "ship", "take": "random", "share": [3, 2]},
    {"zone": "ship", "take": "random", "count": 1, "share": [1, 2]},
])
def test_a_bad_effect_is_refused(effect):
    with pytest.raises(ValueError):
        new_game("kupcy", 3, 1, {"charters": {"theft": effect}})


def test_a_deck_charter_without_an_effect_is_refused():
    deck = {"cards": [{"kind": "goods", "origin": "rus", "value": 3}] * 30 + [{"kind": "charter", "charter": "plague"}]}
    with pytest.raises(ValueError, match="plague"):
        new_game("kupcy", 3, 1, {"deck": deck})
    g = new_game("kupcy", 3, 1, {"deck": deck, "charters": {"plague": {"zone": "warehouse", "take": "all"}}})
    assert g.cfg.effects["plague"].take == "all"


def test_the_default_effects_are_the_briefs_ten():
    assert sorted(effects_from(None)) == sorted(["robbery", "shipwreck", "duty", "fire", "turmoil", "invasion",
                                                 "gambling_loss", "fraud", "tithe", "theft"])
