"""The JavaScript bot of docs/bots.md (``clients/web/examples/bot.mjs``) stopped by Ctrl-C, ``kill`` or a closed terminal
while its table waits: it gives its seat back, says so in one line, and exits 130, 143 or 129 (no ghost seat for the
next bots to join). Needs Node and ``npm ci`` in ``clients/web``, as ``tests/web/test_browser.py``'s ``test_js_bot``."""

from __future__ import annotations

import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from tests.server.cli.test_errors import tables, wait_for
from tests.web.test_browser import WEB, Served


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_js_bot_stopped_while_waiting_gives_its_seat_back(tmp_path: Path, signum: int, status: int) -> None:
    node = shutil.which("node")
    assert node and (WEB / "node_modules").is_dir(), "needs node and clients/web/node_modules: run `make test`"
    server = Served(tmp_path, admin=False)
    url = f"ws://127.0.0.1:{server.port}"
    try:
        bot = subprocess.Popen([node, "examples/bot.mjs", "--url", url, "--seats", "2", "--name", "js"], cwd=WEB,
                               text=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            wait_for(lambda: [t["taken"] for t in tables(url)] == [1])
            bot.send_signal(signum)
            _, err = bot.communicate(timeout=30)
        finally:
            if bot.poll() is None:
                bot.kill()
        assert bot.returncode == status
        assert err.strip().splitlines()[-1] == f"js: stopped ({signal.Signals(signum).name})"
        assert [t["taken"] for t in tables(url)] == [0]  # given back before it exited
    finally:
        server.stop()
