"""The server's keep in PostgreSQL (omen_server.keep.PostgresKeep): the SQLite keep's methods, shared by every
process on the database, and its seeds never readable through the event store."""

from __future__ import annotations

import hashlib

import psycopg

from omen_core.store import PostgresStore
from omen_server.keep import PostgresKeep, Seat, open_keep, token_hash
from tests.postgres import Postgres

from tests.store.conftest import make_events


class TestKeep:
    def test_seats_are_kept_as_hashes(self, postgres: Postgres) -> None:
        """A seat's token is given once; the keep finds its seat by the token, stores only its SHA-256, and knows
        no other token."""
        url = postgres.fresh_url()
        with PostgresKeep(url) as keep:
            token = keep.add_seat("duel", "gm")
            assert token.startswith("omen_gm_") and len(token) == len("omen_gm_") + 43
            seat = keep.seat(token)
            assert seat is not None and (seat.fight_id, seat.kind, seat.name) == ("duel", "gm", "")
            assert keep.seat(token + "x") is None
        with psycopg.connect(url, autocommit=True) as conn:
            rows = conn.execute("SELECT token_hash FROM keep_seats").fetchall()
        assert rows == [(hashlib.sha256(token.encode()).hexdigest(),)] == [(token_hash(token),)]

    def test_another_process_sees_the_same_keep(self, postgres: Postgres) -> None:
        """Two keeps on one database (two server processes) share seats, seeds and answers."""
        url = postgres.fresh_url()
        with PostgresKeep(url) as a, PostgresKeep(url) as b:
            token = a.add_seat("duel", "player", "ash")
            a.put_seed("duel", b"\x00\x01seed")
            a.keep_answer("duel", token, "key-1", "h1", 201, b'{"ok":1}')
            assert b.seat(token) == Seat("duel", "player", "ash")
            assert b.seed("duel") == b"\x00\x01seed"
            assert b.answer("duel", token, "key-1") == ("h1", 201, b'{"ok":1}')
            assert b.seed("other") is None and b.answer("duel", token, "key-2") is None

    def test_the_first_answer_stays(self, postgres: Postgres) -> None:
        """Keeping a second answer under the same key changes nothing: a retry gets the first; a seed put again
        replaces the old one."""
        with PostgresKeep(postgres.fresh_url()) as keep:
            keep.keep_answer("f", "t", "k", "h1", 201, b"first")
            keep.keep_answer("f", "t", "k", "h2", 409, b"second")
            assert keep.answer("f", "t", "k") == ("h1", 201, b"first")
            keep.put_seed("f", b"one")
            keep.put_seed("f", b"two")
            assert keep.seed("f") == b"two"

    def test_seeds_are_never_read_through_the_event_store(self, postgres: Postgres) -> None:
        """A seed kept beside a fight's events appears in nothing the event store gives: not its fights, events,
        lines or landmarks."""
        url = postgres.fresh_url()
        seed = b"SECRET-SEED-0123456789"
        with PostgresStore(url) as store, PostgresKeep(store.db) as keep:
            store.append("duel", make_events("duel", 4), 0)
            keep.put_seed("duel", seed)
            keep.put_seed("no-events", seed)
            assert store.fights() == ["duel"]
            seen = b"".join(line for chunk in store.read_lines("duel") for line in chunk)
            seen += b"".join(repr(ev).encode() for ev in store.read("duel"))
            seen += b"".join(repr(ev).encode() for ev in store.landmarks("duel"))
            assert seed not in seen and seed.hex().encode() not in seen


def test_a_postgres_store_keeps_its_keep_in_the_same_database(postgres: Postgres) -> None:
    """open_keep: a server of a PostgreSQL store with no --keep keeps seats, seeds and settings in the store's own
    database (every server on it shares them); a --keep URL is a PostgreSQL keep too; a path is the SQLite keep."""
    with PostgresStore(postgres.fresh_url()) as store:
        keep = open_keep(store, None, "unused.keep.db")
        assert isinstance(keep, PostgresKeep) and keep.db is store.db
        token = keep.add_seat("duel", "player", "Alice", ("kael",))
        keep.put_settings("duel", b'{"hp_display":"exact"}')
        assert keep.seat(token) == Seat("duel", "player", "Alice", ("kael",))
        assert keep.seats("duel") == [Seat("duel", "player", "Alice", ("kael",))]
        assert keep.settings("duel") == b'{"hp_display":"exact"}' and keep.settings("other") is None
