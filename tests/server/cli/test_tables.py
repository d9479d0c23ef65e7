"""``parsimonia tables --url ...``, run as a real process against a real server."""

from __future__ import annotations

import json

import trio

from clients.sdk import request_once
from tests.server.cli.test_errors import run, server_url  # noqa: F401 (fixture)


def test_tables_lists_id_game_seats_taken_state_and_spectators(tmp_path, server_url):
    code, out, err = run("tables", "--url", server_url, cwd=tmp_path)
    assert code == 0 and out.startswith("no tables on ")
    trio.run(lambda: request_once(server_url, "create", game="parsimonia", seats=3))
    code, out, err = run("tables", "--url", server_url, cwd=tmp_path)
    assert code == 0 and err == ""
    assert out.splitlines() == ["table    game         seats  state    spectators",
                                "t1       parsimonia    0/3   waiting  0"]
    trio.run(lambda: request_once(server_url, "create", game="gift-of-tulips", seats=2))
    code, out, err = run("tables", "--url", server_url, cwd=tmp_path)
    header, *rows = out.splitlines()
    assert rows[1].startswith("t2       gift-of-tulips   0/2   waiting  0")
    assert [row.index("waiting") for row in rows] == [header.index("state")] * 2  # the columns line up
    code, out, err = run("tables", "--url", server_url, "--json", cwd=tmp_path)
    first = json.loads(out)[0]
    assert first == {"table": "t1", "game": "parsimonia", "seats": 3, "taken": 0, "state": "waiting",
                     "spectators": 0, "paused": False,
                     "expires": first["expires"]}  # server time: 10 minutes after its creation
    assert first["expires"] >= 600_000
