"""Typed reads of a document a schema already checked: a table's options, a deck file, a charter effect.

``protocol.schema`` checks a document's shape and gives back a map of ``Value``; these functions read one
field of it as the type its spec guarantees, so the rules use ints and strings, not ``Value``. A field of the
wrong type is a broken invariant (the schema let through what it should not have): ``TypeError``, never a
silent coercion. An absent optional field reads as None.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from protocol.values import Value


def _broken(key: str, expected: str, value: object) -> TypeError:
    return TypeError(f"{key}: expected {expected} after the schema's check, got {type(value).__name__}")


def int_field(doc: Mapping[str, Value], key: str) -> int:
    value = doc[key]
    if not isinstance(value, int) or isinstance(value, bool):
        raise _broken(key, "an integer", value)
    return value


def int_or_none(doc: Mapping[str, Value], key: str) -> int | None:
    return None if doc.get(key) is None else int_field(doc, key)


def number_or(doc: Mapping[str, Value], key: str, default: float) -> float:
    value = doc.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _broken(key, "a number", value)
    return value


def str_field(doc: Mapping[str, Value], key: str) -> str:
    value = doc[key]
    if not isinstance(value, str):
        raise _broken(key, "a string", value)
    return value


def str_or_none(doc: Mapping[str, Value], key: str) -> str | None:
    return None if doc.get(key) is None else str_field(doc, key)


def bool_field(doc: Mapping[str, Value], key: str, default: bool) -> bool:
    value = doc.get(key, default)
    if not isinstance(value, bool):
        raise _broken(key, "a boolean", value)
    return value


def list_field(doc: Mapping[str, Value], key: str) -> Sequence[Value]:
    value = doc[key]
    if not isinstance(value, (list, tuple)):
        raise _broken(key, "a list", value)
    return value


def strs_field(doc: Mapping[str, Value], key: str) -> list[str]:
    return [as_str(item, key) for item in list_field(doc, key)]


def ints_field(doc: Mapping[str, Value], key: str) -> list[int]:
    return [as_int(item, key) for item in list_field(doc, key)]


def maps_field(doc: Mapping[str, Value], key: str) -> list[Mapping[str, Value]]:
    return [as_map(item, key) for item in list_field(doc, key)]


def map_or_none(doc: Mapping[str, Value], key: str) -> Mapping[str, Value] | None:
    return None if doc.get(key) is None else as_map(doc[key], key)


def as_int(value: Value, key: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _broken(key, "an integer", value)
    return value


def as_str(value: Value, key: str) -> str:
    if not isinstance(value, str):
        raise _broken(key, "a string", value)
    return value


def as_map(value: Value, key: str) -> Mapping[str, Value]:
    if not isinstance(value, dict):
        raise _broken(key, "a map", value)
    return value
