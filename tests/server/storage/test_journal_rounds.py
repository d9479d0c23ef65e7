"""When a log's next round may begin: free (each log its own phase, a round no sooner than the spacing after the
last) or aligned (a busy log's rounds on the ticks of the spacing on the machine's monotonic clock, so that the
logs of a machine's workers sync together)."""

from __future__ import annotations

import math

import trio

from server.storage import journal
from server.storage.journal import Syncer, next_round

STEP = 0.005


def on_tick(t: float) -> bool:
    return math.isclose(t / STEP, round(t / STEP), abs_tol=1e-6)


def test_free_rounds_begin_at_once_or_one_spacing_after_the_last_began():
    assert next_round(now=10.0, began=9.0, ended=9.001, step=STEP, aligned=False) == 10.0
    assert math.isclose(next_round(now=10.001, began=10.0007, ended=10.0009, step=STEP, aligned=False), 10.0057)


def test_aligned_rounds_of_a_busy_log_begin_on_the_next_tick_never_more_than_a_spacing_away():
    for began in (10.0, 10.0003, 10.0021, 10.0049):  # a round on a tick (slept just past it), or off one (idle start)
        for wait in (0.0001, 0.001, 0.0029):
            now = began + wait
            at = next_round(now, began, ended=now - 0.00005, step=STEP, aligned=True)
            assert on_tick(at), (began, now, at)
            assert began < at and now <= at <= now + STEP


def test_aligned_rounds_land_on_the_same_ticks_whatever_each_logs_phase():
    """Two logs whose last rounds began at different moments (their own phases) begin the next on one tick."""
    first = next_round(now=20.0012, began=20.0001, ended=20.0008, step=STEP, aligned=True)
    second = next_round(now=20.0031, began=20.0026, ended=20.0030, step=STEP, aligned=True)
    assert first == second and on_tick(first)


def test_an_aligned_round_after_a_slow_sync_waits_for_the_next_tick_and_an_idle_log_starts_at_once():
    slow = next_round(now=30.0131, began=30.0, ended=30.013, step=STEP, aligned=True)  # the sync took 13 ms
    assert on_tick(slow) and math.isclose(slow, 30.015)
    assert next_round(now=31.0, began=30.0, ended=30.013, step=STEP, aligned=True) == 31.0  # idle since 30.013


def test_a_round_just_past_a_tick_does_not_count_as_before_it():
    """A round that began on a tick (the clock read a hair before it) is followed by the next tick, not that one."""
    began = 40.0 - 1e-12
    at = next_round(now=40.0001, began=began, ended=40.00005, step=STEP, aligned=True)
    assert math.isclose(at, 40.005)


def test_unspaced_rounds_begin_at_once_either_way():
    assert next_round(now=5.0, began=4.9999, ended=4.99995, step=0.0, aligned=True) == 5.0
    assert next_round(now=5.0, began=4.9999, ended=4.99995, step=0.0, aligned=False) == 5.0


async def test_the_syncer_aligns_its_rounds_where_the_environment_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(journal, "ROUNDS", "aligned")
    syncer = Syncer(str(tmp_path / "log"), str(tmp_path), "write", round_ms=50)
    assert syncer.aligned and not Syncer(str(tmp_path / "log2"), str(tmp_path), "write", aligned=False).aligned
    seen: list[tuple[float, float, float, float, bool]] = []
    real = journal.next_round

    def noted(now: float, began: float, ended: float, step: float, aligned: bool) -> float:
        seen.append((now, began, ended, step, aligned))
        return real(now, began, ended, step, aligned)

    monkeypatch.setattr(journal, "next_round", noted)
    table = syncer.open("t1")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(syncer.run)
        for at in range(2):
            done = trio.Event()
            table.append({"k": "tick", "at": at})
            table.after_durable(done.set)
            with trio.fail_after(5):
                await done.wait()
        nursery.cancel_scope.cancel()
    assert syncer.rounds == 2
    assert [s[3:] for s in seen] == [(0.05, True), (0.05, True)]
    assert seen[1][2] >= seen[1][1] > 0  # the second asked with when the first round began and ended
