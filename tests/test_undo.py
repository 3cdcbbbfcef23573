"""Undo and redo (omen_core.engine.Fight.undo / redo, omen_core.state.project): events that void, never erase."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omen_core import CheckSpec, Fight, MemoryStore, ScriptedDice, SeededDice
from omen_core.content import Weapon
from omen_core.errors import RuleViolation
from omen_core.events import DiceRolled, Redone, Undone
from omen_core.walk import project
from omen_replay.narrate import narrate
from omen_replay.verify import verify
from tests.fights import assert_legal_order, new_fight
from tests.sheets import sheet

SWORD = (Weapon(id="sword", weapon_damage=3),)


def duelists():
    """Ash and Bo, d6 everywhere, swords."""
    return (msgspec.structs.replace(sheet("ash"), weapons=SWORD),
            msgspec.structs.replace(sheet("bo", side="b"), weapons=SWORD))


class TestUndo:
    def test_undo_restores_the_state_before_the_last_command(self):
        """Undoing a check gives exactly the state before it; the undone events stay in the store."""
        fight = new_fight(*duelists(), faces=[4, 5])
        before, version = fight.state, fight.version
        fight.static_check(CheckSpec(who="ash", attribute="STR"), 3)
        undone = fight.undo()
        assert (undone.from_seq, undone.to_seq) == (version + 1, version + 2)
        assert msgspec.structs.replace(fight.state, version=0, last_hash="") == \
            msgspec.structs.replace(before, version=0, last_hash="")
        assert fight.version == version + 3 and len(fight.events) == version + 3

    def test_undoing_an_answer_undoes_the_whole_attack(self):
        """An answer to an Active Defense window is not a safe point: the whole action goes back (declaration on)."""
        fight = new_fight(*duelists(), faces=[6, 1, 1, 2])
        before = fight.state
        fight.attack("ash", "bo")
        declared_at = before.version + 1
        fight.defend("bo", "dodge")
        assert fight.undo().from_seq == declared_at
        assert fight.state.at_rest and fight.state.combatants == before.combatants

    def test_undo_while_a_window_is_open_undoes_the_action(self):
        """With a window open, undo goes back to where the action was declared."""
        fight = new_fight(*duelists(), faces=[6, 1, 1])
        before = fight.state
        fight.attack("ash", "bo")
        assert fight.waiting_for is not None
        fight.undo()
        assert fight.waiting_for is None and fight.state.combatants == before.combatants

    def test_undo_to_a_point_inside_an_action_is_refused(self):
        """Undoing back to the middle of an action (an answer) is refused, saying where the action started."""
        fight = new_fight(*duelists(), faces=[6, 1, 1, 2])
        fight.attack("ash", "bo")
        answer_at = fight.version + 1
        fight.defend("bo", "dodge")
        version = fight.version
        with pytest.raises(RuleViolation, match="in progress there"):
            fight.undo(to_seq=answer_at)
        with pytest.raises(RuleViolation, match="does not start a command"):
            fight.undo(to_seq=answer_at + 1)
        assert fight.version == version

    def test_nothing_to_undo(self):
        """A fight that has only started has nothing to undo."""
        fight = Fight.start(MemoryStore(), "f", dice=ScriptedDice([]), clock=lambda: 0)
        with pytest.raises(RuleViolation, match="nothing to undo"):
            fight.undo()

    def test_undo_several_times_then_play_on(self):
        """Two undos in a row go back two commands; new commands then continue from there, in a legal order."""
        fight = new_fight(*duelists(), faces=[1, 2, 3])
        start = fight.state
        fight.static_check(CheckSpec(who="ash", attribute="STR"), 3)
        fight.static_check(CheckSpec(who="bo", attribute="STR"), 3)
        fight.undo()
        fight.undo()
        assert fight.state.combatants == start.combatants and fight.state.rolls == 0
        fight.static_check(CheckSpec(who="ash", attribute="STR"), 3)
        assert fight.state.rolls == 1
        assert project(fight.store.read(fight.fight_id)) == fight.state
        assert_legal_order([r for r in fight.events if r.seq not in {3 + 1, 3 + 2, 3 + 3, 3 + 4}
                            and not isinstance(r.event, (Undone, Redone))])


class TestRedo:
    def test_redo_restores_exactly(self):
        """Redo gives back exactly the state the undo took away."""
        fight = new_fight(*duelists(), faces=[6, 1, 1, 2])
        fight.attack("ash", "bo")
        fight.defend("bo", None)
        after = fight.state
        fight.undo()
        fight.redo()
        assert fight.state.combatants == after.combatants and fight.state.rolls == after.rolls

    def test_redo_after_new_events_is_refused(self):
        """Once something new happened after an undo, it can no longer be redone."""
        fight = new_fight(*duelists(), faces=[1, 2])
        fight.static_check(CheckSpec(who="ash", attribute="STR"), 3)
        fight.undo()
        fight.static_check(CheckSpec(who="bo", attribute="STR"), 3)
        with pytest.raises(RuleViolation, match="can no longer be redone"):
            fight.redo()

    def test_redo_without_undo_is_refused(self):
        """There is nothing to redo before any undo."""
        with pytest.raises(RuleViolation, match="no undo"):
            new_fight(*duelists()).redo()


class TestAudit:
    def test_seeded_dice_after_undo_come_out_the_same(self):
        """Seeded dice are a function of the roll counter, which an undo rewinds: undo cannot fish for a new roll,
        and the audit notes that the attack's dice were rolled again."""
        store = MemoryStore()
        fight = Fight.start(store, "s", dice=SeededDice(bytes(range(32))), clock=lambda: 0)
        for s in duelists():
            fight.join(s)
        fight.attack("ash", "bo")
        first = [e.event for e in fight.events if isinstance(e.event, DiceRolled)]
        fight.undo()
        fight.attack("ash", "bo")
        rolls = [e.event for e in fight.events if isinstance(e.event, DiceRolled)]
        again = rolls[len(first):]
        assert [r.dice for r in again[:2]] == [r.dice for r in first[:2]]
        report = verify(store.read("s"))
        assert report.clean and len(report.undone) == 1 and "rolled again" in report.notes[0]

    def test_narrative_marks_undone_events(self):
        """Undone events are told, marked as undone, not hidden; the undo itself is told too."""
        fight = new_fight(*duelists(), faces=[4])
        fight.static_check(CheckSpec(who="ash", attribute="STR"), 3)
        fight.undo()
        lines = list(narrate(fight.events))
        assert any(line.kind == "undone" and line.text.startswith("[undone]") for line in lines)
        assert any("UNDO of seq" in line.text for line in lines)

    def test_forged_undo_is_found(self):
        """An undo that starts half-way through an action is an audit finding."""
        from omen_core.events import seal

        fight = new_fight(*duelists(), faces=[6, 1, 1])
        fight.attack("ash", "bo")
        events = fight.events
        forged = seal("t", len(events) + 1, 0, events[-1].hash, Undone(from_seq=len(events), to_seq=len(events)))
        assert "undo" in {f.rule for f in verify([*events, forged]).findings}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["check", "attack", "end"]), st.integers(1, 6), st.integers(1, 6),
                          st.integers(1, 6), st.integers(1, 6)), min_size=1, max_size=6), st.integers(1, 3))
def test_undo_then_replay_equals_the_state_before_and_redo_restores(script, undos):
    """For random fights, undoing the last commands gives the state before them (live and replayed alike),
    and redoing the last undo restores exactly the state it undid."""
    fight = new_fight(*duelists())
    states = [fight.state]
    for kind, a, b, c, d in script:
        fight.dice.feed([a, b, c, d])
        if kind == "check":
            fight.static_check(CheckSpec(who="ash", attribute="STR"), 3)
        elif kind == "attack":
            fight.attack("ash", "bo")
            if fight.waiting_for is not None:
                fight.defend("bo", None)
        else:
            fight.apply_condition("bo", "Exhausted")
        states.append(fight.state)
    def same(x, y):
        return msgspec.structs.replace(x, version=0, last_hash="") == msgspec.structs.replace(y, version=0, last_hash="")
    n = min(undos, len(script))
    for _ in range(n):
        fight.undo()
    assert same(fight.state, states[-1 - n])
    assert project(fight.store.read(fight.fight_id)) == fight.state
    fight.redo()
    assert same(fight.state, states[-n])


class ReadCountingStore(MemoryStore):
    """A memory store that remembers where every read started (``after_seq``)."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[int] = []

    def read(self, fight_id, after_seq=0):
        self.reads.append(after_seq)
        return super().read(fight_id, after_seq)


def long_fight(checks: int, every: int = 10) -> Fight:
    """Ash and Bo with snapshots every ``every`` events, after ``checks`` static checks (2 events each)."""
    from omen_core.store import MemorySnapshots

    fight = Fight.start(ReadCountingStore(), "long", dice=ScriptedDice([]), clock=lambda: 0,
                        snapshots=MemorySnapshots(), snapshot_every=every)
    for s in duelists():
        fight.join(s)
    for i in range(checks):
        fight.dice.feed([1 + i % 6])
        fight.static_check(CheckSpec(who="ash", attribute="STR"), 3)
    return fight


class TestUndoOnALongLog:
    def test_undo_reads_only_the_tail(self, monkeypatch):
        """With snapshots, undoing the last command never reads the log from its start (issue #5: undo cost
        must not grow with the log), and gives the same state as a full replay."""
        import omen_core.engine as engine

        monkeypatch.setattr(engine, "_TAIL", 8)
        fight = long_fight(60)
        before = fight.state
        fight.dice.feed([6])
        fight.static_check(CheckSpec(who="ash", attribute="STR"), 3)
        fight.store.reads.clear()
        undone = fight.undo()
        assert (undone.from_seq, undone.to_seq) == (before.version + 1, before.version + 2)
        assert fight.store.reads and min(fight.store.reads) >= before.version - 16
        assert project(fight.store.read("long")) == fight.state
        assert fight.state.combatants == before.combatants

    def test_undo_widens_its_view_until_it_finds_a_safe_point(self, monkeypatch):
        """When the last safe point is further back than the first tail read, undo looks further back and
        still undoes the whole open action, as with the whole log in view."""
        import omen_core.engine as engine

        monkeypatch.setattr(engine, "_TAIL", 1)
        fight = long_fight(5)
        before = fight.state
        fight.dice.feed([6, 1, 1])
        fight.attack("ash", "bo")           # declared, dice rolled, the Active Defense window open
        assert fight.waiting_for is not None
        undone = fight.undo()
        assert undone.from_seq == before.version + 1 and fight.state.at_rest
        assert project(fight.store.read("long")) == fight.state

    def test_a_snapshot_an_undo_reaches_across_is_passed_over_for_an_earlier_one(self):
        """After undoing back across the latest snapshot, the state comes from an earlier snapshot, not from a
        fold of the whole log, and equals the full replay."""
        from omen_core.store.snapshots import state_at

        fight = long_fight(40, every=10)
        target = fight.version - 6 + 1                       # the first of the last three checks
        assert any(target <= s <= fight.version for s in fight.snapshots.seqs("long"))
        fight.undo(to_seq=target)
        fight.store.reads.clear()
        state = state_at(lambda after: fight.store.read("long", after), "long", fight.snapshots)
        assert state == project(fight.store.read("long")) == fight.state
        assert min(fight.store.reads[:-1]) > 0

    def test_redo_finds_an_undo_further_back_than_its_first_read(self, monkeypatch):
        """Redo reads back until the last undo is in view: after two undos and one redo, the next redo takes back
        the older undo."""
        import omen_core.engine as engine

        monkeypatch.setattr(engine, "_TAIL", 1)
        fight = long_fight(4)
        states = [fight.state]
        for face in (2, 5):
            fight.dice.feed([face])
            fight.static_check(CheckSpec(who="ash", attribute="STR"), 3)
            states.append(fight.state)
        fight.undo()
        second_at = fight.version + 1
        fight.undo()
        assert fight.redo().undo_seq == second_at and at_same_point(fight.state, states[1])
        assert fight.redo().undo_seq == second_at - 1 and at_same_point(fight.state, states[2])
        assert project(fight.store.read("long")) == fight.state


def at_same_point(x, y) -> bool:
    """The same state but for the log position (an undo or redo moves the position on)."""
    return msgspec.structs.replace(x, version=0, last_hash="") == msgspec.structs.replace(y, version=0, last_hash="")
