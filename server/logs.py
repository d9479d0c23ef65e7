"""structlog set-up: readable console lines by default, one JSON object per line with ``--log-json``."""

from __future__ import annotations

import logging
import sys

import structlog


def configure(json_lines: bool = False, level: int = logging.INFO) -> None:
    renderer = structlog.processors.JSONRenderer() if json_lines else structlog.dev.ConsoleRenderer(colors=False)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )


def silent() -> structlog.typing.FilteringBoundLogger:
    """A logger that drops everything (replaying a journal must not log the game again)."""
    return structlog.wrap_logger(structlog.ReturnLogger(), processors=[_drop])


def _drop(*_: object) -> None:
    raise structlog.DropEvent


def get(**bound: object) -> structlog.typing.FilteringBoundLogger:
    return structlog.get_logger("parsimonia").bind(**bound)
