"""Scaling over workers: the storm against ``serve --workers N --redis`` at several N, and one process beside them.

    parsimonia bench --workers 1,2
    parsimonia bench --workers 1,2,4,8 --worker-rates 2000 --worker-tables 100 --duration 4

Each size is a fresh cluster (its own redis-server; journals fsynced unless ``--sync write``) loaded by as many
``bench/loadgen.py`` processes as keep each under ``--generator-rate``, each with its own tables and share of the
rate, set up first, then started together. The rate per worker rises through ``--worker-rates`` until a run fails
as the storm's do; the capacity is the highest total rate that passed. Per size: capacity, p50/p99 at it (the worst
generator's), the cluster's CPU per bid, and ratios to one process (``serve`` alone). A size whose workers and
generators outnumber the cores is marked: its figures measure contention.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any, Callable

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.stats import CpuMeter, cpu_seconds, machine, positive_int, positive_ints, raise_nofile_limit  # noqa: E402
from bench.storm import (CLUSTER_SETTLE_S, LOADGEN_CPU_LIMIT, LOADGEN_LAG_LIMIT_MS, P99_LIMIT_MS,  # noqa: E402
                         _terminated, free_port, server_command, start_redis, stop, wait_listening, write_results)

SINGLE = 0  # the size that is one process: `serve` alone, no supervisor, no Redis
# steps of about 1.41x, so that twice and four times a rate are rates too: a cluster at one rate a worker can be
# compared with one process at the same total rate
DEFAULT_WORKER_RATES = (250, 350, 500, 700, 1000, 1400, 2000, 2800, 4000, 5600, 8000)
DEFAULT_WORKER_TABLES = 100
GENERATOR_RATE = 4000.0  # bids/s one generator is given at most (a 16-core Xeon held 4,000 per generator)
BUSY_SHARE = 0.85  # cluster and generators together using more of the machine than this: it is saturated


@dataclass
class ScaleConfig:
    workers: tuple[int, ...] = (1, 2)
    worker_rates: tuple[float, ...] = DEFAULT_WORKER_RATES
    worker_tables: int = DEFAULT_WORKER_TABLES
    generator_rate: float = GENERATOR_RATE
    sync: str = "fsync"
    rounds: str | None = None  # the journal's rounds, "free" or "aligned" (server/storage/journal.py); None: as shipped
    single: bool = True
    warmup: float = 2.0
    duration: float = 5.0
    drain: float = 3.0
    quiet_ms: int = 2000
    setup_timeout: float = 180.0
    json_path: str | None = str(BENCH / "results" / "scale.json")
    plot_path: str | None = str(BENCH / "results" / "scale.png")
    cores: int = field(default_factory=lambda: os.cpu_count() or 1)


def label(workers: int) -> str:
    return "1 process" if workers == SINGLE else f"{workers} worker{'s' if workers > 1 else ''}"


def generators_for(total_rate: float, generator_rate: float) -> int:
    return max(1, math.ceil(total_rate / generator_rate - 1e-9))


def _reader(index: int, stream: IO[str], out: "queue.Queue[tuple[int, str | None]]") -> None:
    for line in stream:
        out.put((index, line.rstrip("\n")))
    out.put((index, None))


def run_size(cfg: ScaleConfig, workers: int, worker_rate: float) -> dict[str, Any]:
    """One run: a fresh server (a cluster of ``workers``, or one process) under ``worker_rate`` bids/s per worker,
    spread over the generators it needs. Always stops every process it started."""
    n = max(workers, 1)
    rate = worker_rate * n
    gens = generators_for(rate, cfg.generator_rate)
    tables_total = cfg.worker_tables * n
    split = [tables_total // gens + (1 if i < tables_total % gens else 0) for i in range(gens)]
    row: dict[str, Any] = {"workers": workers, "size": label(workers), "worker_rate": worker_rate, "rate": rate,
                           "generators": gens, "tables": tables_total, "cores_needed": n + gens,
                           "loadavg_1m_before": round(os.getloadavg()[0], 2), "notes": []}
    srv: subprocess.Popen | None = None
    redis: subprocess.Popen | None = None
    procs: list[subprocess.Popen] = []
    with tempfile.TemporaryFile() as srv_err, tempfile.TemporaryDirectory(prefix="parsimonia-scale-") as data_dir:
        results: list[dict[str, Any] | None] = [None] * gens
        try:
            port = free_port()
            cmd = server_command("parsimonia-write" if cfg.sync == "write" else "parsimonia", port, data_dir)
            if workers != SINGLE:
                redis, url = start_redis(data_dir)
                cmd += ["--workers", str(workers), "--redis", url, "--worker-ports", "0"]
            env = dict(os.environ, **({"PARSIMONIA_JOURNAL_ROUNDS": cfg.rounds} if cfg.rounds else {}))
            srv = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=srv_err,
                                   env=env)
            wait_listening(port, srv, 60)
            if workers != SINGLE:
                time.sleep(CLUSTER_SETTLE_S + 0.1 * workers)
            lines: queue.Queue[tuple[int, str | None]] = queue.Queue()
            for i, tables in enumerate(split):
                proc = subprocess.Popen(
                    [sys.executable, str(BENCH / "loadgen.py"), "--url", f"ws://127.0.0.1:{port}/", "--kind", "ours",
                     "--tables", str(tables), "--rate", str(rate * tables / tables_total), "--warmup", str(cfg.warmup),
                     "--duration", str(cfg.duration), "--drain", str(cfg.drain), "--quiet-ms", str(cfg.quiet_ms),
                     "--setup-timeout", str(cfg.setup_timeout), "--seed", str(i + 1), "--wait-go"],
                    cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                procs.append(proc)
                threading.Thread(target=_reader, args=(i, proc.stdout, lines), daemon=True).start()
            _drive(cfg, row, srv, procs, lines, results)
        except Exception as exc:  # noqa: BLE001 - a failed run is a row, not a crash of the sweep
            row["notes"].append(f"harness: {type(exc).__name__}: {exc}")
            row["errors"] = row.get("errors", 0) + 1
        finally:
            for proc in procs:
                stop(proc)
            if srv is not None and srv.poll() is not None:
                row["notes"].append(f"the server died (exit {srv.returncode})")
                row["errors"] = row.get("errors", 0) + 1
            stop(srv, sig=signal.SIGINT if workers != SINGLE else signal.SIGTERM)
            stop(redis)
        srv_err.seek(0)
        warnings = [ln for ln in srv_err.read().decode(errors="replace").splitlines()
                    if "warning" in ln.lower() or "error" in ln.lower() or "Traceback" in ln]
        row["server_log_warnings"] = len(warnings)
        row["notes"].extend(f"server: {ln[:200]}" for ln in warnings[:3])
    _aggregate(cfg, row, results)
    return row


def _drive(cfg: ScaleConfig, row: dict[str, Any], srv: subprocess.Popen, procs: list[subprocess.Popen],
           lines: "queue.Queue[tuple[int, str | None]]", results: list[dict[str, Any] | None]) -> None:
    """Wait for every generator to set up, start them together, measure the server's and the generators' CPU
    from the first measured window's start to the last one's end, and collect each generator's result."""
    gens = len(procs)
    ready: set[int] = set()
    ended: set[int] = set()
    started = measuring = stopped = 0
    meter = CpuMeter(srv.pid)
    gen_cpu0: dict[int, float] = {}
    wall0 = 0.0
    go_sent = False
    deadline = time.monotonic() + cfg.setup_timeout + 30
    while len(ended) < gens:
        try:
            i, line = lines.get(timeout=max(0.01, deadline - time.monotonic()))
        except queue.Empty:
            row["notes"].append(f"{gens - len(ended)} generator(s) gave no result in time")
            break
        if line is None:
            ended.add(i)
        elif line == "READY":
            ready.add(i)
        elif line == "MEASURE_START":
            started += 1
            if measuring == 0:
                wall0 = time.monotonic()
                meter.start(wall0)
                gen_cpu0 = {p.pid: _cpu(p.pid) for p in procs}
            measuring += 1
        elif line == "MEASURE_END":
            stopped += 1
            if stopped == started == gens:
                wall = time.monotonic()
                row["server_cpu"] = round(meter.stop(wall), 3)
                if len(meter.shares) > 1:
                    row["worker_cpu"] = [round(v, 3) for p, v in sorted(meter.shares.items()) if p != srv.pid]
                row["generators_cpu"] = round(sum(_cpu(p.pid) - gen_cpu0.get(p.pid, 0.0) for p in procs)
                                              / max(wall - wall0, 1e-9), 3)
        elif line.startswith("RESULT "):
            results[i] = json.loads(line[len("RESULT "):])
        if not go_sent and len(ready) + len(ended) == gens:
            go_sent = True
            for k, proc in enumerate(procs):
                if k in ready and proc.stdin is not None:
                    proc.stdin.write("go\n")
                    proc.stdin.flush()
            deadline = time.monotonic() + cfg.warmup + cfg.duration + cfg.drain + 30
    for proc in procs:
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            pass


def _cpu(pid: int) -> float:
    try:
        return cpu_seconds(pid)
    except OSError:
        return 0.0


def _aggregate(cfg: ScaleConfig, row: dict[str, Any], results: list[dict[str, Any] | None]) -> None:
    got = [r for r in results if r is not None]
    missing = len(results) - len(got)
    if missing:
        row["notes"].append(f"{missing} generator(s) gave no result")
    for r in got:
        row["notes"].extend(str(n)[:200] for n in (r.get("notes") or [])[:2])
    total = {k: sum(r.get(k) or 0 for r in got) for k in ("sent_per_s", "accepted_per_s", "delivered_per_s")}
    row.update({k: round(v, 1) for k, v in total.items()})
    for key in ("p50_ms", "p99_ms", "p999_ms", "max_ms", "loadgen_cpu", "schedule_lag_p99_ms"):
        values: list[float] = [r[key] for r in got if r.get(key) is not None]
        row[key] = max(values) if values and len(values) == len(got) else None  # the worst generator's
    row["errors"] = row.get("errors", 0) + missing + sum(r.get("errors") or 0 for r in got)
    row["errors"] += sum(1 for r in got if r.get("setup_failed"))
    row["disconnects"] = sum(r.get("disconnects") or 0 for r in got)
    row["unanswered"] = sum(r.get("unanswered") or 0 for r in got)
    row.setdefault("server_cpu", None)
    row.setdefault("generators_cpu", None)
    accepted = row["accepted_per_s"]
    row["cpu_us_per_bid"] = round(row["server_cpu"] / accepted * 1e6, 1) if row["server_cpu"] and accepted else None
    row["loadgen_ok"] = bool(got) and not missing and all(
        r.get("schedule_kept") and (r.get("schedule_lag_p99_ms") or 0) < LOADGEN_LAG_LIMIT_MS
        and (r.get("loadgen_cpu") or 0) < LOADGEN_CPU_LIMIT for r in got)
    row["passed"] = bool(row["errors"] == 0 and row["disconnects"] == 0 and row["unanswered"] == 0
                         and row["p99_ms"] is not None and row["p99_ms"] < P99_LIMIT_MS and accepted > 0)
    busy = (row["server_cpu"] or 0) + (row["generators_cpu"] or 0)
    row["machine_share"] = round(busy / cfg.cores, 3)
    row["oversubscribed"] = row["cores_needed"] > cfg.cores or row["machine_share"] > BUSY_SHARE


def climb(cfg: ScaleConfig, workers: int, out: Callable[[str], None]) -> list[dict[str, Any]]:
    runs = []
    for worker_rate in cfg.worker_rates:
        row = run_size(cfg, workers, worker_rate)
        runs.append(row)
        out(format_run(row))
        for note in row["notes"][:3]:
            out(f"    note: {note}")
        if not row["passed"] or not row["loadgen_ok"]:
            break
    return runs


def capacity(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The highest rate that passed with every generator on schedule, and what stopped the climb."""
    best: dict[str, Any] | None = None
    limited_by = "max_rate"
    for r in runs:
        if not r["loadgen_ok"] and (r["passed"] or r["errors"] == 0):
            limited_by = "loadgen"
            break
        if not r["passed"]:
            limited_by = "errors" if (r["errors"] or r["disconnects"] or r["unanswered"]) else "p99"
            break
        best = r
    return {"rate": best["rate"] if best else None, "worker_rate": best["worker_rate"] if best else None,
            "limited_by": limited_by, "run": best}


def summarize_size(cfg: ScaleConfig, workers: int, runs: list[dict[str, Any]],
                   single: dict[str, Any] | None) -> dict[str, Any]:
    cap = capacity(runs)
    at = cap["run"] or {}
    size = {"workers": workers, "size": label(workers), "capacity": cap["rate"],
            "capacity_per_worker": cap["worker_rate"],
            "limited_by": cap["limited_by"], "generators": at.get("generators"), "tables": at.get("tables"),
            "p50_ms": at.get("p50_ms"), "p99_ms": at.get("p99_ms"), "server_cpu": at.get("server_cpu"),
            "cpu_us_per_bid": at.get("cpu_us_per_bid"),
            "oversubscribed": any(r["oversubscribed"] for r in runs), "capacity_ratio": None, "p99_ratio": None,
            "p99_ratio_same_total": None}
    if single is not None and workers != SINGLE:
        if cap["rate"] and single.get("capacity"):
            size["capacity_ratio"] = round(cap["rate"] / single["capacity"], 2)
        # the tail at the same load per process: this size's p99 at its capacity over one process's at that rate
        base = [r for r in single["runs"] if r["worker_rate"] == cap["worker_rate"] and r["passed"]]
        if base and at.get("p99_ms") and base[0].get("p99_ms"):
            size["p99_ratio"] = round(at["p99_ms"] / base[0]["p99_ms"], 2)
        # and at the same total rate, where one process ran it (and passed): what a cluster buys on this machine
        same = [r for r in single["runs"] if r["rate"] == cap["rate"] and r["passed"]]
        if same and at.get("p99_ms") and same[0].get("p99_ms"):
            size["p99_ratio_same_total"] = round(at["p99_ms"] / same[0]["p99_ms"], 2)
    size["runs"] = runs
    return size


# ---------------------------------------------------------------------------------------------- output

RUN_COLUMNS = [("size", "size", "{}", 10), ("gens", "generators", "{}", 4), ("T", "tables", "{}", 5),
               ("rate", "rate", "{:g}", 6), ("acc/s", "accepted_per_s", "{:.0f}", 6), ("p50", "p50_ms", "{:.1f}", 6),
               ("p99", "p99_ms", "{:.1f}", 6), ("srvcpu", "server_cpu", "{:.2f}", 6),
               ("us/bid", "cpu_us_per_bid", "{:.0f}", 6), ("gencpu", "generators_cpu", "{:.2f}", 6),
               ("lag99", "schedule_lag_p99_ms", "{:.1f}", 5), ("err", "errors", "{}", 3),
               ("disc", "disconnects", "{}", 4), ("lost", "unanswered", "{}", 4), ("ok", "passed", "{}", 3)]


def _fmt(value: Any, fmt: str) -> str:
    if value is None:
        return "-"
    try:
        return fmt.format(value)
    except (ValueError, TypeError):
        return str(value)


def format_run(row: dict[str, Any]) -> str:
    cells = []
    for i, (_, key, fmt, w) in enumerate(RUN_COLUMNS):
        if key == "passed":
            text = "gen" if not row["loadgen_ok"] and (row["passed"] or row["errors"] == 0) else (
                "yes" if row["passed"] else "NO")
        else:
            text = _fmt(row.get(key), fmt)
        if key == "size" and row.get("oversubscribed"):
            text += "!"
        cells.append(f"{text:<{w}}" if i == 0 else f"{text:>{w}}")
    return "  ".join(cells)


def run_header() -> str:
    return "  ".join(f"{name:<{w}}" if i == 0 else f"{name:>{w}}" for i, (name, _, _, w) in enumerate(RUN_COLUMNS))


def table(report: dict[str, Any]) -> list[str]:
    """The scaling table: a line per size."""
    lines = [f"{'size':<11}{'capacity':>10}{'/worker':>9}{'p50 ms':>8}{'p99 ms':>8}{'cores':>7}{'us/bid':>8}"
             f"{'x cap':>7}{'x p99':>7}{'x p99 tot':>10}  note"]
    for s in report["sizes"]:
        cap = "none" if s["capacity"] is None else f"{s['capacity']:g}"
        if s["limited_by"] in ("max_rate", "loadgen") and s["capacity"] is not None:
            cap = ">=" + cap + ("*" if s["limited_by"] == "loadgen" else "")
        notes = []
        if s["oversubscribed"]:
            notes.append("too few cores: contention")
        if s["limited_by"] not in ("max_rate",):
            notes.append(f"stopped by {s['limited_by']}")
        lines.append(f"{s['size']:<11}{cap:>10}{_fmt(s['capacity_per_worker'], '{:g}'):>9}"
                     f"{_fmt(s['p50_ms'], '{:.1f}'):>8}{_fmt(s['p99_ms'], '{:.1f}'):>8}"
                     f"{_fmt(s['server_cpu'], '{:.2f}'):>7}{_fmt(s['cpu_us_per_bid'], '{:.0f}'):>8}"
                     f"{_fmt(s['capacity_ratio'], '{:.2f}'):>7}{_fmt(s['p99_ratio'], '{:.2f}'):>7}"
                     f"{_fmt(s.get('p99_ratio_same_total'), '{:.2f}'):>10}  {'; '.join(notes)}")
    return lines


LEGEND = [
    "capacity: highest total bids/s that passed (p99 < {p99:g} ms, no error, disconnect or lost bid), at per-worker",
    "  rates rising through --worker-rates; >= the climb ran out of rates, * a generator fell behind first",
    "p50/p99: the worst generator's at capacity; cores: the server's CPU then (1.0 = one core busy); us/bid: its CPU",
    "  per accepted bid; x cap: capacity over one process's; x p99: p99 over one process's at the same rate per worker",
    "  (each process as loaded as the one); x p99 tot: over one process's at the same total rate, where it passed it",
    "! / too few cores: workers + generators outnumber the cores ({cores}), or they used over {busy:.0%} of them",
]


def plot(report: dict[str, Any], path: str) -> None:
    import matplotlib  # type: ignore[import-not-found, unused-ignore]

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # type: ignore[import-not-found, unused-ignore]

    sizes = [s for s in report["sizes"] if s["workers"] != SINGLE]
    single = next((s for s in report["sizes"] if s["workers"] == SINGLE), None)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    xs = [s["workers"] for s in sizes]
    left.plot(xs, [s["capacity"] or 0 for s in sizes], marker="o", label="cluster")
    if single and single["capacity"]:
        left.plot(xs, [single["capacity"] * x for x in xs], linestyle="--", color="grey",
                  label="one process x workers")
    left.set_xlabel("workers")
    left.set_ylabel("capacity (bids/s)")
    left.set_title("capacity")
    right.plot(xs, [s["p99_ms"] or 0 for s in sizes], marker="o", label="p99 at capacity")
    right.plot(xs, [s["p50_ms"] or 0 for s in sizes], marker="o", label="p50 at capacity")
    if single and single["p99_ms"]:
        right.axhline(single["p99_ms"], color="grey", linestyle="--", label="one process p99")
    right.axhline(P99_LIMIT_MS, color="red", linestyle=":", label=f"{P99_LIMIT_MS:g} ms")
    right.set_xlabel("workers")
    right.set_ylabel("latency (ms)")
    right.set_title("latency at capacity")
    for s in sizes:  # a size with too few cores for it measured contention
        if s["oversubscribed"]:
            left.annotate("too few cores", (s["workers"], s["capacity"] or 0), fontsize=7, color="red")
    for ax in (left, right):
        ax.set_xticks(xs)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"scaling over workers ({report['machine']['cores']} cores, sync {report['config']['sync']})")
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def sweep(cfg: ScaleConfig, out: Callable[[str], None] = print) -> dict[str, Any]:
    """Every size of ``cfg`` (one process first), each climbing its rates; print the table, write the JSON and
    the plot. A SIGTERM unwinds through each run's cleanup, which stops the processes it started."""
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminated) if main_thread else None
    # a supervisor stops its workers on SIGINT; started from a shell's background job it would inherit SIGINT
    # ignored and wait out its kill instead: the servers this starts get it back
    ignored = main_thread and signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return _sweep(cfg, out)
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)
        if ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)


def _sweep(cfg: ScaleConfig, out: Callable[[str], None]) -> dict[str, Any]:
    start = time.monotonic()
    raise_nofile_limit()
    report: dict[str, Any] = {"machine": machine(), "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                              "config": {k: v for k, v in asdict(cfg).items() if k not in ("json_path", "plot_path")},
                              "criteria": {"p99_ms_below": P99_LIMIT_MS, "errors": 0, "disconnects": 0, "unanswered": 0,
                                           "loadgen_lag_p99_ms_below": LOADGEN_LAG_LIMIT_MS,
                                           "loadgen_cpu_below": LOADGEN_CPU_LIMIT},
                              "sizes": []}
    sizes = ([SINGLE] if cfg.single else []) + [w for w in cfg.workers if w != SINGLE]
    out(f"scale: sizes {', '.join(label(w) for w in sizes)}; {cfg.worker_tables} tables and rates "
        f"{','.join(f'{r:g}' for r in cfg.worker_rates)} bids/s per worker; sync {cfg.sync}"
        f"{', rounds ' + cfg.rounds if cfg.rounds else ''}; warm-up {cfg.warmup:g} s, "
        f"measured {cfg.duration:g} s per run; {cfg.cores} cores")
    for w in sizes:
        need = max(w, 1) + generators_for(max(w, 1) * cfg.worker_rates[0], cfg.generator_rate)
        if need > cfg.cores:
            out(f"note: {label(w)} and its generators need {need} cores, the machine has {cfg.cores}: "
                "its figures measure contention, not the cluster")
    out(run_header())
    single: dict[str, Any] | None = None
    for w in sizes:
        size = summarize_size(cfg, w, climb(cfg, w, out), single)
        if w == SINGLE:
            single = size
        report["sizes"].append(size)
        if cfg.json_path:  # after each size, so a run cut short still leaves what it measured
            Path(cfg.json_path).parent.mkdir(parents=True, exist_ok=True)
            Path(cfg.json_path).write_text(json.dumps(report, indent=1) + "\n")
    report["elapsed_s"] = round(time.monotonic() - start, 1)
    out("")
    for line in table(report):
        out(line)
    for line in LEGEND:
        out(line.format(p99=P99_LIMIT_MS, cores=cfg.cores, busy=BUSY_SHARE))
    write_results(report, cfg.json_path, cfg.plot_path, plot, out)
    return report


# ---------------------------------------------------------------------------------------------- command line


def _rates(text: str) -> list[float]:
    try:
        values = sorted(float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not comma-separated numbers: {text!r}") from None
    if not values or values[0] <= 0:
        raise argparse.ArgumentTypeError(f"rates must be above 0: {text!r}")
    return values


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The scaling mode's options, beside the storm's (``--duration``, ``--warmup``, ``--json``, ``--plot``,
    ``--quiet-ms`` serve both)."""
    group = parser.add_argument_group("scaling over workers (bench/scale.py)")
    group.add_argument("--workers", type=positive_ints, metavar="N,N,...",
                       help="run the scaling sweep instead: one process, then a cluster of each size")
    group.add_argument("--worker-rates", type=_rates, metavar="R,R,...",
                       help="bids/s per worker, rising, for each size's climb (default "
                            f"{','.join(map(str, DEFAULT_WORKER_RATES))})")
    group.add_argument("--worker-tables", type=positive_int, metavar="T",
                       help=f"tables per worker (default {DEFAULT_WORKER_TABLES})")
    group.add_argument("--generator-rate", type=float, metavar="R",
                       help=f"most bids/s one generator process is given (default {GENERATOR_RATE:g})")
    group.add_argument("--sync", choices=("fsync", "write"), help="the journals' policy (default fsync, as shipped)")
    group.add_argument("--rounds", choices=("free", "aligned"),
                       help="the journal's rounds: each log its own phase, or every log of the machine on the same "
                            "ticks (server/storage/journal.py next_round; default: as shipped)")
    group.add_argument("--no-single", action="store_true", help="leave out the one-process run (and the ratios)")


def config_from_args(args: argparse.Namespace) -> ScaleConfig:
    cfg = ScaleConfig(workers=tuple(args.workers))
    if args.worker_rates:
        cfg.worker_rates = tuple(args.worker_rates)
    if args.worker_tables:
        cfg.worker_tables = args.worker_tables
    if args.generator_rate is not None:
        if args.generator_rate <= 0:
            raise ValueError("--generator-rate must be above 0")
        cfg.generator_rate = args.generator_rate
    if args.sync:
        cfg.sync = args.sync
    cfg.rounds = args.rounds
    cfg.single = not args.no_single
    if args.duration is not None:
        cfg.duration = args.duration
    if args.warmup is not None:
        cfg.warmup = args.warmup
    cfg.quiet_ms = args.quiet_ms
    if args.json:
        cfg.json_path = args.json
    if args.plot:
        cfg.plot_path = args.plot
    return cfg


def run_from_args(args: argparse.Namespace) -> int:
    try:
        report = sweep(config_from_args(args))
    except ValueError as exc:
        print(f"parsimonia bench: {exc}", file=sys.stderr)
        return 2
    return 0 if report["sizes"] else 1
