"""A game from another package: its manifest, named by an entry point in the group ``parsimonia.games``, is all
the server and the tools need (the toy game of the tests, installed that way here); a manifest's client half
(``clients.games``) gives its words, players and currency to the server and to the clients of its process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import distributions
from pathlib import Path

import pytest

import clients.games
from clients.games import ClientManifest, client_game, words_for
from server.games import GAMES, MANIFESTS, PROBLEMS, Manifest, discover, register
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


def test_the_projects_games_take_their_display_facts_from_their_client_halves():
    for name in ("parsimonia", "kupcy", "gift-of-tulips"):
        assert MANIFESTS[name].client is not None and MANIFESTS[name].client is client_game(name)
    assert {name: manifest.display() for name, manifest in MANIFESTS.items()} == {
        "gift-of-tulips": {"title": "Gift of Tulips", "currency": ""}, "kupcy": {"title": "Kupcy", "currency": ""},
        "parsimonia": {"title": "Parsimonia", "currency": "$"}}


def test_a_game_registered_with_the_server_brings_its_client_half_to_the_clients(monkeypatch):
    monkeypatch.setattr(clients.games, "CLIENTS", dict(clients.games.client_games()))
    half = ClientManifest(Sealed.NAME, currency="pts ")
    try:
        register(Sealed, half)
        assert client_game(Sealed.NAME) is half
        assert MANIFESTS[Sealed.NAME].display() == {"title": Sealed.TITLE, "currency": "pts "}
    finally:
        GAMES.pop(Sealed.NAME, None)
        MANIFESTS.pop(Sealed.NAME, None)


def test_a_client_half_must_be_named_as_its_game():
    with pytest.raises(ValueError, match="the client half of 'toy-sealed' is named 'kupcy'"):
        Manifest(Sealed, client=clients.games.KUPCY)


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
