"""Memory given back once a crowd of connections has gone (``server.ops.memory``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from server.ops.memory import CROWD, TABLES_GONE, Trimmer

ROOT = Path(__file__).resolve().parents[3]


class Trims:
    """A trim that counts how often it was made."""

    def __init__(self) -> None:
        self.made = 0

    def __call__(self) -> None:
        self.made += 1


@pytest.fixture
def trims() -> Trims:
    return Trims()


@pytest.fixture
def trimmer(trims: Trims) -> Trimmer:
    return Trimmer(trim=trims)


def trims_at(trimmer: Trimmer, trims: Trims, ticks: int) -> list[int]:
    """The ticks, of the next ``ticks``, at which ``trimmer`` gave memory back."""
    made = []
    for tick in range(1, ticks + 1):
        before = trims.made
        trimmer.tick()
        if trims.made > before:
            made.append(tick)
    return made


def test_a_crowd_gone_is_given_back_at_ticks_1_3_7_15_31_and_63_after(trimmer, trims):
    trimmer.count(5000)
    trimmer.count(2500)  # half of the mark, and a crowd
    assert trims_at(trimmer, trims, 100) == [1, 3, 7, 15, 31, 63]


def test_a_drop_while_trims_are_owed_starts_them_again(trimmer, trims):
    trimmer.count(5000)
    trimmer.count(2500)
    assert trims_at(trimmer, trims, 5) == [1, 3]
    trimmer.count(1000)  # the rest of the crowd leaves
    assert trims_at(trimmer, trims, 8) == [1, 3, 7]


def test_fewer_than_a_crowd_or_than_half_gone_owes_nothing(trimmer, trims):
    trimmer.count(CROWD + 10)
    trimmer.count(CROWD + 10 - (CROWD - 1))  # over half gone, but fewer than a crowd
    trimmer.count(3000)
    trimmer.count(1600)  # a crowd gone, but not half
    assert trims_at(trimmer, trims, 100) == []


def served_environment(env: dict[str, str]) -> dict[str, str]:
    """The environment of ``parsimonia serve`` once it listens, started from the command line."""
    proc = subprocess.Popen([sys.executable, "-m", "server.cli.main", "serve", "--port", "0", "--sync", "off"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("Parsimonia server on"):
                break
        items = Path(f"/proc/{proc.pid}/environ").read_bytes().split(b"\0")
        return dict(item.decode().split("=", 1) for item in items if b"=" in item)
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc")
def test_a_server_from_the_command_line_runs_on_the_c_librarys_allocator_unless_told_otherwise():
    env = {k: v for k, v in os.environ.items() if k != "PYTHONMALLOC"}
    assert served_environment(env).get("PYTHONMALLOC") == "malloc"
    assert served_environment({**env, "PYTHONMALLOC": "pymalloc"})["PYTHONMALLOC"] == "pymalloc"


def test_busy_tables_ended_are_given_back_as_a_crowd_of_connections_is(trimmer, trims):
    """64 busy tables that ended left the server at its peak: no crowd of connections had gone."""
    trimmer.count_tables(64)
    trimmer.count_tables(64 - (TABLES_GONE - 1))  # fewer than TABLES_GONE ended
    assert trims_at(trimmer, trims, 5) == []
    trimmer.count_tables(2)
    assert trims_at(trimmer, trims, 100) == [1, 3, 7, 15, 31, 63]
    trimmer.count_tables(40)
    trimmer.count_tables(30)  # not half of the new mark
    assert trims_at(trimmer, trims, 100) == []
