"""The Gift of Tulips command catalogue: every command a seat may send, with its fields' types and ranges."""

from protocol.schema import Bool, Int, Record

_ID = Int(0, 2**31 - 1)
_SEAT = Int(0, 63)

COMMANDS: dict[str, Record] = {
    "choose": Record({"bouquet": _ID}),  # set-up: this dealt card to the bouquet, the other to the Secret Festival
    "keep": Record({}),  # the drawn card to one's own bouquet
    "give": Record({"to": _SEAT}),  # the drawn card to another player's bouquet
    "add": Record({"secret": Bool()}),  # the drawn card to the festival (face up) or the Secret Festival
}
