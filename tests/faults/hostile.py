"""Hostile frames, fast and seeded: valid-looking messages of every client type and their mutations.

``Hostile(seed, known).frame()`` returns ``(family, frame)``: a WebSocket payload (``bytes``; a ``str`` is a
text frame) and the family that made it. The families:

* ``message``: a message of a random client type, every field plausible (known table ids, tokens, games);
* ``field``: such a message with one field wrong: its type, its range, its size, missing, or one added;
* ``command``: an ``act`` whose command is one of the seat's legal templates filled in, a command of the
  game's catalogue with plausible or wrong fields, or another game's command;
* ``bytes``: an encoded message cut short, with bits flipped, bytes inserted, dropped or replaced;
* ``header``: a msgpack header declaring a huge string, bin, array, map or ext, with or without content;
* ``deep``: arrays and maps nested past the depth limit, at the top or inside a field;
* ``utf8``: a string (key or value) that is not UTF-8;
* ``ext``: ext values of every size (fixext 1 to 16, ext 8/16/32, the timestamp type);
* ``type``: a value of every msgpack type (every int width, float32/64 with NaN and infinities, str/bin/
  array/map of every header width, the never-used byte 0xc1) at the top or in a field;
* ``limits``: a string, array, map or frame just over its limit (``Limits``);
* ``shape``: a map with duplicate keys, non-string keys, trailing bytes, several values, or none;
* ``random``: random bytes; ``text``: a text frame.

Everything comes from one ``random.Random(seed)``: the same seed gives the same frames.
"""

from __future__ import annotations

import random
import struct
from dataclasses import dataclass, field
from typing import Any, Callable

import msgpack

from clients.players import fill
from protocol.codec import Limits
from protocol.messages import CLIENT_MESSAGES, PROTOCOL_VERSION
from protocol.schema import AnyMap, Bool, Enum, Float, Int, List, Nullable, Pattern, Record, Str
from server.games import GAMES

_pack = msgpack.Packer(use_bin_type=True).pack


@dataclass
class Known:
    """What a hostile client could know or guess, kept up to date by the harness: table ids (and each
    one's game), the seat it holds and that seat's legal commands, a token of its own, the admin token."""

    tables: dict[str, str] = field(default_factory=dict)  # id -> game ("" when not known)
    own_table: str | None = None
    own_token: str | None = None
    legal: list[dict[str, Any]] = field(default_factory=list)
    admin: str | None = None
    last_seq: int = 0
    limits: Limits = field(default_factory=Limits)


FAMILIES: list[tuple[str, int]] = [
    ("message", 12), ("field", 18), ("command", 22), ("bytes", 12), ("header", 4), ("deep", 3), ("utf8", 4),
    ("ext", 3), ("type", 8), ("limits", 2), ("shape", 5), ("random", 5), ("text", 2),
]
NAMES = ["a", "bot", "Ω", "名前", "x" * 64, "", " ", "\x00", "\u202e"]
TOPICS = ["news", "round", "", "x" * 65]
INT_EDGES = [0, 1, -1, 127, 128, 255, 256, -32, -33, 2**15, 2**16, 2**31 - 1, 2**31, 2**32, 2**53 + 1, 2**62,
             2**63 - 1, 2**64 - 1, -(2**31), -(2**63)]
FLOATS = [0.0, -0.0, 1.5, float("nan"), float("inf"), float("-inf"), 1e308, 5e-324, 1e-3, 1e4 + 1]
EXTS = [b"\xd4\x01\x00", b"\xd5\x02\x00\x00", b"\xd6\xff\x00\x00\x00\x00", b"\xd7\xff" + b"\x00" * 8,
        b"\xd8\x05" + b"\x00" * 16, b"\xc7\x03\x07abc", b"\xc8\x00\x03\x07abc", b"\xc9\x00\x00\x00\x03\x07abc",
        b"\xc7\x00\x01", b"\xd4\x80\x00"]
HUGE = [b"\xdb\xff\xff\xff\xff", b"\xdb\x7f\xff\xff\xff", b"\xda\xff\xff", b"\xd9\xff", b"\xc6\xff\xff\xff\xff",
        b"\xc5\xff\xff", b"\xc4\xff", b"\xdd\xff\xff\xff\xff", b"\xdc\xff\xff", b"\xdf\xff\xff\xff\xff",
        b"\xde\xff\xff", b"\xc9\xff\xff\xff\xff\x01", b"\xc8\xff\xff\x01", b"\xc7\xff\x01",
        b"\xdd\x00\x01\x00\x00", b"\xdf\x00\x00\x10\x00", b"\xdb\x00\x01\x00\x00"]
BAD_UTF8 = [b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82", b"a\x80b", b"\xf8\x88\x80\x80\x80"]


def str_header(n: int, width: int | None = None) -> bytes:
    """A msgpack str header for ``n`` bytes, in the smallest width or the one asked (0: fixstr, 8/16/32)."""
    width = width if width is not None else (0 if n < 32 else 8 if n < 256 else 16 if n < 65536 else 32)
    if width == 0:
        return bytes([0xA0 | n])
    code, size = {8: (b"\xd9", "!B"), 16: (b"\xda", "!H"), 32: (b"\xdb", "!I")}[width]
    return code + struct.pack(size, n)


def map_header(n: int) -> bytes:
    if n < 16:
        return bytes([0x80 | n])
    return b"\xde" + struct.pack("!H", n) if n < 65536 else b"\xdf" + struct.pack("!I", n)


def every_type(rng: random.Random) -> bytes:
    """One encoded value of a random msgpack type and header width."""
    pick = rng.randrange(22)
    n = rng.choice([0, 1, 3, 15])
    if pick == 0:
        return rng.choice([b"\xc0", b"\xc2", b"\xc3", b"\xc1"])
    if pick == 1:
        return bytes([rng.randrange(0x80)])  # positive fixint
    if pick == 2:
        return bytes([rng.randrange(0xE0, 0x100)])  # negative fixint
    if pick <= 6:  # uint 8..64, int 8..64, with any bits
        code = rng.choice([0xCC, 0xCD, 0xCE, 0xCF, 0xD0, 0xD1, 0xD2, 0xD3])
        size = {0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8, 0xD0: 1, 0xD1: 2, 0xD2: 4, 0xD3: 8}[code]
        return bytes([code]) + rng.randbytes(size)
    if pick == 7:
        return b"\xca" + rng.choice([b"\x7f\xc0\x00\x00", b"\x7f\x80\x00\x00", b"\xff\x80\x00\x00", rng.randbytes(4)])
    if pick == 8:
        return b"\xcb" + rng.choice([b"\x7f\xf8" + b"\x00" * 6, b"\x7f\xf0" + b"\x00" * 6, rng.randbytes(8)])
    if pick <= 11:
        return str_header(n, rng.choice([None, 8, 16, 32])) + bytes(rng.choice(b"abc\xff") for _ in range(n))
    if pick == 12:
        return rng.choice([b"\xc4", b"\xc5\x00", b"\xc6\x00\x00\x00"]) + bytes([n]) + b"\x00" * n
    if pick <= 14:
        head = rng.choice([bytes([0x90 | n]), b"\xdc" + struct.pack("!H", n), b"\xdd" + struct.pack("!I", n)])
        return head + b"\xc0" * n
    if pick <= 16:
        head = rng.choice([bytes([0x80 | n]), b"\xde" + struct.pack("!H", n), b"\xdf" + struct.pack("!I", n)])
        return head + b"".join(_pack(f"k{i}") + b"\xc0" for i in range(n))
    if pick == 17:
        return rng.choice(EXTS)
    if pick == 18:
        return _pack(rng.choice(INT_EDGES))
    if pick == 19:
        return _pack(rng.choice(FLOATS))
    if pick == 20:
        return _pack(rng.choice([[], {}, [[]], {"": {}}, [1, "a", None, True]]))
    return _pack(rng.choice(NAMES))


class Hostile:
    def __init__(self, seed: int, known: Known | None = None) -> None:
        self.rng = random.Random(seed)
        self.known = known or Known()
        names, weights = zip(*FAMILIES)
        self._families = list(names)
        self._weights = list(weights)
        self._makers: dict[str, Callable[[], bytes | str]] = {name: getattr(self, "_" + name) for name in names}

    def frame(self) -> tuple[str, bytes | str]:
        family = self.rng.choices(self._families, self._weights)[0]
        return family, self._makers[family]()

    # ------------------------------------------------------------------ plausible values

    def _table(self) -> str:
        rng, known = self.rng, self.known
        if known.own_table is not None and rng.random() < 0.6:
            return known.own_table
        if known.tables and rng.random() < 0.8:
            return rng.choice(list(known.tables))
        return rng.choice(["t0", "t999999", "T1", "t1 ", "t" + "1" * 63, "../t1"])

    def _game_of(self, table: str) -> str:
        return self.known.tables.get(table) or self.rng.choice(sorted(GAMES))

    def good(self, spec: Any, name: str = "") -> Any:
        """A value that fits ``spec`` (and, for the fields the protocol names, one that means something)."""
        rng, known = self.rng, self.known
        if name == "table":
            return self._table()
        if name == "token" and isinstance(spec, Str) and spec.max_len == 128:  # resume: a seat token
            token = known.own_token
            return token if token and rng.random() < 0.5 else self.good(Str(128, 1))
        if name in ("token", "admin") and known.admin and rng.random() < 0.15:
            return known.admin
        if name == "game":
            return rng.choice([*sorted(GAMES), "chess"])
        if name == "version":
            return rng.choice([1, 1, 0, 2])
        if name == "name":
            return rng.choice(NAMES[:4])
        if name == "topic":
            return rng.choice(TOPICS[:2])
        if name == "last_seq":
            return max(0, known.last_seq - rng.choice([0, 1, 5, 3000]))
        if name == "command":
            return self.command(self._table())
        if name == "options":
            return rng.choice([{}, {}, {"turn_ms": 1000}, {"nope": 1}, {"turn_ms": -1}])
        if name == "seats":
            return rng.choice([2, 3, 4, 0, 7, 16])
        if isinstance(spec, Int):
            return rng.choice([spec.lo, spec.hi, rng.randint(spec.lo, min(spec.hi, spec.lo + 50)),
                               rng.randint(spec.lo, spec.hi)])
        if isinstance(spec, Float):
            return rng.choice([spec.lo, spec.hi, rng.uniform(spec.lo, spec.hi), 1.0, 1])
        if isinstance(spec, Bool):
            return rng.random() < 0.5
        if isinstance(spec, Str):
            n = rng.choice([spec.min_len, spec.max_len, rng.randint(spec.min_len, spec.max_len)])
            return "".join(rng.choice("abcXYZ019-_ Ωé名") for _ in range(n))
        if isinstance(spec, Enum):
            return rng.choice(spec.values)
        if isinstance(spec, Pattern):  # a table id, well formed (a field named ``table`` also gets others, above)
            return rng.choice([*self.known.tables, "t1", "t999999", "w2-t7"])
        if isinstance(spec, Nullable):
            return None if rng.random() < 0.3 else self.good(spec.inner, name)
        if isinstance(spec, List):
            return [self.good(spec.item) for _ in range(rng.choice([0, 1, 2, min(spec.max_len, 7)]))]
        if isinstance(spec, Record):
            return self.fields(spec)
        if isinstance(spec, AnyMap):
            return {f"k{i}": rng.choice(INT_EDGES) for i in range(rng.choice([0, 1, 3]))}
        raise TypeError(f"no values for {spec!r}")

    def bad(self, spec: Any) -> Any:
        """A value that does not fit ``spec``: the wrong type, just out of range, or too long or short."""
        rng = self.rng
        wrong_type = rng.choice([None, True, 0, -1, 2**64 - 1, 1.5, float("nan"), "", "x", [], [1], {}, {"a": 1}])
        if rng.random() < 0.4:
            return wrong_type
        if isinstance(spec, Int):
            return rng.choice([spec.lo - 1, spec.hi + 1, -(2**63), 2**64 - 1, float(spec.lo), True])
        if isinstance(spec, Float):
            return rng.choice([spec.lo - 0.0001, spec.hi * 2, float("inf"), float("nan"), -0.0, 1e30])
        if isinstance(spec, Str):
            return rng.choice(["x" * (spec.max_len + 1), "" if spec.min_len else 7, "é" * (spec.max_len + 1)])
        if isinstance(spec, Enum):
            return rng.choice(["", spec.values[0].upper(), spec.values[0] + " ", 0])
        if isinstance(spec, Pattern):  # a table id: a leading zero, a line's end, another script's digit, too long
            return rng.choice(["t01", "t1\n", "w\u0662-t1", "t" + "1" * spec.max_len, ""])
        if isinstance(spec, List):
            return rng.choice([[self.bad(spec.item)], [self.good(spec.item)] * (spec.max_len + 1), {}])
        if isinstance(spec, (Record, AnyMap)):
            return rng.choice([{"k": 1} if isinstance(spec, Record) else {1: 2},
                               {f"k{i}": 0 for i in range(getattr(spec, "max_len", 40) + 1)}, [], "map"])
        return wrong_type

    def fields(self, spec: Record) -> dict[str, Any]:
        """Every required field of ``spec`` and some of its optional ones, with plausible values."""
        out = {name: self.good(s, name) for name, s in spec.required.items()}
        for name, s in spec.optional.items():
            if self.rng.random() < 0.4:
                out[name] = self.good(s, name)
        return out

    def command(self, table: str) -> Any:
        """A game command for ``table``: a legal template filled, a catalogue command, or anything."""
        rng, known = self.rng, self.known
        if known.legal and table == known.own_table and rng.random() < 0.5:
            return fill(rng.choice(known.legal), rng)
        game = self._game_of(table) if rng.random() < 0.9 else rng.choice(sorted(GAMES))
        catalogue = GAMES[game].COMMANDS
        kind = rng.choice(sorted(catalogue))
        command = {"type": kind, **self.fields(catalogue[kind])}
        if rng.random() < 0.5:
            self._spoil(command, catalogue[kind])
        return command

    def message(self) -> dict[str, Any]:
        kind = self.rng.choice(sorted(CLIENT_MESSAGES))
        msg = {"type": kind, **self.fields(CLIENT_MESSAGES[kind])}
        if self.rng.random() < 0.7:
            msg["id"] = self.rng.randint(0, 2**31 - 1)
        return msg

    def _spoil(self, msg: dict[str, Any], spec: Record) -> None:
        """One field of ``msg`` made wrong: dropped, of a wrong value, or one that ``spec`` has not."""
        rng = self.rng
        names = [*spec.required, *spec.optional]
        how = rng.randrange(4) if names else 3
        if how == 0:
            msg.pop(rng.choice(names), None)
        elif how <= 2:
            name = rng.choice(names)
            msg[name] = self.bad({**spec.required, **spec.optional}[name])
        else:
            msg[rng.choice(["extra", "Type", "id ", "", "command", "seat"])] = rng.choice(INT_EDGES)

    def _encoded(self) -> bytes:
        msg = self.message() if self.rng.random() < 0.6 else self._act()
        return _pack(msg)

    def _act(self) -> dict[str, Any]:
        table = self._table()
        return {"type": "act", "id": self.rng.randint(0, 2**31 - 1), "table": table, "command": self.command(table)}

    # ------------------------------------------------------------------ the families

    def _message(self) -> bytes:
        return _pack(self.message())

    def _field(self) -> bytes:
        rng = self.rng
        msg = self.message()
        spec = CLIENT_MESSAGES[msg["type"]]
        if rng.random() < 0.15:
            msg["type"] = rng.choice([None, 1, "", "HELLO", "act ", "tables" * 20, ["act"], {"t": 1}, "détruire"])
        else:
            self._spoil(msg, spec)
        return _pack(msg)

    def _command(self) -> bytes:
        return _pack(self._act())

    def _bytes(self) -> bytes:
        rng = self.rng
        data = bytearray(self._encoded())
        for _ in range(rng.choice([1, 1, 2, 4])):
            how = rng.randrange(5)
            at = rng.randrange(len(data)) if data else 0
            if how == 0 and len(data) > 1:
                del data[rng.randrange(1, len(data)):]
            elif how == 1 and data:
                data[at] ^= 1 << rng.randrange(8)
            elif how == 2:
                data[at:at] = rng.randbytes(rng.choice([1, 2, 5]))
            elif how == 3 and data:
                del data[at:at + rng.choice([1, 2, 4])]
            elif data:
                data[at] = rng.choice([0xC1, 0xC0, 0xFF, 0x00, 0xDF, 0xDD, 0xDB, 0xC9, 0xD4, 0x80, 0x90])
        return bytes(data)

    def _header(self) -> bytes:
        rng = self.rng
        head = rng.choice(HUGE)
        tail = rng.choice([b"", b"abc", b"\x00" * 64, _pack(1)])
        if rng.random() < 0.5:
            return head + tail
        return b"\x82" + _pack("type") + _pack("ping") + _pack(rng.choice(["id", "x", "data"])) + head + tail

    def _deep(self) -> bytes:
        rng = self.rng
        depth = rng.choice([self.known.limits.max_depth, self.known.limits.max_depth + 1, 17, 100, 1000, 5000])
        opener = rng.choice([b"\x91", b"\x81\xa1k", b"\xdc\x00\x01", b"\xde\x00\x01\xa0"])
        nested = opener * depth + rng.choice([b"\xc0", b"\x90", b"\x80", b""])
        if rng.random() < 0.5:
            return nested
        key = rng.choice(["command", "options", "data", "id", "table"])
        return (b"\x83" + _pack("type") + _pack(rng.choice(["act", "create", "admin", "ping"])) + _pack("table")
                + _pack(self._table()) + _pack(key) + nested)

    def _utf8(self) -> bytes:
        rng = self.rng
        bad = rng.choice(BAD_UTF8)
        raw = str_header(len(bad)) + bad
        kind = rng.choice(["ping", "join", "act", "hello", "resume"])
        if rng.random() < 0.3:  # as a key
            return b"\x82" + _pack("type") + _pack(kind) + raw + b"\x01"
        place = rng.choice(["type", "table", "name", "token", "client", "command"])
        if place == "type":
            return b"\x81" + _pack("type") + raw
        if place == "command":
            return b"\x83" + _pack("type") + _pack("act") + _pack("table") + _pack(self._table()) \
                + _pack("command") + b"\x81" + _pack("type") + raw
        return b"\x82" + _pack("type") + _pack(kind) + _pack(place) + raw

    def _ext(self) -> bytes:
        rng = self.rng
        ext = rng.choice(EXTS)
        if rng.random() < 0.3:
            return ext
        return b"\x82" + _pack("type") + _pack(rng.choice(["ping", "act", "view"])) \
            + _pack(rng.choice(["id", "table", "command", "x"])) + ext

    def _type(self) -> bytes:
        rng = self.rng
        value = every_type(rng)
        if rng.random() < 0.3:
            return value
        msg = self.message()
        name = rng.choice([k for k in msg if k != "type"] or ["id"])
        body = [(k, _pack(v)) for k, v in msg.items() if k != name] + [(name, value)]
        return map_header(len(body)) + b"".join(_pack(k) + v for k, v in body)

    def _limits(self) -> bytes:
        rng, limits = self.rng, self.known.limits
        which = rng.randrange(5)
        if which == 0:
            return _pack({"type": "hello", "client": "x" * (limits.max_str_len + 1), "version": PROTOCOL_VERSION})
        if which == 1:
            return _pack({"type": "ping", "id": 1, "data": [0] * (limits.max_array_len + 1)})
        if which == 2:
            return _pack({"type": "act", "table": self._table(),
                          "command": {f"k{i}": 0 for i in range(limits.max_map_len + 1)}})
        if which == 3:
            return b"\xc4\x01\x00" if rng.random() < 0.5 else _pack({"type": "ping", "pad": b"\x00"})
        return _pack({"type": "ping", "pad": "x" * (limits.max_frame_bytes - 10)})  # just over the frame limit

    def _shape(self) -> bytes:
        rng = self.rng
        which = rng.randrange(7)
        if which == 0:  # the same key twice: the last one counts
            return b"\x82" + _pack("type") + _pack("ping") + _pack("type") + _pack(rng.choice(["act", "hello", 1]))
        if which == 1:
            key = rng.choice([b"\x01", b"\xc0", b"\xc3", b"\x90", b"\x80", b"\xcb" + b"\x00" * 8])
            return b"\x82" + _pack("type") + _pack("ping") + key + b"\x01"
        if which == 2:
            return self._encoded() + rng.choice([b"\x00", b"\xc0", _pack({"type": "ping"}), b"\xc1"])
        if which == 3:
            return b""
        if which == 4:
            return _pack(rng.choice([[{"type": "ping"}], "ping", 1, None, True, 1.5]))
        if which == 5:  # a map that declares more entries than it holds
            return b"\x83" + _pack("type") + _pack("ping")
        return map_header(1) + _pack("type") + _pack(rng.choice(sorted(CLIENT_MESSAGES)))

    def _random(self) -> bytes:
        rng = self.rng
        return rng.randbytes(rng.choice([1, 2, 3, 8, 32, 200]))

    def _text(self) -> str:
        return self.rng.choice(["", "ping", '{"type":"ping"}', "\x00", "Ω" * 10])
