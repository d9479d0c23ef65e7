"""The typed-catalogue spike checks each message both ways and says what each refusal says (it asserts nothing
about speed)."""

from __future__ import annotations

import pytest

from bench.codec_typed import BID, OUT_OF_RANGE, UNKNOWN, main, today, typed
from protocol.codec import encode


def test_both_decoders_agree_on_what_they_accept_and_refuse():
    assert today(encode(BID)) == {"type": "bid", "auction": 3, "amount": 57}
    assert typed(encode(BID)).command.amount == 57
    for bad in (OUT_OF_RANGE, UNKNOWN):
        with pytest.raises(Exception):
            today(encode(bad))
        with pytest.raises(Exception):
            typed(encode(bad))


def test_each_message_gets_a_figure_and_each_refusal_its_words(capsys):
    assert main(["--messages", "20", "--repeat", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line for line in lines if line.rstrip().endswith("x")]
    assert [row.split()[0] for row in rows] == ["bid", "out", "unknown"]
    assert sum("today:   bad_field: command.amount" in line for line in lines) == 1
    assert sum("today:   unknown_command" in line for line in lines) == 1
