"""Static files for ``GET /``: the built web client (``clients/web/dist/``), or a placeholder page.

A request path maps to a file under the root only: it is percent-decoded, and any ``..``, empty or hidden segment,
backslash or NUL is refused; the resolved file (links followed) must still lie under the root. Content types come
from a fixed table, the same on every machine.

A file is read once and its response shared by every request for it (checked against the file's size and
modification time; at most ``CACHE_BYTES`` in all), so a thousand clients that never read the answer hold one copy.
``load`` reads the disk and runs in a worker thread; ``known`` answers, in the server's own thread, what needs no
read: the placeholder page, and a file served before and unchanged (one ``stat``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import unquote

from server.transport.http import Response, text

DEFAULT_ROOT = str(Path(__file__).resolve().parents[2] / "clients" / "web" / "dist")
TYPES = {
    ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
    ".json": "application/json", ".map": "application/json", ".svg": "image/svg+xml", ".png": "image/png",
    ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
    ".ico": "image/x-icon", ".woff2": "font/woff2", ".woff": "font/woff", ".wasm": "application/wasm",
    ".txt": "text/plain; charset=utf-8",
}
MAX_FILE_BYTES = 32 * 1024 * 1024
CACHE_BYTES = 64 * 1024 * 1024  # of file bodies kept; past it the cache starts again
PLACEHOLDER = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Parsimonia server</title></head>
<body>
<h1>Parsimonia server</h1>
<p>This is a Parsimonia server: a real-time auction and timer server for timed card games.
The web client is not installed here yet (it is served from <code>clients/web/dist/</code> once built).</p>
<p>Connect a client or a bot over WebSocket to <code>ws://HOST:PORT/</code> on this same port, speaking
msgpack as <code>protocol/SPEC.md</code> describes, e.g.
<code>parsimonia bot greedy --url ws://HOST:PORT</code> or
<code>parsimonia watch --url ws://HOST:PORT --table t1</code>.</p>
<p>Health: <a href="/healthz">/healthz</a>. Metrics: <a href="/metrics">/metrics</a>.</p>
</body></html>
"""
NOT_FOUND = text(404, "not found\n")
# a built file whose name carries its content's hash (``assets/main-CQja0Z_S.js``) never changes under that name:
# a browser keeps it, so a reload or a second tab asks for the page alone (and spends less of the address's
# plain HTTP budget, ``server.transport.limits``)
HASHED = re.compile(r"/assets/[\w.-]+-[\w-]{8}\.(js|css|mjs|woff2?|svg|png|wasm)")
IMMUTABLE = [("cache-control", "public, max-age=31536000, immutable")]
KEPT_AN_HOUR = [("cache-control", "public, max-age=3600")]  # another file but a page: the icon, pictures
KNOWN_PATHS = 4096  # request paths remembered with the file each names; past it they are forgotten and found again
# real path -> (size, modification time in ns, its response); written from the worker threads that run ``load``
_cache: dict[str, tuple[int, int, Response]] = {}
_known: dict[tuple[str, str], str] = {}  # (root, request path) -> the real path it named when served
_PLACEHOLDER = Response(200, PLACEHOLDER.encode(), TYPES[".html"])


def resolve(root: str, target: str) -> str | None:
    """The file under ``root`` that a request path names, or None when it names none (or tries to leave)."""
    path = unquote(target.split("?", 1)[0].split("#", 1)[0], errors="strict")
    if not path.startswith("/") or "\\" in path or "\0" in path:
        return None
    parts = path.split("/")[1:]
    if parts[-1] == "":  # a directory: its index
        parts[-1] = "index.html"
    if any(p in ("", ".", "..") or p.startswith(".") for p in parts):
        return None
    real_root = os.path.realpath(root)
    candidate = _inside(real_root, os.path.join(real_root, *parts))
    if candidate is not None and os.path.isdir(candidate):  # its index, itself resolved: it may be a link too
        candidate = _inside(real_root, os.path.join(candidate, "index.html"))
    return candidate if candidate is not None and os.path.isfile(candidate) else None


def _inside(real_root: str, path: str) -> str | None:
    """``path`` with every link resolved, if that still lies under ``real_root``."""
    real = os.path.realpath(path)
    return real if os.path.commonpath([real_root, real]) == real_root else None


def known(root: str, target: str) -> Response | None:
    """The response to ``GET target`` when no file need be read for it: the placeholder page (or 404) while there
    is no root, the response already made for a file served before and unchanged since; None: ``load`` it."""
    path = _known.get((root, _request_path(target)))
    if path is None:
        return None if os.path.isdir(root) else _placeholder(target)
    try:
        stat = os.stat(path)
    except OSError:
        return None
    cached = _cache.get(path)
    return cached[2] if cached is not None and cached[:2] == (stat.st_size, stat.st_mtime_ns) else None


def load(root: str, target: str) -> Response:
    """The response to ``GET target`` (run in a worker thread: it reads the disk)."""
    if not os.path.isdir(root):
        return _placeholder(target)
    try:
        path = resolve(root, target)
    except UnicodeDecodeError:
        return NOT_FOUND
    if path is None:
        return NOT_FOUND
    if len(_known) >= KNOWN_PATHS:
        _known.clear()
    _known[(root, _request_path(target))] = path
    stat = os.stat(path)
    if stat.st_size > MAX_FILE_BYTES:
        return NOT_FOUND
    cached = _cache.get(path)
    if cached is not None and cached[:2] == (stat.st_size, stat.st_mtime_ns):
        return cached[2]
    with open(path, "rb") as f:
        body = f.read()
    response = Response(200, body, TYPES.get(os.path.splitext(path)[1].lower(), "application/octet-stream"),
                        headers=_caching(_request_path(target)))
    if sum(len(r.body) for _, _, r in list(_cache.values())) + len(body) > CACHE_BYTES:
        _cache.clear()
    _cache[path] = (stat.st_size, stat.st_mtime_ns, response)
    return response


def _caching(path: str) -> list[tuple[str, str]]:
    """How long a browser may keep the file at request path ``path`` without asking again: a page (``.html``,
    naming the hashed files of the current build) not at all."""
    if HASHED.fullmatch(path):
        return IMMUTABLE
    return [] if path.endswith((".html", "/")) else KEPT_AN_HOUR


def _placeholder(target: str) -> Response:
    return _PLACEHOLDER if _request_path(target) in ("/", "/index.html") else NOT_FOUND


def _request_path(target: str) -> str:
    return target.split("?", 1)[0].split("#", 1)[0]
