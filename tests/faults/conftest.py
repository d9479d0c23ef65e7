"""The fault campaign (docs/reliability.md). ``make test`` runs a representative slice of it; ``make faults``
runs the whole campaign (``PARSIMONIA_FAULTS=full``), with the sizes docs/reliability.md reports."""

from __future__ import annotations

import os

FULL = os.environ.get("PARSIMONIA_FAULTS") == "full"


def scale(slice_: int, full: int) -> int:
    """A campaign's size: ``slice_`` in ``make test``, ``full`` in ``make faults``."""
    return full if FULL else slice_
