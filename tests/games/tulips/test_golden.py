"""Golden Gift of Tulips games: stored command logs replay to their stored digests, and the live simulation
still makes them. If a change was intended, rewrite them with ``.venv/bin/python -m tests.games.tulips.make_golden``
and review the diff."""

from __future__ import annotations

import json

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
    for key in RESULT_KEYS[:-2]:
        assert result[key] == doc["result"][key], key
    assert sum(e[0] == "cmd" for e in doc["log"]) == doc["result"]["actions"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_live_simulation_still_produces_the_stored_file(name):
    assert dumps(record(name)) == path_of(name).read_text(encoding="utf-8")
    assert json.loads(json.dumps(play(CASES[name]).log)) == load(name)["log"]


def test_a_tampered_log_does_not_reach_the_digest():
    doc = load("4p_greedy")
    for entry in doc["log"]:
        if entry[0] == "cmd" and entry[3]["type"] == "give":
            entry[3]["to"] = (entry[3]["to"] + 1) % doc["players"]
            break
    else:
        pytest.fail("no give in the log to tamper with")
    try:
        g = replay(doc)
    except (IllegalAction, SchemaError):
        return
    assert g.digest() != doc["digest"]
