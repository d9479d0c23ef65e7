"""The game engines, by name. Every engine keeps the contract in ``server.games.base``.

``GAMES`` is the registry the runtime, the tools and the tournament look games up in; ``MANIFESTS`` holds what
each game's package declares besides its engine (``server.games.manifest``: its client half, with its words, its
reference players, its display facts). The project's games are registered here; a game from another package is
found through its entry point (``discover``, run once on import); a test may ``register`` a toy game directly. A
game registered here brings its client half to the clients of this process (``clients.games.add``).
"""

from __future__ import annotations

from typing import Any

import clients.games

from .base import Event, Game, IllegalAction, Option, Outcome
from .manifest import GROUP, Manifest

GAMES: dict[str, type[Game]] = {}
MANIFESTS: dict[str, Manifest] = {}
PROBLEMS: list[str] = []  # entry points that could not be loaded, one line each (the CLI says them)
DEFAULT_GAME = "parsimonia"


def register(cls: type[Game], client: clients.games.ClientManifest | None = None) -> type[Game]:
    """Make ``cls`` playable under ``cls.NAME``; ``client``: its client half (its words, players, currency)."""
    add(Manifest(cls, client))
    return cls


def add(manifest: Manifest) -> Manifest:
    """Make the game of ``manifest`` playable under its name, and known to this process's clients."""
    GAMES[manifest.name] = manifest.game
    MANIFESTS[manifest.name] = manifest
    if manifest.client is not None:
        clients.games.add(manifest.client)
    return manifest


def discover(found: Any = None) -> list[str]:
    """Register the games other packages name in the entry-point group ``parsimonia.games`` (``found``: those
    entry points, for a test); a game already here keeps its own. Returns the names added."""
    added = []
    for manifest in clients.games.load_entry_points(GROUP, Manifest, PROBLEMS, "game", found):
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


# after register: the registry knows nothing of the games
from .kupcy import MANIFEST as KUPCY  # noqa: E402
from .parsimonia import MANIFEST as PARSIMONIA  # noqa: E402
from .tulips import MANIFEST as TULIPS  # noqa: E402

for _manifest in (PARSIMONIA, KUPCY, TULIPS):
    add(_manifest)
discover()

__all__ = ["DEFAULT_GAME", "Event", "GAMES", "Game", "IllegalAction", "MANIFESTS", "Manifest", "Option", "Outcome",
           "add", "discover", "game_class", "new_game", "register"]
