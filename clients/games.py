"""The client half of each game: what a client needs to show and play a game without its engine (the module that
puts its events and views into words, its reference players). Nothing in ``clients/`` imports the server, and the
server's rules import nothing of this (the title and currency a client shows come in ``welcome``'s ``display``).

The project's three games declare theirs here. A game from elsewhere declares its client half in a module of its
own package that imports nothing of the server, named in the entry-point group ``parsimonia.clients`` beside its
``parsimonia.games`` entry point::

    [project.entry-points."parsimonia.clients"]
    checkers = "checkers_game.client:CLIENT"

A client (a bot on the SDK, or the tools in the server's process) finds it there on its first look-up
(``client_games``); a package that does not load is skipped and said (``problems``).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType
from typing import TypeVar

GROUP = "parsimonia.clients"
T = TypeVar("T")


@dataclass(frozen=True)
class ClientManifest:
    name: str  # the game's name, as the server's ``welcome`` lists it
    words: str | None = None  # the dotted path of the module that puts its events and views into words
    players: Mapping[str, str] = field(default_factory=dict)  # reference player kind -> "module:factory(seed)"


PARSIMONIA = ClientManifest("parsimonia", words="clients.words.parsimonia",
                            players={"greedy": "clients.players.parsimonia:GreedyPlayer"})
KUPCY = ClientManifest("kupcy", words="clients.words.kupcy",
                       players={"greedy": "clients.players.kupcy:KupcyGreedyPlayer"})
TULIPS = ClientManifest("gift-of-tulips", words="clients.words.tulips",
                        players={"greedy": "clients.players.tulips:TulipsGreedy"})

CLIENTS: dict[str, ClientManifest] = {client.name: client for client in (PARSIMONIA, KUPCY, TULIPS)}
PROBLEMS: list[str] = []  # entry points that could not be loaded, one line each


def add(client: ClientManifest) -> ClientManifest:
    """Know the game of ``client`` by its name."""
    CLIENTS[client.name] = client
    return client


def load_entry_points(group: str, kind: type[T], problems: list[str], what: str,
                      found: Iterable[EntryPoint] | None = None) -> list[T]:
    """The ``kind`` objects the entry points of ``group`` name (``found``: those entry points, for a test). One that
    does not load, or names something else, is said in ``problems`` (as ``what``'s entry point) and skipped: a
    broken third-party package must not stop a client or the server."""
    loaded = []
    for point in entry_points(group=group) if found is None else found:
        try:
            value = point.load()
            if not isinstance(value, kind):
                raise TypeError(f"{point.value} is not a {kind.__name__}")
        except Exception as exc:  # noqa: BLE001 - whatever a package's import raises is that package's problem
            problems.append(f"{what} entry point {point.name!r} skipped: {exc}")
            continue
        loaded.append(value)
    return loaded


def discover(found: Iterable[EntryPoint] | None = None) -> list[str]:
    """Add the client halves other packages name in the entry-point group ``parsimonia.clients`` (``found``: those
    entry points, for a test); a game already known keeps its own. Returns the names added."""
    added = []
    for client in load_entry_points(GROUP, ClientManifest, PROBLEMS, "client", found):
        if client.name not in CLIENTS:
            add(client)
            added.append(client.name)
    return added


@cache
def _discovered() -> list[str]:
    """The installed packages' client halves, looked up once, on first use (importing a client reads no metadata)."""
    return discover()


def client_games() -> Mapping[str, ClientManifest]:
    """Every game's client half, by name."""
    _discovered()
    return CLIENTS


def client_game(name: str) -> ClientManifest | None:
    """The client half of ``name``, or None for a game a client knows nothing of (it is shown generically)."""
    return client_games().get(name)


def words_for(name: str) -> ModuleType | None:
    """The module that puts ``name``'s events and views into words, or None for a game without one."""
    client = client_game(name)
    return importlib.import_module(client.words) if client is not None and client.words else None


def problems() -> list[str]:
    """The client entry points that could not be loaded, one line each (the CLI says them)."""
    _discovered()
    return PROBLEMS
