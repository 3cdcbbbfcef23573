"""omen_server/http11.py: the bounds ``omen serve`` keeps on connections, on a real server process on loopback
(docs/server.md, "Limits"): a request's head whole within REQUEST_HEAD_SECONDS, and MAX_CONNECTIONS a process."""

from __future__ import annotations

import socket
import time
from typing import Any

from tests.server.test_processes import _stream_open, create, servers  # noqa: F401 (servers: the fixture)


def test_a_connection_slow_to_send_its_headers_is_closed_and_a_stream_is_not(servers: Any) -> None:
    """docs/server.md "Limits", REQUEST_HEAD_SECONDS (10): a connection that sends its request's headers a byte a
    second is closed once 10 s have passed (it was held for good, and 20,000 of them took every file the server may
    open: a security tester); a live stream opened at the same time is not cut, and carries the next command."""
    from omen_server.limits import REQUEST_HEAD_SECONDS

    server = servers()
    token, _version = create(server)
    stream = _stream_open(server.port, token)
    start = time.monotonic()
    slow = socket.create_connection(("127.0.0.1", server.port), timeout=2)
    slow.sendall(b"GET /fights HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
    closed_at = None
    while time.monotonic() - start < REQUEST_HEAD_SECONDS + 5:
        try:
            slow.sendall(b"a")
            if slow.recv(1024) == b"":
                closed_at = time.monotonic() - start
                break
        except TimeoutError:
            continue
        except OSError:
            closed_at = time.monotonic() - start
            break
    slow.close()
    assert closed_at is not None and REQUEST_HEAD_SECONDS - 1 <= closed_at <= REQUEST_HEAD_SECONDS + 3, closed_at
    status, rolled = server.call("POST", "/fights/duel/commands", {"command": {"command": "roll_initiative"}}, token)
    assert status == 201, rolled
    got = b""
    while b"initiative_rolled" not in got:
        chunk = stream.recv(65536)
        assert chunk, "the stream was closed"
        got += chunk
    stream.close()


def test_past_the_connections_bound_a_new_one_is_a_plain_503(servers: Any) -> None:
    """docs/server.md "Limits", MAX_CONNECTIONS (512): with 512 connections held open, the next is answered a plain
    503 with Retry-After and closed at once (the process keeps files for its store); once they are let go the
    server answers again."""
    from omen_server.limits import MAX_CONNECTIONS

    server = servers()
    held = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(MAX_CONNECTIONS)]
    try:
        time.sleep(0.5)
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as extra:
            answer = b""
            while chunk := extra.recv(4096):
                answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 503 ") and b"retry-after: 1" in head.lower(), answer
        assert body == b"the server holds too many connections: retry\n"
    finally:
        for sock in held:
            sock.close()
    time.sleep(0.5)
    assert server.call("GET", "/fights")[0] == 200
