"""What the server's decoding of one client message costs: the typed decoder it uses
(``protocol.messages.decode_client``: msgspec's structs, the catalogue's bounds checked in one C pass) against
the map path it replaced (``protocol.codec.decode``, ``request_id`` and ``parse_client``), message by message.

    .venv/bin/python bench/wire_decode.py [--messages 20000] [--repeat 5]

It prints CPU microseconds per message, the best of ``--repeat`` runs, for the messages the storm's bots send
(a bid, a view, a ping), a hello, a join, a create with options and two refusals (a bad field, a non-finite
float in a command): a refusal takes the map path on purpose, so its words are that path's. The game's own
parse of a command comes after both and is not counted.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.codec_typed import cost_us  # noqa: E402  (best CPU time per message of a few runs)
from bench.stats import run_script  # noqa: E402
from protocol.codec import Limits, decode, encode  # noqa: E402
from protocol.messages import decode_client, parse_client, request_id  # noqa: E402

BID = {"type": "act", "id": 123456, "table": "t417", "command": {"type": "bid", "auction": 3, "amount": 57}}
MESSAGES: dict[str, Any] = {
    "bid": BID,
    "view": {"type": "view", "id": 12, "table": "t417"},
    "ping": {"type": "ping", "id": 12},
    "hello": {"type": "hello", "id": 1, "version": 2, "client": "storm-bot/1.0"},
    "join": {"type": "join", "id": 2, "table": "t417", "name": "bot-417-3", "views": True},
    "create": {"type": "create", "id": 3, "game": "parsimonia", "seats": 4, "time_scale": 2.0,
               "options": {"rounds": 3, "start_money": 100, "deck": {"cards": [1, 2, 3, 4, 5, 6]}}},
    "bid: bad field": {**BID, "table": "t0417"},
    "bid: nan": {**BID, "command": {"type": "bid", "auction": 3, "amount": math.nan}},
}
LIMITS = Limits()


def before(frame: bytes) -> object:
    raw = decode(frame, LIMITS)
    request_id(raw)
    return parse_client(raw)


def now(frame: bytes) -> object:
    return decode_client(frame, LIMITS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    if args.messages < 1 or args.repeat < 1:
        parser.error("--messages and --repeat must be at least 1")
    print(f"CPU microseconds per message, best of {args.repeat} runs of {args.messages}")
    print(f"{'message':>15} {'maps':>7} {'typed':>7} {'ratio':>6}")
    for name, message in MESSAGES.items():
        frame = encode(message)
        old, new = (cost_us(check, frame, args.messages, args.repeat) for check in (before, now))
        print(f"{name:>15} {old:>7.2f} {new:>7.2f} {old / new:>5.1f}x")
    return 0


if __name__ == "__main__":
    run_script(main, "wire_decode")
