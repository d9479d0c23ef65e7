"""Each human's permanent link: where they play now, that they wait for the next round, or that it is over."""

from __future__ import annotations

import tomllib
from pathlib import Path

from server.tournament.guide import entrant_key, guides, page_link, topic
from server.tournament.roster import parse_roster
from server.tournament.store import Store

ROSTER = """\
name = "cup"
rounds = 2
table_size = 2
[[entrant]]
name = "Ada"
human = true
[[entrant]]
name = "bot-1"
bot = ["x", "{token}"]
"""


def test_the_key_is_the_same_for_an_entrant_every_time_and_differs_by_entrant_and_admin_token():
    key = entrant_key("a" * 24, "cup", 1)
    assert len(key) == 32 and key == entrant_key("a" * 24, "cup", 1)
    assert len({key, entrant_key("a" * 24, "cup", 2), entrant_key("b" * 24, "cup", 1)}) == 3
    assert len(topic(key)) <= 64  # a bulletin topic
    assert page_link("ws://10.0.0.2:8765", key) == f"http://10.0.0.2:8765/#me/{key}"


def test_a_human_is_told_the_table_then_to_wait_for_the_next_round_then_that_it_is_over(tmp_path: Path):
    roster = parse_roster(tomllib.loads(ROSTER), "cup.toml", ROSTER)
    with Store(tmp_path / "t.sqlite") as store:
        snap = store.begin(roster, 1)
        assert guides(snap) == {1: {"tournament": "cup", "name": "Ada", "round": 0, "state": "waiting",
                                    "next_round": 1}}  # bots have no link
        for number, sid in ((1, "t1"), (2, "t2")):
            store.start_round(number, [[2, 1]], snap.table_seeds(number, 1, store.secret()))
            store.table_started(number, 1, sid, ["bot-token", f"ada-{sid}"], held=False)
            playing = guides(store.load())[1]
            assert playing == {"tournament": "cup", "name": "Ada", "round": number, "state": "playing",
                               "table": sid, "seat": 1, "token": f"ada-{sid}"}
            store.record_result(sid, {"winners": [0], "scores": [3, 1]})
            after = guides(store.load())[1]
            assert after["state"] == ("waiting" if number == 1 else "finished"), after
            assert "token" not in after
        assert guides(store.load())[1] == {"tournament": "cup", "name": "Ada", "round": 2, "state": "finished"}
