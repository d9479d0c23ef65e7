import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.schema import AnyMap, Bool, Enum, Float, Int, List, Nullable, Record, SchemaError, Str, check


def refused(spec, value, path="f") -> SchemaError:
    with pytest.raises(SchemaError) as caught:
        spec.check(value, path)
    return caught.value


def test_int_accepts_its_range_inclusive():
    assert [Int(1, 3).check(v, "n") for v in (1, 2, 3)] == [1, 2, 3]


@pytest.mark.parametrize("value", [0, 4, -1, 2**64])
def test_int_out_of_range_is_bad_field(value):
    err = refused(Int(1, 3), value, "seats")
    assert (err.code, err.path) == ("bad_field", "seats")
    assert "outside 1..3" in err.message


@pytest.mark.parametrize("value", [True, False, 1.0, "1", None, [1]])
def test_int_refuses_bools_floats_and_other_types(value):
    assert refused(Int(0, 10), value).code == "bad_field"


def test_bool_accepts_only_bools():
    assert Bool().check(True, "b") is True
    assert refused(Bool(), 1).code == "bad_field"


def test_str_length_bounds_count_characters():
    spec = Str(3, min_len=1)
    assert spec.check("été", "s") == "été"
    assert refused(spec, "").code == "bad_field"
    assert refused(spec, "abcd").code == "bad_field"
    assert refused(spec, b"ab").code == "bad_field"


def test_enum_accepts_only_listed_strings():
    spec = Enum(("a", "b"))
    assert spec.check("b", "e") == "b"
    assert refused(spec, "c").code == "bad_field"
    assert refused(spec, 1).code == "bad_field"


def test_nullable_passes_nil_and_checks_the_rest():
    spec = Nullable(Int(0, 1))
    assert spec.check(None, "n") is None
    assert spec.check(1, "n") == 1
    assert refused(spec, 2).code == "bad_field"


def test_list_checks_length_and_names_the_failing_item():
    spec = List(Int(0, 9), max_len=2)
    assert spec.check([1, 2], "xs") == [1, 2]
    assert refused(spec, [1, 2, 3], "xs").code == "bad_field"
    assert refused(spec, [1, 10], "xs").path == "xs[1]"
    assert refused(spec, (1,), "xs").code == "bad_field"


def test_record_returns_checked_fields():
    spec = Record({"a": Int(0, 9)}, {"b": Str(4)})
    assert spec.check({"a": 1}) == {"a": 1}
    assert spec.check({"a": 1, "b": "x"}) == {"a": 1, "b": "x"}


def test_unknown_field_rejected():
    err = refused(Record({"a": Int(0, 9)}), {"a": 1, "zz": 2}, "")
    assert (err.code, err.path) == ("unknown_field", "zz")


def test_missing_field_rejected():
    err = refused(Record({"a": Int(0, 9)}), {}, "msg")
    assert (err.code, err.path) == ("missing_field", "msg.a")


def test_record_refuses_non_map_and_non_string_keys():
    assert refused(Record({}), [], "").code == "bad_field"
    assert refused(Record({}), {1: 2}, "").code == "bad_field"


def test_nested_paths_name_the_field():
    spec = Record({"xs": List(Record({"n": Int(0, 1)}), 4)})
    assert refused(spec, {"xs": [{"n": 0}, {"n": 5}]}, "").path == "xs[1].n"


def test_module_check_delegates_to_spec():
    assert check(Int(0, 1), 1) == 1


@pytest.mark.parametrize("value", [0.001, 1, 2.5, 10000, 10000.0])
def test_float_accepts_ints_and_finite_floats_in_range(value):
    result = Float(0.001, 10000).check(value, "time_scale")
    assert result == value and isinstance(result, float)


@pytest.mark.parametrize("value", [0.0009, 0, 10000.5, 10**400])
def test_float_out_of_range_is_bad_field(value):
    err = refused(Float(0.001, 10000), value, "time_scale")
    assert (err.code, err.path) == ("bad_field", "time_scale")


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_float_refuses_non_finite(value):
    assert "finite" in refused(Float(-1e300, 1e300), value).message


@pytest.mark.parametrize("value", [True, False, "1.5", None, [1.0]])
def test_float_refuses_bools_and_non_numbers(value):
    assert refused(Float(0, 10), value).code == "bad_field"


@given(st.floats(allow_nan=True, allow_infinity=True) | st.integers())
def test_float_result_is_always_finite_and_in_range(value):
    spec = Float(-5, 5)
    try:
        result = spec.check(value, "x")
    except SchemaError as err:
        assert err.code == "bad_field"
    else:
        assert math.isfinite(result) and -5 <= result <= 5


def test_anymap_passes_contents_through_unchecked():
    command = {"type": "anything", "deep": [{"x": None}], "n": 2**70}
    assert AnyMap(8).check(command, "command") is command


def test_anymap_limits_entries_and_needs_string_keys():
    assert refused(AnyMap(2), {"a": 1, "b": 2, "c": 3}, "options").code == "bad_field"
    assert refused(AnyMap(2), {1: "a"}, "options").code == "bad_field"
    assert refused(AnyMap(2), [("a", 1)], "options").code == "bad_field"


def test_new_specs_describe_themselves():
    assert Float(0.001, 10000).describe() == "float 0.001..10000"
    assert AnyMap(32).describe() == "map (at most 32 entries)"
