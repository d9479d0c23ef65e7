"""What a game package declares to be played here: its engine, its words, its reference players and its display
facts, in one ``Manifest``.

The project's own games declare theirs in their packages. A game from elsewhere is a package of its own and one
entry point: its distribution names its manifest in the entry-point group ``parsimonia.games``, e.g. in its
``pyproject.toml``::

    [project.entry-points."parsimonia.games"]
    checkers = "checkers_game:MANIFEST"

and the server, the tools (``simulate``, ``bot``, ``watch``) and the page play it with nothing else changed
(``server.games.discover``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .base import Game

GROUP = "parsimonia.games"


@dataclass(frozen=True)
class Manifest:
    game: type[Game]
    words: str | None = None  # the dotted path of the module that puts its events and views into words
    players: Mapping[str, str] = field(default_factory=dict)  # reference player kind -> "module:factory(seed)"
    currency: str = ""  # written before an amount of money ("$"); empty for a game whose money has no sign

    @property
    def name(self) -> str:
        return self.game.NAME

    def display(self) -> dict[str, str]:
        """What a client needs to show the game that the rules do not say (``welcome``'s ``display``)."""
        return {"title": self.game.TITLE, "currency": self.currency}
