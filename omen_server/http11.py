"""uvicorn's HTTP/1.1 protocol (h11) with the bounds ``omen serve`` keeps on connections: a deadline for each
request's head, and a cap on the connections one process holds (docs/server.md, "Limits")."""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from .limits import MAX_CONNECTIONS, REQUEST_HEAD_SECONDS

__all__ = ["BoundedH11Protocol", "FULL"]

#: What a connection past :data:`MAX_CONNECTIONS` is answered before it is closed.
FULL = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\nretry-after: 1\r\n"
        b"connection: close\r\ncontent-length: 46\r\n\r\nthe server holds too many connections: retry\n")


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with two bounds (a connection that sends its headers a byte a second, or never ends
    them, was held for good, and 20,000 of them took every file the process may open, each refused accept then
    logged with a traceback: a security tester):

    - a request's line and headers must be whole within :data:`REQUEST_HEAD_SECONDS` of the connection opening,
      or of the answer before it on a kept-alive connection; past it the connection is closed (a request being
      answered, a live stream among them, is never cut);
    - past :data:`MAX_CONNECTIONS` open connections, a new one is answered 503 at once and closed, so that the
      process keeps files for its store, and its own answers.
    """

    _head_timer: asyncio.TimerHandle | None = None
    _awaited_after: Any = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > MAX_CONNECTIONS:
            transport.write(FULL)
            transport.close()
            return
        self._await_head(None)

    def _await_head(self, after: Any) -> None:
        """Wait :data:`REQUEST_HEAD_SECONDS` for the head of the request after ``after`` (the cycle answered)."""
        self._cancel_head()
        self._awaited_after = after
        self._head_timer = self.loop.call_later(REQUEST_HEAD_SECONDS, self._head_late)

    def _cancel_head(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def handle_events(self) -> None:
        super().handle_events()
        if self.cycle is not self._awaited_after:  # a request's head came whole: it is being answered
            self._cancel_head()

    def on_response_complete(self) -> None:
        answered = self.cycle
        super().on_response_complete()
        if not self.transport.is_closing() and self.cycle is answered:  # (a pipelined request is answered now)
            self._await_head(answered)

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head()
        super().connection_lost(exc)

    def _head_late(self) -> None:
        self._head_timer = None
        if self.cycle is self._awaited_after and not self.transport.is_closing():
            self.transport.close()
