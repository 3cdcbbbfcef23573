"""A real ``omen serve`` process on a free loopback port, and calls to it: what the server's process tests, the
Node client's test and ``benchmarks/bench_serve.py`` start (the standard library only)."""

from __future__ import annotations

import json
import os
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
    it)."""

    def __init__(self, where: Path, timeout: float = 30, workers: int = 1, store: str = "",
                 env: dict[str, str] | None = None):
        self.where, self.port, self.timeout = where, free_port(), timeout
        self.log = where / "server.log"
        with open(self.log, "ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "omen_replay", "serve", "--store", store or f"sqlite:///{where / 'events.db'}",
                 "--port", str(self.port), "--workers", str(workers)], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
        deadline = time.monotonic() + 30
        while True:
            try:
                self.call("GET", "/fights")
                return
            except (urllib.error.URLError, ConnectionError):
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise AssertionError(f"the server did not start: {self.log.read_text()}") from None
                time.sleep(0.1)

    def call(self, method: str, path: str, body: Any = None, token: str = "", key: str = "") -> tuple[int, Any]:
        """One request; the status and the decoded JSON answer."""
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if key:
            headers["Idempotency-Key"] = key
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data, method=method,
                                         headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as refused:
            return refused.code, json.loads(refused.read())

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
