"""Tests for omen_core.store.snapshots: a cache that changes no result, and stale snapshots ignored."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omen_core import Fight, MemoryStore
from omen_core.walk import project
from omen_core.store import JsonlStore, SqliteStore
from omen_core.store.snapshots import (
    FileSnapshots,
    MemorySnapshots,
    SqliteSnapshots,
    state_at,
    take,
)
from omen_replay.scenario import load_scenario, run_scenario

EMBER = Path(__file__).resolve().parents[2] / "fixtures" / "ember-ford" / "scenario.toml"
_LOG: list = []


def ember_log():
    """The Ember Ford fight's events (made once)."""
    if not _LOG:
        _LOG.extend(run_scenario(load_scenario(EMBER), MemoryStore(), clock=lambda: 0).events)
    return list(_LOG)


def store_with(records) -> MemoryStore:
    """A memory store holding ``records``."""
    store = MemoryStore()
    store.append(records[0].fight_id, records, 0)
    return store


@pytest.fixture(params=["memory", "files", "sqlite"])
def snapshots(request, tmp_path):
    """A snapshot store of each kind."""
    if request.param == "memory":
        yield MemorySnapshots()
    elif request.param == "files":
        yield FileSnapshots(tmp_path / "snaps")
    else:
        snaps = SqliteSnapshots(tmp_path / "s.db")
        yield snaps
        snaps.close()


class TestCache:
    @settings(max_examples=25, deadline=None)
    @given(st.lists(st.integers(1, 250), max_size=4), st.integers(1, 252))
    def test_snapshots_change_no_result(self, at, to):
        """With snapshots anywhere, the state at any seq is the full projection's; deleting them changes nothing."""
        records = ember_log()
        store = store_with(records)
        snaps = MemorySnapshots()
        for seq in at:
            snaps.save(take(project(records[:seq])))
        read = lambda after: store.read("ember-ford", after)  # noqa: E731
        expected = project(records[:to])
        assert state_at(read, "ember-ford", snaps, to) == expected
        snaps.delete("ember-ford")
        assert state_at(read, "ember-ford", snaps, to) == expected

    def test_every_backend_round_trips(self, snapshots):
        """Each snapshot store gives back the latest snapshot at or before a seq, equal to what was saved."""
        records = ember_log()
        for seq in (40, 100, 180):
            snapshots.save(take(project(records[:seq])))
        assert snapshots.seqs("ember-ford") == [40, 100, 180]
        assert snapshots.latest("ember-ford", 150).state == project(records[:100])
        assert snapshots.latest("ember-ford", 39) is None


class TestStale:
    def test_snapshot_of_another_log_is_ignored(self):
        """A snapshot whose event hash is not the log's at that seq is ignored, not trusted."""
        records = ember_log()
        forged = msgspec.structs.replace(take(project(records[:100])), event_hash="0" * 64)
        lying = msgspec.structs.replace(forged, state=project(records[:10]))
        snaps = MemorySnapshots()
        snaps.save(lying)
        store = store_with(records)
        assert state_at(lambda a: store.read("ember-ford", a), "ember-ford", snaps, 150) == project(records[:150])

    @pytest.mark.parametrize("field", ["schema_version", "state_format"])
    def test_snapshot_of_another_version_is_ignored(self, field):
        """A snapshot taken under another schema or state format is ignored."""
        records = ember_log()
        snap = take(project(records[:10]))
        snaps = MemorySnapshots()
        snaps.save(msgspec.structs.replace(snap, **{field: getattr(snap, field) + 1}))
        store = store_with(records)
        assert state_at(lambda a: store.read("ember-ford", a), "ember-ford", snaps, 100) == project(records[:100])

    def test_snapshot_inside_an_undone_range_is_not_used(self):
        """A snapshot taken inside a range later undone no longer describes the log, and is not used."""
        from omen_replay.demo import run_demo

        store, snaps = MemoryStore(), MemorySnapshots()
        fight = run_demo(store, clock=lambda: 0)
        fight.snapshots = snaps
        fight.snapshot()
        fight.undo()
        fight.undo()
        assert fight.state == project(store.read("demo"))
        loaded = Fight.load(store, "demo", snapshots=snaps)
        assert loaded.state == fight.state


class TestFight:
    def test_periodic_snapshots_and_loading(self, tmp_path):
        """A fight with a snapshot store snapshots every N events; loading from the files gives the same state."""
        store, snaps = JsonlStore(tmp_path / "logs"), FileSnapshots(tmp_path / "snaps")
        scenario = load_scenario(EMBER)
        fight = run_scenario(scenario, store, clock=lambda: 0)
        assert snaps.seqs("ember-ford") == []
        fight.snapshots, fight.snapshot_every = snaps, 50
        fight.snapshot()
        loaded = Fight.load(store, "ember-ford", snapshots=snaps)
        assert loaded.state == fight.state == project(store.read("ember-ford"))

    def test_snapshot_every_n_events(self, tmp_path):
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
        fight.store.close()
