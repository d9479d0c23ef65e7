"""kill -9 of a worker mid-game, measured: the other worker's tables' bid latency, and acknowledged bids lost.

    python bench/cluster_kill.py --tables 4 --rate 10 --before 6 --during 6

A cluster of 2 workers (``serve --workers 2``, a redis-server started for the run, journals fsynced as shipped)
holds ``--tables`` Parsimonia tables on each worker, every table with a seller and a bidder, each a connection of
its own to the worker holding the table. At each table the bidder bids ``--rate`` times a second, one above the
highest bid, in the seller's open auction (the seller closes it unsold after 20 bids and puts the card up again).
A bid's latency is from its send to its ``ok`` (which the server sends once the bid is durable). After
``--before`` seconds worker 2 is killed with SIGKILL; its supervisor starts it again, and its seats reconnect
(every 100 ms) and resume. The load goes on for ``--during`` seconds after the kill and until every seat is back.

It reports worker 1's p99 before and during (from the kill until worker 2's seats are all back, or ``--during``
if longer), and checks every acknowledged bid (worker 1's and worker 2's) against the table's history once worker
2 is back: ``lost`` counts those missing. One line ``RESULT {json}`` at the end; exit 1 if any bid was lost.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

import trio
from trio_websocket import ConnectionClosed, HandshakeError, open_websocket_url

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.stats import summarize  # noqa: E402
from bench.storm import free_port, start_redis, stop, wait_listening  # noqa: E402
from clients.sdk import call, history, request_once  # noqa: E402
from protocol.codec import decode, encode  # noqa: E402
from protocol.messages import PROTOCOL_VERSION  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPTIONS = {"opening_ms": 3_600_000, "turn_ms": 3_600_000, "game_ms": 3_600_000, "quiet_ms": 600_000}
BIDS_PER_AUCTION = 20
RECONNECT_S = 0.1
ANSWER_S = 10.0  # a request unanswered this long counts as not acknowledged
OWN = re.compile(r"worker (\d+) on ([^,\s]+)")


class Gone(Exception):
    """The seat's connection dropped: what was in flight is not acknowledged."""


@dataclass
class Seat:
    url: str
    table: str
    name: str
    token: str | None = None
    last_seq: int = 0
    ws: Any = None
    back: trio.Event = field(default_factory=trio.Event)  # connected, seated
    pending: dict[int, Any] = field(default_factory=dict)
    ids: int = 0
    resumes: int = 0
    seated_at: float = 0.0  # when it last joined or resumed (trio time)

    async def keep(self, on_event: Any) -> None:
        """Hold the seat: join, then resume after every drop, until cancelled."""
        while True:
            try:
                async with open_websocket_url(self.url) as ws:
                    await call(ws, "hello", version=PROTOCOL_VERSION, client="cluster-kill")
                    if self.token is None:
                        joined = await call(ws, "join", table=self.table, name=self.name, views=False)
                        self.token = joined["token"]
                    else:
                        await call(ws, "resume", table=self.table, token=self.token, last_seq=self.last_seq,
                                   views=False)
                        self.resumes += 1
                    self.ws, self.seated_at = ws, trio.current_time()
                    self.back.set()
                    while True:
                        msg = decode(await ws.get_message())
                        if msg.get("type") == "event":
                            self.last_seq = max(self.last_seq, msg["seq"])
                            on_event(msg["event"])
                        elif "re" in msg and msg["re"] in self.pending:
                            self.pending.pop(msg["re"]).send_nowait(msg)
            except (ConnectionClosed, HandshakeError, OSError, trio.BrokenResourceError):
                pass
            self.ws = None
            if self.back.is_set():  # a new one only once it was set: whoever waits on it is woken when back
                self.back = trio.Event()
            for chan in self.pending.values():
                chan.close()
            self.pending.clear()
            await trio.sleep(RECONNECT_S)

    async def act(self, command: dict[str, Any]) -> dict[str, Any]:
        return await self.request("act", command=command)

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Send a request of this seat's table on its connection; its reply (``Gone`` if none came)."""
        await self.back.wait()
        self.ids += 1
        rid = self.ids
        send, receive = trio.open_memory_channel[dict[str, Any]](1)
        self.pending[rid] = send
        try:
            await self.ws.send_message(encode({"type": kind, "id": rid, "table": self.table, **fields}))
            with trio.fail_after(ANSWER_S):
                return await receive.receive()
        except (ConnectionClosed, trio.BrokenResourceError, trio.EndOfChannel, trio.TooSlowError) as exc:
            raise Gone() from exc


@dataclass
class Table:
    id: str
    worker: int
    seller: Seat
    bidder: Seat
    auction: int | None = None
    high: int = 0
    bids: int = 0
    acked: list[tuple[int, int]] = field(default_factory=list)  # (auction, amount) the server answered ok
    samples: list[tuple[float, float]] = field(default_factory=list)  # (sent at, latency s)

    def on_event(self, ev: dict[str, Any]) -> None:
        if ev.get("type") == "auction_opened" and ev["auction"]["seller"] == 0:
            self.auction, self.high, self.bids = ev["auction"]["id"], ev["auction"].get("start_price") or 0, 0
        elif ev.get("type") == "bid" and ev["auction"] == self.auction:
            self.high = max(self.high, ev["amount"])
        elif ev.get("type") == "auction_closed" and ev["auction"] == self.auction:
            self.auction = None

    async def load(self, rate: float, card: int) -> None:
        """Bid ``rate`` times a second, open loop on a fixed schedule; every bid waits for its answer in a task of
        its own, so a slow answer does not delay the next bid."""
        async with trio.open_nursery() as nursery:
            tick = trio.current_time()
            while True:
                tick += 1 / rate
                await trio.sleep_until(tick)
                if self.auction is None:
                    nursery.start_soon(self._offer, card)
                elif self.bids >= BIDS_PER_AUCTION:
                    nursery.start_soon(self._close, self.auction)
                else:
                    self.high += 1
                    self.bids += 1
                    nursery.start_soon(self._bid, self.auction, self.high)

    async def _offer(self, card: int) -> None:
        if self.auction is None and self.seller.back.is_set():
            self.auction = -1  # asked: the auction_opened event gives its id
            try:
                await self.seller.act({"type": "auction", "card": card, "start_price": 0})
            except Gone:
                self.auction = None

    async def _close(self, auction: int) -> None:
        self.bids = -10**9  # asked once
        try:
            await self.seller.act({"type": "close", "auction": auction, "winner": None})
        except Gone:
            self.bids = BIDS_PER_AUCTION

    async def _bid(self, auction: int, amount: int) -> None:
        if auction < 0:
            return
        sent = trio.current_time()
        try:
            reply = await self.bidder.act({"type": "bid", "auction": auction, "amount": amount})
        except Gone:
            return
        if reply.get("type") == "ok":
            self.acked.append((auction, amount))
            self.samples.append((sent, trio.current_time() - sent))


def start_cluster(data_dir: str, redis_url: str) -> tuple[subprocess.Popen, dict[int, str]]:
    port = free_port()
    out_path = os.path.join(data_dir, "cluster.out")
    with open(out_path, "wb") as out, open(os.path.join(data_dir, "cluster.err"), "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "server.cli.main", "serve", "--port", str(port), "--workers", "2", "--redis", redis_url,
             "--worker-ports", "0", "--data", os.path.join(data_dir, "data"), "--log-level", "warning",
             "--max-waiting-tables-per-ip", "100000", "--max-playing-tables-per-ip", "100000",
             "--max-tables-per-client", "100000"],
            cwd=ROOT, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
    wait_listening(port, proc, 60)
    deadline = time.monotonic() + 30
    while not (own := dict(OWN.findall(open(out_path).read()))) or len(own) < 2:
        if time.monotonic() > deadline:
            raise RuntimeError("the cluster's banner never named its workers")
        time.sleep(0.05)
    return proc, {int(w): f"ws://{where}/" for w, where in own.items()}


def worker_pid(redis_url: str, worker: int) -> int:
    port = redis_url.rsplit(":", 1)[1].split("/")[0]
    raw = subprocess.run(["redis-cli", "-p", port, "get", f"parsimonia:worker:{worker}"], capture_output=True,
                         text=True, check=True).stdout.strip()
    return int(json.loads(raw)["pid"])


async def _card(table: Table) -> int:
    view = await table.seller.request("view")
    seller = next(p for p in view["view"]["players"] if p["seat"] == 0)
    return int(seller["resources"][0][0])


async def _lost(url: str, table: Table) -> int:
    """Acknowledged bids of ``table`` missing from its history."""
    async with open_websocket_url(url) as ws:
        await call(ws, "hello", version=PROTOCOL_VERSION, client="cluster-kill")
        seen = {(e["event"]["auction"], e["event"]["amount"]) async for e in history(ws, table.id)
                if e["event"].get("type") == "bid" and e["event"].get("seat") == 1}
    return sum(1 for bid in table.acked if bid not in seen)


def _quantiles(samples: list[tuple[float, float]], start: float, end: float) -> dict[str, float | None]:
    window = summarize([lat * 1000 for sent, lat in samples if start <= sent < end])
    return {q: None if window[q] is None else round(window[q], 1) for q in ("p50", "p99")}


async def measure(args: argparse.Namespace, urls: dict[int, str], redis_url: str) -> dict[str, Any]:
    tables: list[Table] = []
    for n in range(args.tables):
        for worker in (1, 2):
            tid = (await request_once(urls[worker], "create", game="parsimonia", seats=2, seed=n,
                                      options=OPTIONS))["table"]
            holder = int(tid[1:].split("-")[0])
            tables.append(Table(tid, holder, Seat(urls[holder], tid, "seller"), Seat(urls[holder], tid, "bidder")))
    assert {t.worker for t in tables} == {1, 2}, "the tables did not spread over both workers"
    pid = worker_pid(redis_url, 2)
    async with trio.open_nursery() as nursery:
        for t in tables:  # the seller joins first: seat 0
            nursery.start_soon(t.seller.keep, t.on_event)
            await t.seller.back.wait()
            nursery.start_soon(t.bidder.keep, t.on_event)
            await t.bidder.back.wait()
        cards = {t.id: await _card(t) for t in tables}
        for t in tables:
            nursery.start_soon(t.load, args.rate, cards[t.id])
        start = trio.current_time()
        await trio.sleep(args.before)
        killed = trio.current_time()
        os.kill(pid, signal.SIGKILL)
        await trio.sleep(0.5)  # the kill takes its seats down
        await trio.sleep(args.during - 0.5)
        with trio.fail_after(60):
            for t in tables:
                await t.seller.back.wait()
                await t.bidder.back.wait()
        back = max(t.seller.seated_at for t in tables if t.worker == 2)
        back = max(back, *(t.bidder.seated_at for t in tables if t.worker == 2))
        await trio.sleep(1.0)  # a little load after every seat is back
        nursery.cancel_scope.cancel()
    ones = [s for t in tables if t.worker == 1 for s in t.samples]
    twos = [s for t in tables if t.worker == 2 for s in t.samples]
    lost = 0
    for t in tables:
        lost += await _lost(urls[t.worker], t)
    before, during = _quantiles(ones, start, killed), _quantiles(ones, killed, max(back, killed + args.during))
    return {
        "tables_per_worker": args.tables, "rate_per_table": args.rate,
        "worker1_p50_before_ms": before["p50"], "worker1_p50_during_ms": during["p50"],
        "worker1_p99_before_ms": before["p99"], "worker1_p99_during_ms": during["p99"],
        "ratio": None if not before["p99"] or during["p99"] is None else round(during["p99"] / before["p99"], 2),
        "worker2_seats_back_after_s": round(back - killed, 2),
        # the during window split: while worker 2 restarts (from the kill until its seats are back), and after
        "worker1_p99_restarting_ms": _quantiles(ones, killed, back)["p99"],
        "worker1_p99_after_ms": _quantiles(ones, back, trio.current_time())["p99"],
        "acked": sum(len(t.acked) for t in tables), "acked_worker2": sum(len(t.acked) for t in tables if t.worker == 2),
        "worker2_bids_after_kill": sum(1 for s in twos if s[0] >= killed),
        "lost": lost, "resumes_worker1": sum(t.seller.resumes + t.bidder.resumes for t in tables if t.worker == 1),
        "resumes_worker2": sum(t.seller.resumes + t.bidder.resumes for t in tables if t.worker == 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=4, help="tables on each worker")
    parser.add_argument("--rate", type=float, default=10.0, help="bids a second at each table")
    parser.add_argument("--before", type=float, default=6.0, help="seconds of load before the kill")
    parser.add_argument("--during", type=float, default=6.0, help="seconds of load from the kill on (at least)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="parsimonia-kill-") as data_dir:
        redis, redis_url = start_redis(data_dir)
        cluster = None
        try:
            cluster, urls = start_cluster(data_dir, redis_url)
            time.sleep(1.5)  # every worker registered and has seen the other
            result = trio.run(measure, args, urls, redis_url)
        except BaseException:
            print(open(os.path.join(data_dir, "cluster.err")).read()[-4000:], file=sys.stderr)
            raise
        finally:
            stop(cluster, sig=signal.SIGINT)
            stop(redis)
    print("RESULT " + json.dumps(result), flush=True)
    return 1 if result["lost"] else 0


if __name__ == "__main__":
    sys.exit(main())
