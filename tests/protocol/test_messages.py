import ast
import json
import re
from dataclasses import fields
from pathlib import Path

import pytest

from protocol import messages as messages_module
from protocol.codec import Limits, decode, encode
from protocol.errors import ERROR_CODES, FATAL_CODES, ProtocolError
from protocol.messages import (
    CLIENT_MESSAGES,
    MAX_ERROR_MESSAGE,
    PROTOCOL_VERSION,
    SERVER_PUSHES,
    SERVER_REPLIES,
    TABLE_SUMMARY,
    check_server,
    error,
    parse_client,
    pong,
    reply,
    request_id,
    welcome,
)
from protocol.frames import ViewFrames, event_frame
from protocol.schema import SchemaError

ROOT = Path(__file__).resolve().parents[2]
SPEC = (ROOT / "protocol" / "SPEC.md").read_text()

MINIMAL = {
    "hello": {"version": PROTOCOL_VERSION, "client": "c"},
    "tables": {},
    "create": {"game": "parsimonia", "seats": 4},
    "join": {"table": "t1", "name": "Ada"},
    "watch": {"table": "t1"},
    "leave": {"table": "t1"},
    "resume": {"table": "t1", "token": "secret", "last_seq": 0},
    "act": {"table": "t1", "command": {"type": "pass"}},
    "view": {"table": "t1"},
    "history": {"table": "t1", "after": 0},
    "ping": {},
    "admin": {"token": "secret", "action": "connections"},
    "bulletin": {"topic": "standings"},
    "ratings": {},
    "replay": {"table": "t1", "after": 0},
}


def refused(obj) -> ProtocolError:
    with pytest.raises(ProtocolError) as caught:
        parse_client(obj)
    return caught.value


def section(text: str, heading: str) -> str:
    """The body of a markdown section, up to the next heading of the same or a higher level."""
    level = heading.count("#", 0, heading.index(" "))
    start = text.index(f"\n{heading}\n") + len(heading) + 2
    end = re.compile(rf"^#{{1,{level}}} ", re.M).search(text, start)
    return text[start : end.start() if end else len(text)]


def table_rows(body: str) -> list[list[str]]:
    """Rows of the first markdown table in ``body`` (header and rule left out), cells stripped."""
    table: list[str] = []
    for line in (line.strip() for line in body.splitlines()):
        if line.startswith("|"):
            table.append(line)
        elif table:
            break
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in table[2:]]


def json_examples(body: str) -> list[dict]:
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)\n```", body, re.S)]


# --- parse_client ------------------------------------------------------------------------------------


def test_catalogue_covers_every_client_message():
    assert set(CLIENT_MESSAGES) == set(MINIMAL)


@pytest.mark.parametrize("kind", sorted(MINIMAL))
def test_minimal_message_accepted_with_and_without_id(kind):
    assert parse_client({"type": kind, **MINIMAL[kind]}) == {"type": kind, **MINIMAL[kind]}
    assert parse_client({"type": kind, "id": 2**31 - 1, **MINIMAL[kind]})["id"] == 2**31 - 1


@pytest.mark.parametrize("bad_id", [-1, 2**31, True, "1", None, 1.0])
def test_bad_id_rejected(bad_id):
    err = refused({"type": "ping", "id": bad_id})
    assert (err.code, err.fatal) == ("bad_field", False)
    assert err.message.startswith("id:")


def test_missing_type_rejected():
    assert refused({"id": 1}).code == "missing_field"


def test_non_string_type_is_bad_field():
    assert refused({"type": 3}).code == "bad_field"


def test_unknown_type_rejected():
    err = refused({"type": "teleport"})
    assert (err.code, err.fatal) == ("unknown_type", False)
    assert "teleport" in err.message


def test_unknown_field_rejected():
    err = refused({"type": "join", "table": "t1", "name": "Ada", "seat": 2})
    assert err.code == "unknown_field"
    assert err.message.startswith("seat:")


def test_missing_field_rejected():
    err = refused({"type": "join", "table": "t1"})
    assert err.code == "missing_field"
    assert err.message.startswith("name:")


@pytest.mark.parametrize(
    ("kind", "field", "value"),
    [
        ("hello", "version", "1"),
        ("hello", "client", "x" * 65),
        ("create", "game", ""),
        ("create", "game", "g" * 33),
        ("create", "seats", 0),
        ("create", "seats", 17),
        ("create", "seats", True),
        ("create", "seed", -1),
        ("create", "seed", 2**63),
        ("create", "time_scale", 0.0009),
        ("create", "time_scale", 10000.5),
        ("create", "time_scale", "fast"),
        ("create", "options", {str(i): i for i in range(33)}),
        ("create", "options", [1]),
        ("join", "table", ""),
        ("join", "table", "t" * 65),
        ("join", "name", ""),
        ("join", "name", "n" * 65),
        ("resume", "token", "k" * 129),
        ("resume", "last_seq", -1),
        ("resume", "last_seq", 2**62 + 1),
        ("act", "command", "bid"),
        ("act", "command", {str(i): i for i in range(33)}),
    ],
)
def test_field_out_of_type_or_range_is_bad_field_naming_the_field(kind, field, value):
    err = refused({"type": kind, **MINIMAL[kind], field: value})
    assert err.code == "bad_field"
    assert err.message.startswith(f"{field}:")


@pytest.mark.parametrize("table", ["w2-t1\n", "w02-t1", "w\u0662-t1", "t\u0667", "t0", "t01", "w0-t1", "w2-t", "x",
                                   "../replays/t9", "t" + "1" * 64, " t1"])
def test_a_table_id_is_ascii_t_or_w_digits_whole_and_anything_else_is_bad_field(table):
    for kind in ("join", "watch", "resume", "act", "view", "leave", "history"):
        err = refused({"type": kind, **MINIMAL[kind], "table": table})
        assert (err.code, err.message.split(":")[0]) == ("bad_field", "table"), kind
    for table in ("t1", "t907", "w2-t1", "w101-t33"):
        assert parse_client({"type": "watch", "table": table})["table"] == table


def test_create_optional_fields_accepted_and_time_scale_becomes_float():
    options = {"turn_ms": 500}
    msg = parse_client(
        {"type": "create", "game": "kupcy", "seats": 16, "seed": 2**63 - 1, "time_scale": 10000, "options": options}
    )
    assert msg["time_scale"] == 10000.0 and isinstance(msg["time_scale"], float)
    assert msg["options"] == options


def test_act_command_passed_through_unchecked():
    command = {"type": "no_such_command", "weird": [{"deep": None}], "n": -(2**63)}
    assert parse_client({"type": "act", "table": "t1", "command": command})["command"] is command


def test_request_id_recovered_even_from_a_refused_message():
    assert request_id({"type": "join", "id": 12, "seat": "x"}) == 12
    assert request_id({"type": "ping"}) is None
    assert request_id({"type": "ping", "id": -5}) is None
    assert request_id({"type": "ping", "id": True}) is None


def test_decoded_frame_parses():
    frame = encode({"type": "act", "id": 3, "table": "t1", "command": {"type": "bid", "amount": 4}})
    assert parse_client(decode(frame))["command"] == {"type": "bid", "amount": 4}


# --- builders --------------------------------------------------------------------------------------


def test_reply_carries_re_only_when_the_request_had_an_id():
    assert reply("created", 5, table="t1") == {"type": "created", "re": 5, "table": "t1"}
    assert reply("created", None, table="t1") == {"type": "created", "table": "t1"}
    assert reply("ok", 0) == {"type": "ok", "re": 0}


def test_reply_refuses_fields_the_spec_lacks_or_bad_values():
    with pytest.raises(SchemaError):
        reply("created", 1, table="t1", extra=1)
    with pytest.raises(SchemaError):
        reply("joined", 1, table="t1", seat=16, token="k")
    with pytest.raises(KeyError):
        reply("event", 1)


def test_tables_reply_checks_each_summary():
    summary = {"table": "t1", "game": "kupcy", "seats": 3, "taken": 1, "state": "waiting", "spectators": 0,
               "paused": False}
    assert reply("tables", 1, tables=[summary])["tables"] == [summary]
    with pytest.raises(SchemaError):
        reply("tables", 1, tables=[{**summary, "state": "paused"}])


def test_welcome_announces_version_limits_and_games_with_how_to_show_them():
    display = {"parsimonia": {"title": "Parsimonia", "currency": "$"}, "kupcy": {"title": "Kupcy", "currency": ""}}
    msg = welcome(re=1, server_time=1042, limits=Limits(max_depth=8), display=display)
    assert msg["type"] == "welcome" and msg["re"] == 1
    assert msg["version"] == PROTOCOL_VERSION
    assert msg["limits"] == {f.name: getattr(Limits(max_depth=8), f.name) for f in fields(Limits)}
    assert msg["games"] == ["kupcy", "parsimonia"] and msg["display"] == display
    assert msg["server_time"] == 1042


def test_pong_carries_server_time():
    assert pong(re=None, server_time=7) == {"type": "pong", "server_time": 7}


def test_error_carries_code_message_and_re():
    msg = error(ProtocolError("no_such_table", "no table t9"), re=4, table="t9")
    assert msg == {"type": "error", "code": "no_such_table", "message": "no table t9", "re": 4, "table": "t9"}


def test_illegal_action_error_carries_reason():
    msg = error(ProtocolError("illegal_action", "a bid must beat 7", reason="bid_too_low"))
    assert msg == {"type": "error", "code": "illegal_action", "message": "a bid must beat 7", "reason": "bid_too_low"}


def test_error_message_cut_to_limit():
    long_type = "x" * 4000
    err = refused({"type": long_type})
    assert len(error(err)["message"]) == MAX_ERROR_MESSAGE


def test_an_event_frame_is_an_event_push_with_no_re_and_seq_from_one():
    msg = decode(event_frame("t1", 1, 50, {"type": "started", "at": 50}))
    assert check_server(msg) == {"type": "event", "table": "t1", "seq": 1, "time": 50,
                                 "event": {"type": "started", "at": 50}}
    with pytest.raises(SchemaError):
        check_server(decode(event_frame("t1", 0, 50, {"type": "started", "at": 50})))


def test_view_frames_share_the_public_part_and_add_each_seat_its_own():
    frames = ViewFrames("t1", 4, 9, {"pot": 3})
    spectator = check_server(decode(frames.for_seat(None, None, [])))
    assert spectator == {"type": "view", "table": "t1", "seq": 4, "time": 9, "seat": None, "view": {"pot": 3},
                         "legal": []}
    answer = check_server(decode(frames.for_seat(2, {"hand": [1, 2]}, [{"type": "pass"}], re=11)))
    assert (answer["re"], answer["seat"], answer["legal"], answer["private"]) == (11, 2, [{"type": "pass"}],
                                                                                   {"hand": [1, 2]})
    assert answer["view"] == spectator["view"]


def test_a_server_message_outside_the_catalogue_is_caught_by_check_server():
    with pytest.raises(SchemaError):
        check_server({"type": "gossip"})
    with pytest.raises(SchemaError):
        check_server({"type": "view", "table": "t1", "seq": 1, "time": 0, "seat": None, "view": {}, "legal": [],
                      "extra": 1})


# --- errors -------------------------------------------------------------------------------------------


def schema_error_codes() -> set[str]:
    """Every literal code passed to ``SchemaError(...)`` in the protocol and server packages."""
    codes = set()
    for path in [*(ROOT / "protocol").rglob("*.py"), *(ROOT / "server").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "SchemaError"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                codes.add(node.args[0].value)
    return codes


def test_schema_error_codes_are_in_catalogue():
    codes = schema_error_codes()
    assert {"bad_field", "unknown_field", "missing_field", "unknown_command"} <= codes
    assert codes <= set(ERROR_CODES)


def test_catalogue_holds_the_agreed_codes():
    assert set(ERROR_CODES) >= {
        "malformed", "too_large", "too_deep", "unknown_type", "missing_field", "unknown_field", "bad_field",
        "unknown_command", "version_unsupported", "hello_required", "no_such_table", "no_such_game",
        "table_full", "already_seated", "not_seated", "bad_token", "rate_limited", "internal", "illegal_action",
    }  # fmt: skip
    assert FATAL_CODES <= set(ERROR_CODES)
    assert all(meaning and "\n" not in meaning for meaning in ERROR_CODES.values())


def test_protocol_error_refuses_codes_outside_catalogue():
    with pytest.raises(ValueError):
        ProtocolError("oops", "no such code")


def test_reason_given_with_illegal_action_and_only_then():
    with pytest.raises(ValueError):
        ProtocolError("illegal_action", "refused")
    with pytest.raises(ValueError):
        ProtocolError("bad_field", "x", reason="bid_too_low")


def test_fatal_defaults_from_code_and_can_be_overridden():
    assert ProtocolError("malformed", "x").fatal
    assert not ProtocolError("rate_limited", "x").fatal
    assert ProtocolError("rate_limited", "x", fatal=True).fatal


def test_schema_error_becomes_protocol_error_with_its_code_and_path():
    err = ProtocolError.from_schema(SchemaError("unknown_command", "command.type", "unknown command type 'fly'"))
    assert (err.code, err.message, err.fatal) == ("unknown_command", "command.type: unknown command type 'fly'", False)


# --- SPEC.md ------------------------------------------------------------------------------------------


def test_every_error_code_documented():
    rows = table_rows(section(SPEC, "## Error codes"))
    documented = {row[0].strip("`"): (row[1] == "yes", row[2]) for row in rows}
    assert documented == {code: (code in FATAL_CODES, meaning) for code, meaning in ERROR_CODES.items()}


@pytest.mark.parametrize(
    ("part", "catalogue"),
    [("## Client messages", CLIENT_MESSAGES), ("## Server messages", {**SERVER_REPLIES, **SERVER_PUSHES})],
)
def test_every_message_and_field_documented(part, catalogue):
    body = section(SPEC, part)
    assert re.findall(r"^### (\w+)$", body, re.M) == list(catalogue)
    for kind, spec in catalogue.items():
        rows = table_rows(section(body, f"### {kind}"))
        documented = {row[0].strip("`"): (row[1], row[2] == "yes") for row in rows}
        assert documented == {
            **{name: (field.describe(), True) for name, field in spec.required.items()},
            **{name: (field.describe(), False) for name, field in spec.optional.items()},
        }, kind


def test_table_summary_fields_documented():
    body = section(section(SPEC, "## Server messages"), "### tables")
    summary = body[body.index("Each entry of `tables`") :]
    assert {row[0].strip("`"): (row[1], row[2] == "yes") for row in table_rows(summary)} == {
        **{name: (field.describe(), True) for name, field in TABLE_SUMMARY.required.items()},
        **{name: (field.describe(), False) for name, field in TABLE_SUMMARY.optional.items()},
    }


def test_limits_documented_with_their_defaults():
    rows = table_rows(section(SPEC, "## Transport"))
    assert {row[0].strip("`"): int(row[1]) for row in rows} == {f.name: f.default for f in fields(Limits)}


def test_client_examples_in_spec_parse():
    for kind in CLIENT_MESSAGES:
        (example,) = json_examples(section(section(SPEC, "## Client messages"), f"### {kind}"))
        assert example["type"] == kind
        assert parse_client(example) == example


def test_server_examples_in_spec_fit_catalogue():
    catalogue = {**SERVER_REPLIES, **SERVER_PUSHES}
    for kind, spec in catalogue.items():
        (example,) = json_examples(section(section(SPEC, "## Server messages"), f"### {kind}"))
        assert example.pop("type") == kind
        assert spec.check(example) == example
    assert json_examples(section(section(SPEC, "## Server messages"), "### error"))[0]["code"] in ERROR_CODES


# --- request kinds, spelled once -----------------------------------------------------------------------


def test_table_requests_and_admin_actions_are_declared_once_in_the_catalogue():
    from server.core import session

    assert set(messages_module.TABLE_REQUESTS) <= set(CLIENT_MESSAGES)
    assert messages_module.ADMIN_ACTIONS == (*messages_module.TABLE_ADMIN, *messages_module.SERVER_ADMIN)
    internal = {"detach"}  # the connection's own, never sent by a client (the lobby's expiry is no request)
    assert set(session.REQUESTS) == {*messages_module.TABLE_REQUESTS, *messages_module.TABLE_ADMIN.values(),
                                     *internal}


def test_the_organisers_table_requests_are_spelled_in_the_server_only_where_they_are_handled():
    """Each comes from protocol.messages.TABLE_ADMIN; the session's handlers are checked against it above. A
    second map of actions to requests (as connection.py and cluster/relay.py each had) is what this catches."""
    for kind in messages_module.TABLE_ADMIN.values():
        spelled = {str(p.relative_to(ROOT)) for p in (ROOT / "server").rglob("*.py") if f'"{kind}"' in p.read_text()}
        assert spelled == {"server/core/session.py"}, kind


@pytest.mark.parametrize("answer", [{"seq": 7, "events": 2}, {"seq": 7, "events": 0},
                                    {"seq": 8, "events": 1, "created": {"auction": 3}}])
@pytest.mark.parametrize("re", [None, 12])
def test_an_ok_built_without_the_schema_is_what_the_schema_builds(answer, re):
    built = messages_module.ok(re, dict(answer))
    assert built == messages_module.reply("ok", re, **answer)
    assert encode(built) == encode(messages_module.reply("ok", re, **answer))  # the same bytes, keys in order
