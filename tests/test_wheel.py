"""The wheel holds everything a game needs: built from this tree, unpacked on its own, it plays a game of each
kind (``parsimonia simulate``) with nothing from the source tree on the path."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from server.games import GAMES

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def unpacked_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from a copy of the tree's sources (a build in the tree would leave a ``build/`` there
    that later builds take files from), unpacked."""
    out = tmp_path_factory.mktemp("wheel")
    sources = out / "sources"
    skip = shutil.ignore_patterns("__pycache__", "node_modules", "web", "results", "colyseus")
    for name in ("server", "protocol", "clients", "bench"):
        shutil.copytree(ROOT / name, sources / name, ignore=skip)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, sources / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(out),
                    str(sources)], check=True, capture_output=True, timeout=300)
    (wheel,) = out.glob("parsimonia-*.whl")
    site = out / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    return site


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_game_of_each_kind_plays_from_the_wheel_alone(unpacked_wheel: Path, game: str):
    env = {**os.environ, "PYTHONPATH": str(unpacked_wheel)}
    where = subprocess.run([sys.executable, "-c", "import server; print(server.__file__)"], env=env,
                           cwd=unpacked_wheel.parent, capture_output=True, text=True, check=True)
    assert where.stdout.strip().startswith(str(unpacked_wheel))
    played = subprocess.run([sys.executable, "-m", "server.cli", "simulate", "--game", game, "--players", "3",
                             "--json"], env=env, cwd=unpacked_wheel.parent, capture_output=True, text=True,
                            timeout=300)
    assert played.returncode == 0, played.stderr
    result = json.loads(played.stdout)
    assert result["game"] == game and result["players"] == 3 and result["winners"]
