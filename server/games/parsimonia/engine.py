"""The Parsimonia rules engine: pure, deterministic, time injected in integer ms.

Read ``docs/rules/parsimonia.md`` for every reading of the seed that this code makes. The engine checks
each command fully before it changes anything, so a refused command leaves the state as it was.
"""

from __future__ import annotations

from typing import Any, Callable

from server.games.auction import HIGHEST_WINS, SELLER_PICKS, OpenAuction, committed
from server.games.base import Event, Game, IllegalAction
from server.games.rng import Rng
from server.games.timers import Timers

from .commands import COMMANDS
from .config import Config
from .deck import RESOURCE, TOURISTS

OPENING, OPENING_CLOSING, TURNS, OVER = "opening", "opening_closing", "turns", "over"
# steps of a turn
DECIDE, DRAWN_AUCTION, PLACE, MAIN = "decide", "drawn_auction", "place", "main"
GAME, OPENING_T, TURN = "game", "opening", "turn"


class Parsimonia(Game):
    NAME = "parsimonia"
    MIN_SEATS = 2
    MAX_SEATS = 6
    COMMANDS = COMMANDS

    def __init__(self, players: int, seed: int, config: Config | None = None, start_ms: int = 0) -> None:
        super().__init__()
        cfg = config or Config()
        if not self.MIN_SEATS <= players <= self.MAX_SEATS:
            raise ValueError(f"Parsimonia takes {self.MIN_SEATS} to {self.MAX_SEATS} players")
        if cfg.start_dollars * players > cfg.bank:
            raise ValueError("the bank cannot pay every player's starting dollars")
        self.cfg = cfg
        self.n = players
        self.seed = seed
        self.rng = Rng(seed)
        self.now = start_ms
        self.cards = {c.id: c for c in cfg.deck.cards}
        self.dollars = [cfg.start_dollars] * players
        self.company_dollars = cfg.bank - cfg.start_dollars * players
        self.active = [True] * players
        self.hands: list[list[int]] = [[] for _ in range(players)]  # resource cards held, in order received
        self.on: dict[int, int] = {}  # resource card -> the tourists card on it
        self.company_cards: list[int] = []
        self.aside: list[int] = []
        self.auctions: dict[int, OpenAuction] = {}
        self.next_auction = 1
        self.ready: set[int] = set()
        self.end_votes: set[int] = set()
        self.phase = OPENING
        self.turn = 0
        self.current: int | None = None
        self.step: str | None = None
        self.turn_over = False
        self.drawn: int | None = None  # the drawn tourists card while its fate is undecided
        self.end_reason: str | None = None
        self.ended_at: int | None = None
        self.timers = Timers()
        self._events: list[Event] = []
        self._at = start_ms

        resources = cfg.deck.ids(RESOURCE)
        self.rng.shuffle(resources)
        for i, card in enumerate(resources):
            self.hands[i % players].append(card)
        self.deck = cfg.deck.ids(TOURISTS)  # the top of the deck is the end of the list
        self.rng.shuffle(self.deck)
        self.timers.set(GAME, start_ms + cfg.game_ms)
        self.timers.set(OPENING_T, start_ms + cfg.opening_ms)

    # ------------------------------------------------------------------ plumbing

    def _emit(self, kind: str, **data: Any) -> None:
        self._events.append(Event(kind, self._at, data))

    def _take_events(self) -> list[Event]:
        events, self._events = self._events, []
        return events

    def _apply(self, seat: int, command: dict[str, Any], now_ms: int) -> list[Event]:
        if not 0 <= seat < self.n:
            raise IllegalAction("no_such_seat", f"seat {seat} is not at this table")
        if self.phase == OVER:
            raise IllegalAction("game_over", "the game has ended")
        if not self.active[seat]:
            raise IllegalAction("not_in_game", "you have left the game")
        self._at = now_ms
        handler: Callable[..., None] = getattr(self, "_cmd_" + command["type"])
        args = {k: v for k, v in command.items() if k != "type"}
        try:
            handler(seat, **args)
        except IllegalAction:
            if self._events:  # handlers check before they change anything
                raise AssertionError("a refused command emitted events") from None
            raise
        return self._take_events()

    def next_deadline(self) -> int | None:
        nxt = self.timers.next()
        return None if nxt is None else nxt[0]

    def advance(self, now_ms: int) -> list[Event]:
        if now_ms < self.now:
            raise ValueError(f"time went backwards: {now_ms} < {self.now}")
        while (due := self.timers.pop_next_due(now_ms)) is not None:
            self._at, key = due
            if key == GAME:
                self._end_game("clock")
            elif key == OPENING_T:
                self._end_opening("deadline")
            elif key == TURN:
                self._turn_timeout()
            else:
                self._close_auction(self.auctions[key[1]], None, "quiet")
        self.now = now_ms
        return self._take_events()

    def shift(self, delta_ms: int) -> None:
        if delta_ms < 0:
            raise ValueError("clocks only move forward")
        self.timers.shift(delta_ms)
        for a in self.auctions.values():
            a.shift(delta_ms)
        self.now += delta_ms

    @property
    def over(self) -> bool:
        return self.phase == OVER

    # ------------------------------------------------------------------ queries

    def free_resources(self, seat: int, card_type: int | None = None) -> list[int]:
        return [
            r for r in self.hands[seat]
            if r not in self.on and (card_type is None or self.cards[r].type == card_type)
        ]

    def committed(self, seat: int) -> int:
        return committed(self.auctions.values(), seat)

    def free_dollars(self, seat: int) -> int:
        return self.dollars[seat] - self.committed(seat)

    def lot_is_lone_tourist(self, auction: OpenAuction) -> bool:
        return self.cards[auction.lot[0]].kind == TOURISTS

    def may_take_lot(self, seat: int, auction: OpenAuction) -> bool:
        """A lone tourists card may go only to a player with a free resource card of its type."""
        if not self.lot_is_lone_tourist(auction):
            return True
        return bool(self.free_resources(seat, self.cards[auction.lot[0]].type))

    def _most_profitable_free(self, seat: int, card_type: int) -> int:
        """Where a bought tourists card goes: the buyer's free card of its type that pays the most."""
        return max(self.free_resources(seat, card_type), key=lambda r: (self.cards[r].profit, -r))

    def placement_candidates(self, seat: int, tourist: int) -> list[int]:
        """Where an unsold drawn card must go: a free card of its type if any, else any free card."""
        return self.free_resources(seat, self.cards[tourist].type) or self.free_resources(seat)

    def _require_turn(self, seat: int, step: str | tuple[str, ...]) -> None:
        if self.phase != TURNS or self.current != seat:
            raise IllegalAction("not_your_turn", "it is not your turn")
        if self.turn_over:
            raise IllegalAction("turn_over", "your turn time is over")
        steps = (step,) if isinstance(step, str) else step
        if self.step not in steps:
            raise IllegalAction("wrong_step", f"that is not possible now (turn step: {self.step})")

    def _auction(self, auction_id: int) -> OpenAuction:
        auction = self.auctions.get(auction_id)
        if auction is None:
            raise IllegalAction("no_such_auction", f"auction {auction_id} is not open")
        return auction

    def _check_start_price(self, start_price: int) -> None:
        if start_price > self.cfg.bank:
            raise IllegalAction("start_price_too_high", f"the starting price may be at most {self.cfg.bank}")

    # ------------------------------------------------------------------ commands at any time

    def _cmd_bid(self, seat: int, auction: int, amount: int) -> None:
        a = self._auction(auction)
        a.check_bid(seat, amount)
        if not self.may_take_lot(seat, a):
            raise IllegalAction(
                "no_free_resource_of_type",
                "you may bid for a tourists card only while you hold a free resource card of its type",
            )
        if amount > self.dollars[seat]:
            raise IllegalAction("not_enough_dollars", f"you have only {self.dollars[seat]} dollars")
        promised = self.committed(seat) - a.bids.get(seat, 0) + amount
        if promised > self.dollars[seat]:
            raise IllegalAction(
                "over_committed",
                f"your open bids would total {promised}, more than your {self.dollars[seat]} dollars",
            )
        a.bid(seat, amount, self._at)
        self.timers.set(("auction", a.id), a.closes_at)
        self._emit("bid", auction=a.id, seat=seat, amount=amount, closes_at=a.closes_at)

    def _cmd_close(self, seat: int, auction: int, winner: int | None) -> None:
        a = self._auction(auction)
        if a.rule != SELLER_PICKS:
            raise IllegalAction("cannot_pick_winner", "a Company auction closes only by quiet time")
        if a.seller != seat:
            raise IllegalAction("not_seller", "only the seller may close this auction")
        if winner is not None:
            if winner not in a.bids:
                raise IllegalAction("not_a_bidder", f"seat {winner} has not bid in this auction")
            if not self.may_take_lot(winner, a):
                raise IllegalAction(
                    "winner_not_eligible", f"seat {winner} no longer holds a free resource card of that type"
                )
        self._close_auction(a, winner, "seller")

    def _cmd_give(self, seat: int, to: int, amount: int) -> None:
        if to == seat or not 0 <= to < self.n:
            raise IllegalAction("no_such_seat", "give to another player at the table")
        if not self.active[to]:
            raise IllegalAction("not_in_game", f"seat {to} has left the game")
        if amount > self.free_dollars(seat):
            raise IllegalAction(
                "dollars_committed", f"you can give at most {self.free_dollars(seat)} (the rest backs your bids)"
            )
        self.dollars[seat] -= amount
        self.dollars[to] += amount
        self._emit("gift", seat=seat, to=to, amount=amount)

    def _cmd_vote_end(self, seat: int, agree: bool) -> None:
        if agree == (seat in self.end_votes):
            raise IllegalAction("vote_unchanged", "that is already your vote")
        if agree:
            self.end_votes.add(seat)
        else:
            self.end_votes.discard(seat)
        self._emit("end_vote", seat=seat, agree=agree)
        self._check_agreement()

    def _cmd_quit(self, seat: int) -> None:
        self.active[seat] = False
        self.ready.discard(seat)
        self.end_votes.discard(seat)
        for a in list(self.auctions.values()):
            if seat in (a.seller, a.starter):
                self._cancel_auction(a, "quit")
            else:
                a.withdraw(seat)
        cards = list(self.hands[seat])
        if self.drawn is not None and self.current == seat:
            cards.append(self.drawn)
            self.drawn = None
        self.company_cards.extend(cards)
        self.hands[seat] = []
        returned, self.dollars[seat] = self.dollars[seat], 0
        self.company_dollars += returned
        self._emit("player_quit", seat=seat, dollars=returned, cards=cards)
        if sum(self.active) <= 1:
            self._end_game("last_player")
            return
        if self.phase == OPENING:
            self._check_all_ready()
        elif self.phase == TURNS and self.current == seat and not self.turn_over:
            self._finish_turn("quit")
        self._check_agreement()
        self._maybe_next_turn()

    # ------------------------------------------------------------------ the opening

    def _cmd_ready(self, seat: int) -> None:
        if self.phase != OPENING:
            raise IllegalAction("not_opening", "the opening is over")
        if seat in self.ready:
            raise IllegalAction("already_ready", "you have already declared ready")
        self.ready.add(seat)
        self._emit("ready", seat=seat)
        self._check_all_ready()

    def _check_all_ready(self) -> None:
        if self.phase == OPENING and all(s in self.ready for s in range(self.n) if self.active[s]):
            self.timers.cancel(OPENING_T)
            self._end_opening("ready")

    def _end_opening(self, reason: str) -> None:
        self.phase = OPENING_CLOSING
        self._emit("opening_ended", reason=reason, open_auctions=sorted(self.auctions))
        self._maybe_next_turn()

    # ------------------------------------------------------------------ auctions

    def _cmd_auction(self, seat: int, card: int, start_price: int) -> None:
        if self.phase != OPENING:
            self._require_turn(seat, MAIN)
        if card not in self.hands[seat]:
            raise IllegalAction("not_your_card", f"you do not hold resource card {card}")
        self._check_start_price(start_price)
        self.hands[seat].remove(card)
        self._open_auction(seat, seat, card, start_price, SELLER_PICKS)

    def _cmd_auction_drawn(self, seat: int, start_price: int) -> None:
        self._require_turn(seat, DECIDE)
        self._check_start_price(start_price)
        card, self.drawn = self.drawn, None
        assert card is not None
        self.step = DRAWN_AUCTION
        self._open_auction(seat, seat, card, start_price, SELLER_PICKS)

    def _cmd_company_auction(self, seat: int, card: int, start_price: int) -> None:
        self._require_turn(seat, MAIN)
        if card not in self.company_cards:
            raise IllegalAction("not_company_card", f"the Company does not hold card {card}")
        self._check_start_price(start_price)
        self.company_cards.remove(card)
        self._open_auction(None, seat, card, start_price, HIGHEST_WINS)

    def _open_auction(self, seller: int | None, starter: int, card: int, start_price: int, rule: str) -> None:
        a = OpenAuction(self.next_auction, seller, starter, (card,), start_price, self.cfg.quiet_ms, rule, self._at)
        self.next_auction += 1
        self.auctions[a.id] = a
        self.timers.set(("auction", a.id), a.closes_at)
        self._emit("auction_opened", auction=self.auction_view(a))

    def _close_auction(self, a: OpenAuction, winner: int | None, reason: str) -> None:
        """Settle ``a``. ``winner`` is the seller's pick; by quiet time (reason "quiet") the rule decides."""
        if reason == "quiet":
            best = a.default_winner(lambda s: self.may_take_lot(s, a))
            winner = best[0] if best else None
            if winner is None and a.rule == HIGHEST_WINS and self.may_take_lot(a.starter, a):
                winner = a.starter  # nobody else bid: the starter takes the card for nothing
        price = a.bids.get(winner, 0) if winner is not None else 0
        self._remove_auction(a)
        card = a.lot[0]
        if winner is None:
            self._emit("auction_closed", auction=a.id, outcome="no_sale", winner=None, price=0, reason=reason)
            self._unsold(a, card)
        else:
            self.dollars[winner] -= price
            if a.seller is None:
                self.company_dollars += price
            else:
                self.dollars[a.seller] += price
            self._emit("auction_closed", auction=a.id, outcome="sold", winner=winner, price=price, reason=reason)
            if self.cards[card].kind == TOURISTS:
                self._place(winner, self._most_profitable_free(winner, self.cards[card].type), card, paid=True,
                            reason="bought")
                if a.seller is not None:  # the current turn's drawn card: the turn goes on
                    self.step = MAIN
            else:
                self.hands[winner].append(card)
        self._clear_full_sets()
        self._maybe_next_turn()

    def _unsold(self, a: OpenAuction, card: int) -> None:
        if a.seller is None:
            self.company_cards.append(card)
        elif self.cards[card].kind == RESOURCE:
            self.hands[a.seller].append(card)
        else:  # the drawn tourists card: it must be placed without profit
            self._forced_placement(a.seller, card)

    def _forced_placement(self, seat: int, card: int) -> None:
        cands = self.placement_candidates(seat, card)
        if not cands:
            self.aside.append(card)
            self._emit("card_aside", seat=seat, card=card)
            self.step = MAIN
        elif len(cands) == 1 or self.turn_over:
            self._place(seat, self._default_placement(seat, card), card, paid=False, reason="no_sale")
            self.step = MAIN
        else:
            self.drawn = card
            self.step = PLACE

    def _default_placement(self, seat: int, card: int) -> int:
        """The least profitable candidate: it keeps the better free cards for future pairings."""
        return min(self.placement_candidates(seat, card), key=lambda r: (self.cards[r].profit, r))

    def _cancel_auction(self, a: OpenAuction, reason: str) -> None:
        """Nothing changes hands; the lot goes back to where it came from (a leaver's to the Company)."""
        self._remove_auction(a)
        card = a.lot[0]
        if a.seller is None or not self.active[a.seller]:
            self.company_cards.append(card)
        elif self.cards[card].kind == RESOURCE:
            self.hands[a.seller].append(card)
        else:
            self.aside.append(card)
        self._emit("auction_closed", auction=a.id, outcome="cancelled", winner=None, price=0, reason=reason)

    def _remove_auction(self, a: OpenAuction) -> None:
        del self.auctions[a.id]
        self.timers.cancel(("auction", a.id))

    # ------------------------------------------------------------------ turns

    def _maybe_next_turn(self) -> None:
        """Start the next turn once the previous one (or the opening) is over and its auctions closed."""
        if self.phase == OPENING_CLOSING and not self.auctions:
            self.phase = TURNS
            self._start_turn(self._next_active(-1))
        elif self.phase == TURNS and self.turn_over and not self.auctions:
            assert self.current is not None
            self._start_turn(self._next_active(self.current))

    def _next_active(self, after: int) -> int:
        for i in range(1, self.n + 1):
            seat = (after + i) % self.n
            if self.active[seat]:
                return seat
        raise AssertionError("no active player")

    def _start_turn(self, seat: int) -> None:
        self.turn += 1
        self.current = seat
        self.turn_over = False
        deadline = self._at + self.cfg.turn_ms
        self.timers.set(TURN, deadline)
        self._emit("turn_started", seat=seat, turn=self.turn, deadline=deadline)
        if not self.deck and self.aside:
            self.deck, self.aside = self.aside, []
            self.rng.shuffle(self.deck)
            self._emit("deck_reshuffled", count=len(self.deck))
        if self.deck:
            self.drawn = self.deck.pop()
            self.step = DECIDE
            self._emit("card_drawn", seat=seat, card=self.drawn)
        else:
            self.step = MAIN
            self._emit("no_card_drawn", seat=seat)

    def _cmd_pair(self, seat: int, resource: int) -> None:
        self._require_turn(seat, DECIDE)
        assert self.drawn is not None
        if resource not in self.free_resources(seat, self.cards[self.drawn].type):
            raise IllegalAction("cannot_pair", "pair the drawn card with one of your free resource cards of its type")
        card, self.drawn = self.drawn, None
        self.step = MAIN
        self._place(seat, resource, card, paid=True, reason="paired")

    def _cmd_place(self, seat: int, resource: int) -> None:
        self._require_turn(seat, PLACE)
        assert self.drawn is not None
        if resource not in self.placement_candidates(seat, self.drawn):
            raise IllegalAction("cannot_place", "place it on a free resource card of its type if you have one")
        card, self.drawn = self.drawn, None
        self.step = MAIN
        self._place(seat, resource, card, paid=False, reason="no_sale")

    def _cmd_end_turn(self, seat: int) -> None:
        self._require_turn(seat, MAIN)
        self.timers.cancel(TURN)
        self._finish_turn("ended")
        self._maybe_next_turn()

    def _turn_timeout(self) -> None:
        self._finish_turn("timeout")
        self._maybe_next_turn()

    def _finish_turn(self, reason: str) -> None:
        """The current player can do nothing more; a card still undecided is placed by default."""
        seat = self.current
        assert seat is not None
        self.turn_over = True
        self.timers.cancel(TURN)
        if self.drawn is not None and self.step in (DECIDE, PLACE) and self.active[seat]:
            card, self.drawn = self.drawn, None
            self._forced_placement(seat, card)  # an undecided card counts as unsold
        self._emit("turn_ended", seat=seat, turn=self.turn, reason=reason)

    def _place(self, seat: int, resource: int, tourist: int, paid: bool, reason: str) -> None:
        self.on[resource] = tourist
        profit = self.cards[resource].profit + self.cards[tourist].profit if paid else 0
        payment = min(profit, self.company_dollars)
        self.company_dollars -= payment
        self.dollars[seat] += payment
        self._emit(
            "card_placed", seat=seat, resource=resource, tourist=tourist, reason=reason,
            profit=profit, paid=payment,
        )
        self._clear_full_sets()

    def _clear_full_sets(self) -> None:
        """A full set: every resource card a player holds carries a tourists card, none is up for auction."""
        selling = {a.seller for a in self.auctions.values() if self.cards[a.lot[0]].kind == RESOURCE}
        for seat in range(self.n):
            held = self.hands[seat]
            if held and seat not in selling and all(r in self.on for r in held):
                cleared = [self.on.pop(r) for r in held]
                self.aside.extend(cleared)
                self._emit("tourists_cleared", seat=seat, cards=cleared)

    # ------------------------------------------------------------------ the end

    def _check_agreement(self) -> None:
        if self.phase != OVER and all(s in self.end_votes for s in range(self.n) if self.active[s]):
            self._end_game("agreement")

    def _end_game(self, reason: str) -> None:
        for a in list(self.auctions.values()):
            self._cancel_auction(a, "game_over")
        if self.drawn is not None:
            self.aside.append(self.drawn)
            self.drawn = None
        self.phase = OVER
        self.step = None
        self.end_reason = reason
        self.ended_at = self._at
        for key in [GAME, OPENING_T, TURN]:
            self.timers.cancel(key)
        result = self.result()
        self._emit("game_ended", reason=reason, dollars=result["dollars"], winners=result["winners"])

    def winners(self) -> list[int]:
        best = max(self.dollars[s] for s in range(self.n) if self.active[s])
        return [s for s in range(self.n) if self.active[s] and self.dollars[s] == best]

    def result(self) -> dict[str, Any]:
        return {
            "game": self.NAME,
            "seed": self.seed,
            "players": self.n,
            "over": self.over,
            "reason": self.end_reason,
            "winners": self.winners(),
            "dollars": list(self.dollars),
            "company_dollars": self.company_dollars,
            "turns": self.turn,
        }

    # ------------------------------------------------------------------ what a seat may see and do

    def auction_view(self, a: OpenAuction) -> dict[str, Any]:
        return {**a.to_view(), "lot_kind": self.cards[a.lot[0]].kind}

    def view(self, seat: int | None) -> dict[str, Any]:
        """Everything is public except the order of the tourists deck and of the aside pile."""
        return {
            "game": self.NAME,
            "seat": seat,
            "now": self.now,
            "phase": self.phase,
            "turn": self.turn,
            "current": self.current,
            "step": self.step,
            "turn_over": self.turn_over,
            "deadlines": {
                "game": self.timers.get(GAME),
                "opening": self.timers.get(OPENING_T),
                "turn": self.timers.get(TURN),
            },
            "config": self.cfg.to_wire(),
            "cards": self.cfg.deck.wire,
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
            "company": {"dollars": self.company_dollars, "cards": [[c, self.on.get(c)] for c in self.company_cards]},
            "deck_count": len(self.deck),
            "aside_count": len(self.aside),
            "auctions": [self.auction_view(a) for a in self.auctions.values()],
            "result": self.result() if self.over else None,
        }

    def snapshot(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "rng": self.rng.state,
            "now": self.now,
            "deck": list(self.deck),
            "aside": list(self.aside),
            "on": sorted(self.on.items()),
            "hands": [list(h) for h in self.hands],
            "timers": self.timers.snapshot(),
            "auctions": [a.to_view() for a in self.auctions.values()],
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

    def legal_actions(self, seat: int) -> list[dict[str, Any]]:
        from .legal import legal_actions

        return legal_actions(self, seat)
