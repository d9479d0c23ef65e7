"""The engines stay pure: no clock, no I/O, no global randomness, no event loop.

Every module under ``server/games`` and every project module they import (``protocol.schema`` ...) is parsed
with ``ast``; none may import a forbidden module, anywhere in the file, and only the deck loader may ``open``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENGINE_DIR = ROOT / "server" / "games"
FORBIDDEN = {"trio", "time", "socket", "random", "datetime", "asyncio", "threading", "secrets", "select", "selectors"}
MAY_OPEN = {"server/games/parsimonia/deck.py"}  # Deck.load reads an organiser's deck file


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def module_path(name: str) -> Path | None:
    base = ROOT.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imports(path: Path) -> list[tuple[str, int]]:
    """Every absolute module name ``path`` imports (relative imports resolved), with its line."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append((target, node.lineno))
            # ``from pkg import submodule`` imports the submodule too
            found += [(f"{target}.{alias.name}", node.lineno) for alias in node.names if module_path(f"{target}.{alias.name}")]
    return found


def project_modules_reached() -> dict[Path, list[tuple[str, int]]]:
    """The engine files plus every project file they import, transitively (package ``__init__``s included)."""
    todo = sorted(ENGINE_DIR.rglob("*.py"))
    seen: dict[Path, list[tuple[str, int]]] = {}
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen[path] = imports(path)
        for name, _ in seen[path]:
            parts = name.split(".")
            for i in range(1, len(parts) + 1):  # importing a.b.c runs a/__init__, a/b/__init__ too
                target = module_path(".".join(parts[:i]))
                if target is not None and target not in seen:
                    todo.append(target)
    return seen


REACHED = project_modules_reached()
ENGINE_FILES = sorted(ENGINE_DIR.rglob("*.py"))


def test_the_scan_covers_the_engine_and_what_it_imports():
    rel = {p.relative_to(ROOT).as_posix() for p in REACHED}
    assert "server/games/parsimonia/engine.py" in rel
    assert "server/games/base.py" in rel
    assert "protocol/schema.py" in rel
    assert not any(p.startswith(("server/simulate", "server/cli")) for p in rel), rel
    assert not any(p.startswith("clients/") for p in rel), rel  # the rules import nothing of the clients


@pytest.mark.parametrize("path", sorted(REACHED), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_module_imports_no_clock_io_randomness_or_event_loop(path):
    bad = [(name, line) for name, line in REACHED[path] if name.split(".")[0] in FORBIDDEN]
    assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


@pytest.mark.parametrize("path", ENGINE_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_engine_module_opens_no_file_except_the_deck_loader(path):
    rel = path.relative_to(ROOT).as_posix()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    opens = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open"
    ]
    if rel not in MAY_OPEN:
        assert not opens, f"{rel} calls open() on lines {opens}"


def test_engine_module_uses_no_builtin_hash_or_id_ordering():
    # hash() of str is salted per process and id() varies: either would break replays.
    for path in REACHED:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = [
            (node.func.id, node.lineno)
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {"hash", "id"}
        ]
        assert not calls, f"{path.relative_to(ROOT)}: {calls}"
