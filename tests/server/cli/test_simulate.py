"""``server.cli.simulate``: whole games in process at simulated time, reproducible byte for byte."""

from __future__ import annotations

import json

import pytest

from server.games import new_game
from server.cli.simulate import THINK_MS, player_kinds, simulate, summary

SUMMARY_KEYS = {
    "game", "seed", "players", "kinds", "winners", "scores", "dollars", "company_dollars", "reason", "turns", "actions",
    "rejected", "game_ms", "digest",
}


def test_same_arguments_give_the_same_game_byte_for_byte():
    a = simulate(4, 12, "mix", time_scale=10)
    b = simulate(4, 12, "mix", time_scale=10)
    assert json.dumps(summary(a), sort_keys=True) == json.dumps(summary(b), sort_keys=True)
    assert a.log == b.log
    assert a.game.snapshot() == b.game.snapshot()


def test_different_seeds_give_different_games():
    digests = {summary(simulate(3, seed, "random", time_scale=20))["digest"] for seed in range(6)}
    assert len(digests) == 6
    assert simulate(3, 1, "greedy", time_scale=20).log != simulate(3, 2, "greedy", time_scale=20).log


def test_different_time_scales_and_kinds_give_different_games():
    base = summary(simulate(2, 5, "greedy", time_scale=20))
    assert summary(simulate(2, 5, "greedy", time_scale=30))["digest"] != base["digest"]
    assert summary(simulate(2, 5, "random", time_scale=20))["digest"] != base["digest"]


@pytest.mark.parametrize("kind", ["random", "greedy", "mix"])
@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_every_table_size_and_player_kind_plays_to_the_end(players, kind):
    sim = simulate(players, 3, kind, time_scale=15)
    assert sim.game.over
    out = summary(sim)
    assert set(out) == SUMMARY_KEYS
    assert out["players"] == players and len(out["dollars"]) == players
    assert out["kinds"] == player_kinds(players, kind)
    assert out["reason"] == "clock"
    assert out["game_ms"] == sim.game.now == sim.game.cfg.game_ms
    assert sum(out["dollars"]) + out["company_dollars"] == 7_760
    assert out["winners"] and all(out["dollars"][w] == max(out["dollars"]) for w in out["winners"])
    assert out["turns"] >= 1 and out["rejected"] == 0


def test_summary_counts_match_the_log():
    sim = simulate(3, 8, "greedy", time_scale=10)
    out = summary(sim)
    cmds = [e for e in sim.log if e[0] == "cmd"]
    assert out["actions"] == sim.actions == len(cmds)
    assert out["digest"] == sim.game.digest()
    assert out["seed"] == 8 and out["game"] == "parsimonia"


def test_log_is_in_time_order_and_replays_to_the_same_state():
    sim = simulate(5, 21, "mix", time_scale=10)
    times = [e[1] for e in sim.log]
    assert times == sorted(times)
    assert {e[0] for e in sim.log} == {"cmd", "tick"}
    g = new_game("parsimonia", 5, 21, time_scale=10)
    for entry in sim.log:
        g.advance(entry[1])
        if entry[0] == "cmd":
            g.apply(entry[2], entry[3], entry[1])
    assert g.digest() == sim.game.digest()


def test_players_think_before_they_act():
    sim = simulate(2, 4, "greedy", time_scale=10)
    first = next(e for e in sim.log if e[0] == "cmd")
    assert first[1] >= THINK_MS["greedy"][0]


def test_player_kinds_alternate_in_a_mix():
    assert player_kinds(5, "mix") == ["greedy", "random", "greedy", "random", "greedy"]
    assert player_kinds(3, "random") == ["random"] * 3


@pytest.mark.parametrize("players", [0, 1, 7])
def test_a_table_of_the_wrong_size_is_refused(players):
    with pytest.raises(ValueError):
        simulate(players, 1)


def test_a_deck_option_replaces_the_default_deck():
    deck = {
        "resources": [{"type": 1, "profit": 10}, {"type": 2, "profit": 20}, {"type": 1, "profit": 30}],
        "tourists": [{"type": 1, "profit": 5}, {"type": 2, "profit": 15}],
    }
    sim = simulate(2, 1, "greedy", {"deck": deck}, time_scale=20)
    assert sim.game.over and sim.rejected == 0
    assert sorted(sim.game.cards) == [0, 1, 2, 3, 4]
    assert sum(len(h) for h in new_game("parsimonia", 2, 1).hands) == 60  # the default deck is untouched


def test_a_bad_deck_is_refused():
    with pytest.raises(ValueError, match="deck"):
        simulate(2, 1, options={"deck": {"resources": [], "tourists": [{"type": 1, "profit": 1}]}})
