"""The Kupcy rules: what each command and each deadline does, and what follows from the state.

Read ``docs/rules/kupcy.md`` for every reading of the seed this code makes. As in Parsimonia: a handler checks
everything before it changes anything; ``HANDLERS`` and ``DEADLINES`` dispatch; and ``_settle``, run after every
command and every deadline, works out every consequence that follows from the state (a complete sealed round is
revealed, a paid debt ends the charter, stowed ships end the stowing, a resolved turn starts the next one, the
last round ends the game) in one place.
"""

from __future__ import annotations

from typing import Hashable

from protocol.values import LegalAction, Options

from server.games.base import IllegalAction
from server.games.machines.sealed import SealedChoice

from .cards import CHARTER, GOODS
from .charters import SHIP, WAREHOUSE
from .commands import COMMANDS
from .config import OPTIONS, Config, check_option_values
from .defaults import SHIP_SIZE, WAREHOUSE_AT_START, default_load, default_offer, default_pay, default_split
from .legal import legal_actions
from .phases import Phase, Step
from .state import DECIDE, SPLIT, STOW, Debt, KupcyState, debt_value
from .trade import BID, Market, leaders


class Kupcy(KupcyState):
    NAME = "kupcy"
    TITLE = "Kupcy"
    MIN_SEATS = 3
    MAX_SEATS = 6
    COMMANDS = COMMANDS
    OPTIONS = OPTIONS

    @classmethod
    def _check_option_values(cls, options: Options) -> None:
        check_option_values(options)

    @classmethod
    def from_options(cls, players: int, seed: int, options: Options, start_ms: int) -> "Kupcy":
        return cls(players, seed, Config.from_options(options), start_ms)

    def legal_actions(self, seat: int) -> list[LegalAction]:
        return legal_actions(self, seat)

    # ------------------------------------------------------------------ checks

    def _check_seat(self, seat: int) -> None:
        if self.phase == Phase.OVER:
            raise IllegalAction("game_over", "the game has ended")

    def _require_turn(self, seat: int, step: Step) -> None:
        if self.current != seat or self.phase == Phase.SPLIT:
            raise IllegalAction("not_your_turn", "it is not your turn")
        if self.step != step:
            raise IllegalAction("wrong_step", f"that is not possible now (the turn waits for: {self.step})")

    # ------------------------------------------------------------------ commands

    def _cmd_split(self, seat: int, warehouse: list[int]) -> None:
        if self.phase != Phase.SPLIT:
            raise IllegalAction("not_splitting", "the opening split is over")
        self.split.check(seat)
        if len(set(warehouse)) != WAREHOUSE_AT_START or not set(warehouse) <= set(self.ships[seat]):
            raise IllegalAction("bad_split", f"name {WAREHOUSE_AT_START} different cards of your hand for the warehouse")
        self.split.choose(seat, sorted(warehouse))
        data, audience, redacted = self.split.chosen_event(seat)
        self._emit("split_chosen", audience, redacted, **data)

    def _cmd_offer(self, seat: int, card: int) -> None:
        market = self.market
        if market is None:
            raise IllegalAction("no_trade", "no trading operation is open")
        market.sealed.check(seat)
        if card not in self.offerable(seat, market.goods):
            raise IllegalAction("cannot_offer", "offer goods or money from your ship, or your merchant of the "
                                "goods' origin")
        market.sealed.choose(seat, card)
        data, audience, redacted = market.sealed.chosen_event(seat)
        self._emit("offer_made", audience, redacted, round=market.round, **data)

    def _cmd_keep(self, seat: int, where: str, out: int | None) -> None:
        self._require_turn(seat, Step.KEEP)
        if where == WAREHOUSE and out is not None:
            raise IllegalAction("no_swap", "a card kept in the warehouse moves nothing out of the ship")
        if where == SHIP and out not in self.ships[seat]:
            raise IllegalAction("not_in_ship", "name the ship card that goes to the warehouse to make room")
        self._keep(seat, where, out)

    def _cmd_pay(self, seat: int, card: int) -> None:
        self._require_turn(seat, Step.PAY)
        if card not in self.payable():
            raise IllegalAction("cannot_pay", "that card cannot pay this charter")
        self._pay(card)

    def _require_stowing(self, seat: int) -> None:
        if seat not in self.stowing:
            raise IllegalAction("not_stowing", "your ship needs no stowing now")

    def _cmd_load(self, seat: int, card: int) -> None:
        self._require_stowing(seat)
        if card not in self.warehouses[seat]:
            raise IllegalAction("not_in_warehouse", f"card {card} is not in your warehouse")
        self._load(seat, card)

    def _cmd_unload(self, seat: int, card: int) -> None:
        self._require_stowing(seat)
        if card not in self.ships[seat]:
            raise IllegalAction("not_in_ship", f"card {card} is not in your ship")
        self.ships[seat].remove(card)
        self.warehouses[seat].append(card)
        self._emit("unloaded", seat=seat, card=card)

    def _cmd_sell(self, seat: int, card: int) -> None:
        self._require_turn(seat, Step.SELL)
        if card not in self.sellable(seat):
            raise IllegalAction("not_your_goods", "sell a goods card from your ship or your warehouse")
        (self.ships[seat] if card in self.ships[seat] else self.warehouses[seat]).remove(card)
        self.timers.cancel(DECIDE)
        self._emit("sale", seat=seat, card=card)
        self._open_trade(seat, card, last_round=True)

    def _cmd_pass(self, seat: int) -> None:
        self._require_turn(seat, Step.SELL)
        self._pass(seat, "passed")

    # ------------------------------------------------------------------ deadlines

    def _split_time(self, key: Hashable) -> None:
        self.split.fill_defaults(lambda s: default_split(self.ships[s], self.cards))

    def _bid_time(self, key: Hashable) -> None:
        market = self.market
        assert market is not None
        market.sealed.fill_defaults(lambda s: default_offer(self.offerable(s, market.goods), self.cards))

    def _decide_time(self, key: Hashable) -> None:
        seat = self.current
        assert seat is not None
        if self.step == Step.KEEP:
            self._keep(seat, WAREHOUSE, None)
        elif self.step == Step.PAY:
            while self.debt is not None and not self._debt_paid():
                self._pay(default_pay(self.payable(), self.cards))
        elif self.step == Step.SELL:
            self._pass(seat, "timeout")

    def _stow_time(self, key: Hashable) -> None:
        for seat in sorted(self.stowing):
            while len(self.ships[seat]) < self.ship_target(seat):
                self._load(seat, default_load(self.warehouses[seat], self.cards))

    # ------------------------------------------------------------------ what follows from the state

    def _settle(self) -> None:
        """Everything that follows from the state, in one place, after every command and every deadline."""
        while self.phase != Phase.OVER and self._move_on():
            pass

    def _move_on(self) -> bool:
        """Work out one consequence of the state; False when the table waits for someone."""
        if self.phase == Phase.SPLIT:
            if self.split.complete:
                self._reveal_split()
                return True
            return False
        if self.step == Step.TRADE:
            assert self.market is not None
            if self.market.sealed.complete:
                self._reveal_offers(self.market)
                return True
            return False
        if self.step == Step.PAY:
            if self._debt_paid():
                self._end_debt()
                return True
            return False
        if self.step == Step.STOW:
            if self.stowing:
                return False
            self.timers.cancel(STOW)
            self.step = None
            return True
        if self.step in (Step.KEEP, Step.SELL):
            return False
        self._next_turn()
        return True

    # ------------------------------------------------------------------ the opening

    def _reveal_split(self) -> None:
        chosen = self.split.close(self._at)
        for seat, warehouse in chosen.items():
            for card in warehouse:
                self.ships[seat].remove(card)
            self.warehouses[seat] = list(warehouse)
        self._emit("split_revealed", warehouses=[list(chosen[s]) for s in range(self.n)],
                   defaulted=sorted(self.split.defaulted))
        self.phase = Phase.TURNS

    # ------------------------------------------------------------------ turns

    def _next_turn(self) -> None:
        """The current turn is resolved: the next player draws, or the last round begins or goes on."""
        after = self.first - 1 if self.current is None else self.current
        nxt = (after + 1) % self.n
        if self.phase == Phase.TURNS and not self.deck:
            self.phase = Phase.FINAL
            self.last_round = [(after + i) % self.n for i in range(1, self.n + 1)]
            self._emit("last_round", seats=list(self.last_round))
        if self.phase == Phase.FINAL:
            if not self.last_round:
                self._end_game()
                return
            self._start_sale(self.last_round.pop(0))
            return
        self._draw(nxt)

    def _draw(self, seat: int) -> None:
        self.turn += 1
        self.current = seat
        card = self.deck.pop()
        kind = self.cards[card].kind
        if kind in (GOODS, CHARTER):
            self._emit("card_drawn", seat=seat, turn=self.turn, card=card, deck_count=len(self.deck))
        else:  # money or a merchant: only its drawer sees it, unless it goes to the warehouse
            self._emit("card_drawn", frozenset({seat}), {"seat": seat, "turn": self.turn, "deck_count": len(self.deck)},
                       seat=seat, turn=self.turn, card=card, deck_count=len(self.deck))
        if kind == GOODS:
            self._open_trade(seat, card, last_round=False)
        elif kind == CHARTER:
            self._charter(seat, card)
        elif len(self.ships[seat]) < SHIP_SIZE:
            self._stow_card(seat, card, SHIP, None)
        else:
            self.drawn = card
            self.step = Step.KEEP
            self.timers.set(DECIDE, self._at + self.cfg.decide_ms)

    def _keep(self, seat: int, where: str, out: int | None) -> None:
        card, self.drawn = self.drawn, None
        assert card is not None
        self.timers.cancel(DECIDE)
        self.step = None
        self._stow_card(seat, card, where, out)

    def _stow_card(self, seat: int, card: int, where: str, out: int | None) -> None:
        if where == WAREHOUSE:
            self.warehouses[seat].append(card)
            self._emit("kept", seat=seat, where=where, card=card, out=None)
            return
        self.ships[seat].append(card)
        if out is not None:
            self.ships[seat].remove(out)
            self.warehouses[seat].append(out)
        self._emit("kept", frozenset({seat}), {"seat": seat, "where": where, "out": out},
                   seat=seat, where=where, card=card, out=out)

    # ------------------------------------------------------------------ charters

    def _charter(self, seat: int, card: int) -> None:
        name = self.cards[card].charter
        assert name is not None
        effect = self.cfg.effects[name]
        zone = self.ships[seat] if effect.zone == SHIP else self.warehouses[seat]
        if effect.chosen:
            due_cards = effect.how_many(len(zone)) if effect.take == "choice" else None
            due_worth = effect.worth_due(sum(self.cards[c].value for c in zone)) if effect.take == "worth" else None
            self.debt = Debt(seat, card, name, effect.zone, due_cards, due_worth)
            lost: list[int] = []
        else:
            lost = effect.taken(zone, self.cards, self.rng)
            for c in lost:
                zone.remove(c)
            self.out += lost
        self._emit("charter", seat=seat, card=card, charter=name, zone=effect.zone, lost=lost,
                   owed=debt_value(self.debt.to_view()) if self.debt is not None else None)
        if self.debt is not None and not self._debt_paid():
            self.step = Step.PAY
            self.timers.set(DECIDE, self._at + self.cfg.decide_ms)
            return
        self.out.append(card)
        self.debt = None
        self._begin_stow()

    def _debt_paid(self) -> bool:
        debt = self.debt
        assert debt is not None
        due = debt.cards if debt.cards is not None else debt.worth
        return (due or 0) <= 0 or not self.payable()

    def _pay(self, card: int) -> None:
        debt = self.debt
        assert debt is not None
        zone = self.ships[debt.seat] if debt.zone == SHIP else self.warehouses[debt.seat]
        zone.remove(card)
        self.out.append(card)
        if debt.cards is not None:
            debt.cards -= 1
        if debt.worth is not None:
            debt.worth = max(0, debt.worth - self.cards[card].value)
        self._emit("paid", seat=debt.seat, card=card, cards_due=debt.cards, worth_due=debt.worth)

    def _end_debt(self) -> None:
        debt = self.debt
        assert debt is not None
        self.timers.cancel(DECIDE)
        self.out.append(debt.card)
        self.debt = None
        self.step = None
        self._begin_stow()

    # ------------------------------------------------------------------ trading operations

    def _open_trade(self, seller: int, goods: int, last_round: bool) -> None:
        bidders = frozenset(s for s in range(self.n) if s != seller and self.offerable(s, goods))
        deadline = self._at + self.cfg.bid_ms
        self.market = Market(seller, goods, last_round, SealedChoice(BID, bidders, self.timers))
        self._emit("trade_opened", seller=seller, goods=goods, seats=sorted(bidders), deadline=deadline)
        if not bidders:
            self._close_trade(self.market, None)
            return
        self.step = Step.TRADE
        self.timers.set(BID, deadline)

    def _reveal_offers(self, market: Market) -> None:
        offers = market.sealed.close(self._at)
        for seat, card in offers.items():
            self.ships[seat].remove(card)
            market.offered.append([seat, card, market.round])
        best = leaders(offers, self.cards[market.goods], self.cards)
        self._emit("offers_revealed", round=market.round, offers=[[s, c] for s, c in offers.items()],
                   defaulted=sorted(market.sealed.defaulted), leaders=best)
        if len(best) == 1:
            self._close_trade(market, best[0])
            return
        still = [s for s in best if self.offerable(s, market.goods)]
        if len(still) <= 1:  # nobody, or one tied player, can offer again
            self._close_trade(market, still[0] if still else None)
            return
        market.round += 1
        deadline = self._at + self.cfg.bid_ms
        self.timers.set(BID, deadline)
        market.sealed = SealedChoice(BID, frozenset(still), self.timers)
        self._emit("rebid", round=market.round, seats=still, dropped=[s for s in best if s not in still],
                   deadline=deadline)

    def _close_trade(self, market: Market, winner: int | None) -> None:
        taker = market.seller if winner is None else winner
        self.warehouses[taker].append(market.goods)
        paid: list[int] = []
        jokers: list[int] = []
        for _, card, _ in market.offered:
            (paid if self.cards[card].priced else jokers).append(card)
        self.warehouses[market.seller] += paid
        if jokers:
            self.deck += jokers
            self.rng.shuffle(self.deck)
        self._emit("trade_closed", seller=market.seller, goods=market.goods, winner=winner, to_seller=paid,
                   to_deck=jokers, deck_count=len(self.deck))
        self.market = None
        self.step = None
        self._begin_stow()

    # ------------------------------------------------------------------ stowing

    def _begin_stow(self) -> None:
        """Every ship not at its size is stowed; where the warehouse holds just what is missing, at once."""
        short = [s for s in range(self.n) if len(self.ships[s]) != self.ship_target(s)]
        for seat in short:
            if len(self.ships[seat]) + len(self.warehouses[seat]) == self.ship_target(seat):
                for card in list(self.warehouses[seat]):
                    self._load(seat, card)
        self.stowing = {s for s in short if len(self.ships[s]) != self.ship_target(s)}
        if self.stowing:
            self.step = Step.STOW
            deadline = self._at + self.cfg.stow_ms
            self.timers.set(STOW, deadline)
            self._emit("stow_owed", seats=sorted(self.stowing), deadline=deadline)

    def _load(self, seat: int, card: int) -> None:
        self.warehouses[seat].remove(card)
        self.ships[seat].append(card)
        self._emit("loaded", seat=seat, card=card)
        if len(self.ships[seat]) == self.ship_target(seat):
            self.stowing.discard(seat)

    # ------------------------------------------------------------------ the last round, the end

    def _start_sale(self, seat: int) -> None:
        self.current = seat
        if not self.sellable(seat):
            self._pass(seat, "no_goods")
            return
        self.step = Step.SELL
        deadline = self._at + self.cfg.decide_ms
        self.timers.set(DECIDE, deadline)
        self._emit("sale_owed", seat=seat, deadline=deadline)

    def _pass(self, seat: int, reason: str) -> None:
        self.timers.cancel(DECIDE)
        self.step = None
        self._emit("no_sale", seat=seat, reason=reason)

    def _end_game(self) -> None:
        self.phase = Phase.OVER
        self.step = None
        self.current = None
        self.end_reason = "last_round"
        outcome = self.outcome()
        assert outcome is not None
        self._emit("game_ended", reason=self.end_reason, scores=list(outcome.scores), winners=list(outcome.winners))

    # ------------------------------------------------------------------ dispatch

    HANDLERS = {
        "split": _cmd_split,
        "offer": _cmd_offer,
        "keep": _cmd_keep,
        "pay": _cmd_pay,
        "load": _cmd_load,
        "unload": _cmd_unload,
        "sell": _cmd_sell,
        "pass": _cmd_pass,
    }
    DEADLINES = {
        SPLIT: _split_time,
        BID: _bid_time,
        DECIDE: _decide_time,
        STOW: _stow_time,
    }
