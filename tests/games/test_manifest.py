"""A game from another package: its manifest, named by an entry point in the group ``parsimonia.games``, is all
the server and the tools need (the toy game of the tests, installed that way here)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import distributions
from pathlib import Path

from server.games import GAMES, MANIFESTS, PROBLEMS, discover, words_for
from server.games.manifest import GROUP
from tests.toy_game import Sealed, installed

ROOT = Path(__file__).resolve().parents[2]


def entry_points_in(site: Path) -> list:
    return [point for dist in distributions(path=[str(site)]) for point in dist.entry_points if point.group == GROUP]


def test_a_game_named_by_an_entry_point_is_registered_with_its_manifest(tmp_path):
    try:
        assert discover(entry_points_in(installed(tmp_path, "tests.toy_game:MANIFEST"))) == [Sealed.NAME]
        assert GAMES[Sealed.NAME] is Sealed and MANIFESTS[Sealed.NAME].display() == {
            "title": Sealed.TITLE, "currency": ""}
        assert words_for(Sealed.NAME) is None  # a game without words is told generically
    finally:
        GAMES.pop(Sealed.NAME, None)
        MANIFESTS.pop(Sealed.NAME, None)


def test_a_broken_entry_point_is_skipped_and_said(tmp_path):
    before = len(PROBLEMS)
    try:
        assert discover(entry_points_in(installed(tmp_path, "tests.toy_game:Sealed"))) == []
        assert Sealed.NAME not in GAMES
        assert PROBLEMS[before:] == ["game entry point 'toy-sealed' skipped: tests.toy_game:Sealed is not a Manifest"]
    finally:
        del PROBLEMS[before:]


def test_an_installed_game_plays_from_the_command_line_with_nothing_else_changed(tmp_path):
    site = installed(tmp_path, "tests.toy_game:MANIFEST")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    run = subprocess.run([sys.executable, "-c", "from server.cli import main; main()", "simulate", "--game",
                          Sealed.NAME, "--players", "3", "--players-kind", "random", "--json"],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["game"] == Sealed.NAME and result["reason"] == "revealed" and len(result["scores"]) == 3
