"""Every example in protocol/SPEC.md is a message the server would accept or could send.

Each fenced block in the document follows a marker, ``<!-- example: KIND -->``:

* ``client``: one client message; it must parse (``protocol.messages.parse_client``) and an ``act``'s
  command must fit the game's command catalogue;
* ``server``: one server message; it must fit ``SERVER_REPLIES`` / ``SERVER_PUSHES``, name only games the
  server runs, error codes it has, and (in a view) only legal templates of the game's commands;
* ``event``: one game event map (``event.event``), of a type the game's event table lists, with only the
  fields listed for it;
* ``session``: a transcript, one message a line, ``→`` client to server and ``←`` server to client, each
  checked as above, every reply answering a request sent before it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from protocol.errors import ERROR_CODES
from protocol.messages import PROTOCOL_VERSION, SERVER_PUSHES, SERVER_REPLIES, parse_client
from server.games import GAMES
from server.games.base import parse_command

SPEC = (Path(__file__).resolve().parents[2] / "protocol" / "SPEC.md").read_text()
FENCE = re.compile(r"^(?:<!-- example: (\w+) -->\n)?```(\w*)\n(.*?)\n```$", re.M | re.S)
COMMON_EVENTS = {"game_started": {"seats"}, "result": {"result"}, "paused": set(), "resumed": {"deadline"}}
GAME = "parsimonia"


def examples() -> list[tuple[str | None, str, str]]:
    """``(kind, language, text)`` of every fenced block, in order."""
    return [(m.group(1), m.group(2), m.group(3)) for m in FENCE.finditer(SPEC)]


def event_fields(game: str) -> dict[str, set[str]]:
    """The game's event table: each event type with the field names its row lists."""
    heading = next(line for line in SPEC.splitlines() if line.startswith("### ") and f'"{game}"' in line)
    body = SPEC[SPEC.index(heading):]
    body = body[body.index("**Events**"):]
    fields: dict[str, set[str]] = {}
    for line in body.splitlines()[3:]:
        if not line.startswith("|"):
            break
        kinds, listed = line.strip("|").split("|", 1)
        for kind in re.findall(r"`(\w+)`", kinds):
            fields[kind] = set(re.findall(r"`(\w+)`", listed))
    return fields


def check_command(command: dict[str, Any]) -> None:
    parse_command(GAMES[GAME].COMMANDS, command)


def check_template(template: dict[str, Any]) -> None:
    """A legal template, with every range at its low end, is a command the game accepts."""
    filled = {k: v["min"] if isinstance(v, dict) and set(v) == {"min", "max"} else v for k, v in template.items()}
    check_command(filled)


def check_client(msg: dict[str, Any]) -> None:
    assert parse_client(msg) == msg
    if msg["type"] == "act":
        check_command(msg["command"])


def check_event(event: dict[str, Any]) -> None:
    known = {**event_fields(GAME), **COMMON_EVENTS}
    assert event["type"] in known, event
    assert set(event) - {"type", "at"} <= known[event["type"]], event
    assert isinstance(event["at"], int)


def check_server(msg: dict[str, Any]) -> None:
    body = dict(msg)
    kind = body.pop("type")
    spec = {**SERVER_REPLIES, **SERVER_PUSHES}[kind]
    assert spec.check(body) == body
    if kind == "welcome":
        assert set(msg["games"]) <= set(GAMES)
    elif kind == "error":
        assert msg["code"] in ERROR_CODES
    elif kind == "view":
        for template in msg["legal"]:
            check_template(template)
    elif kind == "event" and msg["event"]:
        check_event(msg["event"])


def check_session(text: str) -> None:
    requests: set[int] = set()
    for line in text.splitlines():
        arrow, raw = line.split(" ", 1)
        msg = json.loads(raw)
        if arrow == "→":
            check_client(msg)
            requests.add(msg.get("id"))
        else:
            assert arrow == "←", line
            check_server(msg)
            assert "re" not in msg or msg["re"] in requests, line


CHECKS = {"client": lambda text: check_client(json.loads(text)), "server": lambda text: check_server(json.loads(text)),
          "event": lambda text: check_event(json.loads(text)), "session": check_session}


def test_every_fenced_block_is_a_marked_example():
    found = examples()
    assert len(found) > 25
    assert [kind for kind, _, _ in found if kind not in CHECKS] == []


@pytest.mark.parametrize(("kind", "text"), [(kind, text) for kind, _, text in examples()],
                         ids=lambda value: value if value in CHECKS else "")
def test_the_example_fits_the_schema(kind, text):
    CHECKS[kind](text)


def test_the_session_example_plays_a_real_command():
    (session,) = [text for kind, _, text in examples() if kind == "session"]
    acts = [json.loads(line[2:]) for line in session.splitlines() if '"type": "act"' in line]
    assert acts and all(GAMES[GAME].COMMANDS[a["command"]["type"]] for a in acts)


def test_the_checks_catch_what_was_wrong_before():
    with pytest.raises(Exception):
        check_client({"type": "act", "table": "t1", "command": {"type": "bid", "amount": 3}})
    with pytest.raises(AssertionError):
        check_server({"type": "welcome", "version": PROTOCOL_VERSION, "versions": [PROTOCOL_VERSION], "server_time": 0,
                      "games": ["parsimonia", "checkers"],
                      "limits": {"max_frame_bytes": 1, "max_str_len": 1, "max_bin_len": 0, "max_array_len": 1,
                                 "max_map_len": 1, "max_depth": 1}})
    with pytest.raises(Exception):
        check_template({"type": "pass"})
