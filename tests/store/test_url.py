"""``open_store``: which store each URL form opens, and the error for anything else."""

from __future__ import annotations

from pathlib import Path

import pytest

from omen_core.errors import BadInput
from omen_core.store import EventStore, JsonlStore, MemoryStore, SqliteStore, open_store
from tests.fights import as_

from .conftest import make_events


class TestAcceptedForms:
    """Every accepted URL form."""

    def test_memory(self) -> None:
        """``memory:`` opens a MemoryStore."""
        assert isinstance(open_store("memory:"), MemoryStore)

    @pytest.mark.parametrize("prefix", ["sqlite:///", "sqlite:"])
    def test_sqlite_file(self, tmp_path: Path, prefix: str) -> None:
        """``sqlite:///path.db`` and ``sqlite:path.db`` open a SqliteStore on that file."""
        path = tmp_path / "fights.db"
        store = as_(open_store(f"{prefix}{path}"), SqliteStore)
        try:
            assert store.path == str(path)
            store.append("f", make_events("f", 1), 0)
        finally:
            store.close()
        assert path.is_file()

    def test_sqlite_relative_path(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """``sqlite:///rel.db`` is relative to the working directory (three slashes, then the path)."""
        monkeypatch.chdir(tmp_path)
        with as_(open_store("sqlite:///rel.db"), SqliteStore) as store:
            assert store.path == "rel.db"

    def test_sqlite_in_memory(self) -> None:
        """``sqlite::memory:`` opens an in-memory SQLite database."""
        with as_(open_store("sqlite::memory:"), SqliteStore) as store:
            assert store.path == ":memory:"

    def test_jsonl_file(self, tmp_path: Path) -> None:
        """A path ending in ``.jsonl`` opens a single-file JsonlStore."""
        path = tmp_path / "duel.jsonl"
        store = open_store(str(path))
        assert isinstance(store, JsonlStore)
        store.append("duel", make_events("duel", 1), 0)
        assert path.is_file()

    def test_existing_directory(self, tmp_path: Path) -> None:
        """An existing directory opens a directory-mode JsonlStore."""
        store = open_store(str(tmp_path))
        store.append("duel", make_events("duel", 1), 0)
        assert (tmp_path / "duel.jsonl").is_file()

    def test_path_ending_in_slash(self, tmp_path: Path) -> None:
        """A path ending in ``/`` opens a directory-mode JsonlStore, created on first append."""
        store = open_store(f"{tmp_path}/new/")
        store.append("duel", make_events("duel", 1), 0)
        assert (tmp_path / "new" / "duel.jsonl").is_file()

    @pytest.mark.parametrize("url", ["memory:", "sqlite::memory:"])
    def test_stores_satisfy_the_protocol(self, url: str) -> None:
        """What open_store returns is an EventStore."""
        store = open_store(url)
        assert isinstance(store, EventStore)
        getattr(store, "close", lambda: None)()


class TestRejected:
    """Anything else is BadInput listing the accepted forms."""

    @pytest.mark.parametrize("url", ["", "postgresql:db", "fights.txt", "sqlite:", "sqlite:///",
                                     "sqlite://host/x.db", "memory"])
    def test_unknown_forms_raise_bad_input(self, url: str, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
        """An unrecognized URL raises BadInput whose message lists the accepted forms."""
        monkeypatch.chdir(tmp_path)
        with pytest.raises(BadInput) as info:
            open_store(url)
        message = str(info.value)
        for form in ("memory:", "sqlite:///path.db", "postgresql://", ".jsonl", "directory"):
            assert form in message


class TestCreatesFile:
    def test_only_a_sqlite_database_not_there_yet_is_created_by_opening(self, tmp_path: Path) -> None:
        """creates_file is true for a sqlite: URL whose file is missing (opening it makes one), false once it exists
        and for every other form (a JSON Lines log is made by its first append)."""
        from omen_core.store.url import creates_file

        db = tmp_path / "f.db"
        assert creates_file(f"sqlite:///{db}") is True
        assert not db.exists()
        with SqliteStore(db):
            pass
        assert creates_file(f"sqlite:///{db}") is False
        assert [creates_file(url) for url in ("sqlite::memory:", "memory:", str(tmp_path / "x.jsonl"),
                                              f"{tmp_path}/dir/")] == [False] * 4
