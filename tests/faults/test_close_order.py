"""What the server took before a close is answered before it (issue 37), against ``parsimonia serve`` in its own
process: requests and a frame that closes the connection (a protocol violation, a message over the bound, the
client's own close) written together, so that the server reads them in one go; every request is answered, in order,
before the close frame, and the close carries the code SPEC.md gives."""

from __future__ import annotations

import struct

import trio

from protocol.codec import encode
from protocol.messages import PROTOCOL_VERSION
from tests.faults.served import Served
from tests.faults.wsclient import CLOSE, PING, HostileSocket, client_frame

REQUESTS = 9  # over two turns' worth (server/runtime/turns.py: QUANTUM, 4 messages a turn)
CLOSING = {
    "unmasked": (client_frame(0x2, b"\x80", mask=False), 1002),
    "reserved_opcode": (client_frame(0x3, b""), 1002),
    "rsv_bits": (client_frame(0x2, b"\x80", rsv=4), 1002),
    "stray_continuation": (client_frame(0x0, b"\x80"), 1002),
    "long_control": (client_frame(PING, b"x" * 126), 1002),
    "bad_close_code": (client_frame(CLOSE, struct.pack("!H", 1005)), 1002),
    "text_not_utf8": (client_frame(0x1, b"\xff\xfe"), 1007),
    "huge_length": (client_frame(0x2, b"", length=2**40), 1009),
    "client_close": (client_frame(CLOSE, struct.pack("!H", 1000) + b"bye"), 1000),
}


async def test_requests_read_with_a_closing_frame_are_all_answered_before_the_close(tmp_path):
    served = Served(tmp_path)
    port = await served.start()
    try:
        for name, (closing, code) in CLOSING.items():
            sock = await HostileSocket.open(port)
            await sock.send(encode({"type": "hello", "id": 0, "version": PROTOCOL_VERSION, "client": "close-order"}))
            assert (await sock.receive())["type"] == "welcome"
            requests = b"".join(client_frame(0x2, encode({"type": "ping", "id": n})) for n in range(1, REQUESTS + 1))
            await sock.send_raw(requests + closing)  # one write: one read on loopback
            answers = []
            with trio.fail_after(10):
                while (msg := await sock.receive()) is not None:
                    answers.append(msg)
            assert [(m["type"], m.get("re")) for m in answers] == [("pong", n) for n in range(1, REQUESTS + 1)], name
            assert sock.close_code == code, (name, sock.close_code, sock.close_reason)
            await sock.aclose()
    finally:
        await served.kill()
