"""The Parsimonia rules: what each command and each deadline does, and what follows from the state.

Read ``docs/rules/parsimonia.md`` for every reading of the seed this code makes. The shape, for the next game
to copy: a handler checks everything before it changes anything, then makes only the change the command names;
``HANDLERS`` and ``DEADLINES`` say which method carries out which command and which deadline; and ``_settle``,
run by the base after every command and every deadline, works out every consequence that follows from the
state (a lapsed bid, a full set, the opening's end, the next turn, the game's end) in one place. What each of
these does to a lot (an auction's life, a tourists card placed) is in ``trade.py``, the class this one extends.
"""

from __future__ import annotations

from typing import Any, Hashable

from protocol.values import LegalAction, Options

from server.games.machines.auction import HIGHEST_WINS, SELLER_PICKS, OpenAuction
from server.games.base import IllegalAction
from server.games.fields import as_int, int_field

from .commands import COMMANDS
from .config import OPTIONS, Config, check_option_values
from .legal import legal_actions
from .phases import Phase, Step
from .state import GAME_CLOCK, OPENING_CLOCK, TURN_CLOCK
from .trade import AUCTION, BOUGHT, Trade


class Parsimonia(Trade):
    NAME = "parsimonia"
    TITLE = "Parsimonia"
    MIN_SEATS = 2
    MAX_SEATS = 6
    COMMANDS = COMMANDS
    OPTIONS = OPTIONS
    CREATES = {"auction_opened": "auction"}

    @classmethod
    def check_options(cls, options: Any = None, time_scale: float = 1.0) -> Options:
        """The base's check, then the quiet time's floor: scaled down, it stays at least the smaller of
        ``quiet_floor_ms`` and ``quiet_ms`` as given (a fast clock for people still leaves them time to bid)."""
        out = super().check_options(options, time_scale)
        if out["quiet_floor_ms"]:
            given = as_int((options or {}).get("quiet_ms", OPTIONS["quiet_ms"].default), "quiet_ms")
            out["quiet_ms"] = max(int_field(out, "quiet_ms"), min(given, int_field(out, "quiet_floor_ms")))
        return out

    @classmethod
    def _check_option_values(cls, options: Options) -> None:
        check_option_values(options, cls.MIN_SEATS)

    @classmethod
    def from_options(cls, players: int, seed: int, options: Options, start_ms: int) -> "Parsimonia":
        return cls(players, seed, Config.from_options(options), start_ms)

    def legal_actions(self, seat: int) -> list[LegalAction]:
        return legal_actions(self, seat)

    # ------------------------------------------------------------------ checks

    def _check_seat(self, seat: int) -> None:
        if self.phase == Phase.OVER:
            raise IllegalAction("game_over", "the game has ended")
        if not self.active[seat]:
            raise IllegalAction("not_in_game", "you have left the game")

    def _require_turn(self, seat: int, *steps: Step) -> None:
        if self.phase != Phase.TURNS or self.current != seat:
            raise IllegalAction("not_your_turn", "it is not your turn")
        if self.turn_over:
            raise IllegalAction("turn_over", "your turn time is over")
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
        self._bid(a, seat, amount)
        self._emit("bid", auction=a.id, seat=seat, amount=amount, closes_at=a.closes_at)

    def _cmd_close(self, seat: int, auction: int, winner: int | None, price: int | None = None) -> None:
        a = self._auction(auction)
        if a.rule != SELLER_PICKS:
            raise IllegalAction("cannot_pick_winner", "a Company auction closes only by quiet time")
        if a.seller != seat:
            raise IllegalAction("not_seller", "only the seller may close this auction")
        if winner is not None and winner not in a.bids:
            raise IllegalAction("not_a_bidder", f"seat {winner} has no standing bid in this auction")
        if price is not None:  # the price the seller saw: a stale button is refused, never sells for another
            if winner is None:
                raise IllegalAction("price_without_winner", "a close with no sale names no price")
            if a.bids[winner] != price:
                raise IllegalAction("price_changed", f"seat {winner}'s bid is now {a.bids[winner]}, not {price}")
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

    def _cmd_place_bought(self, seat: int, card: int, resource: int) -> None:
        if self.bought.get(card) != seat:
            raise IllegalAction("not_bought", f"you have no bought tourists card {card} to place")
        if resource not in self.free_resources(seat, self.cards[card].type):
            raise IllegalAction("cannot_place", "place it on one of your free resource cards of its type")
        self._place_bought(card, resource)

    def _cmd_quit(self, seat: int) -> None:
        self.active[seat] = False
        self.ready.discard(seat)
        self.end_votes.discard(seat)
        for a in list(self.auctions.values()):
            if seat in (a.seller, a.starter):
                self._cancel_auction(a, "quit")
            else:
                self._withdraw(a, seat)
        cards = list(self.hands[seat])
        if self.drawn is not None and self.current == seat:
            cards.append(self.drawn)
            self.drawn = None
        for card in [c for c, buyer in self.bought.items() if buyer == seat]:
            del self.bought[card]
            self.timers.cancel((BOUGHT, card))
            cards.append(card)
        self.company_cards.extend(cards)
        self.hands[seat] = []
        returned, self.dollars[seat] = self.dollars[seat], 0
        self.company_dollars += returned
        self._emit("player_quit", seat=seat, dollars=returned, cards=cards)

    # ------------------------------------------------------------------ the opening

    def _cmd_ready(self, seat: int) -> None:
        if self.phase != Phase.OPENING:
            raise IllegalAction("not_opening", "the opening is over")
        if seat in self.ready:
            raise IllegalAction("already_ready", "you have already declared ready")
        self.ready.add(seat)
        self._emit("ready", seat=seat)

    # ------------------------------------------------------------------ starting auctions

    def _cmd_auction(self, seat: int, card: int, start_price: int) -> None:
        if self.phase != Phase.OPENING:
            self._require_turn(seat, Step.MAIN)
        if card not in self.hands[seat]:
            raise IllegalAction("not_your_card", f"you do not hold resource card {card}")
        self._check_start_price(start_price)
        self.hands[seat].remove(card)
        self._open_auction(seat, seat, card, start_price, SELLER_PICKS)

    def _cmd_auction_drawn(self, seat: int, start_price: int) -> None:
        self._require_turn(seat, Step.DECIDE)
        self._check_start_price(start_price)
        card, self.drawn = self.drawn, None
        assert card is not None
        self.step = Step.DRAWN_AUCTION
        self._open_auction(seat, seat, card, start_price, SELLER_PICKS)

    def _cmd_company_auction(self, seat: int, card: int, start_price: int) -> None:
        self._require_turn(seat, Step.MAIN)
        if card not in self.company_cards:
            raise IllegalAction("not_company_card", f"the Company does not hold card {card}")
        self._check_start_price(start_price)
        self.company_cards.remove(card)
        self._open_auction(None, seat, card, start_price, HIGHEST_WINS)

    # ------------------------------------------------------------------ one's own turn

    def _cmd_pair(self, seat: int, resource: int) -> None:
        self._require_turn(seat, Step.DECIDE)
        assert self.drawn is not None
        if resource not in self.free_resources(seat, self.cards[self.drawn].type):
            raise IllegalAction("cannot_pair", "pair the drawn card with one of your free resource cards of its type")
        card, self.drawn = self.drawn, None
        self.step = Step.MAIN
        self._place(seat, resource, card, paid=True, reason="paired")

    def _cmd_place(self, seat: int, resource: int) -> None:
        self._require_turn(seat, Step.PLACE)
        assert self.drawn is not None
        if resource not in self.placement_candidates(seat, self.drawn):
            raise IllegalAction("cannot_place", "place it on a free resource card of its type if you have one")
        card, self.drawn = self.drawn, None
        self.step = Step.MAIN
        self._place(seat, resource, card, paid=False, reason="no_sale")

    def _cmd_end_turn(self, seat: int) -> None:
        self._require_turn(seat, Step.MAIN)
        self._finish_turn("ended")

    # ------------------------------------------------------------------ deadlines

    def _game_clock(self, key: Hashable) -> None:
        self._end_game("clock")

    def _opening_clock(self, key: Hashable) -> None:
        self._end_opening("deadline")

    def _turn_clock(self, key: Hashable) -> None:
        self._finish_turn("timeout")

    def _quiet_time(self, key: tuple[str, int]) -> None:
        self._close_auction(self.auctions[key[1]], None, "quiet")

    def _choice_time(self, key: tuple[str, int]) -> None:
        card = key[1]
        self._place_bought(card, self.best_free(self.bought[card], self.cards[card].type))

    # ------------------------------------------------------------------ what follows from the state

    def _settle(self) -> None:
        """Everything that follows from the state, in one place, after every command and every deadline."""
        if self.phase == Phase.OVER:
            return
        if sum(self.active) <= 1:
            self._end_game("last_player")
            return
        current = self.current
        if self.phase == Phase.TURNS and not self.turn_over and current is not None and not self.active[current]:
            self._finish_turn("quit")
        # with two players or more in the game, an empty vote (or ready) set is not everyone's
        if self.end_votes and all(s in self.end_votes for s in range(self.n) if self.active[s]):
            self._end_game("agreement")
            return
        if self.bought:
            self._place_bought_without_choice()
        self._clear_full_sets()
        self._lapse_ineligible_bids()
        if self.phase == Phase.OPENING and self.ready and all(s in self.ready for s in range(self.n) if self.active[s]):
            self.timers.cancel(OPENING_CLOCK)
            self._end_opening("ready")
        if self.phase == Phase.OPENING_CLOSING and not self.auctions:
            self.phase = Phase.TURNS
            self._start_turn(self._next_active(-1))
        elif self.phase == Phase.TURNS and self.turn_over and not self.auctions:
            assert self.current is not None
            self._start_turn(self._next_active(self.current))

    def _place_bought_without_choice(self) -> None:
        """A bought card whose buyer has no choice left (no more free cards of its type than bought cards
        of that type to place) goes on the most profitable one at once."""
        for card, buyer in list(self.bought.items()):
            if self.room_for(buyer, self.cards[card].type) <= 0:
                self._place_bought(card, self.best_free(buyer, self.cards[card].type))

    def _clear_full_sets(self) -> None:
        """A full set: every resource card a player holds carries a tourists card, none is up for auction."""
        if not self.on:
            return  # nothing is covered (the whole opening): no set is full
        covered = self.on.__contains__
        selling: set[int] | None = None  # asked only of a seat whose held cards are all covered (rare)
        for seat, held in enumerate(self.hands):
            if held and all(map(covered, held)):
                if selling is None:
                    selling = self.selling_resources()
                if seat in selling:
                    continue
                cleared = [self.on.pop(r) for r in held]
                self.aside.extend(cleared)
                self._emit("tourists_cleared", seat=seat, cards=cleared)

    def _lapse_ineligible_bids(self) -> None:
        """A bid for a lone tourists card lapses once its bidder has no room left for the card."""
        for auction_id, card_type in self.lone_lots.items():
            a = self.auctions[auction_id]
            for bidder in [b for b in a.bids if self.room_for(b, card_type) <= 0]:
                amount = a.bids[bidder]
                self._withdraw(a, bidder)
                self._emit("bid_lapsed", auction=a.id, seat=bidder, amount=amount, min_bid=a.min_bid())

    # ------------------------------------------------------------------ the opening, turns, the end

    def _end_opening(self, reason: str) -> None:
        self.phase = Phase.OPENING_CLOSING
        self._emit("opening_ended", reason=reason, open_auctions=sorted(self.auctions))

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
        self.timers.set(TURN_CLOCK, deadline)
        self._emit("turn_started", seat=seat, turn=self.turn, deadline=deadline)
        if not self.deck and self.aside:
            self.deck, self.aside = self.aside, []
            self.rng.shuffle(self.deck)
            self._emit("deck_reshuffled", count=len(self.deck))
        if self.deck:
            self.drawn = self.deck.pop()
            self.step = Step.DECIDE
            self._emit("card_drawn", seat=seat, card=self.drawn)
        else:
            self.step = Step.MAIN
            self._emit("no_card_drawn", seat=seat)

    def _finish_turn(self, reason: str) -> None:
        """The current player can do nothing more; a card still undecided is placed by default."""
        seat = self.current
        assert seat is not None
        self.turn_over = True
        self.timers.cancel(TURN_CLOCK)
        if self.drawn is not None and self.step in (Step.DECIDE, Step.PLACE) and self.active[seat]:
            card, self.drawn = self.drawn, None
            self._forced_placement(seat, card)  # an undecided card counts as unsold
        self._emit("turn_ended", seat=seat, turn=self.turn, reason=reason)

    def _end_game(self, reason: str) -> None:
        """Bought cards go where their buyers would put them by default; open auctions are cancelled."""
        for card, buyer in list(self.bought.items()):
            self._place_bought(card, self.best_free(buyer, self.cards[card].type))
        for a in list(self.auctions.values()):
            self._cancel_auction(a, "game_over")
        if self.drawn is not None:
            self.aside.append(self.drawn)
            self.drawn = None
        self.phase = Phase.OVER
        self.step = None
        self.end_reason = reason
        self.ended_at = self._at
        for key in (GAME_CLOCK, OPENING_CLOCK, TURN_CLOCK):
            self.timers.cancel(key)
        self._emit("game_ended", reason=reason, dollars=list(self.dollars), winners=list(self._winners()))

    # ------------------------------------------------------------------ dispatch

    HANDLERS = {
        "bid": _cmd_bid,
        "close": _cmd_close,
        "give": _cmd_give,
        "vote_end": _cmd_vote_end,
        "place_bought": _cmd_place_bought,
        "quit": _cmd_quit,
        "ready": _cmd_ready,
        "auction": _cmd_auction,
        "auction_drawn": _cmd_auction_drawn,
        "company_auction": _cmd_company_auction,
        "pair": _cmd_pair,
        "place": _cmd_place,
        "end_turn": _cmd_end_turn,
    }
    DEADLINES = {
        GAME_CLOCK: _game_clock,
        OPENING_CLOCK: _opening_clock,
        TURN_CLOCK: _turn_clock,
        AUCTION: _quiet_time,
        BOUGHT: _choice_time,
    }
