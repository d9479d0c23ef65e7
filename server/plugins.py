"""What other installed packages add to the server, found through their entry points: games (the group
``parsimonia.games``, ``server.games.discover``) and commands of the ``parsimonia`` CLI (``parsimonia.commands``,
``server.cli.args``). A package that does not load is skipped and said, never fatal: a broken third-party package
must not stop the server. Nothing here runs on import; each caller looks its group up when it starts."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from importlib.metadata import EntryPoint, entry_points
from typing import TypeGuard, TypeVar

T = TypeVar("T")


def load_entry_points(group: str, accepts: Callable[[object], TypeGuard[T]], kind: str, problems: list[str],
                      what: str, found: Iterable[EntryPoint] | None = None) -> list[T]:
    """The objects the entry points of ``group`` name that ``accepts`` takes (``found``: those entry points, for a
    test). One that does not load, or names something else than a ``kind``, is said in ``problems`` (as ``what``'s
    entry point) and skipped."""
    loaded: list[T] = []
    for point in entry_points(group=group) if found is None else found:
        try:
            value = point.load()
            if not accepts(value):
                raise TypeError(f"{point.value} is not a {kind}")
        except Exception as exc:  # noqa: BLE001 - whatever a package's import raises is that package's problem
            problems.append(f"{what} entry point {point.name!r} skipped: {exc}")
            continue
        loaded.append(value)
    return loaded
