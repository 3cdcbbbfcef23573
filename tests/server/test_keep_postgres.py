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


class TestManagedSeats:
    """Seat ids, reissues, revocations and staged commands, kept in PostgreSQL as the SQLite keep keeps them."""

    def test_a_seat_is_reissued_and_revoked_in_the_order_made(self, postgres: Postgres) -> None:
        """A managed seat is found by its token; a reissue replaces its hash (the old token finds nothing) and keeps
        its place in the order; a revocation leaves no token; another process sees it all."""
        from omen_server.keep import seat_token

        url = postgres.fresh_url()
        with PostgresKeep(url) as a, PostgresKeep(url) as b:
            a.add_seat("duel", "gm")
            first = seat_token("omen_gm_x", "duel", "s1", 0, "player")
            a.add_managed_seat("duel", "s1", "player", "Alice", ("kael",), first)
            a.add_managed_seat("duel", "s2", "spectator", "Watcher", (), seat_token("omen_gm_x", "duel", "s2", 0,
                                                                                     "spectator"))
            again = seat_token("omen_gm_x", "duel", "s1", 1, "player")
            assert a.replace_token("duel", "s1", again, 1) and not a.replace_token("duel", "nope", again, 1)
            assert b.seat(first) is None and b.seat(again) == Seat("duel", "player", "Alice", ("kael",))
            rows = b.seat_rows("duel")
            assert [(r.kind, r.seat_id if r.kind != "gm" else "", r.generation) for r in rows] == [
                ("gm", "", 0), ("player", "s1", 1), ("spectator", "s2", 0)]
            assert a.replace_token("duel", "s2", None, 1)
            assert [r.revoked for r in b.seat_rows("duel")] == [False, False, True]
            assert (b.retired(first), b.retired(seat_token("omen_gm_x", "duel", "s2", 0, "spectator")),
                    b.retired(again)) == ("reissued", "revoked", None)

    def test_a_staged_command_is_kept_until_dropped(self, postgres: Postgres) -> None:
        """put_staged keeps one staged command per fight (replaced when put again) until it is put as None."""
        with PostgresKeep(postgres.fresh_url()) as keep:
            assert keep.staged("duel") is None
            keep.put_staged("duel", b"one")
            keep.put_staged("duel", b"two")
            assert keep.staged("duel") == b"two" and keep.staged("other") is None
            keep.put_staged("duel", None)
            assert keep.staged("duel") is None
