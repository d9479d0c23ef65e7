"""``clients.sdk.play``, the README bot's entry point, run as a real script: no server, or Ctrl-C while it
waits at a table, is one line on stderr and an exit status, never a traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.server.test_cli_errors import ROOT, TIMEOUT_S, free_port, one_line, serve_process, tables, wait_for

SCRIPT = """
from clients.sdk import play


class Idle:
    def act(self, view, legal):
        return None


play(Idle())
"""


def start(tmp_path: Path, url: str) -> subprocess.Popen:
    (tmp_path / "turingbot.py").write_text(SCRIPT)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PARSIMONIA_")}
    return subprocess.Popen([sys.executable, "turingbot.py", "--url", url], cwd=tmp_path, text=True,
                            env={**environ, "PYTHONPATH": str(ROOT)}, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def test_no_server_is_one_line_and_exit_status_1(tmp_path):
    url = f"ws://127.0.0.1:{free_port()}"
    proc = start(tmp_path, url)
    _, err = proc.communicate(timeout=TIMEOUT_S)
    assert proc.returncode == 1
    assert one_line(err) == f"no Parsimonia server answers at {url}: start one (parsimonia serve) or give --url"


def test_ctrl_c_while_seated_is_one_line_and_exit_status_130(tmp_path):
    server, url = serve_process(tmp_path)
    try:
        proc = start(tmp_path, url)
        wait_for(lambda: any(t["taken"] == 1 for t in tables(url)))
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=TIMEOUT_S)
        assert proc.returncode == 130 and one_line(err) == "stopped (Ctrl-C)"
    finally:
        server.stop()
