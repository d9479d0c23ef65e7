"""A WebSocket's burst allowance on its own (``server.transport.burst``): granted once, spent frame by frame and
byte by byte, never refilled, gone once it lapses. The WebSocket that spends it: tests/server/transport/test_transport.py."""

from __future__ import annotations

import trio

from server.transport.burst import LAPSE_S, Burst


async def test_nothing_may_be_taken_before_a_grant(autojump_clock):
    assert not Burst().take(1)


async def test_a_grant_is_spent_in_frames_and_bytes_and_a_second_grant_gives_nothing(autojump_clock):
    burst = Burst()
    burst.grant(3, 100)
    assert [burst.take(40), burst.take(40), burst.take(40)] == [True, True, False]  # 20 bytes left: not enough
    assert (burst.frames, burst.nbytes) == (0, 0)  # and a refusal forfeits the rest
    burst.grant(3, 100)
    assert not burst.take(1)


async def test_what_is_left_lapses(autojump_clock):
    burst = Burst()
    burst.grant(3, 100)
    assert burst.take(10)
    await trio.sleep(LAPSE_S)
    assert not burst.take(10) and (burst.frames, burst.nbytes) == (0, 0)
