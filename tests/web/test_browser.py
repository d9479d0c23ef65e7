"""The web client against a real server: the Vitest-free half of its tests.

* ``test_browser``: the page in headless Chromium (``clients/web/e2e/run.mjs``: a person joins from the lobby
  and plays a Parsimonia game against a bot to the end with clicks (bids, wins an auction, pairs drawn tourists,
  ends turns), a reload resumes the seat, the organiser pauses the table and the countdowns stop, a page opened
  during a hold for the players or reloaded during a pause draws the clocks where they stopped, a Gift of
  Tulips turn, a Kupcy game where the person splits with the keyboard alone, makes sealed offers, answers a tie
  re-bid and sees the reveal, a phone-sized screen without sideways scrolling, and spectators and seats whose
  frames hold no hidden information they may not see; a table the organiser closes shows its clocks stopped, a
  stale "Sell for $6" is refused, runs of bids read as one line, the organiser's Pause/Unpause follow the table's
  state and connections show their players (never a Kick for the organiser's own page), the lobby's clocks (a
  preset, own game, turn and quiet times, shown before creating; the creator seated with a name, told how to sit
  without), addresses people type (no such table, no seat here, /lobby) and the icon, the sell and give choices
  whole at a phone's width, Kupcy's buttons named as they read, and a
  tournament entrant's one link through two rounds, and a game installed as a package of its own (the toy game)
  played in the generic view).
* ``test_js_bot``: two copies of docs/bots.md's JavaScript bot (``clients/web/examples/bot.mjs``) play a whole
  Gift of Tulips game.

They need what ``make test`` installs: Node and ``npm ci`` in ``clients/web`` (node_modules), the built page
(``clients/web/dist``) and Chromium at /usr/bin/chromium. Missing, they fail and say so: never skipped.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cluster.conftest import Redis
from tests.toy_game import installed

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "clients" / "web"
ADMIN_TOKEN = "an-organiser-token-long-enough"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


def _require(*, browser: bool) -> str:
    node = shutil.which("node")
    missing = [what for what, ok in [("node", node), ("clients/web/node_modules (npm ci)", (WEB / "node_modules").is_dir()),
                                     ("clients/web/dist (npm run build)", (WEB / "dist" / "index.html").is_file()),
                                     (CHROMIUM, not browser or os.path.exists(CHROMIUM))] if not ok]
    assert not missing, f"the web tests need {', '.join(missing)}: run `make test`, which installs and builds them"
    return node  # type: ignore[return-value]


class Served:
    """``parsimonia serve`` on 127.0.0.1, port 0, in a child process (with ``redis``: a cluster of 2 workers)."""

    def __init__(self, tmp: Path, admin: bool, site: Path | None = None, redis: Redis | None = None,
                 sync: str = "off") -> None:
        argv = [sys.executable, "-m", "server.cli.main", "serve", "--host", "127.0.0.1", "--port", "0", "--sync", sync,
                "--data", str(tmp / "data")]
        if redis is not None:
            argv += ["--workers", "2", "--redis", redis.url]
        if admin:
            (tmp / "admin.token").write_text(ADMIN_TOKEN + "\n")
            argv += ["--admin-token-file", str(tmp / "admin.token")]
        env = {k: v for k, v in os.environ.items() if not k.startswith("PARSIMONIA_")}
        path = os.pathsep.join([*([str(site)] if site else []), str(ROOT)])  # site: games installed beside ours
        self.log = tmp / "server.log"
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(argv, cwd=ROOT, env={**env, "PYTHONPATH": path}, text=True,
                                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log)
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], 60)
        assert ready, "the server did not start within 60 s"
        match = re.search(r"ws://127\.0\.0\.1:(\d+)", self.proc.stdout.readline())
        assert match, "no banner from the server"
        self.port = int(match.group(1))

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)  # as an operator stops a cluster
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _run(argv: list[str], env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=WEB, env={**os.environ, **env}, text=True, capture_output=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("workers", [1, 2])
def test_browser(tmp_path: Path, workers: int) -> None:
    """On 2 workers (a cluster on a real Redis) the page is served by the shared port, and tables are created on
    either worker: the page follows ``moved`` to them, the organiser's page acts on every worker's."""
    node = _require(browser=True)
    with contextlib.ExitStack() as running:  # stopped in reverse: the server, then its Redis
        redis = None
        if workers == 2:
            redis = Redis(tmp_path)
            redis.start()
            running.callback(redis.stop)
        server = Served(tmp_path, admin=True, site=installed(tmp_path / "site"), redis=redis)  # and the toy game
        running.callback(server.stop)
        shots = os.environ.get("PARSIMONIA_SCREENSHOTS") or str(tmp_path)
        done = _run([node, "e2e/run.mjs"], {"PARSIMONIA_HTTP": f"http://127.0.0.1:{server.port}",
                                            "PARSIMONIA_ADMIN_TOKEN": ADMIN_TOKEN, "PARSIMONIA_SCREENSHOTS": shots,
                                            "CHROMIUM": CHROMIUM}, timeout=400)
    assert done.returncode == 0, f"e2e failed:\n{done.stdout}\n{done.stderr}"
    assert "e2e: all passed" in done.stdout
    if workers > 1:  # the suite's tables were the workers' (the shared port sent the page to either worker)
        created = re.findall(r"table_created\W.*?table=(\S+)", server.log.read_text())
        assert len(created) >= 5 and all(re.match(r"w[12]-t\d+$", t) for t in created), created


def test_js_bot(tmp_path: Path) -> None:
    node = _require(browser=False)
    server = Served(tmp_path, admin=False)
    url = f"ws://127.0.0.1:{server.port}"
    try:
        first = subprocess.Popen([node, "examples/bot.mjs", "--url", url, "--game", "gift-of-tulips", "--time-scale", "20",
                                  "--name", "A"], cwd=WEB, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 stdin=subprocess.DEVNULL)
        assert first.stderr is not None
        seated = first.stderr.readline()  # "A: table t1, seat 0" once it holds its seat
        table = re.search(r"table (\S+),", seated)
        assert table, seated
        second = _run([node, "examples/bot.mjs", "--url", url, "--table", table.group(1), "--name", "B"], {}, timeout=120)
        out, _ = first.communicate(timeout=120)
    finally:
        server.stop()
    assert second.returncode == 0 and first.returncode == 0, second.stderr
    a, b = json.loads(out.strip().splitlines()[-1]), json.loads(second.stdout.strip().splitlines()[-1])
    assert a["scores"] == b["scores"] and a["winners"] == b["winners"] and len(a["scores"]) == 2
