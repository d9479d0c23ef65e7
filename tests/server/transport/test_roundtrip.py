"""The timing of a WebSocket's pings on its own (``server.transport.roundtrip``): the payload a ping carries, the
last and smoothed round trips a pong gives, and the pongs that time nothing."""

from __future__ import annotations

from server.transport.roundtrip import RoundTrip


def test_nothing_is_timed_before_the_first_pong():
    rtt = RoundTrip()
    rtt.ping(10.0)
    assert (rtt.ms, rtt.last_ms) == (None, None)


def test_a_pong_times_its_ping_to_when_it_was_heard_and_smooths_a_quarter_of_the_way():
    rtt = RoundTrip()
    for sent, heard, last, smoothed in ((1.0, 1.120, 120, 120), (2.0, 2.040, 40, 100), (3.0, 3.040, 40, 85)):
        rtt.pong(rtt.ping(sent), heard)
        assert (rtt.last_ms, rtt.ms) == (last, smoothed)


def test_a_ping_while_one_is_out_carries_its_payload_and_is_timed_from_the_first():
    rtt = RoundTrip()
    first = rtt.ping(1.0)
    assert rtt.ping(1.5) == first
    rtt.pong(first, 1.6)
    assert rtt.last_ms == 600
    assert rtt.ping(2.0) != first  # answered: the next ping is a new one


def test_an_unasked_pong_or_one_with_another_payload_times_nothing():
    rtt = RoundTrip()
    rtt.pong(b"1", 1.0)  # no ping is out
    payload = rtt.ping(2.0)
    rtt.pong(b"not the ping's payload", 2.5)
    assert (rtt.ms, rtt.last_ms) == (None, None)
    rtt.pong(payload, 2.25)
    assert rtt.last_ms == 250


def test_a_pong_heard_before_its_ping_went_counts_as_no_time():
    rtt = RoundTrip()
    rtt.pong(rtt.ping(5.0), 4.9)
    assert (rtt.ms, rtt.last_ms) == (0, 0)
