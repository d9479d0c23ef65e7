"""What a Gift of Tulips table holds, what follows from it, and what a seat may see of it.

``TulipsState`` is the set-up and the bookkeeping: every card's place, the festival, the points, the turn. The
rules that change it live in ``engine.Tulips``. Hidden from everyone: the deck's order, the cards removed at
set-up, and the Secret Festival (a seat's private view lists the cards it put there itself); the card a player
has drawn is seen by that player alone until it is played.
"""

from __future__ import annotations

from protocol.values import Map, Snapshot, ViewPart

from server.games.base import Game, Outcome
from server.games.machines.rng import Rng
from server.games.machines.sealed import SealedChoice, sealed_value

from .config import Config, config_value
from .festival import Festival
from .phases import Action, Phase
from .scoring import GIVE_BONUS, KEEP, MAJORITY, majority_ranks

SETUP_CLOCK, ACTION_CLOCK = "setup", "action"


class TulipsState(Game):
    def __init__(self, players: int, seed: int, config: Config | None = None, start_ms: int = 0) -> None:
        super().__init__(players, seed, start_ms)
        cfg = config or Config()
        self.turns_each = cfg.check_table(players)
        self.cfg = cfg
        self.rng = Rng(seed)
        self.cards = {c.id: c for c in cfg.deck.cards}
        self.started_at = start_ms
        self.phase = Phase.SETUP
        self.points = [0] * players
        self.bouquets: list[list[int]] = [[] for _ in range(players)]
        self.secret: list[tuple[int, int]] = []  # (card, the seat that put it there), in order
        self.revealed: list[int] = []  # Secret Festival cards turned face up at the end (no longer in ``secret``)
        self.secret_put = [0] * players  # how many cards each seat put face down (the reveal does not lower it)
        self.festival = Festival()
        self.turn = 0  # turns started, all seats together
        self.current: int | None = None
        self.done: list[Action] = []  # the current turn's actions so far
        self.drawn: int | None = None  # the current player's card, until it is played
        self.majorities: list[Map] = []
        self.winners: tuple[int, ...] = ()
        self._static: ViewPart = {"cards": cfg.deck.wire, "varieties": list(cfg.deck.varieties),
                                  "config": config_value(cfg.to_wire()),
                                  "scoring": {"keep": list(KEEP), "give_bonus": list(GIVE_BONUS),
                                              "majority": [list(m) for m in MAJORITY],
                                              "majority_ranks": majority_ranks(players)},
                                  "turns_each": self.turns_each}

        self.deck = cfg.deck.in_play(players)  # the top of the deck is the end of the list
        self.rng.shuffle(self.deck)
        cut = len(self.deck) - cfg.removed_for(players)
        self.deck, self.removed = self.deck[:cut], self.deck[cut:]
        self._reveal_festival()
        self.hands = [[self.deck.pop(), self.deck.pop()] for _ in range(players)]  # the dealt pair, until chosen
        self.first = cfg.first_seat if cfg.first_seat is not None else self.rng.below(players)
        self.timers.set(SETUP_CLOCK, start_ms + cfg.choose_ms)
        self.setup = SealedChoice(SETUP_CLOCK, frozenset(range(players)), self.timers)

    def _reveal_festival(self) -> None:
        """Reveal until the second variety differs from the first; the extras go back and the deck is shuffled."""
        first = self.deck.pop()
        extras: list[int] = []
        while self.deck and self.cards[self.deck[-1]].variety == self.cards[first].variety:
            extras.append(self.deck.pop())
        if not self.deck:
            raise ValueError("the deck left after the removed cards has a single variety")
        second = self.deck.pop()
        self.festival.open(self._stacked(first), self._stacked(second))
        if extras:
            self.deck += extras
            self.rng.shuffle(self.deck)

    def _stacked(self, card: int) -> tuple[int, str, int]:
        return card, self.cards[card].variety, self.cards[card].value

    # ------------------------------------------------------------------ questions the rules ask

    def variety(self, card: int) -> str:
        return self.cards[card].variety

    def secret_of(self, seat: int) -> list[int]:
        return [card for card, owner in self.secret if owner == seat]

    def holdings(self, variety: str) -> list[tuple[int, int]]:
        """``(count, total value)`` of ``variety`` in each seat's bouquet."""
        out = []
        for bouquet in self.bouquets:
            values = [self.cards[c].value for c in bouquet if self.cards[c].variety == variety]
            out.append((len(values), sum(values)))
        return out

    def default_bouquet(self, seat: int) -> int:
        """The set-up choice made for a seat that did not choose: the higher value; equal, the first dealt."""
        a, b = self.hands[seat]
        return b if self.cards[b].value > self.cards[a].value else a

    def default_action(self) -> Action:
        """What a drawn card does when its time runs out: kept, or, if the turn's keep is used, added face down."""
        return Action.KEEP if Action.KEEP not in self.done else Action.ADD

    # ------------------------------------------------------------------ the end

    def _ranked_winners(self) -> tuple[int, ...]:
        best = max((self.points[s], len(self.bouquets[s])) for s in range(self.n))
        return tuple(s for s in range(self.n) if (self.points[s], len(self.bouquets[s])) == best)

    def _detail(self) -> Map:
        return {"points": list(self.points), "bouquets": [len(b) for b in self.bouquets],
                "festival": self.festival.ranking(), "majorities": list(self.majorities), "turns": self.turn}

    def outcome(self) -> Outcome | None:
        if self.phase != Phase.OVER:
            return None
        return Outcome("festival", self.winners, tuple(self.points), self._detail())

    def _standing(self) -> Outcome:
        return Outcome(None, (), tuple(self.points), self._detail())

    # ------------------------------------------------------------------ what a seat may see

    def static(self) -> ViewPart:
        """The card table, the varieties, the options and the points (one shared map: read it, do not change it)."""
        return self._static

    def public_view(self) -> ViewPart:
        return {
            "game": self.NAME,
            "now": self.now,
            "started_at": self.started_at,
            "phase": self.phase,
            "turn": self.turn,
            "round": (self.turn - 1) // self.n + 1 if self.turn else 0,
            "first": self.first,
            "current": self.current,
            "done": list(self.done),
            "drawing": self.drawn is not None,
            "deadlines": {"setup": self.timers.get(SETUP_CLOCK), "action": self.timers.get(ACTION_CLOCK)},
            "setup": sealed_value(self.setup.to_view()),
            "players": [
                {"seat": s, "points": self.points[s], "bouquet": list(self.bouquets[s]),
                 "secret": self.secret_put[s]}
                for s in range(self.n)
            ],
            "festival": {"ranking": self.festival.ranking(), "cards": list(self.festival.cards)},
            "deck_count": len(self.deck),
            "secret_count": len(self.secret),
            "removed_count": len(self.removed),
            "revealed": list(self.revealed),
            "majorities": list(self.majorities),
            "result": self.result() if self.phase == Phase.OVER else None,
        }

    def private_view(self, seat: int) -> ViewPart:
        """The seat's dealt pair (until the reveal), its choice, its drawn card, its Secret Festival cards."""
        return {
            "hand": list(self.hands[seat]),
            "chosen": self.setup.private_view(seat),
            "drawn": self.drawn if self.current == seat else None,
            "my_secret": self.secret_of(seat),
        }

    def snapshot(self) -> Snapshot:
        return {
            "seed": self.seed,
            "rng": self.rng.state,
            "now": self.now,
            "phase": self.phase,
            "deck": list(self.deck),
            "removed": list(self.removed),
            "hands": [list(h) for h in self.hands],
            "setup": self.setup.snapshot(),
            "bouquets": [list(b) for b in self.bouquets],
            "secret": [list(x) for x in self.secret],
            "revealed": list(self.revealed),
            "festival": self.festival.snapshot(),
            "points": list(self.points),
            "first": self.first,
            "turn": self.turn,
            "current": self.current,
            "done": list(self.done),
            "drawn": self.drawn,
            "majorities": list(self.majorities),
            "winners": list(self.winners),
            "timers": self.timers.snapshot(),
        }
