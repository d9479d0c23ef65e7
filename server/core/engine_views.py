"""An engine's views of its current state, each built once per change.

Between two changes of a game's state (a command applied, a deadline fired, the clocks shifted) every look at
the table gets the same public part and the same private part for a seat: a round of views to many seats, a bot
looking again. So each is built the first time it is asked for and kept until the match says the state changed
(``changed``). The legal templates are not kept, and a round of views builds each seat's private part afresh
(``Session.flush_views``). What is handed out is shared: read it, do not change it (``Session.public_view``
copies the public part before adding the table's own fields).
"""

from __future__ import annotations

from protocol.values import ViewPart

from server.games import Game


class EngineViews:
    def __init__(self) -> None:
        self._public: ViewPart | None = None
        self._private: dict[int, ViewPart] = {}

    def changed(self) -> None:
        self._public = None
        self._private.clear()

    def public(self, engine: Game) -> ViewPart:
        if self._public is None:
            self._public = engine.public_view()
        return self._public

    def private(self, engine: Game, seat: int) -> ViewPart:
        view = self._private.get(seat)
        if view is None:
            view = self._private[seat] = engine.private_view(seat)
        return view
