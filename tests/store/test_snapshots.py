"""Tests for omen_core.store.snapshots: a cache that changes no result, and stale snapshots ignored."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omen_core import Fight, MemoryStore
from omen_core.events import Redone, StoredEvent, Undone
from omen_core.store import JsonlStore, SqliteStore
from omen_core.store.postgres import PostgresStore
from omen_core.store.snapshots import (
    STATE_FORMAT,
    FileSnapshots,
    MemorySnapshots,
    PostgresSnapshots,
    Snapshot,
    SnapshotStore,
    SqliteSnapshots,
    take,
)
from omen_core.walk import StoreSource, UndoRecord, landmarks_of, project, replay, state_at, usable_snapshot
from omen_replay.scenario import load_scenario, run_scenario
from tests.fights import present
from tests.postgres import Postgres
from tests.random_fights import RandomFight, fights

EMBER = Path(__file__).resolve().parents[2] / "fixtures" / "ember-ford" / "scenario.toml"
_LOG: list[StoredEvent] = []


def ember_log() -> list[StoredEvent]:
    """The Ember Ford fight's events (made once): 327 events, the undo at seq 90 voiding seqs 82 to 88."""
    if not _LOG:
        _LOG.extend(run_scenario(load_scenario(EMBER), MemoryStore(), clock=lambda: 0).events)
    return list(_LOG)


def store_with(records: list[StoredEvent]) -> MemoryStore:
    """A memory store holding ``records``."""
    store = MemoryStore()
    store.append(records[0].fight_id, records, 0)
    return store


def ember_source() -> StoreSource:
    """The Ember Ford fight in a memory store, as the walk reads it."""
    return StoreSource(store_with(ember_log()), "ember-ford")


def lying(records: list[StoredEvent], seq: int) -> Snapshot:
    """A snapshot at ``seq`` that fits the log (schema, state format, the event's hash) but whose state is not the
    fight's: if it were used, the result would say so (its title)."""
    snap = take(project(records, seq))
    return msgspec.structs.replace(snap, state=msgspec.structs.replace(snap.state, title="a lie"))


def the_undo() -> UndoRecord:
    """The Ember Ford undo: its marker's seq and the range it voids."""
    undo = landmarks_of(ember_log()).undos[0]
    assert (undo.seq, undo.from_seq, undo.to_seq) == (90, 82, 88)
    return undo


@pytest.fixture(params=["memory", "files", "sqlite", "postgres"])
def snapshots(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SnapshotStore]:
    """A snapshot store of each kind (PostgreSQL in a fresh schema, where a server is given)."""
    if request.param == "memory":
        yield MemorySnapshots()
    elif request.param == "files":
        yield FileSnapshots(tmp_path / "snaps")
    elif request.param == "postgres":
        kept = PostgresSnapshots(request.getfixturevalue("postgres").fresh_url())
        yield kept
        kept.close()
    else:
        filed = SqliteSnapshots(tmp_path / "s.db")
        yield filed
        filed.close()


class TestCache:
    @settings(max_examples=25, deadline=None)
    @given(st.lists(st.integers(1, 327), max_size=4), st.integers(1, 327))
    def test_snapshots_change_no_result(self, at: list[int], to: int) -> None:
        """With snapshots anywhere (inside the undone range too), the state at any seq is the one walked from the
        start; deleting them changes nothing."""
        records = ember_log()
        source = ember_source()
        snaps = MemorySnapshots()
        for seq in at:
            snaps.save(take(project(records, seq)))
        expected = project(records, to)
        assert replay(source, to_seq=to) == expected
        assert state_at(source, snaps, to) == expected
        snaps.delete("ember-ford")
        assert state_at(source, snaps, to) == expected

    def test_a_fitting_snapshot_is_used(self) -> None:
        """A snapshot that fits the log is where the walk starts: its state shows through (the control for the
        tests that a stale one is not used)."""
        records = ember_log()
        snaps = MemorySnapshots()
        snaps.save(lying(records, 111))
        assert present(usable_snapshot(ember_source(), snaps, 150)).title == "a lie"
        assert state_at(ember_source(), snaps, 150).title == "a lie"

    @pytest.mark.parametrize("at", [6, 62, 104])
    def test_snapshot_in_the_middle_of_a_command(self, at: int) -> None:
        """A snapshot taken after an event inside a command's batch (seq 6 opens the ambush's batch 6-14, 62 and
        104 are inside batches 60-65 and 101-115) is a state like any other: the walk from it gives the same state."""
        records = ember_log()
        assert records[at - 1].batch + records[at - 1].batch_size - 1 > at  # the command's batch goes on after it
        snaps = MemorySnapshots()
        snaps.save(take(project(records, at)))
        assert state_at(ember_source(), snaps, 150) == project(records, 150)

    def test_every_backend_round_trips(self, snapshots: SnapshotStore) -> None:
        """Each snapshot store gives back the latest snapshot at or before a seq, equal to what was saved."""
        records = ember_log()
        for seq in (40, 100, 180):
            snapshots.save(take(project(records, seq)))
        assert snapshots.seqs("ember-ford") == [40, 100, 180]
        assert present(snapshots.latest("ember-ford", 150)).state == project(records, 100)
        assert snapshots.latest("ember-ford", 39) is None

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(fights(), st.data())
    def test_random_fights_same_state_with_or_without_snapshots(self, rf: RandomFight, data: st.DataObject) -> None:
        """In random fights with undos and redos, snapshots of the live state taken anywhere never change the state
        at any seq, nor the state at the end, which is the live one."""
        records = rf.records
        source = StoreSource(rf.fight.store, rf.fight.fight_id)
        snaps = MemorySnapshots()
        for version in data.draw(st.lists(st.sampled_from(sorted(rf.states)), max_size=5), label="snapshots at"):
            snaps.save(take(rf.states[version]))
        assert state_at(source, snaps) == replay(source) == rf.state
        for to in data.draw(st.lists(st.integers(1, len(records)), min_size=1, max_size=4), label="states at"):
            assert state_at(source, snaps, to) == replay(source, to_seq=to) == project(records, to)


class TestFileListing:
    def test_a_kept_listing_sees_its_own_saves_and_survives_a_deleted_file(self, tmp_path: Path) -> None:
        """FileSnapshots keeps its folder's listing between lookups: a snapshot it saves is found at once, and a
        file removed behind its back (by another process, say) is skipped, never an error."""
        records = ember_log()
        snaps = FileSnapshots(tmp_path / "snaps")
        snaps.save(take(project(records, 40)))
        assert snaps.seqs("ember-ford") == [40]
        snaps.save(take(project(records, 100)))
        assert snaps.seqs("ember-ford") == [40, 100]
        assert present(snaps.latest("ember-ford", 150)).state == project(records, 100)
        (tmp_path / "snaps" / "ember-ford" / "100.json").unlink()
        assert present(snaps.latest("ember-ford", 150)).state == project(records, 40)

    def test_another_writers_snapshot_is_seen_once_the_folder_changes(self, tmp_path: Path) -> None:
        """A snapshot saved through another FileSnapshots on the same folder is listed by the first one as soon
        as the folder's modification time moves (here set forward explicitly, as a later clock tick would)."""
        import os

        records = ember_log()
        first, second = FileSnapshots(tmp_path / "snaps"), FileSnapshots(tmp_path / "snaps")
        first.save(take(project(records, 40)))
        assert first.seqs("ember-ford") == [40]
        second.save(take(project(records, 100)))
        folder = tmp_path / "snaps" / "ember-ford"
        stamp = folder.stat().st_mtime_ns + 10**9
        os.utime(folder, ns=(stamp, stamp))
        assert first.seqs("ember-ford") == [40, 100]
        assert present(first.latest("ember-ford", 150)).state == project(records, 100)


    def test_a_folder_cleared_between_its_making_and_the_save_is_made_again(self, tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
        """Another process's ``omen snapshot --clear`` removing the empty folder right after this save made it
        (the interleaving forced: the folder is removed just before the file is made in it) costs nothing: the
        folder is made again and the snapshot saved."""
        import tempfile

        real, cleared = tempfile.mkstemp, [False]

        def cleared_first(*args: object, **kwargs: object) -> tuple[int, str]:
            if not cleared[0]:
                cleared[0] = True
                (tmp_path / "snaps" / "ember-ford").rmdir()
            return real(*args, **kwargs)  # type: ignore[call-overload, no-any-return]

        monkeypatch.setattr(tempfile, "mkstemp", cleared_first)
        snaps = FileSnapshots(tmp_path / "snaps")
        snaps.save(take(project(ember_log(), 40)))
        assert cleared[0] and snaps.seqs("ember-ford") == [40]


class TestLinks:
    """No snapshot is read, written or deleted through a symbolic link (issue #26: ``omen snapshot --clear``
    through a linked ``LOG.snapshots`` deleted the ``<n>.json`` files of the folder it pointed to)."""

    @pytest.mark.parametrize("linked", ["the snapshot folder", "the fight's folder"])
    def test_saving_or_deleting_through_a_link_is_refused_and_elsewhere_untouched(self, tmp_path: Path,
                                                                                  linked: str) -> None:
        """The snapshot directory or a fight's folder a link to another folder holding ``<n>.json`` files:
        saving and deleting are StoreUnavailable naming the link; looking up finds nothing there; the other
        folder's files keep their bytes."""
        from omen_core.errors import StoreUnavailable

        elsewhere = tmp_path / "elsewhere"
        (elsewhere / "ember-ford").mkdir(parents=True)
        for name in ("1.json", "40.json"):
            (elsewhere / "ember-ford" / name).write_text("precious")
        root = tmp_path / "snaps"
        if linked == "the snapshot folder":
            root.symlink_to(elsewhere)
        else:
            root.mkdir()
            (root / "ember-ford").symlink_to(elsewhere / "ember-ford")
        snaps = FileSnapshots(root)
        with pytest.raises(StoreUnavailable, match="symbolic link"):
            snaps.save(take(project(ember_log(), 40)))
        with pytest.raises(StoreUnavailable, match="symbolic link"):
            snaps.delete("ember-ford")
        assert snaps.seqs("ember-ford") == [] and snaps.latest("ember-ford", 100) is None
        assert sorted(p.read_text() for p in (elsewhere / "ember-ford").iterdir()) == ["precious", "precious"]

    def test_a_snapshot_file_that_is_a_link_is_not_read_and_saving_replaces_the_link(self, tmp_path: Path) -> None:
        """A ``<n>.json`` that is a link to a sound snapshot elsewhere is not read; saving a snapshot at that seq
        replaces the link, leaving the file it pointed to as it was."""
        records = ember_log()
        elsewhere = FileSnapshots(tmp_path / "elsewhere")
        elsewhere.save(take(project(records, 40)))
        target = tmp_path / "elsewhere" / "ember-ford" / "40.json"
        kept = target.read_bytes()
        snaps = FileSnapshots(tmp_path / "snaps")
        (tmp_path / "snaps" / "ember-ford").mkdir(parents=True)
        (tmp_path / "snaps" / "ember-ford" / "40.json").symlink_to(target)
        assert snaps.latest("ember-ford", 100) is None
        snaps.save(take(project(records, 40)))
        assert not (tmp_path / "snaps" / "ember-ford" / "40.json").is_symlink()
        assert target.read_bytes() == kept and present(snaps.latest("ember-ford", 100)).state == project(records, 40)


class TestStale:
    def test_snapshot_of_another_log_is_ignored(self) -> None:
        """A snapshot whose event hash is not the log's at that seq is ignored, not trusted."""
        records = ember_log()
        forged = msgspec.structs.replace(lying(records, 111), event_hash="0" * 64)
        snaps = MemorySnapshots()
        snaps.save(forged)
        assert usable_snapshot(ember_source(), snaps, 150) is None
        assert state_at(ember_source(), snaps, 150) == project(records, 150)

    @pytest.mark.parametrize("field, change", [("schema_version", 1), ("state_format", 1), ("state_format", -1)])
    def test_snapshot_of_another_version_is_ignored(self, field: str, change: int) -> None:
        """A snapshot taken under another schema or state format (older or newer) is ignored."""
        records = ember_log()
        snap = lying(records, 111)
        assert snap.state_format == STATE_FORMAT
        snaps = MemorySnapshots()
        snaps.save(msgspec.structs.replace(snap, **{field: getattr(snap, field) + change}))
        assert usable_snapshot(ember_source(), snaps, 150) is None
        assert state_at(ember_source(), snaps, 150) == project(records, 150)

    def test_an_older_snapshot_is_tried_next(self) -> None:
        """Past a stale snapshot, the latest fitting one before it is used."""
        records = ember_log()
        snaps = MemorySnapshots()
        snaps.save(lying(records, 61))
        snaps.save(msgspec.structs.replace(lying(records, 111), state_format=STATE_FORMAT + 1))
        assert present(usable_snapshot(ember_source(), snaps, 150)).version == 61
        assert state_at(ember_source(), snaps, 150).title == "a lie"

    @pytest.mark.parametrize("at", [82, 84, 88, 89])
    def test_snapshot_an_undo_reaches_across_is_passed_over(self, at: int) -> None:
        """A snapshot taken inside the range the undo at seq 90 voids (82-88), or between that range and the undo,
        no longer describes the log after the undo: passed over; before the undo it still fits."""
        records = ember_log()
        undo = the_undo()
        snaps = MemorySnapshots()
        snaps.save(lying(records, at))
        for to in (undo.seq, 100, None):
            assert usable_snapshot(ember_source(), snaps, to) is None
            assert state_at(ember_source(), snaps, to) == project(records, to)
        assert present(usable_snapshot(ember_source(), snaps, undo.seq - 1)).title == "a lie"
        snaps.save(lying(records, undo.from_seq - 1))  # just before the range: the undo goes back to it
        assert present(usable_snapshot(ember_source(), snaps, 100)).version == undo.from_seq - 1

    def test_snapshot_a_redo_reaches_across_is_passed_over(self) -> None:
        """A snapshot taken after an undo, before the redo that takes it back, no longer describes the log after
        the redo (the undone events count again): passed over; before the redo it still fits."""
        from omen_replay.demo import run_demo

        store = MemoryStore()
        fight = run_demo(store, clock=lambda: 0, finish=False)  # open: undo reaches it (C42)
        fight.undo()
        undone_at = fight.version
        source = StoreSource(store, "demo")
        snaps = MemorySnapshots()
        snaps.save(lying(list(store.read("demo")), undone_at))
        fight.redo()
        records = list(store.read("demo"))
        assert isinstance(records[undone_at - 1].event, Undone) and isinstance(records[-1].event, Redone)
        assert present(usable_snapshot(source, snaps, undone_at)).title == "a lie"
        assert usable_snapshot(source, snaps) is None
        assert state_at(source, snaps) == project(records) == fight.state

    def test_snapshot_inside_an_undone_range_is_not_used(self) -> None:
        """A snapshot taken inside a range later undone no longer describes the log, and is not used."""
        from omen_replay.demo import run_demo

        store, snaps = MemoryStore(), MemorySnapshots()
        fight = run_demo(store, clock=lambda: 0, finish=False)  # open: undo reaches it (C42)
        fight.snapshots = snaps
        fight.snapshot()
        fight.undo()
        fight.undo()
        assert fight.state == project(store.read("demo"))
        assert usable_snapshot(StoreSource(store, "demo"), snaps) is None
        loaded = Fight.load(store, "demo", snapshots=snaps)
        assert loaded.state == fight.state


class TestFight:
    def test_periodic_snapshots_and_loading(self, tmp_path: Path) -> None:
        """A fight with a snapshot store snapshots every N events; loading from the files gives the same state."""
        store, snaps = JsonlStore(tmp_path / "logs"), FileSnapshots(tmp_path / "snaps")
        scenario = load_scenario(EMBER)
        fight = run_scenario(scenario, store, clock=lambda: 0)
        assert snaps.seqs("ember-ford") == []
        fight.snapshots, fight.snapshot_every = snaps, 50
        fight.snapshot()
        assert usable_snapshot(StoreSource(store, "ember-ford"), snaps) == fight.state
        loaded = Fight.load(store, "ember-ford", snapshots=snaps)
        assert loaded.state == fight.state == project(store.read("ember-ford"))

    def test_snapshot_every_n_events(self, tmp_path: Path) -> None:
        """Fight.start with snapshots saves one each time the log crosses a multiple of snapshot_every."""
        from omen_core import CheckSpec, ScriptedDice
        from tests.sheets import sheet

        snaps = MemorySnapshots()
        fight = Fight.start(SqliteStore(tmp_path / "f.db"), "f", dice=ScriptedDice([3] * 20), clock=lambda: 0,
                            snapshots=snaps, snapshot_every=5)
        fight.join(sheet("ash"))
        for _ in range(10):
            fight.static_check(CheckSpec(who="ash", attribute="STR"), 2)
        crossed = [seq // 5 for seq in snaps.seqs("f")]
        assert crossed == list(range(1, fight.version // 5 + 1))  # one snapshot per multiple of 5 crossed
        store = fight.store
        assert isinstance(store, SqliteStore)
        store.close()


class TestPostgres:
    def test_a_fight_snapshots_into_its_own_database_and_loads_from_it(self, postgres: Postgres) -> None:
        """On PostgreSQL the fight's events and its snapshots share one database (open_store and open_snapshots of
        one URL): loading from the snapshots gives the state replayed from the events."""
        from omen_core.store import open_snapshots, open_store

        url = postgres.fresh_url()
        store, snaps = open_store(url), open_snapshots(url)
        assert isinstance(store, PostgresStore) and isinstance(snaps, PostgresSnapshots)
        try:
            fight = run_scenario(load_scenario(EMBER), store, clock=lambda: 0)
            fight.snapshots, fight.snapshot_every = snaps, 50
            fight.snapshot()
            assert snaps.seqs("ember-ford") == [fight.version]
            assert usable_snapshot(StoreSource(store, "ember-ford"), snaps) == fight.state
            assert Fight.load(store, "ember-ford", snapshots=snaps).state == project(store.read("ember-ford"))
        finally:
            snaps.close()
            store.close()

    def test_a_snapshot_that_does_not_decode_is_no_snapshot(self, postgres: Postgres) -> None:
        """A row of the snapshots table that is not a snapshot (written by hand, or by another omen) is ignored:
        ``latest`` gives None, never an error."""
        import psycopg

        url = postgres.fresh_url()
        snaps = PostgresSnapshots(url)
        try:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("INSERT INTO snapshots VALUES ('f', 3, 'not json'::bytea)")
            assert snaps.seqs("f") == [3]
            assert snaps.latest("f", 10) is None
        finally:
            snaps.close()
