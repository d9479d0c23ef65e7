"""The SDK's seat from the command line or the environment (what a tournament director passes a bot),
and a bot stopped before the start giving its seat back."""

from __future__ import annotations

import os
import signal

import pytest
import trio

from clients.players import make_player
from clients.sdk import (DEFAULT_URL, BotSession, ServerError, Stopped, request_once, run_bot, seat_options,
                         stop_on_signals)
from tests.server.conftest import _quiet_server_logs, server, url  # noqa: F401 (fixtures)


@pytest.mark.parametrize(
    "argv",
    [
        ["--url", "ws://h:1", "--table", "t3", "--token", "k"],
        ["--url=ws://h:1", "--table=t3", "--token=k"],
        ["--verbose", "--url", "ws://h:1", "--depth", "3", "--table=t3", "--token", "k"],  # the bot's own, left alone
    ],
)
def test_seat_options_read_both_argument_forms(argv):
    assert seat_options(argv, {}) == {"url": "ws://h:1", "table": "t3", "token": "k"}


def test_seat_options_fall_back_on_the_environment_then_the_default_url():
    env = {"PARSIMONIA_URL": "ws://e:2", "PARSIMONIA_TABLE": "t5", "PARSIMONIA_TOKEN": "secret"}
    assert seat_options([], env) == {"url": "ws://e:2", "table": "t5", "token": "secret"}
    assert seat_options(["--table", "t9"], env) == {"url": "ws://e:2", "table": "t9", "token": "secret"}
    assert seat_options([], {}) == {"url": DEFAULT_URL, "table": None, "token": None}


def test_seat_options_do_not_take_an_abbreviation():
    assert seat_options(["--tab", "t1"], {})["table"] is None


async def test_run_bot_takes_the_seat_named_on_its_command_line(server, monkeypatch, autojump_clock):
    table = (await request_once(url(server), "create", game="parsimonia", seats=2, seed=1))["table"]
    monkeypatch.setattr("sys.argv", ["turingbot.py", "--url", url(server), "--table", table])
    async with trio.open_nursery() as nursery:
        nursery.start_soon(run_bot, None, make_player("greedy", 1))
        await trio.sleep(1)
        assert server.lobby.tables[table].summary()["taken"] == 1
        nursery.cancel_scope.cancel()


async def test_a_bot_stopped_before_the_start_gives_its_seat_back(server, autojump_clock):
    table = (await request_once(url(server), "create", game="parsimonia", seats=2))["table"]
    bot = BotSession(url(server), make_player("greedy", 0), table=table)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(bot.run)
        await bot.joined.wait()
        assert server.lobby.tables[table].summary()["taken"] == 1
        nursery.cancel_scope.cancel()
    await trio.sleep(1)
    assert server.lobby.tables[table].summary()["taken"] == 0


def test_stop_on_signals_returns_what_the_game_returns_and_lets_its_errors_through_as_they_are():
    async def result() -> str:
        return "over"

    async def refused() -> str:
        raise ServerError({"code": "no_such_table", "message": "none"})

    assert trio.run(stop_on_signals, result) == "over"
    with pytest.raises(ServerError):  # not wrapped in an exception group
        trio.run(stop_on_signals, refused)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_stop_on_signals_cancels_the_game_as_ctrl_c_would_then_says_which_signal(signum):
    cancelled: list[bool] = []
    before = signal.getsignal(signum)
    if before is signal.SIG_IGN:
        pytest.skip(f"the suite runs with {signum!r} ignored (nohup): a bot so started keeps ignoring it")

    async def game() -> None:
        try:
            os.kill(os.getpid(), signum)
            await trio.sleep_forever()
        except trio.Cancelled:
            cancelled.append(True)  # where a waiting bot gives its seat back
            raise

    with pytest.raises(Stopped) as stopped:
        trio.run(stop_on_signals, game)
    assert stopped.value.signum == signum and cancelled == [True]
    assert str(stopped.value) == f"stopped ({signal.Signals(signum).name})"
    assert signal.getsignal(signum) is before  # given back as it was
