"""The engine contract (time, refusals, replay, views) and the time options."""

from __future__ import annotations

import json

import pytest

from protocol.schema import SchemaError
from server.games.base import IllegalAction
from server.games.parsimonia import Config, Parsimonia
from server.games.parsimonia.config import PRESETS, preset_options

from .conftest import MIN, SEED, R, T, Table, make_table, start_turns

# ------------------------------------------------------------------ time options


def config(options: dict | None = None, time_scale: float = 1.0) -> Config:
    return Config.from_options(Parsimonia.check_options(options, time_scale))



def test_options_set_every_clock() -> None:
    cfg = config({"opening_ms": 60_000, "turn_ms": 10_000, "game_ms": 3_600_000, "quiet_ms": 5_000})
    t = Table(Parsimonia(3, SEED, cfg))
    g = t.g
    assert g.view(0)["deadlines"] == {"game": 3_600_000, "opening": 60_000, "turn": None}
    a = t.open_auction(0, g.hands[0][0], 0)
    assert g.auctions[a].closes_at == 5_000
    t.at(5_000)
    assert a not in g.auctions
    t.at(60_000)
    assert g.phase == "turns" and g.timers.get("turn") == 70_000
    t.at(70_000)
    assert g.current == 1 and g.timers.get("turn") == 80_000


def test_time_scale_shrinks_every_duration() -> None:
    cfg = config({}, time_scale=60)
    assert (cfg.opening_ms, cfg.turn_ms, cfg.game_ms, cfg.quiet_ms) == (15_000, 5_000, 120_000, 500)
    t = Table(Parsimonia(2, SEED, cfg))
    g = t.g
    assert g.next_deadline() == 15_000 and g.view(None)["deadlines"]["game"] == 120_000
    a = t.open_auction(1, g.hands[1][0], 0)
    t.wait(400)
    t.bid(0, a, 1)
    assert g.auctions[a].closes_at == 900
    t.at(15_000)
    assert g.timers.get("turn") == 20_000


def test_time_scale_applies_to_given_options_too() -> None:
    cfg = config({"turn_ms": 60_000, "start_dollars": 500}, time_scale=2)
    assert cfg.turn_ms == 30_000 and cfg.opening_ms == 450_000 and cfg.start_dollars == 500


def test_time_scale_never_makes_a_duration_zero() -> None:
    cfg = config({"quiet_ms": 10}, time_scale=1000)
    assert cfg.quiet_ms == 1


def test_time_scale_never_divides_the_quiet_time_below_its_floor() -> None:
    preset = {"game_ms": 20 * MIN, "turn_ms": 60_000, "quiet_ms": 8_000, "quiet_floor_ms": 5_000}
    cfg = config(preset, time_scale=30)
    assert (cfg.game_ms, cfg.turn_ms, cfg.quiet_ms) == (40_000, 2_000, 5_000)  # the rest still scales
    assert config(preset, time_scale=1.25).quiet_ms == 6_400  # above the floor: scaled as ever
    assert config({**preset, "quiet_ms": 3_000}, time_scale=30).quiet_ms == 3_000  # never above what was asked
    assert config({"quiet_floor_ms": 5_000}, time_scale=60).quiet_ms == 5_000  # the default 30 s too
    assert config({}, time_scale=60).quiet_ms == 500  # no floor (the default, 0): as before
    assert config(preset).to_wire()["quiet_floor_ms"] == 5_000  # in the static config, for clients to see
    assert not {"quiet_floor_ms", "grace_ms"} & set(config({}).to_wire())  # only when set


def test_a_bid_in_the_grace_after_the_quiet_deadline_counts_and_the_close_waits_for_the_grace() -> None:
    cfg = config({"quiet_ms": 5_000, "grace_ms": 250}, time_scale=10)  # the grace is the network's: not scaled
    assert (cfg.quiet_ms, cfg.grace_ms) == (500, 250)
    t = Table(Parsimonia(2, SEED, cfg))
    g = t.g
    a = t.open_auction(0, g.hands[0][0], 0)
    assert g.auctions[a].closes_at == 500  # what players are told
    t.at(700)  # past the deadline, within the grace
    t.bid(1, a, 5)
    assert g.auctions[a].closes_at == 1_200 and t.last("bid").data["closes_at"] == 1_200
    t.at(1_449)
    assert a in g.auctions
    t.at(1_450)
    assert a not in g.auctions and t.last("auction_closed").data["winner"] == 1


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_is_a_valid_table_whose_quiet_time_outlasts_any_time_scale(name: str) -> None:
    options = preset_options(name)
    assert PRESETS[name]["title"] and config(options) == config(options, time_scale=1)
    assert config(options, time_scale=1000).quiet_ms >= 5_000
    with pytest.raises(ValueError, match="the presets are quick, evening, full"):
        preset_options("blitz")


def test_no_options_give_the_seeds_clocks() -> None:
    cfg = config(None)
    assert cfg == Config() and cfg.deck is Config().deck
    assert (cfg.opening_ms, cfg.turn_ms, cfg.game_ms, cfg.quiet_ms) == (15 * MIN, 5 * MIN, 120 * MIN, 30_000)
    assert (cfg.start_dollars, cfg.bank) == (1000, 7760)


def test_money_options_change_starting_dollars_and_bank() -> None:
    g = Parsimonia(3, SEED, config({"start_dollars": 500, "bank": 2000}))
    assert g.dollars == [500] * 3 and g.company_dollars == 500


@pytest.mark.parametrize(
    "options, scale",
    [({"turn_ms": 0}, 1), ({"nope": 1}, 1), ({"game_ms": "long"}, 1), ({}, 0), ({}, -2), ({}, float("inf")),
     ({"start_dollars": 4000, "bank": 7999}, 1), ({"deck": {"resources": [], "tourists": []}}, 1),
     ({"deck": {"resources": [{"type": 0, "profit": 1}], "tourists": [{"type": 1, "profit": 1}]}}, 1)],
)
def test_bad_options_refused(options: dict, scale: float) -> None:
    with pytest.raises(ValueError):
        Parsimonia.create(2, SEED, options, time_scale=scale)


def test_a_deck_document_is_an_option() -> None:
    doc = {"resources": [{"type": 1, "profit": 7}] * 2, "tourists": [{"type": 1, "profit": 3}] * 3}
    g = Parsimonia.create(2, SEED, {"deck": doc})
    assert g.static()["cards"] == ([0, "resource", 1, 7], [1, "resource", 1, 7], [2, "tourists", 1, 3],
                                   [3, "tourists", 1, 3], [4, "tourists", 1, 3])
    assert sorted(g.hands) == [[0], [1]] and sorted(g.deck) == [2, 3, 4]
    assert "deck" not in g.static()["config"]


def test_a_table_larger_than_the_bank_can_pay_is_refused() -> None:
    Parsimonia.create(2, SEED, {"start_dollars": 3000})
    with pytest.raises(ValueError, match="bank"):
        Parsimonia.create(3, SEED, {"start_dollars": 3000})


# ------------------------------------------------------------------ the contract


def test_command_at_a_pending_deadline_needs_advance_first() -> None:
    g = make_table(3).g
    before = g.snapshot()
    with pytest.raises(ValueError):
        g.apply(0, {"type": "ready"}, 15 * MIN)
    assert g.snapshot() == before
    g.advance(15 * MIN)
    assert g.phase == "turns"
    g.apply(0, {"type": "auction_drawn", "start_price": 0}, 15 * MIN)
    assert g.step == "drawn_auction"


def test_time_cannot_go_backwards() -> None:
    t = make_table(3)
    t.at(1000)
    t.do(0, "ready")
    with pytest.raises(ValueError):
        t.g.apply(1, {"type": "ready"}, 999)
    with pytest.raises(ValueError):
        t.g.advance(999)


def test_advance_fires_each_deadline_at_its_own_time() -> None:
    t = make_table(3)
    g = t.g
    a = t.open_auction(0, g.hands[0][0], 0)
    events = t.at(15 * MIN + 12 * MIN)  # the auction, the opening, then turns 1..3 time out
    assert [(e.type, e.at) for e in events if e.type in ("auction_closed", "opening_ended", "turn_started")] == [
        ("auction_closed", 30_000),
        ("opening_ended", 15 * MIN),
        ("turn_started", 15 * MIN),
        ("turn_started", 20 * MIN),
        ("turn_started", 25 * MIN),
    ]
    assert a not in g.auctions and g.current == 2


@pytest.mark.parametrize(
    "command",
    [
        {"type": "bid"},
        {"type": "bid", "auction": 1, "amount": 0},
        {"type": "fly"},
        {"type": "ready", "extra": 1},
        {"type": "vote_end", "agree": 1},
        {"type": "give", "to": -1, "amount": 5},
        "ready",
    ],
)
def test_malformed_command_refused_by_schema_and_nothing_changes(command) -> None:
    t = make_table(3)
    t.open_auction(1, t.g.hands[1][0], 0)
    before = t.g.snapshot()
    with pytest.raises(SchemaError):
        t.g.apply(0, command, 0)
    assert t.g.snapshot() == before


def test_seat_not_at_table_refused(table: Table) -> None:
    table.refuse(3, "no_such_seat", "ready")


def _script(t: Table) -> None:
    g = t.g
    a = t.open_auction(0, g.hands[0][0], 5)
    t.wait(1000)
    t.bid(1, a, 10)
    t.bid(2, a, 20)
    t.close(0, a, 1)
    t.finish_opening()
    t.wait(5 * MIN)
    t.do(2, "give", to=0, amount=5)
    t.wait(10 * MIN)


def test_same_seed_and_commands_replay_to_same_state() -> None:
    a, b, c = make_table(3, seed=11), make_table(3, seed=11), make_table(3, seed=12)
    for t in (a, b, c):
        _script(t)
    assert a.g.digest() == b.g.digest() and a.g.snapshot() == b.g.snapshot()
    assert [e.to_wire() for e in a.log] == [e.to_wire() for e in b.log]
    assert a.g.digest() != c.g.digest()


def test_view_shows_everything_public_but_the_order_of_deck_and_aside(table: Table) -> None:
    g = table.g
    start_turns(table, {0: [R(2, 0), R(3, 0)]}, draws=(T(2, 2),))
    table.do(0, "pair", resource=R(2, 0))
    view = g.view(1)
    json.dumps(view)
    assert "deck" not in view
    assert view["deck_count"] == 59 and view["aside"] == []
    assert view["players"][0]["resources"] == [[R(2, 0), T(2, 2)], [R(3, 0), None]]
    assert [p["dollars"] for p in view["players"]] == g.dollars
    assert g.view(None)["players"] == view["players"]  # hands are public, spectators see them too


def test_the_aside_pile_is_public_and_sent_sorted(table: Table) -> None:
    g = table.g
    start_turns(table, {0: [R(3, 0)], 1: [R(3, 1)], 2: [R(3, 2)]}, rest=None)
    g.aside += [T(5, 1), T(1, 2), T(3, 0)]
    g.deck = [c for c in g.deck if c not in g.aside]
    assert g.public_view()["aside"] == sorted([T(5, 1), T(1, 2), T(3, 0)])
    assert g.view(None)["aside"] == g.view(2)["aside"]


def test_view_parts_static_public_private() -> None:
    g = Parsimonia(2, SEED)
    assert set(g.static()) == {"cards", "config"}
    public = g.public_view()
    assert not {"seat", "seats", "paused", "cards", "config"} & set(public)
    assert g.private_view(0) == {} and g.private_view(1) == {}
    assert g.view(1) == {**g.static(), **public, "seat": 1}
    assert g.view(None)["seat"] is None


def test_refused_command_changes_nothing_not_even_the_clock(table: Table) -> None:
    table.at(5000)
    g = table.g
    now = g.now
    with pytest.raises(IllegalAction):
        g.apply(0, {"type": "end_turn"}, 6000)
    assert g.now == now
