"""The documents' tables, made from the result files: bench/README.md's from ``bench/results/``, docs/reliability.md's
from ``docs/results/`` (and the cluster bench's from ``bench/results/``).

    .venv/bin/python -m bench.report            # rewrite every table between its markers
    .venv/bin/python -m bench.report --check    # rewrite nothing; exit 1 naming each table that differs

A table is the text between ``<!-- table: NAME -->`` and ``<!-- /table -->``; everything outside the markers is the
document's own. Each NAME a document holds must be one ``TABLES`` knows for it, and each table ``TABLES`` lists for a
document must be in it. The files are read as their tools wrote them (``parsimonia bench --json``, the fault suite's
``PARSIMONIA_FAULTS_FIGURES`` lines, ``bench/cluster_kill.py``'s ``RESULT``); a figure a file lacks is shown ``-``."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from tests.faults import figures as flood_figures

ROOT = Path(__file__).resolve().parent.parent
MARK = re.compile(r"<!-- table: (?P<name>[\w-]+) -->\n(?P<body>.*?)<!-- /table -->", re.S)

Render = Callable[[Path], list[str]]  # the repository's root -> the table's lines
Row = dict[str, Any]


class ReportError(Exception):
    """A document or a result file the report cannot use; its message is the one line to show."""


# ---- reading and formatting -----------------------------------------------------------------------------------

def read_json(root: Path, path: str) -> Any:
    try:
        return json.loads((root / path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ReportError(f"{path}: {exc}") from exc


def read_lines(root: Path, path: str) -> list[Row]:
    try:
        return flood_figures.load(root / path)
    except (OSError, ValueError) as exc:
        raise ReportError(f"{path}: {exc}") from exc


def num(value: Any, digits: int | None = None) -> str:
    """``-`` for a missing figure, thousands separated, ``digits`` after the point when given."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        if digits is not None:
            return f"{value:,.{digits}f}"
        if isinstance(value, float) and not value.is_integer():
            return f"{value:,}"
        return f"{int(value):,}"
    return str(value)


def markdown(head: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head),
            *("| " + " | ".join(row) + " |" for row in rows)]


# ---- bench/README.md ------------------------------------------------------------------------------------------

SERVERS = {  # the storm's servers, in the tables' order, and what each row calls them
    "parsimonia": "**parsimonia as shipped** (journal, fsync), views off",
    "parsimonia-views": "parsimonia as shipped, views on",
    "parsimonia-write": "parsimonia, `--sync write`",
    "parsimonia-nojournal": "parsimonia without the journal (`--sync off`)",
    "parsimonia-workers1": "parsimonia, `--workers 1 --redis`",
    "parsimonia-workers2": "parsimonia, `--workers 2`",
    "bare-trio": "bare, trio-websocket",
    "bare-transport": "bare, our transport",
    "bare-websockets": "bare, `websockets`",
    "colyseus": "Colyseus 0.18",
}
BOUND = {"exact": "", "at_most": "<=", "at_least": ">=", "unknown": "~"}


def _capacity(report: Row, server: str, t: str) -> str:
    """A capacity as the storm prints it: ``>=`` where no rate failed or the generator stopped the climb."""
    detail = report.get("capacity_detail", {}).get(server, {}).get(t)
    if detail is None:
        return "-"
    rate = detail.get("rate")
    if rate is None:
        return "none"
    return (">=" if detail.get("limited_by") in ("max_rate", "loadgen") else "") + num(rate)


def _at(report: Row, server: str, t: str) -> Row | None:
    """The run at a server's capacity."""
    rate = report.get("capacity", {}).get(server, {}).get(t)
    for run in report.get("runs", []):
        if run.get("server") == server and str(run.get("tables")) == t and run.get("rate") == rate:
            return run
    return None


def capacity_table(path: str) -> Render:
    def render(root: Path) -> list[str]:
        report = read_json(root, path)
        ts = sorted({t for caps in report.get("capacity", {}).values() for t in caps}, key=int)
        rows = []
        servers = report.get("capacity", {})
        for server in [*(s for s in SERVERS if s in servers), *(s for s in servers if s not in SERVERS)]:
            cells = [SERVERS.get(server, server)]
            for t in ts:
                run = _at(report, server, t)
                cell = _capacity(report, server, t)
                if run is not None:
                    timers = run.get("timer_late_p99_ms")
                    extra = [f"{num(run.get('p99_ms'), 1)} ms"] + ([f"timers {num(timers)} ms"] if timers is not None
                                                                     else [])
                    cpu, accepted = run.get("server_cpu"), run.get("accepted_per_s")
                    extra += [f"{num(cpu, 2)} cores"] + ([f"{num(cpu * 1e6 / accepted, 0)} us a bid"]
                                                         if cpu and accepted else [])
                    extra += [f"{num(run.get('server_rss_mb'), 0)} MB"]
                    cell += f" ({', '.join(extra)})"
                cells.append(cell)
            rows.append(cells)
        ratio_rows = []
        for pair, by_t in report.get("ratios", {}).items():
            bounds = report.get("ratio_bounds", {}).get(pair, {})
            other = pair.split("/", 1)[1]
            ratio_rows.append([f"ratio: as shipped / {SERVERS.get(other, other)}"] + [
                "-" if by_t.get(t) is None else f"{BOUND.get(bounds.get(t, 'exact'), '')}{by_t[t]}x" for t in ts])
        head = ["server"] + [f"T={int(t):,} ({6 * int(t):,} connections)" for t in ts]
        return markdown(head, rows + ratio_rows)
    return render


def journal_table(pattern: str) -> Render:
    """A row per storm run of ``parsimonia`` against ``parsimonia-nojournal``: every file matching ``pattern``."""
    def render(root: Path) -> list[str]:
        rows = []
        for path in sorted(str(p.relative_to(root)) for p in root.glob(pattern)):
            report = read_json(root, path)
            load = report.get("machine", {}).get("loadavg_1m_at_start")
            cells = [f"`{path}` ({str(report.get('started_at', '-'))[:10]}, load {num(load)})"]
            for t in ("100", "1000"):
                ours = report.get("capacity", {}).get("parsimonia", {})
                if t not in ours:
                    cells.append("-")
                    continue
                theirs = report.get("capacity", {}).get("parsimonia-nojournal", {}).get(t)
                ratio = None if not ours.get(t) or not theirs else f"{ours[t] / theirs:.2f}x"
                cells.append(f"{_capacity(report, 'parsimonia', t)} / {_capacity(report, 'parsimonia-nojournal', t)}"
                             + ("" if ratio is None else f": {ratio}"))
            rows.append(cells)
        return markdown(["run", "T=100: as shipped / `--sync off`", "T=1000: as shipped / `--sync off`"], rows)
    return render


def wal_round_table(path: str) -> Render:
    def render(root: Path) -> list[str]:
        rows = read_json(root, path)["rows"]
        variants = [v for v in dict.fromkeys(r["variant"] for r in rows) if v != "none"]
        keys = list(dict.fromkeys((r["tables"], r["rate"]) for r in rows))
        out = []
        for tables, rate in keys:
            cells = [f"{num(tables)}, {num(rate)}"]
            for variant in variants:
                r = next((r for r in rows if (r["tables"], r["rate"], r["variant"]) == (tables, rate, variant)), None)
                cells.append("-" if r is None else
                             f"{num(r['journal_us_per_record'], 0)} us "
                             f"({num(r['rounds_per_s'])}/s, ack p99 {num(r['ack_p99_ms'], 0)} ms)")
            out.append(cells)
        return markdown(["T, records/s"] + [f"`{v}`" for v in variants], out)
    return render


def idle_table(paths: Sequence[tuple[str, Sequence[str] | None]]) -> Render:
    """From each file, the runs of the servers named (all when None)."""
    def render(root: Path) -> list[str]:
        rows = []
        for path, servers in paths:
            for run in read_json(root, path)["runs"]:
                if servers is not None and run["server"] not in servers:
                    continue
                probe = run.get("probe_ms") or {}
                rows.append([f"{run['server']} (`{path}`)", num(run.get("connections")),
                             num(run.get("held")),
                             num(run.get("mb_per_1000"), 1), f"{num(run.get('rss_before_mb'), 0)} / "
                             f"{num(run.get('rss_peak_mb'), 0)} MB",
                             f"{num(probe.get('p50'), 1)} / {num(probe.get('p99'), 1)} ms"])
        return markdown(["server", "connections", "held", "MB per 1,000", "RSS before / peak", "ping p50 / p99"], rows)
    return render


def kupcy_table(paths: Sequence[str]) -> Render:
    def render(root: Path) -> list[str]:
        rows = []
        for path in paths:
            r = read_json(root, path)
            rows.append([f"{num(r['tables'])} ({num(r['connections'])} connections)", f"{num(r['clock_ms'])} ms",
                         num(r.get("reveals_per_s"), 0),
                         f"{num(r.get('reveal_latency_p50_ms'), 1)} / {num(r.get('reveal_latency_p99_ms'), 1)} / "
                         f"{num(r.get('reveal_latency_max_ms'), 1)} ms",
                         f"<= {num(r.get('timer_lateness_p99_ms_bucket'))} ms", num(r.get("server_cpu"), 2)])
        return markdown(["tables", "clocks", "reveals/s", "reveal latency p50 / p99 / max", "server timer p99",
                         "server CPU"], rows)
    return render


def two_figures(value: Any) -> str:
    """A whole number to two significant figures (8,065 -> 8,100): what a capacity from a noisy figure is worth."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        return num(value)
    digits = len(str(int(value))) - 2
    return num(round(value, -digits) if digits > 0 else int(value))


def players_table(path: str) -> Render:
    """A row per game (``bench/players.py``): actions, CPU an action and the seats one worker holds at each rate,
    views on / off; then an idle seat's CPU and the seats a worker holds idle."""
    def render(root: Path) -> list[str]:
        r = read_json(root, path)
        rates = list(r.get("rates", {}))
        games: dict[str, dict[bool, Row]] = {}
        for row in r.get("rows", []):
            games.setdefault(row["game"], {})[bool(row.get("views"))] = row

        def pair(game: dict[bool, Row], figure: Callable[[Row], str]) -> str:
            return " / ".join(figure(game[views]) if views in game else "-" for views in (True, False))
        def at_rate(rate: str) -> Callable[[Row], str]:
            return lambda x: two_figures(x.get("seats_per_worker", {}).get(rate))
        rows = []
        for name, game in games.items():
            rows.append([name, pair(game, lambda x: f"{num(x.get('actions'))} ({num(x.get('refusals'))})"),
                         pair(game, lambda x: num(x.get("cpu_per_action_us"), 0)) + " us",
                         *(pair(game, at_rate(rate)) for rate in rates)])
        idle = r.get("idle", {})
        per_seat = idle.get("cpu_per_seat_us_per_s")
        alone = idle.get("server_cpu_alone") or 0.0
        held = (r.get("budget", 0) - alone) * 1e6 / per_seat if per_seat else None
        rows.append([f"idle seat ({num(idle.get('seats'))} held)", "-",
                     f"{num(per_seat, 1)} us a second ({two_figures(int(held) if held else None)} a worker)",
                     *("-" for _ in rates)])
        return markdown(["game (views on / off)", "actions (refused)", "CPU an action",
                         *(f"seats at {rate}" for rate in rates)], rows)
    return render


def scale_table(paths: Sequence[str]) -> Render:
    """A row per cluster size of each ``bench/scale.py`` run (``parsimonia bench --workers``): the machine, the
    size, its capacity and the figures at it, and its ratios to one process."""
    def render(root: Path) -> list[str]:
        rows = []
        for path in paths:
            r = read_json(root, path)
            m = r.get("machine", {})
            where = f"{m.get('cores')} cores, {m.get('cpu')} ({str(r.get('started_at', ''))[:10]})"
            for s in r.get("sizes", []):
                cap = "none" if s.get("capacity") is None else num(s["capacity"])
                if s.get("limited_by") in ("max_rate", "loadgen") and s.get("capacity") is not None:
                    cap = ">=" + cap + ("*" if s["limited_by"] == "loadgen" else "")
                notes = (["too few cores"] if s.get("oversubscribed") else []) + \
                    ([f"stopped by {s.get('limited_by')}"] if s.get("limited_by") != "max_rate" else [])
                rows.append([where, s.get("size", "?"), cap, num(s.get("capacity_per_worker")),
                             f"{num(s.get('p50_ms'), 1)} / {num(s.get('p99_ms'), 1)}", num(s.get("server_cpu"), 2),
                             num(s.get("cpu_us_per_bid"), 0), num(s.get("capacity_ratio"), 2),
                             num(s.get("p99_ratio_same_total"), 2), "; ".join(notes) or "-"])
        return markdown(["machine", "size", "capacity", "a worker", "p50 / p99 ms", "cores", "us a bid", "x cap",
                         "x p99 tot", "note"], rows)
    return render


# ---- docs/reliability.md --------------------------------------------------------------------------------------

def crash_points_table(path: str) -> Render:
    def render(root: Path) -> list[str]:
        rows = []
        for p in read_json(root, path)["points"]:
            on_disk = ", ".join(p["phase_at_kill"]) + f" ({', '.join(num(n) for n in p['journal_after_kill'])} records)"
            rows.append([p["point"], ", ".join(f"`{f}`" for f in p["faults"]), f"{p['game']}: {p['what']}", on_disk,
                         num(p["acked"]), num(p.get("lost")), num(p["finished"]), num(p["digest_matched"]),
                         f"{num(p.get('seconds'), 2)} s"])
        return markdown(["point", "fault(s) (`PARSIMONIA_FAULT`)", "what was running", "on disk at the kill",
                         "acked commands checked", "lost", "game finished", "replay digest matched", "time"], rows)
    return render


def disk_table(path: str) -> Render:
    def render(root: Path) -> list[str]:
        rows = [[f"`{r['fault']}`" if "@" in r["fault"] else r["fault"], f"{r['stopped']} of {r['tables']}",
                 f"`{r['error']}`", r["log_lines"], num(r["acked_lost"]),
                 f"{r['recovered_and_finished']}, digests matched: {num(r['digests_matched'])}"]
                for r in read_json(root, path)["runs"]]
        return markdown(["fault", "tables stopped", "error told", "operator's log", "acked commands lost",
                         "recovered and finished after a restart"], rows)
    return render


def beyond_kill_table(path: str) -> Render:
    """Faults beyond a kill (issue #36): what was done, what happens now, and what shows it."""
    def render(root: Path) -> list[str]:
        rows = [[r["fault"], r["outcome"], r["test"] if " " in r["test"] else f"`{r['test']}`"]
                for r in read_json(root, path)["runs"]]
        return markdown(["fault", "what happens", "shown by"], rows)
    return render


def fuzz_table(path: str) -> Render:
    def render(root: Path) -> list[str]:
        rows = []
        for r in read_json(root, path)["runs"]:
            time = " / ".join(x for x in (f"{num(r['cpu_s'])} s CPU" if "cpu_s" in r else "",
                                          f"{num(r['wall_s'])} s wall" if "wall_s" in r else "") if x) or "-"
            seen = "; ".join(x for x in (
                f"{num(r['refused_unchanged'])} refused, unchanged" if "refused_unchanged" in r else "",
                f"{num(r['accepted'])} accepted" if "accepted" in r else "",
                f"{num(r['closed'])} connections closed" if "closed" in r else "",
                f"{num(r['games'])} bot games finished" if "games" in r else "",
                r.get("coverage", "")) if x) or "-"
            found = ", ".join(f"{num(r[k])} {k.replace('_', ' ')}" for k in ("crashes", "hangs", "internal",
                                                                            "state_changes") if k in r)
            rows.append([r["fuzzer"], f"`{r['test']}`", r["run"], f"{num(r['inputs'])} {r['inputs_are']}", time, found,
                         seen])
        return markdown(["fuzzer", "test", "run", "inputs", "time", "found", "what the inputs met"], rows)
    return render


def floods_table(pattern: str) -> Render:
    """The runs of the flood suite: every file matching ``pattern``, in name order, a run each."""
    def render(root: Path) -> list[str]:
        paths = sorted(str(p.relative_to(root)) for p in root.glob(pattern))
        if not paths:
            raise ReportError(f"{pattern}: no such file")
        return flood_figures.table([read_lines(root, p) for p in paths])
    return render


def wire_floods_table(path: str) -> Render:
    def render(root: Path) -> list[str]:
        lines = read_lines(root, path)
        rows = []
        for name in dict.fromkeys(f["flood"] for f in lines):
            runs = [f for f in lines if f["flood"] == name]
            first = runs[0]
            flooder = first.get("flooder", {})
            refused = {**flooder.get("closes", {}), **flooder.get("statuses", {})}
            answer = ", ".join(f"{num(n)} {'answered' if int(code) < 1000 else 'closed'} {code}"
                               for code, n in refused.items())
            if "opened" in flooder:
                answer = f"{num(flooder['opened'])} opened, {answer}"
            told = [f"{num(flooder[k])} {w}" for k, w in (("pongs", "pongs"), ("rate_limited", "`rate_limited`"))
                    if k in flooder]
            if told:
                answer += f" after {', '.join(told)}"
            if flooder.get("refused"):
                answer += f"; {num(flooder['refused'])} reconnects refused 429"
            if flooder.get("note"):
                answer = flooder["note"]

            def rss(f: Row) -> str:
                kb = f.get("rss_kb") or [None, None, None]
                if kb[0] is not None and kb[2] is not None:
                    return f"{kb[0] / 1024:.1f} -> {kb[2] / 1024:.1f} MB"
                return "-" if "rss_growth_kb" not in f else f"+{f['rss_growth_kb'] / 1024:.1f} MB"
            read = [f.get("read_per_connection_kb") for f in runs]
            rows.append([name, num(first["count"]), num(first.get("addresses", 1)), answer or "-",
                         "-" if read == [None] * len(runs) else ", ".join(num(kb) for kb in read) + " KB",
                         "-" if all(rss(f) == "-" for f in runs) else ", ".join(rss(f) for f in runs),
                         ", ".join(f"{num(f.get('unloaded_p99_ms'))} -> {num(f.get('loaded_p99_ms'))} ms"
                                   for f in runs)])
        return markdown(["flood", "connections at once", "addresses", "what the server did (run 1)",
                         "read a connection",
                         "RSS before -> after", "honest p99 unloaded -> during"], rows)
    return render


def soak_table(path: str) -> Render:
    def render(root: Path) -> list[str]:
        rows = []
        for s in read_lines(root, path):
            rss = s.get("rss_kb_start_end") or [None, None]
            lives = s.get("lives") or []
            end, fresh = s.get("end", {}), s.get("fresh", {})
            rows.append([
                f"{num(s['soak_s'] / 60, 0)} min", num(s.get("games")), num(s.get("drops")), num(s.get("kills")),
                f"{num(s.get('load_rate'))} bids/s" if s.get("load_rate") else "none",
                num(s.get("acked")), num(s.get("seats_losing_commands")),
                "; ".join(f"{f['rss_kb'][0] / 1024:.0f} -> {f['rss_kb'][1] / 1024:.0f}" for f in lives) + " MB" if lives
                else f"{num(rss[0] / 1024, 1)} -> {num(rss[1] / 1024, 1)} MB",
                "-" if not end else
                f"{num(end.get('fds'))} / {num(end.get('tasks'))} with {num(end.get('live_tables'))} tables "
                f"(fresh: {num(fresh.get('fds'))} / {num(fresh.get('tasks'))})"])
        return markdown(["length", "bot games", "drops", "kills", "load beside", "acked commands",
                         "seats missing a command", "server RSS (each life: start -> end)",
                         "descriptors / tasks after"], rows)
    return render


def secrets_table(path: str) -> Render:
    def render(root: Path) -> list[str]:
        rows = [[r["run"], num(r["games"]), num(r["steps"]), num(r["frames"]), num(r["redacted_events"]),
                 num(r["private_parts"]), num(r["hidden_looked_for"]), num(r["leaks"])]
                for r in read_json(root, path)["runs"]]
        return markdown(["run", "games", "steps audited", "frames audited", "redacted events", "private parts",
                         "hidden lists and runs looked for", "leaks"], rows)
    return render


def cluster_kill_table(path: str) -> Render:
    def render(root: Path) -> list[str]:
        rows = []
        for i, r in enumerate(read_lines(root, path), 1):
            split = ("" if r.get("worker1_p99_restarting_ms") is None else
                     f": {num(r['worker1_p99_restarting_ms'])} restarting, {num(r.get('worker1_p99_after_ms'))} after")
            rows.append([str(i), f"{num(r['acked'])} ({num(r.get('acked_worker2'))})", num(r["lost"]),
                         "-" if r.get("worker2_seats_back_after_s") is None else f"{r['worker2_seats_back_after_s']} s",
                         f"{num(r.get('worker1_p50_before_ms'))} / {num(r.get('worker1_p50_during_ms'))} ms",
                         f"{num(r.get('worker1_p99_before_ms'))} / {num(r.get('worker1_p99_during_ms'))} ms "
                         f"({num(r.get('ratio'))}x){split}"])
        return markdown(["run", "acknowledged (worker 2's)", "lost", "worker 2's seats back after",
                         "worker 1 p50 before / during", "worker 1 p99 before / during"], rows)
    return render


TABLES: dict[str, dict[str, Render]] = {
    "bench/README.md": {
        "capacity": capacity_table("bench/results/capacity.json"),
        "t1000": capacity_table("bench/results/storm-t1000.json"),
        "journal": journal_table("bench/results/journal-*.json"),
        "wal-round": wal_round_table("bench/results/wal-round.json"),
        "idle": idle_table([("bench/results/idle-spread.json", None),
                            ("bench/results/idle.json", ["bare-transport", "bare-websockets"])]),
        "kupcy": kupcy_table(["bench/results/kupcy-storm.json", "bench/results/kupcy-storm-600.json"]),
        "players": players_table("bench/results/players.json"),
        "scale": scale_table(["bench/results/scale-2core.json"]),
    },
    "docs/reliability.md": {
        "crash-points": crash_points_table("docs/results/crash-points.json"),
        "disk-faults": disk_table("docs/results/disk-faults.json"),
        "beyond-kill": beyond_kill_table("docs/results/beyond-kill.json"),
        "fuzz": fuzz_table("docs/results/fuzz.json"),
        "floods": floods_table("docs/results/floods-run*.jsonl"),
        "wire-floods": wire_floods_table("docs/results/wire-floods.jsonl"),
        "soak": soak_table("docs/results/soak.jsonl"),
        "secrets": secrets_table("docs/results/secrets.json"),
        "cluster-kill": cluster_kill_table("bench/results/cluster-kill.jsonl"),
    },
}


# ---- the markers ----------------------------------------------------------------------------------------------

def rewrite(text: str, tables: dict[str, Render], root: Path, doc: str = "document") -> tuple[str, list[str]]:
    """``text`` with every table made again from its files, and the names of the tables that changed."""
    found = [m.group("name") for m in MARK.finditer(text)]
    unknown = [name for name in found if name not in tables]
    if unknown:
        raise ReportError(f"{doc}: no result files known for table {', '.join(unknown)} (bench/report.py: TABLES)")
    missing = [name for name in tables if name not in found]
    if missing:
        raise ReportError(f"{doc}: table {', '.join(missing)} has no <!-- table: NAME --> marker")
    changed: list[str] = []

    def one(match: re.Match[str]) -> str:
        name = match.group("name")
        body = "\n".join(tables[name](root)) + "\n"
        if body != match.group("body"):
            changed.append(name)
        return f"<!-- table: {name} -->\n{body}<!-- /table -->"
    return MARK.sub(one, text), changed


def report(root: Path | None = None, check: bool = False,
           docs: dict[str, dict[str, Render]] | None = None) -> list[str]:
    """Rewrite (or, with ``check``, only compare) the tables of ``docs`` (``TABLES``) under ``root`` (the
    repository); returns ``doc: table`` for each that differed from its files."""
    root = ROOT if root is None else root
    differ = []
    for doc, tables in (TABLES if docs is None else docs).items():
        path = root / doc
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ReportError(f"{doc}: {exc}") from exc
        new, changed = rewrite(text, tables, root, doc)
        differ += [f"{doc}: {name}" for name in changed]
        if changed and not check:
            path.write_text(new, encoding="utf-8")
    return differ


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.report", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a table differs")
    args = parser.parse_args(argv)
    try:
        differ = report(check=args.check)
    except ReportError as exc:
        print(f"bench.report: {exc}", file=sys.stderr)
        return 2
    for line in differ:
        print(("differs from its files: " if args.check else "rewritten: ") + line)
    return 1 if differ and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
