"""The supervisor of ``parsimonia serve --workers N``: N worker processes, each restarted when it dies.

Each worker is the same command run again with ``--worker-id K``, its own port and data directory. A worker that dies is started again on the same ports and directory, so its tables
come back from its log; from a spare process that did its imports ahead (``standby``), so it listens again within
a fraction of a second. One that keeps dying before it was alive a second is restarted less and less often. A
worker writes a byte on a pipe to its supervisor every 200 ms from its event loop; one silent for ``timeout_ms``
(frozen, stalled) is killed and started again, with one log line. A worker that stopped leaves the directory at
once. One failing before the cluster is up stops it. Ctrl-C stops every worker (SIGINT, then SIGKILL
after ``STOP_GRACE_MS``).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass

import trio

from server.ops import logs
from server.cluster import names
from server.cluster.directory import HEARTBEAT_MS

MIN_BACKOFF_MS = 100
MAX_BACKOFF_MS = 5000
STABLE_MS = 1000  # a worker that was alive (listening) this long is restarted at once again next time
STOP_GRACE_MS = 5000
READY_TIMEOUT_MS = 60_000  # to wait for every worker to listen before the banner says where they are
TIMEOUT_MS = 1500  # a worker silent this long (no byte on its pipe) is killed and started again
REDIS_MS = 1000  # the most a change of the directory (a worker gone) may take; it is not waited for
SPARE_AFTER_MS = 1000  # a spare taken is replaced this long after: not while the worker it became recovers


class WorkerRefused(Exception):
    """A worker exited with status 2 on its first start: it said why on its standard error."""


@dataclass
class Plan:
    host: str
    port: int  # the shared port
    ports: dict[int, int]  # worker id -> its own port
    argv: list[str]  # the serve command's own arguments, given to every worker with its id and ports
    redis_url: str | None = None  # to take a worker that stopped out of the directory at once
    timeout_ms: int = TIMEOUT_MS


def pick_ports(host: str, port: int, base: int | None, workers: list[int]) -> Plan:
    """The shared port (a free one for 0) and each worker's own: ``base``, base+1... (default: the shared
    port's next ones, or free ones when the shared port is 0). Fixed for the cluster's life: a worker restarted
    is found where it was."""
    free = port == 0 or base == 0
    if port == 0:
        port = _free_port(host)
    if base is None or base == 0:
        own = {w: _free_port(host) for w in workers} if free else {w: port + 1 + i for i, w in enumerate(workers)}
    else:
        own = {w: base + i for i, w in enumerate(workers)}
    return Plan(host, port, own, [])


def _free_port(host: str) -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def worker_command(plan: Plan, worker: int, alive_fd: int | None = None) -> list[str]:
    alive = [] if alive_fd is None else ["--alive-fd", str(alive_fd)]
    return [sys.executable, "-m", "server.cli.main", *plan.argv, "--port", str(plan.port), "--worker-id", str(worker),
            "--own-port", str(plan.ports[worker]), *alive]


async def supervise(plan: Plan, ready: Callable[[], None], heartbeat_ms: int = HEARTBEAT_MS) -> None:
    """Run every worker until cancelled (Ctrl-C); ``ready`` is called once all of them listen on their ports
    and have seen each other in the directory.
    ``WorkerRefused`` if a worker will not start."""
    started = trio.Event()
    await _leave_directory(plan, list(plan.ports), "started")  # entries of a previous run: not listening yet
    async with trio.open_nursery() as nursery:
        spares = Spares(nursery)
        try:
            for worker in plan.ports:
                nursery.start_soon(_keep_worker, plan, worker, started, spares)
            with trio.fail_after(READY_TIMEOUT_MS / 1000):
                for own in plan.ports.values():
                    await _until_listening(plan.host, own)
            await trio.sleep(2 * heartbeat_ms / 1000)  # every worker has registered, and read the others' entries
            started.set()
            ready()
            nursery.start_soon(spares.refill, 0)
            await trio.sleep_forever()
        finally:
            spares.close()


async def _until_listening(host: str, port: int) -> None:
    while True:
        try:
            stream = await trio.open_tcp_stream("127.0.0.1" if host in ("0.0.0.0", "") else
                                                "::1" if host == "::" else host, port)
        except OSError:
            await trio.sleep(0.05)
            continue
        await stream.aclose()
        return


class Spares:
    """The spare process (``standby``) a worker that died is started from, and its pipe's read end."""

    def __init__(self, nursery: trio.Nursery) -> None:
        self.nursery = nursery
        self.spare: tuple[trio.Process, int, int] | None = None  # the process, its pipe's read end, its write fd

    async def refill(self, after_ms: int = SPARE_AFTER_MS) -> None:
        await trio.sleep(after_ms / 1000)
        if self.spare is not None:
            return
        read_end, write_end = os.pipe()
        try:
            process = await trio.lowlevel.open_process([sys.executable, "-m", "server.cli.standby"],
                                                       stdin=subprocess.PIPE, pass_fds=(write_end,))
        except OSError as exc:
            os.close(read_end)
            logs.get().warning("spare_not_started", error=str(exc)[:200], meaning="workers restart cold")
            return
        finally:
            os.close(write_end)
        self.spare = (process, read_end, write_end)

    async def take(self, plan: Plan, worker: int) -> tuple[trio.Process, int] | None:
        """The spare, told to become ``worker`` (its pipe's read end with it); None if there is none ready."""
        spare, self.spare = self.spare, None
        if spare is None:
            return None
        self.nursery.start_soon(self.refill)
        process, read_end, child_fd = spare
        argv = worker_command(plan, worker, child_fd)[3:]  # without python -m server.cli.main
        try:
            if process.returncode is not None or process.stdin is None:
                raise trio.BrokenResourceError
            await process.stdin.send_all((json.dumps(argv) + "\n").encode())
            await process.stdin.aclose()
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            os.close(read_end)
            process.kill()
            return None
        return process, read_end

    def close(self) -> None:
        spare, self.spare = self.spare, None
        if spare is not None:
            os.close(spare[1])
            if spare[0].returncode is None:
                spare[0].kill()


async def _keep_worker(plan: Plan, worker: int, started: trio.Event, spares: Spares) -> None:
    log = logs.get(worker=worker)
    failures = 0
    try:
        while True:
            began = trio.current_time()
            taken = await spares.take(plan, worker) if started.is_set() else None
            if taken is not None:
                process, read_end = taken
            else:
                read_end, write_end = os.pipe()
                try:
                    process = await trio.lowlevel.open_process(worker_command(plan, worker, write_end),
                                                               pass_fds=(write_end,))
                except BaseException:
                    os.close(read_end)
                    raise
                finally:
                    os.close(write_end)
            log.info("worker_started", pid=process.pid, port=plan.ports[worker], spare=taken is not None)
            try:
                alive_ms, silent_ms = await _watch_alive(read_end, plan.timeout_ms, process)
            finally:
                with trio.CancelScope(shield=True):
                    await _stop(process)
            status = process.returncode
            assert status is not None
            ran_ms = int((trio.current_time() - began) * 1000)
            if status > 0 and not started.is_set():  # it exited by itself before the cluster was up: it said why
                raise WorkerRefused(f"worker {worker} did not start (status {status}: its reason is above)")
            trio.lowlevel.spawn_system_task(_leave_directory, plan, [worker], "away")
            failures = 0 if alive_ms >= STABLE_MS else failures + 1
            backoff_ms = min(MIN_BACKOFF_MS * 2 ** max(failures - 1, 0), MAX_BACKOFF_MS) if failures else 0
            if silent_ms is None:
                log.warning("worker_died", status=status, ran_ms=ran_ms, restart_in_ms=backoff_ms)
            else:
                log.warning("worker_not_answering", silent_ms=silent_ms, ran_ms=ran_ms, restart_in_ms=backoff_ms,
                            meaning="killed and started again")
            await trio.sleep(backoff_ms / 1000)
    finally:
        with trio.CancelScope(shield=True):
            await _leave_directory(plan, [worker], "stopped")


async def _watch_alive(fd: int, timeout_ms: int, process: trio.Process) -> tuple[int, int | None]:
    """Until ``process`` ends (its end of the pipe closes): how long it was alive (from its first byte: before,
    it recovers its tables and starts listening, for as long as its log takes), and None if it ended by itself
    or the ms it had been silent if it was killed for that."""
    async with trio.lowlevel.FdStream(fd) as pipe:
        first = heard = None
        while True:
            with trio.move_on_after(float("inf") if heard is None else timeout_ms / 1000):
                if not await pipe.receive_some(4096):
                    await process.wait()
                    return (0 if first is None else int((trio.current_time() - first) * 1000)), None
                heard = trio.current_time()
                first = heard if first is None else first
                continue
            assert first is not None and heard is not None
            process.kill()
            await process.wait()
            now = trio.current_time()
            return int((now - first) * 1000), int((now - heard) * 1000)


async def _leave_directory(plan: Plan, workers: list[int], why: str) -> None:
    """Take ``workers`` out of the directory now (their entries; on ``stopped``, their membership too): the
    others stop sending clients there at once, instead of when the entry expires. Best effort, bounded."""
    if plan.redis_url is None:
        return
    from coredis import Redis
    from coredis.exceptions import RedisError

    refused = False
    try:
        with trio.move_on_after(REDIS_MS / 1000) as scope:
            async with Redis.from_url(plan.redis_url, decode_responses=True) as redis:
                await redis.delete([names.entry_key(w) for w in workers])
                if why == "stopped":
                    await redis.srem(names.WORKERS, [str(w) for w in workers])
                elif why == "started":  # registered before they listen: their tables are unavailable meanwhile
                    await redis.sadd(names.WORKERS, [str(w) for w in workers])
                for w in workers:
                    await redis.publish(names.CHANGES, str(w))
    except* (RedisError, OSError, ValueError) as group:  # the client's pool may raise them as a group
        logs.get().info("directory_not_updated", workers=workers, why=why, error=str(group.exceptions[0])[:200])
        refused = True
    if scope.cancelled_caught and not refused:  # Redis did not answer in time: said as a refusal is
        logs.get().info("directory_not_updated", workers=workers, why=why, error=f"no answer in {REDIS_MS} ms")


async def _stop(process: trio.Process) -> None:
    """A worker still running when the supervisor stops: it had SIGINT with the terminal's Ctrl-C, or gets it
    now; SIGKILL if it has not stopped after the grace time."""
    if process.returncode is not None:
        return
    with trio.move_on_after(0.5):
        await process.wait()  # Ctrl-C in a terminal reached it too
    if process.returncode is None:
        process.send_signal(signal.SIGINT)
        with trio.move_on_after(STOP_GRACE_MS / 1000):
            await process.wait()
    if process.returncode is None:
        process.kill()
        await process.wait()
