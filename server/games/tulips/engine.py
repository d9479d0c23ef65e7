"""The Gift of Tulips rules: what each command and each deadline does, and what follows from the state.

Read ``docs/rules/gift-of-tulips.md`` for every reading of the rulebook this code makes. As in Parsimonia: a
handler checks everything before it changes anything; ``HANDLERS`` and ``DEADLINES`` dispatch; ``_settle``, run
after every command and every deadline, works out what follows (the set-up reveal, the next draw, the next turn,
the end with the Secret Festival and the majorities) in one place.
"""

from __future__ import annotations

from typing import Hashable

from protocol.values import LegalAction, Options, Value

from server.games.base import IllegalAction

from .commands import COMMANDS
from .config import MAX_PLAYERS, MIN_PLAYERS, OPTIONS, Config, check_option_values
from .legal import legal_actions
from .phases import Action, Phase
from .scoring import SCORED_PLACES, give_points, keep_points, majority_awards, majority_ranks
from .state import ACTION_CLOCK, SETUP_CLOCK, TulipsState

SECRET_REVEALED = 5  # Secret Festival cards turned face up at the end (all of them if there are fewer)


class Tulips(TulipsState):
    NAME = "gift-of-tulips"
    TITLE = "Gift of Tulips"
    MIN_SEATS = MIN_PLAYERS
    MAX_SEATS = MAX_PLAYERS
    COMMANDS = COMMANDS
    OPTIONS = OPTIONS

    @classmethod
    def _check_option_values(cls, options: Options) -> None:
        check_option_values(options)

    @classmethod
    def from_options(cls, players: int, seed: int, options: Options, start_ms: int) -> "Tulips":
        return cls(players, seed, Config.from_options(options), start_ms)

    def legal_actions(self, seat: int) -> list[LegalAction]:
        return legal_actions(self, seat)

    # ------------------------------------------------------------------ checks

    def _check_seat(self, seat: int) -> None:
        if self.phase == Phase.OVER:
            raise IllegalAction("game_over", "the game has ended")

    def _require_action(self, seat: int, action: Action) -> int:
        """The drawn card, if ``seat`` may do ``action`` with it now."""
        if self.phase != Phase.TURNS or self.current != seat or self.drawn is None:
            raise IllegalAction("not_your_turn", "it is not your turn")
        if action in self.done:
            raise IllegalAction("action_used", f"you have done {action} this turn: the second card takes "
                                               "another action")
        return self.drawn

    # ------------------------------------------------------------------ commands

    def _cmd_choose(self, seat: int, bouquet: int) -> None:
        if self.phase != Phase.SETUP:
            raise IllegalAction("not_setup", "the set-up choice is over")
        self.setup.check(seat)
        if bouquet not in self.hands[seat]:
            raise IllegalAction("not_dealt", f"card {bouquet} was not dealt to you")
        self.setup.choose(seat, bouquet)
        data, audience, redacted = self.setup.chosen_event(seat)
        self._emit("chosen", audience, redacted, **data)

    def _cmd_keep(self, seat: int) -> None:
        self._keep(seat, self._require_action(seat, Action.KEEP))

    def _cmd_give(self, seat: int, to: int) -> None:
        card = self._require_action(seat, Action.GIVE)
        if to == seat or not 0 <= to < self.n:
            raise IllegalAction("no_such_seat", "give to another player at the table")
        self._play(Action.GIVE)
        place = self.festival.place(self.variety(card))
        points = give_points(place, self.cards[card].value)
        self.bouquets[to].append(card)
        self.points[seat] += points
        self._emit("given", seat=seat, to=to, card=card, place=place, points=points)

    def _cmd_add(self, seat: int, secret: bool) -> None:
        self._add(seat, self._require_action(seat, Action.ADD), secret)

    # ------------------------------------------------------------------ deadlines

    def _setup_time(self, key: Hashable) -> None:
        self.setup.fill_defaults(self.default_bouquet)

    def _action_time(self, key: Hashable) -> None:
        seat, card, action = self.current, self.drawn, self.default_action()
        assert seat is not None and card is not None
        self._emit("timed_out", seat=seat, action=action)
        if action == Action.KEEP:
            self._keep(seat, card)
        else:
            self._add(seat, card, secret=True)

    # ------------------------------------------------------------------ playing a drawn card

    def _play(self, action: Action) -> None:
        self.done.append(action)
        self.drawn = None
        self.timers.cancel(ACTION_CLOCK)

    def _keep(self, seat: int, card: int) -> None:
        self._play(Action.KEEP)
        place = self.festival.place(self.variety(card))
        points = keep_points(place)
        self.bouquets[seat].append(card)
        self.points[seat] += points
        self._emit("kept", seat=seat, card=card, place=place, points=points)

    def _add(self, seat: int, card: int, secret: bool) -> None:
        self._play(Action.ADD)
        if secret:
            self.secret.append((card, seat))
            self.secret_put[seat] += 1
            self._emit("hidden", frozenset({seat}), {"seat": seat}, seat=seat, card=card)
        else:
            self.festival.add(card, self.variety(card), self.cards[card].value)
            self._emit("added", seat=seat, card=card, ranking=self.festival.ranking())

    # ------------------------------------------------------------------ what follows from the state

    def _settle(self) -> None:
        if self.phase == Phase.SETUP and self.setup.complete:
            self._reveal_setup()
        if self.phase != Phase.TURNS or self.drawn is not None:
            return
        if self.current is not None and len(self.done) < 2:
            self._draw()
            return
        if self.current is not None:
            self._emit("turn_ended", seat=self.current, turn=self.turn)
        if self.deck:
            self._start_turn(self.first if self.current is None else (self.current + 1) % self.n)
        else:
            self._end_game()

    def _reveal_setup(self) -> None:
        chosen = self.setup.close(self._at)
        for seat in range(self.n):
            keep = chosen[seat]
            self.bouquets[seat].append(keep)
            put = [(c, seat) for c in self.hands[seat] if c != keep]
            self.secret += put
            self.secret_put[seat] += len(put)
            self.hands[seat] = []
        self.phase = Phase.TURNS
        self._emit("setup_revealed", bouquets=[chosen[s] for s in range(self.n)],
                   defaulted=sorted(self.setup.defaulted), first=self.first)

    def _start_turn(self, seat: int) -> None:
        self.turn += 1
        self.current = seat
        self.done = []
        self._emit("turn_started", seat=seat, turn=self.turn, round=(self.turn - 1) // self.n + 1)
        self._draw()

    def _draw(self) -> None:
        assert self.current is not None and self.deck, "the deck is cut to whole turns"
        self.drawn = self.deck.pop()
        deadline = self._at + self.cfg.action_ms
        self.timers.set(ACTION_CLOCK, deadline)
        seat = self.current
        self._emit("card_drawn", frozenset({seat}), {"seat": seat, "deadline": deadline}, seat=seat,
                   card=self.drawn, deadline=deadline)

    def _end_game(self) -> None:
        """The Secret Festival: shuffled, five cards (or all) added face up one at a time; then the majorities."""
        pile = [card for card, _ in self.secret]
        self.rng.shuffle(pile)
        for card in pile[:SECRET_REVEALED]:
            self.secret = [entry for entry in self.secret if entry[0] != card]
            self.revealed.append(card)
            self.festival.add(card, self.variety(card), self.cards[card].value)
            self._emit("secret_revealed", card=card, ranking=self.festival.ranking())
        ranks = majority_ranks(self.n)
        for place, variety in enumerate(self.festival.top(SCORED_PLACES), start=1):
            awards = majority_awards(place, self.holdings(variety), ranks)
            for seat, points in awards:
                self.points[seat] += points
            awarded: list[Value] = [list(a) for a in awards]
            self.majorities.append({"place": place, "variety": variety, "awards": awarded})
            self._emit("majority", place=place, variety=variety, awards=awarded)
        self.phase = Phase.OVER
        self.current = None
        self.done = []
        self.winners = self._ranked_winners()
        self._emit("game_ended", points=list(self.points), bouquets=[len(b) for b in self.bouquets],
                   winners=list(self.winners))

    # ------------------------------------------------------------------ dispatch

    HANDLERS = {"choose": _cmd_choose, "keep": _cmd_keep, "give": _cmd_give, "add": _cmd_add}
    DEADLINES = {SETUP_CLOCK: _setup_time, ACTION_CLOCK: _action_time}
