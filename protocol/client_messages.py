"""What a client may send, as typed structs: the catalogue of client messages, spelled once.

Each message is a frozen ``msgspec.Struct`` tagged by its ``type``; each field's type carries its range or size
(``msgspec.Meta``). ``protocol.messages`` decodes a frame straight into these and derives from them the schema
(``protocol.schema.Record``) that words every refusal, SPEC.md's field tables and the web client's types, so
the catalogue cannot say two things. An optional field with no default is ``UNSET`` when the client left it out;
one with a default (``views``, ``limit``, ...) reads as that default. The free-form maps (``act.command``,
``create.options``, ``admin.data``) are named in ``FREE_FORM``: their contents are checked by the codec's walk and
by the game, never here.
"""

from __future__ import annotations

import types
from typing import Annotated, Any, Literal, Union, TypeVar, get_args, get_origin, get_type_hints

import msgspec
from msgspec import UNSET, Meta, UnsetType
from msgspec import inspect as mi

from protocol.schema import AnyMap, Bool, Enum, Float, Int, Pattern, Record, Spec, Str

MAX_SEATS = 16
HISTORY_PAGE = 256  # events in one `history` answer at most (and never more than HISTORY_PAGE_BYTES)
REPLAY_PAGE = 256  # steps in one `replay` answer at most (and never more than HISTORY_PAGE_BYTES)
TABLE_ADMIN = {"pause": "pause_clocks", "unpause": "unpause_clocks", "close": "close_table"}  # action -> the
# table's request it becomes (an organiser's, with the admin token: only `admin` carries them)
SERVER_ADMIN = ("kick", "connections", "publish")  # admin actions the server answers itself
ADMIN_ACTIONS = (*TABLE_ADMIN, *SERVER_ADMIN)

# The field types, each with its bounds (the table id's pattern is matched whole: ``\Z``, not ``$``).
RequestId = Annotated[int, Meta(ge=0, le=2**31 - 1)]
TableId = Annotated[str, Meta(max_length=64, pattern=r"^(?:(?:w[1-9][0-9]*-)?t[1-9][0-9]*)\Z",
                              description="table id (t7; w2-t7 on a cluster)")]
GameName = Annotated[str, Meta(min_length=1, max_length=32)]
Seats = Annotated[int, Meta(ge=1, le=MAX_SEATS)]
AdminToken = Annotated[str, Meta(min_length=1, max_length=256)]
Topic = Annotated[str, Meta(min_length=1, max_length=64)]
Seq = Annotated[int, Meta(ge=0, le=2**62)]
ConnId = Annotated[int, Meta(ge=1, le=2**62)]
Name = Annotated[str, Meta(min_length=1, max_length=64)]
EntrantKey = Annotated[str, Meta(min_length=16, max_length=64)]
AdminAction = Literal["pause", "unpause", "close", "kick", "connections", "publish"]
assert get_args(AdminAction) == ADMIN_ACTIONS
Command = Annotated[dict[str, Any], Meta(max_length=32)]  # a game's command: the game's catalogue checks it
Options = Annotated[dict[str, Any], Meta(max_length=32)]  # a game's table options: the game checks them
Data = Annotated[dict[str, Any], Meta(max_length=256)]  # a bulletin's document, as the organiser wrote it


class ClientMessage(msgspec.Struct, tag_field="type", forbid_unknown_fields=True, frozen=True, kw_only=True,
                    gc=False):
    """A message from a client. ``id``, when given, comes back as ``re`` in the reply."""

    id: RequestId | UnsetType = UNSET

    @property
    def re(self) -> int | None:
        return None if self.id is UNSET else self.id


class Hello(ClientMessage, tag="hello", frozen=True):
    version: Annotated[int, Meta(ge=0, le=2**31 - 1)]
    client: Annotated[str, Meta(max_length=64)]


class Tables(ClientMessage, tag="tables", frozen=True):
    pass


class Create(ClientMessage, tag="create", frozen=True):
    game: GameName
    seats: Seats
    seed: Annotated[int, Meta(ge=0, le=2**63 - 1)] | UnsetType = UNSET
    time_scale: Annotated[float, Meta(ge=0.001, le=10000)] = 1.0
    options: Options | UnsetType = UNSET
    admin: AdminToken | UnsetType = UNSET
    rated: bool = False


class Join(ClientMessage, tag="join", frozen=True):
    table: TableId
    name: Name
    views: bool = True
    key: EntrantKey | UnsetType = UNSET
    entrant_key: EntrantKey | UnsetType = UNSET


class Watch(ClientMessage, tag="watch", frozen=True):
    table: TableId
    views: bool = True


class Leave(ClientMessage, tag="leave", frozen=True):
    table: TableId


class Resume(ClientMessage, tag="resume", frozen=True):
    table: TableId
    token: Annotated[str, Meta(min_length=1, max_length=128)]
    last_seq: Seq
    views: bool = True


class Act(ClientMessage, tag="act", frozen=True):
    table: TableId
    command: Command
    key: Name | UnsetType = UNSET


class View(ClientMessage, tag="view", frozen=True):
    table: TableId


class History(ClientMessage, tag="history", frozen=True):
    table: TableId
    after: Seq
    limit: Annotated[int, Meta(ge=1, le=HISTORY_PAGE)] = HISTORY_PAGE


class Ping(ClientMessage, tag="ping", frozen=True):
    pass


class Admin(ClientMessage, tag="admin", frozen=True):
    token: AdminToken
    action: AdminAction
    table: TableId | UnsetType = UNSET
    conn: ConnId | UnsetType = UNSET
    topic: Topic | UnsetType = UNSET
    data: Data | UnsetType = UNSET
    hold: bool = False


class Bulletin(ClientMessage, tag="bulletin", frozen=True):
    topic: Topic
    follow: bool = False


class Ratings(ClientMessage, tag="ratings", frozen=True):
    game: GameName | UnsetType = UNSET


class Replay(ClientMessage, tag="replay", frozen=True):
    table: TableId
    after: Seq
    limit: Annotated[int, Meta(ge=1, le=REPLAY_PAGE)] = REPLAY_PAGE


AnyClientMessage = Union[Hello, Tables, Create, Join, Watch, Leave, Resume, Act, View, History, Ping, Admin,
                         Bulletin, Ratings, Replay]
KINDS: dict[str, type[ClientMessage]] = {cls.__struct_config__.tag: cls for cls in get_args(AnyClientMessage)}
TableRequest = Union[Join, Watch, Leave, Resume, Act, View]  # what a table's task handles
TABLE_REQUESTS = tuple(cls.__struct_config__.tag for cls in get_args(TableRequest))
TAGS: dict[type[ClientMessage], str] = {cls: kind for kind, cls in KINDS.items()}
FREE_FORM: dict[type[ClientMessage], str] = {Act: "command", Create: "options", Admin: "data"}
FREE_FORM_DEPTH = 2  # a free-form map's depth in the message, as the codec counts it (the message is 1)


T = TypeVar("T")


def kind_of(msg: ClientMessage) -> str:
    """The message's ``type``."""
    return TAGS[type(msg)]


def given(value: T | UnsetType) -> T | None:
    """An optional field's value, or None when the client left it out."""
    return None if isinstance(value, UnsetType) else value


def spec_of(kind: Any) -> Spec:
    """The schema spec of a field type: what words a refusal and fills SPEC.md's ``type`` column."""
    info = mi.type_info(kind)
    shape = None
    if isinstance(info, mi.Metadata):
        shape = (info.extra_json_schema or {}).get("description")
        info = info.type
    if isinstance(info, mi.IntType):
        assert info.ge is not None and info.le is not None, kind
        return Int(info.ge, info.le)
    if isinstance(info, mi.FloatType):
        assert info.ge is not None and info.le is not None, kind
        return Float(info.ge, info.le)
    if isinstance(info, mi.BoolType):
        return Bool()
    if isinstance(info, mi.LiteralType):
        return Enum(get_args(kind))  # in the order written (the inspected values are sorted)
    if isinstance(info, mi.StrType) and info.max_length is not None:
        if info.pattern is not None:
            assert shape is not None and info.pattern.startswith("^(?:") and info.pattern.endswith(r")\Z"), kind
            return Pattern(info.max_length, info.pattern[4:-3], shape)
        return Str(info.max_length, min_len=info.min_length or 0)
    if isinstance(info, mi.DictType) and info.max_length is not None:
        return AnyMap(info.max_length)
    raise TypeError(f"no spec for {kind!r}")


def record_of(cls: type[ClientMessage]) -> Record:
    """The schema of a message: its required fields, then ``id``, then its other optional fields, in the order
    its class declares them (the order the schema checks them, so the first fault is the one reported)."""
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    fields = {field.name: field for field in info.fields}
    hints = get_type_hints(cls, include_extras=True)  # each field's type with its Meta, inherited ones too
    required = {name: spec_of(_without_unset(hints[name])) for name, field in fields.items() if field.required}
    optional = {name: spec_of(_without_unset(hints[name])) for name in ["id", *(n for n in fields if n != "id")]
                if not fields[name].required}
    return Record(required, optional)


def _without_unset(hint: Any) -> Any:
    """An optional field's type without its ``UnsetType``."""
    args = [arg for arg in get_args(hint) if arg is not UnsetType] if _is_union(hint) else None
    return hint if args is None else (args[0] if len(args) == 1 else Union[tuple(args)])


def _is_union(hint: Any) -> bool:
    return get_origin(hint) in (Union, types.UnionType)
