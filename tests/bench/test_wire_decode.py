"""The decoding bench prices every message both ways, and both ways take the same messages (it asserts nothing
about speed)."""

from __future__ import annotations

import pytest

from bench.wire_decode import MESSAGES, before, main, now
from protocol.codec import encode
from protocol.errors import ProtocolError


@pytest.mark.parametrize("name", sorted(MESSAGES))
def test_both_ways_take_or_refuse_the_same_message(name):
    frame = encode(MESSAGES[name])
    if name.startswith("bid: "):
        for check in (before, now):
            with pytest.raises(ProtocolError):
                check(frame)
    else:
        assert before(frame)["type"] == MESSAGES[name]["type"] and now(frame) is not None


def test_each_message_gets_a_figure(capsys):
    assert main(["--messages", "20", "--repeat", "1"]) == 0
    rows = [line.rsplit(None, 3)[0].strip() for line in capsys.readouterr().out.splitlines()[2:]]
    assert rows == list(MESSAGES)
