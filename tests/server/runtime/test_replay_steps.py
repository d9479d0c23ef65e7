"""The ``replay`` request: a finished game step by step, each event whole with the public view and every seat's
private view as they stood; nothing of a game before it is over; pages within the frame limit."""

from __future__ import annotations

from typing import Any

import msgpack
import trio

from protocol.messages import HISTORY_PAGE_BYTES, check_server
from server.storage.journal import encode_record, write_file
from server.storage.journal_format import CloseRecord, Record, StartRecord
from server.transport.limits import AddressBuckets
from server.core.match import Match
from server.runtime.replay_steps import fold, page
from tests.server.conftest import connect, join
from tests.server.runtime.test_history import long_game
from tests.server.transport.test_transport_http import Client, web_root  # noqa: F401 (the fixture)
from tests.toy_game import toy  # noqa: F401 (the fixture)


def toy_records(name: str, table: str = "t9") -> tuple[Match, list[Record]]:
    """A finished two-seat toy game (sealed numbers 7 and 9, then the reveal) and its records."""
    match = Match(table, name, 2, seed=1)
    records: list[Record] = [match.header()]
    for who in ("Ann", "Bo"):
        match.join(who)
    match.apply(StartRecord(0))
    for seat, value in ((0, 7), (1, 9)):
        match.act(seat, {"type": "choose", "value": value}, 5 + seat)
    records += match.take_records()
    return match, records


def steps_of(frame: bytes) -> dict[str, Any]:
    return msgpack.unpackb(frame, raw=False)


def test_each_step_is_its_event_whole_with_every_seats_view_as_it_stood(toy) -> None:
    _, records = toy_records(toy.NAME)
    folded = fold(records)
    assert folded is not None
    answer = steps_of(page("t9", folded, 0, 256, 4))
    assert check_server(answer) and answer["re"] == 4 and "next" not in answer
    steps = answer["steps"]
    assert [s["seq"] for s in steps] == list(range(1, 6))
    assert [s["event"]["type"] for s in steps] == ["game_started", "chose", "chose", "revealed", "result"]
    assert [s["event"].get("value") for s in steps[1:3]] == [7, 9]  # the sealed choices, whole: the game is over
    assert steps[1]["private"] == [{"mine": 7}, {"mine": None}]  # seat 1 had not chosen yet
    assert steps[1]["view"]["chosen"] == [0] and steps[1]["view"]["numbers"] is None
    assert steps[2]["private"] == [{"mine": 7}, {"mine": 9}]
    assert steps[-1]["view"]["result"]["winners"] == [1] and steps[-1]["event"]["result"]["winners"] == [1]
    assert answer["game"] == toy.NAME and answer["last_seq"] == 5 and "static" in answer


def test_records_that_do_not_reach_the_end_give_no_step(toy) -> None:
    _, records = toy_records(toy.NAME)
    assert fold(records[:-2]) is None  # one seat has not chosen: the game is not over


def test_pages_hold_every_step_once_in_order_each_within_the_frame_limit() -> None:
    match, records = long_game(3000)
    match.apply(CloseRecord(5000))  # the organiser closes it: over, with no winner
    folded = fold(records + match.take_records())
    assert folded is not None
    seqs: list[int] = []
    after, pages = 0, 0
    while True:
        frame = page("t1", folded, after, 256, None)
        answer = steps_of(frame)
        assert check_server(answer) and len(frame) <= HISTORY_PAGE_BYTES + 1024  # the envelope around the steps
        assert "view" in answer["steps"][0] and "private" in answer["steps"][0]  # a page starts with its views
        seqs += [s["seq"] for s in answer["steps"]]
        pages += 1
        if "next" not in answer:
            break
        after = answer["next"]
    assert seqs == list(range(1, match.seq + 1)) and pages > 1
    assert len(steps_of(page("t1", folded, 10, 3, None))["steps"]) == 3


def test_a_step_leaves_out_the_views_it_shares_with_the_step_before(toy) -> None:
    _, records = toy_records(toy.NAME)
    folded = fold(records)
    assert folded is not None
    steps = steps_of(page("t9", folded, 0, 256, None))["steps"]
    # the reveal and the result come from the same command as the second choice: one state after the three
    # (the result adds itself to the public view, so the last step has views again)
    assert "view" in steps[2] and "view" not in steps[3] and "view" in steps[4]
    assert "view" in steps_of(page("t9", folded, 3, 256, None))["steps"][0]  # but a page starts with them


async def test_a_running_table_has_no_replay_and_shows_nothing_of_it(autojump_clock, start_server, toy,
                                                                      tmp_path) -> None:
    server = await start_server(data_dir=str(tmp_path))
    async with connect(server, "ann") as ann, connect(server, "bo") as bo, connect(server, "eve") as eve:
        table = (await ann.request("create", game=toy.NAME, seats=2))["table"]
        waiting = await eve.request("replay", table=table, after=0)
        await join(ann, table)
        await join(bo, table)
        await ann.request("act", table=table, command={"type": "choose", "value": 7})
        running = await eve.request("replay", table=table, after=0)
        unknown = await eve.request("replay", table="t404", after=0)
        await bo.request("act", table=table, command={"type": "choose", "value": 9})
        await ann.event("result")
        while len(server.lobby.get(table).match.history) > 1:
            await trio.sleep(0.01)  # until the table is retired: its records are its replay file's
        over = await eve.request("replay", table=table, after=0, limit=2)
        rest = await eve.request("replay", table=table, after=over["next"])
    for refused in (waiting, running):
        assert refused["type"] == "error" and refused["code"] == "bad_field" and "steps" not in refused
        assert "its replay opens once its game is over" in refused["message"]
    assert unknown["code"] == "no_such_table"
    assert check_server(over) and [s["seq"] for s in over["steps"] + rest["steps"]] == [1, 2, 3, 4, 5]
    assert over["steps"][1]["event"]["value"] == 7 and "next" not in rest
    assert server.replays.folds == 1  # paging folded the game once


async def test_a_game_finished_before_a_restart_replays_from_its_replay_file(autojump_clock, start_server, toy,
                                                                             tmp_path) -> None:
    _, records = toy_records(toy.NAME)
    (tmp_path / "replays").mkdir()
    write_file(str(tmp_path / "replays" / "t9.journal"), [encode_record(r) for r in records])
    (tmp_path / "replays" / "t8.journal").write_bytes(b"not a journal at all")
    write_file(str(tmp_path / "replays" / "t7.journal"), [encode_record(r) for r in records[:-2]])
    server = await start_server(data_dir=str(tmp_path))
    async with connect(server) as client:
        answer = await client.request("replay", table="t9", after=0)
        broken = await client.request("replay", table="t8", after=0)
        unfinished = await client.request("replay", table="t7", after=0)
        outside = await client.request("replay", table="../replays/t9", after=0)
    assert [s["event"]["type"] for s in answer["steps"]] == ["game_started", "chose", "chose", "revealed", "result"]
    assert broken["code"] == "internal" and outside["code"] == "bad_field"  # not a table id: nothing read
    assert unfinished["code"] == "unavailable" and "steps" not in unfinished


async def test_an_address_that_had_many_games_folded_waits_but_gets_those_folded_at_once(
        autojump_clock, start_server, toy, tmp_path) -> None:
    (tmp_path / "replays").mkdir()
    for table in ("t8", "t9"):
        _, records = toy_records(toy.NAME, table)
        write_file(str(tmp_path / "replays" / f"{table}.journal"), [encode_record(r) for r in records])
    server = await start_server(data_dir=str(tmp_path))
    server.replays.budget = AddressBuckets(rate=1.0, burst_s=1.0)  # 1 ms of folding at once, 1 ms a second
    async with connect(server) as client, connect(server) as other:
        first = await client.request("replay", table="t9", after=0)
        second = await other.request("replay", table="t8", after=0)  # the same address: its budget is spent
        again = await other.request("replay", table="t9", after=2)  # folded already: no CPU to spend
        await trio.sleep(5)
        later = await other.request("replay", table="t8", after=0)
    assert first["type"] == "replay" and again["type"] == "replay" and later["type"] == "replay"
    assert second["code"] == "rate_limited" and "steps" not in second
    assert server.replays.folds == 2


async def test_a_table_of_a_server_without_journals_has_no_replay(autojump_clock, server, toy) -> None:
    async with connect(server, "ann") as ann, connect(server, "bo") as bo:
        table = (await ann.request("create", game=toy.NAME, seats=2))["table"]
        await join(ann, table)
        await join(bo, table)
        for player, value in ((ann, 7), (bo, 9)):
            await player.request("act", table=table, command={"type": "choose", "value": value})
        await ann.event("result")
        while len(server.lobby.get(table).match.history) > 1:
            await trio.sleep(0.01)
        answer = await ann.request("replay", table=table, after=0)
    assert answer["code"] == "bad_field" and "keeps no journal" in answer["message"]


async def test_the_replay_page_is_served_at_replay_and_the_table_id(start_server, web_root) -> None:  # noqa: F811
    (web_root / "replay.html").write_text("<!doctype html><title>replay</title>")
    server = await start_server(web_root=str(web_root))
    client = await Client.open(server)
    for target in ("/replay/t1", "/replay/w2-t14?from=lobby", "/replay.html"):
        status, headers, body = await client.get(target)
        assert status == 200 and body == b"<!doctype html><title>replay</title>", target
        assert headers["content-type"].startswith("text/html")
    for target in ("/replay/", "/replay/t1/x", "/replay/..%2Findex.html"):
        status, _, body = await client.get(target)
        assert b"replay</title>" not in body, target
