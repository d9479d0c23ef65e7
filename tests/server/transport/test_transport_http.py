"""HTTP on the WebSocket's port: static files and their safety, /healthz, /metrics, the admin listing,
keep-alive, and the bounds on a request's size and time."""

from __future__ import annotations

import json
from typing import Any

import h11
import pytest
import trio

from server.runtime import static
from server.transport.limits import ClientLimits
from server.ops.metrics import traffic
from server.transport import http as http_module
from server.transport import sockets
from tests.server.conftest import connect, create_table, join
from tests.server.transport.test_transport import Wire, client_frame

ADMIN = "organiser-token-0123456789abcdef"


class Client:
    """One HTTP/1.1 connection (kept alive), through h11's client side."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.h11 = h11.Connection(h11.CLIENT)

    @classmethod
    async def open(cls, server: Any) -> "Client":
        return cls(await trio.open_tcp_stream("127.0.0.1", server.port))

    async def get(self, target: str, method: str = "GET", **headers: str) -> tuple[int, dict[str, str], bytes]:
        if self.h11.our_state is h11.DONE:
            self.h11.start_next_cycle()
        request = h11.Request(method=method, target=target,
                              headers=[("host", "127.0.0.1"), *[(k.replace("_", "-"), v) for k, v in headers.items()]])
        await self.stream.send_all(self.h11.send(request) + self.h11.send(h11.EndOfMessage()))
        response, body = None, b""
        with trio.fail_after(10):
            while True:
                event = self.h11.next_event()
                if event is h11.NEED_DATA:
                    self.h11.receive_data(await self.stream.receive_some(65536))
                elif isinstance(event, h11.Response):
                    response = event
                elif isinstance(event, h11.Data):
                    body += event.data
                elif isinstance(event, h11.EndOfMessage):
                    break
        assert response is not None
        return response.status_code, {k.decode(): v.decode() for k, v in response.headers}, body


async def get(server: Any, target: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    """One request on a connection of its own, closed after the response."""
    client = await Client.open(server)
    try:
        return await client.get(target, **headers)
    finally:
        await client.stream.aclose()


async def raw(server: Any, data: bytes) -> bytes:
    """What the server answers to these bytes, up to its closing the connection."""
    stream = await trio.open_tcp_stream("127.0.0.1", server.port)
    await stream.send_all(data)
    out = b""
    with trio.fail_after(30):
        while chunk := await stream.receive_some(65536):
            out += chunk
    return out


@pytest.fixture
def web_root(tmp_path):
    root = tmp_path / "dist"
    (root / "assets").mkdir(parents=True)
    (root / "index.html").write_text("<!doctype html><title>web client</title>")
    (root / "assets" / "app.js").write_text("console.log('hi')")
    (root / "assets" / "style.css").write_text("body{}")
    (root / "assets" / "blob.bin").write_bytes(b"\x00\x01")
    (root / ".secret").write_text("hidden")
    (tmp_path / "outside.txt").write_text("not served")
    (root / "escape").symlink_to(tmp_path / "outside.txt")
    (root / "sub").mkdir()
    (root / "sub" / "index.html").symlink_to(tmp_path / "outside.txt")  # a directory's index that leaves
    return root


# ------------------------------------------------------------------ static files


async def test_static_files_are_served_with_their_types_over_one_kept_alive_connection(start_server, web_root):
    server = await start_server(web_root=str(web_root))
    client = await Client.open(server)
    status, headers, body = await client.get("/")
    assert status == 200 and body.startswith(b"<!doctype html>") and headers["content-type"].startswith("text/html")
    for target, kind in (("/assets/app.js", "text/javascript"), ("/assets/style.css", "text/css"),
                         ("/assets/blob.bin", "application/octet-stream"), ("/index.html?v=3", "text/html")):
        status, headers, _ = await client.get(target)
        assert status == 200 and headers["content-type"].startswith(kind), target
        assert headers["x-content-type-options"] == "nosniff"
    status, headers, body = await client.get("/assets/app.js", method="HEAD")
    assert status == 200 and body == b"" and headers["content-length"] == str(len("console.log('hi')"))


async def test_a_builds_hashed_files_are_kept_by_browsers_and_its_page_is_asked_for_every_time(start_server, web_root):
    """A reload or a second tab costs the address one request (the page), not one per file: the page names the
    build's files by their content's hash, so only the page itself must never be kept."""
    (web_root / "assets" / "main-CQja0Z_S.js").write_text("export {}")
    (web_root / "favicon.svg").write_text("<svg/>")
    server = await start_server(web_root=str(web_root))
    client = await Client.open(server)
    kept = {target: (await client.get(target))[1].get("cache-control")
            for target in ("/", "/index.html", "/assets/main-CQja0Z_S.js", "/assets/app.js", "/favicon.svg")}
    assert kept == {"/": None, "/index.html": None, "/assets/main-CQja0Z_S.js": "public, max-age=31536000, immutable",
                    "/assets/app.js": "public, max-age=3600", "/favicon.svg": "public, max-age=3600"}


async def test_a_file_is_read_once_and_its_body_shared_until_it_changes(start_server, web_root):
    """Two thousand requests for the page's script that never read hold one copy of it, not one each; a large
    file comes whole over the wire; a rebuilt file is served anew."""
    big = bytes(range(256)) * 400  # 100 KiB: sent apart from its head
    (web_root / "assets" / "big.js").write_bytes(big)
    first = static.load(str(web_root), "/assets/big.js")
    assert static.load(str(web_root), "/assets/big.js?v=2").body is first.body
    server = await start_server(web_root=str(web_root))
    client = await Client.open(server)
    status, headers, body = await client.get("/assets/big.js")
    assert status == 200 and body == big and headers["content-length"] == str(len(big))
    (web_root / "assets" / "big.js").write_bytes(b"rebuilt")
    assert static.load(str(web_root), "/assets/big.js").body == b"rebuilt"
    assert (await client.get("/assets/big.js"))[2] == b"rebuilt"


async def test_a_file_served_once_is_answered_again_without_a_worker_thread_until_it_changes(
        start_server, web_root, monkeypatch):
    """A worker thread per request cost more than the request (and its hand-overs of the interpreter's lock stalled
    the server): only a file not yet read, or changed since, is read in one."""
    threads: list[str] = []
    run_sync = trio.to_thread.run_sync

    async def counted(fn: Any, *args: Any, **options: Any) -> Any:
        threads.append(args[1])
        return await run_sync(fn, *args, **options)

    monkeypatch.setattr(trio.to_thread, "run_sync", counted)
    server = await start_server(web_root=str(web_root))
    client = await Client.open(server)
    for _ in range(3):
        assert (await client.get("/assets/app.js"))[2] == b"console.log('hi')"
    assert (await client.get("/assets/app.js?v=2"))[0] == 200  # the same file: its query does not matter
    assert threads == ["/assets/app.js"]
    (web_root / "assets" / "app.js").write_bytes(b"rebuilt")
    assert (await client.get("/assets/app.js"))[2] == b"rebuilt"
    assert threads == ["/assets/app.js"] * 2
    assert (await client.get("/nothing.js"))[0] == 404  # not found: looked for each time
    assert (await client.get("/nothing.js"))[0] == 404
    assert threads[2:] == ["/nothing.js"] * 2


@pytest.mark.parametrize("target", ["/../outside.txt", "/assets/../../outside.txt", "/%2e%2e/outside.txt",
                                    "/assets/%2e%2e/%2e%2e/outside.txt", "/.secret", "/escape", "/nothing.js",
                                    "/assets", "/%00", "/assets%5c..%5c..%5coutside.txt", "/%ff", "//etc/passwd",
                                    "/sub", "/sub/", "/sub/index.html"])
async def test_paths_that_leave_the_root_or_name_nothing_are_404(start_server, web_root, target):
    server = await start_server(web_root=str(web_root))
    status, _, body = await get(server, target)
    assert status == 404, target
    assert b"not served" not in body and b"hidden" not in body


async def test_without_a_built_web_client_a_placeholder_says_what_this_is(start_server, tmp_path):
    server = await start_server(web_root=str(tmp_path / "missing"))
    status, headers, body = await get(server, "/")
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert b"Parsimonia server" in body and b"ws://" in body
    assert (await get(server, "/app.js"))[0] == 404


async def test_the_lobby_and_the_organisers_page_typed_as_paths_redirect_to_the_page(server):
    for target, location in (("/lobby", "/"), ("/admin", "/#admin")):
        status, headers, _ = await get(server, target)
        assert (status, headers["location"]) == (302, location), target


async def test_other_methods_are_405(server):
    status, headers, _ = await (await Client.open(server)).get("/", method="DELETE")
    assert status == 405 and "GET" in headers["allow"]


# ------------------------------------------------------------------ health and metrics


async def test_healthz_and_metrics_count_tables_and_connections(server, autojump_clock):
    async with connect(server, "a") as a, connect(server, "b") as b:
        table = await create_table(a, 2)
        await join(a, table)
        status, headers, body = await get(server, "/healthz")
        assert status == 200 and headers["content-type"] == "application/json"
        health = json.loads(body)
        assert health["status"] == "ok" and health["tables"] == 1 and health["connections"] == 2
        assert isinstance(health["uptime_ms"], int)
        await join(b, table)
        await b.event("game_started")
        status, headers, body = await get(server, "/metrics")
    assert status == 200 and headers["content-type"].startswith("text/plain")
    text = body.decode()
    assert "parsimonia_connections 2.0" in text
    assert 'parsimonia_tables{game="parsimonia",state="running"} 1.0' in text
    for name in ("parsimonia_frames_in_total", "parsimonia_bytes_out_total", "parsimonia_commands_total",
                 "parsimonia_table_step_seconds_bucket", "parsimonia_timer_lateness_seconds_bucket",
                 "parsimonia_journal_sync_seconds_bucket", "parsimonia_slow_clients_dropped_total"):
        assert name in text, name
    token = server.lobby.tables[table].match.seats[0].token
    assert token not in text and token not in json.dumps(health)


def sample(text: str, name: str) -> float:
    """A sample of the scrape (``name`` with its labels), 0 when it is not there yet."""
    lines = [line for line in text.splitlines() if line.startswith(name + " ")]
    return float(lines[0].split()[1]) if lines else 0.0


def gauge(text: str, name: str) -> float:
    (line,) = [line for line in text.splitlines() if line.startswith(name + " ")]
    return float(line.split()[1])


async def test_metrics_count_the_tasks_alive_and_they_fall_back_when_connections_close(server, autojump_clock):
    before = gauge((await get(server, "/metrics"))[2].decode(), "parsimonia_tasks")
    async with connect(server, "a"), connect(server, "b"):
        during = gauge((await get(server, "/metrics"))[2].decode(), "parsimonia_tasks")
    await trio.sleep(5)  # the connections' close handshakes are over
    after = gauge((await get(server, "/metrics"))[2].decode(), "parsimonia_tasks")
    assert before > 0 and during >= before + 2  # a task per connection at least
    assert after == before


async def test_metrics_count_websocket_closes_by_code_and_refusals_by_reason(start_server):
    server = await start_server(client=ClientLimits(connections_per_ip=1))
    names = ('parsimonia_websocket_closes_total{code="1002"}', 'parsimonia_websocket_closes_total{code="client"}',
             'parsimonia_http_refusals_total{reason="websockets",status="429"}')
    text = (await get(server, "/metrics"))[2].decode()
    before = [sample(text, name) for name in names]
    wire = await Wire.open(server)
    with pytest.raises(AssertionError, match="429"):
        await Wire.open(server)  # one WebSocket an address
    await wire.stream.send_all(client_frame(0x2, b"\x80", masked=False))
    assert (await wire.closed()).code == 1002
    await wire.stream.aclose()
    with trio.fail_after(5):
        while server._websockets:  # its slot is free once its close is over
            await trio.sleep(0.01)
    echoed = await Wire.open(server)
    await echoed.send(b"", 0x8)
    assert (await echoed.closed()).code == 1005
    text = (await get(server, "/metrics"))[2].decode()
    assert [sample(text, name) - was for name, was in zip(names, before)] == [1, 1, 1]


# ------------------------------------------------------------------ the admin listing


async def test_admin_connections_needs_the_bearer_token(start_server, autojump_clock):
    server = await start_server(admin_token=ADMIN)
    async with connect(server, "someone"):
        status, headers, _ = await get(server, "/admin/connections")
        assert status == 401 and headers["www-authenticate"].startswith("Bearer")
        assert (await get(server, "/admin/connections", authorization="Basic " + ADMIN))[0] == 401
        assert (await get(server, "/admin/connections", authorization="Bearer " + ADMIN[:-1] + "x"))[0] == 403
        status, _, body = await get(server, "/admin/connections", authorization="Bearer " + ADMIN)
    assert status == 200
    listing = json.loads(body)["connections"]
    assert [c["client"] for c in listing] == ["someone"] and ADMIN not in body.decode()


async def test_admin_connections_is_404_on_a_server_without_an_admin_token(server):
    assert (await get(server, "/admin/connections", authorization="Bearer anything"))[0] == 404


# ------------------------------------------------------------------ bounds


async def test_a_request_head_over_the_bound_is_431(server):
    answer = await raw(server, b"GET / HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * (20 * 1024) + b"\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 431 ")


async def test_a_body_over_the_bound_is_413(server):
    answer = await raw(server, b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" + b"x" * 100000)
    assert answer.startswith(b"HTTP/1.1 413 ")


async def test_a_body_announced_over_the_bound_is_413_at_once_and_what_follows_is_read_no_further_than_a_drain(
        server):
    refusals = 'parsimonia_http_refusals_total{reason="body_too_large",status="413"}'
    counted = sample((await get(server, "/metrics"))[2].decode(), refusals)
    stream = await trio.open_tcp_stream("127.0.0.1", server.port)
    before = traffic.bytes_read
    await stream.send_all(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n")
    answer, sent = b"", 0

    async def keep_sending() -> None:
        nonlocal sent
        try:
            for _ in range(64):  # 64 MB, far more than the kernel's buffers hold
                await stream.send_all(b"x" * (1 << 20))
                sent += 1 << 20
        except trio.BrokenResourceError:
            pass

    async with trio.open_nursery() as nursery:
        nursery.start_soon(keep_sending)
        with trio.fail_after(10):
            while chunk := await stream.receive_some(65536):
                answer += chunk
    read = traffic.bytes_read - before
    assert answer.startswith(b"HTTP/1.1 413 ")
    assert read <= http_module.RECEIVE_BYTES + sockets.DRAIN_BYTES and sent < 64 << 20, (read, sent)
    assert sample((await get(server, "/metrics"))[2].decode(), refusals) == counted + 1


async def test_not_http_is_400(server):
    assert (await raw(server, b"\x16\x03\x01\x02\x00 hello TLS\r\n\r\n")).startswith(b"HTTP/1.1 400 ")


async def test_a_slowloris_is_cut_off_after_the_request_timeout(server, autojump_clock):
    stream = await trio.open_tcp_stream("127.0.0.1", server.port)
    t0 = trio.current_time()
    await stream.send_all(b"GET / HTTP/1.1\r\nHost: x\r\n")
    answer = b""
    with trio.fail_after(60):
        try:
            for n in range(1000):  # a header line every 2 s, never the end of the head
                await stream.send_all(b"X-%d: y\r\n" % n)
                with trio.move_on_after(2):
                    answer += await stream.receive_some(4096)
                if answer:
                    break
        except trio.BrokenResourceError:
            pass
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert trio.current_time() - t0 <= http_module.REQUEST_TIMEOUT_S + 2


async def test_a_bad_websocket_handshake_is_refused_with_its_status(server):
    base = b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    key = b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
    assert (await raw(server, base + key + b"Sec-WebSocket-Version: 8\r\n\r\n")).startswith(b"HTTP/1.1 426 ")
    assert (await raw(server, base + b"Sec-WebSocket-Version: 13\r\n\r\n")).startswith(b"HTTP/1.1 400 ")


async def test_requests_are_parsed_and_answered_in_turns_of_their_address(start_server, web_root, monkeypatch):
    """While another address reads, an HTTP request's parsing and answer wait for its address's turns
    (server/runtime/turns.py), as a WebSocket's messages do: one address's requests cannot take the others' time."""
    server = await start_server(web_root=str(web_root))
    turns: list[str] = []
    real_turn = server.turns.turn

    async def turn(address, handle):
        turns.append(address)
        return await real_turn(address, handle)

    monkeypatch.setattr(server.turns, "turn", turn)
    monkeypatch.setattr(server.turns, "alone", lambda address: False)  # as if another address were reading
    client = await Client.open(server)
    assert (await client.get("/healthz"))[0] == 200
    assert (await client.get("/assets/app.js"))[2] == b"console.log('hi')"
    assert len(turns) >= 4 and set(turns) == {"127.0.0.1"}  # each request parsed, each answer made and encoded
