"""The end of the game (game clock, agreement, last player) and scoring."""

from __future__ import annotations

import pytest

from .conftest import MIN, R, T, Table, make_table, profit, start_turns


def _assert_over_and_inert(t: Table) -> None:
    g = t.g
    assert g.over and g.phase == "over" and g.auctions == {} and g.drawn is None
    assert g.next_deadline() is None
    for seat in range(g.n):
        assert g.legal_actions(seat) == []
    t.refuse(0, "game_over", "vote_end", agree=True)
    t.refuse(1, "game_over", "give", to=0, amount=1)
    t.refuse(0, "game_over", "quit")
    snap = g.snapshot()
    t.wait(60 * MIN)
    assert {k: v for k, v in g.snapshot().items() if k != "now"} == {k: v for k, v in snap.items() if k != "now"}


# ------------------------------------------------------------------ the game clock


def test_game_clock_ends_game_at_once_and_cancels_open_auctions() -> None:
    t = make_table(3, game_ms=4 * MIN)
    g = t.g
    start_turns(t, {0: [R(2, 0), R(3, 0), R(4, 0)]}, draws=(T(2, 2),))
    t.do(0, "pair", resource=R(2, 0))
    t.at(3 * MIN + 50_000)
    a = t.open_auction(0, R(3, 0), 0)
    t.bid(1, a, 100)
    dollars = list(g.dollars)
    t.at(4 * MIN - 1)
    assert not g.over
    t.at(4 * MIN)
    assert g.end_reason == "clock" and g.ended_at == 4 * MIN
    assert R(3, 0) in g.hands[0] and g.dollars == dollars  # nothing changed hands
    assert t.last("auction_closed").data["outcome"] == "cancelled"
    ended = t.last("game_ended").data
    assert ended["reason"] == "clock" and ended["winners"] == [0]
    _assert_over_and_inert(t)


def test_game_clock_may_end_game_during_opening() -> None:
    t = make_table(3, game_ms=10 * MIN)
    g = t.g
    card = g.hands[1][0]
    t.at(9 * MIN + 50_000)
    a = t.open_auction(1, card, 0)
    t.bid(2, a, 400)
    t.at(10 * MIN)
    assert g.over and g.end_reason == "clock" and card in g.hands[1]
    assert g.dollars == [1000] * 3 and g.result()["winners"] == [0, 1, 2]
    _assert_over_and_inert(t)


def test_game_clock_puts_undecided_drawn_card_aside() -> None:
    t = make_table(3, game_ms=MIN)
    g = t.g
    start_turns(t, {0: [R(2, 0), R(3, 0)]}, draws=(T(2, 2),))
    t.at(MIN)
    assert g.over and g.aside == [T(2, 2)] and g.on == {} and g.dollars[0] == 1000


def test_game_clock_cancels_drawn_card_auction_and_puts_card_aside() -> None:
    t = make_table(3, game_ms=MIN)
    g = t.g
    start_turns(t, {0: [R(3, 0)], 1: [R(2, 0), R(4, 0)]}, draws=(T(2, 2),))
    t.at(50_000)
    a = t.auction_drawn(0, 0)
    t.bid(1, a, 80)
    t.at(MIN)
    assert g.over and g.aside == [T(2, 2)] and g.on == {} and g.dollars == [1000] * 3


def test_game_clock_returns_company_auction_lot_to_company() -> None:
    t = make_table(3, game_ms=2 * MIN)
    g = t.g
    t.do(2, "quit")
    card = g.company_cards[0]
    start_turns(t, {0: [R(1, 0), R(5, 0)]}, draws=(T(1, 1),), rest=1)
    t.do(0, "pair", resource=R(1, 0))
    t.at(2 * MIN - 10_000)
    a = t.company_auction(0, card, 0)
    t.bid(1, a, 10)
    t.at(2 * MIN)
    assert g.over and card in g.company_cards and g.dollars[1] == 1000


def test_game_clock_at_same_time_as_quiet_time() -> None:
    """Deadlines fire in time order, ties in the order they were set: the auction's quiet time was set
    after the game clock, so the game ends first and the sale never happens."""
    t = make_table(3, game_ms=MIN)
    g = t.g
    card = g.hands[0][0]
    t.at(30_000)
    a = t.open_auction(0, card, 0)
    t.bid(1, a, 10)
    t.at(MIN)
    assert g.over and card in g.hands[0] and g.dollars == [1000] * 3


# ------------------------------------------------------------------ agreement


def test_game_ends_when_every_player_agrees(table: Table) -> None:
    g = table.g
    start_turns(table)
    table.do(0, "vote_end", agree=True)
    table.do(2, "vote_end", agree=True)
    assert not g.over
    table.at(MIN)
    table.do(1, "vote_end", agree=True)
    assert g.over and g.end_reason == "agreement" and g.ended_at == MIN
    _assert_over_and_inert(table)


def test_end_vote_can_be_withdrawn(table: Table) -> None:
    g = table.g
    table.do(0, "vote_end", agree=True)
    table.do(0, "vote_end", agree=False)
    table.do(1, "vote_end", agree=True)
    table.do(2, "vote_end", agree=True)
    assert not g.over and g.end_votes == {1, 2}
    table.do(0, "vote_end", agree=True)
    assert g.over


def test_end_vote_stands_across_phases_and_turns(table: Table) -> None:
    g = table.g
    table.do(1, "vote_end", agree=True)  # cast in the opening
    start_turns(table)
    table.wait(5 * MIN)
    table.wait(5 * MIN)
    assert g.turn == 3
    table.do(0, "vote_end", agree=True)
    table.do(2, "vote_end", agree=True)
    assert g.over and g.end_reason == "agreement"


def test_players_who_quit_need_not_agree(table: Table) -> None:
    g = table.g
    table.do(0, "vote_end", agree=True)
    table.do(1, "vote_end", agree=True)
    table.do(2, "quit")
    assert g.over and g.end_reason == "agreement" and g.result()["winners"] == [0, 1]


def test_agreement_cancels_open_auctions(table: Table) -> None:
    g = table.g
    card = g.hands[0][0]
    a = table.open_auction(0, card, 0)
    table.bid(1, a, 300)
    for s in range(3):
        table.do(s, "vote_end", agree=True)
    assert g.over and card in g.hands[0] and g.dollars == [1000] * 3


# ------------------------------------------------------------------ scoring


def test_player_with_most_dollars_wins(table: Table) -> None:
    g = table.g
    start_turns(table, {0: [R(2, 0), R(3, 0)]}, draws=(T(2, 2),))
    table.do(0, "pair", resource=R(2, 0))
    for s in range(3):
        table.do(s, "vote_end", agree=True)
    result = g.result()
    assert result["winners"] == [0]
    assert result["dollars"] == [1000 + profit(2, 0) + profit(2, 2), 1000, 1000]
    assert result["reason"] == "agreement" and result["over"] is True and result["turns"] == 1


def test_players_with_equal_dollars_all_win(table: Table) -> None:
    g = table.g
    table.do(1, "give", to=0, amount=150)
    table.do(1, "give", to=2, amount=150)
    assert g.dollars == [1150, 700, 1150]
    for s in range(3):
        table.do(s, "vote_end", agree=True)
    assert g.result()["winners"] == [0, 2]
    assert table.last("game_ended").data["winners"] == [0, 2]


def test_player_who_quit_cannot_win() -> None:
    t = make_table(3)
    g = t.g
    t.do(0, "give", to=2, amount=1000)
    t.do(1, "give", to=2, amount=1000)
    t.do(2, "quit")  # the richest leaves: its dollars go to the Company
    assert g.dollars == [0, 0, 0]
    t.do(0, "vote_end", agree=True)
    t.do(1, "vote_end", agree=True)
    assert g.result()["winners"] == [0, 1]


@pytest.mark.parametrize("players", [2, 6])
def test_everyone_wins_when_nothing_happened(players: int) -> None:
    t = make_table(players)
    for s in range(players):
        t.do(s, "vote_end", agree=True)
    assert t.g.result()["winners"] == list(range(players))


def test_result_reports_company_dollars() -> None:
    t = make_table(3)
    t.do(1, "quit")
    for s in (0, 2):
        t.do(s, "vote_end", agree=True)
    assert t.g.result()["company_dollars"] == 7760 - 2000
