"""What one client may cost the server: its refusals logged once per address and reason."""

from __future__ import annotations

from server.limits import Refusals


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
