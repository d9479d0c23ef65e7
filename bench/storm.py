"""The "storm" benchmark: concurrent auctions over real WebSocket connections, and the sweep over it.

    parsimonia bench --quick                   # T=10, three rates, every default server: a minute or two
    parsimonia bench                           # the full sweep: T = 10, 100, 1000 and rising rates
    parsimonia bench --tables 100 --rates 500,1000 --servers parsimonia --duration 5

Each run starts the server under test in its own process (ours, or one of the bare baselines), then
the load generator (``bench/loadgen.py``) in another, on loopback. The generator plays T tables of 6
seats at an aggregate bid rate R (open loop) for a warm-up and a measured window; this process samples
the server's CPU over that window from /proc, reads its peak RSS, and stops both processes. For each T
and server the rates rise until a run fails (p99 >= 50 ms, an error, a disconnect, an unanswered bid)
or the generator cannot keep its schedule; the capacity is the highest rate that passed. Results: a
table on stdout, a JSON file and a PNG plot of p99 latency against rate. See ``bench/README.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.stats import CpuMeter, machine, peak_rss_mb, raise_nofile_limit  # noqa: E402

P99_LIMIT_MS = 50.0
DEFAULT_TABLES = (10, 100, 1000)
# steps of 1.5x: a capacity is found to within a third, not a half
DEFAULT_RATES = (250, 375, 550, 800, 1200, 1800, 2700, 4000, 6000, 9000, 13500, 20000)
QUICK_TABLES = (10,)
QUICK_RATES = (250, 1000, 2000)
SERVERS = ("parsimonia", "bare-trio", "bare-transport", "bare-websockets", "colyseus")
BASELINES = SERVERS[1:]
COLYSEUS = BENCH / "colyseus"  # a Node package: the baseline room and its pinned Colyseus
# ours as shipped (journal, fsync), journaled without fsync (--sync write), and memory only (--sync off); and
# ours as shipped with every seat joined with views on (a view frame per seat after every change)
# and as shipped on a cluster of 2 workers (serve --workers 2, a redis-server started for the run: README, Run a
# cluster), and of one (the supervisor and one worker on Redis: what the cluster's code costs one process);
# --workers 1 without --redis is `parsimonia` itself (no supervisor, no Redis)
OURS = ("parsimonia", "parsimonia-write", "parsimonia-nojournal", "parsimonia-views", "parsimonia-workers2",
        "parsimonia-workers1")
CLUSTERED = {"parsimonia-workers2": 2, "parsimonia-workers1": 1}
CLUSTER_SETTLE_S = 1.5  # after the shared port listens: every worker registered and has seen the others
ALIASES = {"ours": "parsimonia", "write": "parsimonia-write", "workers2": "parsimonia-workers2", "workers1": "parsimonia-workers1",
           "nojournal": "parsimonia-nojournal", "views": "parsimonia-views", "trio": "bare-trio", "transport": "bare-transport",
           "websockets": "bare-websockets"}
# the generator is the bottleneck when it cannot keep its schedule, or uses (nearly) a whole core
LOADGEN_LAG_LIMIT_MS = 20.0
LOADGEN_CPU_LIMIT = 0.9
BUSY_LOAD = 0.7  # 1-minute load average above which the harness warns that others share the machine


def server_command(name: str, port: int, data_dir: str, redis_url: str | None = None) -> list[str]:
    if name in OURS:
        durability = {"parsimonia": ["--data", data_dir], "parsimonia-write": ["--data", data_dir, "--sync", "write"],
                      "parsimonia-nojournal": ["--sync", "off"], "parsimonia-views": ["--data", data_dir],
                      "parsimonia-workers2": ["--data", data_dir], "parsimonia-workers1": ["--data", data_dir]}[name]
        if name in CLUSTERED:
            durability += ["--workers", str(CLUSTERED[name]), "--redis", str(redis_url), "--worker-ports", "0"]
        # the generator is the one client that per-client limits exist to stop: lift them for it
        limits = ["--max-tables-per-client", "1000000", "--max-messages-per-s", "1000000",
                  "--max-bytes-per-s", "1000000000", "--max-connections-per-ip", "1000000",
                  "--max-http-connections-per-ip", "1000000", "--max-handshakes-per-s", "1e9",
                  "--max-address-messages-per-s", "1e9", "--max-address-bytes-per-s", "1e12",
                  "--max-waiting-tables-per-ip", "1000000", "--max-playing-tables-per-ip", "1000000"]
        return [sys.executable, "-c", "from server.cli.main import main; main()", "serve", "--port", str(port),
                "--log-level", "warning", *durability, *limits]
    if name == "bare-trio":
        return [sys.executable, str(BENCH / "baseline_trio.py"), "--port", str(port)]
    if name == "bare-transport":
        return [sys.executable, str(BENCH / "baseline_transport.py"), "--port", str(port)]
    if name == "bare-websockets":
        return [sys.executable, str(BENCH / "baseline_websockets.py"), "--port", str(port)]
    if name == "colyseus":
        return ["node", str(COLYSEUS / "server.mjs"), "--port", str(port)]
    raise ValueError(f"unknown server {name!r}; choose from {', '.join((*SERVERS, *OURS[1:]))}")


def install_colyseus() -> None:
    """Install the Colyseus baseline's packages (``npm ci``) when they are missing or older than the lock
    file; a ValueError with one line when node or npm is missing or the install fails."""
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            raise ValueError(f"the colyseus baseline needs {tool} (Node.js), which is not installed; "
                             "install it, or leave colyseus out of --servers")
    installed = COLYSEUS / "node_modules" / ".package-lock.json"
    if installed.exists() and installed.stat().st_mtime >= (COLYSEUS / "package-lock.json").stat().st_mtime:
        return
    done = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=COLYSEUS,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise ValueError(f"npm ci in {COLYSEUS} failed (exit {done.returncode}): {last}")


@dataclass
class Config:
    tables: tuple[int, ...] = DEFAULT_TABLES
    rates: tuple[float, ...] = DEFAULT_RATES
    servers: tuple[str, ...] = SERVERS
    warmup: float = 3.0
    duration: float = 10.0
    drain: float = 5.0
    quiet_ms: int = 2000
    bids_per_auction: int = 20
    engine_games: int = 100
    setup_timeout: float = 180.0
    json_path: str | None = str(BENCH / "results" / "latest.json")
    plot_path: str | None = str(BENCH / "results" / "latest.png")
    quick: bool = False
    start: dict[str, float] = field(default_factory=dict)  # server -> the rate its climb begins at


# ---------------------------------------------------------------------------------------------- processes


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port: int, proc: subprocess.Popen, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with code {proc.returncode} before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"the server did not listen on port {port} within {timeout:.0f} s")


def start_redis(data_dir: str) -> tuple[subprocess.Popen, str]:
    """A redis-server for a cluster's run, on a free port, saving nothing; and its URL."""
    port = free_port()
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", data_dir], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_listening(port, proc)
    return proc, f"redis://127.0.0.1:{port}/0"


def stop(proc: subprocess.Popen | None, grace: float = 5.0, sig: int = signal.SIGTERM) -> None:
    """Stop a process this harness started: ``sig`` (a cluster's supervisor: SIGINT, which it passes on to its
    workers), then SIGKILL after ``grace`` seconds."""
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(sig)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


def _lines(stream: Any, out: "queue.Queue[str | None]") -> None:
    for line in stream:
        out.put(line.rstrip("\n"))
    out.put(None)


def _tail(f: Any, lines: int = 5) -> list[str]:
    f.seek(0)
    text = f.read().decode(errors="replace").splitlines()
    return text[-lines:]


def _warnings(f: Any) -> tuple[int, list[str]]:
    f.seek(0)
    text = f.read().decode(errors="replace").splitlines()
    hits = [ln for ln in text if "warning" in ln.lower() or "error" in ln.lower() or "Traceback" in ln]
    return len(hits), hits[:5]


def run_one(cfg: Config, server: str, tables: int, rate: float) -> dict[str, Any]:
    """One storm run against a fresh server process; always stops both processes."""
    port = free_port()
    kind = "ours" if server in OURS else "colyseus" if server == "colyseus" else "bare"
    row: dict[str, Any] = {"server": server, "tables": tables, "connections": tables * 6, "rate": rate,
                           "loadavg_1m_before": round(os.getloadavg()[0], 2)}
    srv = gen = redis = None
    with tempfile.TemporaryFile() as srv_err, tempfile.TemporaryFile() as gen_err, \
            tempfile.TemporaryDirectory(prefix="parsimonia-bench-") as data_dir:
        try:
            redis_url = None
            if server in CLUSTERED:
                redis, redis_url = start_redis(data_dir)
            srv = subprocess.Popen(server_command(server, port, data_dir, redis_url), cwd=ROOT,
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=srv_err)
            wait_listening(port, srv)
            if server in CLUSTERED:
                time.sleep(CLUSTER_SETTLE_S)
            meter = CpuMeter(srv.pid)
            gen = subprocess.Popen(
                [sys.executable, str(BENCH / "loadgen.py"), "--url", f"ws://127.0.0.1:{port}/", "--kind", kind,
                 "--tables", str(tables), "--rate", str(rate), "--warmup", str(cfg.warmup),
                 "--duration", str(cfg.duration), "--drain", str(cfg.drain), "--quiet-ms", str(cfg.quiet_ms),
                 "--bids-per-auction", str(cfg.bids_per_auction), "--setup-timeout", str(cfg.setup_timeout),
                 *(["--views"] if server == "parsimonia-views" else [])],
                cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=gen_err, text=True,
            )
            lines: queue.Queue[str | None] = queue.Queue()
            threading.Thread(target=_lines, args=(gen.stdout, lines), daemon=True).start()
            deadline = time.monotonic() + cfg.setup_timeout + cfg.warmup + cfg.duration + cfg.drain + 30
            result: dict[str, Any] | None = None
            while time.monotonic() < deadline:
                try:
                    line = lines.get(timeout=max(0.01, deadline - time.monotonic()))
                except queue.Empty:
                    break
                if line is None:
                    break
                if line == "MEASURE_START":
                    meter.start(time.monotonic())
                elif line == "MEASURE_END":
                    meter.stop(time.monotonic())
                    row["server_rss_mb"] = _round(peak_rss_mb(srv.pid), 1)
                elif line.startswith("RESULT "):
                    result = json.loads(line[len("RESULT "):])
            if gen.poll() is None:
                try:
                    gen.wait(15)
                except subprocess.TimeoutExpired:
                    pass
            if result is None:
                row.update(errors=1, disconnects=0, notes=["the load generator gave no result"] + _tail(gen_err))
            else:
                row.update({k: v for k, v in result.items() if k not in ("kind", "rate", "tables")})
            row["server_cpu"] = _round(meter.share, 3)
            if server in CLUSTERED:  # each worker's own share (the supervisor's is next to nothing)
                row["worker_cpu"] = [_round(v, 3) for p, v in sorted(meter.shares.items()) if p != srv.pid]
            row.setdefault("server_rss_mb", _round(peak_rss_mb(srv.pid), 1))
            if srv.poll() is not None:
                row["errors"] = row.get("errors", 0) + 1
                row.setdefault("notes", []).append(f"the server died (exit {srv.returncode})")
        except Exception as exc:  # noqa: BLE001 - a failed run is a row, not a crash of the sweep
            row.update(errors=row.get("errors", 0) + 1, disconnects=row.get("disconnects", 0))
            row.setdefault("notes", []).append(f"harness: {type(exc).__name__}: {exc}")
        finally:
            stop(gen)
            stop(srv, sig=signal.SIGINT if server in CLUSTERED else signal.SIGTERM)
            stop(redis)
        warn_count, warn_lines = _warnings(srv_err)
        row["server_log_warnings"] = warn_count
        if warn_lines:
            row.setdefault("notes", []).extend(f"server: {ln[:200]}" for ln in warn_lines)
    for key in ("sent_per_s", "accepted_per_s", "delivered_per_s", "p50_ms", "p99_ms", "p999_ms", "max_ms",
                "timer_late_p50_ms", "timer_late_p99_ms", "timer_late_max_ms", "server_cpu", "server_rss_mb",
                "loadgen_cpu", "schedule_lag_p99_ms"):
        row.setdefault(key, None)
    row.setdefault("errors", 0)
    row.setdefault("disconnects", 0)
    row.setdefault("unanswered", 0)
    row["loadgen_ok"] = bool(
        row.get("schedule_kept")
        and (row["schedule_lag_p99_ms"] or 0) < LOADGEN_LAG_LIMIT_MS
        and (row["loadgen_cpu"] or 0) < LOADGEN_CPU_LIMIT
    )
    if row["p99_ms"] is not None and row["p99_ms"] >= P99_LIMIT_MS and (row["server_cpu"] or 0) < 0.7:
        row.setdefault("notes", []).insert(
            0,
            f"p99 over {P99_LIMIT_MS:g} ms with the server using {row['server_cpu']} of a core: it waited for "
            "the CPU (other load on the machine?) or for its own queues, not for work")
    row["passed"] = bool(
        row["errors"] == 0 and row["disconnects"] == 0 and row["unanswered"] == 0 and not row.get("setup_failed")
        and row["p99_ms"] is not None and row["p99_ms"] < P99_LIMIT_MS and row.get("accepted", 0) > 0
    )
    return row


def _round(x: float | None, nd: int) -> float | None:
    return None if x is None else round(x, nd)


# ---------------------------------------------------------------------------------------------- the sweep

COLUMNS = [
    ("server", "server", "{}"), ("T", "tables", "{}"), ("conns", "connections", "{}"), ("rate", "rate", "{:g}"),
    ("sent/s", "sent_per_s", "{:.0f}"), ("acc/s", "accepted_per_s", "{:.0f}"), ("rej/s", "rejected_per_s", "{:.0f}"),
    ("msgs/s", "delivered_per_s", "{:.0f}"), ("p50", "p50_ms", "{:.1f}"), ("p99", "p99_ms", "{:.1f}"),
    ("p99.9", "p999_ms", "{:.1f}"), ("max", "max_ms", "{:.1f}"), ("tmr50", "timer_late_p50_ms", "{:g}"),
    ("tmr99", "timer_late_p99_ms", "{:g}"), ("tmrmax", "timer_late_max_ms", "{:g}"), ("srvcpu", "server_cpu", "{:.2f}"),
    ("rssMB", "server_rss_mb", "{:.0f}"), ("gencpu", "loadgen_cpu", "{:.2f}"), ("lag99", "schedule_lag_p99_ms", "{:.1f}"),
    ("err", "errors", "{}"), ("disc", "disconnects", "{}"), ("ok", "passed", "{}"),
]
WIDTHS = [15, 4, 5, 6, 6, 6, 5, 7, 6, 6, 6, 6, 5, 5, 6, 6, 5, 6, 5, 3, 4, 3]


def _cell(row: dict[str, Any], key: str, fmt: str) -> str:
    value = row.get(key)
    if value is None:
        return "-"
    if key == "passed":  # as capacity_of reads a run: a generator off its schedule measured a lower bound
        return "gen" if not row.get("loadgen_ok") and (value or row.get("errors") == 0) else ("yes" if value else "NO")
    try:
        return fmt.format(value)
    except (ValueError, TypeError):
        return str(value)


def legend() -> list[str]:
    """What each column of ``header`` is: its JSON field in a run (``runs`` in --json's file), and what ok says."""
    names = [f"{name}={key}" for name, key, _ in COLUMNS if name not in ("server", "ok")]
    lines, line = [], "columns (each a field of a run in the JSON):"
    for name in names:
        if len(line) + len(name) + 1 > 118:
            lines.append(line)
            line = " "
        line += " " + name
    lines.append(line)
    lines.append(f" ok=passed: yes (p99 < {P99_LIMIT_MS:g} ms, no error, disconnect or lost bid), NO (failed), or gen:")
    lines.append("   the generator fell behind its schedule (loadgen_ok false), so the server's limit is higher than this "
                 "rate")
    lines.append("   (>= and * in the capacity table)")
    return lines


def header() -> str:
    return "  ".join(f"{name:>{w}}" if i else f"{name:<{w}}" for i, ((name, _, _), w) in enumerate(zip(COLUMNS, WIDTHS)))


def format_row(row: dict[str, Any]) -> str:
    cells = [_cell(row, key, fmt) for _, key, fmt in COLUMNS]
    return "  ".join(f"{c:>{w}}" if i else f"{c:<{w}}" for i, (c, w) in enumerate(zip(cells, WIDTHS)))


def capacity_of(runs: list[dict[str, Any]], server: str, tables: int) -> dict[str, Any]:
    """Highest rate that passed with the generator on schedule, and what stopped the climb."""
    mine = [r for r in runs if r["server"] == server and r["tables"] == tables]
    best = None
    limited_by = "max_rate"
    for r in sorted(mine, key=lambda r: r["rate"]):
        if not r["loadgen_ok"] and (r["passed"] or r["errors"] == 0):
            limited_by = "loadgen"
            break
        if not r["passed"]:
            limited_by = "errors" if (r["errors"] or r["disconnects"] or r["unanswered"]) else "p99"
            break
        best = r["rate"]
    return {"rate": best, "limited_by": limited_by}


def capacities(runs: list[dict[str, Any]]) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """Each server's capacity at each T it ran (rate or None), and with what stopped its climb."""
    capacity: dict[str, dict[str, Any]] = {}
    detail: dict[str, dict[str, Any]] = {}
    for server in dict.fromkeys(run["server"] for run in runs):
        for tables in dict.fromkeys(run["tables"] for run in runs if run["server"] == server):
            found = capacity_of(runs, server, tables)
            capacity.setdefault(server, {})[str(tables)] = found["rate"]
            detail.setdefault(server, {})[str(tables)] = found
    return capacity, detail


def _terminated(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)  # unwinds through run_one's finally, which stops the processes


def sweep(cfg: Config, out: Callable[[str], None] = print) -> dict[str, Any]:
    """Run every (T, server, rate) of ``cfg``; print the table, write the JSON and the plot."""
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminated) if main_thread else None
    try:
        return _sweep(cfg, out)
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)


def _sweep(cfg: Config, out: Callable[[str], None]) -> dict[str, Any]:
    start = time.monotonic()
    raise_nofile_limit()
    servers = tuple(ALIASES.get(s, s) for s in cfg.servers)
    for s in servers:
        server_command(s, 0, "")  # unknown names fail here, before anything starts
    if "colyseus" in servers:
        install_colyseus()
    report: dict[str, Any] = {
        "machine": machine(),
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "config": {k: v for k, v in asdict(cfg).items() if k not in ("json_path", "plot_path")},
        "criteria": {"p99_ms_below": P99_LIMIT_MS, "errors": 0, "disconnects": 0, "unanswered": 0,
                     "loadgen_lag_p99_ms_below": LOADGEN_LAG_LIMIT_MS, "loadgen_cpu_below": LOADGEN_CPU_LIMIT},
        "runs": [],
    }
    runs: list[dict[str, Any]] = report["runs"]
    out(f"storm: T={list(cfg.tables)} rates={list(cfg.rates)} servers={list(servers)} "
        f"warm-up {cfg.warmup:g} s, measured {cfg.duration:g} s per run")
    load = report["machine"].get("loadavg_1m_at_start")
    if load is not None and load > BUSY_LOAD:
        out(f"warning: the machine is busy before the bench starts (load average {load:g} on "
            f"{report['machine']['cores']} cores): the figures will measure that contention too")
    for line in legend():
        out(line)
    out(header())
    for tables in cfg.tables:
        for server in servers:
            for rate in cfg.rates:
                if rate < cfg.start.get(server, 0):
                    continue
                row = run_one(cfg, server, tables, rate)
                runs.append(row)
                out(format_row(row))
                for note in row.get("notes", [])[:3]:
                    out(f"    note: {note}")
                if not row["passed"] or not row["loadgen_ok"]:
                    break
    report["capacity"], report["capacity_detail"] = capacities(runs)
    report["ratios"], report["ratio_bounds"] = ratios(report["capacity"], report["capacity_detail"])
    if cfg.engine_games > 0:
        from bench.engine_games import run as engine_run

        report["engine"] = engine_run(cfg.engine_games, 4, "greedy")
    report["elapsed_s"] = round(time.monotonic() - start, 1)
    try:
        report["machine"]["loadavg_1m_at_end"] = round(os.getloadavg()[0], 2)
    except OSError:
        pass
    summary(report, out)
    write_results(report, cfg.json_path, cfg.plot_path, plot, out)
    return report


def write_results(report: dict[str, Any], json_path: str | None, plot_path: str | None,
                  draw: Callable[[dict[str, Any], str], None], out: Callable[[str], None]) -> None:
    """A run's JSON and plot (a plot skipped in one line when matplotlib is missing), then its total time."""
    if json_path:
        Path(json_path).parent.mkdir(parents=True, exist_ok=True)
        Path(json_path).write_text(json.dumps(report, indent=1) + "\n")
        out(f"JSON: {json_path}")
    if plot_path:
        try:
            draw(report, plot_path)
            out(f"plot: {plot_path}")
        except ImportError:
            out("plot: skipped (matplotlib is not installed: pip install -e '.[bench]')")
    out(f"total time: {report['elapsed_s']:.0f} s")


def ratios(capacity: dict[str, dict[str, Any]], detail: dict[str, dict[str, Any]]) -> tuple[dict, dict]:
    """Our capacity over each baseline's, per T (None where either is unknown or zero), and what kind of
    figure each ratio is: "exact", "at_most" (the baseline's capacity is only a lower bound: every rate
    passed, or the generator ran out first), "at_least" (ours is), or "unknown" (both are)."""
    ours = capacity.get("parsimonia", {})
    out: dict[str, dict[str, float | None]] = {}
    bounds: dict[str, dict[str, str]] = {}

    def lower_bound(server: str, t: str) -> bool:
        return detail.get(server, {}).get(t, {}).get("limited_by") in ("max_rate", "loadgen")

    for base in BASELINES:
        if base not in capacity or "parsimonia" not in capacity:
            continue
        name = f"parsimonia/{base}"
        out[name], bounds[name] = {}, {}
        for t in capacity[base]:
            ok = bool(ours.get(t) and capacity[base].get(t))
            out[name][t] = round(ours[t] / capacity[base][t], 3) if ok else None
            lo_ours, lo_base = lower_bound("parsimonia", t), lower_bound(base, t)
            bounds[name][t] = {(False, False): "exact", (False, True): "at_most", (True, False): "at_least",
                               (True, True): "unknown"}[(lo_ours, lo_base)]
    return out, bounds


def summary(report: dict[str, Any], out: Callable[[str], None]) -> None:
    out("")
    out(f"capacity: highest rate (bids/s) with p99 < {P99_LIMIT_MS:g} ms and no errors, disconnects or lost bids")
    tables = sorted({int(t) for caps in report["capacity"].values() for t in caps})
    w = max([16, *(len(n) + 2 for n in [*report["ratios"], *report["capacity"]])])
    out(f"{'server':<{w}}" + "".join(f"{'T=' + str(t):>14}" for t in tables))
    for server, caps in report["capacity"].items():
        cells = []
        for t in tables:
            detail = report.get("capacity_detail", {}).get(server, {}).get(str(t), {})
            rate = caps.get(str(t))
            if str(t) not in caps:
                cells.append(f"{'-':>14}")  # not run at this T
                continue
            text = "none" if rate is None else f"{rate:g}"
            if detail.get("limited_by") in ("loadgen", "max_rate"):
                text = f">={text}" if rate is not None else text
                text += "*" if detail.get("limited_by") == "loadgen" else ""
            cells.append(f"{text:>14}")
        out(f"{server:<{w}}" + "".join(cells))
    marks = {"exact": "", "at_most": "<=", "at_least": ">=", "unknown": "~"}
    for name, by_t in report["ratios"].items():
        cells = []
        for t in tables:
            value = by_t.get(str(t))
            mark = marks[report["ratio_bounds"][name].get(str(t), "exact")]
            cells.append(f"{'-' if value is None else mark + format(value, '.2f'):>14}")
        out(f"{name:<{w}}" + "".join(cells))
    if any(d.get("limited_by") == "loadgen" for caps in report.get("capacity_detail", {}).values()
           for d in caps.values()):
        out("  * the generator could not keep its schedule above this rate: the server's limit is higher")
    engine = report.get("engine")
    if engine:
        out(f"engine only: {engine['games_per_s']} games/s ({engine['actions_per_s']} actions/s), "
            f"{engine['games']} simulated games of {engine['players']} {engine['kind']} players in one process")


def plot(report: dict[str, Any], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    runs = report["runs"]
    tables = sorted({r["tables"] for r in runs})
    if not tables:
        return
    fig, axes = plt.subplots(1, len(tables), figsize=(5 * len(tables), 4), squeeze=False)
    for ax, t in zip(axes[0], tables):
        for server in report["capacity"]:
            pts = sorted((r["rate"], r["p99_ms"]) for r in runs
                         if r["server"] == server and r["tables"] == t and r.get("p99_ms") is not None)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=server)
        ax.axhline(P99_LIMIT_MS, color="grey", linestyle="--", linewidth=1, label=f"{P99_LIMIT_MS:g} ms")
        ax.set_xscale("log")
        ax.set_yscale("log")
        rates = sorted({r["rate"] for r in runs if r["tables"] == t})
        ax.set_xticks(rates)
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: f"{x:g}"))
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set_title(f"T = {t} tables ({t * 6} connections)")
        ax.set_xlabel("bid rate (bids/s, all seats)")
        ax.set_ylabel("p99 bid -> broadcast latency (ms)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("storm: p99 latency against bid rate")
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


# ---------------------------------------------------------------------------------------------- command line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quick", action="store_true",
                        help=f"T={','.join(map(str, QUICK_TABLES))}, rates {','.join(map(str, QUICK_RATES))}, "
                             "3 s runs: under two minutes")
    parser.add_argument("--json", metavar="PATH", help="results file (default bench/results/latest.json)")
    parser.add_argument("--plot", metavar="PATH", help="PNG of p99 against rate (default bench/results/latest.png)")
    parser.add_argument("--tables", help="comma-separated table counts (default 10,100,1000)")
    parser.add_argument("--rates", help="comma-separated bid rates, rising (default 250,375,...,20000: steps of 1.5x)")
    parser.add_argument("--duration", type=float, help="measured seconds per run (default 10; quick 3)")
    parser.add_argument("--warmup", type=float, help="warm-up seconds per run (default 3; quick 1)")
    parser.add_argument("--servers", help=f"comma-separated, from {','.join((*SERVERS, *OURS[1:]))} (default: "
                        f"{','.join(SERVERS)})")
    parser.add_argument("--start", metavar="SERVER=RATE,...",
                        help="begin a server's climb at this rate, not the lowest (saves the runs far below its limit)")
    parser.add_argument("--quiet-ms", type=int, default=2000, help="auction quiet time on our server")
    parser.add_argument("--engine-games", type=int, help="engine-only games to time (default 100; quick 10; 0: skip)")
    from bench.scale import add_arguments as add_scale_arguments

    add_scale_arguments(parser)


def config_from_args(args: argparse.Namespace) -> Config:
    cfg = Config(quick=args.quick, quiet_ms=args.quiet_ms)
    if args.quick:
        cfg.tables, cfg.rates, cfg.duration, cfg.warmup, cfg.drain, cfg.engine_games = (
            QUICK_TABLES, QUICK_RATES, 3.0, 1.0, 3.0, 10)
    if args.tables:
        cfg.tables = tuple(int(x) for x in args.tables.split(","))
    if args.rates:
        cfg.rates = tuple(sorted(int(float(x)) if float(x).is_integer() else float(x) for x in args.rates.split(",")))
    if args.duration is not None:
        cfg.duration = args.duration
    if args.warmup is not None:
        cfg.warmup = args.warmup
    if args.servers:
        cfg.servers = tuple(ALIASES.get(s.strip(), s.strip()) for s in args.servers.split(","))
    if args.start:
        for item in args.start.split(","):
            name, _, rate = item.partition("=")
            try:
                cfg.start[ALIASES.get(name.strip(), name.strip())] = float(rate)
            except ValueError:
                raise ValueError(f"--start takes SERVER=RATE items, not {item!r}") from None
    if args.engine_games is not None:
        cfg.engine_games = args.engine_games
    if args.json:
        cfg.json_path = args.json
    if args.plot:
        cfg.plot_path = args.plot
    return cfg


def run_from_args(args: argparse.Namespace) -> int:
    if getattr(args, "workers", None):  # the scaling sweep over cluster sizes (bench/scale.py)
        from bench.scale import run_from_args as run_scale

        return run_scale(args)
    try:
        cfg = config_from_args(args)
        report = sweep(cfg)
    except ValueError as exc:
        print(f"parsimonia bench: {exc}", file=sys.stderr)
        return 2
    return 0 if report["runs"] else 1


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="storm", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    raise SystemExit(run_from_args(parser.parse_args(argv)))


if __name__ == "__main__":
    main()
