"""``parsimonia replay FILE``: re-run a journal through the match and check it against its record."""

from __future__ import annotations

import json
from typing import Callable

from clients.games import words_for
from clients.narrate import seat_names
from clients.watch import Spectator
from server.storage.journal_format import JournalCorrupt, read_journal
from server.core.match import Match, ReplayMismatch


def replay_file(path: str, quiet: bool = False, out: Callable[[str], None] = print) -> int:
    """Print the game's events and result; exit status 1 (and say why) if it does not reproduce."""
    try:
        read = read_journal(path)
        if not read.records or read.records[0].get("k") != "table":
            raise JournalCorrupt(f"{path}: no table record at its start")
        match = Match.replay(read.records)
    except (OSError, JournalCorrupt, ReplayMismatch) as exc:
        out(f"REPLAY FAILED: {exc}")
        return 1
    if not quiet:
        spectator = Spectator(out)
        spectator.static, spectator.words = match.static, words_for(match.game_name)
        spectator.names = seat_names([{"seat": s.index, "name": s.name} for s in match.seats]) or []
        for seq, at, event in match.history:
            if event.type != "result":
                spectator.on_event({"table": match.id, "seq": seq, "time": at, "event": event.to_wire()})
    if read.torn:
        out(f"note: the journal's last record was cut short and was ignored ({read.valid_bytes} bytes kept)")
    if match.result is None:
        out(f"unfinished game: {len(read.records)} records replayed; there is no recorded result to check")
        return 0
    out(json.dumps(match.result, sort_keys=True))
    out("replay reproduces the recorded result")
    return 0
