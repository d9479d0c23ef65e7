"""The reference players: they only send what the engine accepts, and greedy plays better than random."""

from __future__ import annotations

import random
from typing import Any

import pytest

from clients.players import all_kinds, fill, kinds_for, make_player
from clients.players.parsimonia import GreedyPlayer, priced
from clients.players.base import is_range, with_value
from clients.players.random_player import RandomPlayer
from server.games import new_game
from server.games.parsimonia.phases import Step

DECIDE, MAIN, PLACE = Step.DECIDE, Step.MAIN, Step.PLACE
from server.cli.simulate import simulate


def offered(command: dict[str, Any], templates: list[dict[str, Any]]) -> bool:
    """Is ``command`` one of the templates with every range field filled from its range? (A sale's ``price``, an
    optional field the templates leave out, is the seller's to add: the engine checks it.)"""
    extra = {"price"} if command["type"] == "close" else set()
    for t in templates:
        if t.keys() == command.keys() - extra and all(
            (is_range(v) and v["min"] <= command[k] <= v["max"]) or command[k] == v for k, v in t.items()
        ):
            return True
    return False


def main_step(players: int = 2) -> Any:
    """A table where seat 0 has paired its first drawn card and may now auction its resource cards."""
    for seed in range(100):
        g = start_turns(players, seed)
        free = g.free_resources(0, g.cards[g.drawn].type)
        if free:
            g.apply(0, {"type": "pair", "resource": free[0]}, 0)
            assert g.step == MAIN
            return g
    raise AssertionError("no seed lets seat 0 pair")


def start_turns(players: int, seed: int):
    """A table whose opening ended at once (everyone ready): seat 0 holds a drawn card, in its first step."""
    g = new_game("parsimonia", players, seed)
    for s in range(players):
        g.apply(s, {"type": "ready"}, 0)
    assert g.current == 0 and g.step == DECIDE
    return g


# ---------------------------------------------------------------- fill / with_value


def test_fill_draws_every_range_within_its_bounds_and_copies_the_rest():
    template = {"type": "bid", "auction": 4, "amount": {"min": 10, "max": 14}}
    rng = random.Random(1)
    seen = set()
    for _ in range(300):
        command = fill(template, rng)
        assert command["type"] == "bid" and command["auction"] == 4
        assert isinstance(command["amount"], int) and 10 <= command["amount"] <= 14
        seen.add(command["amount"])
    assert seen == {10, 11, 12, 13, 14}  # both ends included
    assert template["amount"] == {"min": 10, "max": 14}  # the template is not changed


def test_fill_of_a_single_value_range_and_of_a_template_without_ranges():
    assert fill({"type": "give", "to": 1, "amount": {"min": 7, "max": 7}}, random.Random(0))["amount"] == 7
    assert fill({"type": "end_turn"}, random.Random(0)) == {"type": "end_turn"}
    assert fill({"type": "close", "auction": 2, "winner": None}, random.Random(0))["winner"] is None


def test_fill_is_reproducible_from_the_generator_seed():
    template = {"type": "auction", "card": 3, "start_price": {"min": 0, "max": 7760}}
    assert [fill(template, random.Random(9)) for _ in range(3)] == [fill(template, random.Random(9)) for _ in range(3)]


def test_is_range_recognises_only_min_max_maps():
    assert is_range({"min": 1, "max": 2})
    assert not is_range({"min": 1})
    assert not is_range({"min": 1, "max": 2, "step": 1})
    assert not is_range(5) and not is_range(None)


def test_with_value_sets_a_field_inside_its_range_ends_included():
    template = {"type": "auction", "card": 3, "start_price": {"min": 0, "max": 100}}
    assert with_value(template, "start_price", 0) == {"type": "auction", "card": 3, "start_price": 0}
    assert with_value(template, "start_price", 100)["start_price"] == 100
    assert with_value(template, "start_price", 37)["start_price"] == 37
    assert template["start_price"] == {"min": 0, "max": 100}


@pytest.mark.parametrize("value", [-1, 101, 10**9])
def test_with_value_outside_the_range_gives_none(value):
    template = {"type": "auction", "card": 3, "start_price": {"min": 0, "max": 100}}
    assert with_value(template, "start_price", value) is None


# ---------------------------------------------------------------- only accepted commands


@pytest.mark.parametrize("kind", ["random", "greedy", "mix"])
@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_reference_players_never_send_a_refused_command(players, kind):
    for seed in range(4):
        sim = simulate(players, seed, kind, time_scale=20)
        assert sim.game.over
        assert sim.rejected == 0, f"seed {seed}: {sim.rejected} refused commands"
        assert sim.actions > 0


@pytest.mark.parametrize("kind", ["greedy", "mix"])
def test_reference_players_never_send_a_refused_command_in_a_full_length_game(kind):
    sim = simulate(4, 11, kind)
    assert sim.game.over and sim.rejected == 0 and sim.actions > 100


@pytest.mark.parametrize("kind", ["random", "greedy"])
def test_every_command_a_player_sends_was_offered_to_it(kind):
    for players, seed in [(2, 5), (5, 6)]:
        sim = simulate(players, seed, kind, time_scale=10)
        g = new_game("parsimonia", players, seed, time_scale=10)
        for entry in sim.log:
            g.advance(entry[1])
            if entry[0] == "cmd":
                _, at, seat, command = entry
                assert offered(command, g.legal_actions(seat)), command
                g.apply(seat, command, at)
        assert g.digest() == sim.game.digest()


# ---------------------------------------------------------------- random


def test_random_player_never_quits_nor_votes_to_end():
    g = start_turns(3, 1)
    player = RandomPlayer(3)
    for seat in range(3):
        legal = g.legal_actions(seat)
        assert {"quit", "vote_end"} <= {t["type"] for t in legal}
        for _ in range(200):
            command = player.act(g.view(seat), legal)
            assert command["type"] not in ("quit", "vote_end")
            assert offered(command, legal)


def test_random_player_waits_when_only_leaving_is_on_offer():
    legal = [{"type": "vote_end", "agree": True}, {"type": "quit"}]
    assert RandomPlayer(0).act({}, legal) is None
    assert RandomPlayer(0).act({}, []) is None


def test_random_player_is_reproducible_from_its_seed():
    g = start_turns(4, 2)
    view, legal = g.view(1), g.legal_actions(1)
    a, b = RandomPlayer(8), RandomPlayer(8)
    assert [a.act(view, legal) for _ in range(30)] == [b.act(view, legal) for _ in range(30)]


def test_random_player_uses_every_kind_of_command_on_offer():
    g = start_turns(2, 3)
    legal = g.legal_actions(0)
    on_offer = {t["type"] for t in legal} - {"quit", "vote_end"}
    assert {"pair", "auction_drawn", "give"} <= on_offer
    assert {RandomPlayer(s).act(g.view(0), legal)["type"] for s in range(100)} == on_offer


def test_make_player_knows_both_kinds_for_parsimonia_and_random_for_any_game():
    assert set(all_kinds()) == {"random", "greedy"}
    assert kinds_for("parsimonia") == ["random", "greedy"] and kinds_for("some-new-game") == ["random"]
    assert isinstance(make_player("random", 1, "some-new-game"), RandomPlayer)
    with pytest.raises(KeyError, match="no 'greedy' player for some-new-game"):
        make_player("greedy", 1, "some-new-game")
    assert isinstance(make_player("random", 1), RandomPlayer)
    assert isinstance(make_player("greedy", 1), GreedyPlayer)
    with pytest.raises(KeyError):
        make_player("clever", 1)


# ---------------------------------------------------------------- greedy


def test_greedy_pairs_the_drawn_card_with_its_most_profitable_free_card():
    paired = 0
    for seed in range(30):
        g = start_turns(3, seed)
        drawn_type = g.cards[g.drawn].type
        free = g.free_resources(0, drawn_type)
        command = GreedyPlayer(seed).act(g.view(0), g.legal_actions(0))
        if free:
            best = max(g.cards[r].profit for r in free)
            assert command["type"] == "pair"
            assert g.cards[command["resource"]].profit == best
            before = g.dollars[0]
            g.apply(0, command, 0)
            assert g.dollars[0] == before + best + g.cards[g.on[command["resource"]]].profit
            paired += 1
        else:
            assert command == {"type": "auction_drawn", "start_price": 0}
    assert paired >= 20  # with 20 resource cards each, a seat nearly always holds the drawn card's type


def test_greedy_always_pairs_when_it_can_during_whole_games():
    """Replay greedy games: whenever a greedy current player could pair, its next command was a pair."""
    checked = 0
    for players, seed in [(2, 1), (4, 2), (6, 3)]:
        sim = simulate(players, seed, "greedy", time_scale=5)
        g = new_game("parsimonia", players, seed, time_scale=5)
        for entry in sim.log:
            g.advance(entry[1])
            if entry[0] != "cmd":
                continue
            _, at, seat, command = entry
            if seat == g.current and g.step == DECIDE and any(t["type"] == "pair" for t in g.legal_actions(seat)):
                assert command["type"] == "pair"
                free = g.free_resources(seat, g.cards[g.drawn].type)
                assert g.cards[command["resource"]].profit == max(g.cards[r].profit for r in free)
                checked += 1
            g.apply(seat, command, at)
    assert checked > 10


def test_greedy_places_an_unsold_card_on_its_least_profitable_candidate():
    for seed in range(40):
        g = start_turns(2, seed)
        if len(g.free_resources(0, g.cards[g.drawn].type)) < 2:
            continue
        g.apply(0, {"type": "auction_drawn", "start_price": 0}, 0)
        [auction] = g.auctions
        g.apply(0, {"type": "close", "auction": auction, "winner": None}, 0)
        assert g.step == PLACE
        legal = g.legal_actions(0)
        command = GreedyPlayer(0).act(g.view(0), legal)
        assert command["type"] == "place"
        places = [t for t in legal if t["type"] == "place"]
        assert g.cards[command["resource"]].profit == min(g.cards[t["resource"]].profit for t in places)
        return
    pytest.fail("no seed gave two candidates")


def test_greedy_bids_the_minimum_never_on_its_own_lot_and_not_against_itself():
    g = main_step()
    card = min(g.free_resources(0), key=lambda r: g.cards[r].profit)
    g.apply(0, {"type": "auction", "card": card, "start_price": 0}, g.now)
    [auction] = g.auctions
    bidder = GreedyPlayer(1)
    command = bidder.act(g.view(1), g.legal_actions(1))
    assert command == {"type": "bid", "auction": auction, "amount": 1}
    g.apply(1, command, g.now)
    # as the high bidder it does not raise its own bid
    again = bidder.act(g.view(1), g.legal_actions(1))
    assert again is None or again["type"] != "bid"
    # the seller never bids on its own lot
    own = GreedyPlayer(0).act(g.view(0), g.legal_actions(0))
    assert own is None or own["type"] != "bid"


def test_greedy_accepts_the_high_bid_once_it_reaches_its_reserve():
    g = main_step()
    card = max(g.free_resources(0), key=lambda r: g.cards[r].profit)
    reserve = (g.cards[card].profit + 10 * g.cards[card].type) / 2
    g.apply(0, {"type": "auction", "card": card, "start_price": 0}, g.now)
    [auction] = g.auctions
    g.apply(1, {"type": "bid", "auction": auction, "amount": 1}, g.now)
    seller = GreedyPlayer(0)
    low = seller.act(g.view(0), g.legal_actions(0))
    assert low is None or low["type"] != "close"
    g.apply(1, {"type": "bid", "auction": auction, "amount": int(reserve) + 1}, g.now)
    assert seller.act(g.view(0), g.legal_actions(0)) == {"type": "close", "auction": auction, "winner": 1,
                                                         "price": int(reserve) + 1}  # the bid it accepts


def test_greedy_beats_random_on_average():
    greedy_wins = random_wins = 0
    for players in (2, 4):
        for seed in range(10):
            sim = simulate(players, seed, "mix", time_scale=20)  # greedy at even seats, random at odd ones
            for winner in sim.game.result()["winners"]:
                if sim.kinds[winner] == "greedy":
                    greedy_wins += 1
                else:
                    random_wins += 1
    assert greedy_wins >= 4 * random_wins and greedy_wins >= 16


def test_a_sale_carries_the_winners_bid_as_the_view_shows_it_and_a_no_sale_no_price():
    view = {"auctions": [{"id": 3, "seller": 0, "high_bidder": 1, "high": 14, "bids": [[2, 9], [1, 14]]}]}
    assert priced(view, {"type": "close", "auction": 3, "winner": 2}) == {"type": "close", "auction": 3, "winner": 2,
                                                                          "price": 9}
    assert priced(view, {"type": "close", "auction": 3, "winner": None}) == {"type": "close", "auction": 3,
                                                                             "winner": None}


@pytest.mark.parametrize("kind", ["greedy", "random"])
def test_the_reference_players_sales_name_their_price_and_the_engine_takes_them(kind):
    sales = [entry[3] for seed in range(4) for entry in simulate(3, seed, kind, time_scale=20.0).log
             if entry[0] == "cmd" and entry[3]["type"] == "close" and entry[3]["winner"] is not None]
    assert sales and all("price" in command for command in sales)  # the log holds the commands it applied


def test_random_player_starts_an_auction_at_a_price_another_player_could_pay():
    g = start_turns(3, 1)
    view = g.view(0)
    view["players"][1]["dollars"], view["players"][1]["committed"] = 300, 40  # 260 free: the most anyone has
    view["players"][2]["dollars"] = 120
    legal = [{"type": "auction", "card": 5, "start_price": {"min": 0, "max": 7760}},
             {"type": "auction_drawn", "start_price": {"min": 0, "max": 7760}}]
    prices = [RandomPlayer(s).act(view, legal)["start_price"] for s in range(200)]
    assert max(prices) <= 260 and max(prices) > 130  # uniform up to it, not down to nothing


def test_random_player_keeps_at_most_two_auctions_of_its_own_open():
    g = start_turns(3, 1)
    view = g.view(0)
    legal = [{"type": "auction", "card": 5, "start_price": {"min": 0, "max": 7760}}, {"type": "end_turn"}]
    view["auctions"] = [{"id": 1, "seller": 0}, {"id": 2, "seller": 1}]
    assert {RandomPlayer(s).act(view, legal)["type"] for s in range(50)} == {"auction", "end_turn"}
    view["auctions"].append({"id": 3, "seller": 0})
    assert {RandomPlayer(s).act(view, legal)["type"] for s in range(50)} == {"end_turn"}
    assert RandomPlayer(0).act(view, legal[:1]) is None  # nothing else on offer: it waits
