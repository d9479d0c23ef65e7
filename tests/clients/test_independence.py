"""Nothing in ``clients/`` imports ``server/`` (#21): a bot, ``watch`` and the words run with the SDK, the protocol
and the games' client halves alone. Every file is parsed with ``ast`` (imports inside functions too), and the
clients are imported and used in a fresh interpreter that must load no ``server`` module."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLIENT_FILES = sorted(p for p in (ROOT / "clients").rglob("*.py") if "node_modules" not in p.parts)


def is_server(name: str | None) -> bool:
    return name is not None and (name == "server" or name.startswith("server."))


def server_imports(path: Path) -> list[int]:
    """The lines of ``path`` that import ``server`` or a module of it (``import``, ``from``, or by a literal name
    given to ``importlib.import_module`` / ``__import__``)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import) and any(is_server(alias.name) for alias in node.names):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and is_server(node.module):
            lines.append(node.lineno)
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str) and is_server(node.args[0].value.partition(":")[0])
              and (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module"
                   or isinstance(node.func, ast.Name) and node.func.id == "__import__")):
            lines.append(node.lineno)
    return lines


def test_the_scan_covers_every_python_client():
    rel = {p.relative_to(ROOT).as_posix() for p in CLIENT_FILES}
    assert {"clients/watch.py", "clients/narrate.py", "clients/sdk.py", "clients/games.py",
            "clients/players/__init__.py", "clients/words/parsimonia.py", "clients/words/common.py"} <= rel


def test_the_scan_finds_an_import_of_the_server_wherever_it_is(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("import json\n\ndef f():\n    from server.games import GAMES\n    import server\n"
                      "    importlib.import_module('server.games.base')\n    from serverless import x\n")
    assert server_imports(sample) == [4, 5, 6]


@pytest.mark.parametrize("path", CLIENT_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_client_module_imports_the_server(path):
    lines = server_imports(path)
    assert not lines, f"{path.relative_to(ROOT)} imports the server on line(s) {lines}"


USE_THE_CLIENTS = """
import json, sys
import clients.narrate, clients.players, clients.sdk, clients.watch
from clients.games import client_games, words_for
for name, client in client_games().items():
    words_for(name)
    for kind in clients.players.kinds_for(name):
        clients.players.make_player(kind, 1, name)
print(json.dumps(sorted(m for m in sys.modules if m == "server" or m.startswith("server."))))
"""


def test_the_clients_import_and_play_every_game_without_loading_the_server(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-c", USE_THE_CLIENTS], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == []
