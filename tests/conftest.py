"""Fixtures for every test area.

The games are discovered once, as the tests' program starts (``server.games.discover``), before any test module
is collected: a module may parametrise over ``GAMES``.

``memory_net``: the in-memory network (``tests/memory_net.py``). A test that runs on the autojump clock gets it
on its own, so that no such test waits on the kernel; a test may ask for it by name to set its ``capacity``
or ``address``.
"""

from __future__ import annotations

import pytest

from server.games import discover
from tests.memory_net import MemoryNetwork

discover()


@pytest.fixture
def memory_net(monkeypatch: pytest.MonkeyPatch) -> MemoryNetwork:
    network = MemoryNetwork()
    network.install(monkeypatch)
    return network


@pytest.fixture(autouse=True)
def _no_kernel_under_the_autojump_clock(request: pytest.FixtureRequest) -> None:
    if "autojump_clock" in request.fixturenames:
        request.getfixturevalue("memory_net")
