"""The game engines, by name. Every engine keeps the contract in ``server.games.base``.

``GAMES`` is the registry the runtime, the tools and the tournament look games up in; ``MANIFESTS`` holds what
each game's package declares besides its engine (``server.games.manifest``). Both are filled by ``discover``,
which a program that plays games (the CLI, a bench script, the tests' conftest) calls once when it starts: the
project's own games first, then those other packages name in the entry-point group ``parsimonia.games``. Importing
this package discovers nothing, and a look-up before ``discover`` raises ``NotDiscovered``
(``server.games.registry``); a test may ``register`` a toy game directly. The rules import nothing of
``clients``: a game's client half is the clients' own (``clients.games``).
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib.metadata import EntryPoint
from typing import Any, TypeGuard

from server.plugins import load_entry_points

from .base import Event, Game, IllegalAction, Option, Outcome
from .manifest import GROUP, Manifest
from .registry import NotDiscovered, Registry

GAMES: Registry[type[Game]] = Registry("games")
MANIFESTS: Registry[Manifest] = Registry("games' manifests")
PROBLEMS: list[str] = []  # entry points that could not be loaded, one line each (the CLI says them)
DEFAULT_GAME = "parsimonia"


def register(cls: type[Game], currency: str = "") -> type[Game]:
    """Make ``cls`` playable under ``cls.NAME``; ``currency``: written before its amounts of money."""
    add(Manifest(cls, currency))
    return cls


def add(manifest: Manifest) -> Manifest:
    """Make the game of ``manifest`` playable under its name."""
    GAMES[manifest.name] = manifest.game
    MANIFESTS[manifest.name] = manifest
    return manifest


def _is_manifest(value: object) -> TypeGuard[Manifest]:
    return isinstance(value, Manifest)


def discover(found: Iterable[EntryPoint] | None = None) -> list[str]:
    """Register the project's games, then those other packages name in the entry-point group ``parsimonia.games``:
    once, however often it is called (``found``: more entry points, for a test, looked at every time). A game
    already here keeps its own. Returns the names the entry points added."""
    added = []
    points: list[Iterable[EntryPoint] | None] = [] if GAMES.opened else [None]
    if not GAMES.opened:
        from .kupcy import MANIFEST as KUPCY
        from .parsimonia import MANIFEST as PARSIMONIA
        from .tulips import MANIFEST as TULIPS

        for manifest in (PARSIMONIA, KUPCY, TULIPS):
            add(manifest)
        GAMES.open()
        MANIFESTS.open()
    if found is not None:
        points.append(found)
    for entries in points:
        for manifest in load_entry_points(GROUP, _is_manifest, "Manifest", PROBLEMS, "game", entries):
            if manifest.name not in GAMES:
                add(manifest)
                added.append(manifest.name)
    return added


def game_class(name: str) -> type[Game]:
    """The engine class of ``name``; ``KeyError`` naming the games there are when there is none."""
    try:
        return GAMES[name]
    except KeyError:
        raise KeyError(f"no game {name!r}; there are {', '.join(sorted(GAMES))}") from None


def new_game(name: str, players: int, seed: int, options: Any = None, time_scale: float = 1.0,
             start_ms: int = 0) -> Game:
    """Create a game from wire options. ``KeyError`` for an unknown game, ``ValueError`` for bad options."""
    return game_class(name).create(players, seed, options, time_scale, start_ms)


__all__ = ["DEFAULT_GAME", "Event", "GAMES", "Game", "IllegalAction", "MANIFESTS", "Manifest", "NotDiscovered",
           "Option", "Outcome", "add", "discover", "game_class", "new_game", "register"]
