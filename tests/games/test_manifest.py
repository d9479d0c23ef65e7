"""A game from another package: its manifest, named by an entry point in the group ``parsimonia.games``, is all
the server and the tools need (the toy game of the tests, installed that way here). The games are discovered by
an explicit call when a program starts, never on import; a look-up before it is a clear error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import distributions
from pathlib import Path

import pytest

from clients.games import client_game, words_for
from server.games import GAMES, MANIFESTS, PROBLEMS, discover, register
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


def test_the_projects_games_declare_their_display_facts_and_the_clients_know_each():
    assert {name: manifest.display() for name, manifest in MANIFESTS.items()} == {
        "gift-of-tulips": {"title": "Gift of Tulips", "currency": ""}, "kupcy": {"title": "Kupcy", "currency": ""},
        "parsimonia": {"title": "Parsimonia", "currency": "$"}}
    assert all(client_game(name) is not None for name in GAMES)  # each game's client half, matched by its name


def test_a_game_registered_with_a_currency_displays_it():
    try:
        register(Sealed, "pts ")
        assert GAMES[Sealed.NAME] is Sealed
        assert MANIFESTS[Sealed.NAME].display() == {"title": Sealed.TITLE, "currency": "pts "}
    finally:
        GAMES.pop(Sealed.NAME, None)
        MANIFESTS.pop(Sealed.NAME, None)


FRESH = """
import importlib.metadata, json
looked = []
real = importlib.metadata.entry_points
importlib.metadata.entry_points = lambda **kw: looked.append(kw.get("group")) or real(**kw)
from server.games import GAMES, NotDiscovered, discover, new_game
try:
    new_game("parsimonia", 2, 1)
except NotDiscovered as exc:
    refused = str(exc)
imported = list(looked)
first = discover()
names = sorted(GAMES)
again = discover()
print(json.dumps([refused, imported, looked, names, first, again, sorted(GAMES), new_game("kupcy", 3, 1).n]))
"""


def test_games_are_discovered_by_an_explicit_call_once_never_on_import(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-c", FRESH], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    refused, imported, looked, names, first, again, after, seats = json.loads(run.stdout)
    assert refused == ("the games were looked up before they were discovered: a program that plays games calls "
                       "server.games.discover() when it starts")
    assert imported == [] and looked.count(GROUP) == 1  # importing read no entry point; discovery read them once
    assert names == after == ["gift-of-tulips", "kupcy", "parsimonia"] and first == again == [] and seats == 3


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
    run = subprocess.run([sys.executable, "-c", "from server.cli.main import main; main()", "simulate", "--game",
                          Sealed.NAME, "--players", "3", "--players-kind", "random", "--json"],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["game"] == Sealed.NAME and result["reason"] == "revealed" and len(result["scores"]) == 3
