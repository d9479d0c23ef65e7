"""Small measuring helpers for the bench: percentiles, and CPU time and peak RSS of a process from /proc.

No psutil: ``/proc/PID/stat`` gives utime and stime (fields 14 and 15, in clock ticks) and
``/proc/PID/status`` gives ``VmHWM``, the peak resident set size. Linux only, like the bench.
"""

from __future__ import annotations

import argparse

import math
import os
import resource
from collections.abc import Callable
from typing import Sequence

TICKS_PER_S = os.sysconf("SC_CLK_TCK")


def percentile(sorted_values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0..100) of already sorted values, nearest-rank; None when empty."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(q / 100 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def summarize(values: Sequence[float], qs: Sequence[float] = (50, 99, 99.9)) -> dict[str, float | None]:
    """``{"p50": .., "p99": .., "p99.9": .., "max": .., "count": n}`` of ``values`` (unsorted)."""
    data = sorted(values)
    out: dict[str, float | None] = {f"p{q:g}": percentile(data, q) for q in qs}
    out["max"] = data[-1] if data else None
    out["count"] = len(data)
    return out


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time that ``pid`` has used so far, in seconds."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        raw = f.read().decode()
    # the command name (field 2) is in parentheses and may hold spaces: split after its closing one
    fields = raw[raw.rindex(")") + 2:].split()
    utime, stime = int(fields[11]), int(fields[12])  # fields 14 and 15 of the whole line
    return (utime + stime) / TICKS_PER_S


def peak_rss_mb(pid: int) -> float | None:
    """Peak resident set size (``VmHWM``) of ``pid`` in MiB, None if the kernel does not say."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
    except OSError:
        return None
    return None


def process_tree(pid: int) -> list[int]:
    """``pid`` and every live process under it (a cluster's supervisor and its workers)."""
    out, todo = [], [pid]
    while todo:
        parent = todo.pop()
        out.append(parent)
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:  # a child is listed under the thread that started it
            try:
                with open(f"/proc/{parent}/task/{task}/children") as f:
                    todo.extend(int(child) for child in f.read().split())
            except OSError:
                continue
    return out


def _tree_cpu(pid: int) -> dict[int, float]:
    out = {}
    for member in process_tree(pid):
        try:
            out[member] = cpu_seconds(member)
        except OSError:
            continue  # gone meanwhile
    return out


class CpuMeter:
    """CPU share of a process and the processes under it between ``start()`` and ``stop()``: 1.0 is one core
    busy all the time; ``shares`` has each process's own (a cluster: the supervisor's, then each worker's)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._cpu0: dict[int, float] = {}
        self._wall0 = 0.0
        self.share: float | None = None
        self.shares: dict[int, float] = {}

    def start(self, wall: float) -> None:
        self._cpu0, self._wall0 = _tree_cpu(self.pid), wall

    def stop(self, wall: float) -> float:
        elapsed = wall - self._wall0
        now = _tree_cpu(self.pid)
        self.shares = {p: (now[p] - self._cpu0.get(p, 0.0)) / elapsed if elapsed > 0 else 0.0 for p in now}
        self.share = sum(self.shares.values())
        return self.share


def raise_nofile_limit() -> int:
    """Raise this process's open-file limit to the hard limit (children inherit it); return the new limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        hard = 1 << 20
    if soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            pass
    return soft


def machine() -> dict[str, object]:
    """What the results were measured on."""
    import platform

    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem_gb = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem_gb = round(int(line.split()[1]) / 1024 / 1024, 1)
                    break
    except OSError:
        pass
    versions: dict[str, str | None] = {}
    from importlib import metadata

    for dist in ("trio", "trio-websocket", "wsproto", "msgpack", "websockets", "picows", "uvloop"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = None
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = None
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": mem_gb,
        "os": f"{platform.system()} {platform.release()}",
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "packages": versions,
        "nofile_limit": resource.getrlimit(resource.RLIMIT_NOFILE)[0],
        "loadavg_1m_at_start": round(load, 2) if load is not None else None,
    }


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    value = int(text) if text.strip().isdigit() else 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"not a positive whole number: {text!r}")
    return value


def positive_ints(text: str) -> list[int]:
    """An argparse type: positive whole numbers separated by commas."""
    return [positive_int(part) for part in text.split(",")]


def run_script(main: Callable[[], None], name: str) -> None:
    """Run a bench script's ``main``: Ctrl-C is exit status 130, and a directory it may not write to or a full
    disk is one line, not a traceback."""
    try:
        main()
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    except OSError as exc:
        raise SystemExit(f"{name}: {exc.strerror or exc}: {exc.filename or ''}") from None
