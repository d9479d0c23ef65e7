"""The fault campaign (docs/reliability.md). ``make test`` runs a representative slice of it; ``make faults``
runs the whole campaign (``PARSIMONIA_FAULTS=full``), with the sizes docs/reliability.md reports."""

from __future__ import annotations

import os

import pytest

FULL = os.environ.get("PARSIMONIA_FAULTS") == "full"


def scale(slice_: int, full: int) -> int:
    """A campaign's size: ``slice_`` in ``make test``, ``full`` in ``make faults``."""
    return full if FULL else slice_


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Outside ``make faults``, the tests marked ``full_campaign`` are deselected (not skipped: they are not part
    of the slice, and a skip would read as something missing)."""
    if FULL:
        return
    dropped = [item for item in items if item.get_closest_marker("full_campaign")]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if not item.get_closest_marker("full_campaign")]
