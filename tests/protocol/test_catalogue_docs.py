"""SPEC.md's message field tables and the web client's message types are what the catalogue writes: a field added,
removed or changed in ``protocol/client_messages.py`` or ``protocol/messages.py`` fails here until
``python -m protocol.catalogue_docs --write`` is run (and a new field's meaning written in SPEC.md)."""

from __future__ import annotations

import re

from protocol.catalogue_docs import SPEC_PATH, TS_PATH, main, spec_tables, typescript


def test_spec_field_tables_are_written_from_the_catalogue():
    text = SPEC_PATH.read_text(encoding="utf-8")
    assert spec_tables(text) == text, "run: python -m protocol.catalogue_docs --write"


def test_every_field_in_spec_has_a_meaning():
    rows = [line for line in SPEC_PATH.read_text(encoding="utf-8").splitlines() if re.match(r"\| `\w+` \|", line)]
    assert rows and not [row for row in rows if row.endswith("|  |")]


def test_the_web_clients_message_types_are_written_from_the_catalogue():
    assert TS_PATH.read_text(encoding="utf-8") == typescript(), "run: python -m protocol.catalogue_docs --write"


def test_a_table_whose_catalogue_changed_is_rewritten_keeping_its_meanings():
    text = SPEC_PATH.read_text(encoding="utf-8")
    stale = text.replace("| `seats` | int 1..16 | yes | Number of seats. |", "| `seats` | int | no | Number of seats. |")
    assert stale != text and spec_tables(stale) == text


def test_a_field_missing_from_spec_gets_a_row_to_be_written():
    text = SPEC_PATH.read_text(encoding="utf-8")
    row = "| `key` | str (1..64 chars) | no | The client's own name for this command"
    line = next(line for line in text.splitlines() if line.startswith(row))
    assert spec_tables(text.replace(line + "\n", "")) == text.replace(line, "| `key` | str (1..64 chars) | no |  |")


def test_the_command_says_what_is_stale(capsys):
    assert main([]) == 0 and capsys.readouterr().out == ""
