"""What the Gift of Tulips engine can say or refuse is written down where users read it."""

import ast
from pathlib import Path

from server.games.tulips import Tulips
from tests.protocol.test_spec_examples import event_fields

ROOT = Path(__file__).resolve().parents[3]
SPEC = (ROOT / "protocol" / "SPEC.md").read_text()
RULES = (ROOT / "docs" / "rules" / "gift-of-tulips.md").read_text()
TULIPS_SPEC = SPEC.split("### Gift of Tulips", 1)[1].split("\n### ", 1)[0]  # to the next game's section
ENGINE_SOURCES = sorted((ROOT / "server/games/tulips").glob("*.py")) + [ROOT / "server/games/machines/sealed.py"]


def _calls(func_name: str) -> list[ast.Call]:
    found = []
    for path in ENGINE_SOURCES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
                if name == func_name:
                    found.append(node)
    return found


def _first_string_args(func_name: str) -> set[str]:
    return {c.args[0].value for c in _calls(func_name)
            if c.args and isinstance(c.args[0], ast.Constant) and isinstance(c.args[0].value, str)}


def test_every_command_and_option_in_spec():
    for command in Tulips.COMMANDS:
        assert f"| `{command}` |" in TULIPS_SPEC, command
    for option in Tulips.OPTIONS:
        assert f"| `{option}` |" in TULIPS_SPEC and f"`{option}`" in RULES, option


def test_every_event_type_in_spec_with_its_fields():
    events = _first_string_args("_emit")
    assert {"chosen", "card_drawn", "hidden", "majority", "game_ended"} <= events
    listed = event_fields("gift-of-tulips")
    assert events == set(listed)
    for call in _calls("_emit"):
        if call.args and isinstance(call.args[0], ast.Constant) and call.args[0].value in listed:
            fields = {k.arg for k in call.keywords if k.arg}
            assert fields <= listed[call.args[0].value], call.args[0].value
    assert listed["chosen"] == {"seat", "choice"}  # the sealed machine's event, by ``chosen_event``


def test_every_view_key_in_spec():
    g = Tulips.create(3, 1)
    for key in [*g.static(), *g.public_view(), *g.private_view(0)]:
        assert f"`{key}`" in TULIPS_SPEC, key


def test_every_refusal_code_in_rules_document():
    codes = _first_string_args("IllegalAction")
    assert {"not_your_turn", "action_used", "already_chosen", "no_choice_owed", "game_over"} <= codes
    for code in codes:
        assert f"| `{code}` |" in RULES, code


def test_every_command_and_event_in_rules_document():
    for command in Tulips.COMMANDS:
        assert f"`{command}`" in RULES, command
    for event in ("card_drawn", "hidden", "timed_out", "secret_revealed", "majority"):
        assert f"`{event}`" in RULES, event
