"""What the Kupcy engine can say or refuse is written down where users read it."""

import ast
from pathlib import Path

from server.games.kupcy import Kupcy

ROOT = Path(__file__).resolve().parents[3]
SPEC = (ROOT / "protocol" / "SPEC.md").read_text()
RULES = (ROOT / "docs" / "rules" / "kupcy.md").read_text()
BRIEF_CHARTERS = ["robbery", "shipwreck", "duty", "fire", "turmoil", "invasion", "gambling_loss", "fraud", "tithe",
                  "theft"]
KUPCY_SPEC = SPEC.split("### Kupcy", 1)[1]
ENGINE_SOURCES = sorted((ROOT / "server/games/kupcy").glob("*.py")) + [ROOT / "server/games/machines/sealed.py",
                                                                      ROOT / "server/games/base.py"]


def _first_string_args(func_name: str) -> set[str]:
    found = set()
    for path in ENGINE_SOURCES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
                if name == func_name and isinstance(node.args[0].value, str):
                    found.add(node.args[0].value)
    return found


def test_every_command_and_option_in_spec_and_rules():
    for command in Kupcy.COMMANDS:
        assert f"| `{command}` |" in KUPCY_SPEC, command
        assert f"`{command}`" in RULES, command
    for option in Kupcy.OPTIONS:
        assert f"| `{option}` |" in KUPCY_SPEC, option
        assert f"`{option}`" in RULES, option


def test_every_event_type_in_spec():
    events = _first_string_args("_emit")
    assert {"offer_made", "offers_revealed", "rebid", "trade_closed", "charter", "game_ended"} <= events
    for event in events:
        assert f"`{event}`" in KUPCY_SPEC, event


def test_every_refusal_code_in_rules_document():
    codes = _first_string_args("IllegalAction") - {"not_in_game"}
    assert {"cannot_offer", "already_chosen", "no_choice_owed", "not_your_turn", "game_over"} <= codes
    for code in codes:
        assert f"| `{code}` |" in RULES, code


def test_every_charter_of_the_brief_is_in_the_rules_document_with_its_data():
    for name in BRIEF_CHARTERS:
        assert f"| `{name}` |" in RULES, name
    assert "Where this differs from the sources" in RULES
