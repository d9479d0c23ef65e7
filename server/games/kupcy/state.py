"""What a Kupcy table holds, what follows from it, and what a seat may see of it.

``KupcyState`` is the deal and the state's bookkeeping: every card's place (the deck, a ship, a warehouse, the
market, out of the game), the phase and step, and the questions the rules ask of them (what a seat may offer,
how big its ship must be, its score). It changes nothing after the deal: the rules live in ``engine.Kupcy``.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Mapping
from typing import TypedDict, cast

from protocol.values import Map, Snapshot, Value, ViewPart

from server.games.base import Game, Outcome
from server.games.machines.rng import Rng
from server.games.machines.sealed import SealedChoice, sealed_value

from .cards import CHARTER, GOODS, MERCHANT, Card
from .charters import SHIP
from .config import Config, clocks_value
from .defaults import SHIP_SIZE
from .phases import Phase, Step
from .scoring import score
from .trade import BID, Market

HAND = 7
SPLIT, DECIDE, STOW = "split", "decide", "stow"  # deadline kinds (and ``trade.BID``)


class DebtView(TypedDict):
    """A charter's debt as everyone sees it (``Debt``)."""

    seat: int
    card: int
    charter: str
    zone: str
    cards: int | None
    worth: int | None


def debt_value(view: DebtView) -> Mapping[str, Value]:
    """``view`` as a ``Value``: every field of ``DebtView`` is one (mypy sees a TypedDict as a map of object)."""
    return cast("Mapping[str, Value]", view)


@dataclass
class Debt:
    """What a charter asks the drawer to pay, of their choice: ``cards`` more cards, or ``worth`` more value."""

    seat: int
    card: int  # the charter card's id
    charter: str  # its effect's name
    zone: str
    cards: int | None
    worth: int | None

    def to_view(self) -> DebtView:
        return {"seat": self.seat, "card": self.card, "charter": self.charter, "zone": self.zone,
                "cards": self.cards, "worth": self.worth}


class KupcyState(Game):
    def __init__(self, players: int, seed: int, config: Config | None = None, start_ms: int = 0) -> None:
        super().__init__(players, seed, start_ms)
        cfg = config or Config()
        self.cfg = cfg
        self.rng = Rng(seed)
        self.cards: dict[int, Card] = {c.id: c for c in cfg.deck.cards}
        if sum(1 for c in self.cards.values() if c.kind != CHARTER) < HAND * players:
            raise ValueError(f"the deck has too few cards besides charters to deal {players} players {HAND} each")
        self.deck = list(self.cards)  # the top of the deck is the end of the list
        self.rng.shuffle(self.deck)
        self.ships: list[list[int]] = [[] for _ in range(players)]  # hidden; during the split, the hand dealt
        self.warehouses: list[list[int]] = [[] for _ in range(players)]  # public
        self.out: list[int] = []  # cards that left the game (charters used, cards lost or paid), face up
        self.phase = Phase.SPLIT
        self.step: Step | None = None
        self.turn = 0
        self.current: int | None = None
        self.drawn: int | None = None  # the drawn money or merchant while its drawer decides where it goes
        self.market: Market | None = None
        self.debt: Debt | None = None
        self.stowing: set[int] = set()
        self.last_round: list[int] = []  # the seats still to have their last-round operation, in order
        self.end_reason: str | None = None
        self.returned = [0] * players  # charters dealt and returned, by seat
        for seat in range(players):
            for _ in range(HAND):
                self.ships[seat].append(self._deal_one(seat))
        self.first = self.rng.below(players)
        self.timers.set(SPLIT, start_ms + cfg.decide_ms)
        self.split = SealedChoice(SPLIT, frozenset(range(players)), self.timers)
        self._static: ViewPart = {"cards": cfg.deck.wire, "config": clocks_value(cfg.to_wire()),
                                  "charters": cfg.effect_data}

    def _deal_one(self, seat: int) -> int:
        """A card for the deal; a charter goes back into the deck, which is reshuffled, and another is dealt."""
        while True:
            card = self.deck.pop()
            if self.cards[card].kind != CHARTER:
                return card
            self.returned[seat] += 1
            self.deck.append(card)
            self.rng.shuffle(self.deck)

    # ------------------------------------------------------------------ questions the rules ask

    def owned(self, seat: int) -> list[int]:
        return self.ships[seat] + self.warehouses[seat]

    def ship_target(self, seat: int) -> int:
        """The ship holds 5 cards whenever its owner holds 5 or more, and everything otherwise."""
        return min(SHIP_SIZE, len(self.owned(seat)))

    def offerable(self, seat: int, goods: int) -> list[int]:
        """The ship cards ``seat`` may offer for ``goods``: goods, money, and the merchant of its origin."""
        origin = self.cards[goods].origin
        return [c for c in self.ships[seat]
                if self.cards[c].priced or (self.cards[c].kind == MERCHANT and self.cards[c].origin == origin)]

    def sellable(self, seat: int) -> list[int]:
        return [c for c in self.owned(seat) if self.cards[c].kind == GOODS]

    def payable(self) -> list[int]:
        """The cards the drawer may pay toward the charter's debt (a ``worth`` debt: cards with a value)."""
        debt = self.debt
        assert debt is not None
        zone = self.ships[debt.seat] if debt.zone == SHIP else self.warehouses[debt.seat]
        return [c for c in zone if debt.worth is None or self.cards[c].priced]

    def scores(self) -> tuple[int, ...]:
        return tuple(score(self.owned(s), self.cards) for s in range(self.n))

    # ------------------------------------------------------------------ the end

    def _detail(self) -> Map:
        return {"turns": self.turn, "owned": [len(self.owned(s)) for s in range(self.n)]}

    def outcome(self) -> Outcome | None:
        if self.phase != Phase.OVER:
            return None
        scores = self.scores()
        best = max(scores)
        winners = tuple(s for s in range(self.n) if scores[s] == best)
        return Outcome(self.end_reason, winners, scores, self._detail())

    def _standing(self) -> Outcome:
        return Outcome(None, (), self.scores(), self._detail())

    # ------------------------------------------------------------------ what a seat may see

    def static(self) -> ViewPart:
        """The card table, the clocks and the charter effects (one shared map: read it, do not change it)."""
        return self._static

    def public_view(self) -> ViewPart:
        """Everything but the deck's order, the ships' contents and sealed offers or splits before the reveal."""
        return {
            "game": self.NAME,
            "now": self.now,
            "phase": self.phase,
            "step": self.step,
            "turn": self.turn,
            "current": self.current,
            "first": self.first,
            "deadlines": {kind: self.timers.get(kind) for kind in (SPLIT, DECIDE, BID, STOW)},
            "players": [
                {"seat": s, "ship_count": len(self.ships[s]), "warehouse": list(self.warehouses[s]),
                 "owned": len(self.owned(s)), "returned": self.returned[s]}
                for s in range(self.n)
            ],
            "deck_count": len(self.deck),
            "out": list(self.out),
            "split": sealed_value(self.split.to_view()) if self.phase == Phase.SPLIT else None,
            "market": sealed_value(self.market.to_view()) if self.market is not None else None,
            "debt": debt_value(self.debt.to_view()) if self.debt is not None else None,
            "stowing": sorted(self.stowing),
            "last_round": list(self.last_round),
            "result": self.result() if self.phase == Phase.OVER else None,
        }

    def private_view(self, seat: int) -> ViewPart:
        """The seat's ship, its sealed split or offer before the reveal, and the money or merchant it drew."""
        sealed = self.split if self.phase == Phase.SPLIT else (self.market.sealed if self.market else None)
        return {
            "ship": list(self.ships[seat]),
            "sealed": sealed.private_view(seat) if sealed is not None else None,
            "drawn": self.drawn if self.current == seat else None,
        }

    def snapshot(self) -> Snapshot:
        return {
            "seed": self.seed,
            "rng": self.rng.state,
            "now": self.now,
            "deck": list(self.deck),
            "ships": [list(s) for s in self.ships],
            "warehouses": [list(w) for w in self.warehouses],
            "out": list(self.out),
            "phase": self.phase,
            "step": self.step,
            "turn": self.turn,
            "current": self.current,
            "first": self.first,
            "drawn": self.drawn,
            "split": self.split.snapshot(),
            "market": self.market.snapshot() if self.market is not None else None,
            "debt": debt_value(self.debt.to_view()) if self.debt is not None else None,
            "stowing": sorted(self.stowing),
            "last_round": list(self.last_round),
            "returned": list(self.returned),
            "timers": self.timers.snapshot(),
            "end_reason": self.end_reason,
        }
