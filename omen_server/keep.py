"""What the server keeps outside the event log: seats and token hashes, seeds, table settings, idempotent answers,
the servers' own secrets.

One SQLite database (its own file, created 0600, or memory), or the keep's
tables in the store's PostgreSQL database. The event log never holds a
secret: a seed enters it only when the GM reveals it, and a token never does;
what only the GM may see (hidden combatants, notes) is kept here too.
Tokens are kept as SHA-256 hashes; the token itself is shown once, when made.

An idempotent request's key is reserved here before its command is decided
(:meth:`Keep.reserve`: one atomic insert, so of any number of server processes
given one key, one gets it), its answer kept when it is given
(:meth:`Keep.keep_answer`), or the key released if the command was refused
(:meth:`Keep.release`); a reserved key's answer is status 0 until then.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
import os
import secrets
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal, TypeGuard

import portalocker

from omen_core.errors import BadInput, StoreUnavailable
from omen_core.store import EventStore, JsonlStore, SqliteStore
from omen_core.store.base import create_private
from omen_core.store.postgres import PostgresDatabase, PostgresStore

__all__ = ["Keep", "PostgresKeep", "AnyKeep", "open_keep", "store_identity", "Seat", "SeatKind", "SeatRow",
           "token_hash", "new_token", "seat_token", "new_seat_id", "PENDING", "Founding", "AnswerTaken", "CREATES"]

SeatKind = Literal["gm", "player", "spectator"]

#: The status of a reserved idempotency key's answer while its request is being answered.
PENDING = 0

#: The ``fight_id`` under which the answers to ``POST /fights`` are kept (no fight id holds a ``/``).
CREATES = "/fights"


@dataclass(frozen=True, slots=True)
class Founding:
    """What a new fight keeps beside its log: its GM seat (the token's hash), its seed (a seeded fight), its
    table settings (encoded), and, for a ``POST /fights`` with an ``Idempotency-Key``, the answer to replay:
    ``answer`` is (the creation token, the key, the request's hash, the answer's body)."""

    fight_id: str
    gm_token: str
    seed: bytes | None
    settings: bytes
    answer: tuple[str, str, str, bytes] | None = None


class AnswerTaken(Exception):
    """Another request with the same ``Idempotency-Key`` created its fight first: nothing of this one is kept."""


class _Founded:
    """A PostgreSQL store whose next appends also write a new fight's keep rows, in the same transaction
    (:meth:`PostgresStore.append_with`); every other call is the store's."""

    def __init__(self, store: PostgresStore, also: Any) -> None:
        self.store, self.also = store, also

    @property
    def location(self) -> str:
        return self.store.location

    def append(self, fight_id: str, events: Any, expected_version: int) -> int:
        return self.store.append_with(fight_id, events, expected_version, self.also)

    def read(self, fight_id: str, after_seq: int = 0) -> Any:
        return self.store.read(fight_id, after_seq)

    def read_lines(self, fight_id: str, after_seq: int = 0) -> Any:
        return self.store.read_lines(fight_id, after_seq)

    def landmarks(self, fight_id: str) -> Any:
        return self.store.landmarks(fight_id)

    def version(self, fight_id: str) -> int:
        return self.store.version(fight_id)

    def fights(self) -> list[str]:
        return self.store.fights()

_SCHEMA = """
create table if not exists seats (
    token_hash text primary key,
    fight_id text not null,
    kind text not null,
    name text not null default '',
    combatants text not null default '[]',
    seat_id text,
    generation integer not null default 0,
    derived integer not null default 0,
    revoked integer not null default 0
);
create table if not exists retired (
    token_hash text primary key,
    fight_id text not null,
    why text not null
);
create table if not exists settings (
    fight_id text primary key,
    body blob not null
);
create table if not exists seeds (
    fight_id text primary key,
    seed blob not null
);
create table if not exists staged (
    fight_id text primary key,
    body blob not null
);
create table if not exists secrets (
    name text primary key,
    value blob not null
);
create table if not exists bound (
    one integer primary key check (one = 1),
    store text not null
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


@dataclass(frozen=True, slots=True)
class SeatRow:
    """A seat as the GM manages it: its id, kind, name and combatants; ``generation`` counts its reissues;
    ``derived``: its token can be made again from the GM's (seats made before seat ids cannot); ``revoked``: its
    token no longer opens anything."""

    seat_id: str
    kind: SeatKind
    name: str
    combatants: tuple[str, ...]
    generation: int
    derived: bool
    revoked: bool


def _row_of(row: Any) -> SeatRow:
    """A SeatRow from (seat_id, kind, name, combatants, generation, derived, revoked), in either keep."""
    return SeatRow(row[0], row[1], row[2], tuple(json.loads(row[3])), int(row[4]), bool(row[5]), bool(row[6]))


def new_seat_id() -> str:
    """A seat's id: 10 hex digits, random (it names a seat in the GM's requests; it opens nothing)."""
    return secrets.token_hex(5)


def seat_token(gm_token: str, fight_id: str, seat_id: str, generation: int, kind: SeatKind) -> str:
    """A player's or spectator's token, made from the GM's: ``omen_<kind>_`` and the HMAC-SHA256, under the GM's
    token, of the fight, the seat and its generation (256 bits, URL-safe). Only its hash is kept, as for any
    token; the GM's page makes it again to show the seat's link (nothing but the GM's token can), and a reissue
    (the next generation) makes another and revokes this one.

    >>> a = seat_token("omen_gm_x", "duel", "s1", 0, "player")
    >>> a.startswith("omen_player_") and len(a) == 12 + 43 and a != seat_token("omen_gm_x", "duel", "s1", 1, "player")
    True
    """
    digest = hmac.new(gm_token.encode(), f"omen seat|{fight_id}|{seat_id}|{generation}".encode(),
                      hashlib.sha256).digest()
    return f"omen_{kind}_" + base64.urlsafe_b64encode(digest).decode().rstrip("=")


def _seat_of(row: Any) -> Seat:
    """A seat from its row (fight_id, kind, name, combatants as JSON), in either keep."""
    return Seat(row[0], row[1], row[2], tuple(json.loads(row[3])))


def _retired_why(seat_id: str, token: str | None) -> str:
    """What the keep records of a token retired: ``reissued`` (a new token replaced it), or, revoked,
    ``revoked:<seat id>``, so that a later reissue of that seat can say the token was replaced (a tester's revoked
    then reissued token kept saying "revoked"; a keep written before holds ``revoked`` alone)."""
    return "reissued" if token is not None else f"revoked:{seat_id}"


def _retired_said(why: str) -> str:
    """A retired token's reason as :meth:`retired` gives it: ``revoked`` or ``reissued``."""
    return "revoked" if why.startswith("revoked") else why


def token_hash(token: str) -> str:
    """The SHA-256 of a token, hex: what is stored in its place."""
    return hashlib.sha256(token.encode()).hexdigest()


def new_token(kind: SeatKind) -> str:
    """A fresh bearer token, ``omen_<kind>_`` and 43 URL-safe characters (256 random bits)."""
    return f"omen_{kind}_{secrets.token_urlsafe(32)}"


class _Guarded(sqlite3.Connection):
    """A connection whose errors are omen's: the keep locked by another process past its timeout, or its disk
    gone, is :class:`StoreUnavailable` (a 503 that says so, not a 500)."""

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        try:
            return super().execute(sql, parameters)
        except sqlite3.Error as exc:
            raise StoreUnavailable(getattr(self, "where", "the keep"), f"the keep cannot be used: {exc}") from None


class Keep:
    """The server's own SQLite database (``:memory:`` by default; a file is created 0600: it holds seeds and the
    GM's notes). ``timeout``: how long a write waits for another process's (seconds) before a 503."""

    def __init__(self, path: str = ":memory:", *, timeout: float = 5.0):
        self.path = path
        try:
            if path != ":memory:":
                create_private(path)
            self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=timeout,
                                       factory=_Guarded)
            self._db.where = path  # type: ignore[attr-defined]
            if path != ":memory:" and self._db.execute("pragma journal_mode").fetchone()[0] != "wal":
                # Readers never wait for a writer (the server's processes look up seats and answers all the time);
                # SQLite gives the WAL and shared-memory files the keep's mode.
                self._db.execute("pragma journal_mode = wal").fetchone()
            self._db.executescript(_SCHEMA)
            columns = {row[1] for row in self._db.execute("pragma table_info(seats)")}
            if "combatants" not in columns:  # a keep made before seats had combatants
                self._db.execute("alter table seats add column combatants text not null default '[]'")
            if "seat_id" not in columns:  # a keep made before seats had ids (their tokens were not derived)
                for column in ("seat_id text", "generation integer not null default 0",
                               "derived integer not null default 0", "revoked integer not null default 0"):
                    self._db.execute(f"alter table seats add column {column}")
                self._db.execute("update seats set seat_id = substr(token_hash, 1, 10) where seat_id is null")
        except (sqlite3.Error, OSError, StoreUnavailable) as exc:
            raise BadInput(f"{path}: cannot open the server's database: {exc}") from None
        self._lock = threading.Lock()
        self._creating = threading.Lock()

    def bound(self) -> str | None:
        """The store this keep is bound to (:meth:`bind`), or None: a keep not used yet, or made before keeps were
        bound."""
        if self.path == ":memory:":
            return None
        with self._lock:
            row = self._db.execute("select store from bound").fetchone()
        return None if row is None else str(row[0])

    def fight_ids(self) -> list[str]:
        """The fights this keep holds seats of, the one whose seat was made last first (a binding's check looks
        until it finds one the store holds: an old keep's first fights are the likeliest to be archived)."""
        with self._lock:
            rows = self._db.execute("select fight_id from seats group by fight_id order by max(rowid) desc").fetchall()
        return [str(r[0]) for r in rows]

    def bind(self, store: str, *, rebind: bool = False) -> None:
        """Bind this keep to the store it serves (``store``: its kind and name, :func:`store_identity`): the first
        server to use a keep records its store, and a server of another store is refused (:class:`BadInput`),
        since two stores on one keep hand each other's fights over: a fight id created on one replaces the
        other's seats and seed (a directory ``conv/`` and ``sqlite:///conv.db`` both default to ``conv.keep.db``:
        a tester). ``rebind``: this store is the bound one moved or renamed; record it instead."""
        if self.path == ":memory:":
            return
        with self._lock:
            self._db.execute("begin immediate")
            try:
                row = self._db.execute("select store from bound").fetchone()
                if row is None or rebind:
                    self._db.execute("insert or replace into bound values (1, ?)", (store,))
                elif row[0] != store:
                    raise BadInput(
                        f"{self.path}: this keep belongs to {row[0]}, not to {store}: two stores on one keep would "
                        "hand each other's fights over (a fight id created on one replaces the other's seats and "
                        "seed); give this store its own keep with --keep PATH, or, if this store is that one moved "
                        "or renamed, bind the keep to it with --rebind-keep")
            except BaseException:
                self._db.execute("rollback")
                raise
            self._db.execute("commit")

    def add_seat(self, fight_id: str, kind: SeatKind, name: str = "", combatants: tuple[str, ...] = ()) -> str:
        """Make a token for a seat of ``fight_id`` (a player's: the combatants it plays); return the token (only
        its hash is kept)."""
        token = new_token(kind)
        with self._lock:
            self._db.execute("insert into seats (token_hash, fight_id, kind, name, combatants, seat_id) values "
                             "(?, ?, ?, ?, ?, ?)", (token_hash(token), fight_id, kind, name,
                                                    json.dumps(list(combatants)), new_seat_id()))
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

    def reserve(self, fight_id: str, token: str, key: str, request_hash: str) -> tuple[str, int, bytes] | None:
        """Reserve idempotency key ``key`` for a request whose hash is ``request_hash``, in one atomic insert: None if
        this call reserved it (then answer it, and :meth:`keep_answer` or :meth:`release`); else what is kept for
        the key (its request's hash, and its status and answer; status :data:`PENDING` while it is answered)."""
        while True:  # a key released between the insert and the look is tried again
            with self._lock:
                made = self._db.execute("insert or ignore into answers values (?, ?, ?, ?, ?, ?)",
                                        (fight_id, token_hash(token), key, request_hash, PENDING, b"")).rowcount
            found = None if made == 1 else self.answer(fight_id, token, key)
            if made == 1 or found is not None:
                return found

    def keep_answer(self, fight_id: str, token: str, key: str, request_hash: str, status: int, body: bytes) -> None:
        """Remember the answer to an idempotent request, for its retries (completing its reservation; a key
        answered already keeps its first answer)."""
        with self._lock:
            self._db.execute("insert into answers values (?, ?, ?, ?, ?, ?) on conflict (fight_id, token_hash, key) "
                             "do update set status = excluded.status, body = excluded.body where answers.status = ?",
                             (fight_id, token_hash(token), key, request_hash, status, body, PENDING))

    def release(self, fight_id: str, token: str, key: str) -> None:
        """Give up a reservation whose request was refused (nothing was appended): the key may be sent again."""
        with self._lock:
            self._db.execute("delete from answers where fight_id = ? and token_hash = ? and key = ? and status = ?",
                             (fight_id, token_hash(token), key, PENDING))

    def secret(self, name: str) -> bytes:
        """The server's secret ``name`` (32 random bytes, made at its first use and kept: every server on this keep
        gets the same one)."""
        with self._lock:
            self._db.execute("insert or ignore into secrets values (?, ?)", (name, secrets.token_bytes(32)))
            row = self._db.execute("select value from secrets where name = ?", (name,)).fetchone()
        return bytes(row[0])

    def add_managed_seat(self, fight_id: str, seat_id: str, kind: SeatKind, name: str, combatants: tuple[str, ...],
                         token: str, most: int | None = None) -> bool:
        """Keep a seat the GM manages: its id and the hash of its token (made from the GM's: :func:`seat_token`,
        generation 0). With ``most``, only if the fight has fewer seats than that (False, nothing kept, if not):
        the count and the insert are one write transaction, so of any number of requests and server processes
        making seats at once, no more than ``most`` seats are ever kept."""
        row = (token_hash(token), fight_id, kind, name, json.dumps(list(combatants)), seat_id)
        with self._lock:
            self._db.execute("begin immediate")  # the count and the insert under the keep's write lock
            try:
                made = most is None or self._db.execute("select count(*) from seats where fight_id = ?",
                                                        (fight_id,)).fetchone()[0] < most
                if made:
                    self._db.execute("insert into seats (token_hash, fight_id, kind, name, combatants, seat_id, "
                                     "generation, derived, revoked) values (?, ?, ?, ?, ?, ?, 0, 1, 0)", row)
            except BaseException:
                self._db.execute("rollback")
                raise
            self._db.execute("commit")
        return made

    def seat_rows(self, fight_id: str) -> list[SeatRow]:
        """Every seat of a fight with its id, generation and whether it is revoked, in the order they were made."""
        with self._lock:
            rows = self._db.execute("select seat_id, kind, name, combatants, generation, derived, revoked from seats "
                                    "where fight_id = ? order by rowid", (fight_id,)).fetchall()
        return [_row_of(row) for row in rows]

    def replace_token(self, fight_id: str, seat_id: str, token: str | None, generation: int) -> bool:
        """Give a seat a new token (its hash; the old one opens nothing from now on) and generation, or, with
        ``token`` None, revoke it (no token opens it; a reissue brings it back). False if there is no such seat."""
        stored = token_hash(token) if token is not None else f"revoked:{fight_id}:{seat_id}:{generation}"
        with self._lock:
            self._db.execute("begin immediate")  # the old token retired with the new one put in, or neither
            try:
                old = self._db.execute("select token_hash from seats where fight_id = ? and seat_id = ?",
                                       (fight_id, seat_id)).fetchone()
                done = self._db.execute("update seats set token_hash = ?, generation = ?, derived = 1, revoked = ? "
                                        "where fight_id = ? and seat_id = ?",
                                        (stored, generation, int(token is None), fight_id, seat_id))
                if old is not None and not str(old[0]).startswith("revoked:"):
                    self._db.execute("insert or replace into retired values (?, ?, ?)",
                                     (old[0], fight_id, _retired_why(seat_id, token)))
                elif token is not None:  # a revoked seat reissued: its token revoked is now one the reissue replaced
                    self._db.execute("update retired set why = 'reissued' where fight_id = ? and why = ?",
                                     (fight_id, _retired_why(seat_id, None)))
            except BaseException:
                self._db.execute("rollback")
                raise
            self._db.execute("commit")
        return done.rowcount > 0

    def retired(self, token: str) -> str | None:
        """Why a token that opens nothing any more was retired (``revoked``, ``reissued``), or None if it never
        opened a seat here."""
        with self._lock:
            row = self._db.execute("select why from retired where token_hash = ?", (token_hash(token),)).fetchone()
        return None if row is None else _retired_said(str(row[0]))

    def put_staged(self, fight_id: str, body: bytes | None) -> None:
        """Keep the command staged for a fight (encoded by the caller), or none."""
        with self._lock:
            if body is None:
                self._db.execute("delete from staged where fight_id = ?", (fight_id,))
            else:
                self._db.execute("insert or replace into staged values (?, ?)", (fight_id, body))

    def staged(self, fight_id: str) -> bytes | None:
        """The command staged for a fight, as kept, or None."""
        with self._lock:
            row = self._db.execute("select body from staged where fight_id = ?", (fight_id,)).fetchone()
        return None if row is None else bytes(row[0])

    @contextlib.contextmanager
    def creating(self, _store: EventStore) -> Iterator[None]:
        """Hold while a fight is created (its log looked for, its rows kept, its log appended): one creation at a
        time among every process on this keep (an exclusive lock on the file ``KEEP-create.lock`` beside it,
        created 0600; SQLite's own locks are on the keep's file, and a process that opened and closed that file
        would drop them), so that two servers creating one id cannot replace each other's rows."""
        with self._creating:
            if self.path == ":memory:":
                yield
                return
            fd = os.open(f"{self.path}-create.lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                portalocker.lock(fd, portalocker.LockFlags.EXCLUSIVE)
                yield
            finally:
                os.close(fd)  # closing the descriptor releases the lock

    def found(self, rows: Founding, store: EventStore) -> EventStore:
        """Keep a new fight's rows (:class:`Founding`) in one transaction, before its log is appended (this keep is
        not the store's database): return the store to append to. Rows left by an earlier creation of the id that
        never reached the log (its server killed between the two) are replaced: the caller has seen no log for the
        id while holding :meth:`creating`. :class:`AnswerTaken` (nothing kept) if the answer's key names a fight
        already: a key is never moved to another fight."""
        seat = (token_hash(rows.gm_token), rows.fight_id, "gm", "", "[]", new_seat_id())
        with self._lock:
            self._db.execute("begin immediate")
            try:
                for table in ("seats", "settings", "staged"):
                    self._db.execute(f"delete from {table} where fight_id = ?", (rows.fight_id,))
                self._db.execute("delete from seeds where fight_id in (?, ?)", (rows.fight_id, f"{rows.fight_id}/next"))
                self._db.execute("insert into seats (token_hash, fight_id, kind, name, combatants, seat_id) values "
                                 "(?, ?, ?, ?, ?, ?)", seat)
                self._db.execute("insert into settings values (?, ?)", (rows.fight_id, rows.settings))
                if rows.seed is not None:
                    self._db.execute("insert into seeds values (?, ?)", (rows.fight_id, rows.seed))
                if rows.answer is not None:
                    creator, key, request_hash, body = rows.answer
                    made = self._db.execute("insert or ignore into answers values (?, ?, ?, ?, ?, ?)",
                                            (CREATES, token_hash(creator), key, request_hash, 201, body)).rowcount
                    if made != 1:
                        raise AnswerTaken(key)
            except BaseException:
                self._db.execute("rollback")
                raise
            self._db.execute("commit")
        return store

    def unfound(self, rows: Founding, _store: EventStore) -> None:
        """Take back the seat and answer :meth:`found` kept for a fight whose log was not appended (another
        server made the id first); its seed and settings are replaced by the next creation of the id. Only this
        creation's answer (the key naming its fight) is taken back: another's under the same key stays."""
        with self._lock:
            self._db.execute("delete from seats where token_hash = ?", (token_hash(rows.gm_token),))
            if rows.answer is not None:
                creator, key, _request_hash, body = rows.answer
                self._db.execute("delete from answers where fight_id = ? and token_hash = ? and key = ? and body = ?",
                                 (CREATES, token_hash(creator), key, body))

    def forget_answer(self, creator: str, key: str, body: bytes) -> None:
        """Drop the kept answer ``body`` to a ``POST /fights`` whose fight never reached the log (its server
        stopped between keeping it and appending the log); an answer the key holds now that is not ``body`` stays."""
        with self._lock:
            self._db.execute("delete from answers where fight_id = ? and token_hash = ? and key = ? and body = ?",
                             (CREATES, token_hash(creator), key, body))

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
            conn.execute("INSERT INTO keep_seats (token_hash, fight_id, kind, name, combatants, seat_id) VALUES "
                         "(%s, %s, %s, %s, %s, %s)",
                         (token_hash(token), fight_id, kind, name, json.dumps(list(combatants)), new_seat_id()))
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

    def reserve(self, fight_id: str, token: str, key: str, request_hash: str) -> tuple[str, int, bytes] | None:
        """Reserve idempotency key ``key`` (as :meth:`Keep.reserve`): one insert, which PostgreSQL's primary key
        makes atomic across every server process on the database."""
        while True:  # a key released between the insert and the look is tried again
            with self.db.connection() as conn:
                made = conn.execute("INSERT INTO keep_answers VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                                    (fight_id, token_hash(token), key, request_hash, PENDING, b"")).rowcount
            found = None if made == 1 else self.answer(fight_id, token, key)
            if made == 1 or found is not None:
                return found

    def keep_answer(self, fight_id: str, token: str, key: str, request_hash: str, status: int, body: bytes) -> None:
        """Remember the answer to an idempotent request, for its retries (completing its reservation; a key
        answered already keeps its first answer)."""
        with self.db.connection() as conn:
            conn.execute("INSERT INTO keep_answers VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (fight_id, token_hash, "
                         "key) DO UPDATE SET status = EXCLUDED.status, body = EXCLUDED.body WHERE "
                         "keep_answers.status = %s",
                         (fight_id, token_hash(token), key, request_hash, status, body, PENDING))

    def release(self, fight_id: str, token: str, key: str) -> None:
        """Give up a reservation whose request was refused (nothing was appended): the key may be sent again."""
        with self.db.connection() as conn:
            conn.execute("DELETE FROM keep_answers WHERE fight_id = %s AND token_hash = %s AND key = %s AND "
                         "status = %s", (fight_id, token_hash(token), key, PENDING))

    def secret(self, name: str) -> bytes:
        """The servers' secret ``name`` (32 random bytes, made by whichever server uses it first: every server on
        the database gets the same one)."""
        with self.db.connection() as conn:
            conn.execute("INSERT INTO keep_secrets VALUES (%s, %s) ON CONFLICT DO NOTHING",
                         (name, secrets.token_bytes(32)))
            row = conn.execute("SELECT value FROM keep_secrets WHERE name = %s", (name,)).fetchone()
        return bytes(row[0])

    def add_managed_seat(self, fight_id: str, seat_id: str, kind: SeatKind, name: str, combatants: tuple[str, ...],
                         token: str, most: int | None = None) -> bool:
        """Keep a seat the GM manages: its id and the hash of its token (generation 0); with ``most``, only if the
        fight has fewer seats (False if not), as :meth:`Keep.add_managed_seat`: the count and the insert in one
        transaction holding the fight's seat lock (a transaction-scoped advisory lock, released at its end or
        if the process dies), so every server process on the database counts the seats the others made."""
        with self.db.connection() as conn, conn.transaction():
            if most is not None:
                conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"omen: the seats of {fight_id}",))
                count = conn.execute("SELECT count(*) FROM keep_seats WHERE fight_id = %s", (fight_id,)).fetchone()
                if int(count[0]) >= most:
                    return False
            conn.execute("INSERT INTO keep_seats (token_hash, fight_id, kind, name, combatants, seat_id, generation, "
                         "derived, revoked) VALUES (%s, %s, %s, %s, %s, %s, 0, true, false)",
                         (token_hash(token), fight_id, kind, name, json.dumps(list(combatants)), seat_id))
        return True

    def seat_rows(self, fight_id: str) -> list[SeatRow]:
        """Every seat of a fight with its id, generation and whether it is revoked, in the order they were made."""
        with self.db.connection() as conn:
            rows = conn.execute("SELECT seat_id, kind, name, combatants, generation, derived, revoked FROM keep_seats "
                                "WHERE fight_id = %s ORDER BY made, ctid", (fight_id,)).fetchall()
        return [_row_of(row) for row in rows]

    def replace_token(self, fight_id: str, seat_id: str, token: str | None, generation: int) -> bool:
        """Give a seat a new token and generation, or, with ``token`` None, revoke it. False if there is no such
        seat."""
        stored = token_hash(token) if token is not None else f"revoked:{fight_id}:{seat_id}:{generation}"
        with self.db.connection() as conn, conn.transaction():
            old = conn.execute("SELECT token_hash FROM keep_seats WHERE fight_id = %s AND seat_id = %s",
                               (fight_id, seat_id)).fetchone()
            done = conn.execute("UPDATE keep_seats SET token_hash = %s, generation = %s, derived = true, revoked = %s "
                                "WHERE fight_id = %s AND seat_id = %s",
                                (stored, generation, token is None, fight_id, seat_id))
            if old is not None and not str(old[0]).startswith("revoked:"):
                conn.execute("INSERT INTO keep_retired VALUES (%s, %s, %s) ON CONFLICT (token_hash) DO UPDATE SET "
                             "why = excluded.why", (old[0], fight_id, _retired_why(seat_id, token)))
            elif token is not None:  # a revoked seat reissued: its token revoked is now one the reissue replaced
                conn.execute("UPDATE keep_retired SET why = 'reissued' WHERE fight_id = %s AND why = %s",
                             (fight_id, _retired_why(seat_id, None)))
        return bool(done.rowcount > 0)

    def retired(self, token: str) -> str | None:
        """Why a token that opens nothing any more was retired (``revoked``, ``reissued``), or None."""
        with self.db.connection() as conn:
            row = conn.execute("SELECT why FROM keep_retired WHERE token_hash = %s", (token_hash(token),)).fetchone()
        return None if row is None else _retired_said(str(row[0]))

    def put_staged(self, fight_id: str, body: bytes | None) -> None:
        """Keep the command staged for a fight (encoded by the caller), or none."""
        with self.db.connection() as conn:
            if body is None:
                conn.execute("DELETE FROM keep_staged WHERE fight_id = %s", (fight_id,))
            else:
                conn.execute("INSERT INTO keep_staged VALUES (%s, %s) ON CONFLICT (fight_id) DO UPDATE SET "
                             "body = EXCLUDED.body", (fight_id, body))

    def staged(self, fight_id: str) -> bytes | None:
        """The command staged for a fight, as kept, or None."""
        with self.db.connection() as conn:
            row = conn.execute("SELECT body FROM keep_staged WHERE fight_id = %s", (fight_id,)).fetchone()
        return None if row is None else bytes(row[0])

    @contextlib.contextmanager
    def creating(self, store: EventStore) -> Iterator[None]:
        """Hold while a fight is created. On the store's own database nothing is held (the log's transaction keeps
        racing creations apart: the loser's rows are rolled back with its log); on another, a PostgreSQL advisory
        lock (released if the process dies), so that two servers creating one id cannot replace each other's
        rows, kept before their logs."""
        if self._shares(store):
            yield
            return
        with self.db.connection() as conn:
            conn.execute("SELECT pg_advisory_lock(hashtext('omen: create a fight'))")
            try:
                yield
            finally:
                conn.execute("SELECT pg_advisory_unlock(hashtext('omen: create a fight'))")

    def _shares(self, store: EventStore) -> TypeGuard[PostgresStore]:
        """Whether ``store`` is in this keep's database (and schema)."""
        return isinstance(store, PostgresStore) and (store.db is self.db or (store.db.url, store.db.schema)
                                                     == (self.db.url, self.db.schema))

    def found(self, rows: Founding, store: EventStore) -> EventStore:
        """Keep a new fight's rows (:class:`Founding`) with its log: on the store's own database, a store whose
        append writes them in the log's transaction (a crash leaves both or neither; a creation that loses a race
        for the id keeps nothing); on another, in one transaction before the log is appended."""
        if self._shares(store):
            return _Founded(store, lambda conn: self._write(conn, rows))
        with self.db.connection() as conn, conn.transaction():
            self._write(conn, rows)
        return store

    def _write(self, conn: Any, rows: Founding) -> None:
        """Write a new fight's keep rows with ``conn``, in its transaction (what an earlier creation of the id left
        without a log is replaced); :class:`AnswerTaken` if its answer's key was taken meanwhile."""
        for table in ("keep_seats", "keep_settings", "keep_staged"):
            conn.execute(f"DELETE FROM {table} WHERE fight_id = %s", (rows.fight_id,))
        conn.execute("DELETE FROM keep_seeds WHERE fight_id IN (%s, %s)", (rows.fight_id, f"{rows.fight_id}/next"))
        conn.execute("INSERT INTO keep_seats (token_hash, fight_id, kind, name, combatants, seat_id) VALUES "
                     "(%s, %s, 'gm', '', '[]', %s)", (token_hash(rows.gm_token), rows.fight_id, new_seat_id()))
        conn.execute("INSERT INTO keep_settings VALUES (%s, %s)", (rows.fight_id, rows.settings))
        if rows.seed is not None:
            conn.execute("INSERT INTO keep_seeds VALUES (%s, %s)", (rows.fight_id, rows.seed))
        if rows.answer is not None:
            creator, key, request_hash, body = rows.answer
            made = conn.execute("INSERT INTO keep_answers VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                                (CREATES, token_hash(creator), key, request_hash, 201, body)).rowcount
            if made != 1:
                raise AnswerTaken(key)

    def unfound(self, rows: Founding, store: EventStore) -> None:
        """Take back the seat and answer :meth:`found` kept before a log that was not appended (a keep on another
        database than the store's). On the store's own database nothing is done: the log's transaction took this
        creation's rows back, and the rows there now are another's (the winner of a race for the key or the id,
        whose GM seat, made from the same id, key and body, has the same token)."""
        if self._shares(store):
            return
        with self.db.connection() as conn:
            conn.execute("DELETE FROM keep_seats WHERE token_hash = %s", (token_hash(rows.gm_token),))
            if rows.answer is not None:
                creator, key, _request_hash, body = rows.answer
                conn.execute("DELETE FROM keep_answers WHERE fight_id = %s AND token_hash = %s AND key = %s AND "
                             "body = %s", (CREATES, token_hash(creator), key, body))

    def forget_answer(self, creator: str, key: str, body: bytes) -> None:
        """Drop the kept answer ``body`` to a ``POST /fights`` whose fight never reached the log (as
        :meth:`Keep.forget_answer`)."""
        with self.db.connection() as conn:
            conn.execute("DELETE FROM keep_answers WHERE fight_id = %s AND token_hash = %s AND key = %s AND "
                         "body = %s", (CREATES, token_hash(creator), key, body))

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


def store_identity(store: EventStore) -> str | None:
    """What a keep binds to (:meth:`Keep.bind`): the store's kind and name, not its whole path, so that a store and
    its keep moved together stay bound; None for a memory store (its keep is in memory too)."""
    where = store.location
    if isinstance(store, JsonlStore):
        name = os.path.basename(where.rstrip("/\\")) or where
        return f"the JSON Lines log {name!r}" if store.single_file else f"the directory of JSON Lines logs {name!r}"
    if isinstance(store, SqliteStore):
        return None if where == ":memory:" else f"the SQLite database {os.path.basename(where)!r}"
    if isinstance(store, PostgresStore):  # by its name, as a file is: not the URL as typed (a password, a host
        from psycopg.conninfo import conninfo_to_dict  # written otherwise: another "store", an operator tester)

        try:  # (no dbname: libpq's default, the user's name)
            given = conninfo_to_dict(store.db.url)
            name = str(given.get("dbname") or given.get("user") or "")
        except Exception:
            name = where
        return f"the PostgreSQL database {name or where!r}"
    return None


def open_keep(store: EventStore, keep: str | None, default: str, *, timeout: float = 5.0) -> AnyKeep:
    """The keep for a server of ``store``: the path or URL given; else, for a PostgreSQL store, the keep's tables
    in the same database (every server on it shares them); else the SQLite file ``default``. ``timeout``: how
    long a request waits for the keep (seconds) before a 503."""
    if keep is not None and keep.lower().startswith(("postgresql://", "postgres://")):
        return PostgresKeep(keep, timeout=timeout)
    if keep is None and isinstance(store, PostgresStore):
        return PostgresKeep(store.db)
    return Keep(keep or default, timeout=timeout)
