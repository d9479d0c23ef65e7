"""The wheel holds everything a game needs: built from this tree, unpacked on its own, it plays a game of each
kind (``parsimonia simulate``) with nothing from the source tree on the path; and it carries the built web page,
which a server installed from it in a fresh venv, with no Node on its PATH, serves at ``/``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import urllib.request
import venv
import zipfile
from pathlib import Path

import pytest

from server.games import GAMES

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / "clients" / "web" / "dist"


def _sources(out: Path, page: bool) -> Path:
    """A copy of the tree's sources (a build in the tree would leave a ``build/`` there that later builds take
    files from), with the built page when ``page``."""
    sources = out / "sources"
    skip = shutil.ignore_patterns("__pycache__", "node_modules", "web", "results", "colyseus")
    for name in ("server", "protocol", "clients", "bench"):
        shutil.copytree(ROOT / name, sources / name, ignore=skip)
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, sources / name)
    if page:
        assert (DIST / "index.html").is_file(), "clients/web/dist is not built: run make web (make test does)"
        shutil.copytree(DIST, sources / "clients" / "web" / "dist")
    return sources


def _build(sources: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                           str(out), str(sources)], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    built = _build(_sources(out, page=True), out)
    assert built.returncode == 0, built.stderr
    (found,) = out.glob("parsimonia-*.whl")
    return found


@pytest.fixture(scope="module")
def unpacked_wheel(wheel: Path) -> Path:
    site = wheel.parent / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    return site


def test_the_wheel_carries_the_built_page_and_none_of_its_sources(wheel: Path):
    names = zipfile.ZipFile(wheel).namelist()
    page = sorted(str(p.relative_to(ROOT)) for p in DIST.rglob("*") if p.is_file())
    assert page and set(page) <= set(names)
    assert not [n for n in names if n.startswith("clients/web/") and not n.startswith("clients/web/dist/")]


def test_a_wheel_without_the_built_page_is_refused_with_one_line_saying_what_to_run(tmp_path: Path):
    built = _build(_sources(tmp_path, page=False), tmp_path)
    assert built.returncode != 0 and not list(tmp_path.glob("*.whl"))
    assert "run `make web`" in built.stdout + built.stderr


def test_a_server_installed_from_the_wheel_in_a_fresh_venv_serves_the_page_without_node(wheel: Path,
                                                                                         tmp_path: Path):
    fresh = tmp_path / "venv"
    venv.create(fresh, with_pip=False)
    here = Path(sysconfig.get_paths()["purelib"])  # the dependencies (trio, h11...), not this tree's own install
    (site,) = fresh.glob("lib/python*/site-packages")
    (site / "dependencies.pth").write_text(f"{here}\n")
    installed = subprocess.run([sys.executable, "-m", "pip", "--python", str(fresh / "bin" / "python"), "install",
                                "-q", "--no-deps", "--no-index", str(wheel)], capture_output=True, text=True,
                               timeout=300)
    assert installed.returncode == 0, installed.stderr
    env = {"PATH": str(fresh / "bin"), "HOME": str(tmp_path)}  # no node, no npm: only the venv's own commands
    found = subprocess.run(["python", "-c", "import server; print(server.__file__)"], env=env, cwd=tmp_path,
                           capture_output=True, text=True, check=True)
    assert found.stdout.startswith(str(site))
    log = tmp_path / "serve.err"
    with open(log, "wb") as err:
        server = subprocess.Popen(["parsimonia", "serve", "--port", "0", "--data", str(tmp_path / "data")], env=env,
                                  cwd=tmp_path, stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        assert server.stdout is not None
        first = server.stdout.readline()  # "Parsimonia server on ws://127.0.0.1:PORT ..." once listening
        assert first.startswith("Parsimonia server on ws://"), first + log.read_text()
        where = first.split("ws://", 1)[1].split()[0]
        with urllib.request.urlopen(f"http://{where}/", timeout=30) as answer:
            body = answer.read().decode()
        assert body == (DIST / "index.html").read_text()
        script = next((DIST / "assets").glob("*.js"))
        with urllib.request.urlopen(f"http://{where}/assets/{script.name}", timeout=30) as answer:
            assert answer.read() == script.read_bytes()
    finally:
        server.kill()
        server.wait(timeout=30)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_game_of_each_kind_plays_from_the_wheel_alone(unpacked_wheel: Path, game: str):
    env = {**os.environ, "PYTHONPATH": str(unpacked_wheel)}
    where = subprocess.run([sys.executable, "-c", "import server; print(server.__file__)"], env=env,
                           cwd=unpacked_wheel.parent, capture_output=True, text=True, check=True)
    assert where.stdout.strip().startswith(str(unpacked_wheel))
    played = subprocess.run([sys.executable, "-m", "server.cli.main", "simulate", "--game", game, "--players", "3",
                             "--json"], env=env, cwd=unpacked_wheel.parent, capture_output=True, text=True,
                            timeout=300)
    assert played.returncode == 0, played.stderr
    result = json.loads(played.stdout)
    assert result["game"] == game and result["players"] == 3 and result["winners"]
