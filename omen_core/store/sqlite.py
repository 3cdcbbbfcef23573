"""SQLite event store: one row per sealed event, appended in a ``BEGIN IMMEDIATE`` transaction."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import threading
from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import TypeVar

import msgspec

from ..errors import LogCorrupted, StoreUnavailable, UnknownFight, expect
from ..events import LANDMARKS, StoredEvent, decode_line, lines_of
from .base import (
    FIGHT_ID,
    FIGHT_ID_WORDS,
    ROWS_MISSING,
    check_batch,
    check_fight_id,
    create_private,
    not_regular,
)

__all__ = ["SqliteStore", "connect"]

_T = TypeVar("_T")

_DECODE = decode_line
_CHUNK = 2048

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    fight_id    TEXT    NOT NULL,
    seq         INTEGER NOT NULL,
    recorded_at INTEGER NOT NULL,
    line        BLOB    NOT NULL,
    UNIQUE (fight_id, seq)
)
"""
_LANDMARKS = """
CREATE TABLE IF NOT EXISTS landmarks (
    fight_id TEXT    NOT NULL,
    seq      INTEGER NOT NULL,
    PRIMARY KEY (fight_id, seq)
)
"""
_LANDMARK_TAGS = tuple(f'"type":"{kind.__struct_config__.tag}"'.encode() for kind in LANDMARKS)


class SqliteStore:
    """Event store in one SQLite table, ``events(fight_id, seq, recorded_at, line)``, and an index of the
    landmark events, ``landmarks(fight_id, seq)``, written in the same transaction.

    ``line`` holds exactly ``encode_line(ev)``. The database runs in WAL mode
    with a 30 s busy timeout; each append is one ``BEGIN IMMEDIATE`` ...
    ``COMMIT`` transaction, so concurrent writers (threads or processes)
    are serialized and a stale one gets :class:`ConcurrencyError`.
    ``":memory:"`` gives a private in-memory database. Close the store
    (or use it as a context manager) when done.
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 30.0) -> None:
        """Open (creating if needed) the database at ``path``, or ``":memory:"``."""
        self._path = os.fspath(expect(path, (str, os.PathLike), "path", "a path (str or os.PathLike) or \":memory:\""))
        self._lock = threading.RLock()
        self._conn = connect(self._path, timeout)
        try:
            with db_guard(self._path):
                self._set_up()
        except BaseException:
            self._conn.close()
            raise

    def _set_up(self) -> None:
        """WAL mode and the tables, each written only if missing: opening a database omen set up writes nothing
        (so reading one never changes its bytes)."""
        if self._conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            self._conn.execute("PRAGMA journal_mode = WAL").fetchone()
        if not _has_table(self._conn, "events"):
            self._conn.execute(_SCHEMA)
        self._index_landmarks()

    def _index_landmarks(self) -> None:
        """Create the landmark index; a database written before it existed is indexed once, here."""
        if _has_table(self._conn, "landmarks"):
            return
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            self._conn.execute(_LANDMARKS)
            rows = self._conn.execute("SELECT fight_id, seq, line FROM events ORDER BY fight_id, seq")
            found = [(fight_id, seq) for fight_id, seq, line in rows  # (a row that is no BLOB: the reader's)
                     if isinstance(line, bytes) and any(tag in line for tag in _LANDMARK_TAGS)]
            self._conn.executemany("INSERT OR IGNORE INTO landmarks VALUES (?, ?)", found)
            self._conn.execute("COMMIT")
        except BaseException:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            raise

    @property
    def path(self) -> str:
        """The database path as given (``":memory:"`` for an in-memory database)."""
        return self._path

    def __repr__(self) -> str:
        return f"SqliteStore({self._path!r})"

    @property
    def location(self) -> str:
        """The database file."""
        return self._path

    # -- the EventStore protocol ------------------------------------------------------

    def append(self, fight_id: str, events: Sequence[StoredEvent], expected_version: int) -> int:
        """Append ``events`` in one transaction if the fight is at ``expected_version``; return the new version."""
        check_fight_id(fight_id)
        rows = [(ev.fight_id, ev.seq, ev.recorded_at, line) for ev, line in zip(events, lines_of(events), strict=True)]
        with self._lock, db_guard(self._path):
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                version, last_hash = self._last_state(fight_id)
                check_batch(fight_id, events, expected_version, version, last_hash)
                self._conn.executemany("INSERT INTO events (fight_id, seq, recorded_at, line) "
                                       "VALUES (?, ?, ?, ?)", rows)
                self._conn.executemany("INSERT INTO landmarks VALUES (?, ?)",
                                       [(ev.fight_id, ev.seq) for ev in events if isinstance(ev.event, LANDMARKS)])
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
        return version + len(events)

    def read(self, fight_id: str, after_seq: int = 0) -> Iterator[StoredEvent]:
        """Stream the fight's events with ``seq > after_seq``; :class:`UnknownFight` at once if none is stored."""
        with self._lock, db_guard(self._path):
            known = self._conn.execute("SELECT 1 FROM events WHERE fight_id = ? LIMIT 1",
                                       (fight_id,)).fetchone()
        if known is None:
            raise UnknownFight(fight_id, self._path)
        return _guarded(self._path, self._stream(fight_id, after_seq))

    def read_lines(self, fight_id: str, after_seq: int = 0) -> Iterator[list[bytes]]:
        """Each event's stored bytes with ``seq > after_seq``, in seq order, in lists of ``_CHUNK`` rows, undecoded:
        what the walk (:mod:`omen_core.walk`) reads.

        As :meth:`read`: :class:`UnknownFight` at once, :class:`LogCorrupted`
        where rows are missing (after the rows before the gap). Each row's own
        checks (that it decodes, as the event of its row) are the reader's:
        :meth:`read` reports them.
        """
        with self._lock, db_guard(self._path):
            known = self._conn.execute("SELECT 1 FROM events WHERE fight_id = ? LIMIT 1",
                                       (fight_id,)).fetchone()
        if known is None:
            raise UnknownFight(fight_id, self._path)
        return _guarded(self._path, self._chunks(fight_id, max(after_seq, 0)))

    def landmarks(self, fight_id: str) -> list[StoredEvent]:
        """The fight's landmark events (undo and redo markers, the revealed seed), from the ``landmarks`` table."""
        with self._lock, db_guard(self._path):
            rows = self._conn.execute("SELECT e.seq, e.line FROM landmarks m JOIN events e ON e.fight_id = m.fight_id "
                                      "AND e.seq = m.seq WHERE m.fight_id = ? ORDER BY m.seq", (fight_id,)).fetchall()
            if not rows and self._conn.execute("SELECT 1 FROM events WHERE fight_id = ? LIMIT 1",
                                               (fight_id,)).fetchone() is None:
                raise UnknownFight(fight_id, self._path)
        return [self._decode(fight_id, seq, self._blob(seq, line)) for seq, line in rows]

    def raw_lines(self, fight_id: str) -> Iterator[bytes]:
        """Each event's stored bytes as a JSON Lines line (newline included), in seq order, undecoded:
        for an audit that reports every problem."""
        with self._lock, db_guard(self._path):
            rows = self._conn.execute("SELECT seq, line FROM events WHERE fight_id = ? ORDER BY seq",
                                      (fight_id,)).fetchall()
        if not rows:
            raise UnknownFight(fight_id, self._path)
        return (self._blob(seq, line) + b"\n" for seq, line in rows)

    def version(self, fight_id: str) -> int:
        """The seq of the fight's last event, 0 if it has none."""
        with self._lock, db_guard(self._path):
            row = self._conn.execute("SELECT MAX(seq) FROM events WHERE fight_id = ?",
                                     (fight_id,)).fetchone()
        return row[0] or 0

    def fights(self) -> list[str]:
        """The stored fight ids, sorted; a row naming a fight by something that is no fight id is corruption."""
        with self._lock, db_guard(self._path):
            rows = self._conn.execute("SELECT fight_id, MIN(seq) FROM events GROUP BY fight_id ORDER BY fight_id")
            found = [(fight_id, seq) for fight_id, seq in rows]
        for fight_id, seq in found:
            if not isinstance(fight_id, str) or not FIGHT_ID.match(fight_id):
                raise LogCorrupted(self._path, seq, f"a row names fight {fight_id!r}, which is not a fight id "
                                                    f"({FIGHT_ID_WORDS})")
        return [fight_id for fight_id, _ in found]

    # -- lifetime -----------------------------------------------------------------------

    def close(self) -> None:
        """Close the database connection (idempotent)."""
        with self._lock:
            self._conn.close()

    def __enter__(self) -> SqliteStore:
        """Use the store in a ``with`` block; it is closed at the end."""
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        """Close the store."""
        self.close()

    def head(self, fight_id: str) -> tuple[int, str | None]:
        """The seq and hash of the fight's last event ((0, None) if it has none)."""
        with self._lock, db_guard(self._path):
            return self._last_state(fight_id)

    # -- helpers ------------------------------------------------------------------------

    def _last_state(self, fight_id: str) -> tuple[int, str | None]:
        """The fight's version and last hash (inside the append transaction)."""
        row = self._conn.execute("SELECT seq, line FROM events WHERE fight_id = ? "
                                 "ORDER BY seq DESC LIMIT 1", (fight_id,)).fetchone()
        if row is None:
            return 0, None
        return row[0], self._decode(fight_id, row[0], self._blob(row[0], row[1])).hash

    def _pages(self, fight_id: str, after_seq: int) -> Iterator[list[tuple[int, bytes]]]:
        """The fight's rows after ``after_seq`` in seq order, ``_CHUNK`` at a time, each page read whole under the
        lock: no statement stays open between pages, so a reader that stops early (or waits) holds no read
        transaction, and another process's append never finds this connection's snapshot stale (which SQLite
        reports as "database is locked" to the next append through it)."""
        last = after_seq
        while True:
            with self._lock, db_guard(self._path):
                rows = self._conn.execute("SELECT seq, line FROM events WHERE fight_id = ? AND seq > ? ORDER BY seq "
                                          "LIMIT ?", (fight_id, last, _CHUNK)).fetchall()
            if not rows:
                return
            bad = next((i for i, (_, line) in enumerate(rows) if not isinstance(line, bytes)), None)
            if bad is not None:  # the rows before it, then the row that is no BLOB as the corruption it is
                if bad:
                    yield rows[:bad]
                self._blob(*rows[bad])
            yield rows
            last = rows[-1][0]
            if len(rows) < _CHUNK:
                return

    def _stream(self, fight_id: str, after_seq: int) -> Iterator[StoredEvent]:
        """Decode the fight's rows in seq order, checking each is the next event of this fight."""
        expected = max(after_seq, 0) + 1
        for rows in self._pages(fight_id, max(after_seq, 0)):
            for seq, line in rows:
                if seq != expected:
                    raise LogCorrupted(self._path, seq, f"seq {seq} where {expected} was expected "
                                                        f"({ROWS_MISSING})")
                yield self._decode(fight_id, seq, line)
                expected = seq + 1

    def _chunks(self, fight_id: str, after_seq: int) -> Iterator[list[bytes]]:
        """The rows' lines after ``after_seq`` in lists, checking that the rows run on without gaps."""
        expected = after_seq + 1
        for rows in self._pages(fight_id, after_seq):
            if rows[0][0] != expected or rows[-1][0] != expected + len(rows) - 1:
                gap = next(i for i, (seq, _) in enumerate(rows) if seq != expected + i)
                if gap:
                    yield [line for _, line in rows[:gap]]
                seq = rows[gap][0]
                raise LogCorrupted(self._path, seq, f"seq {seq} where {expected + gap} was expected "
                                                    f"({ROWS_MISSING})")
            expected += len(rows)
            yield [line for _, line in rows]

    def _blob(self, seq: int, line: object) -> bytes:
        """A row's ``line`` as the BLOB omen writes; a row whose line is stored as another type (TEXT, INTEGER, REAL,
        NULL: an edited row, ``UPDATE events SET line = CAST(line AS TEXT)``) is :class:`LogCorrupted` naming it."""
        if isinstance(line, bytes):
            return line
        kind = {str: "TEXT", int: "INTEGER", float: "REAL", type(None): "NULL"}.get(type(line), type(line).__name__)
        raise LogCorrupted(self._path, seq, f"row seq {seq} holds its line as {kind}, not as the BLOB omen writes "
                                            "(an edited row)")

    def _decode(self, fight_id: str, seq: int, line: bytes) -> StoredEvent:
        """Decode one row's line, checking it is the event its row says it is."""
        try:
            ev = _DECODE(line)
        except msgspec.DecodeError as exc:
            raise LogCorrupted(self._path, seq, f"row does not decode as a stored event: {exc}") from None
        if ev.seq != seq or ev.fight_id != fight_id:
            raise LogCorrupted(self._path, seq, f"row ({fight_id!r}, {seq}) holds event "
                                                f"({ev.fight_id!r}, {ev.seq})")
        return ev


def connect(path: str, timeout: float) -> sqlite3.Connection:
    """A connection to the database at ``path`` (``":memory:"`` for a private one in memory), its header read
    once: a path that cannot hold a database (a directory, a FIFO, a missing folder, a NUL byte) or a file that is
    not one is :class:`StoreUnavailable` saying so."""
    if path != ":memory:":
        _check_path(path)
    with db_guard(path):
        if path != ":memory:":
            create_private(path)  # 0600: SQLite gives its journal and WAL files the database's mode
        conn = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)
    try:
        with db_guard(path):
            conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()  # "file is not a database" shows here
    except BaseException:
        conn.close()
        raise
    return conn


def _check_path(path: str) -> None:
    """Refuse a path no database can be opened at, in words (sqlite would say only "unable to open")."""
    if "\x00" in path:
        raise StoreUnavailable(path, "a path cannot hold a NUL byte")
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        parent = os.path.dirname(path) or "."
        if not os.path.isdir(parent):
            raise StoreUnavailable(path, f"no such directory {parent} to hold the database") from None
        return
    except OSError as exc:
        raise StoreUnavailable(path, exc.strerror or str(exc)) from exc
    if not stat.S_ISREG(mode):
        raise StoreUnavailable(path, not_regular(mode, "a database"))


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    """Whether the database has the table ``name``."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone() is not None


@contextlib.contextmanager
def db_guard(path: str) -> Iterator[None]:
    """Raise SQLite's errors (and the operating system's) as :class:`StoreUnavailable` naming the database."""
    try:
        yield
    except sqlite3.Error as exc:
        raise StoreUnavailable(path, f"cannot use the database: {exc}") from exc
    except OSError as exc:
        raise StoreUnavailable(exc.filename or path, exc.strerror or str(exc)) from exc


def _guarded(path: str, items: Iterator[_T]) -> Iterator[_T]:
    """``items``, SQLite's errors while they are read raised as :class:`StoreUnavailable`."""
    with db_guard(path):
        yield from items
