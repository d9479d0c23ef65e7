"""``clients.sdk.play``, the entry point of docs/bots.md's bot, run as a real script: no server, a URL it cannot use, or
Ctrl-C, SIGTERM or SIGHUP while it waits at a table, is one line on stderr and an exit status, never a traceback;
a stop gives the waiting seat back; waiting for players is said."""

from __future__ import annotations

import os
import signal
import time
import subprocess
import sys
from pathlib import Path

import pytest

from tests.server.cli.test_errors import ROOT, TIMEOUT_S, free_port, one_line, serve_process, tables, wait_for

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


def test_an_http_or_wss_url_is_one_line_and_exit_status_2(tmp_path):
    for url, said in (("http://127.0.0.1:8765", "is not a WebSocket URL"), ("wss://127.0.0.1:1", "wss:// (TLS)")):
        proc = start(tmp_path, url)
        _, err = proc.communicate(timeout=TIMEOUT_S)  # a wss:// URL used to hang on a TLS handshake
        assert proc.returncode == 2
        assert said in one_line(err) and "give ws://HOST:PORT" in err


@pytest.mark.parametrize(("signum", "status", "said"), [(signal.SIGINT, 130, "stopped (Ctrl-C)"),
                                                        (signal.SIGTERM, 143, "stopped (SIGTERM)"),
                                                        (signal.SIGHUP, 129, "stopped (SIGHUP)")])
def test_a_stop_while_waiting_gives_the_seat_back_in_one_line(tmp_path, signum, status, said):
    server, url = serve_process(tmp_path)
    try:
        proc = start(tmp_path, url)
        wait_for(lambda: any(t["taken"] == 1 for t in tables(url)))
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=TIMEOUT_S)
        lines = err.strip().splitlines()
        assert proc.returncode == status and "Traceback" not in err
        assert lines == ["bot: seat 0 at table t1: waiting for players, 1 of 4 seats taken", said]
        wait_for(lambda: [t["taken"] for t in tables(url)] == [0])  # a killed bot leaves no ghost seat
    finally:
        server.stop()


def test_a_stop_by_a_signal_the_bot_was_told_to_ignore_stays_ignored(tmp_path):
    server, url = serve_process(tmp_path)
    try:
        (tmp_path / "turingbot.py").write_text(SCRIPT)
        environ = {k: v for k, v in os.environ.items() if not k.startswith("PARSIMONIA_")}
        proc = subprocess.Popen([sys.executable, "turingbot.py", "--url", url], cwd=tmp_path, text=True,
                                env={**environ, "PYTHONPATH": str(ROOT)}, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))  # as nohup does
        try:
            wait_for(lambda: any(t["taken"] == 1 for t in tables(url)))
            proc.send_signal(signal.SIGHUP)
            time.sleep(1)
            assert proc.poll() is None and [t["taken"] for t in tables(url)] == [1]
        finally:
            proc.kill()
            proc.communicate()
    finally:
        server.stop()
