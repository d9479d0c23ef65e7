"""The mistakes a user of the ``parsimonia`` command makes, each put into one line: what went wrong and
what to do about it. Anything not recognised here is a bug and keeps its traceback."""

from __future__ import annotations

import argparse
import errno
import socket

from trio_websocket import ConnectionClosed, HandshakeError

from clients.sdk import UNAVAILABLE_GIVE_UP_S, BadUrl, ServerError, Stopped
from server.storage.datadir import DataDirBusy

INTERRUPTED = 130  # the exit status of a command stopped with Ctrl-C
NOT_HERE_ERRNOS = {errno.EADDRNOTAVAIL, socket.EAI_NONAME, socket.EAI_AGAIN, socket.EAI_FAIL}  # a bad --host
FILE_ERRNOS = {errno.ENOENT, errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EEXIST, errno.EISDIR,
               errno.ENOSPC}


def leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, as trio delivers errors from its nurseries."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in leaves(inner)]
    return [exc]


def explain(exc: BaseException, args: argparse.Namespace) -> tuple[str, int] | None:
    """``(line, exit status)`` for a user's mistake, or None for a bug."""
    found = leaves(exc)
    if any(isinstance(e, KeyboardInterrupt) for e in found):
        return getattr(args, "stopped", "stopped (Ctrl-C)"), INTERRUPTED
    for e in found:
        if isinstance(e, Stopped):  # SIGTERM or SIGHUP: 128 + the signal's number, as a shell reports it
            return str(e), 128 + e.signum
        if isinstance(e, BadUrl):
            return str(e), 2
        line = _line(e, args)
        if line is not None:
            return line, 1
    return None


def _line(exc: BaseException, args: argparse.Namespace) -> str | None:
    url = getattr(args, "url", None)
    if isinstance(exc, DataDirBusy):
        return str(exc)
    if isinstance(exc, ServerError):
        return _refusal(exc, args)
    if not url and isinstance(exc, OSError) and not exc.filename and exc.errno in NOT_HERE_ERRNOS:
        host, cause = getattr(args, "host", "?"), str(exc.strerror).split(" (while", 1)[0]
        return (f"cannot listen on {host}: it is not an address of this machine, or no such host name ({cause}); "
                "use --host 127.0.0.1 (this machine only) or 0.0.0.0 (every address)")
    if isinstance(exc, HandshakeError) or (url and isinstance(exc, OSError) and not exc.filename
                                           and exc.errno != errno.EADDRINUSE):
        return f"no Parsimonia server answers at {url}: start one (parsimonia serve) or check --url"
    if isinstance(exc, ConnectionClosed):
        reason = exc.reason
        detail = f" (close {reason.code}{': ' + reason.reason if reason.reason else ''})" if reason else ""
        return f"the server at {url} closed the connection{detail}: it stopped, or dropped this client"
    if isinstance(exc, OSError) and exc.errno == errno.EADDRINUSE:
        host, port = getattr(args, "host", "127.0.0.1"), getattr(args, "port", "?")
        return (f"{host} port {port} is already in use (another server?): stop it, or choose another port "
                "with --port (0: any free one; under make: PORT=...)")
    if isinstance(exc, OSError) and exc.filename and exc.errno in FILE_ERRNOS:
        return (f"cannot write {exc.filename}: {exc.strerror}; give --data a directory this user may write "
                "(under make: DATA=...; serve --sync off keeps nothing)")
    return None


def _refusal(exc: ServerError, args: argparse.Namespace) -> str:
    url, table = getattr(args, "url", None), getattr(args, "table", None)
    if exc.code == "bad_token":
        return f"the seat token is not one of table {table}'s (bad_token): check --table and --token"
    if exc.code == "forbidden":
        return (f"the server at {url} lets only its organiser create tables (forbidden): set "
                "PARSIMONIA_ADMIN_TOKEN to its admin token, or seat a bot at an existing table with --table")
    if exc.code == "no_such_table":
        return f"the server at {url} has no table {table}: list them with parsimonia tables --url {url}"
    if exc.code == "unavailable":
        return (f"the server at {url} stayed unavailable ({exc.message}) for {UNAVAILABLE_GIVE_UP_S:g} s of "
                "retries: a cluster's worker restarting; try again in a moment")
    if exc.code == "table_full":
        return f"every seat at table {table} is taken: leave out --table to find or create another"
    return f"the server refused: {exc}"
