"""An engine's views of its current state, each built once per change.

Between two changes of a game's state (a command applied, a deadline fired, the clocks shifted) every look at
the table gets the same public part, the same private part and the same legal templates for a seat: a round of
views to many seats, a bot looking again, a `view` request. So each is built the first time it is asked for and
kept until the match says the state changed (``changed``). What is handed out is shared: read it, do not change
it (``Match.public_view`` copies the public part before adding the table's own fields).
"""

from __future__ import annotations

from protocol.values import LegalAction, ViewPart

from server.games import Game


class EngineViews:
    def __init__(self) -> None:
        self._public: ViewPart | None = None
        self._private: dict[int, ViewPart] = {}
        self._legal: dict[int, list[LegalAction]] = {}

    def changed(self) -> None:
        self._public = None
        self._private.clear()
        self._legal.clear()

    def public(self, engine: Game) -> ViewPart:
        if self._public is None:
            self._public = engine.public_view()
        return self._public

    def private(self, engine: Game, seat: int) -> ViewPart:
        view = self._private.get(seat)
        if view is None:
            view = self._private[seat] = engine.private_view(seat)
        return view

    def legal(self, engine: Game, seat: int) -> list[LegalAction]:
        templates = self._legal.get(seat)
        if templates is None:
            templates = self._legal[seat] = engine.legal_actions(seat)
        return templates
