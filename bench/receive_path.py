"""What a client's frame costs on its way in: wsproto's server connection against our frame reader on the same
bytes, then our codec's decode and checks of the message.

    .venv/bin/python bench/receive_path.py [--frames 20000] [--per-read 1,8] [--repeat 5]

The frames are what the storm's bots send most: a masked binary frame holding an ``act`` with a bid (about 70
bytes). ``--per-read`` is how many frames each read from the socket brings (1: a bot's bid alone; more: a busy
connection's backlog). It prints the CPU time per frame of each reader (the best of ``--repeat`` runs) and
their ratio, measured in the same run, and the CPU time of ``protocol.codec.decode`` per message.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable

from wsproto.connection import Connection, ConnectionType

from protocol.codec import decode, encode
from server.transport.wsreader import FrameReader, unmask

BID = {"type": "act", "id": 123456, "table": "t417",
       "command": {"type": "bid", "auction": 3, "amount": 57}}


def client_frame(payload: bytes) -> bytes:
    key = os.urandom(4)
    return bytes((0x82, 0x80 | len(payload))) + key + unmask(key, payload)


def with_wsproto(reads: list[bytes]) -> int:
    ws, messages = Connection(ConnectionType.SERVER), 0
    for data in reads:
        ws.receive_data(data)
        messages += sum(1 for _ in ws.events())
    return messages


def with_ours(reads: list[bytes]) -> int:
    reader = FrameReader(65536)
    return sum(len(reader.feed(data)) for data in reads)


def cost_us(read: Callable[[list[bytes]], int], reads: list[bytes], frames: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        assert read(reads) == frames
        best = min(best, time.process_time() - started)
    return best / frames * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=20_000)
    parser.add_argument("--per-read", default="1,8")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    try:
        per_reads = [int(n) for n in args.per_read.split(",")]
    except ValueError:
        parser.error(f"--per-read takes whole numbers separated by commas, not {args.per_read!r}")
    if args.frames < 1 or args.repeat < 1 or min(per_reads) < 1:
        parser.error("--frames, --repeat and every --per-read must be at least 1")
    payload = encode(BID)
    print(f"{args.frames} frames of {len(payload) + 6} bytes; CPU microseconds per frame, best of {args.repeat}")
    print(f"{'frames per read':>16} {'wsproto':>9} {'ours':>9} {'ratio':>7}")
    for per_read in per_reads:
        frames = args.frames - args.frames % per_read
        wire = [client_frame(payload) for _ in range(frames)]
        reads = [b"".join(wire[i:i + per_read]) for i in range(0, frames, per_read)]
        theirs = cost_us(with_wsproto, reads, frames, args.repeat)
        mine = cost_us(with_ours, reads, frames, args.repeat)
        print(f"{per_read:>16} {theirs:>9.2f} {mine:>9.2f} {theirs / mine:>6.1f}x")
    messages = [payload] * args.frames
    decoding = cost_us(lambda frames: sum(1 for m in frames if decode(m)), messages, args.frames, args.repeat)
    print(f"decode and check one message: {decoding:.2f} us")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
