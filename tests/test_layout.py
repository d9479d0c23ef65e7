"""The layout rules of issues #21 and #39, read from the source with ``ast``: no class of the runtime, match or
session (``server/`` outside ``server/games/``) with more than 20 methods; no module in ``server/`` or
``protocol/`` over 500 lines; no circle of imports among ``server/``, ``protocol/`` and ``clients/``, counting
every import a module spells (under ``if TYPE_CHECKING:`` and inside functions too: a lower module that needs
a higher one takes a port, ``server/runtime/ports.py``); nothing there imports ``bench``, and the rules
(``server/games``) never import ``clients``. Each check names what breaks it."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_METHODS = 20
MAX_LINES = 500
PACKAGES = ("server", "protocol", "clients")


def _modules(*packages: str) -> Iterator[Path]:
    for package in packages:
        yield from sorted((ROOT / package).rglob("*.py"))


def _name(path: Path) -> str:
    """``server/transport/websocket.py`` -> ``server.transport.websocket``; a package is its ``__init__``'s."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def methods_over(limit: int, source: str) -> list[tuple[str, int]]:
    """Each class in ``source`` with more than ``limit`` methods (the functions and async functions in its body,
    properties included), and how many it has."""
    return [(node.name, count) for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ClassDef)
            if (count := sum(isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) for item in node.body)) > limit]


def imported(source: str, package: str) -> set[str]:
    """The modules that ``source``, a module of ``package``, names in its imports, wherever they stand: as it
    loads, under ``if TYPE_CHECKING:`` (its annotations depend on them all the same) or inside a function (a
    deferred import is still a dependency). ``from X import name`` counts ``X`` and ``X.name``, which may be a
    submodule."""
    targets: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            targets.add(origin)
            targets.update(f"{origin}.{alias.name}" for alias in node.names)
    return targets


def import_graph() -> dict[str, set[str]]:
    """Each module of ``PACKAGES`` -> the modules of ``PACKAGES`` it imports (``imported``)."""
    paths = {_name(path): path for path in _modules(*PACKAGES)}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        graph[name] = {target for target in imported(path.read_text(), package) if target in paths and target != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_runtime_class_has_more_than_20_methods():
    games = ROOT / "server" / "games"
    over = [f"{_name(path)}.{name}: {count} methods" for path in _modules("server") if games not in path.parents
            for name, count in methods_over(MAX_METHODS, path.read_text())]
    assert over == [], f"classes over {MAX_METHODS} methods: {over}"


def test_no_module_of_the_server_or_the_protocol_is_over_500_lines():
    over = {str(path.relative_to(ROOT)): n for path in _modules("server", "protocol")
            if (n := len(path.read_text().splitlines())) > MAX_LINES}
    assert over == {}, f"modules over {MAX_LINES} lines: {over}"


def test_no_circle_of_imports_even_for_annotations_or_deferred():
    assert circles(import_graph()) == []


def test_the_checks_see_what_breaks_them():
    fat = ("class Fat:\n" + "".join(f"    def m{i}(self): ...\n" for i in range(MAX_METHODS)) +
           "    @property\n    def p(self): ...\n    async def a(self): ...\n"
           "    class Inner:\n        pass\n"
           "class Lean:\n    def m(self): ...\n")
    assert methods_over(MAX_METHODS, fat) == [("Fat", MAX_METHODS + 2)]
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []
    hidden = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from server.runtime.app import Server\n"
              "def later():\n    from . import lobby\n    import protocol.codec\n")
    assert {"server.runtime.app", "server.runtime.lobby", "protocol.codec"} <= imported(hidden, "server.runtime")
    sample = "import clients.games\ndef f():\n    from ..cli import m\n"
    assert {"clients.games", "server.cli"} <= imported(sample, "server.games")


def _importers(packages: tuple[str, ...], of: str) -> list[str]:
    def package(path: Path) -> str:
        return _name(path) if path.name == "__init__.py" else _name(path).rpartition(".")[0]

    return [_name(path) for path in _modules(*packages) if any(
        name == of or name.startswith(of + ".") for name in imported(path.read_text(), package(path)))]


def test_the_product_never_imports_bench():
    assert _importers(PACKAGES, "bench") == []  # `parsimonia bench` is found by its entry point


def test_the_rules_never_import_the_clients():
    assert _importers(("server/games",), "clients") == []


# The layers, lowest first: a module may import its own layer's and those below it, never one above. ``server``'s
# loose modules (``server/plugins.py``, ``server/faults.py``) and its packages' ``__init__`` are outside the order.
LAYERS = ("protocol", "clients", "server.ops", "server.transport", "server.games", "server.core", "server.storage",
          "server.ratings", "server.runtime", "server.cluster", "server.tournament", "server.cli")
# Imports that go up, each with why it may: (importer's layer, imported module)
UPWARD = {
    # the ladder's model scores a tournament's games as its standings do; typed by the tournament's records
    ("server.ratings", "server.tournament.standings"), ("server.ratings", "server.tournament.store"),
}


def layer_of(module: str) -> str | None:
    """The layer of ``LAYERS`` that ``module`` belongs to, None outside them."""
    found = [layer for layer in LAYERS if module == layer or module.startswith(layer + ".")]
    return max(found, key=len) if found else None


def upward_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(importer, imported) for every import of a module in a layer above the importer's, ``UPWARD`` aside."""
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    wrong = []
    for importer, targets in sorted(graph.items()):
        mine = layer_of(importer)
        for target in sorted(targets):
            theirs = layer_of(target)
            if mine is None or theirs is None or importer.count(".") < 2 and importer.startswith("server."):
                continue
            if target.count(".") < 2 and target.startswith("server."):
                continue  # a package itself (its ``__init__``), named by ``from server.x import module``
            if rank[theirs] > rank[mine] and (mine, target) not in UPWARD:
                wrong.append((importer, target))
    return wrong


def test_every_import_goes_down_the_layers_or_is_named_as_an_exception():
    assert upward_imports(import_graph()) == []


def test_the_layer_check_sees_an_import_going_up():
    graph = {"server.core.match": {"server.runtime.table", "protocol.codec"}, "server.cli.main": {"server.core.match"}}
    assert upward_imports(graph) == [("server.core.match", "server.runtime.table")]


def test_at_most_8_modules_lie_loose_in_the_server_folder():
    loose = [p.name for p in (ROOT / "server").glob("*.py") if p.name != "__init__.py"]
    assert len(loose) <= 8, loose
