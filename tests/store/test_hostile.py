"""Hostile paths and URLs: the store API raises only OmenError (StoreUnavailable naming the path), never an OSError,
a sqlite3 error or a ValueError; reading creates nothing and changes no byte."""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omen_core.errors import OmenError, StoreUnavailable
from omen_core.store import SqliteStore, open_existing_store, open_snapshots, open_store
from omen_core.store.snapshots import FileSnapshots
from tests.fights import as_

from .conftest import make_events

KINDS = ("missing", "directory", "empty", "random bytes", "database header", "fifo", "devzero", "file as parent", "nul")


def make_place(root: Path, kind: str, name: str, data: bytes) -> str:
    """Put a hostile thing of ``kind`` at ``root/name`` (or a path through it); return the path."""
    path = root / name
    if kind == "directory":
        path.mkdir()
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "random bytes":
        path.write_bytes(data)
    elif kind == "database header":
        path.write_bytes(b"SQLite format 3\0" + data)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "devzero":
        path.symlink_to("/dev/zero")
    elif kind == "file as parent":
        path.write_bytes(data)
        return str(path / name)
    elif kind == "nul":
        return f"{path}\0x"
    elif kind == "missing":
        return str(root / "nodir" / name)
    return str(path)


def use(url: str) -> None:
    """Open the store and its snapshots both ways, then read and append: whatever fails must be an OmenError."""
    for opener in (open_store, open_existing_store):
        try:
            store = opener(url)
        except OmenError:
            continue
        try:
            fights = store.fights()
            for fight in fights:
                list(store.read(fight))
                store.version(fight)
            store.append("f", make_events("f", 2), 0)
        except OmenError:
            pass
        finally:
            getattr(store, "close", lambda: None)()
    try:
        snapshots = open_snapshots(url)
        snapshots.seqs("f")
        snapshots.latest("f", 10)
    except OmenError:
        pass


class TestHostilePaths:
    """Every hostile place, as a JSON Lines file, a directory store and a SQLite database."""

    @settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(kind=st.sampled_from(KINDS), form=st.sampled_from(("{}.jsonl", "{}/", "sqlite:///{}.db", "sqlite:{}/")),
           data=st.binary(max_size=300))
    def test_only_omen_errors(self, kind: str, form: str, data: bytes) -> None:
        """open_store, open_existing_store and open_snapshots, then a read and an append, raise only OmenError."""
        root = Path(tempfile.mkdtemp())
        try:
            name = "x.db" if form.startswith("sqlite") else "x.jsonl"
            place = make_place(root, kind, name if form == "{}.jsonl" or form.startswith("sqlite:///") else "x", data)
            url = form.replace("{}.jsonl", "{}").replace("{}.db", "{}").format(place)
            use(url)
        finally:
            shutil.rmtree(root)

    @pytest.mark.parametrize(("url", "words"), [
        ("sqlite:///{d}/notdb.db", "file is not a database"),
        ("sqlite:///{d}/adir.db", "is a directory"),
        ("sqlite:///{d}/nodir/x.db", "no such directory"),
        ("sqlite:///{d}/adir/", "is a directory"),
        ("sqlite:///{d}/\0x.db", "NUL byte"),
        ("{d}/a\0.jsonl", "NUL byte"),
    ])
    def test_the_audits_reproductions(self, tmp_path: Path, url: str, words: str) -> None:
        """Each reproduction of the audit is StoreUnavailable with readable words, from open_store and
        open_snapshots (and from open_existing_store, which may also say the file is missing)."""
        (tmp_path / "notdb.db").write_bytes(b"not a database, only words " * 20)
        (tmp_path / "adir.db").mkdir()
        (tmp_path / "adir").mkdir()
        url = url.format(d=tmp_path)
        for opener in (open_store, open_snapshots):
            with pytest.raises(StoreUnavailable, match=words):
                store = opener(url)
                getattr(store, "fights", lambda: None)()
        with pytest.raises(OmenError):
            open_existing_store(url).fights()

    @pytest.mark.parametrize("kind", ["fifo", "devzero", "directory"])
    def test_open_existing_store_says_what_it_is(self, tmp_path: Path, kind: str) -> None:
        """A FIFO or device is 'not a regular file', a directory 'a directory', never 'no such log'."""
        url = make_place(tmp_path, kind, "a.jsonl", b"")
        with pytest.raises(StoreUnavailable) as info:
            open_existing_store(url)
        assert "no such" not in str(info.value)
        assert ("is a directory" if kind == "directory" else "not a regular file") in str(info.value)


class TestReadingChangesNothing:
    """Reading a store creates no file and changes no byte."""

    def test_a_missing_database_is_not_created(self, tmp_path: Path) -> None:
        """open_existing_store on a missing database says so and creates nothing."""
        with pytest.raises(OmenError, match="no such database"):
            open_existing_store(f"sqlite:///{tmp_path}/none.db")
        assert list(tmp_path.iterdir()) == []

    def test_read_only_database_reads_without_change(self, tmp_path: Path) -> None:
        """A database made read-only (0444) is read, its landmarks and snapshots looked up, and verified, with
        its bytes the same after."""
        from omen_replay.verify import verify_store
        from tests.store.test_snapshots import ember_log

        db = tmp_path / "fights.db"
        url = f"sqlite:///{db}"
        with as_(open_store(url), SqliteStore) as store:
            records = ember_log()
            store.append(records[0].fight_id, records, 0)
        db.chmod(0o444)
        before = db.read_bytes()
        store = as_(open_existing_store(url), SqliteStore)
        try:
            fight = store.fights()[0]
            assert verify_store(store, fight).clean
            assert open_snapshots(url).seqs(fight) == []
        finally:
            store.close()
        assert db.read_bytes() == before
        tables = {name for (name,) in sqlite3.connect(f"file:{db}?mode=ro", uri=True).execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert "snapshots" not in tables

    def test_relative_and_absolute_sqlite_urls(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """``sqlite:///rel.db`` is relative to the working directory, ``sqlite:////abs.db`` absolute."""
        monkeypatch.chdir(tmp_path)
        (tmp_path / "sub").mkdir()
        with as_(open_store("sqlite:///rel.db"), SqliteStore) as store:
            store.append("f", make_events("f", 1), 0)
        with as_(open_store(f"sqlite:///{tmp_path}/sub/abs.db"), SqliteStore) as store:
            assert store.path == f"{tmp_path}/sub/abs.db" and store.path.startswith("/")
            store.append("f", make_events("f", 1), 0)
        assert (tmp_path / "rel.db").is_file() and (tmp_path / "sub" / "abs.db").is_file()


class TestSnapshotPaths:
    """Every snapshot path is built inside the snapshot folder."""

    @pytest.mark.parametrize("fight_id", ["../x", "../../x", "/abs", "a/b", "..", ".", "", "a\0b", "x\n"])
    def test_an_id_that_is_no_fight_id_is_refused(self, tmp_path: Path, fight_id: str) -> None:
        """seqs, latest and delete refuse a hostile id (InvalidFightId) and touch nothing outside."""
        from omen_core.errors import InvalidFightId

        outside = tmp_path / "x"
        outside.mkdir()
        (outside / "5.json").write_text("{}")
        snapshots = FileSnapshots(tmp_path / "log.jsonl.snapshots" / "deep")
        for call in (snapshots.seqs, snapshots.delete, lambda f: snapshots.latest(f, 10)):
            with pytest.raises(InvalidFightId):
                call(fight_id)
        assert (outside / "5.json").exists()

    def test_snapshot_clear_of_a_hostile_log_deletes_nothing(self, tmp_path: Path) -> None:
        """The audit's reproduction: a log naming fight '../../x' is refused before any snapshot path is built."""
        from omen_core.errors import LogCorrupted
        from tests.store.test_jsonl import EMBER_LOG

        (tmp_path / "a" / "b").mkdir(parents=True)
        (tmp_path / "a" / "x").mkdir()
        (tmp_path / "a" / "x" / "5.json").write_text("{}")
        log = tmp_path / "a" / "b" / "h.jsonl"
        log.write_bytes(EMBER_LOG.read_bytes().replace(b'"fight_id":"ember-ford"', b'"fight_id":"../../x"'))
        with pytest.raises(LogCorrupted, match="not a fight id"):
            open_existing_store(str(log)).fights()
        with pytest.raises(OmenError):
            open_snapshots(str(log)).delete("../../x")
        assert (tmp_path / "a" / "x" / "5.json").exists()
