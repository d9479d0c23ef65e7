"""The bot shown in docs/bots.md ("In Python") really plays: its code is taken from the page
and run against a live server, two of it at one table, to the end of a short game."""

from __future__ import annotations

import re
from pathlib import Path

import trio

from clients.sdk import BotSession
from tests.server.conftest import BANK, SHORT, _quiet_server_logs, server, url  # noqa: F401 (fixtures)

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "bots.md").read_text()


def readme_bot_class() -> type:
    section = PAGE.split("## In Python", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    definitions = code.split("\nresult = play(")[0]  # the class, without the line that connects
    namespace: dict = {}
    exec(compile(definitions, "docs/bots.md", "exec"), namespace)
    return namespace["Cautious"]


async def test_the_readme_bot_plays_a_whole_game(server, autojump_clock):
    bot_class = readme_bot_class()
    create = {"seed": 8, "options": SHORT}
    bots = [BotSession(url(server), bot_class(), name="cautious-0", seats=2, create_options=create)]
    with trio.fail_after(3600):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(bots[0].run)
            await bots[0].joined.wait()
            bots.append(BotSession(url(server), bot_class(), name="cautious-1", table=bots[0].seat.table))
            nursery.start_soon(bots[1].run)
    result = bots[0].result
    assert result is not None and result == bots[1].result and result["over"]
    assert sum(result["dollars"]) + result["company_dollars"] == BANK
    assert bots[0].actions > 0 and bots[1].actions > 0
