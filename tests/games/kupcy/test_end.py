"""The last round (one operation each, from the player after the last drawer), scoring, shared wins."""

from __future__ import annotations

from server.games.kupcy.cards import Deck
from server.games.kupcy.scoring import score

from .conftest import start

# 21 goods (Rus 3..9 = ids 0..6, Byzantium 3..9 = 7..13, Arabia 3..9 = 14..20) and the Rus merchant (21).
DECK = {"cards": [{"kind": "goods", "origin": o, "value": v} for o in ("rus", "byzantium", "arabia")
                  for v in range(3, 10)] + [{"kind": "merchant", "origin": "rus"}]}
SHIPS = {0: [0, 1, 2, 3, 4], 1: [7, 8, 9, 10, 11], 2: [14, 15, 16, 17, 18]}
WAREHOUSES = {0: [5, 6], 1: [12, 13], 2: [19, 20]}


def last_round():
    t = start(3, SHIPS, WAREHOUSES, (21,), deck=DECK)
    assert t.g.step == "keep"
    t.do(0, "keep", where="warehouse", out=None)
    return t


def test_the_last_card_drawn_and_resolved_starts_the_last_round_from_the_next_player():
    t = last_round()
    assert t.last("last_round").data["seats"] == [1, 2, 0]
    assert t.g.phase == "final" and t.g.current == 1 and t.g.step == "sell"


def test_in_the_last_round_a_player_sells_a_goods_card_of_their_own():
    t = last_round()
    t.refuse(2, "not_your_turn", "sell", card=14)
    t.refuse(1, "not_your_goods", "sell", card=0)
    t.do(1, "sell", card=13)  # from the warehouse
    assert t.g.timers.get("decide") is None  # the sale's clock stops: the trade has its own
    assert t.last("trade_opened").data == {"seller": 1, "goods": 13, "seats": [0, 2], "deadline": t.t + 30_000}
    t.offer(0, 4)  # Rus 7
    t.offer(2, 17)  # Arabia 6
    assert t.last("trade_closed").data["winner"] == 0
    assert t.g.stowing == {0, 2} and t.g.step == "stow"
    t.timeout("stow")
    assert t.g.current == 2 and t.g.step == "sell"


def test_a_player_may_pass_and_by_default_does_and_then_the_game_ends():
    t = last_round()
    t.do(1, "pass")
    assert t.last("no_sale").data == {"seat": 1, "reason": "passed"}
    t.do(2, "pass")
    t.timeout("decide")
    assert t.last("no_sale").data == {"seat": 0, "reason": "timeout"}
    ended = t.last("game_ended")
    assert t.g.over and ended.data["reason"] == "last_round"
    rus = sum(range(3, 10))
    assert ended.data["scores"] == [2 * rus, 3 + 4 + 5 + 6 + 7 + 8 + 9, 3 + 4 + 5 + 6 + 7 + 8 + 9]
    assert ended.data["winners"] == [0]
    t.refuse(0, "game_over", "pass")
    assert t.g.legal_actions(0) == [] and t.g.next_deadline() is None


def test_equal_scores_share_the_win():
    t = start(3, {0: [0, 1, 2, 3, 4], 1: [7, 8, 9, 10, 11], 2: [14, 15, 16, 17, 18]},
              {0: [5, 6], 1: [12, 13], 2: [19, 20]}, (21,), deck=DECK)
    t.do(0, "keep", where="ship", out=4)  # the merchant in the ship: Rus doubles
    for s in (1, 2, 0):
        t.do(s, "pass")
    outcome = t.g.outcome()
    assert outcome.winners == (0,) and outcome.scores[1] == outcome.scores[2]
    assert t.g.result()["turns"] == 1 and t.g.result()["owned"] == [8, 7, 7]


def test_a_player_without_goods_is_passed_over():
    t = start(3, {0: [0, 1, 2, 3, 4], 1: [], 2: [14, 15, 16, 17, 18]},
              {0: [5, 6, 7, 8, 9, 10, 11, 12, 13], 1: [], 2: [19, 21]}, (20,), deck=DECK)
    assert t.last("trade_opened").data["seats"] == [2]
    t.offer(2, 14)
    t.timeout("stow")
    assert t.last("last_round").data["seats"] == [1, 2, 0]
    assert t.last("no_sale").data == {"seat": 1, "reason": "no_goods"}
    assert t.g.current == 2 and t.g.step == "sell"


def test_merchants_double_their_origins_goods_and_money():
    cards = {c.id: c for c in Deck.default().cards}
    assert score([0, 1], cards) == 3 + 3
    assert score([0, 1, 86], cards) == 12  # the Rus merchant doubles Rus
    assert score([0, 14, 86, 87], cards) == 6 + 6  # Rus 3 and Byzantium 3, each doubled by its merchant
    assert score([0, 14, 86], cards) == 6 + 3
    assert score([86, 87, 88, 89], cards) == 0
