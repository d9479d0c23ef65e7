"""``parsimonia replay FILE``: a finished game's journal re-runs to its recorded result, and any tampering
with it fails loudly."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import trio

from server.runtime.app import Server, ServerConfig
from server.cli.main import main
from server.cli.demo import demo
from server.storage.journal import encode_record, read_journal, read_log
from server.cli.replay import replay_file
from server.core.match import Match
from tests.server.conftest import BANK


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> tuple[Path, dict[str, Any]]:
    """One whole game of demo bots on a server with a data directory: its replay file and the demo's result."""
    root = tmp_path_factory.mktemp("data")

    async def play() -> dict[str, Any]:
        async with trio.open_nursery() as nursery:
            server = await nursery.start(Server(ServerConfig(port=0, data_dir=str(root), sync="write")).run)
            out = await demo(players=3, seed=5, time_scale=4000, url=f"ws://127.0.0.1:{server.port}")
            nursery.cancel_scope.cancel()
        return out

    out = trio.run(play)
    path = root / "replays" / f"{out['table']}.journal"
    assert path.exists() and not read_log(str(root / "log")).tables
    return path, out


@pytest.fixture
def journal(finished, tmp_path) -> Path:
    """A copy of the finished game's journal that a test may change."""
    copy = tmp_path / "t1.journal"
    shutil.copy(finished[0], copy)
    return copy


def rewrite(path: Path, records: list[dict[str, Any]]) -> None:
    """Write records with valid frames: tampering that the checksums cannot see."""
    path.write_bytes(b"".join(encode_record(r) for r in records))


def replay(path: Path, quiet: bool = False) -> tuple[int, list[str]]:
    lines: list[str] = []
    return replay_file(str(path), quiet=quiet, out=lines.append), lines


def run_cli(capsys, *argv: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as info:
        main(["replay", *argv])
    return info.value.code, capsys.readouterr().out


# ------------------------------------------------------------------ a faithful journal


def test_replay_reproduces_the_finished_game(finished):
    path, out = finished
    status, lines = replay(path)
    assert status == 0
    assert lines[-1] == "replay reproduces the recorded result"
    result = json.loads(lines[-2])
    for key in ("dollars", "company_dollars", "winners", "reason", "turns", "actions", "game_ms", "digest", "seed"):
        assert result[key] == out[key], key
    assert sum(result["dollars"]) + result["company_dollars"] == BANK
    assert out["actions"] > 50 and out["reason"] == "clock"
    events = lines[:-2]  # one line per event, in words, stamped with the game time
    assert events[0] == "[   0:00] game started: greedy-0 (seat 0), greedy-1 (seat 1), greedy-2 (seat 2)"
    assert "game over" in events[-1] and all(line.startswith("[") for line in events)


def test_cli_replay_exits_0_and_quiet_prints_only_the_result(finished, capsys):
    path, out = finished
    code, printed = run_cli(capsys, str(path))
    assert code == 0 and printed.splitlines()[-1] == "replay reproduces the recorded result"
    code, printed = run_cli(capsys, "--quiet", str(path))
    lines = printed.splitlines()
    assert code == 0 and len(lines) == 2
    assert json.loads(lines[0])["digest"] == out["digest"]


def test_the_journal_holds_what_the_game_did(finished):
    path, out = finished
    records = read_journal(str(path)).records
    kinds = [r["k"] for r in records]
    assert kinds[0] == "table" and kinds[1:4] == ["join"] * 3 and kinds[4] == "start" and kinds[-1] == "end"
    assert kinds.count("cmd") == out["actions"]
    assert records[-1]["result"]["digest"] == out["digest"]
    assert all(a["at"] <= b["at"] for a, b in zip(records[4:], records[5:]))  # time never goes back


# ------------------------------------------------------------------ tampering


def test_a_bid_amount_no_one_could_pay_fails_with_status_1(journal, capsys):
    records = read_journal(str(journal)).records
    n = next(i for i, r in enumerate(records) if r["k"] == "cmd" and r["command"]["type"] == "bid")
    records[n]["command"]["amount"] = 10**9
    rewrite(journal, records)
    status, lines = replay(journal)
    assert status == 1 and len(lines) == 1
    assert lines[0].startswith("REPLAY FAILED: ") and f"record {n + 1} (cmd) does not replay" in lines[0]
    code, printed = run_cli(capsys, str(journal))
    assert code == 1 and printed.startswith("REPLAY FAILED")


def test_a_winning_bid_one_dollar_higher_changes_the_result_and_fails(journal):
    """A change the rules still accept: the replay goes on, and the recorded result gives it away."""
    records = read_journal(str(journal)).records
    table = Match.replay(records)
    sold = [e.data for _, _, e in table.history if e.type == "auction_closed" and e.data["outcome"] == "sold"]
    assert sold
    target = None
    for sale in sold:
        bids = [i for i, r in enumerate(records) if r["k"] == "cmd" and r["command"]["type"] == "bid"
                and r["command"]["auction"] == sale["auction"] and r["seat"] == sale["winner"]
                and r["command"]["amount"] == sale["price"]]
        if bids:
            target = bids[-1]
            break
    assert target is not None
    records[target]["command"]["amount"] += 1
    rewrite(journal, records)
    status, lines = replay(journal)
    assert status == 1 and lines[0].startswith("REPLAY FAILED: record ")


@pytest.mark.parametrize("field", ["dollars", "digest", "winners"])
def test_a_changed_recorded_result_fails_with_status_1(journal, capsys, field):
    records = read_journal(str(journal)).records
    result = records[-1]["result"]
    result[field] = {"dollars": [d + 1 for d in result["dollars"]], "digest": "0" * 64,
                     "winners": [w + 1 for w in result["winners"]]}[field]
    rewrite(journal, records)
    code, printed = run_cli(capsys, str(journal))
    assert code == 1
    assert printed.startswith("REPLAY FAILED") and "the journal says" in printed


def test_a_changed_seed_fails(journal):
    records = read_journal(str(journal)).records
    records[0]["seed"] += 1
    rewrite(journal, records)
    assert replay(journal)[0] == 1


def test_a_damaged_journal_or_a_missing_file_fails_with_status_1(journal, tmp_path, capsys):
    data = bytearray(journal.read_bytes())
    data[len(data) // 2] ^= 0xFF
    journal.write_bytes(bytes(data))
    status, lines = replay(journal)
    assert status == 1 and lines[0].startswith("REPLAY FAILED") and "t1.journal" in lines[0]
    code, printed = run_cli(capsys, str(tmp_path / "nothing.journal"))
    assert code == 1 and printed.startswith("REPLAY FAILED")
    (tmp_path / "empty.journal").write_bytes(b"")
    assert replay(tmp_path / "empty.journal") == (1, [f"REPLAY FAILED: {tmp_path / 'empty.journal'}: no table "
                                                      "record at its start"])


def test_a_flipped_byte_in_the_recorded_result_fails_rather_than_replaying_as_unfinished(journal):
    data = bytearray(journal.read_bytes())
    data[-3] ^= 0x01  # in the last record: the end, with the result
    journal.write_bytes(bytes(data))
    status, lines = replay(journal)
    assert status == 1 and lines[0].startswith("REPLAY FAILED") and "checksum" in lines[0]


# ------------------------------------------------------------------ unfinished games


def test_an_unfinished_journal_replays_and_says_so(journal):
    records = read_journal(str(journal)).records
    half = records[: len(records) // 2]
    rewrite(journal, half)
    status, lines = replay(journal, quiet=True)
    assert status == 0
    assert lines == [f"unfinished game: {len(half)} records replayed; there is no recorded result to check"]
    # and with its last record cut short, as a crash leaves it
    with open(journal, "ab") as f:
        f.write(encode_record(records[len(half)])[:-2])
    status, lines = replay(journal, quiet=True)
    assert status == 0 and len(lines) == 2
    assert lines[0].startswith("note: the journal's last record was cut short") and "unfinished game" in lines[1]
