"""omen_server/keep.py: the keep's file is its owner's alone, its failures are 503s, and an idempotency key is
reserved atomically: of any number of callers given one key, one reserves it, the others see its answer (both keeps:
the SQLite one, and the PostgreSQL one when a server is given, tests/postgres.py)."""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from omen_core.errors import StoreUnavailable
from omen_server.keep import PENDING, Keep, PostgresKeep


@pytest.fixture(params=["sqlite", "postgres"])
def keep(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Any]:
    """A keep of each kind: a SQLite file, and the keep's tables in a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        made: Any = Keep(str(tmp_path / "keep.db"))
    else:
        made = PostgresKeep(request.getfixturevalue("postgres").fresh_url())
    yield made
    made.close()


class TestReservations:
    def test_the_first_reserves_and_the_others_see_it_pending(self, keep: Any) -> None:
        """reserve: None for the first caller; the key's request hash and PENDING for every later one, until its
        answer is kept; then that answer."""
        assert keep.reserve("duel", "tok", "k1", "h1") is None
        assert keep.reserve("duel", "tok", "k1", "h1") == ("h1", PENDING, b"")
        assert keep.reserve("duel", "tok", "k1", "h2") == ("h1", PENDING, b"")  # another body: the first's hash
        keep.keep_answer("duel", "tok", "k1", "h1", 201, b'{"head":1}')
        assert keep.reserve("duel", "tok", "k1", "h1") == ("h1", 201, b'{"head":1}')
        assert keep.answer("duel", "tok", "k1") == ("h1", 201, b'{"head":1}')

    def test_a_released_key_may_be_reserved_again(self, keep: Any) -> None:
        """release gives up a pending key (its command was refused: nothing appended); an answered key it leaves."""
        assert keep.reserve("duel", "tok", "k1", "h1") is None
        keep.release("duel", "tok", "k1")
        assert keep.answer("duel", "tok", "k1") is None
        assert keep.reserve("duel", "tok", "k1", "h2") is None
        keep.keep_answer("duel", "tok", "k1", "h2", 201, b"x")
        keep.release("duel", "tok", "k1")
        assert keep.answer("duel", "tok", "k1") == ("h2", 201, b"x")

    def test_keys_are_per_fight_and_per_token(self, keep: Any) -> None:
        """One key under another token or fight is another key."""
        assert keep.reserve("duel", "tok", "k", "h") is None
        assert keep.reserve("duel", "other", "k", "h") is None
        assert keep.reserve("other", "tok", "k", "h") is None

    def test_of_many_racing_callers_one_reserves(self, keep: Any) -> None:
        """Eight threads reserve one key at once, twenty times over: each time exactly one gets it."""
        for round_ in range(20):
            winners: list[int] = []
            start = threading.Barrier(8)

            def race(n: int, key: str = f"k{round_}", start: threading.Barrier = start,
                     winners: list[int] = winners) -> None:
                start.wait()
                if keep.reserve("duel", "tok", key, "h") is None:
                    winners.append(n)

            threads = [threading.Thread(target=race, args=(n,)) for n in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert len(winners) == 1


class TestSqliteKeep:
    def test_the_keep_file_is_created_owner_only_whatever_the_umask(self, tmp_path: Path) -> None:
        """The keep holds seeds, notes and hidden combatants: its file, and the WAL and shared-memory files SQLite
        makes beside it, are 0600 even under umask 000."""
        old = os.umask(0)
        try:
            keep = Keep(str(tmp_path / "omen.keep.db"))
            keep.put_seed("duel", b"seed")
            made = {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()}
            keep.close()
        finally:
            os.umask(old)
        assert {"omen.keep.db", "omen.keep.db-wal", "omen.keep.db-shm"} <= set(made)
        assert made == dict.fromkeys(made, 0o600)

    def test_a_keep_locked_by_another_process_is_store_unavailable(self, tmp_path: Path) -> None:
        """While another connection holds the keep's write lock past the keep's timeout, a write is
        StoreUnavailable (a 503), not a sqlite3 error (a 500)."""
        keep = Keep(str(tmp_path / "keep.db"), timeout=0.1)
        other = sqlite3.connect(tmp_path / "keep.db", isolation_level=None)
        other.execute("BEGIN EXCLUSIVE")
        try:
            with pytest.raises(StoreUnavailable, match="the keep cannot be used"):
                keep.reserve("duel", "tok", "k", "h")
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert keep.reserve("duel", "tok", "k", "h") is None
        keep.close()
