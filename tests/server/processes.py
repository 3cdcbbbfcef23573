"""A real ``omen serve`` process on a free loopback port, and calls to it: what the server's process tests, the
Node client's test and ``benchmarks/bench_serve.py`` start (the standard library only)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A TCP port nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``omen serve`` on a free loopback port, over the SQLite store (and its keep) in ``where`` or the store URL
    ``store``; what it prints goes to ``where/server.log`` (a file: a pipe nobody reads could fill and stall
    it). ``setup_link`` is the set-up link it printed, ``create_token`` the creation token in it (made up by the
    server, or ``create_token`` if given), which :meth:`call` sends with ``POST /fights``; ``args``: more of
    ``omen serve``'s arguments."""

    def __init__(self, where: Path, timeout: float = 30, workers: int = 1, store: str = "", create_token: str = "",
                 env: dict[str, str] | None = None, args: tuple[str, ...] = ()):
        self.where, self.port, self.timeout = where, free_port(), timeout
        self.log = where / "server.log"
        start = self.log.stat().st_size if self.log.exists() else 0
        given = ["--create-token", create_token] if create_token else []
        with open(self.log, "ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "omen_cli", "serve", "--store", store or f"sqlite:///{where / 'events.db'}",
                 "--port", str(self.port), "--workers", str(workers), *given, *args], cwd=ROOT, stdout=out,
                stderr=subprocess.STDOUT, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
        deadline = time.monotonic() + 30
        while True:
            try:
                self.call("GET", "/fights")
                break
            except (urllib.error.URLError, ConnectionError):
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise AssertionError(f"the server did not start: {self.log.read_text()}") from None
                time.sleep(0.1)
        printed = re.search(r"open (http://\S+#create=(\S+))", self.log.read_text()[start:])
        assert printed is not None, f"no set-up link printed: {self.log.read_text()}"
        self.setup_link, self.create_token = printed[1], printed[2]

    def call(self, method: str, path: str, body: Any = None, token: str = "", key: str = "") -> tuple[int, Any]:
        """One request; the status and the decoded JSON answer (``POST /fights`` carries the creation token unless
        ``token`` is given)."""
        status, raw = self.send(method, path, body, token, key)
        return status, json.loads(raw)

    def send(self, method: str, path: str, body: Any = None, token: str = "", key: str = "") -> tuple[int, bytes]:
        """One request, as :meth:`call`; the status and the answer's bytes."""
        headers = {"Content-Type": "application/json"}
        if not token and method == "POST" and path == "/fights":
            token = self.create_token
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if key:
            headers["Idempotency-Key"] = key
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data, method=method,
                                         headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                return answer.status, answer.read()
        except urllib.error.HTTPError as refused:
            return refused.code, refused.read()

    def kill(self) -> None:
        """SIGKILL: no shutdown, no flush."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        """Stop it, if it still runs."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


def race(servers: tuple[Server, Server], path: str, body: Any, token: str = ""
         ) -> tuple[dict[str, Any], dict[str, Any]]:
    """One POST of ``body`` to ``path`` sent to each server at the same instant (a barrier frees both): one must be
    201 and the other 409; (the winner's answer, the loser's)."""
    import threading

    start = threading.Barrier(2)
    answers: list[tuple[int, Any]] = []

    def send(server: Server) -> None:
        start.wait()
        answers.append(server.call("POST", path, body, token))

    threads = [threading.Thread(target=send, args=(server,)) for server in servers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(status for status, _ in answers) == [201, 409], answers
    won = next(answer for status, answer in answers if status == 201)
    lost = next(answer for status, answer in answers if status == 409)
    return won, lost


def keyed_pairs(servers: tuple[Server, Server], fights: list[tuple[str, str, int]], body: Any,
                other: Any = None) -> list[tuple[tuple[int, bytes], tuple[int, bytes]]]:
    """For each fight (id, GM token, head), one request with ``body`` (its ``expected_version`` the head) sent at
    the same instant to each server under one ``Idempotency-Key``, every fight's pair at once (a barrier frees
    every request together); the second server's body is ``other`` if given. The two answers of each pair."""
    import threading

    start = threading.Barrier(2 * len(fights))
    answers: dict[tuple[int, int], tuple[int, bytes]] = {}

    def send(n: int, side: int) -> None:
        fight_id, token, head = fights[n]
        sent = dict(other if side and other is not None else body, expected_version=head)
        start.wait()
        answers[n, side] = servers[side].send("POST", f"/fights/{fight_id}/commands", sent, token,
                                              key=f"pair-{n}")

    threads = [threading.Thread(target=send, args=(n, side)) for n in range(len(fights)) for side in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [(answers[n, 0], answers[n, 1]) for n in range(len(fights))]
