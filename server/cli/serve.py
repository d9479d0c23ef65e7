"""The ``parsimonia`` commands that run a server: ``serve`` (one process, or a cluster's supervisor) and
``tournament``; and the organiser's admin token. Each takes the parsed arguments
(``server.cli.args``) and returns the exit status."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from typing import TYPE_CHECKING

from server.transport.limits import ClientLimits

if TYPE_CHECKING:
    from server.runtime.app import Instruments


def cmd_serve(args: argparse.Namespace) -> int:
    import trio

    from server.ops import logs
    from server.runtime.app import Server, ServerConfig
    from server.ops.descriptors import capacity, raise_open_files_limit

    logs.configure(json_lines=args.log_json, level=getattr(logging, args.log_level.upper()))
    admin_token = _admin_token(args, "serve")
    config = ServerConfig(
        host=args.host,
        port=args.port,
        data_dir=None if args.sync == "off" else args.data,
        sync=args.sync,
        ratings_file=None if args.sync == "off" else os.path.join(args.data, "ratings.sqlite"),  # a cluster's, shared
        admin_token=admin_token,
        max_tables=args.max_tables,
        waiting_expiry_ms=args.waiting_expiry_ms,
        client=ClientLimits(
            messages_per_s=args.max_messages_per_s,
            bytes_per_s=args.max_bytes_per_s,
            connections_per_ip=args.max_connections_per_ip,
            http_connections_per_ip=args.max_http_connections_per_ip,
            handshakes_per_s=args.max_handshakes_per_s,
            http_requests_per_s=args.max_http_requests_per_s,
            address_messages_per_s=args.max_address_messages_per_s,
            address_bytes_per_s=args.max_address_bytes_per_s,
            tables_per_client=args.max_tables_per_client,
            waiting_tables_per_ip=args.max_waiting_tables_per_ip,
            playing_tables_per_ip=args.max_playing_tables_per_ip,
            rtt_ping_s=args.rtt_ping_s,
        ),
        instruments=_instruments("serve"),
    )

    if args.worker_id is None and (args.workers > 1 or args.redis):
        return _supervise(args)
    worker = None
    if args.worker_id is not None:  # one worker of a cluster, started by its supervisor (server/cluster/)
        import structlog

        from server.cluster.worker import Worker, stop_with_supervisor

        if config.data_dir is not None:
            config.data_dir = os.path.join(config.data_dir, f"worker-{args.worker_id}")
        worker = config.cluster = Worker(args.worker_id, args.redis, args.own_port, _public_host(args),
                                         args.heartbeat_ms, args.alive_fd)
        structlog.contextvars.bind_contextvars(worker=args.worker_id)  # every line of this worker's log says so

    open_files = raise_open_files_limit()

    async def serve() -> None:
        async with trio.open_nursery() as nursery:
            server = await nursery.start(Server(config).run)
            # once listening (a server that cannot start says only why): one descriptor each, server/ops/descriptors.py
            logs.get().info("open_files_limit", descriptors=open_files, connections_and_tables=capacity(open_files))
            if worker is None:
                print(banner(args.host, server.port, admin_token is not None), flush=True)  # once listening: the port is ours
            else:  # the supervisor says where the cluster is
                nursery.start_soon(stop_with_supervisor, nursery.cancel_scope)

    try:
        trio.run(serve)
    except* KeyboardInterrupt:  # Ctrl-C is how a server is stopped
        pass
    return 0


def _supervise(args: argparse.Namespace) -> int:
    """``serve --workers N --redis URL``: a supervisor and its workers (server/cluster/supervisor.py)."""
    import importlib.util

    import trio

    if not args.redis:
        print(f"parsimonia serve: --workers {args.workers} needs Redis: give --redis URL (e.g. "
              "redis://127.0.0.1:6379/0; make run-cluster starts one), or serve with --workers 1", file=sys.stderr)
        return 2
    if not args.redis.startswith(("redis://", "unix://")):
        print(f"parsimonia serve: --redis {args.redis!r} is not a Redis URL: give redis://HOST:PORT/DB",
              file=sys.stderr)
        return 2
    if importlib.util.find_spec("coredis") is None:
        print("parsimonia serve: a cluster needs the Redis client: pip install 'parsimonia[cluster]'", file=sys.stderr)
        return 2
    from coredis import Redis

    from server.cluster.supervisor import Plan, WorkerRefused, pick_ports, supervise

    try:
        Redis.from_url(args.redis)  # parsed only: a Redis not running yet is waited for by the workers
    except ValueError as exc:
        print(f"parsimonia serve: --redis {args.redis!r}: {exc}; give redis://HOST:PORT/DB", file=sys.stderr)
        return 2

    workers = list(range(args.first_worker, args.first_worker + args.workers))
    plan: Plan = pick_ports(args.host, args.port, args.worker_ports, workers)
    plan.argv, plan.redis_url, plan.timeout_ms = args.argv, args.redis, args.worker_timeout_ms

    def ready() -> None:
        own = ", ".join(f"worker {w} on {_public_host(args)}:{p}" for w, p in plan.ports.items())
        print(banner(args.host, plan.port, args.admin_token_file is not None), flush=True)
        print(f"  {len(workers)} workers (Redis {args.redis}): {own}", flush=True)

    refused: list[BaseException] = []
    try:
        trio.run(supervise, plan, ready, args.heartbeat_ms)
    except* KeyboardInterrupt:  # Ctrl-C is how a cluster is stopped too
        pass
    except* WorkerRefused as group:
        refused.extend(group.exceptions)
    if refused:
        print(f"parsimonia serve: {refused[0]}", file=sys.stderr)
        return 2
    return 0


def _public_host(args: argparse.Namespace) -> str:
    """The host other machines reach this one's workers at: --public-host, else the address served on."""
    if args.public_host:
        return str(args.public_host)
    return "127.0.0.1" if args.host in ("0.0.0.0", "") else "::1" if args.host == "::" else str(args.host)


def _instruments(command: str) -> Instruments:
    """The instruments around the runtime: the fault campaign's when ``PARSIMONIA_FAULT`` is set
    (docs/reliability.md), else none. A bad value ends the command with one line and status 2."""
    from server.faults import from_env

    try:
        return from_env(os.environ)
    except ValueError as exc:
        print(f"parsimonia {command}: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


def banner(host: str, port: int, admin: bool = True) -> str:
    """What the server prints once listening; ``admin``: it has an admin token (else how to give it one)."""
    where = f"{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}"
    url = f"ws://{where}"
    organiser = "#admin for the organiser" if admin else "#admin needs an admin token: serve --admin-token-file FILE (make run ADMIN_TOKEN_FILE=FILE)"
    return (
        f"Parsimonia server on {url} (protocol: protocol/SPEC.md)\n"
        f"  the page:          http://{where}/ (play, watch; {organiser})\n"
        f"  play a demo game:  parsimonia demo --url {url}\n"
        f"  seat a bot:        parsimonia bot greedy --url {url} [--table ID]\n"
        f"  watch a table:     parsimonia watch --url {url} --table ID\n"
        f"  list the tables:   parsimonia tables --url {url}\n"
        "  stop with Ctrl-C"
    )


def admin_token_from(path: str | None) -> str | None:
    """The organiser's token: from a file (first line) or PARSIMONIA_ADMIN_TOKEN; never from the command
    line, where other users of the machine could read it. A file given but empty or blank is refused: a
    server started so would take anyone for the organiser's equal (no token: anyone may create tables)."""
    if path:
        with open(path, encoding="utf-8") as f:
            token = f.readline().strip()
        if not token:
            raise ValueError(f"{path}: the admin token file is empty or blank; write the token on its first line")
    else:
        token = os.environ.get("PARSIMONIA_ADMIN_TOKEN", "").strip()
    if token and len(token) < 16:
        raise ValueError("the admin token must be at least 16 characters")
    return token or None


def cmd_tournament(args: argparse.Namespace) -> int:
    import trio

    from server.ops import logs
    from server.tournament.director import DirectorConfig, run_tournament
    from server.tournament.roster import RosterError
    from server.tournament.store import StoreError

    logs.configure(level=logging.WARNING)
    admin_token = _admin_token(args, "tournament")
    cfg = DirectorConfig(
        roster=args.roster, data_dir=args.data, url=args.url, host=args.host, port=args.port,
        time_scale=args.time_scale, admin_token=admin_token, seed=args.seed, live=not args.json,
        instruments=_instruments("tournament"),
    )

    def progress(line: str) -> None:
        print(line, file=sys.stderr if args.json else sys.stdout, flush=True)

    try:
        doc = trio.run(run_tournament, cfg, progress)
    except (RosterError, StoreError) as exc:
        print(f"parsimonia tournament: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(doc, sort_keys=True))
    return 0


def _admin_token(args: argparse.Namespace, command: str) -> str | None:
    """The admin token from ``--admin-token-file`` (None without one); a file that cannot be read or holds no
    token ends the command with one line and status 2."""
    try:
        admin_token = admin_token_from(args.admin_token_file)
    except (OSError, ValueError) as exc:
        print(f"parsimonia {command}: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    return admin_token
