"""A match's inputs as the journal keeps them: frozen typed records (``JoinRecord``, ``CmdRecord``, ...), one per
kind, and their one codec, a msgpack map whose ``k`` field is the kind. ``Match.apply`` takes them, replay folds
them; the storage layer frames them (``server.storage.journal_format``) and reads them back as maps, which
``typed`` checks field by field when a match takes one, so copying and setting aside never depend on the kinds a
version knows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Union

import msgspec

if TYPE_CHECKING:
    from protocol.values import Command, Options, Result
else:  # what the decoder checks of the open maps: string keys (the rules check a command's own fields)
    Command = Options = Result = dict[str, Any]


class _Record(msgspec.Struct, frozen=True, tag_field="k", omit_defaults=True):
    """A journal record: one input of a match (or its header, or its end), written as a msgpack map whose ``k``
    is the kind and whose other keys are the fields, in order; a field at its default is left out."""


class TableRecord(_Record, frozen=True, tag="table"):
    """A journal's first record: everything needed to make its match again."""

    id: str
    game: str
    seats: int
    seed: int
    time_scale: float
    options: Options  # as the creator gave them (the defaults are filled in again on replay)
    seeded: bool = False


class JoinRecord(_Record, frozen=True, tag="join"):
    name: str
    token: str
    key: str | None = None  # the client's join key: the same join again gets the same seat


class LeaveRecord(_Record, frozen=True, tag="leave"):
    seat: int


class StartRecord(_Record, frozen=True, tag="start"):
    at: int


class CmdRecord(_Record, frozen=True, tag="cmd"):
    """A seat's command, as the rules accepted it (a refused one is never journaled)."""

    at: int
    seat: int
    command: Command
    key: str | None = None  # the client's key for it: the same command sent again gets the same answer


class TickRecord(_Record, frozen=True, tag="tick"):
    """The deadlines due at ``at`` fire."""

    at: int


class PauseRecord(_Record, frozen=True, tag="pause"):
    at: int
    hold: bool = False  # the clocks wait for the players (a tournament's hold), nobody paused them by hand


class UnpauseRecord(_Record, frozen=True, tag="unpause"):
    at: int


class ResumeRecord(UnpauseRecord, frozen=True, tag="resume"):
    """An unpause, as journals written before the rename spell it."""


class CloseRecord(_Record, frozen=True, tag="close"):
    at: int
    ended: str = "closed"  # or "expired": nobody joined in time


class EndRecord(_Record, frozen=True, tag="end"):
    """The match is over: the result as it was told (a replay must reach the same)."""

    at: int
    result: Result


# one record of a journal, as written and as read back (``decode_record`` checks each field's type)
Record = Union[TableRecord, JoinRecord, LeaveRecord, StartRecord, CmdRecord, TickRecord, PauseRecord, UnpauseRecord,
               ResumeRecord, CloseRecord, EndRecord]
# an input of a match: every record but the header
Input = Union[JoinRecord, LeaveRecord, StartRecord, CmdRecord, TickRecord, PauseRecord, UnpauseRecord, CloseRecord,
              EndRecord]


# a record as the storage layer reads it back: a map with a ``k``, checked field by field only when a match takes it
# (``typed``), so that copying, compacting and setting aside never depend on the kinds this version knows
RawRecord = dict[str, object]


def typed(record: Record | RawRecord) -> Record:
    """A record read back, as the typed record it is; ``ValueError`` (``msgspec.ValidationError``) if it is
    not one (an unknown kind, a field missing or of the wrong type)."""
    return record if isinstance(record, _Record) else _convert(record, Record)


def kind_of(record: Record) -> str:
    """A record's kind: its ``k``."""
    return str(type(record).__struct_config__.tag)


def record_at(record: Record | RawRecord) -> int:
    """A record's time; 0 for the records that have none (table, join, leave)."""
    at = record.get("at", 0) if isinstance(record, dict) else getattr(record, "at", 0)
    return at if isinstance(at, int) else 0


encode = msgspec.msgpack.Encoder().encode  # the one codec: a record's bytes, and back (typed, checked)
_decode = msgspec.msgpack.Decoder(Record).decode
_convert = msgspec.convert



def decode_record(payload: bytes) -> Record:
    """A record from its bytes (no frame); ``ValueError`` if they are not one (``msgspec``'s errors are)."""
    return _decode(payload)
