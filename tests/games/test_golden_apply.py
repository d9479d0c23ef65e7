"""Every golden game, as a journal: its records, through the record codec and back, folded through
``Match.apply`` alone, reach the stored digest and result."""

from __future__ import annotations

from typing import Any

import pytest

from server.storage.journal_format import (FRAME, CmdRecord, EndRecord, Input, JoinRecord, StartRecord, TableRecord, TickRecord,
                                   decode_record, encode_record)
from server.core.match import OVER, Match
from server.cli.simulate import player_kinds
from tests.games.golden import Goldens
from tests.games.kupcy.make_golden import GOLDENS as KUPCY
from tests.games.parsimonia.make_golden import GOLDENS as PARSIMONIA
from tests.games.tulips.make_golden import GOLDENS as TULIPS

CASES = [(goldens, name) for goldens in (PARSIMONIA, KUPCY, TULIPS) for name in sorted(goldens.cases)]


def journal(goldens: Goldens, doc: dict[str, Any]) -> tuple[TableRecord, list[Input]]:
    """The journal the live table would have written for the golden game (as ``server.cli.simulate`` seats it)."""
    head = TableRecord("sim", goldens.game, doc["players"], doc["seed"], doc["time_scale"], doc["options"] or {})
    kinds = player_kinds(doc["players"], doc["kind"])
    inputs: list[Input] = [JoinRecord(f"{kind}-{s}", f"seat{s}") for s, kind in enumerate(kinds)]
    inputs.append(StartRecord(0))
    for entry in doc["log"]:
        inputs.append(TickRecord(entry[1]) if entry[0] == "tick" else CmdRecord(entry[1], entry[2], entry[3]))
    return head, inputs


@pytest.mark.parametrize(("goldens", "name"), CASES, ids=[f"{g.game}-{n}" for g, n in CASES])
def test_a_golden_journal_folds_through_apply_to_its_digest_and_result(goldens: Goldens, name: str) -> None:
    doc = goldens.load(name)
    head, inputs = journal(goldens, doc)
    read = [decode_record(encode_record(record)[FRAME.size:]) for record in inputs]  # as the log gives them back
    assert read == inputs
    match = Match.of(head)
    for record in read:
        match.apply(record)
    assert match.state == OVER and match.result is not None and match.engine is not None
    assert match.engine.digest() == doc["digest"] == match.result["digest"]
    assert {key: match.result[key] for key in doc["result"]} == doc["result"]
    assert match.actions == sum(entry[0] == "cmd" for entry in doc["log"])
    written = match.take_records()  # what it journaled: each input as applied, then its end
    assert written[:-1] == inputs and written[-1] == EndRecord(match.engine.now, match.result)
