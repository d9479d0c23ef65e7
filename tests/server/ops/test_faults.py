"""The fault campaign's instrument (server/faults.py): its one environment variable, read once, how a fault
counts its point before it fires once, and how it acts through the log's seam. The faults themselves are
exercised in tests/faults."""

from __future__ import annotations

import errno
import os

import pytest

from server import faults
from server.runtime.app import Instruments
from server.storage.journal import Syncer, encode_entry, encode_record, read_log
from tests.server.cli.test_main import run


@pytest.mark.parametrize("text, fields", [
    ("kill@event:auction_opened#3", ("kill", "event", "auction_opened", None, 3)),
    ("kill@event:split_chosen:t3", ("kill", "event", "split_chosen", "t3", 1)),
    ("kill@half-write:t4#12", ("kill", "half-write", None, "t4", 12)),
    ("eio@fsync:t2", ("eio", "fsync", None, "t2", 1)),
    ("enospc@write#2", ("enospc", "write", None, None, 2)),
])
def test_a_fault_names_an_action_a_point_and_a_count(text, fields):
    f = faults.parse(text)
    assert (f.action, f.point, f.arg, f.table, f.n) == fields


@pytest.mark.parametrize("text, says", [
    ("kill", "give ACTION@POINT"),
    ("boom@write", "no action 'boom'"),
    ("eio@create", "eio applies at write, fsync"),
    ("kill@event", "event needs a type"),
    ("kill@write:bid", "write takes no argument"),
    ("kill@write#0", "give ACTION@POINT"),
])
def test_a_bad_fault_is_one_clear_error(text, says):
    with pytest.raises(ValueError) as info:
        faults.parse(text)
    assert says in str(info.value) and "\n" not in str(info.value)


def test_serve_with_a_bad_fault_exits_2_with_one_line(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv(faults.ENV, "kill@nowhere")
    code, out, err = run(capsys, "serve", "--port", "0", "--data", str(tmp_path))
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [f"parsimonia serve: {faults.ENV}='kill@nowhere': kill applies at event, "
                                        "create, resume, write, half-write, between-rounds, not 'nowhere'"]


def test_unset_there_is_no_instrument_at_any_seam():
    assert faults.from_env({faults.ENV: ""}) == Instruments() == faults.from_env({})
    assert Instruments() == Instruments(tables=None, log=None, between_rounds=None)


def test_set_the_one_instrument_is_at_every_seam():
    armed = faults.from_env({faults.ENV: "kill@between-rounds"})
    assert isinstance(armed.tables, faults.Faults) and armed.log is armed.tables
    assert armed.between_rounds == armed.tables.between_rounds


def test_a_fault_fires_once_at_the_nth_occurrence_of_its_point_at_its_table():
    f = faults.parse("eio@write:t2#3")
    assert [f.due("write", "t1"), f.due("fsync", "t2"), f.due("write", "t2"), f.due("write", "t2")] == [False] * 4
    assert f.due("write", "t2") and not f.due("write", "t2")
    counted = faults.parse("kill@event:bid#3")
    assert not counted.due("event", "t1", 2) and counted.due("event", "t9", 1)


def test_an_injected_fsync_error_fails_the_round_holding_its_table_and_the_bytes_stay_written(tmp_path):
    """Through the log's seam: eio@fsync:t1 raises from the first round writing records of t1, after its write;
    a round without t1 and the next round are clean."""
    instrument = faults.Faults(faults.parse("eio@fsync:t1"))
    syncer = Syncer(str(tmp_path / "log"), str(tmp_path), instrument=instrument)
    entry = encode_entry("t1", encode_record({"k": "table", "id": "t1"}))
    syncer._write(entry, ["t2"])
    with pytest.raises(OSError) as info:
        syncer._write(entry, ["t1", "t2"])
    assert info.value.errno == errno.EIO
    syncer._write(entry, ["t1"])
    syncer.close()
    assert len(read_log(str(tmp_path / "log")).tables["t1"]) == 3
    assert os.path.getsize(tmp_path / "log") == 3 * len(entry)
