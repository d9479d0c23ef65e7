"""The ``history`` request: a table's events after a seq, page by page, each redacted for who asks.

A long game (20,000 events and more: one auction bid up a dollar at a time) is paged over the network from a
server that recovered it from its log, so the older pages come from the records replayed once; the pages
are in order, none missing, each within the frame limit.
"""

from __future__ import annotations

from typing import Any

import msgpack
import trio

from protocol.codec import Limits
from protocol.messages import HISTORY_PAGE, HISTORY_PAGE_BYTES, check_server
from server.games import Event
from server.runtime.history import Entry, HistoryCache, cut, page, replayed
from server.storage.journal import encode_record, write_file
from server.storage.journal_format import StartRecord
from server.core.match import Match
from server.core.session import Session
from server.storage.datadir import DataDir
from tests.server.conftest import connect, join
from tests.toy_game import toy  # noqa: F401 (the fixture)

RICH = {"start_dollars": 50_000, "bank": 1_000_000}


def long_game(bids: int) -> tuple[Match, list[dict[str, Any]]]:
    """A 3-seat Parsimonia opening where seat 0 sells one card and seats 1 and 2 outbid each other ``bids``
    times, a dollar and a millisecond apart; the match and every record it wrote."""
    match = Match("t1", "parsimonia", 3, seed=5, options=RICH)
    records = [match.header()]
    for name in ("Ann", "Bo", "Cy"):
        match.join(name)
    match.apply(StartRecord(10))
    card = _cards_to_sell(match)[0]
    answer = match.act(0, {"type": "auction", "card": card, "start_price": 1}, 20)
    auction = answer["created"]["auction"]
    for n in range(bids):
        match.act(1 + n % 2, {"type": "bid", "auction": auction, "amount": 2 + n}, 21 + n)
    records += match.take_records()
    return match, records


def _cards_to_sell(match: Match) -> list[int]:
    return [a["card"] for a in Session(match).legal(0) if a["type"] == "auction"]


def unpack(frame: bytes) -> dict[str, Any]:
    return msgpack.unpackb(frame, raw=False)


def test_the_ok_to_an_auction_names_the_auction_it_opened() -> None:
    match = Match("t1", "parsimonia", 3, seed=5, options=RICH)
    for name in ("Ann", "Bo", "Cy"):
        match.join(name)
    match.apply(StartRecord(10))
    hand = _cards_to_sell(match)
    first = match.act(0, {"type": "auction", "card": hand[0], "start_price": 1}, 20)
    second = match.act(0, {"type": "auction", "card": hand[1], "start_price": 1}, 30)
    opened = [e.data["auction"]["id"] for _, _, e in match.history if e.type == "auction_opened"]
    assert [first["created"], second["created"]] == [{"auction": opened[0]}, {"auction": opened[1]}]
    bid = match.act(1, {"type": "bid", "auction": opened[0], "amount": 2}, 40)
    assert "created" not in bid and bid["events"] == 1


def test_a_replay_of_the_records_makes_every_event_the_table_sent() -> None:
    match, records = long_game(300)
    live = [Entry.of(seq, at, event) for seq, at, event in match.history]
    assert replayed(records) == live
    assert [e.seq for e in live] == list(range(1, match.seq + 1))


def test_a_page_stops_at_its_limit_and_at_its_bytes_but_holds_one_event_at_least() -> None:
    small = [Entry.of(n, n, Event("bid", n, {"amount": n})) for n in range(1, 401)]
    assert len(cut(small, None, HISTORY_PAGE)) == HISTORY_PAGE
    assert len(cut(small, None, 10)) == 10
    big = [Entry.of(n, n, Event("note", n, {"text": "x" * 20_000})) for n in range(1, 5)]
    assert sum(map(len, cut(big, None, HISTORY_PAGE))) <= HISTORY_PAGE_BYTES
    huge = [Entry.of(1, 1, Event("note", 1, {"text": "x" * (HISTORY_PAGE_BYTES + 10)}))]
    assert len(cut(huge, None, HISTORY_PAGE)) == 1


async def test_each_asker_gets_the_events_in_the_form_its_seat_saw(toy) -> None:
    match = Match("t1", toy.NAME, 2, seed=1)
    for name in ("Ann", "Bo"):
        match.join(name)
    match.apply(StartRecord(0))
    match.act(0, {"type": "choose", "value": 42}, 5)
    frames = {}
    for seat in (0, 1, None):
        frames[seat] = unpack(await page(HistoryCache(), match, None, seat, 0, 10, re=3))
    chose = {seat: next(e["event"] for e in f["events"] if e["event"]["type"] == "chose") for seat, f in frames.items()}
    assert chose[0]["value"] == 42
    assert "value" not in chose[1] and "value" not in chose[None]
    assert all(check_server(f) and f["re"] == 3 and "next" not in f for f in frames.values())


async def test_a_table_without_a_journal_says_how_many_events_it_no_longer_holds() -> None:
    match, _ = long_game(50)
    del match.history[:30]
    answer = unpack(await page(HistoryCache(), match, None, None, 0, HISTORY_PAGE, re=None))
    assert answer["skipped"] == 30
    assert [e["seq"] for e in answer["events"]] == list(range(31, match.seq + 1))


async def test_history_pages_a_20000_event_table_in_order_each_page_within_the_frame_limit(
        autojump_clock, start_server, tmp_path) -> None:
    match, records = long_game(20_000)
    assert match.seq > 20_000
    data = DataDir(str(tmp_path))
    data.syncer.compact({"t1": [encode_record(r) for r in records]})
    data.close()
    server = await start_server(data_dir=str(tmp_path))
    table = server.lobby.get("t1")
    assert len(table.match.history) < match.seq  # recovered, it holds only the latest events in memory
    async with connect(server, "reader") as reader:
        received: list[dict[str, Any]] = []
        after, pages = 0, 0
        while True:
            answer = await reader.request("history", table="t1", after=after)
            check_server(answer)
            assert len(msgpack.packb(answer, use_bin_type=True)) <= Limits().max_frame_bytes
            assert answer["last_seq"] == match.seq and "skipped" not in answer
            received += answer["events"]
            pages += 1
            if "next" not in answer:
                break
            after = answer["next"]
        assert server.lobby.history_cache.replays == 1  # paging through replayed the records once
    assert received == [{"seq": seq, "time": at, "event": event.wire_for(None)} for seq, at, event in match.history]
    assert pages >= match.seq // HISTORY_PAGE


async def test_a_seated_connection_pages_its_own_private_events_whole(autojump_clock, start_server, toy) -> None:
    server = await start_server()
    async with connect(server, "ann") as ann, connect(server, "bo") as bo:
        table = (await ann.request("create", game=toy.NAME, seats=2))["table"]
        await join(ann, table)
        await join(bo, table)
        ok = await ann.request("act", table=table, command={"type": "choose", "value": 42})
        mine = await ann.request("history", table=table, after=ok["seq"] - 1, limit=1)
        theirs = await bo.request("history", table=table, after=ok["seq"] - 1, limit=1)
    assert mine["events"][0]["event"]["value"] == 42 and mine["last_seq"] == ok["seq"] and "next" not in mine
    assert "value" not in theirs["events"][0]["event"]


async def test_history_of_an_unknown_table_is_refused(autojump_clock, server) -> None:
    async with connect(server) as client:
        answer = await client.request("history", table="t404", after=0)
    assert answer["code"] == "no_such_table"


async def test_a_finished_table_pages_its_whole_game_from_its_replay_file(autojump_clock, start_server, toy,
                                                                          tmp_path) -> None:
    server = await start_server(data_dir=str(tmp_path))
    async with connect(server, "ann") as ann, connect(server, "bo") as bo, connect(server, "eve") as eve:
        table = (await ann.request("create", game=toy.NAME, seats=2))["table"]
        await join(ann, table)
        await join(bo, table)
        for player, value in ((ann, 7), (bo, 9)):
            await player.request("act", table=table, command={"type": "choose", "value": value})
        await ann.event("result")
        while len(server.lobby.get(table).match.history) > 1:
            await trio.sleep(0.01)  # until the table is retired: only its result in memory
        answer = await eve.request("history", table=table, after=0)
    assert [e["event"]["type"] for e in answer["events"]] == ["game_started", "chose", "chose", "revealed", "result"]
    assert all("value" not in e["event"] for e in answer["events"] if e["event"]["type"] == "chose")
    assert server.lobby.history_cache.replays == 1


async def test_a_game_finished_before_a_restart_pages_from_its_replay_file(autojump_clock, start_server, toy,
                                                                           tmp_path) -> None:
    match = Match("t9", toy.NAME, 2, seed=1)
    records = [match.header()]
    for name in ("Ann", "Bo"):
        match.join(name)
    match.apply(StartRecord(0))
    for seat, value in ((0, 7), (1, 9)):
        match.act(seat, {"type": "choose", "value": value}, 5 + seat)
    records += match.take_records()
    (tmp_path / "replays").mkdir()
    write_file(str(tmp_path / "replays" / "t9.journal"), [encode_record(r) for r in records])
    (tmp_path / "replays" / "t8.journal").write_bytes(b"not a journal at all")
    server = await start_server(data_dir=str(tmp_path))
    async with connect(server) as client:
        answer = await client.request("history", table="t9", after=1, limit=2)
        broken = await client.request("history", table="t8", after=0)
        outside = await client.request("history", table="../replays/t9", after=0)
    assert [e["event"]["type"] for e in answer["events"]] == ["chose", "chose"]
    assert answer["last_seq"] == match.seq and answer["next"] == 3
    assert all("value" not in e["event"] for e in answer["events"])  # as a spectator saw them
    assert broken["code"] == "internal" and outside["code"] == "bad_field"  # not a table id
