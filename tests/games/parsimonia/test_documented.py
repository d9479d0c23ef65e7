"""What the engine can say or refuse is written down where users read it."""

import ast
from pathlib import Path

from server.games.parsimonia import Parsimonia

ROOT = Path(__file__).resolve().parents[3]
SPEC = (ROOT / "protocol" / "SPEC.md").read_text()
RULES = (ROOT / "docs" / "rules" / "parsimonia.md").read_text()
PARSIMONIA_SPEC = SPEC.split("### Parsimonia", 1)[1].split("\n### ", 1)[0]  # up to the next game's section
ENGINE_SOURCES = sorted((ROOT / "server/games/parsimonia").glob("*.py")) + [ROOT / "server/games/machines/auction.py"]


def _first_string_args(func_name: str) -> set[str]:
    found = set()
    for path in ENGINE_SOURCES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
                if name == func_name and isinstance(node.args[0].value, str):
                    found.add(node.args[0].value)
    return found


def test_every_command_in_spec():
    for command in Parsimonia.COMMANDS:
        assert f"| `{command}` |" in PARSIMONIA_SPEC, command


def test_every_option_in_spec():
    for option in Parsimonia.OPTIONS:
        assert f"| `{option}` |" in PARSIMONIA_SPEC, option


def test_every_event_type_in_spec():
    events = _first_string_args("_emit")
    assert {"bid", "auction_closed", "card_placed", "game_ended", "bid_lapsed", "placement_owed"} <= events
    for event in events:
        assert f"`{event}`" in PARSIMONIA_SPEC, event


def test_every_refusal_code_in_rules_document():
    codes = _first_string_args("IllegalAction")
    assert {"bid_too_low", "over_committed", "not_your_turn", "not_bought", "game_over"} <= codes
    for code in codes:
        assert f"| `{code}` |" in RULES, code


def test_every_command_and_event_in_rules_document():
    for command in Parsimonia.COMMANDS:
        assert f"`{command}`" in RULES, command
    for event in ("bid_lapsed", "placement_owed"):
        assert f"`{event}`" in RULES, event
