"""Golden Kupcy games: stored command logs replay to their stored digests, and the live simulation still makes
them. If a change was intended, rewrite the files with ``.venv/bin/python -m tests.games.kupcy.make_golden``."""

from __future__ import annotations

import pytest

from protocol.schema import SchemaError
from server.games import IllegalAction

from .make_golden import CASES, GAME, RESULT_KEYS, dumps, load, path_of, play, record, replay


@pytest.mark.parametrize("name", sorted(CASES))
def test_stored_log_replays_to_the_stored_digest(name):
    doc = load(name)
    assert doc["name"] == name and doc["game"] == GAME and path_of(name).stat().st_size < 200_000
    g = replay(doc)
    assert g.over and g.digest() == doc["digest"]
    result = g.result()
    for key in ("winners", "scores", "reason", "turns", "owned"):
        assert result[key] == doc["result"][key], key
    assert sum(e[0] == "cmd" for e in doc["log"]) == doc["result"]["actions"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_live_simulation_still_produces_the_stored_file(name):
    assert dumps(record(name)) == path_of(name).read_text(encoding="utf-8")
    assert set(RESULT_KEYS) == set(load(name)["result"])


def test_a_tampered_log_does_not_reach_the_digest():
    doc = load("4p_greedy")
    entry = next(e for e in doc["log"] if e[0] == "cmd" and e[3]["type"] == "offer")
    entry[3]["card"] = (entry[3]["card"] + 1) % 90
    try:
        g = replay(doc)
    except (IllegalAction, SchemaError):
        return
    assert g.digest() != doc["digest"]


def test_the_simulation_is_played_by_its_kinds():
    sim = play(CASES["6p_mix"])
    assert sim.kinds == ["greedy", "random"] * 3 and sim.rejected == 0
