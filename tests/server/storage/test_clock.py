"""Server time and its heartbeat file."""

from __future__ import annotations

import os

import trio
from structlog.testing import capture_logs

from server.storage.clock import HEARTBEAT_MS, ServerClock, keep_heartbeat


async def test_a_heartbeat_that_cannot_be_written_is_told_once_and_kept_trying(tmp_path, autojump_clock):
    """A full or failing disk (tests/faults/test_disk.py) must not stop the server through its heartbeat."""
    directory = tmp_path / "gone"  # the heartbeat's directory is missing: every write fails
    path = str(directory / "clock")
    clock = ServerClock(5000)
    with capture_logs() as logged:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(keep_heartbeat, clock, path)
            await trio.sleep(5 * HEARTBEAT_MS / 1000)
            assert not os.path.exists(path)
            directory.mkdir()
            await trio.sleep(2 * HEARTBEAT_MS / 1000)
            with open(path) as f:
                assert int(f.read()) >= 5000 + 5 * HEARTBEAT_MS
            nursery.cancel_scope.cancel()
    told = [(e["event"], e["log_level"]) for e in logged]
    assert told == [("heartbeat_not_written", "error"), ("heartbeat_written_again", "warning")]
