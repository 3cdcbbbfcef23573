"""The server's keep in PostgreSQL: token hashes, the seeds of seeded fights, idempotent answers.

:class:`PostgresKeep` has the methods of ``omen_server.keep.Keep`` (the
SQLite keep), on the ``keep_seats``, ``keep_seeds`` and ``keep_answers``
tables of the store's database, so every server process sharing the
database knows every token and seed. None of these tables is read by the
event store: a seed reaches the event log only when the GM reveals it.
"""

from __future__ import annotations

import hashlib
import secrets
from types import TracebackType
from typing import Literal, NamedTuple

from .postgres import PostgresDatabase

__all__ = ["PostgresKeep", "KeptSeat", "token_hash", "new_token"]

SeatKind = Literal["gm", "player", "spectator"]


class KeptSeat(NamedTuple):
    """Who a token speaks for (the fields of ``omen_server.keep.Seat``)."""

    fight_id: str
    kind: str
    name: str = ""


def token_hash(token: str) -> str:
    """The SHA-256 of a token, hex: what is stored in its place (as ``omen_server.keep.token_hash``)."""
    return hashlib.sha256(token.encode()).hexdigest()


def new_token(kind: str) -> str:
    """A fresh bearer token, ``omen_<kind>_`` and 43 URL-safe characters (256 random bits)."""
    return f"omen_{kind}_{secrets.token_urlsafe(32)}"


class PostgresKeep:
    """The keep's tables in a PostgreSQL database (a URL, or a :class:`PostgresDatabase` to share the store's
    pool); omen creates them with the store's other tables."""

    def __init__(self, url: str | PostgresDatabase, *, timeout: float = 5.0) -> None:
        self._owned = not isinstance(url, PostgresDatabase)
        self.db = url if isinstance(url, PostgresDatabase) else PostgresDatabase(url, timeout=timeout, max_size=4)
        self.path = self.db.location

    def add_seat(self, fight_id: str, kind: SeatKind, name: str = "") -> str:
        """Make a token for a seat of ``fight_id``; return the token (only its hash is kept)."""
        token = new_token(kind)
        with self.db.connection() as conn:
            conn.execute("INSERT INTO keep_seats VALUES (%s, %s, %s, %s)", (token_hash(token), fight_id, kind, name))
        return token

    def seat(self, token: str) -> KeptSeat | None:
        """The seat a token speaks for, or None."""
        with self.db.connection() as conn:
            row = conn.execute("SELECT fight_id, kind, name FROM keep_seats WHERE token_hash = %s",
                               (token_hash(token),)).fetchone()
        return None if row is None else KeptSeat(row[0], row[1], row[2])

    def put_seed(self, fight_id: str, seed: bytes) -> None:
        """Keep the seed of a seeded fight (never in the event log until revealed)."""
        with self.db.connection() as conn:
            conn.execute("INSERT INTO keep_seeds VALUES (%s, %s) ON CONFLICT (fight_id) DO UPDATE SET "
                         "seed = EXCLUDED.seed", (fight_id, seed))

    def seed(self, fight_id: str) -> bytes | None:
        """The seed of a seeded fight, if a server made it."""
        with self.db.connection() as conn:
            row = conn.execute("SELECT seed FROM keep_seeds WHERE fight_id = %s", (fight_id,)).fetchone()
        return None if row is None else bytes(row[0])

    def answer(self, fight_id: str, token: str, key: str) -> tuple[str, int, bytes] | None:
        """The first answer given to an idempotent request: its request's hash, status and body."""
        with self.db.connection() as conn:
            row = conn.execute("SELECT request_hash, status, body FROM keep_answers WHERE fight_id = %s AND "
                               "token_hash = %s AND key = %s", (fight_id, token_hash(token), key)).fetchone()
        return None if row is None else (row[0], row[1], bytes(row[2]))

    def keep_answer(self, fight_id: str, token: str, key: str, request_hash: str, status: int, body: bytes) -> None:
        """Remember the answer to an idempotent request, for its retries (the first one stays)."""
        with self.db.connection() as conn:
            conn.execute("INSERT INTO keep_answers VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                         (fight_id, token_hash(token), key, request_hash, status, body))

    def close(self) -> None:
        """Close the pool, if this keep opened it."""
        if self._owned:
            self.db.close()

    def __enter__(self) -> PostgresKeep:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
