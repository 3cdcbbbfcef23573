"""The server's keep in PostgreSQL (omen_server.keep.PostgresKeep): the SQLite keep's methods, shared by every
process on the database, its seeds never readable through the event store, and a new fight's rows kept in its
log's transaction (of two creations racing for one key or id, the loser keeps and takes back nothing)."""

from __future__ import annotations

import hashlib
import threading
import time
from typing import Any

import psycopg
import pytest
from litestar.testing import TestClient

from omen_core.errors import ConcurrencyError
from omen_core.store import PostgresStore
from omen_server import create_app
from omen_server.keep import CREATES, AnswerTaken, Founding, PostgresKeep, Seat, open_keep, token_hash
from tests.postgres import Postgres
from tests.server.test_app import sheet
from tests.server.test_keep import founding
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
            watcher = seat_token("omen_gm_x", "duel", "s2", 0, "spectator")  # revoked, then its seat reissued
            assert a.replace_token("duel", "s2", seat_token("omen_gm_x", "duel", "s2", 2, "spectator"), 2)
            assert (b.retired(watcher), b.retired(first)) == ("reissued", "reissued")

    def test_a_staged_command_is_kept_until_dropped(self, postgres: Postgres) -> None:
        """put_staged keeps one staged command per fight (replaced when put again) until it is put as None."""
        with PostgresKeep(postgres.fresh_url()) as keep:
            assert keep.staged("duel") is None
            keep.put_staged("duel", b"one")
            keep.put_staged("duel", b"two")
            assert keep.staged("duel") == b"two" and keep.staged("other") is None
            keep.put_staged("duel", None)
            assert keep.staged("duel") is None


class TestFoundingWithTheLog:
    """A new fight's keep rows written in its log's transaction (the keep in the store's database): of two
    creations racing for one Idempotency-Key or one id, the loser stores nothing and takes nothing of the
    winner's back."""

    def test_a_creation_losing_the_key_stores_nothing_and_takes_nothing_back(self, postgres: Postgres) -> None:
        """A second fight appended under a key kept with the first fight's log is AnswerTaken: no log, seat or seed
        of it; taking it back (unfound) leaves the first's answer and GM seat."""
        with PostgresStore(postgres.fresh_url()) as store, PostgresKeep(store.db) as keep:
            keep.found(founding("fight-a", "omen_gm_a"), store).append("fight-a", make_events("fight-a", 3), 0)
            loser = founding("fight-b", "omen_gm_b")
            with pytest.raises(AnswerTaken):
                keep.found(loser, store).append("fight-b", make_events("fight-b", 3), 0)
            keep.unfound(loser, store)
            assert store.fights() == ["fight-a"]
            assert keep.answer(CREATES, "create", "k1") == ("h", 201, b'{"fight_id":"fight-a"}')
            assert keep.seat("omen_gm_a") == Seat("fight-a", "gm") and keep.seat("omen_gm_b") is None
            assert keep.seed("fight-b") is None and keep.seed("fight-a") == b"seed-fight-a"

    def test_a_creation_losing_the_id_leaves_the_winners_gm_seat_and_answer(self, postgres: Postgres) -> None:
        """Two creations of one id under one key and body have one GM token (made from the id, key and body): the
        loser's append is ConcurrencyError, and taking it back leaves the winner's GM seat, seed and answer."""
        with PostgresStore(postgres.fresh_url()) as store, PostgresKeep(store.db) as keep:
            keep.found(founding("duel", "omen_gm_same"), store).append("duel", make_events("duel", 3), 0)
            loser = Founding("duel", "omen_gm_same", b"another seed", b"{}", founding("duel", "omen_gm_same").answer)
            with pytest.raises(ConcurrencyError):
                keep.found(loser, store).append("duel", make_events("duel", 3, tag=1), 0)
            keep.unfound(loser, store)
            assert keep.seat("omen_gm_same") == Seat("duel", "gm") and keep.seed("duel") == b"seed-duel"
            assert keep.answer(CREATES, "create", "k1") == ("h", 201, b'{"fight_id":"duel"}')


def _waiting(url: str, count: int) -> None:
    """Wait (at most 30 s) until ``count`` other sessions of the database wait for a lock."""
    with psycopg.connect(url, autocommit=True) as conn:
        for _ in range(600):
            waiting = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND "
                                   "wait_event_type = 'Lock' AND pid <> pg_backend_pid()").fetchall()[0][0]
            if waiting >= count:
                return
            time.sleep(0.05)
    raise AssertionError(f"{count} sessions never waited for a lock")


@pytest.mark.parametrize("named", [False, True], ids=["fresh-id", "id-given"])
def test_two_apps_creating_under_one_key_at_once_answer_one_fight(postgres: Postgres, named: bool) -> None:
    """Two apps (two servers) on one database, each given the same keyed POST /fights while keep_answers is locked,
    so that both have looked for the key and written their log before either commits (deterministic): both are
    201 with the same fight and GM token, byte for byte; one fight is stored, and the key names it."""
    url = postgres.fresh_url()
    body = {**({"id": "duel"} if named else {}), "dice": "seeded", "combatants": [sheet("kael"), sheet("vesh")]}
    with PostgresStore(url) as a, PostgresStore(url) as b, TestClient(create_app(a, PostgresKeep(a.db))) as one, \
            TestClient(create_app(b, PostgresKeep(b.db))) as other, psycopg.connect(url) as holder:
        holder.execute("LOCK TABLE keep_answers IN SHARE ROW EXCLUSIVE MODE")  # every insert into it waits
        answers: dict[int, Any] = {}

        def send(n: int, client: Any) -> None:
            answers[n] = client.post("/fights", json=body, headers={"Idempotency-Key": "race"})

        threads = [threading.Thread(target=send, args=(n, client)) for n, client in enumerate((one, other))]
        for thread in threads:
            thread.start()
        _waiting(url, 2)  # both inside their log's transaction (the second of one id waits for the first's)
        holder.rollback()
        for thread in threads:
            thread.join(30)
        assert [answers[n].status_code for n in (0, 1)] == [201, 201], [answers[n].text for n in (0, 1)]
        assert answers[0].content == answers[1].content
        made = answers[0].json()
        assert a.fights() == [made["fight_id"]]
        with psycopg.connect(url) as conn:
            kept = conn.execute("SELECT body FROM keep_answers WHERE fight_id = '/fights'").fetchall()
        assert [bytes(row[0]) for row in kept] == [f'{{"fight_id":"{made["fight_id"]}"}}'.encode()]
        assert one.get(f"/fights/{made['fight_id']}/seat", headers={"Authorization": f"Bearer {made['gm_token']}"}
                       ).json() == {"kind": "gm", "name": "", "combatants": [], "physical": []}
