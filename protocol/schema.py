"""Field-by-field checking of decoded msgpack values.

A schema is a tree of small spec objects. ``check(spec, value)`` returns the value when every field has
the right type, range and size, and raises ``SchemaError`` naming the first offending field otherwise.
Both the protocol's message catalogue and the games' command catalogues are written with these specs,
so ``protocol/SPEC.md`` and the error a client gets always agree.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from protocol.values import Map, Value


class SchemaError(ValueError):
    """A value does not fit its spec. ``code`` is one of the stable protocol error codes."""

    def __init__(self, code: str, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.code = code
        self.path = path
        self.message = str(self)


class Spec(Protocol):
    """What every spec object does: check a decoded value (returning it as it is kept) and describe itself."""

    def check(self, value: Any, path: str) -> Any: ...

    def describe(self) -> str: ...


def _type_error(path: str, expected: str, value: Any) -> SchemaError:
    return SchemaError("bad_field", path, f"expected {expected}, got {type(value).__name__}")


@dataclass(frozen=True)
class Int:
    lo: int
    hi: int

    def check(self, value: Any, path: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _type_error(path, "an integer", value)
        if not self.lo <= value <= self.hi:
            raise SchemaError("bad_field", path, f"{value} is outside {self.lo}..{self.hi}")
        return value

    def describe(self) -> str:
        return f"int {self.lo}..{self.hi}"


@dataclass(frozen=True)
class Float:
    """A finite number in ``lo..hi``; an integer is accepted too. Returns it as a float."""

    lo: float
    hi: float

    def check(self, value: Any, path: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _type_error(path, "a number", value)
        if isinstance(value, float) and not math.isfinite(value):
            raise SchemaError("bad_field", path, f"{value} is not a finite number")
        if not self.lo <= value <= self.hi:
            raise SchemaError("bad_field", path, f"{value} is outside {self.lo}..{self.hi}")
        return float(value)

    def describe(self) -> str:
        return f"float {self.lo}..{self.hi}"


@dataclass(frozen=True)
class Bool:
    def check(self, value: Any, path: str) -> bool:
        if not isinstance(value, bool):
            raise _type_error(path, "a boolean", value)
        return value

    def describe(self) -> str:
        return "bool"


@dataclass(frozen=True)
class Str:
    max_len: int
    min_len: int = 0

    def check(self, value: Any, path: str) -> str:
        if not isinstance(value, str):
            raise _type_error(path, "a string", value)
        if not self.min_len <= len(value) <= self.max_len:
            raise SchemaError("bad_field", path, f"length {len(value)} is outside {self.min_len}..{self.max_len}")
        return value

    def describe(self) -> str:
        return f"str ({self.min_len}..{self.max_len} chars)"


@dataclass(frozen=True)
class Pattern:
    """A string of at most ``max_len`` characters that ``pattern`` matches whole (write it with explicit ASCII
    classes such as ``[0-9]``: ``\\d`` also takes other scripts' digits); ``shape`` names it for SPEC.md."""

    max_len: int
    pattern: str
    shape: str

    def check(self, value: Any, path: str) -> str:
        if not isinstance(value, str):
            raise _type_error(path, "a string", value)
        if len(value) > self.max_len or re.fullmatch(self.pattern, value, re.ASCII) is None:
            raise SchemaError("bad_field", path, f"expected {self.shape}")
        return value

    def describe(self) -> str:
        return self.shape


@dataclass(frozen=True)
class Enum:
    values: tuple[str, ...]

    def check(self, value: Any, path: str) -> str:
        if not isinstance(value, str) or value not in self.values:
            raise SchemaError("bad_field", path, f"expected one of {', '.join(self.values)}")
        return value

    def describe(self) -> str:
        return "one of " + ", ".join(f'"{v}"' for v in self.values)


@dataclass(frozen=True)
class Nullable:
    inner: Spec

    def check(self, value: Any, path: str) -> Any:
        return None if value is None else self.inner.check(value, path)

    def describe(self) -> str:
        return f"{self.inner.describe()} or nil"


@dataclass(frozen=True)
class List:
    item: Spec
    max_len: int

    def check(self, value: Any, path: str) -> list[Value]:
        if not isinstance(value, list):
            raise _type_error(path, "an array", value)
        if len(value) > self.max_len:
            raise SchemaError("bad_field", path, f"more than {self.max_len} items")
        return [self.item.check(v, f"{path}[{i}]") for i, v in enumerate(value)]

    def describe(self) -> str:
        return f"array (at most {self.max_len}) of {self.item.describe()}"


@dataclass(frozen=True)
class Record:
    """A map with string keys: ``required`` and ``optional`` fields, nothing else."""

    required: dict[str, Spec]
    optional: dict[str, Spec] = field(default_factory=dict)
    known: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "known", frozenset(self.required) | frozenset(self.optional))

    def check(self, value: Any, path: str = "") -> Map:
        if not isinstance(value, dict):
            raise _type_error(path or "message", "a map", value)
        if not self.known.issuperset(value):  # a key that is not a string or not a field: say which
            for key in value:
                if not isinstance(key, str):
                    raise SchemaError("bad_field", path, "map keys must be strings")
                if key not in self.known:
                    raise SchemaError("unknown_field", _join(path, key), "unknown field")
        out: Map = {}
        for key, spec in self.required.items():
            if key not in value:
                raise SchemaError("missing_field", _join(path, key), "required field is missing")
            out[key] = spec.check(value[key], f"{path}.{key}" if path else key)
        for key, spec in self.optional.items():
            if key in value:
                out[key] = spec.check(value[key], f"{path}.{key}" if path else key)
        return out

    def describe(self) -> str:
        return "map"


@dataclass(frozen=True)
class AnyMap:
    """An opaque map with string keys and at most ``max_len`` entries; its contents are checked elsewhere."""

    max_len: int

    def check(self, value: Any, path: str) -> Map:
        if not isinstance(value, dict):
            raise _type_error(path, "a map", value)
        if len(value) > self.max_len:
            raise SchemaError("bad_field", path, f"more than {self.max_len} entries")
        if not all(isinstance(key, str) for key in value):
            raise SchemaError("bad_field", path, "map keys must be strings")
        return value

    def describe(self) -> str:
        return f"map (at most {self.max_len} entries)"


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def check(spec: Spec, value: Any, path: str = "") -> Any:
    return spec.check(value, path)
