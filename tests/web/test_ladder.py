"""The ladder in headless Chromium (``clients/web/e2e/ladder.mjs``): a server with an empty data directory, whose
lobby says how ratings come about; games rated into its ratings file (``server.ratings.store.RatingStore``, as a
tournament's director rates them beside its server) appear once a table's game is over, ranked by the ordinal with
games played and last played, a game at a time, on a phone's screen too; the organiser's page shows the same ladder.

It needs what ``make test`` installs (Node, ``npm ci``, the built page, Chromium), as ``test_browser`` does.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from server.ratings.store import RATINGS_FILE
from tests.web.test_browser import ADMIN_TOKEN, CHROMIUM, ROOT, Served, _require, _run

# Run by the e2e script while the page is open: rates three games beside the running server, prints the ladder.
RATE = """
import json, sys
from server.ratings.store import RatingStore
with RatingStore(sys.argv[1]) as store:
    store.rate("test:1", "parsimonia", ["greedy-1", "random-4", "Ada"], [1, 3, 2], at="2026-12-04T18:27:43Z")
    store.rate("test:2", "parsimonia", ["random-4", "greedy-1"], [1, 2], at="2026-12-04T19:02:10Z")
    store.rate("test:3", "kupcy", ["Bo", "Cy"], [2, 1], at="2026-12-03T09:15:00Z")
    print(json.dumps([r.to_dict() for r in store.ladder()]))
"""


def test_ladder_in_the_lobby_and_the_organisers_page(tmp_path: Path) -> None:
    node = _require(browser=True)
    server = Served(tmp_path, admin=True, sync="write")  # a data directory: the server keeps ratings
    try:
        rate = [sys.executable, "-c", RATE, str(tmp_path / "data" / RATINGS_FILE)]
        shots = os.environ.get("PARSIMONIA_SCREENSHOTS") or str(tmp_path)
        done = _run([node, "e2e/ladder.mjs"], {"PARSIMONIA_HTTP": f"http://127.0.0.1:{server.port}",
                                               "PARSIMONIA_ADMIN_TOKEN": ADMIN_TOKEN, "PARSIMONIA_RATE": json.dumps(rate),
                                               "PARSIMONIA_SCREENSHOTS": shots, "CHROMIUM": CHROMIUM,
                                               "PYTHONPATH": str(ROOT)}, timeout=120)
    finally:
        server.stop()
    assert done.returncode == 0, f"e2e failed:\n{done.stdout}\n{done.stderr}"
    assert "e2e: all passed" in done.stdout
    assert "the organiser's page shows the same ladder" in done.stdout
