"""The typed decoder (``messages.decode_client``) answers every frame as the reference path does
(``codec.decode`` then ``parse_client``): the same message, or the same refusal (code, words and ``re``), for
good messages, every wrong field, and the hostile frames of the fault campaigns, under the default limits and under
small ones. The structs are the catalogue: the schema that words refusals is read from them."""

from __future__ import annotations

import math
from typing import Any

import msgspec
import pytest

from protocol import client_messages as catalogue
from protocol.client_messages import Act, Create, Join, given, kind_of
from protocol.codec import Limits, decode, encode
from protocol.errors import ProtocolError
from protocol.messages import CLIENT_MESSAGES, TABLE, as_map, decode_client, parse_as, parse_client, request_id
from tests.faults.hostile import Hostile
from tests.faults.test_fuzz_fields import MESSAGE_CASES, full

SMALL = Limits(max_frame_bytes=4096, max_str_len=32, max_array_len=8, max_map_len=8, max_depth=4)


def reference(frame: bytes | str, limits: Limits) -> tuple[Any, ...]:
    try:
        raw = decode(frame, limits)
    except ProtocolError as err:
        return ("refused", err.code, err.message, None)
    try:
        checked = parse_client(raw)
    except ProtocolError as err:
        return ("refused", err.code, err.message, request_id(raw))
    return ("accepted", msgspec.convert(checked, catalogue.AnyClientMessage))


def typed(frame: bytes | str, limits: Limits) -> tuple[Any, ...]:
    try:
        return ("accepted", decode_client(frame, limits))
    except ProtocolError as err:
        return ("refused", err.code, err.message, err.re)


def frames_of_wrong_fields() -> list[bytes]:
    out = []
    for n, (kind, name, value) in enumerate(MESSAGE_CASES):
        msg = {"type": kind, "id": n, **full(CLIENT_MESSAGES[kind], n)}
        if value is ...:
            del msg[name]
        else:
            msg[name] = value
        try:
            out.append(encode(msg))
        except (OverflowError, ValueError):
            continue
    return out


@pytest.mark.parametrize("limits", [Limits(), SMALL], ids=["default", "small"])
def test_every_wrong_field_is_refused_as_the_reference_refuses_it(limits):
    frames = frames_of_wrong_fields()
    assert len(frames) > 300
    for frame in frames:
        assert typed(frame, limits) == reference(frame, limits), decode(frame)


@pytest.mark.parametrize("limits", [Limits(), SMALL], ids=["default", "small"])
def test_hostile_frames_get_the_reference_answer(limits):
    for seed in range(3):
        hostile = Hostile(seed)
        for _ in range(2000):
            _, frame = hostile.frame()
            assert typed(frame, limits) == reference(frame, limits), frame


@pytest.mark.parametrize("kind", sorted(CLIENT_MESSAGES))
def test_a_whole_message_decodes_to_its_struct(kind):
    msg = {"type": kind, **full(CLIENT_MESSAGES[kind], 3), "id": 7}
    got = decode_client(encode(msg), Limits())
    assert kind_of(got) == kind and got.re == 7
    assert parse_client(as_map(got)) == parse_client(msg)  # the map form is the message the client sent


@pytest.mark.parametrize("command", [
    {"type": "bid", "amount": math.nan}, {"type": "bid", "deep": [[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]},
    {"type": "bid", "b": b"x"}, {"type": "bid", "x": {"1": {2: 3}}}, {"type": "bid", "x": msgspec.msgpack.Ext(1, b"")},
])
def test_a_command_the_codec_refuses_is_refused_as_before(command):
    frame = msgspec.msgpack.encode({"type": "act", "id": 3, "table": "t1", "command": command})
    assert typed(frame, Limits())[0] == "refused"
    assert typed(frame, Limits()) == reference(frame, Limits())


def test_a_bid_decodes_typed_with_the_fields_it_left_out_unset():
    msg = decode_client(encode({"type": "act", "table": "w2-t17", "command": {"type": "bid", "amount": 4}}), Limits())
    assert isinstance(msg, Act) and msg.table == "w2-t17" and msg.command == {"type": "bid", "amount": 4}
    assert msg.re is None and given(msg.key) is None
    assert as_map(msg) == {"type": "act", "table": "w2-t17", "command": {"type": "bid", "amount": 4}}


def test_fields_left_out_read_as_their_defaults():
    join = decode_client(encode({"type": "join", "table": "t1", "name": "Ada"}), Limits())
    create = decode_client(encode({"type": "create", "game": "kupcy", "seats": 3, "time_scale": 2}), Limits())
    assert isinstance(join, Join) and join.views is True and given(join.entrant_key) is None
    assert isinstance(create, Create) and create.time_scale == 2.0 and create.rated is False
    assert given(create.seed) is None and given(create.options) is None


def test_a_relayed_map_parses_as_the_kind_asked_for_or_is_refused():
    assert parse_as(Create, {"type": "create", "game": "kupcy", "seats": 3}).seats == 3
    with pytest.raises(ProtocolError) as refused:
        parse_as(Create, {"type": "ping"})
    assert refused.value.code == "bad_field"


def test_the_catalogue_is_read_from_the_structs():
    assert list(CLIENT_MESSAGES) == list(catalogue.KINDS)
    assert CLIENT_MESSAGES["act"].required == {"table": TABLE, "command": catalogue.spec_of(catalogue.Command)}
    assert list(CLIENT_MESSAGES["join"].optional) == ["id", "views", "key", "entrant_key"]
    assert catalogue.TABLE_REQUESTS == ("join", "watch", "leave", "resume", "act", "view")
    assert catalogue.ADMIN_ACTIONS == ("pause", "unpause", "close", "kick", "connections", "publish")
