"""The values a message may carry, as types: what msgpack encodes and ``protocol.codec.decode`` lets through.

``Value`` is the whole tree (nil, booleans, integers, finite floats, strings, bytes, arrays and maps with string
keys). Its arrays and maps are spelled ``Sequence`` and ``Mapping``, which only read, so a ``list[str]`` or a
``dict[str, int]`` a function built is a ``Value`` as it is. Decoding gives lists and dicts.

The other names are the open maps of the protocol, each named for what it holds: a function that builds one
returns the ``dict``; one that only reads it takes a ``Mapping``. Where a map's shape is fixed, its module has a
``TypedDict`` for it instead. They are all aliases, so they cost nothing at run time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias, Union

Value: TypeAlias = Union[None, bool, int, float, str, bytes, Sequence["Value"], Mapping[str, "Value"]]
Map: TypeAlias = dict[str, Value]  # a map of values whose keys the protocol leaves open
ReadMap: TypeAlias = Mapping[str, Value]  # the same, as a parameter that is only read

Message: TypeAlias = Map  # a whole message as a map: a server's before it is encoded, a client's as a table takes it
ViewPart: TypeAlias = Map  # a part of a game's view: its static, public or private part, or their union
EventData: TypeAlias = Map  # an event's fields besides its type and time (each game's own)
WireEvent: TypeAlias = Map  # an event as a seat gets it: its ``type``, its time ``at`` and its data (or {})
Command: TypeAlias = Map  # a game command (``type`` and its fields), checked against the game's catalogue
LegalAction: TypeAlias = Map  # a legal command template: an integer field may be ``{"min": a, "max": b}``
Options: TypeAlias = Map  # a game's table options, by name (numbers, flags, a deck document)
Result: TypeAlias = Map  # a game's outcome: game, seed, players, over, reason, winners, scores and its own detail
Snapshot: TypeAlias = Map  # a game's whole state, hidden parts included, as JSON-able data
