"""``parsimonia bench``: the storm benchmark (``bench/storm.py``) as a command of the ``parsimonia`` CLI. The
product never imports ``bench``: this package names ``register`` in the entry-point group
``parsimonia.commands`` (pyproject.toml), and the CLI adds the command when it builds its parser."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from server.cli.args import AddCommand

EXAMPLES = [
    "parsimonia bench --servers parsimonia --tables 10 --rates 250 --duration 2 --warmup 1 --engine-games 0 "
    "--json bench.json --plot bench.png   # one small run of our server (bench/README.md: the full ones)",
]


def register(command: AddCommand) -> None:
    """Add ``parsimonia bench`` and its options."""
    from bench.storm import add_arguments

    add_arguments(command("bench", "benchmark concurrent auctions over WebSocket (bench/README.md)", run, EXAMPLES))


def run(args: argparse.Namespace) -> int:
    from bench.storm import run_from_args

    return run_from_args(args)
