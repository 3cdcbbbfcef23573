"""What the PostgreSQL store adds to the contract: its URL, its schema and upgrades, the notifications of its
commits, idempotency keys kept with their batch, and a server that goes away and comes back. The contract itself
(test_contract.py), the races of real processes (test_concurrency.py) and the killed writers (test_crash.py) run on
PostgreSQL through their fixtures."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

import psycopg
import pytest

from omen_core.errors import BadAppend, BadInput, ConcurrencyError, LogCorrupted, StoreUnavailable
from omen_core.events import SeedRevealed, StoredEvent, Undone
from omen_core.store import PostgresStore, open_existing_store, open_store
from omen_core.store.postgres import MIGRATIONS, SCHEMA_VERSION, Heard, mask_url, schema_version, upgrade
from tests.fights import as_
from tests.postgres import Postgres

from .conftest import continue_from, make_events, with_landmarks

FIGHT = "fight-1"


def versions(url: str) -> list[int]:
    """The versions ``omen_schema`` records, in order."""
    with psycopg.connect(url, autocommit=True) as conn:
        return [v for (v,) in conn.execute("SELECT version FROM omen_schema ORDER BY version")]


class TestUrl:
    def test_both_schemes_open_a_postgres_store(self, postgres: Postgres) -> None:
        """``postgresql://`` and ``postgres://`` URLs open a PostgresStore through open_store."""
        url = postgres.fresh_url()
        for scheme_url in (url, "postgres://" + url.removeprefix("postgresql://")):
            with as_(open_store(scheme_url), PostgresStore) as store:
                assert store.fights() == []

    def test_location_masks_the_password(self, postgres: Postgres) -> None:
        """A password in the URL is never shown: the location (and so every message) has ``***`` in its place."""
        url = postgres.fresh_url().replace("postgresql://omen@", "postgresql://omen:hunter2@")
        with PostgresStore(url) as store:
            assert "hunter2" not in store.location and "omen:***@" in store.location
            with pytest.raises(Exception) as info:
                list(store.read("nobody"))
            assert "hunter2" not in str(info.value)

    def test_mask_url_hides_a_password_parameter(self) -> None:
        """``password=`` in the query is masked as well as the user part's password; a URL without one is kept."""
        assert mask_url("postgresql://u@h/db?password=x&sslmode=require") == \
            "postgresql://u@h/db?password=***&sslmode=require"
        assert mask_url("postgresql://u@h:5433/db") == "postgresql://u@h:5433/db"

    def test_an_unreachable_server_is_store_unavailable(self) -> None:
        """A server that refuses the connection (nothing listens on loopback port 1) is StoreUnavailable naming
        the masked URL and saying why, at once."""
        started = time.monotonic()
        with pytest.raises(StoreUnavailable) as info:
            open_store("postgresql://omen:pw@127.0.0.1:1/omen")
        assert time.monotonic() - started < 10
        assert info.value.path == "postgresql://omen:***@127.0.0.1:1/omen"
        assert "cannot reach PostgreSQL" in info.value.reason and "pw@" not in str(info.value)

    def test_a_malformed_url_is_bad_input(self) -> None:
        """A URL libpq cannot parse (an unknown parameter) is BadInput saying so."""
        with pytest.raises(BadInput) as info:
            open_store("postgresql://omen@localhost/db?colour=blue")
        assert "not a PostgreSQL URL psycopg can use" in str(info.value)


class TestSchema:
    def test_first_use_creates_the_tables_at_the_current_version(self, postgres: Postgres) -> None:
        """Opening a store in an empty schema creates omen's tables and records each version up to the current."""
        url = postgres.fresh_url()
        with PostgresStore(url):
            pass
        assert versions(url) == list(range(1, SCHEMA_VERSION + 1))
        with PostgresStore(url):  # opening again applies nothing more
            pass
        assert versions(url) == list(range(1, SCHEMA_VERSION + 1))

    def test_a_version_1_database_is_upgraded_and_its_landmarks_indexed(self, postgres: Postgres) -> None:
        """A database at schema version 1 (no landmark index) holding a fight with undos, a redo and a revealed
        seed is upgraded to the current version on first use: the index is made from the stored events (version
        2), the keep's seats get their combatants and the settings table comes (version 3), and the fight reads
        back unchanged."""
        url = postgres.fresh_url()
        events = with_landmarks(FIGHT)
        with psycopg.connect(url, autocommit=True) as conn:
            assert upgrade(conn, url, to=1) == [1]
            assert conn.execute("SELECT to_regclass('landmarks')").fetchone() == (None,)
            from omen_core.events import encode_line
            for ev in events:
                conn.execute("INSERT INTO events VALUES (%s, %s, %s, %s)",
                             (FIGHT, ev.seq, ev.recorded_at, encode_line(ev)))
            conn.execute("INSERT INTO keep_seats VALUES ('h', %s, 'gm', '')", (FIGHT,))
        with PostgresStore(url) as store:
            assert versions(url) == list(range(1, SCHEMA_VERSION + 1))
            with psycopg.connect(url, autocommit=True) as conn:
                assert conn.execute("SELECT combatants FROM keep_seats").fetchall() == [("[]",)]
                assert conn.execute("SELECT count(*) FROM keep_settings").fetchone() == (0,)
                # version 4: the seat made before seat ids gets one (its token's hash's first digits), no reissue
                assert conn.execute("SELECT seat_id, generation, derived, revoked FROM keep_seats").fetchall() == [
                    ("h", 0, False, False)]
                assert conn.execute("SELECT count(*) FROM keep_staged").fetchone() == (0,)
            found = store.landmarks(FIGHT)
            assert [type(ev.event) for ev in found] == [Undone, type(events[4].event), Undone, SeedRevealed]
            assert found == [events[2], events[4], events[6], events[7]]
            assert list(store.read(FIGHT)) == events

    def test_a_newer_schema_is_refused_untouched(self, postgres: Postgres) -> None:
        """A database whose omen tables are at a version newer than this omen's is StoreUnavailable saying to
        upgrade omen, and nothing is written to it."""
        url = postgres.fresh_url()
        with PostgresStore(url):
            pass
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("INSERT INTO omen_schema (version) VALUES (%s)", (SCHEMA_VERSION + 1,))
        with pytest.raises(StoreUnavailable) as info:
            PostgresStore(url)
        assert f"schema version {SCHEMA_VERSION + 1}" in str(info.value) and "upgrade omen" in str(info.value)
        assert versions(url) == [*range(1, SCHEMA_VERSION + 1), SCHEMA_VERSION + 1]

    def test_processes_opening_a_new_database_at_once_apply_each_version_once(self, postgres: Postgres) -> None:
        """Eight stores opened at once on one empty schema all succeed, and each version is recorded once (the
        advisory lock serializes the upgrades)."""
        url = postgres.fresh_url()
        errors: list[BaseException] = []
        barrier = threading.Barrier(8)

        def open_one() -> None:
            barrier.wait()
            try:
                PostgresStore(url).close()
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=open_one) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert versions(url) == list(range(1, SCHEMA_VERSION + 1))

    def test_reading_an_empty_database_creates_nothing(self, postgres: Postgres) -> None:
        """open_existing_store on a database without omen's tables is BadInput naming ``omen db init``, and makes
        no table."""
        url = postgres.fresh_url()
        with pytest.raises(BadInput) as info:
            open_existing_store(url)
        assert "no omen tables" in str(info.value) and "omen db init" in str(info.value)
        with psycopg.connect(url, autocommit=True) as conn:
            assert schema_version(conn) == 0

    def test_every_version_has_its_migration(self) -> None:
        """The migrations run from version 1 to the current one without a hole."""
        assert sorted(MIGRATIONS) == list(range(1, SCHEMA_VERSION + 1))

    def test_a_row_naming_no_fight_id_is_corruption(self, postgres: Postgres) -> None:
        """A row written behind omen's back whose fight id is no fight id is LogCorrupted from ``fights``."""
        url = postgres.fresh_url()
        with PostgresStore(url) as store:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("INSERT INTO events VALUES ('../etc', 1, 0, 'x'::bytea)")
            with pytest.raises(LogCorrupted):
                store.fights()


class TestMissingRows:
    @pytest.mark.parametrize(("gone", "after"), [((2100, 2500), 0), ((3, 2100), 0), ((2049, 2049), 0),
                                                 ((2500, 3000), 0), ((1, 1), 0), ((2100, 2500), 2000)])
    def test_rows_deleted_behind_omens_back_are_corruption(self, postgres: Postgres, gone: tuple[int, int],
                                                            after: int) -> None:
        """Rows deleted from the middle of a 3000-event fight (inside a page, across a whole page, at a page's
        first seq, or its first event): ``read_lines`` and ``read`` give the lines before the gap, then
        LogCorrupted naming the first seq after it; rows deleted at the end leave a shorter, sound fight."""
        url = postgres.fresh_url()
        with PostgresStore(url) as store:
            events: list[StoredEvent] = []
            for _ in range(3):
                batch = continue_from(events, FIGHT, 1000)
                store.append(FIGHT, batch, len(events))
                events += batch
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("DELETE FROM landmarks WHERE seq BETWEEN %s AND %s", gone)
                conn.execute("DELETE FROM events WHERE seq BETWEEN %s AND %s", gone)
            got: list[bytes] = []
            if gone[1] == 3000:
                got = [line for chunk in store.read_lines(FIGHT, after) for line in chunk]
                assert len(got) == gone[0] - 1 - after
                return
            with pytest.raises(LogCorrupted) as info:
                for chunk in store.read_lines(FIGHT, after):
                    got += chunk
            assert info.value.line == gone[1] + 1
            assert len(got) == max(gone[0] - 1 - after, 0)
            with pytest.raises(LogCorrupted):
                list(store.read(FIGHT, after))


class TestNotifications:
    def test_a_listener_hears_each_commit_once_in_order(self, postgres: Postgres) -> None:
        """A listener hears (fight, head) for every committed append, whichever store object (or process) made
        it, in commit order; a refused append is not heard."""
        url = postgres.fresh_url()
        with PostgresStore(url) as writer, PostgresStore(url) as other, other.listen() as listener:
            first = make_events("a", 3)
            writer.append("a", first, 0)
            with pytest.raises(ConcurrencyError):
                other.append("a", continue_from(first, "a", 1), 1)
            other.append("b", make_events("b", 2), 0)
            writer.append("a", continue_from(first, "a", 2), 3)
            heard: list[Heard] = []
            deadline = time.monotonic() + 10
            while len(heard) < 3 and time.monotonic() < deadline:
                heard += listener.wait(1.0)
            assert heard == [("a", 3), ("b", 2), ("a", 5)]
            assert listener.wait(0.2) == []

    def test_listeners_of_another_schema_hear_nothing(self, postgres: Postgres) -> None:
        """The channel is the schema's: a store in another schema of the same database is not heard."""
        with PostgresStore(postgres.fresh_url()) as here, PostgresStore(postgres.fresh_url()) as there, \
                here.listen() as listener:
            there.append("x", make_events("x", 1), 0)
            here.append("y", make_events("y", 1), 0)
            heard: list[Heard] = []
            deadline = time.monotonic() + 10
            while not heard and time.monotonic() < deadline:
                heard += listener.wait(1.0)
            assert heard == [("y", 1)]


class TestIdempotencyKeys:
    def test_a_key_is_kept_with_its_batch(self, postgres: Postgres) -> None:
        """append_keyed writes the batch and its key in one transaction; keyed_batch finds the seqs it produced."""
        with PostgresStore(postgres.fresh_url()) as store:
            first = make_events(FIGHT, 2)
            store.append(FIGHT, first, 0)
            assert store.keyed_batch(FIGHT, "k1") is None
            assert store.append_keyed(FIGHT, continue_from(first, FIGHT, 3), 2, "k1", "h" * 64) == 5
            assert store.keyed_batch(FIGHT, "k1") == ("h" * 64, 3, 5)

    def test_a_reused_key_writes_nothing(self, postgres: Postgres) -> None:
        """A key already kept for the fight refuses the second batch whole (BadAppend); the log is unchanged."""
        with PostgresStore(postgres.fresh_url()) as store:
            first = make_events(FIGHT, 2)
            store.append_keyed(FIGHT, first, 0, "k", "a" * 64)
            with pytest.raises(BadAppend):
                store.append_keyed(FIGHT, continue_from(first, FIGHT, 1), 2, "k", "b" * 64)
            assert list(store.read(FIGHT)) == first
            assert store.keyed_batch(FIGHT, "k") == ("a" * 64, 1, 2)

    def test_a_stale_keyed_append_keeps_no_key(self, postgres: Postgres) -> None:
        """A keyed append that loses the race (ConcurrencyError) keeps no key: the retry may use it."""
        with PostgresStore(postgres.fresh_url()) as store:
            first = make_events(FIGHT, 2)
            store.append(FIGHT, first, 0)
            with pytest.raises(ConcurrencyError):
                store.append_keyed(FIGHT, continue_from(first, FIGHT, 1), 1, "k", "a" * 64)
            assert store.keyed_batch(FIGHT, "k") is None


class TestReadWhileAppending:
    def test_rows_committed_between_a_pages_two_looks_are_no_gap(self, postgres: Postgres,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
        """A page of rows is read, then the first seq after it; rows another server commits between those two
        looks start right after the page: no rows are missing, and the read ends where it began (a real gap is
        still LogCorrupted: test_rows_deleted_behind_omens_back_are_corruption). Found by CI: a stream on one
        server, commands through the other, the stream ended on "seq 46 where 46 was expected"."""
        url = postgres.fresh_url()
        with PostgresStore(url) as store, PostgresStore(url) as other:
            events = make_events(FIGHT, 5)
            store.append(FIGHT, events, 0)
            more = continue_from(events, FIGHT, 3)
            real = store.db.connection

            class Between:
                """A connection that lets the other store commit just before the page's second look."""

                def __init__(self, conn: object) -> None:
                    self.conn = conn

                def execute(self, query: str, *args: object, **kwargs: object) -> object:
                    if query.startswith("SELECT min(seq)") and other.version(FIGHT) == 5:
                        other.append(FIGHT, more, 5)
                    return self.conn.execute(query, *args, **kwargs)  # type: ignore[attr-defined]

            @contextlib.contextmanager
            def connection() -> Iterator[Between]:
                with real() as conn:
                    yield Between(conn)

            monkeypatch.setattr(store.db, "connection", connection)
            assert list(store.read(FIGHT)) == events
            monkeypatch.undo()
            assert list(store.read(FIGHT)) == events + more


class TestRestart:
    def test_a_restart_is_unavailable_then_nothing_is_lost(self, own_postgres: Postgres) -> None:
        """While the server is stopped the next call is StoreUnavailable saying PostgreSQL cannot be reached (no
        psycopg error escapes); once it is back the same store reconnects by itself, every event appended before
        is there, and appending goes on."""
        postgres = own_postgres  # a cluster of the test's own: the session's serves the tests beside it
        postgres.require_cluster()
        url = postgres.fresh_url()
        with PostgresStore(url, timeout=2) as store:
            events = make_events(FIGHT, 4)
            store.append(FIGHT, events, 0)
            listener = store.listen()
            postgres.pause()
            try:
                with pytest.raises(StoreUnavailable) as info:
                    store.version(FIGHT)
                assert "cannot reach PostgreSQL" in info.value.reason
                with pytest.raises(StoreUnavailable):
                    store.append(FIGHT, continue_from(events, FIGHT, 1), 4)
                with pytest.raises(StoreUnavailable):
                    listener.wait(0.5)
            finally:
                postgres.resume()
                listener.close()
            deadline = time.monotonic() + 30
            while True:
                try:
                    assert store.version(FIGHT) == 4
                    break
                except StoreUnavailable:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
            assert list(store.read(FIGHT)) == events
            more = continue_from(events, FIGHT, 2)
            assert store.append(FIGHT, more, 4) == 6
            assert list(store.read(FIGHT)) == events + more

    def test_after_an_outage_the_store_answers_within_seconds_of_postgresql_returning(self, own_postgres: Postgres
                                                                                       ) -> None:
        """The pool's reconnection does not back off past the outage (RECONNECT_WINDOW): after 16 s without the
        server, asked twice a second, the store answers within a few seconds of its return (the pool's own
        doubling delays, 1, 2, 4, 8, 16 s..., left its next try up to 15 s away: measured 12.6 s; a 2-worker
        server stayed 503 that long)."""
        postgres = own_postgres
        postgres.require_cluster()
        url = postgres.fresh_url()
        with PostgresStore(url, timeout=0.5) as store:
            store.append(FIGHT, make_events(FIGHT, 2), 0)
            postgres.pause()
            try:
                until = time.monotonic() + 16
                while time.monotonic() < until:
                    with pytest.raises(StoreUnavailable):
                        store.version(FIGHT)
                    time.sleep(0.5)
            finally:
                postgres.resume()
            back = time.monotonic()
            while True:
                try:
                    assert store.version(FIGHT) == 2
                    break
                except StoreUnavailable:
                    assert time.monotonic() - back < 4.5, "still unavailable 4.5 s after PostgreSQL returned"
                    time.sleep(0.1)
