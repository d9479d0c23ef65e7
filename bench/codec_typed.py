"""A spike for the typed catalogue: what decoding and checking a client's message costs with today's codec and
schema, against msgspec's typed msgpack decoder, on the message the storm's bots send most.

    .venv/bin/python bench/codec_typed.py [--messages 20000] [--repeat 5]

Today: ``protocol.codec.decode`` (one unpack with the size limits, then a walk for depth, key types and finite
floats), ``protocol.messages.parse_client`` (the envelope against the catalogue) and the game's ``parse`` of the
command (its own catalogue). msgspec: one ``Decoder`` of a tagged union of ``Struct``s (the client messages, the
``act``'s command a tagged union of Parsimonia's commands), each field with its type and range, checked in the
same C pass that decodes. Only what the storm sends is declared here (``act`` with Parsimonia's commands, ``ping``
and ``view``): enough to price the hot path, not a catalogue. It prints CPU microseconds per message for a good bid
and for two refusals (a field out of range, an unknown command), the best of ``--repeat`` runs, and what each
refusal says, so a port can be judged on keeping every refusal code as well as on speed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Annotated, Any, Union

import msgspec

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.stats import run_script  # noqa: E402
from protocol.codec import decode, encode  # noqa: E402
from protocol.errors import ProtocolError  # noqa: E402
from protocol.messages import parse_client  # noqa: E402
from protocol.schema import SchemaError  # noqa: E402
from server.games.parsimonia import Parsimonia  # noqa: E402

BID = {"type": "act", "id": 123456, "table": "t417", "command": {"type": "bid", "auction": 3, "amount": 57}}
OUT_OF_RANGE = {**BID, "command": {"type": "bid", "auction": 3, "amount": 0}}
UNKNOWN = {**BID, "command": {"type": "fly", "auction": 3}}

Id = Annotated[int, msgspec.Meta(ge=0, le=2**31 - 1)]
Table = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
Money = Annotated[int, msgspec.Meta(ge=1, le=1_000_000_000)]
Dollars = Annotated[int, msgspec.Meta(ge=0, le=1_000_000_000)]
SeatNo = Annotated[int, msgspec.Meta(ge=0, le=63)]


class Command(msgspec.Struct, tag_field="type", forbid_unknown_fields=True):
    pass


class Bid(Command, tag="bid"):
    auction: Id
    amount: Money


class Close(Command, tag="close"):
    auction: Id
    winner: SeatNo | None


class Give(Command, tag="give"):
    to: SeatNo
    amount: Money


class AuctionCard(Command, tag="auction"):
    card: Id
    start_price: Dollars


class EndTurn(Command, tag="end_turn"):
    pass


class Message(msgspec.Struct, tag_field="type", forbid_unknown_fields=True):
    pass


class Act(Message, tag="act"):
    table: Table
    command: Union[Bid, Close, Give, AuctionCard, EndTurn]
    id: Id | None = None
    key: Annotated[str, msgspec.Meta(min_length=1, max_length=64)] | None = None


class View(Message, tag="view"):
    table: Table
    id: Id | None = None


class Ping(Message, tag="ping"):
    id: Id | None = None


TYPED = msgspec.msgpack.Decoder(Union[Act, View, Ping])
PARSIMONIA = Parsimonia


def today(frame: bytes) -> Any:
    msg = parse_client(decode(frame))
    return PARSIMONIA.parse(msg["command"])


def typed(frame: bytes) -> Any:
    return TYPED.decode(frame)


def refusal(check: Callable[[bytes], Any], frame: bytes) -> str:
    try:
        check(frame)
    except (ProtocolError, SchemaError) as exc:
        return f"{exc.code}: {getattr(exc, 'message', exc)}"
    except msgspec.ValidationError as exc:
        return f"ValidationError: {exc}"
    return "accepted"


def cost_us(check: Callable[[bytes], Any], frame: bytes, messages: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        for _ in range(messages):
            try:
                check(frame)
            except (ProtocolError, SchemaError, msgspec.ValidationError):
                pass
        best = min(best, time.process_time() - started)
    return best / messages * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    if args.messages < 1 or args.repeat < 1:
        parser.error("--messages and --repeat must be at least 1")
    print(f"CPU microseconds per message, best of {args.repeat} runs of {args.messages}")
    print(f"{'message':>14} {'today':>8} {'msgspec':>8} {'ratio':>6}")
    for name, message in (("bid", BID), ("out of range", OUT_OF_RANGE), ("unknown cmd", UNKNOWN)):
        frame = encode(message)
        ours, theirs = cost_us(today, frame, args.messages, args.repeat), cost_us(typed, frame, args.messages,
                                                                                   args.repeat)
        print(f"{name:>14} {ours:>8.2f} {theirs:>8.2f} {ours / theirs:>5.1f}x")
        if message is not BID:
            print(f"{'':>14} today:   {refusal(today, frame)}")
            print(f"{'':>14} msgspec: {refusal(typed, frame)}")
    return 0


if __name__ == "__main__":
    run_script(main, "codec_typed")
