"""What the server answers over plain HTTP, on the WebSocket's port.

* ``GET /healthz``: 200 ``{"status": "ok", ...}``, or 503 ``"unhealthy"`` with ``reasons`` (``server.runtime.health``).
* ``GET /metrics``: the Prometheus text format (``server.ops.metrics``); on a cluster, of this worker's tables.
* ``GET /cluster``: on a cluster, every live worker as this worker's copy of the directory has them; 404 alone.
* ``GET /admin/connections``: the ``admin`` ``connections`` listing, for the organiser's bearer token only.
* ``GET /lobby``, ``GET /admin``: 302 to the page's own address for them (``/``, ``/#admin``).
* ``GET /replay/<table>``: the replay page.
* anything else: a static file (``server.runtime.static``).

Nothing here shows a seat token, a hidden card or a sealed offer: counts, games and states, and the connections'
public summaries.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

import h11
import trio

from server.ops import metrics

from server.runtime import static
from server.runtime.health import of_server
from server.runtime.ports import ServerPort
from server.transport.http import Gate, Response, text

NO_STORE = [("cache-control", "no-store")]
PAGE_ROUTES = {"/lobby": "/", "/admin": "/#admin"}  # typed addresses -> where the page shows them
REPLAY_PAGE = re.compile(r"/replay/[A-Za-z0-9_.-]{1,64}")


class Web:
    def __init__(self, server: ServerPort, root: str) -> None:
        self.server = server
        self.root = root

    async def respond(self, request: h11.Request, gate: Gate | None = None) -> Response:
        """The answer to ``request``: made through ``gate`` (in a turn of its address, server.runtime.turns), but a static
        file's the first time it is asked for, read in a worker thread (it reads the disk), and the admin's
        connections listing, which on a cluster waits for every worker's (only an admin's request gets that far: the
        token is checked first)."""
        if request.method in (b"GET", b"HEAD") and request.target.split(b"?", 1)[0] == b"/admin/connections":
            return await self._connections(request)
        response = self.answer(request) if gate is None else await gate(lambda: self.answer(request))
        if response is not None:
            return response
        target = _static_target(request.target.decode("ascii", "replace"))
        return await trio.to_thread.run_sync(static.load, self.root, target)

    def answer(self, request: h11.Request) -> Response | None:
        """The answer to ``request``, None for a static file that must be read first."""
        if request.method not in (b"GET", b"HEAD"):
            return Response(405, b"this server answers GET and HEAD\n", headers=[("allow", "GET, HEAD")])
        target = request.target.decode("ascii", "replace")
        path = target.split("?", 1)[0]
        if path == "/healthz":
            return self._health()
        if path in PAGE_ROUTES:  # addresses people type: the page's own, which lives at / with a #route
            return Response(302, b"this page is at /\n", headers=[("location", PAGE_ROUTES[path])])
        if path == "/metrics":
            assert self.server.lobby is not None
            # this process's own tables: on a cluster, each worker is scraped on its own port, and the sums add up
            health = of_server(self.server)
            body = metrics.render(len(self.server.connections), self.server.lobby.own_summaries(),
                                  len(health.stopped), health.loop_lag_ms / 1000)
            return Response(200, body, metrics.CONTENT_TYPE, list(NO_STORE))
        if path == "/cluster":
            if self.server.cluster is None:
                return text(404, "this server is not a worker of a cluster (parsimonia serve --workers N)\n")
            return _json(self.server.cluster.describe())
        return static.known(self.root, _static_target(target))

    def _health(self) -> Response:
        server = self.server
        assert server.lobby is not None
        health = of_server(server)
        return _json({"status": "ok" if health.ok else "unhealthy",
                      "uptime_ms": int((trio.current_time() - server.started) * 1000),
                      "tables": len(server.lobby.tables), "connections": len(server.connections),
                      "reasons": health.reasons, "stopped": health.stopped, "loop_lag_ms": health.loop_lag_ms},
                     200 if health.ok else 503)

    async def _connections(self, request: h11.Request) -> Response:
        if self.server.config.admin_token is None:
            return text(404, "not found\n")
        given = [v for k, v in request.headers if k == b"authorization"]
        if len(given) != 1 or not given[0].startswith(b"Bearer "):
            return Response(401, b"this needs Authorization: Bearer <admin token>\n",
                            headers=[("www-authenticate", 'Bearer realm="parsimonia"'), *NO_STORE])
        if not self.server.is_admin(given[0][len(b"Bearer "):].strip().decode("utf-8", "replace")):
            return text(403, "that is not the admin token\n")
        if self.server.cluster is not None:  # every worker's
            return _json({"connections": await self.server.cluster.connections()})
        return _json({"connections": [c.summary() for c in self.server.connections.values()]})


def _json(value: Mapping[str, object], status: int = 200) -> Response:
    return Response(status, json.dumps(value, separators=(",", ":")).encode(), "application/json", list(NO_STORE))


def _static_target(target: str) -> str:
    """The file a request names: ``/replay/<table id>`` is the replay page (it reads the id from its address)."""
    return "/replay.html" if REPLAY_PAGE.fullmatch(target.split("?", 1)[0]) else target
