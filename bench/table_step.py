"""The table step, alone: what one accepted bid costs a 6-seat Parsimonia match, with views on and off.

    .venv/bin/python bench/table_step.py [--seats 6] [--bids 20000] [--json]

One process, no sockets, no trio: a ``Match`` in its opening, driven by its ``Session``, every seat joined by a subscriber that only
counts bytes, every seat auctioning two cards, bids sent round the table. A step is one table step
with a bid: the engine's ``apply``, the event frame, and with views on every seat's view frame (public part
built and encoded once, per-seat private part and legal templates). Both variants run in the same process,
so their ratio holds on any machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from server.games import discover  # noqa: E402
from server.core.match import Match  # noqa: E402
from server.core.session import Session  # noqa: E402

OPTIONS = {"opening_ms": 3_600_000, "game_ms": 7_200_000, "quiet_ms": 3_600_000}


class Counter:
    """A subscriber that keeps nothing but the count of frames and bytes."""

    def __init__(self) -> None:
        self.frames = 0
        self.bytes = 0

    def send(self, frame: bytes) -> None:
        self.frames += 1
        self.bytes += len(frame)


def step(session: Session, now: int, kind: str, sub: Counter, msg: dict) -> None:
    """A table's step with one request, as ``server.runtime.table`` takes it: the deadlines due, the request, the views."""
    session.tick(now)
    session.handle(kind, sub, msg, now)
    session.flush_views(now)


def setup(seats: int, views: bool) -> tuple[Session, list[Counter], list[tuple[int, int]]]:
    match = Session(Match("t1", "parsimonia", seats, seed=1, options=OPTIONS))
    subs = [Counter() for _ in range(seats)]
    for i, sub in enumerate(subs):
        step(match, 0, "join", sub, {"table": "t1", "name": f"s{i}", "views": views})
    auctions = []
    for seat in range(seats):
        for card in match.match.engine.hands[seat][:2]:
            step(match, 1, "act", subs[seat], {"table": "t1", "command": {"type": "auction", "card": card,
                                                                             "start_price": 0}})
            auctions.append((max(match.match.engine.auctions), seat))
    match.take_frames()
    return match, subs, auctions


def run(seats: int, bids: int, views: bool) -> dict:
    match, subs, auctions = setup(seats, views)
    for sub in subs:
        sub.frames = sub.bytes = 0
    amount = {a: 0 for a, _ in auctions}
    now = 2
    start = time.perf_counter()
    for k in range(bids):
        auction, seller = auctions[k % len(auctions)]
        bidder = (seller + 1 + (k // len(auctions)) % (seats - 1)) % seats
        amount[auction] += 1
        if amount[auction] > 30:  # keep every open bid within its bidder's money: close and reopen
            amount[auction] = 1
            step(match, now, "act", subs[seller], {"table": "t1", "command": {
                "type": "close", "auction": auction, "winner": None}})
            card = match.match.engine.hands[seller][-1]
            step(match, now, "act", subs[seller], {"table": "t1", "command": {
                "type": "auction", "card": card, "start_price": 0}})
            new = max(match.match.engine.auctions)
            auctions[k % len(auctions)] = (new, seller)
            amount[new] = 1
            auction = new
        step(match, now, "act", subs[bidder], {"table": "t1", "command": {
            "type": "bid", "auction": auction, "amount": amount[auction]}})
        for sub, frame in match.take_frames():
            sub.send(frame)
        match.match.take_records()
        now += 1
    wall = time.perf_counter() - start
    assert match.match.rejected == 0, f"{match.match.rejected} bids refused: the benchmark is wrong"
    return {"views": views, "bids": bids, "us_per_step": round(wall / bids * 1e6, 1),
            "bytes_per_step": round(sum(s.bytes for s in subs) / bids),
            "frames_per_step": round(sum(s.frames for s in subs) / bids, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seats", type=int, default=6, help="seats at the table (default 6)")
    parser.add_argument("--bids", type=int, default=20_000, help="bids per variant (default 20000)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    discover()
    off = run(args.seats, args.bids, views=False)
    on = run(args.seats, args.bids, views=True)
    out = {"seats": args.seats, "views_off": off, "views_on": on,
           "ratio_on_off": round(on["us_per_step"] / off["us_per_step"], 2),
           "machine": f"{platform.machine()} {platform.python_implementation()} {platform.python_version()}"}
    if args.json:
        print(json.dumps(out))
        return
    for row in (off, on):
        print(f"views {'on ' if row['views'] else 'off'}: {row['us_per_step']:7.1f} us a step, "
              f"{row['bytes_per_step']:6d} bytes and {row['frames_per_step']} frames sent per bid")
    print(f"views on / off: {out['ratio_on_off']}x  ({args.seats} seats, {out['machine']})")


if __name__ == "__main__":
    main()
