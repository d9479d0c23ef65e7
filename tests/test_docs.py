"""The documents hold: every relative link points at a file (and heading) that exists, every backquoted path and
module-qualified name names something in the tree, and every limit's default is written as the code has it, once
for operators (the table in docs/operations.md) and once for clients (protocol/SPEC.md's Transport)."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

from server.runtime import requests

from server.runtime import turns
from server.runtime.app import ServerConfig
from server.cli.args import build_parser
from server.transport.limits import ClientLimits
from server.transport import burst, http, sockets, websocket, wsreader

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted({ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md", ROOT / "bench" / "README.md",
                *(ROOT / "docs").glob("*.md")})
LINKED = sorted({*PAGES, ROOT / "protocol" / "SPEC.md", *(ROOT / "docs" / "rules").glob("*.md")})
PACKAGES = ("server", "protocol", "clients", "bench", "tests")
TOP = (*PACKAGES, "docs", "examples")
# made by a build or a run, not in a clone (make web, the bench's Colyseus baseline, a bench run): named all the same
BUILT = ("clients/web/dist", "bench/colyseus/node_modules", "bench/results/latest.", "bench/results/scale.")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
CODE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")


def prose(page: Path) -> str:
    """The page without its fenced code blocks (what is in them is code, not a reference)."""
    return FENCE.sub("", page.read_text())


def slugs(page: Path) -> set[str]:
    """The anchors GitHub gives the page's headings: lower case, punctuation dropped, spaces as hyphens, a
    repeated heading numbered."""
    found: set[str] = set()
    counts: dict[str, int] = {}
    for line in prose(page).splitlines():
        if m := re.match(r"#{1,6} (.*)", line):
            slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            n = counts[slug] = counts.get(slug, -1) + 1
            found.add(slug if n == 0 else f"{slug}-{n}")
    return found


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in LINK.findall(prose(page)):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        if not where.exists():
            broken.append(f"{target}: no such file")
        elif anchor and where.suffix == ".md" and anchor not in slugs(where):
            broken.append(f"{target}: no heading #{anchor} in {where.name}")
    return broken


@pytest.mark.parametrize("page", LINKED, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_points_at_a_file_and_heading_that_exist(page: Path):
    assert broken_links(page) == []


def test_a_broken_link_and_a_missing_heading_are_found(tmp_path: Path):
    (tmp_path / "b.md").write_text("# B\n\n## The `x` part\n")
    page = tmp_path / "a.md"
    page.write_text("[ok](b.md) [ok](b.md#the-x-part) [no](c.md) [no](b.md#y) ![no](i.png) [web](https://x.y/z)\n"
                    "```\n[in code](d.md)\n```\n")
    assert broken_links(page) == ["c.md: no such file", "b.md#y: no heading #y in b.md", "i.png: no such file"]


# --- names in backquotes ----------------------------------------------------------------------------------------


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text())


@cache
def _classes() -> dict[str, list[ast.ClassDef]]:
    """Every class in the packages, by name."""
    found: dict[str, list[ast.ClassDef]] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "node_modules" in path.parts:
                continue
            for node in ast.walk(_tree(path)):
                if isinstance(node, ast.ClassDef):
                    found.setdefault(node.name, []).append(node)
    return found


def _members(cls: ast.ClassDef) -> set[str]:
    """What a class defines: its methods, class attributes, annotated fields and ``self.x`` set in a method."""
    names: set[str] = set()
    for node in cls.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    for inner in ast.walk(cls):
        if isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Name) and inner.value.id == "self" \
                and isinstance(inner.ctx, ast.Store):
            names.add(inner.attr)
    return names


def _has(class_name: str, member: str, seen: frozenset[str] = frozenset()) -> bool:
    """Whether a class of that name (or a class it derives from) has ``member``."""
    for cls in _classes().get(class_name, []):
        if member in _members(cls):
            return True
        bases = {b.id if isinstance(b, ast.Name) else b.attr for b in cls.bases if isinstance(b, ast.Name | ast.Attribute)}
        if any(_has(base, member, seen | {class_name}) for base in bases - seen - {class_name}):
            return True
    return False


def _module(parts: list[str]) -> tuple[Path | None, list[str]]:
    """The longest leading run of ``parts`` that names a module or package of the tree, and the rest."""
    for i in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:i])
        for candidate in (base.with_suffix(".py"), base / "__init__.py", base):
            if candidate.exists():
                return candidate, parts[i:]
    return None, parts


def resolves(dotted: str) -> bool:
    """Whether ``server.storage.journal.Syncer``, ``clients.sdk:play`` or ``server.core.match.Match.act`` names something."""
    module, rest = _module(dotted.replace(":", ".").split("."))
    if module is None:
        return False
    if not rest:
        return True
    if module.is_dir():
        return False
    name, *more = rest
    for node in _tree(module).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == name:
            return not more or isinstance(node, ast.ClassDef) and len(more) == 1 and _has(name, more[0])
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets) \
                or isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            return not more
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    return resolves(".".join([node.module, alias.name, *more]))
    return False


def stale_names(page: Path) -> list[str]:
    """The backquoted paths in the tree that do not exist, and the dotted names of the tree that name nothing."""
    stale = []
    for text in CODE.findall(prose(page)):
        text = text.strip()
        if " " in text or text.startswith(("-", "$")):
            continue
        if text.split("/")[0] in TOP and "/" in text:
            path = text.split(":")[0].rstrip("/")
            if any(c in path for c in "*?[{|<") or path.startswith(BUILT):
                continue
            if not (ROOT / path).exists():
                stale.append(text)
        elif re.fullmatch(r"[A-Za-z_]\w*([.:][A-Za-z_]\w*)+(\(\))?", text):
            dotted = text.removesuffix("()")
            head = dotted.split(".")[0].split(":")[0]
            if head in PACKAGES:
                if not resolves(dotted):
                    stale.append(text)
            elif head[0].isupper() and head in _classes() and dotted.count(".") == 1:
                if not _has(head, dotted.split(".")[1]):
                    stale.append(text)
    return stale


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_backquoted_path_and_name_of_the_tree_exists(page: Path):
    assert stale_names(page) == []


def test_stale_paths_and_names_are_found(tmp_path: Path):
    page = tmp_path / "a.md"
    page.write_text("`server/storage/journal.py` `server/recovery.py` `server.storage.journal.Syncer` `server.storage.journal.Resyncer` "
                    "`Match.act` `Match.public_view` `server.core.match.Match.act` `server.core.match.Match.nothing` "
                    "`clients.sdk:play` `docs/rules/` `DIR/log` `e.code` `Promise.all` `clients/web/dist/` "
                    "`server/games/*.py`\n```\n`server/gone.py`\n```\n")
    assert stale_names(page) == ["server/recovery.py", "server.storage.journal.Resyncer", "Match.public_view",
                                 "server.core.match.Match.nothing"]


# --- limits: the table for operators, SPEC for clients ----------------------------------------------------------

LIMITS = ROOT / "docs" / "operations.md"
LIMITED = ("--rtt-ping-s", "--waiting-expiry-ms")  # serve's limits that are not named --max-...
CONFIG, CLIENT = ServerConfig(), ClientLimits()
FIXED = {  # the rows without a flag, and the code's value of each
    "burst of every rate": CLIENT.burst_s,
    "refusals before a connection is closed": CLIENT.strikes,
    "an address struck out for flooding, for": CLIENT.strikeout_s,
    "bulletin topics one connection follows": CLIENT.topics_per_client,
    "`hello` within": CLIENT.hello_timeout_s,
    "a silent connection is pinged after": CLIENT.idle_ping_s,
    "and closed without an answer after": CLIENT.idle_close_s,
    "frames waiting for a slow reader": CONFIG.queue_size,
    "bytes waiting for a slow reader": CONFIG.queue_bytes,
    "fragments of one message": wsreader.MAX_FRAGMENTS,
    "bytes read from a refused client": sockets.DRAIN_BYTES,
    "and for at most": sockets.DRAIN_S,
    "more frames a first `resume` may queue, once": requests.REPLAY_ROOM,
    "more bytes a first `resume` may queue, once": requests.REPLAY_ROOM_BYTES,
    "what a `resume` did not queue lapses after": burst.LAPSE_S,
    "messages handled in one turn": turns.QUANTUM,
    "finished tables kept in memory": CONFIG.finished_kept,
    "an HTTP request arrives within": http.REQUEST_TIMEOUT_S,
    "an HTTP request's head": http.MAX_HEAD_BYTES,
    "an HTTP request's body": http.MAX_BODY_BYTES,
}


def _limit_rows() -> list[list[str]]:
    text = LIMITS.read_text()
    part = text[text.index("\n## Limits\n"):]
    part = part[: part.find("\n## ", 1)]
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in part.splitlines()
            if line.startswith("|") and not line.startswith("|---")]
    assert rows[0][:3] == ["limit", "flag", "default"]
    return rows[1:]


def _number(cell: str) -> float:
    m = re.match(r"[\d,]+(\.\d+)?", cell)
    assert m, cell
    return float(m.group(0).replace(",", ""))


def _serve_defaults() -> dict[str, object]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    serve = sub.choices["serve"]  # type: ignore[index]
    return {option: action.default for action in serve._actions for option in action.option_strings
            if option.startswith("--max-") or option in LIMITED}


def test_the_operators_limits_table_matches_every_default_of_serve():
    flags = {row[1].strip("`"): row[2] for row in _limit_rows() if row[1] != "fixed"}
    defaults = _serve_defaults()
    assert sorted(flags) == sorted(defaults), "every limit flag of serve has one row"
    assert {flag: _number(cell) for flag, cell in flags.items()} == {f: float(d) for f, d in defaults.items()}


def test_the_operators_limits_table_matches_the_fixed_limits_in_the_code():
    fixed = {row[0]: row[2] for row in _limit_rows() if row[1] == "fixed"}
    assert sorted(fixed) == sorted(FIXED), "every fixed row is checked here"
    assert {name: _number(cell) for name, cell in fixed.items()} == {k: float(v) for k, v in FIXED.items()}


def _kib(n: float) -> str:
    return f"{n / 1024 / 1024:g} MiB" if n >= 1024 * 1024 else f"{n / 1024:g} KiB"


def test_the_clients_budgets_in_spec_are_the_codes_defaults():
    spec = (ROOT / "protocol" / "SPEC.md").read_text()
    spec = " ".join(spec.split())
    c = CLIENT
    said = [
        f"One address may hold {c.connections_per_ip} WebSockets",
        f"and {c.http_connections_per_ip} other TCP connections",
        f"may make {c.handshakes_per_s:g} WebSocket handshakes a second ({c.handshakes_per_s * c.burst_s:g} at once)",
        f"and {c.http_requests_per_s:g} plain HTTP requests a second ({c.http_requests_per_s * c.burst_s:g} at once)",
        f"each connection may send {c.messages_per_s:g} messages and {_kib(c.bytes_per_s)} a second",
        f"all the connections of one address together {c.address_messages_per_s:,g} messages and "
        f"{_kib(c.address_bytes_per_s)} a second, each with a {c.burst_s:g}-second burst",
        f"An address may have {c.waiting_tables_per_ip} tables of its creating waiting",
        f"then every {c.rtt_ping_s:g} s or so",
        f"a silent one after {c.idle_ping_s:g} s",
        f"may follow at most {c.topics_per_client} topics",
        f"more than {CONFIG.queue_size} frames or {_kib(CONFIG.queue_bytes)} wait for it",
        f"up to {requests.REPLAY_ROOM:,} more frames and {_kib(requests.REPLAY_ROOM_BYTES)} waiting (its replay), "
        f"once, for {burst.LAPSE_S:g} s",
        f"at most {_kib(sockets.DRAIN_BYTES)} more of what the client sends, for at most {sockets.DRAIN_S:g} s",
        f"may come in at most {wsreader.MAX_FRAGMENTS:,} frames",
        f"a body announced over {_kib(http.MAX_BODY_BYTES)} in `Content-Length`",
        f"The close frame waits {websocket.FLUSH_S:g} s for the client",
    ]
    assert [phrase for phrase in said if phrase not in spec] == []


def test_the_readme_stays_a_map():
    """What it is, the two commands, a tour, an example and where to go next: the manual lives in docs/."""
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 150 and len(text.split()) <= 1800
    quick = text[text.index("## Quick start"):]
    assert [line.split("#")[0].strip() for line in quick.splitlines()[2:4]] == ["make run", "make test"]
