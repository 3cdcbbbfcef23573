"""Tests for omen_replay.replay: state at any seq, stepping through events, and the state summary."""

from __future__ import annotations

from pathlib import Path

import pytest

from omen_core import Fight, MemoryStore
from omen_core.events import StoredEvent
from omen_core.state import Lasting
from omen_core.store import EventStore
from omen_core.walk import project
from omen_replay.demo import run_demo
from omen_replay.replay import replay_records, step_through, summarise


def demo_fight() -> Fight:
    """The demo's fight, with a fixed clock."""
    return run_demo(MemoryStore(), clock=lambda: 0)


def demo_events() -> list[StoredEvent]:
    """The demo's events, with a fixed clock."""
    return demo_fight().events


class TestReplay:
    def test_replay_to_the_end_is_the_projection(self) -> None:
        """Replaying every event gives the same state as folding them, which is the state the live fight kept."""
        fight = demo_fight()
        events = fight.events
        assert replay_records(events) == project(events) == fight.state

    def test_replay_to_a_seq_stops_there(self) -> None:
        """replay(to_seq=N) is the state after exactly the first N events."""
        events = demo_events()
        assert events[6].batch + events[6].batch_size - 1 == 7  # seq 7 ends a command: the first 7 are a whole log
        assert replay_records(events, to_seq=7) == project(events[:7])
        assert replay_records(events, to_seq=7) != replay_records(events)

    def test_step_through_yields_each_state(self) -> None:
        """Stepping through gives each event with the state right after it, none of them undone."""
        events = demo_events()
        steps = list(step_through(events))
        assert [step.rec.seq for step in steps] == [e.seq for e in events]
        assert not any(step.voided for step in steps)
        assert all(step.before == steps[i - 1].after for i, step in enumerate(steps) if i)
        assert all(step.after == project(events, to_seq=i + 1) for i, step in enumerate(steps) if i % 9 == 0)
        assert steps[-1].after == project(events)


class TestSummary:
    def test_summary_lists_resources_and_flow(self) -> None:
        """The summary holds each combatant's HP, Will, Bonus Actions and conditions, and the phase."""
        state = project(demo_events())
        summary = summarise(state)
        kael = next(c for c in summary.combatants if c.id == "kael")
        assert (kael.hp, kael.hp_max) == (state.combatants["kael"].hp, 24)
        assert summary.phase == "ended" and summary.seq == state.version and summary.ended


class TestReplayStore:
    def test_streaming_replay_equals_the_projection_with_undos(self, tmp_path: Path) -> None:
        """replay_store streams a JSON Lines log (undos known from the store's landmarks) to the same state as
        project."""
        from omen_core.store import JsonlStore
        from omen_replay.replay import replay_store

        store = JsonlStore(tmp_path)
        fight = run_demo(store, clock=lambda: 0, finish=False)  # open: undo reaches it (C42)
        fight.undo()
        fight.undo()
        everything = list(store.read("demo"))
        assert replay_store(store, "demo") == project(everything) == fight.state
        for to in (5, 27, 41, everything[-3].seq):
            assert replay_store(store, "demo", to) == project(everything, to)
        ends = [rec.seq for rec in everything if rec.seq == rec.batch + rec.batch_size - 1]
        for to in (7, 27, 47, ends[-2]):  # where a command ends, the first events are a whole log
            assert to in ends
            assert replay_store(store, "demo", to) == project(everything[:to])

    def test_streaming_replay_on_memory_store(self) -> None:
        """Stores without raw lines find the undos by decoding; the result is the same."""
        from omen_replay.replay import replay_store

        store = MemoryStore()
        fight = run_demo(store, clock=lambda: 0, finish=False)  # open: undo reaches it (C42)
        fight.undo()
        assert replay_store(store, "demo") == fight.state

    def test_undo_markers_are_found_without_decoding_everything(self, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
        """landmarks gives exactly the undo and redo events (and the revealed seed) of a fight, on every kind of
        store, decoding no other line."""
        import omen_core.store.jsonl
        import omen_core.store.sqlite
        from omen_core.events import LANDMARKS, UNDO_MARKERS, decode_line
        from omen_core.store import JsonlStore, SqliteStore

        sqlite = SqliteStore(tmp_path / "f.db")
        stores: list[EventStore] = [MemoryStore(), JsonlStore(tmp_path), sqlite]
        for store in stores:
            fight = run_demo(store, clock=lambda: 0, finish=False)
            fight.undo()
            fight.redo()
            fight.undo()
            fight.end_fight("gm")
            fight.reveal_seed()
            records = list(store.read("demo"))
            marks = [r for r in records if isinstance(r.event, LANDMARKS)]
            assert len([r for r in marks if isinstance(r.event, UNDO_MARKERS)]) == 3
            decoded: list[bytes | str] = []

            def counting(line: bytes | str, decoded: list[bytes | str] = decoded) -> StoredEvent:
                decoded.append(line)
                return decode_line(line)

            monkeypatch.setattr(omen_core.store.jsonl, "decode_line", counting)
            monkeypatch.setattr(omen_core.store.sqlite, "_DECODE", counting)
            assert store.landmarks("demo") == marks
            assert len(decoded) <= len(marks)
            monkeypatch.undo()
        sqlite.close()


def test_the_summary_says_how_long_each_condition_lasts() -> None:
    """C28, C40 (what omen replay --json prints): Fatigued's ticks left as `remaining`, and Prone until the end of
    the orc's next turn as `until`, `started` once that turn is under way (only omen status's text said them)."""
    from tests.fights import new_fight
    from tests.sheets import sheet

    fight = new_fight(sheet("orc", side="raiders"), sheet("ana"), faces=[6, 1])
    fight.roll_initiative()  # the orc first
    fight.apply_condition("ana", "Prone", until="end_of_next_turn", of="orc")
    fight.apply_condition("ana", "Fatigued")
    ana = next(c for c in summarise(fight.state).combatants if c.id == "ana")
    assert ana.remaining == {"Fatigued": 3}
    # applied on the orc's turn: its next turn is the one after (C40), not yet started
    assert ana.until == {"Prone": Lasting(of="orc", moment="end_of_next_turn", started=False)}
    fight.end_turn("orc")
    fight.end_turn("ana")  # round 2: the orc's next turn starts
    ana = next(c for c in summarise(fight.state).combatants if c.id == "ana")
    assert ana.until == {"Prone": Lasting(of="orc", moment="end_of_next_turn", started=True)}
    fight.end_turn("orc")
    ana = next(c for c in summarise(fight.state).combatants if c.id == "ana")
    assert "Prone" not in ana.conditions and ana.until == {}


def test_once_the_fight_has_ended_no_turn_is_under_way_for_a_duration() -> None:
    """C40: Ana Prone until the end of the orc's next turn, that turn under way (`started`), then the GM ends the
    fight: the summary says it not started (the surfaces said "until the end of the orc's current turn" after the
    end: a durations tester)."""
    from tests.fights import new_fight
    from tests.sheets import sheet

    fight = new_fight(sheet("orc", side="raiders"), sheet("ana"), faces=[6, 1])
    fight.roll_initiative()  # the orc first
    fight.apply_condition("ana", "Prone", until="end_of_next_turn", of="orc")
    fight.end_turn("orc")
    fight.end_turn("ana")  # round 2: the orc's next turn under way
    assert summarise(fight.state).combatants[1].until["Prone"].started
    fight.end_fight("gm")
    assert not summarise(fight.state).combatants[1].until["Prone"].started
