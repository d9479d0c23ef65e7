"""The open-file limit raised at start."""

from __future__ import annotations

import resource

from server.ops.descriptors import RESERVED, capacity, raise_open_files_limit


def test_the_soft_open_files_limit_is_raised_to_the_hard_one():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(256, hard), hard))
        raised = raise_open_files_limit()
        assert raised == resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        assert raised == hard or hard == resource.RLIM_INFINITY
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_the_capacity_keeps_some_descriptors_back_and_is_never_negative():
    assert capacity(1024) == 1024 - RESERVED and capacity(10) == 0
