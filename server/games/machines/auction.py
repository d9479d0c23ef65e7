"""The open-outcry auction: a game-independent machine that engines embed.

It knows bids, the current highest bid, quiet time and the two ways an auction can be closed:
``seller_picks`` (the seller chooses any bidder, or no sale; quiet time gives it to the highest bidder)
and ``highest_wins`` (only quiet time closes it). Anyone but the seller may bid (in a house auction, whose seller
is None, the seat that opened it too). What the lot is, who else may bid and what a sale moves are the game's
business: the machine only checks the bid itself.

Quiet time is one of the game's timers (``key`` in its ``Timers``): the auction sets it when it opens and at
each bid, and ``closes_at`` reads it back, so a pause that moves the timers moves what its view shows. The game
fires it (and cancels it when the auction closes otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Hashable, Iterable, NotRequired, TypedDict, cast

from protocol.values import Value

from server.games.base import IllegalAction
from server.games.machines.timers import Timers

SELLER_PICKS = "seller_picks"
HIGHEST_WINS = "highest_wins"


class AuctionView(TypedDict):
    """An open auction as the players see it; ``bids`` are ``[seat, amount]`` pairs, by seat."""

    id: int
    seller: int | None
    starter: int
    lot: list[int]
    rule: str
    start_price: int
    bids: list[list[int]]
    high_bidder: int | None
    high: int | None
    min_bid: int
    opened_at: int
    closes_at: int | None
    lot_kind: NotRequired[str]  # the game's kind of card the lot starts with, when the game adds it


def auction_value(view: AuctionView) -> Mapping[str, Value]:
    """``view`` as a ``Value``: every field of ``AuctionView`` is one (mypy sees a TypedDict as a map of object)."""
    return cast("Mapping[str, Value]", view)


@dataclass
class OpenAuction:
    id: int
    seller: int | None  # a seat, or None when the house (the Company) sells
    starter: int  # the seat that opened it
    lot: tuple[int, ...]
    start_price: int
    quiet_ms: int
    rule: str
    opened_at: int  # when it opened (history: a pause does not move it)
    key: Hashable  # its quiet time's timer key in the game
    timers: Timers = field(repr=False, compare=False)  # the game's, which hold the quiet time
    bids: dict[int, int] = field(default_factory=dict)  # bidder -> their highest bid still standing
    contested: bool = False  # whether anyone but the starter ever bid (a withdrawn bid counts)
    _high: tuple[int, int] | None = field(default=None, repr=False, compare=False)  # kept by bid and withdraw
    grace_ms: int = 0  # quiet time fires this long after ``closes_at``: a bid still on its way then counts

    def __post_init__(self) -> None:
        self._high = self._highest()
        self.timers.set(self.key, self.opened_at + self.quiet_ms + self.grace_ms)

    def _highest(self) -> tuple[int, int] | None:
        if not self.bids:
            return None
        bidder = max(self.bids, key=self.bids.__getitem__)
        return bidder, self.bids[bidder]

    @property
    def closes_at(self) -> int | None:
        """When quiet time closes it (``quiet_ms`` after the last bid or the opening, and any pause since), as
        players are told: its timer fires ``grace_ms`` later. None once its timer is gone."""
        fires = self.timers.get(self.key)
        return None if fires is None else fires - self.grace_ms

    def high(self) -> tuple[int, int] | None:
        """``(bidder, amount)`` of the highest standing bid."""
        return self._high

    def min_bid(self) -> int:
        high = self._high
        return (high[1] if high is not None and high[1] > self.start_price else self.start_price) + 1

    def check_bid(self, seat: int, amount: int) -> None:
        if seat == self.seller:
            raise IllegalAction("own_auction", "you cannot bid in your own auction")
        if amount < self.min_bid():
            raise IllegalAction("bid_too_low", f"a bid must be at least {self.min_bid()}")

    def bid(self, seat: int, amount: int, now_ms: int) -> None:
        self.check_bid(seat, amount)
        self.bids[seat] = amount
        self._high = (seat, amount)  # a bid always beats the highest one
        self.contested = self.contested or seat != self.starter
        self.timers.set(self.key, now_ms + self.quiet_ms + self.grace_ms)

    def withdraw(self, seat: int) -> None:
        """Remove the bid of ``seat`` (a player who left, a bid that lapsed); the next highest bid stands."""
        self.bids.pop(seat, None)
        if self._high is not None and self._high[0] == seat:
            self._high = self._highest()

    def to_view(self) -> AuctionView:
        high = self.high()
        return {
            "id": self.id,
            "seller": self.seller,
            "starter": self.starter,
            "lot": list(self.lot),
            "rule": self.rule,
            "start_price": self.start_price,
            "bids": [[s, a] for s, a in sorted(self.bids.items())],
            "high_bidder": high[0] if high else None,
            "high": high[1] if high else None,
            "min_bid": self.min_bid(),
            "opened_at": self.opened_at,
            "closes_at": self.closes_at,
        }


def committed(auctions: Iterable[OpenAuction], seat: int) -> int:
    """Dollars ``seat`` has promised: the sum of its highest bid in each open auction."""
    return sum(a.bids.get(seat, 0) for a in auctions)
