"""Every field of every message wrong, one at a time, exhaustively (the random fuzzers reach these by chance;
this sweep reaches each for sure): for every client message type and every game command, each field given
every wrong value its spec must refuse (the wrong types, one past each end of its range, one over its size),
each required field left out, and one field added. The refusal must name that field, with the right code
(or come from the codec first, fatal: an infinite float, a map over the frame's limits)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from protocol.codec import decode, encode
from protocol.errors import ProtocolError
from protocol.messages import CLIENT_MESSAGES, parse_client
from protocol.schema import AnyMap, Bool, Enum, Float, Int, List, Nullable, Pattern, Record, SchemaError, Str
from server.games import GAMES
from server.games.base import parse_command
from tests.faults.hostile import Hostile

WRONG_TYPES = [None, True, 1, -1, 1.5, "x", [], [1], {}, {"k": 1}]


def wrong(spec: Any) -> list[Any]:
    """Every value ``spec`` must refuse: of the wrong type, just out of range, just over size."""
    if isinstance(spec, Nullable):
        return [v for v in wrong(spec.inner) if v is not None]
    if isinstance(spec, Int):
        return [v for v in WRONG_TYPES if isinstance(v, bool) or not isinstance(v, int)] + [spec.lo - 1, spec.hi + 1]
    if isinstance(spec, Float):
        return [None, True, "1", [], {}, spec.lo - max(1e-9, abs(spec.lo) * 1e-6), spec.hi * 2 + 1, math.inf]
    if isinstance(spec, Bool):
        return [None, 0, 1, "true", [], {}]
    if isinstance(spec, Str):
        return [None, True, 1, 1.5, [], {}, "x" * (spec.max_len + 1)] + ([""] if spec.min_len else [])
    if isinstance(spec, Enum):
        return [None, 1, "", spec.values[0].upper() + "!", []]
    if isinstance(spec, Pattern):  # a table id: not ASCII digits, a leading zero, a line's end, too long
        return [None, True, 1, [], {}, "", "t01", "t1\n", "w\u0662-t1", "../replays/t9", "t" + "1" * spec.max_len]
    if isinstance(spec, List):
        return [None, 1, "x", {}, [wrong(spec.item)[0]], [wrong(spec.item)[0]] * (spec.max_len + 1)]
    if isinstance(spec, AnyMap):
        return [None, 1, "x", [], {f"k{i}": 0 for i in range(spec.max_len + 1)}]
    if isinstance(spec, Record):
        return [None, 1, "x", [], {"nope": 1}]
    raise TypeError(spec)


def cases(catalogue: dict[str, Record]) -> list[tuple[str, str, Any]]:
    """(message type, field, wrong value) for the whole catalogue; a value ``...`` stands for "left out"."""
    out = []
    for kind, spec in sorted(catalogue.items()):
        for name, field in [*spec.required.items(), *spec.optional.items()]:
            out += [(kind, name, value) for value in wrong(field)]
        out += [(kind, name, ...) for name in spec.required]
    return out


def full(spec: Record, seed: int) -> dict[str, Any]:
    """A message of ``spec`` with every field, required and optional, right."""
    hostile = Hostile(seed)
    return {name: hostile.good(field) for name, field in [*spec.required.items(), *spec.optional.items()]}


MESSAGE_CASES = cases(CLIENT_MESSAGES)
COMMAND_CASES = [(game, *case) for game, cls in sorted(GAMES.items()) for case in cases(cls.COMMANDS)]


def test_the_sweep_covers_every_field_of_every_message_and_command():
    fields = {(k, n) for k, spec in CLIENT_MESSAGES.items() for n in [*spec.required, *spec.optional]}
    assert {(k, n) for k, n, _ in MESSAGE_CASES} == fields
    assert len(MESSAGE_CASES) > 300 and len(COMMAND_CASES) > 100


@pytest.mark.parametrize("kind", sorted(CLIENT_MESSAGES))
def test_every_wrong_field_of_a_message_is_refused_by_its_name(kind):
    spec = CLIENT_MESSAGES[kind]
    for n, (_, name, value) in enumerate(c for c in MESSAGE_CASES if c[0] == kind):
        msg = {"type": kind, **full(spec, n)}
        if value is ...:
            del msg[name]
        else:
            msg[name] = value
        try:
            frame = encode(msg)
        except (OverflowError, ValueError):  # e.g. 2**64 has no msgpack form: it cannot arrive at all
            continue
        try:
            decoded = decode(frame)
        except ProtocolError as exc:  # the codec refuses it first (an infinite float, a map over its limit)
            assert exc.fatal, (kind, name, value)
            continue
        with pytest.raises(ProtocolError) as refused:
            parse_client(decoded)
        expected = "missing_field" if value is ... else "bad_field"
        assert refused.value.code == expected and refused.value.message.startswith(name), (kind, name, value)
    msg = {"type": kind, **full(spec, 0), "extra": 1}
    with pytest.raises(ProtocolError) as refused:
        parse_client(decode(encode(msg)))
    assert refused.value.code == "unknown_field" and refused.value.message.startswith("extra")


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_wrong_field_of_a_game_command_is_refused_by_its_name(game):
    catalogue = GAMES[game].COMMANDS
    for n, (_, kind, name, value) in enumerate(c for c in COMMAND_CASES if c[0] == game):
        command = {"type": kind, **full(catalogue[kind], n)}
        if value is ...:
            del command[name]
        else:
            command[name] = value
        with pytest.raises(SchemaError) as refused:
            parse_command(catalogue, command)
        expected = "missing_field" if value is ... else "bad_field"
        assert refused.value.code == expected and refused.value.path.startswith(f"command.{name}"), \
            (game, kind, name, value)
