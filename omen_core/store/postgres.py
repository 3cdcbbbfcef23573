"""PostgreSQL event store: many server processes, on many machines, sharing one database of fights.

One row per sealed event, ``events(fight_id, seq, recorded_at, line)`` with
``UNIQUE (fight_id, seq)``; the landmark index, snapshots, the server's keep
(seats, seeds, idempotent answers) and the idempotency keys of batches in
their own tables. omen creates and upgrades its tables itself (on first use,
or ``omen db init URL``) and records the schema version in ``omen_schema``.

Each append is one transaction: the fight's last row is read, the batch
checked against it (:func:`~omen_core.store.base.check_batch`), the rows
inserted, and a ``NOTIFY`` sent with the fight and its new head, which
PostgreSQL delivers only if the transaction commits. Two writers racing on
one fight both read the same head; the second insert waits on the unique
index for the first to commit and fails with a unique violation, which is
a :class:`ConcurrencyError` like any stale append.

Connections come from a psycopg pool, each checked before use, so a pool
outlives a PostgreSQL restart: while the server is down every call raises
:class:`StoreUnavailable` (after ``timeout`` seconds at most), and the first
call after it is back gets a fresh connection.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Callable, Iterator, Sequence
from types import TracebackType
from typing import Any, NamedTuple

import msgspec

from ..errors import BadAppend, BadInput, ConcurrencyError, LogCorrupted, StoreUnavailable, UnknownFight
from ..events import LANDMARKS, StoredEvent, decode_line, lines_of
from .base import FIGHT_ID, FIGHT_ID_WORDS, ROWS_MISSING, check_batch, check_fight_id

__all__ = ["SCHEMA_VERSION", "MIGRATIONS", "PostgresDatabase", "PostgresStore", "NoOmenTables", "Heard",
           "Listener", "KeyedBatch", "is_postgres_url", "mask_url", "schema_version", "upgrade"]

#: The version of omen's tables this code writes and reads; ``omen_schema`` records the one a database is at.
SCHEMA_VERSION = 5

_LANDMARK_TAGS = tuple(f'"type":"{kind.__struct_config__.tag}"' for kind in LANDMARKS)

#: The statements that take a database from version ``n - 1`` to ``n``, each run once, in order, in one
#: transaction with the row that records it. Version 1 is the event log, the snapshots, the server's keep and the
#: idempotency keys of batches; version 2 adds the landmark index (and fills it from the events already stored);
#: version 3 gives the keep's seats their combatants and a table of each fight's table settings (omen serve's
#: seats and views); version 4 gives the keep's seats ids, generations and revocation (the GM manages them), a
#: table of the commands staged until a seat supplies its dice, and the servers' secrets (the key of the table
#: tags, shared by every server on the database); version 5 keeps the hashes of the tokens the GM revoked or a
#: reissue replaced (``keep_retired``), so that such a token is told why it opens nothing.
MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        """CREATE TABLE events (
            fight_id    text   NOT NULL,
            seq         bigint NOT NULL CHECK (seq > 0),
            recorded_at bigint NOT NULL,
            line        bytea  NOT NULL,
            CONSTRAINT events_fight_seq UNIQUE (fight_id, seq)
        )""",
        """CREATE TABLE snapshots (
            fight_id text   NOT NULL,
            seq      bigint NOT NULL,
            body     bytea  NOT NULL,
            PRIMARY KEY (fight_id, seq)
        )""",
        """CREATE TABLE batch_keys (
            fight_id     text   NOT NULL,
            key          text   NOT NULL,
            request_hash text   NOT NULL,
            first_seq    bigint NOT NULL,
            last_seq     bigint NOT NULL,
            PRIMARY KEY (fight_id, key),
            FOREIGN KEY (fight_id, last_seq) REFERENCES events (fight_id, seq)
        )""",
        """CREATE TABLE keep_seats (
            token_hash text PRIMARY KEY,
            fight_id   text NOT NULL,
            kind       text NOT NULL,
            name       text NOT NULL DEFAULT ''
        )""",
        """CREATE TABLE keep_seeds (
            fight_id text  PRIMARY KEY,
            seed     bytea NOT NULL
        )""",
        """CREATE TABLE keep_answers (
            fight_id     text    NOT NULL,
            token_hash   text    NOT NULL,
            key          text    NOT NULL,
            request_hash text    NOT NULL,
            status       integer NOT NULL,
            body         bytea   NOT NULL,
            PRIMARY KEY (fight_id, token_hash, key)
        )""",
    ),
    2: (
        """CREATE TABLE landmarks (
            fight_id text   NOT NULL,
            seq      bigint NOT NULL,
            PRIMARY KEY (fight_id, seq),
            FOREIGN KEY (fight_id, seq) REFERENCES events (fight_id, seq)
        )""",
        "INSERT INTO landmarks (fight_id, seq) SELECT fight_id, seq FROM events WHERE "
        + " OR ".join(f"position('{tag}'::bytea IN line) > 0" for tag in _LANDMARK_TAGS),
    ),
    3: (
        "ALTER TABLE keep_seats ADD COLUMN combatants text NOT NULL DEFAULT '[]'",
        """CREATE TABLE keep_settings (
            fight_id text  PRIMARY KEY,
            body     bytea NOT NULL
        )""",
    ),
    4: (
        "ALTER TABLE keep_seats ADD COLUMN seat_id text",
        "ALTER TABLE keep_seats ADD COLUMN generation integer NOT NULL DEFAULT 0",
        "ALTER TABLE keep_seats ADD COLUMN derived boolean NOT NULL DEFAULT false",
        "ALTER TABLE keep_seats ADD COLUMN revoked boolean NOT NULL DEFAULT false",
        "ALTER TABLE keep_seats ADD COLUMN made timestamptz NOT NULL DEFAULT clock_timestamp()",
        "UPDATE keep_seats SET seat_id = left(token_hash, 10)",
        """CREATE TABLE keep_staged (
            fight_id text  PRIMARY KEY,
            body     bytea NOT NULL
        )""",
        """CREATE TABLE keep_secrets (
            name  text  PRIMARY KEY,
            value bytea NOT NULL
        )""",
    ),
    5: (
        """CREATE TABLE keep_retired (
            token_hash text PRIMARY KEY,
            fight_id   text NOT NULL,
            why        text NOT NULL
        )""",
    ),
}

_CHUNK = 2048

#: Seconds the pool keeps retrying one lost connection before it gives up on that attempt (psycopg's default is
#: 5 minutes, between tries that double: 1, 2, 4, 8, 16 s..., so after a 20 s outage its next try could be 11 s
#: away and a server stayed 503 that long). Given up, the next request that waits starts a new attempt at once:
#: during an outage the pool tries about every 1-2 s, and answers within that of PostgreSQL's return.
RECONNECT_WINDOW = 3.0
_URL = re.compile(r"^postgres(ql)?://", re.IGNORECASE)

# psycopg's pool logs its reconnection attempts as warnings: they reach the host's handlers if it configures
# logging, and are not printed by Python's last-resort handler otherwise (the library prints nothing).
logging.getLogger("psycopg").addHandler(logging.NullHandler())


def is_postgres_url(url: str) -> bool:
    """Whether ``url`` names a PostgreSQL database (``postgresql://...`` or ``postgres://...``)."""
    return bool(_URL.match(url))


def mask_url(url: str) -> str:
    """``url`` with its password (in the user part or a ``password=`` parameter) shown as ``***``.

    >>> mask_url("postgresql://omen:s3cret@db.example/fights?password=x&sslmode=require")
    'postgresql://omen:***@db.example/fights?password=***&sslmode=require'
    """
    masked = re.sub(r"^(\w+://[^/@:]*:)[^@/]*@", r"\1***@", url)
    return re.sub(r"(?i)(password=)[^&\s]*", r"\1***", masked)


def _reason(exc: BaseException) -> str:
    """A psycopg error in one line: libpq's message, its hints dropped."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:500]


class NoOmenTables(StoreUnavailable):
    """The database has lost omen's tables since it was opened (dropped, or the database made again empty under a
    running server): nothing can be read or written until ``omen db init`` creates them again."""

    def __init__(self, location: str) -> None:
        super().__init__(location, f"no omen tables in this database (omen db init {location} creates them)")


class PostgresDatabase:
    """A pool of connections to one PostgreSQL database (or one schema of it, through ``search_path``) whose
    omen tables are at :data:`SCHEMA_VERSION`: what the store, the snapshots and the keep share.

    ``url`` is a libpq URL (``postgresql://user:password@host:port/dbname?...``)
    or connection string. Opening it connects once (a database that cannot
    be reached is :class:`StoreUnavailable` at once, in libpq's words) and
    creates or upgrades the tables unless ``create`` is False, in which
    case a database without omen's tables is :class:`BadInput`.
    """

    def __init__(self, url: str, *, timeout: float = 5.0, max_size: int = 32, create: bool = True) -> None:
        import psycopg
        from psycopg_pool import ConnectionPool

        self.url, self.location, self.timeout = url, mask_url(url), timeout
        connect_timeout = max(2, round(timeout))
        with self.guard():
            try:
                first = psycopg.connect(url, autocommit=True, connect_timeout=connect_timeout)
            except psycopg.ProgrammingError as exc:  # a malformed URL or connection string
                raise BadInput(f"{self.location}: not a PostgreSQL URL psycopg can use: {_reason(exc)}") from None
            with first:
                self.schema: str = first.execute("SELECT current_schema()").fetchone()[0]  # type: ignore[index]
                if self.schema is None:
                    raise StoreUnavailable(self.location, "no schema of the search_path exists")
                #: The schema version the database was at when opened (0: no omen tables yet).
                self.version_found = schema_version(first)
                if not create and self.version_found == 0:
                    raise BadInput(f"{self.location}: no omen tables in this database (omen db init "
                                   f"{self.location} creates them; omen run SCENARIO --log URL writes a fight there)")
                upgrade(first, self.location)
        #: The channel each commit NOTIFYs, one per schema (a database can hold several omen schemas).
        self.channel = f"omen_events:{self.schema}"[:63]
        self.pool: ConnectionPool[Any] = ConnectionPool(
            url, min_size=1, max_size=max_size, open=False, timeout=timeout, name=f"omen:{self.location}",
            reconnect_timeout=RECONNECT_WINDOW,
            kwargs={"autocommit": True, "connect_timeout": connect_timeout}, check=ConnectionPool.check_connection)
        self.pool.open(wait=False)

    @contextlib.contextmanager
    def guard(self) -> Iterator[None]:
        """Raise psycopg's errors (and the pool's) as :class:`StoreUnavailable` naming the database (its tables
        gone: :class:`NoOmenTables`)."""
        import psycopg
        import psycopg.errors
        from psycopg_pool import PoolClosed, PoolTimeout

        try:
            yield
        except PoolTimeout as exc:
            raise StoreUnavailable(self.location, f"cannot reach PostgreSQL: no connection within {self.timeout:g} s "
                                                  "(is the server up?)") from exc
        except PoolClosed as exc:
            raise StoreUnavailable(self.location, "the store is closed") from exc
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(self.location, f"cannot reach PostgreSQL: {_reason(exc)}") from exc
        except psycopg.errors.UndefinedTable as exc:
            raise NoOmenTables(self.location) from exc
        except psycopg.Error as exc:
            raise StoreUnavailable(self.location, f"cannot use the database: {_reason(exc)}") from exc

    @contextlib.contextmanager
    def connection(self) -> Iterator[Any]:
        """A pooled connection (autocommit; ``conn.transaction()`` for more than one statement), errors guarded."""
        with self.guard(), self.pool.connection() as conn:
            yield conn

    def close(self) -> None:
        """Close every connection of the pool (idempotent)."""
        self.pool.close()


def schema_version(conn: Any) -> int:
    """The version ``omen_schema`` records (0 for a database without omen's tables)."""
    if conn.execute("SELECT to_regclass('omen_schema')").fetchone()[0] is None:
        return 0
    row = conn.execute("SELECT max(version) FROM omen_schema").fetchone()
    return int(row[0] or 0)


def upgrade(conn: Any, location: str, to: int = SCHEMA_VERSION) -> list[int]:
    """Bring the database's tables to version ``to``, each missing step in order; return the versions applied.

    An advisory lock (per schema) makes two processes opening a new database
    at once apply each step once; a database at a newer version than this
    omen knows is :class:`StoreUnavailable` (it is not touched).
    """
    found = schema_version(conn)
    if found > SCHEMA_VERSION:
        raise StoreUnavailable(location, f"the database's omen tables are at schema version {found}, newer than "
                                         f"this omen's ({SCHEMA_VERSION}): upgrade omen")
    if found >= to:
        return []
    applied = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('omen-schema:' || current_schema()))")
        conn.execute("CREATE TABLE IF NOT EXISTS omen_schema (version integer PRIMARY KEY, "
                     "applied_at timestamptz NOT NULL DEFAULT now())")
        for version in range(schema_version(conn) + 1, to + 1):
            for statement in MIGRATIONS[version]:
                conn.execute(statement)
            conn.execute("INSERT INTO omen_schema (version) VALUES (%s)", (version,))
            applied.append(version)
    return applied


class Heard(NamedTuple):
    """One commit heard on the channel: the fight and its new head (the seq of its last event)."""

    fight_id: str
    head: int


class KeyedBatch(NamedTuple):
    """The batch an idempotency key produced: the hash of the request and the seqs of its first and last event."""

    request_hash: str
    first_seq: int
    last_seq: int


class Listener:
    """A connection of its own that ``LISTEN``s to a store's commits (:meth:`PostgresStore.listen`).

    :meth:`wait` gives what was heard: a (fight, head) for each commit since
    the last call, in commit order. PostgreSQL sends a notification only when
    its transaction commits, and only to connections listening then: a
    listener that loses its connection (:class:`StoreUnavailable`) may miss
    some, so whoever follows a fight reads it from the last seq it delivered
    after reconnecting, rather than trusting that it heard everything.
    """

    def __init__(self, database: PostgresDatabase) -> None:
        import psycopg
        from psycopg import sql

        self._db = database
        with database.guard():
            self._conn = psycopg.connect(database.url, autocommit=True,
                                         connect_timeout=max(2, round(database.timeout)))
            self._conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(database.channel)))

    def wait(self, timeout: float) -> list[Heard]:
        """The commits heard within ``timeout`` seconds: returns as soon as one is (with any that came with it),
        or an empty list; :class:`StoreUnavailable` if the connection is lost."""
        heard: list[Heard] = []
        with self._db.guard():
            for notify in self._conn.notifies(timeout=timeout, stop_after=1):
                heard.append(_heard(notify.payload))
            for notify in self._conn.notifies(timeout=0):
                heard.append(_heard(notify.payload))
        return heard

    def close(self) -> None:
        """Stop listening (idempotent)."""
        self._conn.close()

    def __enter__(self) -> Listener:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _heard(payload: str) -> Heard:
    """A notification's payload, ``"<fight_id> <head>"``, as a :class:`Heard`."""
    fight_id, _, head = payload.rpartition(" ")
    return Heard(fight_id, int(head))


class PostgresStore:
    """Event store in a PostgreSQL database: the EventStore protocol on the ``events`` and ``landmarks`` tables.

    ``line`` holds exactly ``encode_line(ev)``: what :meth:`read_lines` gives
    back, byte for byte. Pass a URL (a pool of its own is opened, closed by
    :meth:`close`) or a :class:`PostgresDatabase` to share one.
    """

    def __init__(self, url: str | PostgresDatabase, *, timeout: float = 5.0, max_size: int = 32,
                 create: bool = True) -> None:
        self._owned = not isinstance(url, PostgresDatabase)
        self.db = url if isinstance(url, PostgresDatabase) else PostgresDatabase(url, timeout=timeout,
                                                                                  max_size=max_size, create=create)

    def __repr__(self) -> str:
        return f"PostgresStore({self.db.location!r})"

    @property
    def location(self) -> str:
        """The database's URL, its password masked."""
        return self.db.location

    # -- the EventStore protocol ------------------------------------------------------

    def append(self, fight_id: str, events: Sequence[StoredEvent], expected_version: int) -> int:
        """Append ``events`` in one transaction if the fight is at ``expected_version``; return the new version."""
        return self._append(fight_id, events, expected_version, None)

    def append_with(self, fight_id: str, events: Sequence[StoredEvent], expected_version: int,
                    also: Callable[[Any], None]) -> int:
        """:meth:`append`, with ``also(conn)`` run in the same transaction after the events are inserted (the
        server keeps a new fight's seat and seed so: the log and its rows are committed together or not at all;
        ``also`` raising rolls the whole append back)."""
        return self._append(fight_id, events, expected_version, None, also)

    def append_keyed(self, fight_id: str, events: Sequence[StoredEvent], expected_version: int, key: str,
                     request_hash: str) -> int:
        """:meth:`append`, recording in the same transaction that idempotency key ``key`` (of a request whose hash
        is ``request_hash``) produced this batch: a retry finds it with :meth:`keyed_batch` even if the answer
        was never sent. A key already recorded for the fight is :class:`BadAppend`, nothing written."""
        return self._append(fight_id, events, expected_version, (key, request_hash))

    def keyed_batch(self, fight_id: str, key: str) -> KeyedBatch | None:
        """The batch idempotency key ``key`` produced in ``fight_id``, or None."""
        with self.db.connection() as conn:
            row = conn.execute("SELECT request_hash, first_seq, last_seq FROM batch_keys WHERE fight_id = %s AND "
                               "key = %s", (fight_id, key)).fetchone()
        return None if row is None else KeyedBatch(row[0], row[1], row[2])

    def _append(self, fight_id: str, events: Sequence[StoredEvent], expected_version: int,
                keyed: tuple[str, str] | None, also: Callable[[Any], None] | None = None) -> int:
        import psycopg.errors

        check_fight_id(fight_id)
        lines = lines_of(events)
        marks = [ev.seq for ev in events if isinstance(ev.event, LANDMARKS)]
        with self.db.connection() as conn:
            try:
                with conn.transaction():
                    version, last_hash = self._last_state(conn, fight_id)
                    check_batch(fight_id, events, expected_version, version, last_hash)
                    conn.execute("INSERT INTO events (fight_id, seq, recorded_at, line) SELECT %s, s, r, l FROM "
                                 "unnest(%s::bigint[], %s::bigint[], %s::bytea[]) AS b(s, r, l)",
                                 (fight_id, [ev.seq for ev in events], [ev.recorded_at for ev in events], lines))
                    if marks:
                        conn.execute("INSERT INTO landmarks (fight_id, seq) SELECT %s, unnest(%s::bigint[])",
                                     (fight_id, marks))
                    head = version + len(events)
                    if keyed is not None:
                        conn.execute("INSERT INTO batch_keys VALUES (%s, %s, %s, %s, %s)",
                                     (fight_id, keyed[0], keyed[1], version + 1, head))
                    if also is not None:
                        also(conn)
                    conn.execute("SELECT pg_notify(%s, %s)", (self.db.channel, f"{fight_id} {head}"))
            except psycopg.errors.UniqueViolation as exc:
                if keyed is not None and exc.diag.constraint_name == "batch_keys_pkey":
                    raise BadAppend(fight_id, f"idempotency key {keyed[0]!r} already produced a batch") from None
                # another writer committed the same seq first: the fight has moved on
                actual = conn.execute("SELECT max(seq) FROM events WHERE fight_id = %s", (fight_id,)).fetchone()[0]
                raise ConcurrencyError(fight_id, expected_version, int(actual or 0)) from None
        return head

    def read(self, fight_id: str, after_seq: int = 0) -> Iterator[StoredEvent]:
        """Stream the fight's events with ``seq > after_seq``; :class:`UnknownFight` at once if none is stored."""
        self._known(fight_id)
        return self._stream(fight_id, max(after_seq, 0))

    def read_lines(self, fight_id: str, after_seq: int = 0) -> Iterator[list[bytes]]:
        """Each event's stored bytes with ``seq > after_seq``, in seq order, in lists of up to 2048, undecoded.

        As :meth:`read`: :class:`UnknownFight` at once, :class:`LogCorrupted`
        where rows are missing (after the rows before the gap). Each page is
        read with a pooled connection of its own, so a reader that stops part
        way holds no connection, and the rows are sent in binary (a ``bytea``
        as its bytes, not hex).
        """
        self._known(fight_id)
        return self._chunks(fight_id, max(after_seq, 0))

    def landmarks(self, fight_id: str) -> list[StoredEvent]:
        """The fight's landmark events (undo and redo markers, the revealed seed), from the ``landmarks`` table."""
        with self.db.connection() as conn:
            rows = conn.execute("SELECT e.seq, e.line FROM landmarks m JOIN events e ON e.fight_id = m.fight_id "
                                "AND e.seq = m.seq WHERE m.fight_id = %s ORDER BY m.seq", (fight_id,),
                                binary=True).fetchall()
        if not rows:
            self._known(fight_id)
        return [self._decode(fight_id, seq, line) for seq, line in rows]

    def version(self, fight_id: str) -> int:
        """The seq of the fight's last event, 0 if it has none."""
        with self.db.connection() as conn:
            row = conn.execute("SELECT max(seq) FROM events WHERE fight_id = %s", (fight_id,)).fetchone()
        return int(row[0] or 0)

    def head(self, fight_id: str) -> tuple[int, str | None]:
        """The seq and hash of the fight's last event ((0, None) if it has none)."""
        with self.db.connection() as conn:
            return self._last_state(conn, fight_id)

    def fights(self) -> list[str]:
        """The stored fight ids, sorted (byte order); a row naming a fight by something that is no fight id is
        corruption."""
        with self.db.connection() as conn:
            found = conn.execute("SELECT fight_id, min(seq) FROM events GROUP BY fight_id "
                                 "ORDER BY fight_id COLLATE \"C\"").fetchall()
        for fight_id, seq in found:
            if not FIGHT_ID.match(fight_id):
                raise LogCorrupted(self.location, seq, f"a row names fight {fight_id!r}, which is not a fight id "
                                                       f"({FIGHT_ID_WORDS})")
        return [fight_id for fight_id, _ in found]

    def listen(self) -> Listener:
        """A :class:`Listener` hearing each commit to this store, from any process: (fight, new head)."""
        return Listener(self.db)

    # -- lifetime -----------------------------------------------------------------------

    def close(self) -> None:
        """Close the store's pool, if it opened one (idempotent)."""
        if self._owned:
            self.db.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # -- helpers ------------------------------------------------------------------------

    def _known(self, fight_id: str) -> None:
        """:class:`UnknownFight` unless the fight has a stored event."""
        with self.db.connection() as conn:
            row = conn.execute("SELECT 1 FROM events WHERE fight_id = %s LIMIT 1", (fight_id,)).fetchone()
        if row is None:
            raise UnknownFight(fight_id, self.location)

    def _last_state(self, conn: Any, fight_id: str) -> tuple[int, str | None]:
        """The fight's version and last hash (inside the append transaction)."""
        row = conn.execute("SELECT seq, line FROM events WHERE fight_id = %s ORDER BY seq DESC LIMIT 1",
                           (fight_id,), binary=True).fetchone()
        if row is None:
            return 0, None
        return row[0], self._decode(fight_id, row[0], row[1]).hash

    def _page(self, fight_id: str, after_seq: int) -> tuple[list[tuple[int, bytes]], int | None]:
        """The fight's rows with seqs ``after_seq + 1`` to ``after_seq + 2048``, in seq order (a range of seqs,
        not a LIMIT: the index gives it at once, however many rows follow), and, when fewer rows than that came
        back, the first seq stored after them (None at the end of the fight)."""
        with self.db.connection() as conn:
            rows = [(seq, bytes(line)) for seq, line in conn.execute(
                "SELECT seq, line FROM events WHERE fight_id = %s AND seq > %s AND seq <= %s ORDER BY seq",
                (fight_id, after_seq, after_seq + _CHUNK), binary=True)]
            if len(rows) == _CHUNK:
                return rows, None
            beyond = conn.execute("SELECT min(seq) FROM events WHERE fight_id = %s AND seq > %s",
                                  (fight_id, rows[-1][0] if rows else after_seq)).fetchone()[0]
        return rows, beyond

    def _chunks(self, fight_id: str, after_seq: int) -> Iterator[list[bytes]]:
        """The rows' lines after ``after_seq`` in pages, checking that the rows run on without gaps."""
        expected = after_seq + 1
        while True:
            rows, beyond = self._page(fight_id, expected - 1)
            if rows and (rows[0][0] != expected or rows[-1][0] != expected + len(rows) - 1):
                gap = next(i for i, (seq, _) in enumerate(rows) if seq != expected + i)
                if gap:
                    yield [line for _, line in rows[:gap]]
                seq = rows[gap][0]
                raise LogCorrupted(self.location, seq, f"seq {seq} where {expected + gap} was expected "
                                                       f"({ROWS_MISSING})")
            if rows:
                expected += len(rows)
                yield [line for _, line in rows]
            if len(rows) == _CHUNK:
                continue
            # The page's two looks are two statements: rows committed between them start right after the page
            # (seq ``expected``), which is no gap; the read ends where it began. A first seq beyond is a gap.
            if beyond is not None and beyond != expected:
                raise LogCorrupted(self.location, beyond, f"seq {beyond} where {expected} was expected "
                                                          f"({ROWS_MISSING})")
            return

    def _stream(self, fight_id: str, after_seq: int) -> Iterator[StoredEvent]:
        """Decode the fight's rows in seq order, checking each is the next event of this fight."""
        seq = after_seq
        for chunk in self._chunks(fight_id, after_seq):
            for line in chunk:
                seq += 1
                yield self._decode(fight_id, seq, line)

    def _decode(self, fight_id: str, seq: int, line: bytes) -> StoredEvent:
        """Decode one row's line, checking it is the event its row says it is."""
        try:
            ev = decode_line(line)
        except msgspec.DecodeError as exc:
            raise LogCorrupted(self.location, seq, f"row does not decode as a stored event: {exc}") from None
        if ev.seq != seq or ev.fight_id != fight_id:
            raise LogCorrupted(self.location, seq, f"row ({fight_id!r}, {seq}) holds event "
                                                   f"({ev.fight_id!r}, {ev.seq})")
        return ev
