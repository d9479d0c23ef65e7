"""What one client may cost the server: its budgets, and its refusals logged once per address and reason."""

from __future__ import annotations

from server.transport.limits import AddressBuckets, Refusals


def test_an_address_has_budget_left_until_it_spent_it_and_again_once_a_unit_refilled():
    buckets = AddressBuckets(rate=2.0, burst_s=1.0)
    assert buckets.has("10.0.0.9", 0.0)  # never seen: a full bucket, and none kept for asking
    assert not buckets.buckets
    assert buckets.take("10.0.0.9", 1, 0.0) and buckets.has("10.0.0.9", 0.0)
    assert buckets.take("10.0.0.9", 1, 0.0) and not buckets.has("10.0.0.9", 0.0)
    assert not buckets.has("10.0.0.9", 0.4) and buckets.has("10.0.0.9", 0.5)  # 2 a second: one back after 0.5 s
    assert buckets.has("10.0.0.8", 0.0)  # another address's own


def test_what_an_address_has_left_is_told_only_while_its_bucket_is_not_full():
    buckets = AddressBuckets(rate=2.0, burst_s=2.0)
    assert buckets.left("a", 0.0) is None  # never spent
    assert buckets.take("a", 3, 0.0)
    assert buckets.left("a", 0.0) == 1.0
    assert buckets.left("a", 0.5) == 2.0
    assert buckets.left("a", 1.5) is None  # refilled


def test_a_refusal_is_logged_once_per_address_and_reason_then_once_a_quiet_time_with_the_count_since():
    refusals = Refusals(quiet_s=10.0)
    assert refusals.log("10.0.0.9", "too many connections", 0.0) == 0
    assert [refusals.log("10.0.0.9", "too many connections", t) for t in (1.0, 2.0, 9.9)] == [None] * 3
    assert refusals.log("10.0.0.9", "too many handshakes", 3.0) == 0  # another reason: its own line
    assert refusals.log("10.0.0.8", "too many connections", 3.0) == 0  # another address: its own line
    assert refusals.log("10.0.0.9", "too many connections", 10.0) == 3  # the three since, in one line


def test_the_refusals_remembered_are_those_of_the_last_quiet_time():
    refusals = Refusals(quiet_s=1.0)
    for n in range(2000):
        refusals.log(f"10.0.{n // 256}.{n % 256}", "too many connections", n * 0.01)
    assert len(refusals._seen) <= 1024 + 100
