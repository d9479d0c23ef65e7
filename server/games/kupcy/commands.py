"""The Kupcy command catalogue: every command a seat may send, with its fields' types and ranges."""

from protocol.schema import Enum, Int, List, Nullable, Record

_CARD = Int(0, 999)

COMMANDS: dict[str, Record] = {
    "split": Record({"warehouse": List(_CARD, 7)}),  # the opening: the 2 cards dealt that go to the warehouse
    "offer": Record({"card": _CARD}),  # a trading operation: a sealed price from one's ship
    "keep": Record({"where": Enum(("ship", "warehouse")), "out": Nullable(_CARD)}),  # the drawn money or merchant
    "pay": Record({"card": _CARD}),  # one card a charter asks for, of one's choice
    "load": Record({"card": _CARD}),  # stowing: a warehouse card into the ship
    "unload": Record({"card": _CARD}),  # stowing: a ship card to the warehouse
    "sell": Record({"card": _CARD}),  # the last round: put a goods card of one's own on the market
    "pass": Record({}),  # the last round: no sale
}
