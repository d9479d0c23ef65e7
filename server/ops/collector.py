"""Keeping Python's cyclic garbage collector from stalling the tables.

A server holds a great many long-lived objects (connections, tables, engines, histories). The collector walks
every object of a generation it collects, so while a crowd of new connections has not yet reached the old
generation, a routine collection of the young ones walks them all and the tables' timers fire late.

So the server moves what has survived into the collector's permanent generation every ``FREEZE_S``
(``gc.freeze``): the young collections then walk only what was made since. What is frozen is never collected, so
every ``FULL_S`` the server puts it back (``gc.unfreeze``) and collects once, reclaiming any reference cycle that
was frozen meanwhile.
"""

from __future__ import annotations

import gc

import trio

THRESHOLDS = (50_000, 20, 100)  # young collections every 50,000 allocations; the older ones rarely
FREEZE_S = 1.0
FULL_S = 600.0


async def keep_collector(freeze_s: float = FREEZE_S, full_s: float = FULL_S) -> None:
    """Run for the server's life: freeze the survivors now and then, collect them all once in a while."""
    gc.set_threshold(*THRESHOLDS)
    gc.freeze()  # what exists at start-up (modules, recovered tables) lives as long as the server
    since_full = 0.0
    while True:
        await trio.sleep(freeze_s)
        since_full += freeze_s
        if since_full >= full_s:
            since_full = 0.0
            gc.unfreeze()
            gc.collect()
        gc.freeze()
