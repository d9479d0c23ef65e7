"""What a player is: something that looks at its seat's view and legal commands and picks one (or none).

Players never touch an engine: they get exactly what a network client gets, so the same objects play
in process (``parsimonia simulate``) and over a socket (``parsimonia bot``).
"""

from __future__ import annotations

import random
from typing import Any, Protocol, TypeGuard


class Player(Protocol):
    def act(self, view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any] | None:
        """A concrete command to send now, or None to wait for something to happen."""


def is_range(value: object) -> TypeGuard[dict[str, Any]]:
    return isinstance(value, dict) and set(value) == {"min", "max"}


def fill(template: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A concrete command from a template: every ``{"min", "max"}`` field gets a uniform integer."""
    return {k: rng.randint(v["min"], v["max"]) if is_range(v) else v for k, v in template.items()}


def with_value(template: dict[str, Any], field: str, value: int) -> dict[str, Any] | None:
    """The template with ``field`` set to ``value``, or None if ``value`` is outside the field's range."""
    rng_ = template[field]
    if not rng_["min"] <= value <= rng_["max"]:
        return None
    return {**template, field: value}
