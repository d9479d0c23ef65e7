"""The protocol's stable error codes and the exception that carries one to the client.

``ERROR_CODES`` is the single source of the codes: ``protocol/SPEC.md`` lists exactly these, and a
``ProtocolError`` cannot be made with any other. A fatal error is sent, then the connection is closed.
"""

from __future__ import annotations

from protocol.schema import SchemaError

ERROR_CODES: dict[str, str] = {
    "malformed": "The frame is not one msgpack map with string keys (text frame, bad msgpack, trailing bytes, "
    "ext or bin value, non-finite float).",
    "too_large": "The frame, or a string, array or map in it, is over the limits sent in welcome.",
    "too_deep": "Maps and arrays are nested deeper than max_depth.",
    "unknown_type": "The message type is not one the server knows.",
    "missing_field": "A required field is missing.",
    "unknown_field": "The message has a field its type does not define.",
    "bad_field": "A field has the wrong type, or is out of range or size.",
    "unknown_command": "The game has no command of that type.",
    "version_unsupported": "The server does not speak the protocol version given in hello.",
    "hello_required": "The first message on a connection must be hello, and only the first.",
    "no_such_table": "No table has that id.",
    "no_such_game": "The server has no game of that name.",
    "table_full": "Every seat at the table is taken.",
    "already_seated": "This connection already holds a seat at that table.",
    "not_seated": "This connection holds no seat at that table.",
    "bad_token": "The resume token does not match that table.",
    "rate_limited": "Too many messages or bytes (of this connection, or of all its address's connections together; "
    "WebSocket pings and pongs count), or too many tables created; slow down. The message was dropped; the error carries its `re` when it had an id. "
    "Closes once its refusals outnumber the messages accepted since by 20 (each refusal a strike, each message "
    "accepted takes one away); the address may then open no connection for 10 s (HTTP 429).",
    "forbidden": "An admin request without the right admin token, or a create that needs one.",
    "illegal_action": "The game's rules refused a well-formed command; reason gives the game's own code.",
    "internal": "The server failed while handling the message.",
    "moved": "The table is held by another worker of this cluster; url gives its address: connect there and send "
    "the request again.",
    "unavailable": "The table's worker is restarting or not answering, or this worker has not yet read the cluster's "
    "directory; send the same request again after a short wait, backing off (the SDKs retry it).",
}

FATAL_CODES: frozenset[str] = frozenset({"malformed", "too_large", "too_deep", "version_unsupported", "hello_required"})


class ProtocolError(Exception):
    """An error reply. ``reason`` (the engine's own code) is given with ``illegal_action`` and only then;
    ``url`` (the worker holding the table) with ``moved`` and only then."""

    def __init__(self, code: str, message: str, *, reason: str | None = None, fatal: bool | None = None,
                 url: str | None = None) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"unknown protocol error code {code!r}")
        if (reason is not None) != (code == "illegal_action"):
            raise ValueError("reason is given with illegal_action and only then")
        if (url is not None) != (code == "moved"):
            raise ValueError("url is given with moved and only then")
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.reason = reason
        self.url = url
        self.re: int | None = None  # the id of the message it refuses, when a decoder could read one
        self.fatal = code in FATAL_CODES if fatal is None else fatal

    @classmethod
    def from_schema(cls, exc: SchemaError) -> ProtocolError:
        """The error a client gets for a message or command that does not fit its spec."""
        return cls(exc.code, exc.message)
