"""A baseline server run by hand: a busy port is one line, Ctrl-C a quiet end."""

from __future__ import annotations

import argparse

import pytest

from bench.bare import run_baseline

ARGS = argparse.Namespace(host="127.0.0.1", port=9001)


def fails(exc: BaseException):
    def run() -> None:
        raise exc
    return run


def test_a_port_it_cannot_listen_on_is_one_line_and_exit_status_2(capsys):
    busy = OSError(98, "Address already in use")
    with pytest.raises(SystemExit) as ended:
        run_baseline("bare server", ARGS, fails(ExceptionGroup("serving", [busy])))
    assert ended.value.code == 2
    assert capsys.readouterr().err == "bare server: cannot listen on 127.0.0.1:9001: Address already in use\n"


def test_ctrl_c_ends_it_quietly_even_inside_an_exception_group(capsys):
    run_baseline("bare server", ARGS, fails(BaseExceptionGroup("serving", [KeyboardInterrupt()])))
    assert capsys.readouterr().err == ""


def test_any_other_failure_is_not_hidden():
    with pytest.raises(ValueError):
        run_baseline("bare server", ARGS, fails(ValueError("a bug")))
