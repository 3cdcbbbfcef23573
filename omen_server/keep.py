"""What the server keeps outside the event log: seats and token hashes, seeds, table settings, idempotent answers,
the servers' own secrets.

One SQLite database (its own file, or memory). The event log never holds a
secret: a seed enters it only when the GM reveals it, and a token never does;
what only the GM may see (hidden combatants, notes) is kept here too.
Tokens are kept as SHA-256 hashes; the token itself is shown once, when made.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import threading
from dataclasses import dataclass
from typing import Any, Literal

from omen_core.errors import BadInput
from omen_core.store import EventStore
from omen_core.store.postgres import PostgresDatabase, PostgresStore

__all__ = ["Keep", "PostgresKeep", "AnyKeep", "open_keep", "Seat", "SeatKind", "token_hash", "new_token"]

SeatKind = Literal["gm", "player", "spectator"]

_SCHEMA = """
create table if not exists seats (
    token_hash text primary key,
    fight_id text not null,
    kind text not null,
    name text not null default '',
    combatants text not null default '[]'
);
create table if not exists settings (
    fight_id text primary key,
    body blob not null
);
create table if not exists seeds (
    fight_id text primary key,
    seed blob not null
);
create table if not exists secrets (
    name text primary key,
    value blob not null
);
create table if not exists answers (
    fight_id text not null,
    token_hash text not null,
    key text not null,
    request_hash text not null,
    status integer not null,
    body blob not null,
    primary key (fight_id, token_hash, key)
);
"""


@dataclass(frozen=True, slots=True)
class Seat:
    """Who a token speaks for: the GM, a player, or a spectator, of one fight."""

    fight_id: str
    kind: SeatKind
    name: str = ""
    combatants: tuple[str, ...] = ()


def _seat_of(row: Any) -> Seat:
    """A seat from its row (fight_id, kind, name, combatants as JSON), in either keep."""
    return Seat(row[0], row[1], row[2], tuple(json.loads(row[3])))


def token_hash(token: str) -> str:
    """The SHA-256 of a token, hex: what is stored in its place."""
    return hashlib.sha256(token.encode()).hexdigest()


def new_token(kind: SeatKind) -> str:
    """A fresh bearer token, ``omen_<kind>_`` and 43 URL-safe characters (256 random bits)."""
    return f"omen_{kind}_{secrets.token_urlsafe(32)}"


class Keep:
    """The server's own SQLite database (``:memory:`` by default)."""

    def __init__(self, path: str = ":memory:"):
        self.path = path
        try:
            self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            self._db.executescript(_SCHEMA)
            columns = {row[1] for row in self._db.execute("pragma table_info(seats)")}
            if "combatants" not in columns:  # a keep made before seats had combatants
                self._db.execute("alter table seats add column combatants text not null default '[]'")
        except sqlite3.Error as exc:
            raise BadInput(f"{path}: cannot open the server's database: {exc}") from None
        self._lock = threading.Lock()

    def add_seat(self, fight_id: str, kind: SeatKind, name: str = "", combatants: tuple[str, ...] = ()) -> str:
        """Make a token for a seat of ``fight_id`` (a player's: the combatants it plays); return the token (only
        its hash is kept)."""
        token = new_token(kind)
        with self._lock:
            self._db.execute("insert into seats values (?, ?, ?, ?, ?)",
                             (token_hash(token), fight_id, kind, name, json.dumps(list(combatants))))
        return token

    def seat(self, token: str) -> Seat | None:
        """The seat a token speaks for, or None."""
        with self._lock:
            row = self._db.execute("select fight_id, kind, name, combatants from seats where token_hash = ?",
                                   (token_hash(token),)).fetchone()
        return None if row is None else _seat_of(row)

    def seats(self, fight_id: str) -> list[Seat]:
        """Every seat of a fight (never their tokens: only hashes are kept)."""
        with self._lock:
            rows = self._db.execute("select fight_id, kind, name, combatants from seats where fight_id = ? "
                                    "order by rowid", (fight_id,)).fetchall()
        return [_seat_of(row) for row in rows]

    def put_settings(self, fight_id: str, body: bytes) -> None:
        """Keep a fight's table settings (HP display, hidden combatants, GM notes), encoded by the caller."""
        with self._lock:
            self._db.execute("insert or replace into settings values (?, ?)", (fight_id, body))

    def settings(self, fight_id: str) -> bytes | None:
        """A fight's table settings as they were kept, or None."""
        with self._lock:
            row = self._db.execute("select body from settings where fight_id = ?", (fight_id,)).fetchone()
        return None if row is None else bytes(row[0])

    def put_seed(self, fight_id: str, seed: bytes) -> None:
        """Keep the seed of a seeded fight (never in the event log until revealed)."""
        with self._lock:
            self._db.execute("insert or replace into seeds values (?, ?)", (fight_id, seed))

    def seed(self, fight_id: str) -> bytes | None:
        """The seed of a seeded fight, if this server made it."""
        with self._lock:
            row = self._db.execute("select seed from seeds where fight_id = ?", (fight_id,)).fetchone()
        return None if row is None else bytes(row[0])

    def answer(self, fight_id: str, token: str, key: str) -> tuple[str, int, bytes] | None:
        """The first answer given to an idempotent request: its request's hash, status and body."""
        with self._lock:
            row = self._db.execute("select request_hash, status, body from answers where fight_id = ? and "
                                   "token_hash = ? and key = ?", (fight_id, token_hash(token), key)).fetchone()
        return None if row is None else (row[0], row[1], bytes(row[2]))

    def keep_answer(self, fight_id: str, token: str, key: str, request_hash: str, status: int, body: bytes) -> None:
        """Remember the answer to an idempotent request, for its retries."""
        with self._lock:
            self._db.execute("insert or ignore into answers values (?, ?, ?, ?, ?, ?)",
                             (fight_id, token_hash(token), key, request_hash, status, body))

    def secret(self, name: str) -> bytes:
        """The server's secret ``name`` (32 random bytes, made at its first use and kept: every server on this keep
        gets the same one)."""
        with self._lock:
            self._db.execute("insert or ignore into secrets values (?, ?)", (name, secrets.token_bytes(32)))
            row = self._db.execute("select value from secrets where name = ?", (name,)).fetchone()
        return bytes(row[0])

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()


class PostgresKeep:
    """The keep's tables in a PostgreSQL database (``keep_seats``, ``keep_seeds``, ``keep_settings``,
    ``keep_answers``: a URL, or the :class:`PostgresDatabase` of the store to share its pool), so every server
    process on the database knows every token, seed and setting. omen creates them with the store's other
    tables (docs/stores.md); the event store never reads them."""

    def __init__(self, url: str | PostgresDatabase, *, timeout: float = 5.0) -> None:
        self._owned = not isinstance(url, PostgresDatabase)
        self.db = url if isinstance(url, PostgresDatabase) else PostgresDatabase(url, timeout=timeout, max_size=4)
        self.path = self.db.location

    def add_seat(self, fight_id: str, kind: SeatKind, name: str = "", combatants: tuple[str, ...] = ()) -> str:
        """Make a token for a seat of ``fight_id``; return the token (only its hash is kept)."""
        token = new_token(kind)
        with self.db.connection() as conn:
            conn.execute("INSERT INTO keep_seats (token_hash, fight_id, kind, name, combatants) VALUES "
                         "(%s, %s, %s, %s, %s)",
                         (token_hash(token), fight_id, kind, name, json.dumps(list(combatants))))
        return token

    def seat(self, token: str) -> Seat | None:
        """The seat a token speaks for, or None."""
        with self.db.connection() as conn:
            row = conn.execute("SELECT fight_id, kind, name, combatants FROM keep_seats WHERE token_hash = %s",
                               (token_hash(token),)).fetchone()
        return None if row is None else _seat_of(row)

    def seats(self, fight_id: str) -> list[Seat]:
        """Every seat of a fight, in the order they were made (never their tokens)."""
        with self.db.connection() as conn:
            rows = conn.execute("SELECT fight_id, kind, name, combatants FROM keep_seats WHERE fight_id = %s "
                                "ORDER BY ctid", (fight_id,)).fetchall()
        return [_seat_of(row) for row in rows]

    def put_settings(self, fight_id: str, body: bytes) -> None:
        """Keep a fight's table settings, encoded by the caller."""
        with self.db.connection() as conn:
            conn.execute("INSERT INTO keep_settings VALUES (%s, %s) ON CONFLICT (fight_id) DO UPDATE SET "
                         "body = EXCLUDED.body", (fight_id, body))

    def settings(self, fight_id: str) -> bytes | None:
        """A fight's table settings as they were kept, or None."""
        with self.db.connection() as conn:
            row = conn.execute("SELECT body FROM keep_settings WHERE fight_id = %s", (fight_id,)).fetchone()
        return None if row is None else bytes(row[0])

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

    def secret(self, name: str) -> bytes:
        """The servers' secret ``name`` (32 random bytes, made by whichever server uses it first: every server on
        the database gets the same one)."""
        with self.db.connection() as conn:
            conn.execute("INSERT INTO keep_secrets VALUES (%s, %s) ON CONFLICT DO NOTHING",
                         (name, secrets.token_bytes(32)))
            row = conn.execute("SELECT value FROM keep_secrets WHERE name = %s", (name,)).fetchone()
        return bytes(row[0])

    def close(self) -> None:
        """Close the pool, if this keep opened it."""
        if self._owned:
            self.db.close()

    def __enter__(self) -> PostgresKeep:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


#: Either keep: the SQLite one, or the PostgreSQL one.
AnyKeep = Keep | PostgresKeep


def open_keep(store: EventStore, keep: str | None, default: str) -> AnyKeep:
    """The keep for a server of ``store``: the path or URL given; else, for a PostgreSQL store, the keep's tables
    in the same database (every server on it shares them); else the SQLite file ``default``."""
    if keep is not None and keep.lower().startswith(("postgresql://", "postgres://")):
        return PostgresKeep(keep)
    if keep is None and isinstance(store, PostgresStore):
        return PostgresKeep(store.db)
    return Keep(keep or default)
