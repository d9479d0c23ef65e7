"""What one client may cost the server: rates, connections, tables. All configurable on ``serve``."""

from __future__ import annotations

import random
from dataclasses import dataclass

SPREAD = 0.1  # a timeout falls due up to this fraction of itself late, at random
_spread = random.Random()  # the runtime's, not the rules': when a connection times out is nobody's secret


def spread(seconds: float) -> float:
    """``seconds``, stretched by up to ``SPREAD`` of itself at random. A thousand connections that arrived
    together (a flood, a LAN's bots started at once) then do not all time out, or get pinged, in the same
    millisecond: that burst would be a few milliseconds of the server's one thread, a stall for every table."""
    return seconds * (1 + SPREAD * _spread.random())


@dataclass(frozen=True)
class ClientLimits:
    messages_per_s: float = 200.0  # sustained; a burst of ``burst_s`` seconds' worth is allowed
    bytes_per_s: float = 256 * 1024
    burst_s: float = 2.0
    strikes: int = 20  # rate-limit errors, less one for each message accepted, before the connection is closed
    # and its address may then open no WebSocket for this long (429): reconnecting does not buy a fresh burst
    strikeout_s: float = 10.0
    connections_per_ip: int = 256  # WebSockets one address may hold at once
    # TCP connections one address may hold that are not (yet) WebSockets: HTTP requests, handshakes under way
    http_connections_per_ip: int = 64
    handshakes_per_s: float = 20.0  # WebSocket handshakes one address may make per second (a ``burst_s`` burst)
    http_requests_per_s: float = 10.0  # plain HTTP requests one address may make per second (a ``burst_s`` burst)
    # what all the connections of one address may send together, on top of each one's own rates
    address_messages_per_s: float = 2000.0
    address_bytes_per_s: float = 2 * 1024 * 1024
    tables_per_client: int = 16  # tables one connection may create
    waiting_tables_per_ip: int = 8  # tables one address created that may be waiting for players at once
    playing_tables_per_ip: int = 16  # tables one address created that may be live (waiting or running) at once
    topics_per_client: int = 32  # bulletin topics one connection may follow
    hello_timeout_s: float = 10.0
    idle_ping_s: float = 30.0  # a silent connection is pinged after this long
    idle_close_s: float = 60.0  # and closed when it stays silent this long
    rtt_ping_s: float = 10.0  # every connection is pinged this often to time its round trip (0: only when idle)


class TokenBucket:
    """Allows ``rate`` units per second on average and ``rate * burst_s`` at once. Time in seconds."""

    def __init__(self, rate: float, burst_s: float, now: float) -> None:
        self.rate = rate
        self.capacity = rate * burst_s
        self.tokens = self.capacity
        self.stamp = now

    def take(self, amount: float, now: float) -> bool:
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if amount > self.tokens:
            return False
        self.tokens -= amount
        return True

    def has(self, amount: float, now: float) -> bool:
        """Whether ``take(amount, now)`` would be granted (nothing is taken)."""
        return self.available(now) >= amount

    def available(self, now: float) -> float:
        """The units ``take`` could grant at ``now``."""
        return min(self.capacity, self.tokens + (now - self.stamp) * self.rate)

    def full(self, now: float) -> bool:
        """Whether the bucket has refilled by ``now``: forgetting it then loses nothing."""
        return self.tokens + (now - self.stamp) * self.rate >= self.capacity


class AddressBuckets:
    """One ``TokenBucket`` per address. A bucket that has refilled is forgotten (a sweep at most once a
    ``burst_s``), so the map holds only the addresses that spent some of theirs lately."""

    def __init__(self, rate: float, burst_s: float) -> None:
        self.rate = rate
        self.burst_s = burst_s
        self.buckets: dict[str, TokenBucket] = {}
        self._swept = 0.0

    def take(self, address: str, amount: float, now: float) -> bool:
        if now - self._swept >= self.burst_s:
            self._swept = now
            for full in [a for a, bucket in self.buckets.items() if bucket.full(now)]:
                del self.buckets[full]
        bucket = self.buckets.get(address)
        if bucket is None:
            bucket = self.buckets[address] = TokenBucket(self.rate, self.burst_s, now)
        return bucket.take(amount, now)

    def has(self, address: str, now: float) -> bool:
        """Whether ``address`` has a unit left (nothing is taken): an address spent nothing from lately has."""
        bucket = self.buckets.get(address)
        return bucket is None or bucket.has(1, now)

    def left(self, address: str, now: float) -> float | None:
        """The units ``address`` may take at ``now``, or None while its bucket is full (it spent none lately)."""
        bucket = self.buckets.get(address)
        if bucket is None or bucket.full(now):
            return None
        return bucket.available(now)


class Refusals:
    """Which refusals to log: the first of each address and reason, then one line a ``quiet_s`` at most with the
    count of those since, not a line per refusal (a flood of refused connections would be a flood of lines).
    The map holds only the pairs of the last ``quiet_s``."""

    def __init__(self, quiet_s: float = 10.0) -> None:
        self.quiet_s = quiet_s
        self._seen: dict[tuple[str, str], list[float]] = {}  # (address, reason) -> [logged at, refused since]

    def log(self, address: str, why: str, now: float) -> int | None:
        """None when this refusal need not be logged; else how many like it were refused unlogged before it."""
        key = (address, why)
        seen = self._seen.get(key)
        if seen is not None and now - seen[0] < self.quiet_s:
            seen[1] += 1
            return None
        if len(self._seen) >= 1024:
            for old in [k for k, (at, _) in self._seen.items() if now - at >= self.quiet_s]:
                del self._seen[old]
        self._seen[key] = [now, 0]
        return 0 if seen is None else int(seen[1])
