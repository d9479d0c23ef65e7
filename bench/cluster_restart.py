"""A cluster's supervisor stopped and started again under reference bots: does any bot quit, is any request for a
live table answered ``no_such_table``?

    python bench/cluster_restart.py [--bots 16] [--restarts 3] [--signal int|kill]

A redis-server and ``parsimonia serve --workers 2 --redis`` on free ports of 127.0.0.1, then ``--bots``
``parsimonia bot random`` processes through the shared port; every ``--every`` seconds the supervisor is stopped
(SIGINT, as an organiser's Ctrl-C, or SIGKILL) and started again on the same directory. At the end: the bots that
quit (with the end of their output), and the ``no_such_table`` and ``unavailable`` answers the workers logged,
as one ``RESULT`` JSON line. Every process it started is stopped; bounded by ``--restarts`` x ``--every`` seconds.
"""

from __future__ import annotations

import argparse
import json
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=16)
    parser.add_argument("--restarts", type=int, default=3)
    parser.add_argument("--every", type=float, default=8.0, help="seconds between restarts")
    parser.add_argument("--signal", choices=("int", "kill"), default="int")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="cluster-restart-"))
    redis_port, port, base = free_port(), free_port(), free_port()
    redis = subprocess.Popen(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
                              "--appendonly", "no", "--dir", str(tmp)], stdout=subprocess.DEVNULL)
    serve = [sys.executable, "-m", "server.cli.main", "serve", "--port", str(port), "--worker-ports", str(base),
             "--workers", "2", "--redis", f"redis://127.0.0.1:{redis_port}/0", "--data", str(tmp / "data"),
             "--log-level", "info"]
    logs: list[Path] = []

    def start(n: int) -> subprocess.Popen[bytes]:
        out, err = tmp / f"cluster{n}.out", tmp / f"cluster{n}.err"
        logs.append(err)
        proc = subprocess.Popen(serve, cwd=ROOT, stdout=out.open("wb"), stderr=err.open("wb"))
        deadline = time.monotonic() + 60
        while "workers (Redis" not in out.read_text(errors="replace"):
            if time.monotonic() > deadline or proc.poll() is not None:
                raise SystemExit(f"the cluster did not start: see {err}")
            time.sleep(0.05)
        return proc

    bots: list[subprocess.Popen[bytes]] = []
    supervisor = start(0)
    try:
        for i in range(args.bots):
            time.sleep(0.4)
            bots.append(subprocess.Popen(
                [sys.executable, "-m", "server.cli.main", "bot", "random", "--url", f"ws://127.0.0.1:{port}", "--seed",
                 str(i)], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=(tmp / f"bot{i}.err").open("wb")))
        time.sleep(args.every)
        back_s = []
        for n in range(1, args.restarts + 1):
            supervisor.send_signal(signal.SIGINT if args.signal == "int" else signal.SIGKILL)
            supervisor.wait(30)
            began = time.monotonic()
            supervisor = start(n)
            back_s.append(round(time.monotonic() - began, 2))
            time.sleep(args.every)
        quit = [i for i, bot in enumerate(bots) if bot.poll() is not None]
        for i in quit:
            print(f"bot {i} quit:", (tmp / f"bot{i}.err").read_text(errors="replace")[-400:])
        told = "".join(log.read_text(errors="replace") for log in logs)
        print("RESULT " + json.dumps({
            "bots": args.bots, "restarts": args.restarts, "signal": args.signal, "listening_after_s": back_s,
            "bots_quit": len(quit), "no_such_table": told.count("code=no_such_table"),
            "unavailable": told.count("code=unavailable")}), flush=True)
    finally:
        for bot in bots:
            bot.kill()
        supervisor.send_signal(signal.SIGINT)
        try:
            supervisor.wait(30)
        except subprocess.TimeoutExpired:
            supervisor.kill()
        redis.kill()


if __name__ == "__main__":
    main()
