"""The registries of games by name (``server.games.GAMES``, ``MANIFESTS``): empty until the program that plays
games discovers them (``server.games.discover``, called once when it starts), and never read before: a look-up
before discovery raises ``NotDiscovered``, naming the call that is missing, instead of finding no game. Adding
(a test's toy game) is allowed at any time."""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from typing import TypeVar

V = TypeVar("V")


class NotDiscovered(RuntimeError):
    """A game was looked up before ``server.games.discover()``: a bug of the program, not a user's mistake."""


class Registry(MutableMapping[str, V]):
    """A map of games by name that refuses to be read until ``open``: see the module."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.opened = False
        self._items: dict[str, V] = {}

    def open(self) -> None:
        self.opened = True

    def _readable(self) -> dict[str, V]:
        if not self.opened:
            raise NotDiscovered(f"the {self.what} were looked up before they were discovered: a program that plays "
                                "games calls server.games.discover() when it starts")
        return self._items

    def __getitem__(self, name: str) -> V:
        return self._readable()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._readable())

    def __len__(self) -> int:
        return len(self._readable())

    def __setitem__(self, name: str, value: V) -> None:
        self._items[name] = value

    def __delitem__(self, name: str) -> None:
        del self._items[name]

    def __repr__(self) -> str:
        return f"Registry({self.what}: {sorted(self._items) if self.opened else 'not discovered'})"
