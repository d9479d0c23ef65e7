"""The cluster's own cap on the tables one address created that wait for players, kept in Redis.

Each address has a sorted set (``names.waiting_key``) of reservations, each scored with the Redis time it lapses
at. A create reserves a place atomically (a script: lapsed places dropped, the set counted against the cap, the
place added) before the table is made on any worker; the worker that holds the table keeps its place alive while
the table waits (renewed every beat to the table's own expiry) and gives it back once the table plays, ends or
was never made. A place whose worker died lapses by itself, so the count never drifts up for longer than a
waiting table's expiry. While Redis cannot be reached the worker's own count (``server.runtime.lobby``) is the cap.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

import trio
from coredis import Redis
from coredis.exceptions import RedisError

from server.ops import logs
from server.cluster import names

if TYPE_CHECKING:
    from server.runtime.lobby import Lobby

RESERVE_HOLD_MS = 30_000  # a place reserved lapses after this unless its table's worker renews it
KEEP_AFTER_MS = 5_000  # a waiting table's place outlives its expiry by this (the renewal is a beat late)
REDIS_TIMEOUT_MS = 1000  # a reservation Redis has not answered by then falls back to the worker's own count

# KEYS[1]: the address's set; ARGV: cap, place, hold_ms. 1: reserved; 0: the address is at the cap.
_RESERVE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return 1
"""
# KEYS[1]: the address's set; ARGV: n, then n pairs (place, hold_ms) to keep, then the places to give back.
_RENEW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n, i, longest = tonumber(ARGV[1]), 2, 0
for _ = 1, n do
  local hold = tonumber(ARGV[i + 1])
  redis.call('ZADD', KEYS[1], now + hold, ARGV[i])
  if hold > longest then longest = hold end
  i = i + 2
end
while i <= #ARGV do
  redis.call('ZREM', KEYS[1], ARGV[i])
  i = i + 1
end
if longest > 0 and redis.call('PTTL', KEYS[1]) < longest then redis.call('PEXPIRE', KEYS[1], longest) end
return 0
"""


def new_place() -> str:
    return secrets.token_hex(8)


async def reserve(redis: Redis, address: str, cap: int, place: str) -> bool | None:
    """Take a place for a new table of ``address``: True, or False if it has ``cap`` waiting already across the
    cluster; None when Redis did not answer (the worker's own count decides)."""
    try:
        with trio.move_on_after(REDIS_TIMEOUT_MS / 1000):
            got = await redis.eval(_RESERVE, keys=[names.waiting_key(address)], args=[cap, place, RESERVE_HOLD_MS])
            return bool(got)
    except (RedisError, OSError) as exc:
        logs.get().warning("waiting_cap_unchecked", error=str(exc)[:200], meaning="this worker's own count decides")
    return None


class Places:
    """The places held for the waiting tables this worker holds: renewed or given back on every beat."""

    def __init__(self, lobby: Lobby) -> None:
        self.lobby = lobby
        self.held: dict[str, tuple[str, str]] = {}  # table id -> (address, place)
        self.unused: list[tuple[str, str]] = []  # (address, place) reserved for a table that was not made

    def hold(self, table_id: str, address: str, place: str) -> None:
        self.held[table_id] = (address, place)

    def give_back(self, address: str, place: str) -> None:
        self.unused.append((address, place))

    async def renew(self, redis: Redis) -> None:
        """One script per address: its tables still waiting keep their places until their expiry (and a
        margin), the others' places are given back."""
        now = self.lobby.clock.now_ms()
        keep: dict[str, list[str | int]] = {}
        drop: dict[str, list[str]] = {}
        for table_id, (address, place) in list(self.held.items()):
            table = self.lobby.live.get(table_id)
            if table is not None and table.state == "waiting":
                expires = table.expires_ms if table.expires_ms is not None else now + self.lobby.waiting_expiry_ms
                keep.setdefault(address, []).extend((place, max(expires - now, 0) + KEEP_AFTER_MS))
            else:
                drop.setdefault(address, []).append(place)
                del self.held[table_id]
        unused, self.unused = self.unused, []
        for address, place in unused:
            drop.setdefault(address, []).append(place)
        try:
            for address in set(keep) | set(drop):
                kept = keep.get(address, [])
                await redis.eval(_RENEW, keys=[names.waiting_key(address)],
                                 args=[len(kept) // 2, *kept, *drop.get(address, [])])
        except BaseException:
            self.unused.extend((a, p) for a, places in drop.items() for p in places)  # given back next time
            raise
