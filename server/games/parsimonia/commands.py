"""The Parsimonia command catalogue: every command a seat may send, with its fields' types and ranges."""

from protocol.schema import Bool, Int, Nullable, Record

_ID = Int(0, 2**31 - 1)
_SEAT = Int(0, 63)
_DOLLARS = Int(0, 1_000_000_000)

COMMANDS: dict[str, Record] = {
    # at any time
    "bid": Record({"auction": _ID, "amount": Int(1, 1_000_000_000)}),
    # `price`: the winner's bid as the seller saw it; refused (`price_changed`) when that bid is not it now
    "close": Record({"auction": _ID, "winner": Nullable(_SEAT)}, {"price": _DOLLARS}),
    "give": Record({"to": _SEAT, "amount": Int(1, 1_000_000_000)}),
    "vote_end": Record({"agree": Bool()}),
    "place_bought": Record({"card": _ID, "resource": _ID}),  # the buyer of a tourists card, while it is owed
    "quit": Record({}),
    # the opening
    "ready": Record({}),
    # the opening, or one's own turn after the drawn card is settled
    "auction": Record({"card": _ID, "start_price": _DOLLARS}),
    # one's own turn
    "pair": Record({"resource": _ID}),
    "auction_drawn": Record({"start_price": _DOLLARS}),
    "place": Record({"resource": _ID}),
    "company_auction": Record({"card": _ID, "start_price": _DOLLARS}),
    "end_turn": Record({}),
}
