"""What a game package declares to be played here, in one ``Manifest``: its engine, and its client half
(``clients.games.ClientManifest``: its words, its reference players, its currency), which the clients read without
the server.

The project's own games declare theirs in their packages (their client halves in ``clients.games``). A game from
elsewhere is a package of its own and its entry points: its distribution names its manifest in the entry-point
group ``parsimonia.games``, and its client half (in a module that imports nothing of the server) in
``parsimonia.clients``, e.g. in its ``pyproject.toml``::

    [project.entry-points."parsimonia.games"]
    checkers = "checkers_game:MANIFEST"        # Manifest(Checkers, client=CLIENT)

    [project.entry-points."parsimonia.clients"]
    checkers = "checkers_game.client:CLIENT"   # ClientManifest("checkers", words=..., players=...)

and the server, the tools (``simulate``, ``bot``, ``watch``) and the page play it with nothing else changed
(``server.games.discover``; ``clients.games.discover`` for a client without the server).
"""

from __future__ import annotations

from dataclasses import dataclass

from clients.games import ClientManifest

from .base import Game

GROUP = "parsimonia.games"


@dataclass(frozen=True)
class Manifest:
    game: type[Game]
    client: ClientManifest | None = None  # what a client needs of the game; None: it is shown generically

    def __post_init__(self) -> None:
        if self.client is not None and self.client.name != self.game.NAME:
            raise ValueError(f"the client half of {self.game.NAME!r} is named {self.client.name!r}")

    @property
    def name(self) -> str:
        return self.game.NAME

    def display(self) -> dict[str, str]:
        """What a client needs to show the game that the rules do not say (``welcome``'s ``display``)."""
        return {"title": self.game.TITLE, "currency": self.client.currency if self.client is not None else ""}
