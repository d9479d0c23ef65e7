"""What a Parsimonia table holds, what follows from it, and what a seat may see of it.

``ParsimoniaState`` is the deal and the state's bookkeeping: every card's place, the money, the phase, and
the questions the rules ask of them (who holds a free resource card of a type, who has promised what). It
changes nothing after the deal: the rules that change it live in ``engine.Parsimonia``.
"""

from __future__ import annotations

from collections.abc import Mapping

from protocol.values import Map, Snapshot, Value, ViewPart

from server.games.machines.auction import AuctionView, OpenAuction, auction_value
from server.games.base import Game, Outcome
from server.games.machines.rng import Rng

from .config import Config
from .deck import RESOURCE, TOURISTS
from .phases import Phase, Step

GAME_CLOCK, OPENING_CLOCK, TURN_CLOCK = "game", "opening", "turn"


class ParsimoniaState(Game):
    def __init__(self, players: int, seed: int, config: Config | None = None, start_ms: int = 0) -> None:
        super().__init__(players, seed, start_ms)
        cfg = config or Config()
        if cfg.start_dollars * players > cfg.bank:
            raise ValueError("the bank cannot pay every player's starting dollars")
        self.cfg = cfg
        self.rng = Rng(seed)
        self.cards = {c.id: c for c in cfg.deck.cards}
        self.tourists_types = cfg.deck.tourists_types  # tourists card -> its type (shared: do not change it)
        self.dollars = [cfg.start_dollars] * players
        self.company_dollars = cfg.bank - cfg.start_dollars * players
        self.active = [True] * players
        self.hands: list[list[int]] = [[] for _ in range(players)]  # resource cards held, in order received
        self.on: dict[int, int] = {}  # resource card -> the tourists card on it
        self.company_cards: list[int] = []
        self.aside: list[int] = []
        self.bought: dict[int, int] = {}  # tourists card bought at auction -> its buyer, who owes its placing
        self.auctions: dict[int, OpenAuction] = {}
        self.lone_lots: dict[int, int] = {}  # open auction of a lone tourists card -> its type (in opening order)
        # seat -> the sum of its standing bids over the open auctions: kept by the engine's _bid, _withdraw
        # and _remove_auction, the only ways a standing bid starts or ends (the tests recompute it by step)
        self.promised = [0] * players
        # open auction -> its view as public_view gives it, built when first asked for and dropped by the
        # same three (a standing bid's start or end changes the view, the auction's end removes it) and all
        # dropped when the timers have shifted since they were built (a pause moves every closes_at): no one
        # changes a view once built, so every round of views shares the ones of unchanged auctions
        self._auction_views: dict[int, AuctionView] = {}
        self._auction_views_shifted = 0  # ``timers.shifted`` when the views kept were built
        self.next_auction = 1
        self.ready: set[int] = set()
        self.end_votes: set[int] = set()
        self.phase = Phase.OPENING
        self.turn = 0
        self.current: int | None = None
        self.step: Step | None = None
        self.turn_over = False
        self.drawn: int | None = None  # the drawn tourists card while its fate is undecided
        self.end_reason: str | None = None
        self.ended_at: int | None = None
        self._static: ViewPart = {"cards": cfg.deck.wire, "config": cfg.to_wire()}  # built once: it never changes

        resources = cfg.deck.ids(RESOURCE)
        self.rng.shuffle(resources)
        for i, card in enumerate(resources):
            self.hands[i % players].append(card)
        self.deck = cfg.deck.ids(TOURISTS)  # the top of the deck is the end of the list
        self.rng.shuffle(self.deck)
        self.timers.set(GAME_CLOCK, start_ms + cfg.game_ms)
        self.timers.set(OPENING_CLOCK, start_ms + cfg.opening_ms)

    # ------------------------------------------------------------------ questions the rules ask

    def free_resources(self, seat: int, card_type: int | None = None) -> list[int]:
        """The resource cards ``seat`` holds with no tourists card on them (of ``card_type`` if given)."""
        return [
            r for r in self.hands[seat]
            if r not in self.on and (card_type is None or self.cards[r].type == card_type)
        ]

    def owed(self, seat: int, card_type: int) -> list[int]:
        """The tourists cards of ``card_type`` that ``seat`` bought and has still to place."""
        return [c for c, buyer in self.bought.items() if buyer == seat and self.cards[c].type == card_type]

    def room_for(self, seat: int, card_type: int) -> int:
        """How many more tourists cards of ``card_type`` ``seat`` could take: free cards of the type not
        held for a bought card still to be placed."""
        return len(self.free_resources(seat, card_type)) - len(self.owed(seat, card_type))

    def committed(self, seat: int) -> int:
        """Dollars ``seat`` has promised (``machines.auction.committed`` of the open auctions, kept as bids change)."""
        return self.promised[seat]

    def free_dollars(self, seat: int) -> int:
        return self.dollars[seat] - self.committed(seat)

    def lone_tourists_type(self, auction: OpenAuction) -> int | None:
        """The type of the auction's lot if it is a lone tourists card, else None."""
        return self.tourists_types.get(auction.lot[0])

    def may_take_lot(self, seat: int, auction: OpenAuction) -> bool:
        """A lone tourists card may go only to a player with room for it (a free resource card of its type)."""
        card_type = self.lone_tourists_type(auction)
        return card_type is None or self.room_for(seat, card_type) > 0

    def placement_candidates(self, seat: int, tourist: int) -> list[int]:
        """Where an unsold drawn card must go: a free card of its type if any, else any free card."""
        return self.free_resources(seat, self.cards[tourist].type) or self.free_resources(seat)

    def best_free(self, seat: int, card_type: int) -> int:
        """The default place of a bought tourists card: the buyer's free card of its type that pays the most."""
        return max(self.free_resources(seat, card_type), key=lambda r: (self.cards[r].profit, -r))

    def least_profitable_candidate(self, seat: int, tourist: int) -> int:
        """The default place of an unsold drawn card: it keeps the better free cards for later pairings."""
        return min(self.placement_candidates(seat, tourist), key=lambda r: (self.cards[r].profit, r))

    def selling_resources(self) -> set[int]:
        """The seats with a resource card up for auction (their lot is still theirs)."""
        lone = self.tourists_types
        return {a.seller for a in self.auctions.values() if a.seller is not None and a.lot[0] not in lone}

    # ------------------------------------------------------------------ the end

    def _winners(self) -> tuple[int, ...]:
        best = max(self.dollars[s] for s in range(self.n) if self.active[s])
        return tuple(s for s in range(self.n) if self.active[s] and self.dollars[s] == best)

    def _detail(self) -> Map:
        return {"dollars": list(self.dollars), "company_dollars": self.company_dollars, "turns": self.turn}

    def outcome(self) -> Outcome | None:
        if self.phase != Phase.OVER:
            return None
        return Outcome(self.end_reason, self._winners(), tuple(self.dollars), self._detail())

    def _standing(self) -> Outcome:
        return Outcome(None, (), tuple(self.dollars), self._detail())

    # ------------------------------------------------------------------ what a seat may see

    def auction_view(self, a: OpenAuction) -> AuctionView:
        view = a.to_view()  # a new map: adding to it costs no copy
        view["lot_kind"] = self.cards[a.lot[0]].kind
        return view

    def _shared_auction_view(self, a: OpenAuction) -> AuctionView:
        """``auction_view(a)``, built once while the auction does not change (shared: do not change it)."""
        view = self._auction_views.get(a.id)
        if view is None:
            view = self._auction_views[a.id] = self.auction_view(a)
        return view

    def _shared_auction_views(self) -> list[Mapping[str, Value]]:
        """Every open auction's shared view; the kept ones are dropped first if the timers shifted since."""
        if self._auction_views_shifted != self.timers.shifted:
            self._auction_views.clear()
            self._auction_views_shifted = self.timers.shifted
        return [auction_value(self._shared_auction_view(a)) for a in self.auctions.values()]

    def static(self) -> ViewPart:
        """The card table and the configuration (one shared map: read it, do not change it)."""
        return self._static

    def public_view(self) -> ViewPart:
        """Everything but the order of the tourists deck and of the aside pile (sent sorted): hands, money,
        bids and the drawn card are public, so a seat has nothing private. The auctions' maps are kept from one
        call to the next while their auctions do not change: read them, do not change them."""
        return {
            "game": self.NAME,
            "now": self.now,
            "phase": self.phase,
            "turn": self.turn,
            "current": self.current,
            "step": self.step,
            "turn_over": self.turn_over,
            "deadlines": {
                "game": self.timers.get(GAME_CLOCK),
                "opening": self.timers.get(OPENING_CLOCK),
                "turn": self.timers.get(TURN_CLOCK),
            },
            "players": [
                {
                    "seat": s,
                    "active": self.active[s],
                    "dollars": self.dollars[s],
                    "committed": self.committed(s),
                    "ready": s in self.ready,
                    "end_vote": s in self.end_votes,
                    "resources": [[r, self.on.get(r)] for r in self.hands[s]],
                }
                for s in range(self.n)
            ],
            "drawn": self.drawn,
            "bought": [
                {"card": c, "seat": buyer, "deadline": self.timers.get(("bought", c))}
                for c, buyer in sorted(self.bought.items())
            ],
            "company": {"dollars": self.company_dollars, "cards": [[c, self.on.get(c)] for c in self.company_cards]},
            "deck_count": len(self.deck),
            "aside": sorted(self.aside),
            "auctions": self._shared_auction_views(),
            "result": self.result() if self.phase == Phase.OVER else None,
        }

    def snapshot(self) -> Snapshot:
        return {
            "seed": self.seed,
            "rng": self.rng.state,
            "now": self.now,
            "deck": list(self.deck),
            "aside": list(self.aside),
            "on": sorted(self.on.items()),
            "hands": [list(h) for h in self.hands],
            "bought": list(self.bought.items()),
            "timers": self.timers.snapshot(),
            "auctions": [{**auction_value(a.to_view()), "contested": a.contested} for a in self.auctions.values()],
            "next_auction": self.next_auction,
            "ready": sorted(self.ready),
            "end_votes": sorted(self.end_votes),
            "active": list(self.active),
            "dollars": list(self.dollars),
            "company_dollars": self.company_dollars,
            "company_cards": list(self.company_cards),
            "phase": self.phase,
            "turn": self.turn,
            "current": self.current,
            "step": self.step,
            "turn_over": self.turn_over,
            "drawn": self.drawn,
            "end_reason": self.end_reason,
            "ended_at": self.ended_at,
        }
