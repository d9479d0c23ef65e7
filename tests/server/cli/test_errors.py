"""The mistakes a new user makes, each run as a real ``python -m server.cli.main`` process: one line on stderr
naming the cause and what to do, never a traceback, and the right exit status (130 after Ctrl-C)."""

from __future__ import annotations

import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from clients.sdk import request_once

ROOT = Path(__file__).resolve().parents[3]
ADMIN_TOKEN = "an-organiser-token-long-enough"
TIMEOUT_S = 60


def _sigint_by_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Cli:
    """A ``parsimonia`` command running as a child process."""

    def __init__(self, *argv: str, cwd: Path, env: dict[str, str] | None = None) -> None:
        environ = {k: v for k, v in os.environ.items() if not k.startswith("PARSIMONIA_")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "server.cli.main", *argv], cwd=cwd, text=True,
            env={**environ, "PYTHONPATH": str(ROOT), **(env or {})},
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            # Ctrl-C as at a terminal: a suite started in the background (`make test &`) runs with SIGINT ignored,
            # and a child inherits that, so the interrupt these tests send would never arrive
            preexec_fn=_sigint_by_default,
        )
        self.lines: list[str] = []

    def line(self, timeout: float = TIMEOUT_S) -> str:
        """The next line of stdout."""
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, f"no output in {timeout} s; so far: {self.lines}"
        line = self.proc.stdout.readline()
        self.lines.append(line)
        return line

    def interrupt(self) -> None:
        self.proc.send_signal(signal.SIGINT)

    def finish(self) -> tuple[int, str, str]:
        out, err = self.proc.communicate(timeout=TIMEOUT_S)
        return self.proc.returncode, "".join(self.lines) + out, err

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


def run(*argv: str, cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    return Cli(*argv, cwd=cwd, env=env).finish()


def one_line(err: str) -> str:
    assert "Traceback" not in err and "Error:" not in err.replace("error:", ""), err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


def serve_process(cwd: Path, env: dict[str, str] | None = None) -> tuple[Cli, str]:
    server = Cli("serve", "--port", "0", "--sync", "off", "--log-level", "warning", cwd=cwd, env=env)
    banner = server.line()
    port = re.search(r"ws://127\.0\.0\.1:(\d+)", banner)
    assert port, banner
    return server, f"ws://127.0.0.1:{port.group(1)}"


@pytest.fixture
def server_url(tmp_path: Path) -> Iterator[str]:
    srv, url = serve_process(tmp_path)
    yield url
    srv.stop()


def tables(url: str) -> list[dict]:
    return trio.run(lambda: request_once(url, "tables"))["tables"]


def wait_for(predicate, timeout: float = TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


@pytest.mark.parametrize("argv", [["bot", "greedy"], ["watch", "--table", "t1"], ["demo"], ["tables"]])
def test_no_server_at_the_url_is_one_line_naming_it(tmp_path, argv):
    url = f"ws://127.0.0.1:{free_port()}"
    code, out, err = run(*argv, "--url", url, cwd=tmp_path)
    assert code == 1
    assert f"no Parsimonia server answers at {url}" in one_line(err)


def test_an_http_url_is_refused_before_connecting(tmp_path):
    code, out, err = run("bot", "greedy", "--url", "http://127.0.0.1:8765", cwd=tmp_path)
    assert code == 2 and "Traceback" not in err
    assert "not a WebSocket URL: give ws://HOST:PORT" in err


@pytest.mark.parametrize("port", ["70000", "-1", "eighty"])
def test_a_port_outside_0_to_65535_is_refused(tmp_path, port):
    code, out, err = run("serve", "--port", port, cwd=tmp_path)
    assert code == 2 and out == "" and "Traceback" not in err
    assert "0-65535" in err


@pytest.mark.parametrize("argv", [["bot", "greedy"], ["watch", "--table", "t1"], ["demo"], ["tables"]])
def test_a_url_with_a_port_outside_0_to_65535_is_refused_at_parse_time(tmp_path, argv):
    code, out, err = run(*argv, "--url", "ws://127.0.0.1:99999", cwd=tmp_path)
    assert code == 2 and out == "" and "Traceback" not in err
    assert "has no valid port (0-65535)" in err


def test_a_wss_url_is_refused_as_unsupported_instead_of_hanging(tmp_path):
    code, out, err = run("tables", "--url", "wss://127.0.0.1:8765", cwd=tmp_path)
    assert code == 2 and "Traceback" not in err
    assert "wss:// (TLS) is not supported" in err


@pytest.mark.parametrize("host", ["192.0.2.1", "nosuchhost.invalid"])
def test_serve_on_a_host_that_is_not_this_machine_is_one_line(tmp_path, host):
    code, out, err = run("serve", "--port", "0", "--sync", "off", "--host", host, cwd=tmp_path)
    assert code == 1 and out == ""
    assert one_line(err).startswith(f"parsimonia serve: cannot listen on {host}: ")


@pytest.mark.skipif(not Path("/proc/self").exists(), reason="needs a /proc where nothing can be made")
def test_a_data_directory_under_proc_is_one_line(tmp_path):
    code, out, err = run("serve", "--port", "0", "--data", "/proc/nope", cwd=tmp_path)
    assert code == 1 and out == ""
    assert one_line(err).startswith("parsimonia serve: cannot write /proc/nope")


@pytest.mark.parametrize("argv", [["--max-tables", "0"], ["--max-messages-per-s", "-3"],
                                  ["--max-connections-per-ip", "0"], ["--max-bytes-per-s", "0"]])
def test_serve_limits_below_one_are_refused_at_parse_time(tmp_path, argv):
    code, out, err = run("serve", "--port", "0", *argv, cwd=tmp_path)
    assert code == 2 and out == "" and "Traceback" not in err
    assert f"argument {argv[0]}" in err


def test_serve_on_a_port_in_use_says_so_and_prints_no_banner(tmp_path, busy_port):
    code, out, err = run("serve", "--port", str(busy_port), "--sync", "off", cwd=tmp_path)
    assert code == 1 and out == ""
    assert f"port {busy_port} is already in use" in one_line(err)
    assert "with --port (0: any free one; under make: PORT=...)" in err  # what `make run` takes


def test_tournament_on_a_port_in_use_says_so(tmp_path, busy_port):
    roster = ROOT / "examples" / "league.toml"
    code, out, err = run("tournament", "--roster", str(roster), "--port", str(busy_port), "--data", "t", cwd=tmp_path)
    assert code == 1
    assert f"port {busy_port} is already in use" in one_line(err)
    assert not (tmp_path / "t" / "tournament.sqlite").exists()  # nothing played: no claim on the directory


def test_a_data_directory_that_cannot_be_made_is_one_line(tmp_path):
    (tmp_path / "a-file").write_text("")
    code, out, err = run("serve", "--port", "0", "--data", "a-file/data", cwd=tmp_path)
    assert code == 1 and out == ""
    assert one_line(err).startswith("parsimonia serve: cannot write a-file/data")
    assert "give --data a directory this user may write (under make: DATA=...;" in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write a read-only directory")
def test_a_read_only_data_directory_is_one_line(tmp_path):
    (tmp_path / "ro").mkdir(mode=0o500)
    code, out, err = run("serve", "--port", "0", "--data", "ro/data", cwd=tmp_path)
    assert code == 1
    assert "cannot write" in one_line(err) and "--data" in err


def test_a_wrong_token_is_one_line_and_ctrl_c_gives_the_waiting_seat_back(tmp_path, server_url):
    waiting = Cli("bot", "greedy", "--url", server_url, "--seats", "2", cwd=tmp_path)
    try:
        wait_for(lambda: [t["taken"] for t in tables(server_url)] == [1])
        code, out, err = run("bot", "greedy", "--url", server_url, "--table", "t1", "--token", "wrong", cwd=tmp_path)
        assert code == 1
        assert "bad_token" in one_line(err) and "--token" in err
        waiting.interrupt()
        code, out, err = waiting.finish()
    finally:
        waiting.stop()
    assert code == 130 and "stopped" in one_line(err)
    wait_for(lambda: [t["taken"] for t in tables(server_url)] == [0])  # the seat was given back


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_bot_killed_or_hung_up_on_gives_the_waiting_seat_back_in_one_line(tmp_path, server_url, signum, status):
    waiting = Cli("bot", "greedy", "--url", server_url, "--seats", "2", cwd=tmp_path)
    try:
        wait_for(lambda: [t["taken"] for t in tables(server_url)] == [1])
        waiting.proc.send_signal(signum)  # kill, timeout, a closed terminal
        code, out, err = waiting.finish()
    finally:
        waiting.stop()
    assert code == status and one_line(err) == f"parsimonia bot: stopped ({signal.Signals(signum).name})"
    assert "waiting for players, 1 of 2 seats taken" in out
    wait_for(lambda: [t["taken"] for t in tables(server_url)] == [0])  # no ghost seat for the next bots


def test_demo_against_a_server_with_an_admin_token_says_what_to_do(tmp_path):
    srv, url = serve_process(tmp_path, env={"PARSIMONIA_ADMIN_TOKEN": ADMIN_TOKEN})
    try:
        code, out, err = run("demo", "--url", url, cwd=tmp_path)
    finally:
        srv.stop()
    assert code == 1
    assert "forbidden" in one_line(err) and "PARSIMONIA_ADMIN_TOKEN" in err


def test_bot_with_the_admin_token_set_as_the_refusal_advises_creates_its_table(tmp_path):
    srv, url = serve_process(tmp_path, env={"PARSIMONIA_ADMIN_TOKEN": ADMIN_TOKEN})
    try:
        code, out, err = run("bot", "greedy", "--url", url, "--seats", "2", cwd=tmp_path)  # no token: refused
        assert code == 1 and "PARSIMONIA_ADMIN_TOKEN" in one_line(err)
        bot = Cli("bot", "greedy", "--url", url, "--seats", "2", cwd=tmp_path,
                  env={"PARSIMONIA_ADMIN_TOKEN": ADMIN_TOKEN})
        try:
            wait_for(lambda: [(t["seats"], t["taken"]) for t in tables(url)] == [(2, 1)])
        finally:
            bot.stop()
    finally:
        srv.stop()


def test_watch_ctrl_c_exits_130_and_a_stopping_server_is_one_line(tmp_path):
    srv, url = serve_process(tmp_path)
    try:
        trio.run(lambda: request_once(url, "create", game="parsimonia", seats=2))
        watcher = Cli("watch", "--url", url, "--table", "t1", cwd=tmp_path)
        assert "waiting for players" in watcher.line()
        watcher.interrupt()
        code, out, err = watcher.finish()
        assert code == 130 and "stopped" in one_line(err)

        watcher = Cli("watch", "--url", url, "--table", "t1", cwd=tmp_path)
        assert "waiting for players" in watcher.line()
        srv.interrupt()  # the server stops
        code, out, err = watcher.finish()
    finally:
        srv.stop()
    assert code == 1 and "closed the connection" in one_line(err)


def test_demo_ctrl_c_exits_130_with_one_line(tmp_path):
    demo = Cli("demo", "--time-scale", "1", cwd=tmp_path)
    try:
        demo.line()  # the first progress line: the game is on
        demo.interrupt()
        code, out, err = demo.finish()
    finally:
        demo.stop()
    assert code == 130 and "stopped" in one_line(err)


def test_tournament_ctrl_c_exits_130_saying_how_to_carry_on(tmp_path):
    roster = tmp_path / "humans.toml"
    roster.write_text('name = "Two people"\nrounds = 1\ntable_size = 2\n'
                      '[[entrant]]\nname = "Ada"\nhuman = true\n[[entrant]]\nname = "Bob"\nhuman = true\n')
    tour = Cli("tournament", "--roster", str(roster), "--port", "0", "--data", "t", cwd=tmp_path)
    try:
        assert "tournament server on" in tour.line()
        tour.interrupt()
        code, out, err = tour.finish()
    finally:
        tour.stop()
    assert code == 130
    assert "run the same command again" in one_line(err)


def test_a_server_that_stays_unavailable_is_one_line_after_the_retries():
    import argparse

    from clients.sdk import ServerError
    from server.cli.errors import explain

    args = argparse.Namespace(url="ws://127.0.0.1:8765", table="t1")
    refused = ServerError({"code": "unavailable", "message": "worker 2, which holds t1, is away"})
    line, status = explain(BaseExceptionGroup("nursery", [refused]), args)
    assert status == 1 and "\n" not in line
    assert line.startswith("the server at ws://127.0.0.1:8765 stayed unavailable (worker 2, which holds t1, is away)")
