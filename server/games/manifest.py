"""What a game package declares to be played here, in one ``Manifest``: its engine, and the display facts the
rules do not say (its currency), which the server tells every client (``welcome``'s ``display``).

A game from elsewhere is a package of its own and its entry points: its distribution names its manifest in the
entry-point group ``parsimonia.games``, and its client half (``clients.games.ClientManifest``: its words, its
reference players, in a module that imports nothing of the server) in ``parsimonia.clients``, e.g. in its
``pyproject.toml``::

    [project.entry-points."parsimonia.games"]
    checkers = "checkers_game:MANIFEST"        # Manifest(Checkers, currency="C$")

    [project.entry-points."parsimonia.clients"]
    checkers = "checkers_game.client:CLIENT"   # ClientManifest("checkers", words=..., players=...)

and the server, the tools (``simulate``, ``bot``, ``watch``) and the page play it with nothing else changed
(``server.games.discover``; ``clients.games.discover`` for the clients). The two halves never import each other.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import Game

GROUP = "parsimonia.games"


@dataclass(frozen=True)
class Manifest:
    game: type[Game]
    currency: str = ""  # written before an amount of money ("$"); empty for a game whose money has no sign

    @property
    def name(self) -> str:
        return self.game.NAME

    def display(self) -> dict[str, str]:
        """What a client needs to show the game that the rules do not say (``welcome``'s ``display``)."""
        return {"title": self.game.TITLE, "currency": self.currency}
