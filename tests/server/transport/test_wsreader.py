"""The server's WebSocket frame reader against wsproto's, on the same bytes: whole messages, pings, pongs, the
client's close, and every protocol violation with its close code, however the bytes are split into reads."""

from __future__ import annotations

import os
import struct
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from wsproto.connection import Connection, ConnectionType
from wsproto.events import CloseConnection, Message, Ping, Pong
from wsproto.extensions import Extension
from wsproto.frame_protocol import CloseReason, Opcode, RsvBits

from server.transport.wsreader import CLOSE, MAX_FRAGMENTS, MESSAGE, PING, PONG, VIOLATION, FrameReader, unmask

MAX = 300  # small, so that over-long messages come up often


class _SizeGuard(Extension):
    """The bound on a message's size the server put into wsproto before it had a reader of its own, with a
    fragment's header counted after the first (6, 8 or 14 bytes: the shortest form, the others are refused)."""

    name = "size-guard"

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._message = 0

    def enabled(self) -> bool:
        return True

    def offer(self) -> bool:
        return False

    def frame_inbound_header(self, proto: object, opcode: Opcode, rsv: RsvBits, payload_length: int) -> Any:
        if opcode.iscontrol():
            return RsvBits(False, False, False)
        head = 6 if payload_length < 126 else 8 if payload_length < 65536 else 14
        self._message = payload_length + (self._message + head if opcode is Opcode.CONTINUATION else 0)
        return CloseReason.MESSAGE_TOO_BIG if self._message > self.max_bytes else RsvBits(False, False, False)


def client_frame(opcode: int, payload: bytes, *, fin: bool = True, rsv: int = 0, masked: bool = True,
                 long_form: int = 0) -> bytes:
    """A frame as a client sends it; ``long_form`` 2 or 8 writes the length in that many bytes, needed or not."""
    n = len(payload)
    head = bytes([(0x80 if fin else 0) | rsv << 4 | opcode])
    mask_bit = 0x80 if masked else 0
    if long_form == 8 or n >= 65536:
        head += bytes([mask_bit | 127]) + struct.pack("!Q", n)
    elif long_form == 2 or n >= 126:
        head += bytes([mask_bit | 126]) + struct.pack("!H", n)
    else:
        head += bytes([mask_bit | n])
    if not masked:
        return head + payload
    key = os.urandom(4)
    return head + key + unmask(key, payload)


def ours(chunks: list[bytes]) -> list[tuple[str, Any]]:
    reader = FrameReader(MAX)
    names = {MESSAGE: "message", PING: "ping", PONG: "pong", CLOSE: "close", VIOLATION: "violation"}
    out: list[tuple[str, Any]] = []
    for chunk in chunks:
        out += [(names[kind], value[0] if kind == VIOLATION else value) for kind, value in reader.feed(chunk)]
    return out


def wsprotos(chunks: list[bytes]) -> list[tuple[str, Any]]:
    """What the server read with wsproto: its events up to the first close (the client's, or one for a violation)."""
    ws = Connection(ConnectionType.SERVER, [_SizeGuard(MAX)])
    out: list[tuple[str, Any]] = []
    parts: list[Any] = []
    for chunk in chunks:
        ws.receive_data(chunk)
        for event in ws.events():
            if isinstance(event, Message):
                parts.append(event.data)
                if event.message_finished:
                    out.append(("message", parts[0][:0].join(parts)))
                    parts = []
            elif isinstance(event, Ping):
                out.append(("ping", bytes(event.payload)))
            elif isinstance(event, Pong):
                out.append(("pong", bytes(event.payload)))
            elif isinstance(event, CloseConnection):
                violation = ws.state.name in ("OPEN", "LOCAL_CLOSING")  # a client's close changes the state
                out.append(("violation", int(event.code)) if violation else ("close", (int(event.code), event.reason)))
                return out
    return out


TEXTS = st.one_of(st.text(max_size=40).map(str.encode), st.binary(max_size=40))
FRAMES = st.one_of(
    st.builds(lambda p, fin: client_frame(0x2, p, fin=fin), st.binary(max_size=400), st.booleans()),
    st.builds(lambda p, fin: client_frame(0x1, p, fin=fin), TEXTS, st.booleans()),
    st.builds(lambda p, fin: client_frame(0x0, p, fin=fin), TEXTS, st.booleans()),
    st.builds(lambda p: client_frame(0x9, p), st.binary(max_size=125)),
    st.builds(lambda p: client_frame(0xA, p), st.binary(max_size=125)),
    st.builds(lambda code, reason: client_frame(0x8, struct.pack("!H", code) + reason),
              st.integers(0, 65535), TEXTS),
    st.builds(lambda p: client_frame(0x8, p), st.binary(max_size=1)),
    st.builds(lambda op, p, fin, rsv, masked, form: client_frame(op, p, fin=fin, rsv=rsv, masked=masked,
                                                                 long_form=form),
              st.integers(0, 15), st.binary(max_size=130), st.booleans(), st.integers(0, 7),
              st.booleans(), st.sampled_from([0, 0, 2, 8])),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(FRAMES, max_size=8), st.lists(st.integers(1, 50), max_size=20))
def test_the_reader_reads_what_wsproto_reads_however_the_bytes_are_split(frames: list[bytes], cuts: list[int]):
    stream = b"".join(frames)
    chunks, at = [], 0
    for cut in cuts:
        chunks.append(stream[at:at + cut])
        at += cut
    chunks = [c for c in [*chunks, stream[at:]] if c]
    mine, theirs = ours(chunks), wsprotos(chunks)
    if mine and theirs and mine[-1][0] == theirs[-1][0] == "violation" and mine[-1] != theirs[-1]:
        # a frame refused for two reasons: wsproto counts a stray continuation onto the last message's size
        # (1002 or 1009), or checks a text message's length before the UTF-8 of a fragment we have decoded
        # (1007 or 1009): which is found first depends on where the bytes were split
        assert {mine[-1][1], theirs[-1][1]} in ({1002, 1009}, {1007, 1009})
        mine, theirs = mine[:-1], theirs[:-1]
    assert mine == theirs


def test_a_message_over_the_bound_is_refused_from_its_header_alone():
    head = client_frame(0x2, b"x" * (MAX + 1))[:8]
    assert ours([head]) == [("violation", 1009)]


def test_a_message_of_empty_fragments_is_refused_once_their_headers_reach_the_bound_and_is_forgotten():
    reader = FrameReader(MAX)
    empty = client_frame(0x0, b"", fin=False)  # 6 bytes, its header and mask
    assert reader.feed(client_frame(0x2, b"", fin=False)) == []
    events = reader.feed(empty * (MAX // 6))
    assert events == [] and reader._parts
    assert reader.feed(empty) == [(VIOLATION, (1009, f"a message may have at most {MAX} bytes"))]
    assert reader._parts == [] and not reader._pending


def test_a_fragmented_message_within_the_bound_with_its_headers_is_read_whole():
    reader = FrameReader(MAX)
    pieces = [client_frame(0x2, b"a" * 100, fin=False), client_frame(0x0, b"b" * 94, fin=False),
              client_frame(0x0, b"c" * 94)]  # 100 + (6 + 94) * 2 = MAX
    assert reader.feed(b"".join(pieces)) == [(MESSAGE, b"a" * 100 + b"b" * 94 + b"c" * 94)]
    assert FrameReader(MAX - 1).feed(b"".join(pieces))[-1][0] == VIOLATION


def test_a_message_of_more_fragments_than_the_cap_is_refused_1009():
    reader = FrameReader(1 << 20)
    piece = client_frame(0x0, b"x", fin=False)
    assert reader.feed(client_frame(0x2, b"x", fin=False) + piece * (MAX_FRAGMENTS - 1)) == []
    assert reader.feed(piece) == [(VIOLATION, (1009, f"a message may come in at most {MAX_FRAGMENTS} frames"))]
    assert FrameReader(1 << 20).feed(client_frame(0x2, b"x", fin=False) + piece * (MAX_FRAGMENTS - 2)
                                     + client_frame(0x0, b"x")) == [(MESSAGE, b"x" * MAX_FRAGMENTS)]


def test_a_message_that_comes_a_byte_at_a_time_is_held_once_and_read_whole():
    reader = FrameReader(70_000)
    frame = client_frame(0x2, b"y" * 65_000)
    events = [event for i in range(len(frame)) for event in reader.feed(frame[i:i + 1])]
    assert events == [(MESSAGE, b"y" * 65_000)]


def test_a_text_message_split_inside_a_character_is_joined():
    word = "ħello".encode()
    frames = client_frame(0x1, word[:1], fin=False) + client_frame(0x0, word[1:])
    assert ours([frames]) == [("message", "ħello")]


def test_nothing_is_read_after_the_clients_close():
    stream = client_frame(0x8, struct.pack("!H", 1000) + b"bye") + client_frame(0x2, b"late")
    assert ours([stream]) == [("close", (1000, "bye"))]


def test_a_close_with_code_1014_is_refused_as_wsproto_refuses_it():
    frame = client_frame(0x8, (1014).to_bytes(2, "big"))
    assert ours([frame]) == wsprotos([frame]) == [("violation", 1002)]
