"""The set-up: the deck by player count, the cards removed unseen, the two festival tulips, the sealed choice."""

from __future__ import annotations

import pytest

from server.games import new_game
from server.games.tulips import Config, Deck, Tulips
from server.games.tulips.festival import Festival

from .conftest import Table, check_invariants, make_game, make_table

TURNS = {2: 12, 3: 10, 4: 7, 5: 7, 6: 6}
REMOVED = {2: 18, 3: 4, 4: 6, 5: 14, 6: 10}


def test_the_rulebook_deck_has_72_base_cards_and_24_for_five_or_six_players():
    deck = Deck.default()
    assert len(deck.cards) == 96 and sum(c.five_six for c in deck.cards) == 24
    assert deck.varieties == ("pink", "blue", "orange", "purple")
    base = [(c.variety, c.value) for c in deck.cards if not c.five_six]
    assert all(base.count((v, x)) == 6 for v in deck.varieties for x in (2, 3, 4))


@pytest.mark.parametrize("players", range(2, 7))
def test_the_5_6_cards_play_only_with_five_or_six_and_the_removed_cards_give_equal_turns(players):
    g = make_game(players)
    in_play = g.cfg.deck.in_play(players)
    assert len(in_play) == (96 if players >= 5 else 72)
    assert len(g.removed) == REMOVED[players]
    assert g.turns_each == TURNS[players] and len(g.deck) == 2 * players * TURNS[players]
    assert all(len(h) == 2 for h in g.hands)


def test_the_festival_opens_with_two_varieties_the_higher_value_first():
    f = Festival()
    f.open((1, "pink", 2), (2, "blue", 4))
    assert f.order == ["blue", "pink"]
    f = Festival()
    f.open((1, "pink", 3), (2, "blue", 3))
    assert f.order == ["pink", "blue"]  # equal values: the first revealed takes 1st


@pytest.mark.parametrize("seed", range(40))
def test_the_two_festival_tulips_are_always_of_different_varieties(seed):
    g = make_game(2, seed)
    a, b = g.festival.cards
    assert g.variety(a) != g.variety(b)
    first = a if g.cards[a].value >= g.cards[b].value else b
    assert g.festival.order == [g.variety(first), g.variety(b if first == a else a)]


def test_a_second_tulip_of_the_same_variety_is_returned_until_another_variety_shows():
    deck = {"cards": [{"variety": "pink", "value": 2, "copies": 60}, {"variety": "blue", "value": 3, "copies": 2}]}
    for seed in range(10):
        g = make_game(2, seed, deck=deck, removed=(0, 0, 0, 0, 0))
        check_invariants(g)
        assert sorted(g.variety(c) for c in g.festival.cards) == ["blue", "pink"]
        assert g.festival.order == ["blue", "pink"]  # 3 beats 2, whichever was revealed first
        assert len(g.deck) == 56


def test_a_deck_that_does_not_make_whole_turns_is_refused():
    with pytest.raises(ValueError, match="whole number of turns"):
        new_game("gift-of-tulips", 3, 1, {"removed": [18, 5, 6, 14, 10]})
    with pytest.raises(ValueError, match="first_seat"):
        new_game("gift-of-tulips", 3, 1, {"first_seat": 4})
    with pytest.raises(ValueError, match="removed needs 5"):
        new_game("gift-of-tulips", 3, 1, {"removed": [1, 2]})
    with pytest.raises(ValueError, match="bad deck file"):
        new_game("gift-of-tulips", 3, 1, {"deck": {"cards": [{"variety": "pink", "value": 2, "copies": 9}]}})


def test_the_deck_is_an_option_the_organiser_can_replace():
    deck = {"cards": [{"variety": v, "value": x, "copies": 4} for v in ("red", "white", "yellow") for x in (1, 5)]}
    g = new_game("gift-of-tulips", 2, 3, {"deck": deck, "removed": [2, 0, 0, 0, 0]})
    assert len(g.deck) == 24 - 2 - 2 - 4 and g.turns_each == 4 and g.static()["varieties"] == ["red", "white", "yellow"]
    assert {c[1] for c in g.static()["cards"]} == {"red", "white", "yellow"}


def test_the_starting_player_is_drawn_with_the_seed_or_set_by_option():
    assert {make_game(4, seed).first for seed in range(30)} == {0, 1, 2, 3}
    assert make_game(4, 1, first_seat=2).first == 2
    t = make_table(3, first_seat=1)
    t.choose_all()
    assert t.g.current == 1 and t.last("turn_started").data == {"seat": 1, "turn": 1, "round": 1}


def test_the_set_up_choice_is_sealed_until_everyone_has_chosen(table: Table):
    g = table.g
    pink = g.hands[0][1]
    [event] = table.do(0, "choose", bouquet=pink)
    assert event.type == "chosen" and event.audience == frozenset({0})
    assert event.to_wire()["choice"] == pink and event.redacted_wire() == {"type": "chosen", "at": 0, "seat": 0}
    assert g.public_view()["setup"]["chosen"] == [0] and g.private_view(0)["chosen"] == pink
    assert g.private_view(1)["chosen"] is None and g.private_view(1)["hand"] == g.hands[1]
    assert all(p["bouquet"] == [] for p in g.public_view()["players"])
    table.refuse(0, "already_chosen", "choose", bouquet=g.hands[0][0])
    table.refuse(1, "not_dealt", "choose", bouquet=g.hands[0][0])
    table.refuse(1, "not_your_turn", "keep")


def test_a_pause_in_the_set_up_moves_the_set_up_deadline_its_view_shows(table: Table):
    g = table.g
    table.do(0, "choose", bouquet=g.hands[0][0])
    g.shift(5000)  # the table was paused 5 s in the set-up
    table.t = g.now
    view = g.public_view()
    assert view["setup"]["deadline"] == view["deadlines"]["setup"] == 65_000 == g.next_deadline()
    table.at(64_999)
    assert g.setup.owes(1)
    table.at(65_000)
    revealed = table.last("setup_revealed")
    assert revealed.at == 65_000 and revealed.data["defaulted"] == [1, 2]
    assert g.public_view()["setup"]["deadline"] == 65_000  # kept, now history


def test_the_reveal_puts_each_choice_in_the_bouquet_and_the_other_card_on_the_secret_festival(table: Table):
    g = table.g
    hands = [list(h) for h in g.hands]
    table.do(0, "choose", bouquet=hands[0][1])
    table.do(1, "choose", bouquet=hands[1][0])
    table.do(2, "choose", bouquet=hands[2][0])
    reveal = table.last("setup_revealed")
    assert reveal.audience is None and reveal.data["bouquets"] == [hands[0][1], hands[1][0], hands[2][0]]
    assert reveal.data["defaulted"] == []
    assert g.bouquets == [[hands[0][1]], [hands[1][0]], [hands[2][0]]]
    assert g.private_view(0)["my_secret"] == [hands[0][0]] and g.private_view(1)["my_secret"] == [hands[1][1]]
    assert [p["secret"] for p in g.public_view()["players"]] == [1, 1, 1]
    assert g.phase == "turns" and g.hands == [[], [], []]
    table.refuse(0, "not_setup", "choose", bouquet=hands[0][0])


def test_a_seat_that_does_not_choose_in_time_keeps_its_higher_value_card():
    t = make_table(2, seed=5, choose_ms=1000)
    g = t.g
    t.do(0, "choose", bouquet=g.hands[0][0])
    a, b = g.hands[1]
    expect = b if g.cards[b].value > g.cards[a].value else a
    t.at(999)
    assert g.phase == "setup"
    t.at(1000)
    reveal = t.last("setup_revealed")
    assert reveal.at == 1000 and reveal.data["defaulted"] == [1] and g.bouquets[1] == [expect]


def test_options_are_checked_and_durations_scaled():
    opts = Tulips.check_options({"action_ms": 10_000}, time_scale=10)
    assert opts["action_ms"] == 1000 and opts["choose_ms"] == 6000 and opts["removed"] == [18, 4, 6, 14, 10]
    with pytest.raises(ValueError, match="unknown field"):
        Tulips.check_options({"turn_ms": 1})
    assert Config.from_options(opts).action_ms == 1000
