"""Named deadlines in integer ms: time order, ties in setting order, cancel, shift, snapshot."""

from __future__ import annotations

from server.games.machines.timers import Timers


def test_empty_timers_have_nothing_next_or_due():
    t = Timers()
    assert t.next() is None
    assert t.pop_next_due(10**12) is None
    assert t.snapshot() == []


def test_set_get_contains_and_cancel():
    t = Timers()
    t.set("game", 100)
    assert "game" in t and t.get("game") == 100
    t.cancel("game")
    assert "game" not in t and t.get("game") is None
    t.cancel("game")  # cancelling a missing key is harmless
    t.cancel(("auction", 9))
    assert t.next() is None


def test_next_is_the_earliest_deadline():
    t = Timers()
    t.set("game", 500)
    t.set(("auction", 1), 200)
    t.set("turn", 300)
    assert t.next() == (200, ("auction", 1))


def test_ties_go_in_setting_order():
    t = Timers()
    t.set("b", 100)
    t.set("a", 100)
    t.set("c", 100)
    assert [t.pop_next_due(100)[1] for _ in range(3)] == ["b", "a", "c"]


def test_setting_a_key_again_moves_it_and_puts_it_last_among_ties():
    t = Timers()
    t.set("x", 100)
    t.set("y", 100)
    t.set("x", 100)  # re-set: now after y
    assert t.next() == (100, "y")
    t.set("y", 50)
    assert t.get("y") == 50
    assert t.next() == (50, "y")


def test_pop_next_due_is_inclusive_and_leaves_later_deadlines():
    t = Timers()
    t.set("a", 100)
    t.set("b", 200)
    assert t.pop_next_due(99) is None
    assert t.pop_next_due(100) == (100, "a")
    assert "a" not in t
    assert t.pop_next_due(150) is None
    assert t.pop_next_due(1000) == (200, "b")
    assert t.pop_next_due(1000) is None


def test_pop_next_due_hands_deadlines_out_in_time_order():
    t = Timers()
    for key, at in [("c", 30), ("a", 10), ("d", 30), ("b", 20)]:
        t.set(key, at)
    popped = []
    while (due := t.pop_next_due(100)) is not None:
        popped.append(due)
    assert popped == [(10, "a"), (20, "b"), (30, "c"), (30, "d")]


def test_shift_moves_every_deadline_and_keeps_tie_order():
    t = Timers()
    t.set("b", 100)
    t.set("a", 100)
    t.set("c", 50)
    t.shift(1000)
    assert t.get("a") == 1100 and t.get("b") == 1100 and t.get("c") == 1050
    assert [t.pop_next_due(2000)[1] for _ in range(3)] == ["c", "b", "a"]


def test_shifted_counts_every_ms_shifted_so_far():
    t = Timers()
    assert t.shifted == 0
    t.shift(300)
    t.shift(200)
    assert t.shifted == 500


def test_snapshot_lists_repr_keys_in_firing_order():
    t = Timers()
    t.set("game", 300)
    t.set(("auction", 2), 100)
    t.set("turn", 100)
    assert t.snapshot() == [["('auction', 2)", 100], ["'turn'", 100], ["'game'", 300]]


def test_snapshot_is_equal_for_equal_histories():
    def build():
        t = Timers()
        t.set("a", 5)
        t.set("b", 7)
        t.cancel("a")
        return t.snapshot()

    assert build() == build()


def test_many_deadlines_come_out_in_time_then_setting_order():
    t = Timers()
    expected = []
    for i in range(300):
        at = (i * 7919) % 50  # many ties
        t.set(("k", i), at)
        expected.append((at, i))
    popped = []
    while (due := t.pop_next_due(10**9)) is not None:
        popped.append(due)
    assert popped == [(at, ("k", i)) for at, i in sorted(expected)]


def test_replacing_a_key_many_times_keeps_one_live_deadline():
    t = Timers()
    for at in range(1000, 0, -1):  # enough replacements to make the heap rebuild itself
        t.set("turn", at)
    t.set("game", 5)
    assert len(t) == 2 and t.get("turn") == 1
    assert t.pop_next_due(10**9) == (1, "turn")
    assert t.pop_next_due(10**9) == (5, "game")
    assert t.pop_next_due(10**9) is None


def test_a_cancelled_key_set_again_is_live_again():
    t = Timers()
    t.set("a", 10)
    t.cancel("a")
    t.set("a", 20)
    assert t.next() == (20, "a")
    assert t.pop_next_due(15) is None and t.pop_next_due(20) == (20, "a")


def test_shift_after_cancel_and_replace_keeps_only_live_deadlines():
    t = Timers()
    t.set("a", 10)
    t.set("b", 20)
    t.set("a", 30)
    t.cancel("b")
    t.shift(5)
    assert t.snapshot() == [["'a'", 35]]
