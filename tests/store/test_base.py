"""omen_core/store/base.py: the files a store creates are its owner's alone (0600), whatever the umask: a fight's log,
its indexes and snapshots hold what only the GM may see."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from omen_core.state import FightState
from omen_core.store import JsonlStore, SqliteStore
from omen_core.store.base import PRIVATE, create_private, write_private
from omen_core.store.snapshots import FileSnapshots, SqliteSnapshots, take

from .conftest import make_events


def mode(path: Path) -> int:
    """The permission bits of ``path``."""
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(params=[0o000, 0o022, 0o077])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    """The process's umask set to each of a permissive, the usual and a strict one."""
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


@pytest.fixture(params=[0o000, 0o022, 0o077, 0o277])
def any_umask(request: pytest.FixtureRequest) -> Iterator[int]:
    """As :func:`umask`, and an odd one besides that takes the owner's write bit (folders made under it could not
    be written to, so only files are made under it)."""
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


class TestPrivateFiles:
    def test_create_private_makes_an_owner_only_file_whatever_the_umask(self, tmp_path: Path, any_umask: int) -> None:
        """create_private makes the file 0600, even under a umask that would take the owner's write bit."""
        assert create_private(tmp_path / "f") is True
        assert mode(tmp_path / "f") == PRIVATE

    def test_an_existing_file_keeps_its_mode(self, tmp_path: Path) -> None:
        """A file that exists is left as the operator made it: create_private does nothing and says so."""
        (tmp_path / "f").write_text("kept")
        os.chmod(tmp_path / "f", 0o640)
        assert create_private(tmp_path / "f") is False
        assert mode(tmp_path / "f") == 0o640 and (tmp_path / "f").read_text() == "kept"

    def test_write_private_replaces_the_content_and_the_mode(self, tmp_path: Path, any_umask: int) -> None:
        """write_private writes the bytes whole and leaves the file 0600."""
        (tmp_path / "f").write_text("old and longer")
        os.chmod(tmp_path / "f", 0o644)
        write_private(tmp_path / "f", b"new")
        assert (tmp_path / "f").read_bytes() == b"new" and mode(tmp_path / "f") == PRIVATE


class TestStoresCreatePrivateFiles:
    def test_a_sqlite_store_its_wal_and_its_shared_memory(self, tmp_path: Path, umask: int) -> None:
        """A SQLite store's database and the WAL and shared-memory files SQLite makes beside it are 0600."""
        with SqliteStore(tmp_path / "events.db") as store:
            store.append("duel", make_events("duel", 3), 0)
            made = sorted(p.name for p in tmp_path.iterdir())
            assert {"events.db", "events.db-wal", "events.db-shm"} <= set(made)
            assert {name: mode(tmp_path / name) for name in made} == dict.fromkeys(made, PRIVATE)

    def test_a_json_lines_store_its_logs_and_their_indexes(self, tmp_path: Path, umask: int) -> None:
        """Every file a JSON Lines directory store writes (the logs, their offset and landmark indexes) is 0600."""
        store = JsonlStore(tmp_path / "fights")
        events = make_events("duel", 1100)  # past 1024 events: the offset index is written too
        for start in range(0, 1100, 100):
            store.append("duel", events[start:start + 100], start)
        store.append("other", make_events("other", 2), 0)
        made = sorted(p.name for p in (tmp_path / "fights").iterdir() if p.is_file())
        assert "duel.jsonl" in made and "other.jsonl" in made and len(made) > 2
        assert {name: mode(tmp_path / "fights" / name) for name in made} == dict.fromkeys(made, PRIVATE)

    def test_a_single_json_lines_log(self, tmp_path: Path, umask: int) -> None:
        """A one-fight log file and its sidecars are 0600."""
        store = JsonlStore.single(tmp_path / "fight.jsonl")
        store.append("duel", make_events("duel", 4), 0)
        made = sorted(p.name for p in tmp_path.iterdir())
        assert "fight.jsonl" in made
        assert {name: mode(tmp_path / name) for name in made} == dict.fromkeys(made, PRIVATE)

    @pytest.mark.parametrize("kind", ["files", "sqlite"])
    def test_snapshots(self, tmp_path: Path, umask: int, kind: str) -> None:
        """A snapshot holds the whole state, the GM's too: its file (or database) is 0600."""
        snapshot = msgspec.structs.replace(take(FightState()), fight_id="duel", seq=3)
        if kind == "files":
            FileSnapshots(tmp_path / "snaps").save(snapshot)
            made = list((tmp_path / "snaps").rglob("*.json"))
        else:
            SqliteSnapshots(tmp_path / "snaps.db").save(snapshot)
            made = [p for p in tmp_path.iterdir() if p.is_file()]
        assert made and all(mode(p) == PRIVATE for p in made)
