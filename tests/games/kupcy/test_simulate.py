"""``simulate --game kupcy``: whole games in process, 3 to 6 players, the same seed giving the same game."""

from __future__ import annotations

import json

import pytest

from server.cli.simulate import simulate, summary


@pytest.mark.parametrize("players", [3, 4, 5, 6])
@pytest.mark.parametrize("kind", ["random", "greedy", "mix"])
def test_a_fixed_seed_gives_the_same_game_byte_for_byte(players, kind):
    one = simulate(players, 9, kind, game="kupcy", time_scale=10)
    two = simulate(players, 9, kind, game="kupcy", time_scale=10)
    assert one.log == two.log and json.dumps(summary(one)) == json.dumps(summary(two))
    out = summary(one)
    assert out["game"] == "kupcy" and out["reason"] == "last_round" and len(out["scores"]) == players
    assert out["rejected"] == 0 and out["winners"]


def test_different_seeds_give_different_games():
    assert len({summary(simulate(4, seed, "greedy", game="kupcy", time_scale=10))["digest"]
                for seed in range(5)}) == 5
