"""A real Redis (Debian's redis-server, on a free port, nothing saved) and a real cluster of workers
(``parsimonia serve --workers 2``) for the cluster's tests. No Redis installed fails the test, saying so."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

REDIS_SERVER = "redis-server"
BANNER = re.compile(r"Parsimonia server on ws://[^:]+:(\d+)")
WORKERS_LINE = re.compile(r"(\d+) workers \(Redis [^)]*\): (.*)")
OWN = re.compile(r"worker (\d+) on ([^,\s]+)")
SHORT = {"turn_ms": 2000, "quiet_ms": 500, "opening_ms": 3000, "game_ms": 60000}  # a game of a few seconds
TIME_SCALE = 400.0
ENV = {k: v for k, v in os.environ.items() if k != "PARSIMONIA_ADMIN_TOKEN"}


async def play_to_the_end(bots: list[Any]) -> list[dict[str, Any]]:
    """Run each ``BotSession`` until its table's result; the results, in the order they came."""
    results: list[dict[str, Any]] = []

    async def play(bot: Any) -> None:
        results.append(await bot.run())

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            for bot in bots:
                nursery.start_soon(play, bot)
    return results


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


class Redis:
    """``redis-server`` on 127.0.0.1:``port``; ``stop`` and ``start`` again on the same port (a restart)."""

    def __init__(self, tmp: Path) -> None:
        if shutil.which(REDIS_SERVER) is None:
            pytest.fail("redis-server is not installed: apt-get install redis-server (make test installs it)")
        self.tmp = tmp
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.tmp)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _wait_port(self.port)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def cli(self, *args: str) -> str:
        return subprocess.run(["redis-cli", "-p", str(self.port), *args], capture_output=True, text=True,
                              check=True).stdout.strip()

    def entry(self, worker: int) -> dict | None:
        raw = self.cli("get", f"parsimonia:worker:{worker}")
        return json.loads(raw) if raw else None


class Cluster:
    """``parsimonia serve --workers N`` on 127.0.0.1: its shared URL and each worker's own, from its banner."""

    def __init__(self, tmp: Path, redis_url: str | None, workers: int = 2, *args: str,
                 env: dict[str, str] | None = None) -> None:
        tmp.mkdir(parents=True, exist_ok=True)
        self.tmp = tmp
        self.err_path = tmp / "cluster.err"
        cmd = [sys.executable, "-m", "server.cli.main", "serve", "--port", "0", "--workers", str(workers),
               "--data", str(tmp / "data"), "--sync", "write", "--log-level", "info", *args]
        if redis_url is not None:
            cmd += ["--redis", redis_url]
        with open(tmp / "cluster.out", "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=err, env={**ENV, **(env or {})})
        self.url, self.workers = self._read_banner(workers)

    def _read_banner(self, workers: int) -> tuple[str, dict[int, str]]:
        deadline = time.monotonic() + 60
        while True:
            text = (self.tmp / "cluster.out").read_text()
            port, line = BANNER.search(text), WORKERS_LINE.search(text)
            if port and (line or workers == 1):
                own = {int(w): f"ws://{where}/" for w, where in OWN.findall(line[2])} if line else {}
                return f"ws://127.0.0.1:{port[1]}/", own
            assert self.proc.poll() is None, self.errors()[-3000:]
            assert time.monotonic() < deadline, "the cluster did not start in 60 s: " + self.errors()[-3000:]
            time.sleep(0.05)

    def errors(self) -> str:
        return self.err_path.read_text()

    def stop(self) -> int:
        """Ctrl-C, as an operator stops it; SIGKILL after 15 s."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                return self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        return self.proc.wait()


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[Redis]:
    server = Redis(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def cluster(tmp_path: Path, redis: Redis) -> Iterator[Cluster]:
    running = Cluster(tmp_path, redis.url)
    try:
        yield running
    finally:
        running.stop()
