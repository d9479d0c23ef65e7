"""Set-up (dealing, dollars, the Company's supply) and the opening auction period."""

from __future__ import annotations

import pytest

from server.games.parsimonia import Config, Parsimonia
from server.games.machines.rng import Rng

from .conftest import MIN, SEED, R, Table, make_game, make_table, tiny_deck

# ------------------------------------------------------------------ dealing and money


@pytest.mark.parametrize("players, each", [(2, 30), (3, 20), (4, 15), (5, 12), (6, 10)])
def test_sixty_resource_cards_dealt_evenly(players: int, each: int) -> None:
    g = make_game(players)
    assert [len(h) for h in g.hands] == [each] * players
    assert sorted(c for h in g.hands for c in h) == list(range(60))


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_resource_cards_dealt_one_by_one_round_the_table(players: int) -> None:
    g = make_game(players, seed=7)
    order = list(range(60))
    Rng(7).shuffle(order)
    for seat in range(players):
        assert g.hands[seat] == order[seat::players]


def test_uneven_deal_gives_first_players_one_more_card() -> None:
    g = Parsimonia(3, SEED, Config(deck=tiny_deck([1] * 7, [1] * 7)))
    assert [len(h) for h in g.hands] == [3, 2, 2]
    assert sorted(c for h in g.hands for c in h) == list(range(7))


def test_resource_deal_depends_on_seed() -> None:
    assert make_game(4, seed=1).hands != make_game(4, seed=2).hands


def test_tourists_deck_holds_all_sixty_cards_shuffled() -> None:
    a, b = make_game(3, seed=1), make_game(3, seed=2)
    assert sorted(a.deck) == list(range(60, 120))
    assert a.deck != b.deck
    assert a.deck != sorted(a.deck)
    assert a.aside == [] and a.on == {} and a.drawn is None


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_each_player_starts_with_1000_and_company_keeps_the_rest(players: int) -> None:
    g = make_game(players)
    assert g.dollars == [1000] * players
    assert g.company_dollars == 7760 - 1000 * players
    assert g.company_cards == []


@pytest.mark.parametrize("players", [0, 1, 7])
def test_player_count_outside_two_to_six_refused(players: int) -> None:
    with pytest.raises(ValueError):
        make_game(players)


def test_bank_too_small_for_starting_dollars_refused() -> None:
    with pytest.raises(ValueError):
        Parsimonia(3, SEED, Config(bank=2999))
    assert Parsimonia(3, SEED, Config(bank=3000)).company_dollars == 0


def test_game_starts_in_opening_with_opening_and_game_clocks() -> None:
    g = make_game(3, start_ms=5000)
    assert g.phase == "opening" and g.current is None and g.drawn is None
    view = g.view(0)
    assert view["deadlines"] == {"game": 5000 + 120 * MIN, "opening": 5000 + 15 * MIN, "turn": None}
    assert g.next_deadline() == 5000 + 15 * MIN


# ------------------------------------------------------------------ auctions in the opening


def test_opening_auctions_from_different_players_run_concurrently(table: Table) -> None:
    g = table.g
    c0, c1 = g.hands[0][0], g.hands[1][0]
    a = table.open_auction(0, c0, 10)
    b = table.open_auction(1, c1, 20)
    assert set(g.auctions) == {a, b}
    assert c0 not in g.hands[0] and c1 not in g.hands[1]
    table.bid(2, a, 11)
    table.bid(2, b, 21)
    table.bid(1, a, 12)
    table.bid(0, b, 22)
    table.close(1, b, 0)
    assert c1 in g.hands[0] and g.dollars[0] == 1000 - 22 and g.dollars[1] == 1000 + 22
    assert set(g.auctions) == {a}
    table.close(0, a, 2)
    assert c0 in g.hands[2] and g.dollars[2] == 1000 - 11 and g.dollars[0] == 1000 - 22 + 11


def test_player_may_run_several_opening_auctions_at_once(table: Table) -> None:
    g = table.g
    ids = [table.open_auction(0, c, 5) for c in g.hands[0][:3]]
    assert sorted(g.auctions) == ids and all(g.auctions[i].seller == 0 for i in ids)


def test_opening_auction_of_card_not_held_refused(table: Table) -> None:
    table.refuse(0, "not_your_card", "auction", card=table.g.hands[1][0], start_price=0)
    table.refuse(0, "not_your_card", "auction", card=100, start_price=0)  # a tourists card


def test_turn_commands_refused_during_opening(table: Table) -> None:
    g = table.g
    table.refuse(0, "not_your_turn", "end_turn")
    table.refuse(0, "not_your_turn", "pair", resource=g.hands[0][0])
    table.refuse(0, "not_your_turn", "auction_drawn", start_price=0)
    table.refuse(0, "not_your_turn", "place", resource=g.hands[0][0])
    table.refuse(0, "not_your_turn", "company_auction", card=0, start_price=0)


def test_opening_ends_early_when_every_player_is_ready(table: Table) -> None:
    g = table.g
    table.at(2 * MIN)
    table.do(0, "ready")
    table.do(2, "ready")
    assert g.phase == "opening"
    table.do(1, "ready")
    assert g.phase == "turns" and g.current == 0 and g.turn == 1
    assert table.last("opening_ended").data["reason"] == "ready"
    assert g.timers.get("opening") is None
    assert g.timers.get("turn") == 2 * MIN + 5 * MIN


def test_ready_twice_refused(table: Table) -> None:
    table.do(0, "ready")
    table.refuse(0, "already_ready", "ready")


def test_ready_is_irrevocable_even_after_auctioning(table: Table) -> None:
    g = table.g
    table.do(0, "ready")
    a = table.open_auction(0, g.hands[0][0], 0)  # a ready player may still auction
    table.close(0, a, None)
    assert 0 in g.ready
    assert not any(x["type"] == "ready" for x in g.legal_actions(0))


def test_ready_after_opening_refused(table: Table) -> None:
    table.finish_opening()
    table.refuse(1, "not_opening", "ready")


def test_all_ready_waits_for_running_auctions_then_first_turn_starts(table: Table) -> None:
    g = table.g
    card = g.hands[1][0]
    a = table.open_auction(1, card, 0)
    table.bid(2, a, 40)
    table.finish_opening()
    assert g.phase == "opening_closing" and g.current is None
    table.refuse(0, "not_your_turn", "auction", card=g.hands[0][0], start_price=0)
    table.at(10_000)
    table.bid(0, a, 50)  # bidding goes on
    table.at(15_000)
    table.close(1, a, 2)
    assert g.phase == "turns" and g.current == 0
    assert table.last("turn_started").at == 15_000
    assert g.timers.get("turn") == 15_000 + 5 * MIN
    assert card in g.hands[2]


def test_opening_deadline_stops_new_auctions_but_running_ones_finish(table: Table) -> None:
    g = table.g
    table.at(14 * MIN + 40_000)
    a = table.open_auction(0, g.hands[0][0], 100)
    table.at(14 * MIN + 55_000)
    table.bid(1, a, 150)
    table.at(15 * MIN)
    assert g.phase == "opening_closing"
    assert table.last("opening_ended").data == {"reason": "deadline", "open_auctions": [a]}
    table.refuse(2, "not_your_turn", "auction", card=g.hands[2][0], start_price=0)
    table.at(15 * MIN + 10_000)
    table.bid(2, a, 160)
    table.at(15 * MIN + 25_000)
    table.close(0, a, 1)  # the seller may pick a lower bidder
    assert g.dollars[1] == 850 and g.dollars[0] == 1150
    assert g.phase == "turns" and g.current == 0
    assert table.last("turn_started").at == 15 * MIN + 25_000


def test_opening_deadline_last_auction_closed_by_quiet_time_starts_first_turn(table: Table) -> None:
    g = table.g
    table.at(14 * MIN + 50_000)
    a = table.open_auction(2, g.hands[2][0], 0)
    table.at(14 * MIN + 55_000)
    table.bid(0, a, 30)
    table.at(15 * MIN + 24_999)
    assert g.phase == "opening_closing"
    table.at(15 * MIN + 25_000)
    assert table.last("auction_closed").data["winner"] == 0
    assert g.phase == "turns" and table.last("turn_started").at == 15 * MIN + 25_000


def test_opening_deadline_with_no_auction_starts_first_turn_at_once(table: Table) -> None:
    g = table.g
    table.at(15 * MIN - 1)
    assert g.phase == "opening"
    table.at(15 * MIN)
    assert g.phase == "turns" and g.current == 0 and g.drawn is not None
    assert table.last("turn_started").at == 15 * MIN


def test_quitter_is_not_awaited_for_ready(table: Table) -> None:
    g = table.g
    table.do(0, "ready")
    table.do(1, "ready")
    table.do(2, "quit")
    assert g.phase == "turns" and g.current == 0


def test_first_turn_skips_player_who_quit_in_opening() -> None:
    t = make_table(3)
    t.do(0, "quit")
    t.finish_opening()
    assert t.g.current == 1


def test_opening_auction_start_price_range(table: Table) -> None:
    g = table.g
    table.refuse(0, "start_price_too_high", "auction", card=g.hands[0][0], start_price=7761)
    a = table.open_auction(0, g.hands[0][0], 7760)
    assert g.auctions[a].min_bid() == 7761


def test_opening_sale_moves_card_to_buyer_for_later_turns() -> None:
    t = make_table(2)
    g = t.g
    card = R(5, 3) if R(5, 3) in g.hands[0] else g.hands[0][0]
    a = t.open_auction(0, card, 0)
    t.bid(1, a, 1)
    t.close(0, a, 1)
    assert card in g.hands[1] and card not in g.hands[0]
    assert [len(h) for h in g.hands] == [29, 31]
