"""The real server as a process, seen from outside: started (``parsimonia serve``), its port read from its
banner, its resident memory and open descriptors read from ``/proc``, its ``/metrics`` gauges scraped,
killed with SIGKILL or stopped with Ctrl-C (SIGINT). The floods and the soak measure the server this way."""

from __future__ import annotations

import os
import re
import resource
import signal
from dataclasses import dataclass
from pathlib import Path

import trio

from tests.server.storage.test_crash import ENV, ROOT, command

BANNER = re.compile(rb"Parsimonia server on ws://[^:]+:(\d+)")
METRIC = re.compile(r"^([a-z_]+)(\{[^}]*\})? ([0-9.e+-]+)$")


def raise_nofile(wanted: int) -> int:
    """Let this process (and the processes it starts, which inherit it) open ``wanted`` descriptors:
    the soft limit up to the hard one, and the hard one too when allowed (root). The soft limit reached."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= wanted:
        return soft
    if hard != resource.RLIM_INFINITY and hard < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, wanted))
            return wanted
        except (ValueError, OSError):
            wanted = hard
    resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    return wanted


@dataclass
class Sample:
    rss_kb: int
    fds: int
    peak_rss_kb: int  # the most it was ever resident (VmHWM), so a peak needs no polling


def sample(pid: int) -> Sample:
    """The process's resident memory (VmRSS, KiB), its open descriptors, and its peak memory, now. (Listing
    thousands of descriptors takes a while: not while measuring a latency in the same process.)"""
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    kb = {key: int(status[key].split()[0]) for key in ("VmRSS", "VmHWM")}
    return Sample(kb["VmRSS"], len(os.listdir(f"/proc/{pid}/fd")), kb["VmHWM"])


async def scrape(port: int) -> dict[str, float]:
    """The server's ``/metrics``: every sample without labels by name, labelled ones summed under their name."""
    with trio.fail_after(10):
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        async with stream:
            await stream.send_all(b"GET /metrics HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n")
            body = b""
            while chunk := await stream.receive_some(65536):
                body += chunk
    out: dict[str, float] = {}
    for line in body.split(b"\r\n\r\n", 1)[1].decode().splitlines():
        if (m := METRIC.match(line)) is not None:
            out[m[1]] = out.get(m[1], 0.0) + float(m[3])
    return out


class Served:
    """``parsimonia serve`` on 127.0.0.1 (``port`` 0: any free one, read from the banner), its output in
    ``tmp``; ``start`` may be called again after ``kill`` (same data directory: the restart recovers it)."""

    def __init__(self, tmp: Path, *args: str, port: int = 0) -> None:
        self.tmp = tmp
        self.args = args
        self.port = port
        self.proc: trio.Process | None = None
        self.starts = 0

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    async def start(self) -> int:
        self.starts += 1
        out_path = self.tmp / f"serve-{self.starts}.out"
        with open(out_path, "wb") as out, open(self.tmp / "serve.err", "ab") as err:
            self.proc = await trio.lowlevel.open_process(
                command("serve", "--host", "127.0.0.1", "--port", str(self.port), "--log-level", "warning",
                        *self.args), stdout=out, stderr=err, cwd=ROOT, env=ENV)
        with trio.fail_after(30):
            while (m := BANNER.search(out_path.read_bytes())) is None:
                assert self.proc.returncode is None, (self.tmp / "serve.err").read_text()[-2000:]
                await trio.sleep(0.05)
        self.port = int(m[1])
        return self.port

    def sample(self) -> Sample:
        return sample(self.pid)

    async def kill(self) -> None:
        """SIGKILL, and wait for it to be gone."""
        if self.proc is not None:
            if self.proc.returncode is None:
                self.proc.send_signal(signal.SIGKILL)
            with trio.CancelScope(shield=True):
                await self.proc.wait()

    async def stop(self) -> int:
        """Ctrl-C, as an operator stops it; its exit code (SIGKILL after 10 s if it does not stop)."""
        assert self.proc is not None
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGINT)
            with trio.move_on_after(10):
                return await self.proc.wait()
        await self.kill()
        return self.proc.returncode

    def errors(self) -> str:
        path = self.tmp / "serve.err"
        return path.read_text() if path.exists() else ""
