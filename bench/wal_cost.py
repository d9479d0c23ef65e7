"""What one shared write-ahead log costs per record: SQLite in WAL mode against a segment log of our own.

    .venv/bin/python bench/wal_cost.py [--dir PATH] [--tables 1000] [--per-round 20,1000] [--records 4000]

Each round appends a 200-byte record for ``--per-round`` of ``--tables`` tables (the next ones in turn), then
commits the round, in one of two backends behind the same small interface (``append``, ``commit``,
``recover``):

* ``sqlite``: one database in WAL mode, ``synchronous=FULL``, one transaction per round (an ``INSERT`` per
  record, the commit fsyncs the WAL);
* ``segment``: one file of CRC-framed records ``<u32 length><u32 crc><u16 id length><id><payload>``, one
  ``write`` and one ``fdatasync`` per round.

It prints this process's CPU time (user + system) per record, the wall time per round, and the time to read
every table's records back (recovery). The directory should be on the filesystem the server's ``--data`` would
use (default: a temporary one under ``/tmp``).
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import struct
import tempfile
import time
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench.stats import positive_int, positive_ints, run_script  # noqa: E402

RECORD = b"x" * 200
HEAD = struct.Struct("<IIH")


class SqliteLog:
    def __init__(self, path: str) -> None:
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute("CREATE TABLE IF NOT EXISTS records (n INTEGER PRIMARY KEY, tbl TEXT, body BLOB)")
        self.round: list[tuple[str, bytes]] = []

    def append(self, table: str, record: bytes) -> None:
        self.round.append((table, record))

    def commit(self) -> None:
        self.db.execute("BEGIN")
        self.db.executemany("INSERT INTO records (tbl, body) VALUES (?, ?)", self.round)
        self.db.execute("COMMIT")
        self.round = []

    def recover(self) -> dict[str, list[bytes]]:
        out: dict[str, list[bytes]] = {}
        for table, body in self.db.execute("SELECT tbl, body FROM records ORDER BY n"):
            out.setdefault(table, []).append(body)
        return out

    def close(self) -> None:
        self.db.close()


class SegmentLog:
    def __init__(self, path: str) -> None:
        self.path = path
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self.round: list[bytes] = []

    def append(self, table: str, record: bytes) -> None:
        name = table.encode()
        body = name + record
        self.round.append(HEAD.pack(len(body), zlib.crc32(body), len(name)) + body)

    def commit(self) -> None:
        os.write(self.fd, b"".join(self.round))
        os.fdatasync(self.fd)
        self.round = []

    def recover(self) -> dict[str, list[bytes]]:
        with open(self.path, "rb") as f:
            data = f.read()
        out: dict[str, list[bytes]] = {}
        pos = 0
        while pos + HEAD.size <= len(data):
            length, crc, name_len = HEAD.unpack_from(data, pos)
            start, end = pos + HEAD.size, pos + HEAD.size + length
            if end > len(data) or zlib.crc32(data[start:end]) != crc:
                break
            out.setdefault(data[start:start + name_len].decode(), []).append(data[start + name_len:end])
            pos = end
        return out

    def close(self) -> None:
        os.close(self.fd)


BACKENDS = {"sqlite": (SqliteLog, "wal.sqlite"), "segment": (SegmentLog, "wal.log")}


def measure(directory: str, backend: str, tables: int, per_round: int, rounds: int) -> dict[str, float]:
    kind, name = BACKENDS[backend]
    path = os.path.join(directory, f"{per_round}-{name}")
    log = kind(path)
    try:
        before, started, k = os.times(), time.perf_counter(), 0
        for _ in range(rounds):
            for j in range(per_round):
                log.append(f"t{(k + j) % tables + 1}", RECORD)
            k += per_round
            log.commit()
        after, wall = os.times(), time.perf_counter() - started
        read_started = time.perf_counter()
        recovered = log.recover()
        read_ms = (time.perf_counter() - read_started) * 1e3
    finally:
        log.close()
    assert sum(map(len, recovered.values())) == rounds * per_round
    cpu = (after.user - before.user) + (after.system - before.system)
    return {"cpu_us_per_record": cpu * 1e6 / (rounds * per_round), "ms_per_round": wall * 1e3 / rounds,
            "recover_ms": read_ms}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", help="where to write (default: a temporary directory, removed after)")
    parser.add_argument("--tables", type=positive_int, default=1000)
    parser.add_argument("--per-round", type=positive_ints, default="20,1000", help="records per round, comma-separated")
    parser.add_argument("--records", type=positive_int, default=4000, help="records per measurement")
    args = parser.parse_args()
    if args.dir is not None and not os.path.isdir(args.dir):
        parser.error(f"--dir {args.dir}: no such directory")
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="wal-cost-") as directory:
        print(f"{'backend':>8} {'per round':>9} {'us/record':>10} {'ms/round':>9} {'recover ms':>11}")
        for per_round in args.per_round:
            for backend in BACKENDS:
                r = measure(directory, backend, args.tables, per_round, max(1, args.records // per_round))
                print(f"{backend:>8} {per_round:>9} {r['cpu_us_per_record']:>10.1f} {r['ms_per_round']:>9.2f} "
                      f"{r['recover_ms']:>11.1f}")


def _main() -> None:
    try:
        main()
    except sqlite3.Error as exc:
        raise SystemExit(f"wal_cost: sqlite: {exc}") from None


if __name__ == "__main__":
    run_script(_main, "wal_cost")
