"""structlog set-up: readable console lines by default, one JSON object per line with ``--log-json``."""

from __future__ import annotations

import logging
import sys
from typing import NoReturn, TextIO

import structlog


def configure(json_lines: bool = False, level: int = logging.INFO, stream: TextIO | None = None) -> None:
    """Log from now on at ``level`` and up, to ``stream`` (default: ``sys.stderr`` as it is at each line)."""
    renderer = structlog.processors.JSONRenderer() if json_lines else structlog.dev.ConsoleRenderer(colors=False)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=lambda *_: _LineLogger(stream),
        cache_logger_on_first_use=False,
    )


class _LineLogger:
    """Writes each line to ``stream``, or to whatever ``sys.stderr`` is at the time (a test may swap it)."""

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream

    def msg(self, message: str) -> None:
        print(message, file=self.stream or sys.stderr, flush=True)

    log = debug = info = warn = warning = error = critical = exception = fatal = msg


def silent() -> structlog.typing.FilteringBoundLogger:
    """A logger that drops everything (replaying a journal must not log the game again)."""
    return structlog.wrap_logger(structlog.ReturnLogger(), processors=[_drop])


def _drop(_logger: object, _method: str, _event: structlog.typing.EventDict) -> NoReturn:
    raise structlog.DropEvent


def get(**bound: object) -> structlog.typing.FilteringBoundLogger:
    return structlog.get_logger("parsimonia").bind(**bound)
