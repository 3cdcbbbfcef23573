"""The SQLite backend: WAL mode, the UNIQUE(fight_id, seq) constraint, corrupted rows, lifetime, the landmarks
table."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from types import GeneratorType

import pytest

from omen_core.errors import LogCorrupted
from omen_core.events import LANDMARKS, Undone, encode_line
from omen_core.store import SqliteStore
from tests.fights import as_

from .conftest import make_events, with_landmarks

FIGHT = "duel"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """Where the test database lives."""
    return tmp_path / "fights.db"


@pytest.fixture
def store(db: Path) -> Iterator[SqliteStore]:
    """A SQLite store on a fresh file, closed after the test."""
    with SqliteStore(db) as store:
        yield store


def raw(db: Path) -> sqlite3.Connection:
    """A plain connection to the store's database, in autocommit mode."""
    return sqlite3.connect(db, isolation_level=None)


class TestSchema:
    """What the database looks like."""

    def test_wal_mode_is_on(self, store: SqliteStore, db: Path) -> None:
        """The database file is in WAL journal mode."""
        with closing(raw(db)) as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"

    def test_duplicate_fight_seq_is_rejected_by_the_database(self, store: SqliteStore, db: Path) -> None:
        """A direct INSERT of an existing (fight_id, seq) fails the UNIQUE constraint."""
        ev = make_events(FIGHT, 1)[0]
        store.append(FIGHT, [ev], 0)
        with closing(raw(db)) as conn, pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
            conn.execute("INSERT INTO events VALUES (?, ?, ?, ?)", (FIGHT, 1, 0, encode_line(ev)))

    def test_rows_hold_the_encoded_lines(self, store: SqliteStore, db: Path) -> None:
        """Each row holds fight id, seq, recorded_at and exactly ``encode_line(ev)``."""
        events = make_events(FIGHT, 3)
        store.append(FIGHT, events, 0)
        with closing(raw(db)) as conn:
            rows = conn.execute("SELECT fight_id, seq, recorded_at, line FROM events ORDER BY seq").fetchall()
        assert rows == [(ev.fight_id, ev.seq, ev.recorded_at, encode_line(ev)) for ev in events]


class TestCorruption:
    """Rows that do not hold the event they should."""

    def test_corrupted_row_raises_log_corrupted(self, store: SqliteStore, db: Path) -> None:
        """A row whose line does not decode raises LogCorrupted naming the database and seq."""
        events = make_events(FIGHT, 3)
        store.append(FIGHT, events, 0)
        with closing(raw(db)) as conn:
            conn.execute("UPDATE events SET line = ? WHERE seq = 2", (b'{"garbage"',))
        got = []
        with pytest.raises(LogCorrupted) as info:
            for ev in store.read(FIGHT):
                got.append(ev)
        assert got == events[:1]
        assert (info.value.path, info.value.line) == (str(db), 2)
        assert "does not decode" in info.value.reason

    @pytest.mark.parametrize(("value", "kind"), [("CAST(line AS TEXT)", "TEXT"), ("5", "INTEGER"), ("5.5", "REAL")])
    def test_a_row_that_is_no_blob_is_log_corrupted_on_every_path(self, store: SqliteStore, db: Path, value: str,
                                                                   kind: str) -> None:
        """A row whose line an edit stored as TEXT, INTEGER or REAL (omen writes a BLOB) is LogCorrupted naming the
        database, the seq and the type, for every reader: read (after the rows before it), read_lines, raw_lines,
        landmarks (the row is a landmark's) and the next append (the row is the last); never a TypeError."""
        events = with_landmarks(FIGHT)
        store.append(FIGHT, events, 0)
        seq = next(ev.seq for ev in events if isinstance(ev.event, Undone))
        with closing(raw(db)) as conn:
            conn.execute(f"UPDATE events SET line = {value} WHERE seq = ?", (seq,))
            assert conn.execute("SELECT typeof(line) FROM events WHERE seq = ?", (seq,)).fetchone()[0] == kind.lower()
        reason = f"row seq {seq} holds its line as {kind}, not as the BLOB omen writes (an edited row)"
        got = []
        with pytest.raises(LogCorrupted) as info:
            for ev in store.read(FIGHT):
                got.append(ev)
        assert got == events[:seq - 1]
        assert (info.value.path, info.value.line, info.value.reason) == (str(db), seq, reason)
        lines: list[bytes] = []
        with pytest.raises(LogCorrupted, match=re.escape(reason)):
            for chunk in store.read_lines(FIGHT):
                lines.extend(chunk)
        assert lines == [encode_line(ev) for ev in events[:seq - 1]]
        for call in (lambda: list(store.raw_lines(FIGHT)), lambda: store.landmarks(FIGHT)):
            with pytest.raises(LogCorrupted, match=re.escape(reason)):
                call()
        with closing(raw(db)) as conn:
            conn.execute("DELETE FROM events WHERE seq > ?", (seq,))
        with pytest.raises(LogCorrupted, match=re.escape(reason)):
            store.append(FIGHT, make_events(FIGHT, seq + 1)[seq:], seq)

    def test_missing_row_raises_log_corrupted(self, store: SqliteStore, db: Path) -> None:
        """A deleted row (a seq gap) raises LogCorrupted at the seq after the gap."""
        store.append(FIGHT, make_events(FIGHT, 3), 0)
        with closing(raw(db)) as conn:
            conn.execute("DELETE FROM events WHERE seq = 2")
        with pytest.raises(LogCorrupted) as info:
            list(store.read(FIGHT))
        assert info.value.line == 3


class TestLifetime:
    """Opening, reopening and closing."""

    def test_events_survive_reopening(self, db: Path) -> None:
        """Events appended by one store are read by another on the same file."""
        events = make_events(FIGHT, 2)
        with SqliteStore(db) as first:
            first.append(FIGHT, events, 0)
        with SqliteStore(db) as second:
            assert list(second.read(FIGHT)) == events

    def test_in_memory_database(self) -> None:
        """``":memory:"`` works as a private database."""
        with SqliteStore(":memory:") as store:
            store.append(FIGHT, make_events(FIGHT, 2), 0)
            assert store.version(FIGHT) == 2

    def test_close_is_idempotent_and_unfinished_reads_are_harmless(self, db: Path) -> None:
        """Closing twice, or with a read still open, raises nothing."""
        store = SqliteStore(db)
        store.append(FIGHT, make_events(FIGHT, 3), 0)
        reading = as_(store.read(FIGHT), GeneratorType)
        next(reading)
        store.close()
        store.close()
        reading.close()


class TestReadLines:
    """``read_lines``: the rows' lines undecoded, in lists, for the walk."""

    def test_lines_come_as_stored_in_order(self, store: SqliteStore) -> None:
        """Every row's line comes exactly as stored, in seq order, over several lists for a long log."""
        events = make_events(FIGHT, 5000)
        store.append(FIGHT, events, 0)
        chunks = list(store.read_lines(FIGHT))
        assert len(chunks) > 1
        assert [line for chunk in chunks for line in chunk] == [encode_line(ev) for ev in events]

    def test_missing_rows_after_the_rows_before_them(self, store: SqliteStore, db: Path) -> None:
        """A seq gap raises the LogCorrupted ``read`` raises, after the lines of the rows before it."""
        events = make_events(FIGHT, 3000)
        store.append(FIGHT, events, 0)
        with closing(raw(db)) as conn:
            conn.execute("DELETE FROM events WHERE seq = 2500")
        got = []
        with pytest.raises(LogCorrupted) as info:
            for chunk in store.read_lines(FIGHT):
                got.extend(chunk)
        assert got == [encode_line(ev) for ev in events[:2499]]
        with pytest.raises(LogCorrupted) as reference:
            list(store.read(FIGHT))
        assert str(info.value) == str(reference.value)

    def test_unknown_fight_at_once(self, store: SqliteStore) -> None:
        """An unknown fight raises UnknownFight when called, not when iterated."""
        from omen_core.errors import UnknownFight

        with pytest.raises(UnknownFight):
            store.read_lines("nobody")


class TestLandmarks:
    """The ``landmarks`` table: written with the events, and built once for a database older than it."""

    def test_landmarks_are_written_with_the_events(self, store: SqliteStore, db: Path) -> None:
        """Each append's landmarks get their row in the same transaction as its events."""
        events = with_landmarks(FIGHT)
        store.append(FIGHT, events[:4], 0)
        store.append(FIGHT, events[4:], 4)
        with closing(raw(db)) as conn:
            rows = conn.execute("SELECT fight_id, seq FROM landmarks ORDER BY seq").fetchall()
        assert rows == [(FIGHT, ev.seq) for ev in events if isinstance(ev.event, LANDMARKS)]

    def test_a_database_older_than_the_landmarks_table_is_indexed_when_opened(self, db: Path) -> None:
        """A database written before the landmarks table existed (only ``events``) gets its landmarks indexed when
        a store opens it: undos, redos and the revealed seed of every fight, and nothing else."""
        duel = with_landmarks(FIGHT)
        first = make_events("other", 1)
        other = first + with_landmarks("other", 2, first[0].hash)
        with closing(raw(db)) as conn:
            conn.execute("CREATE TABLE events (fight_id TEXT NOT NULL, seq INTEGER NOT NULL, "
                         "recorded_at INTEGER NOT NULL, line BLOB NOT NULL, UNIQUE (fight_id, seq))")
            conn.executemany("INSERT INTO events VALUES (?, ?, ?, ?)",
                             [(ev.fight_id, ev.seq, ev.recorded_at, encode_line(ev)) for ev in duel + other])
            assert conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall() == [("events",)]
        assert any(isinstance(ev.event, Undone) for ev in duel)
        with SqliteStore(db) as store:
            assert store.landmarks(FIGHT) == [ev for ev in duel if isinstance(ev.event, LANDMARKS)]
            assert store.landmarks("other") == [ev for ev in other if isinstance(ev.event, LANDMARKS)]
            assert list(store.read(FIGHT)) == duel
            more = with_landmarks(FIGHT, 9, duel[-1].hash)
            store.append(FIGHT, more, 8)
            assert store.landmarks(FIGHT) == [ev for ev in duel + more if isinstance(ev.event, LANDMARKS)]
        with SqliteStore(db) as again:  # indexed once: opening again changes nothing
            assert again.landmarks(FIGHT) == [ev for ev in duel + more if isinstance(ev.event, LANDMARKS)]


def test_a_reader_that_stops_early_does_not_lock_out_its_next_append(db: Path) -> None:
    """Two connections to one database (two server processes): one starts reading a fight and stops midway (a
    page of events, a stream waiting), the other appends; the first then appends too and is refused only as
    stale (ConcurrencyError), never "database is locked" (no read transaction is held between pages)."""
    from omen_core.errors import ConcurrencyError

    first, second = SqliteStore(db), SqliteStore(db)
    try:
        events = make_events("f", 6)
        first.append("f", events[:3], 0)
        for _ in range(3):
            reading = first.read("f")
            next(reading)  # a reader that stops after one event
            lines = first.read_lines("f")
            next(lines)
        second.append("f", events[3:5], 3)
        with pytest.raises(ConcurrencyError):
            first.append("f", events[3:5], 3)
        assert first.append("f", events[5:], 5) == 6
    finally:
        first.close()
        second.close()
