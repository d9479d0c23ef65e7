"""What happens to a lot in Parsimonia: an auction opened, bid on, closed (sold, unsold or cancelled), and a tourists
card won or drawn placed on a resource card. The engine (``engine.py``) decides when; this says what each does to
the state, and which events say so.
"""

from __future__ import annotations

from server.games.machines.auction import HIGHEST_WINS, OpenAuction, auction_value

from .deck import RESOURCE
from .phases import Step
from .state import ParsimoniaState

BOUGHT = "bought"  # deadline kind: ("bought", card) is when a buyer's choice of where it goes runs out
AUCTION = "auction"  # deadline kind: ("auction", id) is the auction's quiet time


class Trade(ParsimoniaState):
    # ------------------------------------------------------------------ auctions

    def _open_auction(self, seller: int | None, starter: int, card: int, start_price: int, rule: str) -> None:
        key = (AUCTION, self.next_auction)  # its quiet time, which it sets
        a = OpenAuction(self.next_auction, seller, starter, (card,), start_price, self.cfg.quiet_ms, rule, self._at,
                        key, self.timers, grace_ms=self.cfg.grace_ms)
        self.next_auction += 1
        self.auctions[a.id] = a
        card_type = self.lone_tourists_type(a)
        if card_type is not None:
            self.lone_lots[a.id] = card_type
        self._emit("auction_opened", auction=auction_value(self.auction_view(a)))

    def _close_auction(self, a: OpenAuction, winner: int | None, reason: str) -> None:
        """Settle ``a``. ``winner`` is the seller's pick; by quiet time (reason "quiet") the rule decides:
        every standing bid is eligible, so the highest wins; in a Company auction nobody but the starter ever
        bid in ("if no other player is bidding"), the starter takes the card for nothing if they may take it,
        whether or not they bid themselves."""
        free = False
        if reason == "quiet":
            high = a.high()
            winner = high[0] if high else None
            if a.rule == HIGHEST_WINS and not a.contested:
                winner = a.starter if self.may_take_lot(a.starter, a) else None
                free = True
        price = a.bids.get(winner, 0) if winner is not None and not free else 0
        self._remove_auction(a)
        card = a.lot[0]
        if a.seller is not None and self.lone_tourists_type(a) is not None:
            self.step = Step.MAIN  # the current turn's drawn card: the turn goes on, sold or not
        if winner is None:
            self._emit("auction_closed", auction=a.id, outcome="no_sale", winner=None, price=0, reason=reason)
            self._unsold(a, card)
            return
        self.dollars[winner] -= price
        if a.seller is None:
            self.company_dollars += price
        else:
            self.dollars[a.seller] += price
        self._emit("auction_closed", auction=a.id, outcome="sold", winner=winner, price=price, reason=reason)
        if self.cards[card].kind == RESOURCE:
            self.hands[winner].append(card)
        else:
            self._deliver_bought(winner, card)

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
            self.step = Step.MAIN
        elif len(cands) == 1 or self.turn_over:
            self._place(seat, self.least_profitable_candidate(seat, card), card, paid=False, reason="no_sale")
            self.step = Step.MAIN
        else:
            self.drawn = card
            self.step = Step.PLACE

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
        self.lone_lots.pop(a.id, None)
        self._auction_views.pop(a.id, None)
        self.timers.cancel(a.key)
        for bidder, amount in a.bids.items():
            self.promised[bidder] -= amount

    def _bid(self, a: OpenAuction, seat: int, amount: int) -> None:
        before = a.bids.get(seat, 0)
        a.bid(seat, amount, self._at)
        self.promised[seat] += amount - before
        self._auction_views.pop(a.id, None)

    def _withdraw(self, a: OpenAuction, seat: int) -> None:
        self.promised[seat] -= a.bids.get(seat, 0)
        a.withdraw(seat)
        self._auction_views.pop(a.id, None)

    # ------------------------------------------------------------------ placing tourists cards

    def _deliver_bought(self, buyer: int, card: int) -> None:
        """A tourists card won at auction: placed at once if its buyer has one place for it, else the buyer
        owes a choice (``place_bought``) by a deadline, after which it goes on the default place."""
        if self.room_for(buyer, self.cards[card].type) <= 1:
            self._place(buyer, self.best_free(buyer, self.cards[card].type), card, paid=True, reason="bought")
            return
        self.bought[card] = buyer
        deadline = self._at + self.cfg.quiet_ms
        self.timers.set((BOUGHT, card), deadline)
        self._emit("placement_owed", seat=buyer, card=card, deadline=deadline)

    def _place_bought(self, card: int, resource: int) -> None:
        buyer = self.bought.pop(card)
        self.timers.cancel((BOUGHT, card))
        self._place(buyer, resource, card, paid=True, reason="bought")

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
