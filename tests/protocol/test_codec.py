import math

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import codec
from protocol.codec import Limits, decode, encode
from protocol.errors import ProtocolError

SMALL = Limits(max_frame_bytes=512, max_str_len=8, max_array_len=4, max_map_len=4, max_depth=4)


def pack(value) -> bytes:
    return msgpack.packb(value, use_bin_type=True)


def refused(frame, limits=Limits()) -> ProtocolError:
    with pytest.raises(ProtocolError) as caught:
        decode(frame, limits)
    return caught.value


def nested_arrays(depth: int) -> dict:
    value: object = 0
    for _ in range(depth - 1):
        value = [value]
    return {"a": value}


def test_limits_defaults():
    assert Limits() == Limits(
        max_frame_bytes=65536, max_str_len=4096, max_bin_len=0, max_array_len=1024, max_map_len=256, max_depth=16
    )


def test_encode_decode_round_trip():
    message = {"type": "act", "id": 7, "command": {"type": "bid", "amount": -3, "ok": True, "x": None, "f": 0.5}}
    assert decode(encode(message)) == message


def test_encode_writes_str_as_str_and_bytes_as_bin():
    assert encode({"s": "a"}) == b"\x81\xa1s\xa1a"
    assert encode({"b": b"a"}) == b"\x81\xa1b\xc4\x01a"


def test_frame_over_limit_rejected_before_unpacking(monkeypatch):
    def no_unpacking(*args, **kwargs):
        raise AssertionError("an over-long frame must not reach the unpacker")

    monkeypatch.setattr(codec.msgpack, "Unpacker", no_unpacking)
    err = refused(b"\x80" * 65537)
    assert (err.code, err.fatal) == ("too_large", True)


def test_frame_at_limit_accepted():
    message = {"s": "x" * 100}
    frame = pack(message)
    assert decode(frame, Limits(max_frame_bytes=len(frame))) == message
    assert refused(frame, Limits(max_frame_bytes=len(frame) - 1)).code == "too_large"


def test_text_frame_rejected_as_malformed():
    err = refused('{"type": "ping"}')
    assert (err.code, err.fatal) == ("malformed", True)


@pytest.mark.parametrize(
    "frame",
    [b"", b"\x82\xa1a", b"\xc1", b"\xa1\xff", b"\x81\x90\x00", b"\x81\x80\x00", b"\x81\x01\x02"],
    ids=["empty", "truncated", "never_used_byte", "bad_utf8", "array_key", "map_key", "int_key"],
)
def test_invalid_msgpack_is_malformed(frame):
    assert refused(frame).code == "malformed"


def test_trailing_bytes_rejected():
    assert refused(pack({"a": 1}) + b"\xc0").code == "malformed"


@pytest.mark.parametrize("value", [[], 1, "hello", None, True, 1.5])
def test_non_map_top_level_rejected(value):
    err = refused(pack(value))
    assert err.code == "malformed" and "map" in err.message


def test_non_string_key_in_nested_map_rejected():
    assert refused(pack({"a": [{"b": {1: 2}}]})).code == "malformed"


def test_string_over_limit_too_large_and_counts_utf8_bytes():
    assert decode(pack({"s": "é" * 4}), SMALL) == {"s": "é" * 4}
    assert refused(pack({"s": "é" * 5}), SMALL).code == "too_large"
    assert refused(pack({"s" * 9: 1}), SMALL).code == "too_large"


def test_array_and_map_over_limit_too_large():
    assert refused(pack({"a": [0] * 5}), SMALL).code == "too_large"
    assert refused(pack({str(i): 0 for i in range(5)}), SMALL).code == "too_large"


def test_huge_declared_array_rejected_without_reading_it():
    assert refused(b"\x81\xa1a\xdd\xff\xff\xff\xff").code == "too_large"


def test_depth_at_limit_accepted_and_one_deeper_refused():
    assert decode(pack(nested_arrays(16))) == nested_arrays(16)
    err = refused(pack(nested_arrays(17)))
    assert (err.code, err.fatal) == ("too_deep", True)


def test_depth_counts_maps_too():
    value: dict = {}
    for _ in range(3):
        value = {"m": value}
    assert decode(pack(value), SMALL) == value
    assert refused(pack({"m": value}), SMALL).code == "too_deep"


def test_nesting_beyond_msgpack_stack_limit_is_too_deep():
    assert refused(b"\x81\xa1a" + b"\x91" * 60000 + b"\x00").code == "too_deep"


@pytest.mark.parametrize(
    "frame",
    [b"\x81\xa1a\xc7\x00\x05", b"\x81\xa1a\xd4\x05\x00", b"\x81\xa1a\xc7\x00\xff", pack({"a": msgpack.Timestamp(1)})],
    ids=["empty_ext", "fixext", "empty_timestamp", "timestamp"],
)
def test_ext_values_rejected(frame):
    assert refused(frame).code == "malformed"


@pytest.mark.parametrize("data", [b"", b"abc"])
def test_bin_rejected_by_default(data):
    err = refused(pack({"a": data}))
    assert err.code == "malformed" and "bin" in err.message


def test_bin_accepted_up_to_a_configured_limit():
    limits = Limits(max_bin_len=3)
    assert decode(pack({"a": b"abc"}), limits) == {"a": b"abc"}
    assert refused(pack({"a": b"abcd"}), limits).code == "too_large"


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_floats_rejected(value):
    assert refused(pack({"a": [value]})).code == "malformed"
    assert refused(msgpack.packb({"a": value}, use_single_float=True)).code == "malformed"


def test_finite_floats_accepted():
    assert decode(pack({"a": 1e308, "b": -0.0})) == {"a": 1e308, "b": -0.0}


# --- fuzzing ---------------------------------------------------------------------------------------

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats()
    | st.text(max_size=10)
    | st.binary(max_size=4)
    | st.builds(msgpack.ExtType, st.integers(0, 127), st.binary(max_size=3))
)
keys = st.text(max_size=10) | st.integers(-3, 3) | st.none() | st.floats(allow_nan=False)
values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=6) | st.dictionaries(keys, inner, max_size=6), max_leaves=40
)
top_level = st.dictionaries(keys, values, max_size=6) | values


def acceptable(value, limits: Limits, depth: int = 1) -> bool:
    """What decode must accept, written independently of it."""
    if isinstance(value, dict):
        return (
            depth <= limits.max_depth
            and len(value) <= limits.max_map_len
            and all(isinstance(k, str) and acceptable(k, limits) for k in value)
            and all(acceptable(v, limits, depth + 1) for v in value.values())
        )
    if isinstance(value, list):
        return (
            depth <= limits.max_depth
            and len(value) <= limits.max_array_len
            and all(acceptable(v, limits, depth + 1) for v in value)
        )
    if isinstance(value, str):
        return len(value.encode()) <= limits.max_str_len
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, (bool, int))


@settings(max_examples=500)
@given(st.binary(max_size=600))
def test_decode_raises_only_protocol_errors_for_any_bytes(frame):
    for limits in (Limits(), SMALL):
        try:
            result = decode(frame, limits)
        except ProtocolError as err:
            assert err.fatal
        else:
            assert isinstance(result, dict)


@settings(max_examples=500)
@given(top_level)
def test_decode_accepts_exactly_the_values_within_limits(value):
    frame = pack(value)
    for limits in (Limits(), SMALL):
        try:
            result = decode(frame, limits)
        except ProtocolError:
            assert not (isinstance(value, dict) and len(frame) <= limits.max_frame_bytes and acceptable(value, limits))
        else:
            assert isinstance(value, dict) and acceptable(value, limits)
            assert result == value


@settings(max_examples=300)
@given(st.dictionaries(st.text(max_size=5), values, max_size=4), st.data())
def test_decode_survives_corrupted_frames(value, data):
    frame = bytearray(pack(value))
    for _ in range(data.draw(st.integers(1, 4))):
        frame[data.draw(st.integers(0, len(frame) - 1))] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(frame)))
    try:
        assert isinstance(decode(bytes(frame[:cut])), dict)
    except ProtocolError as err:
        assert err.code in {"malformed", "too_large", "too_deep"}


@given(st.integers(1, 3000), st.sampled_from([b"\x91", b"\x81\xa1k"]))
def test_any_nesting_depth_decodes_or_is_too_deep(depth, opener):
    frame = b"\x81\xa1k" + opener * depth + b"\x00"
    try:
        decode(frame)
    except ProtocolError as err:
        assert err.code == "too_deep" and depth >= 16
    else:
        assert depth < 16


_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False) | st.text(max_size=300) | st.binary(max_size=300),
    lambda inner: st.lists(inner, max_size=20) | st.dictionaries(
        st.text(max_size=20) | st.integers(min_value=-(2**63), max_value=2**64 - 1), inner, max_size=20),
    max_leaves=60)


@settings(max_examples=400, deadline=None)
@given(_values)
def test_encode_writes_the_bytes_msgpacks_packer_writes(value):
    assert encode({"v": value}) == msgpack.Packer(use_bin_type=True).pack({"v": value})


def test_encode_writes_big_strings_lists_and_maps_as_msgpacks_packer_does():
    for n in (15, 16, 31, 32, 255, 256, 65535, 65536):
        value = {"s": "x" * n, "b": b"y" * n, "l": list(range(n)), "m": {str(i): i for i in range(min(n, 70000))}}
        assert encode(value) == msgpack.Packer(use_bin_type=True).pack(value)


def test_encode_refuses_an_integer_out_of_msgpacks_range_as_msgpacks_packer_does():
    for value in (2**64, -(2**63) - 1):
        with pytest.raises(OverflowError):
            msgpack.Packer(use_bin_type=True).pack({"v": value})
        with pytest.raises(OverflowError):
            encode({"v": value})
