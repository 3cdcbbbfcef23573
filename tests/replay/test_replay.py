"""Tests for omen_replay.replay: state at any seq, stepping through events, and the state summary."""

from __future__ import annotations

from omen_core import MemoryStore
from omen_core.walk import project
from omen_replay.demo import run_demo
from omen_replay.replay import replay, step_through, summarise


def demo_events():
    """The demo's events, with a fixed clock."""
    return run_demo(MemoryStore(), clock=lambda: 0).events


class TestReplay:
    def test_replay_to_the_end_is_the_projection(self):
        """Replaying every event gives the same state as folding them."""
        events = demo_events()
        assert replay(events) == project(events)

    def test_replay_to_a_seq_stops_there(self):
        """replay(to_seq=N) is the state after exactly the first N events."""
        events = demo_events()
        assert replay(events, to_seq=7) == project(events[:7])

    def test_step_through_yields_each_state(self):
        """Stepping through gives each event with the state right after it, none of them undone."""
        events = demo_events()
        steps = list(step_through(events))
        assert [rec.seq for rec, _, _ in steps] == [e.seq for e in events]
        assert not any(undone for _, _, undone in steps)
        assert all(state == project(events[:i + 1]) for i, (_, state, _) in enumerate(steps) if i % 9 == 0)


class TestSummary:
    def test_summary_lists_resources_and_flow(self):
        """The summary holds each combatant's HP, Will, Bonus Actions and conditions, and the phase."""
        state = project(demo_events())
        summary = summarise(state)
        kael = next(c for c in summary.combatants if c.id == "kael")
        assert (kael.hp, kael.hp_max) == (state.combatants["kael"].hp, 24)
        assert summary.phase == "setup" and summary.seq == state.version and not summary.ended


class TestReplayStore:
    def test_streaming_replay_equals_the_projection_with_undos(self, tmp_path):
        """replay_store streams a JSON Lines log (undos found by a cheap first pass) to the same state as project."""
        from omen_core.store import JsonlStore
        from omen_replay.replay import replay_store

        store = JsonlStore(tmp_path)
        fight = run_demo(store, clock=lambda: 0)
        fight.undo()
        fight.undo()
        everything = list(store.read("demo"))
        assert replay_store(store, "demo") == project(everything) == fight.state
        for to in (5, 27, 41):
            assert replay_store(store, "demo", to) == project(everything[:to])

    def test_streaming_replay_on_memory_store(self):
        """Stores without raw lines find the undos by decoding; the result is the same."""
        from omen_replay.replay import replay_store

        store = MemoryStore()
        fight = run_demo(store, clock=lambda: 0)
        fight.undo()
        assert replay_store(store, "demo") == fight.state

    def test_undo_markers_are_found_without_decoding_everything(self, tmp_path):
        """undo_markers finds exactly the undo and redo events after a seq, on every kind of store."""
        from omen_core.events import UNDO_MARKERS
        from omen_core.store import JsonlStore, SqliteStore
        from omen_replay.replay import undo_markers

        stores = [MemoryStore(), JsonlStore(tmp_path), SqliteStore(tmp_path / "f.db")]
        for store in stores:
            fight = run_demo(store, clock=lambda: 0)
            fight.undo()
            fight.redo()
            fight.undo()
            records = list(store.read("demo"))
            marks = [r for r in records if isinstance(r.event, UNDO_MARKERS)]
            assert len(marks) == 3
            for after in (0, marks[0].seq - 1, marks[0].seq, marks[-1].seq):
                assert undo_markers(store, "demo", after) == [m for m in marks if m.seq > after]
