"""Golden games: stored command logs replay to their stored digests, and the live simulation still makes them.

A failure here means the rules, the random generator, the players or the simulator changed behaviour. If the
change was intended, rewrite the files with ``.venv/bin/python -m tests.games.parsimonia.make_golden`` and
review the diff.
"""

from __future__ import annotations

import json

import pytest

from protocol.schema import SchemaError
from server.games import IllegalAction

from .make_golden import CASES, RESULT_KEYS, dumps, load, path_of, play, record, replay


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_file_is_small_and_names_its_table(name):
    path = path_of(name)
    assert path.stat().st_size < 200_000
    doc = load(name)
    assert doc["name"] == name and doc["game"] == "parsimonia"
    for key, value in CASES[name].items():
        assert doc[key] == value, key
    assert len(doc["digest"]) == 64
    assert doc["log"] and doc["log"][-1][0] == "tick"  # every game here ends by the game clock


@pytest.mark.parametrize("name", sorted(CASES))
def test_stored_log_replays_to_the_stored_digest(name):
    doc = load(name)
    g = replay(doc)
    assert g.over
    assert g.digest() == doc["digest"]
    result = g.result()
    for key in ("winners", "dollars", "company_dollars", "reason", "turns"):
        assert result[key] == doc["result"][key], key
    assert g.now == doc["result"]["game_ms"]
    assert sum(e[0] == "cmd" for e in doc["log"]) == doc["result"]["actions"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_live_simulation_still_produces_the_stored_log(name):
    doc = load(name)
    sim = play(CASES[name])
    # compare through JSON: the stored file is JSON, and the log must survive it unchanged
    assert json.loads(json.dumps(sim.log)) == doc["log"]
    assert sim.game.digest() == doc["digest"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_generator_writes_the_file_byte_for_byte(name):
    assert dumps(record(name)) == path_of(name).read_text(encoding="utf-8")
    assert set(RESULT_KEYS) == set(load(name)["result"])


def test_a_tampered_log_does_not_reach_the_digest():
    doc = load("2p_random")
    for i, entry in enumerate(doc["log"]):
        if entry[0] == "cmd" and entry[3]["type"] == "give":
            entry[3]["amount"] -= 1 if entry[3]["amount"] > 1 else -1
            break
    else:
        pytest.fail("no gift in the log to tamper with")
    try:
        g = replay(doc)
    except (IllegalAction, SchemaError):
        return  # the changed command, or a later one, was refused: also a mismatch
    assert g.digest() != doc["digest"]
