"""The games' client halves: the project's three, and a game from another package found through its entry point
in the group ``parsimonia.clients`` (here a "checkers" package written for the test), without the server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from importlib.metadata import EntryPoint, distributions
from pathlib import Path

import pytest

from clients import games
from clients.games import GROUP, ClientManifest, client_game, discover, words_for

ROOT = Path(__file__).resolve().parents[2]
CHECKERS = ('from clients.games import ClientManifest\n\n'
            'CLIENT = ClientManifest("checkers", players={"greedy": "checkers_client:Greedy"})\n')


def checkers_site(site: Path, entry: str = "checkers_client:CLIENT") -> Path:
    """A package ``checkers_client`` and its distribution metadata in ``site``, naming ``entry`` as its client
    half: what pip would write for a game from elsewhere."""
    (site / "checkers_client.py").write_text(CHECKERS)
    info = site / "checkers-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: checkers\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{GROUP}]\ncheckers = {entry}\n")
    return site


def entry_points_in(site: Path) -> list[EntryPoint]:
    return [point for dist in distributions(path=[str(site)]) for point in dist.entry_points if point.group == GROUP]


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """The client registry as it is, given back after the test; ``tmp_path`` on the import path."""
    games.client_games()  # the installed packages' looked up first: the copy has them, and they are not lost
    monkeypatch.setattr(games, "CLIENTS", dict(games.CLIENTS))
    monkeypatch.setattr(games, "PROBLEMS", [])
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("checkers_client", None)


def test_the_projects_games_have_their_words_and_players():
    assert words_for("kupcy").__name__ == "clients.words.kupcy"
    assert {name: dict(client_game(name).players) for name in ("parsimonia", "kupcy", "gift-of-tulips")} == {
        "parsimonia": {"greedy": "clients.players.parsimonia:GreedyPlayer"},
        "kupcy": {"greedy": "clients.players.kupcy:KupcyGreedyPlayer"},
        "gift-of-tulips": {"greedy": "clients.players.tulips:TulipsGreedy"}}


def test_a_game_nobody_declared_has_no_client_half_and_no_words():
    assert client_game("chess") is None and words_for("chess") is None


def test_a_client_half_named_by_an_entry_point_is_found(registry):
    assert discover(entry_points_in(checkers_site(registry))) == ["checkers"]
    assert client_game("checkers") == ClientManifest("checkers", players={"greedy": "checkers_client:Greedy"})
    assert words_for("checkers") is None  # a game without words is told generically


def test_a_game_already_known_keeps_its_own_client_half(registry):
    (point,) = entry_points_in(checkers_site(registry))
    impostor = EntryPoint("parsimonia", "clients.games:KUPCY", GROUP)
    assert discover([point, impostor]) == ["checkers"]
    assert client_game("parsimonia") is games.PARSIMONIA


def test_a_broken_entry_point_is_skipped_and_said(registry):
    broken = entry_points_in(checkers_site(registry, "checkers_client:CHECKERS"))
    assert discover(broken) == [] and client_game("checkers") is None
    assert games.PROBLEMS == ["client entry point 'checkers' skipped: module 'checkers_client' has no attribute "
                              "'CHECKERS'"]


FIRST_USE = """
import json, sys
import clients.games
before = "checkers_client" in sys.modules
print(json.dumps([before, dict(clients.games.client_game("checkers").players), clients.games.problems()]))
"""


def test_an_installed_client_half_is_looked_up_on_first_use_only(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(checkers_site(tmp_path)), str(ROOT)])}
    run = subprocess.run([sys.executable, "-c", FIRST_USE], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == [False, {"greedy": "checkers_client:Greedy"}, []]


def test_the_parsimonia_command_says_a_broken_client_entry_point_and_plays_on(tmp_path):
    site = checkers_site(tmp_path, "checkers_client:CHECKERS")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    run = subprocess.run([sys.executable, "-m", "server.cli.main", "simulate", "--game", "gift-of-tulips", "--players", "2",
                          "--players-kind", "random", "--json"], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stderr.splitlines() == ["parsimonia simulate: client entry point 'checkers' skipped: module "
                                       "'checkers_client' has no attribute 'CHECKERS'"]
    assert json.loads(run.stdout)["game"] == "gift-of-tulips"
