"""SPEC.md's message field tables and the web client's message types, written from the catalogue.

``spec_tables(text)`` rewrites each message's field table in SPEC.md (and the table of a ``tables`` entry): one row
per field, in the order the schema checks them, its type and whether it is required read from the catalogue
(``protocol.messages``); only the ``meaning`` column is prose, kept from the text by field. ``typescript()`` is
``clients/web/src/protocol/messages.ts``: a type per message, client and server. Both are committed, and
``tests/protocol/test_catalogue_docs.py`` fails when either differs from what this writes.

    .venv/bin/python -m protocol.catalogue_docs [--write]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from protocol.messages import CLIENT_MESSAGES, SERVER_PUSHES, SERVER_REPLIES, TABLE_SUMMARY
from protocol.schema import AnyMap, Bool, Enum, Float, Int, List, Nullable, Pattern, Record, Spec, Str

ROOT = Path(__file__).resolve().parent.parent
SPEC_PATH = ROOT / "protocol" / "SPEC.md"
TS_PATH = ROOT / "clients" / "web" / "src" / "protocol" / "messages.ts"
HEADER = "| field | type | required | meaning |"
PARTS = {"## Client messages": CLIENT_MESSAGES, "## Server messages": {**SERVER_REPLIES, **SERVER_PUSHES}}
ENTRY_OF_TABLES = "Each entry of `tables`:"


def spec_tables(text: str) -> str:
    """``text`` (SPEC.md) with every message's field table written from the catalogue."""
    lines = text.split("\n")
    out: list[str] = []
    catalogue: dict[str, Record] | None = None
    record: Record | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            catalogue, record = PARTS.get(line), None
        elif line.startswith("### ") and catalogue is not None:
            record = catalogue.get(line[4:])
        previous = next((seen for seen in reversed(out) if seen), "")
        spec = TABLE_SUMMARY if previous == ENTRY_OF_TABLES and catalogue is not None else record
        if line == HEADER and spec is not None:
            end = i
            while end < len(lines) and lines[end].startswith("|"):
                end += 1
            out += _table(spec, _meanings(lines[i + 2:end]))
            record = None if spec is record else record  # a message's first table is its fields'
            i = end
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


def _meanings(rows: list[str]) -> dict[str, str]:
    meanings = {}
    for row in rows:
        cells = [cell.strip() for cell in row.strip().strip("|").split(" | ")]
        meanings[cells[0].strip("`")] = cells[-1]
    return meanings


def _table(spec: Record, meanings: dict[str, str]) -> list[str]:
    rows = [HEADER, "|---|---|---|---|"]
    for required, fields in ((True, spec.required), (False, spec.optional)):
        for name, field in fields.items():
            meaning = meanings.get(name, "")
            rows.append(f"| `{name}` | {field.describe()} | {'yes' if required else 'no'} | {meaning} |")
    return rows


def typescript() -> str:
    """The message types of ``clients/web/src/protocol/messages.ts``."""
    parts = ["// Written by `python -m protocol.catalogue_docs --write` from the protocol's catalogue",
             "// (protocol/messages.py): do not edit. Every message a client sends and the server sends, by `type`.", ""]
    unions = []
    for side, catalogue in (("Client", CLIENT_MESSAGES), ("Server", {**SERVER_REPLIES, **SERVER_PUSHES})):
        names = []
        for kind, spec in catalogue.items():
            name = side + "".join(word.capitalize() for word in kind.split("_")) + "Message"
            names.append(name)
            parts.append(f"export type {name} = {_record_ts(spec, kind)};")
        unions.append(f"export type {side}Message = {' | '.join(names)};")
    parts += ["", f"export type TableSummary = {_record_ts(TABLE_SUMMARY, None)};", "", *unions, ""]
    return "\n".join(parts)


def _record_ts(spec: Record, kind: str | None) -> str:
    fields = [] if kind is None else [f'type: "{kind}"']
    fields += [f"{name}: {_ts(field)}" for name, field in spec.required.items()]
    fields += [f"{name}?: {_ts(field)}" for name, field in spec.optional.items()]
    return "{ " + "; ".join(fields) + " }" if fields else "{}"


def _ts(spec: Spec) -> str:
    if isinstance(spec, (Int, Float)):
        return "number"
    if isinstance(spec, Bool):
        return "boolean"
    if isinstance(spec, (Str, Pattern)):
        return "string"
    if isinstance(spec, Enum):
        return " | ".join(f'"{value}"' for value in spec.values)
    if isinstance(spec, Nullable):
        return f"{_ts(spec.inner)} | null"
    if isinstance(spec, List):
        inner = _ts(spec.item)
        return f"({inner})[]" if " | " in inner and not inner.startswith("{") else f"{inner}[]"
    if isinstance(spec, AnyMap):
        return "Record<string, unknown>"
    if isinstance(spec, Record):
        return _record_ts(spec, None)
    raise TypeError(f"no TypeScript type for {spec!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write SPEC.md's tables and messages.ts in place")
    args = parser.parse_args(argv)
    wanted = {SPEC_PATH: spec_tables(SPEC_PATH.read_text(encoding="utf-8")), TS_PATH: typescript()}
    stale = [path for path, text in wanted.items() if not path.exists() or path.read_text(encoding="utf-8") != text]
    for path in stale:
        if args.write:
            path.write_text(wanted[path], encoding="utf-8")
        print(f"{'written' if args.write else 'stale'}: {path.relative_to(ROOT)}")
    return 1 if stale and not args.write else 0


if __name__ == "__main__":
    sys.exit(main())
