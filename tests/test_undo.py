"""Undo and redo (omen_core.engine.Fight.undo / redo, decided as the Undo and Redo commands; omen_core.walk folds
the log): events that void, never erase."""

from __future__ import annotations

from collections.abc import Iterator

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omen_core import CheckSpec, Fight, MemoryStore, ScriptedDice, SeededDice
from omen_core.content import CombatantSheet, Weapon
from omen_core.errors import RuleViolation
from omen_core.events import DiceRolled, StaticCheckResolved, StoredEvent, Undone
from omen_core.state import FightState
from omen_core.walk import landmarks_of, project
from omen_replay.narrate import narrate
from omen_replay.verify import verify
from tests.fights import assert_legal_order, new_fight, present, scripted
from tests.sheets import sheet

SWORD = (Weapon(id="sword", weapon_damage=3),)


def duelists() -> tuple[CombatantSheet, CombatantSheet]:
    """Ash and Bo, d6 everywhere, swords."""
    return (msgspec.structs.replace(sheet("ash"), weapons=SWORD),
            msgspec.structs.replace(sheet("bo", side="b"), weapons=SWORD))


def at_same_point(x: FightState, y: FightState) -> bool:
    """The same state but for the log position and the redo stack (an undo or redo moves the position on, and
    an undo may be redone)."""
    def strip(state: FightState) -> FightState:
        return msgspec.structs.replace(state, version=0, last_hash="", redo_stack=())
    return strip(x) == strip(y)


class TestUndo:
    def test_undo_restores_the_state_before_the_last_command(self) -> None:
        """Undoing a check gives exactly the state before it; the undone events (the command_issued, the die and
        the result) stay in the store, and the undo is a command of its own (command_issued, undone)."""
        fight = new_fight(*duelists(), faces=[4, 5])
        before, version = fight.state, fight.version
        fight.static_check(CheckSpec(who="ash", attribute="STR"), 3)
        undone = fight.undo()
        assert (undone.from_seq, undone.to_seq) == (version + 1, version + 3)
        assert at_same_point(fight.state, before) and fight.state.redo_stack == (version + 5,)
        assert fight.version == version + 5 and len(fight.events) == version + 5

    def test_an_undo_to_a_seq_it_cannot_go_back_to_says_why_in_words_that_agree(self) -> None:
        """``undo --to`` refusals say what the seq is: inside a command (its first seq named), or an undo's own
        batch (taken back with redo). They said "seq N does not start a command that can be undone (its command
        starts at seq N)" of an undo's seq, and named only the last command where an earlier one was accepted
        (found by a tester)."""
        fight = new_fight(*duelists(), faces=[4, 5, 6])
        start = fight.version + 1
        fight.static_check(CheckSpec(who="ash", attribute="STR"), 3)  # seqs start .. start + 2
        fight.static_check(CheckSpec(who="bo", attribute="STR"), 3)
        with pytest.raises(RuleViolation, match=rf"seq {start + 1} is inside a command, which starts at seq {start}:"
                                                r" an undo goes back to the first seq of a command; the last command"
                                                r" that can be undone starts at seq \d+ \(the first seq of an earlier"):
            fight.undo(to_seq=start + 1)
        undone = fight.undo()
        fight.static_check(CheckSpec(who="bo", attribute="STR"), 3)
        the_undo = undone.to_seq + 1
        with pytest.raises(RuleViolation, match=rf"seq {the_undo} starts an undo or a redo, which an undo does not go"
                                                r" back to \(redo takes back the last undo\)"):
            fight.undo(to_seq=the_undo)
        assert fight.undo(to_seq=start).from_seq == start

    def test_undoing_an_answer_undoes_the_whole_attack(self) -> None:
        """An answer to an Active Defense window is not a safe point: the whole action goes back (declaration on)."""
        fight = new_fight(*duelists(), faces=[6, 1, 1, 2])
        before = fight.state
        fight.attack("ash", "bo")
        declared_at = before.version + 1
        fight.defend("bo", "dodge")
        assert fight.undo().from_seq == declared_at
        assert fight.state.at_rest and fight.state.combatants == before.combatants

    def test_undo_while_a_window_is_open_undoes_the_action(self) -> None:
        """With a window open, undo goes back to where the action was declared."""
        fight = new_fight(*duelists(), faces=[6, 1, 1])
        before = fight.state
        fight.attack("ash", "bo")
        assert fight.waiting_for is not None
        fight.undo()
        assert fight.waiting_for is None and fight.state.combatants == before.combatants

    def test_undo_to_a_point_inside_an_action_is_refused(self) -> None:
        """Undoing back to the middle of an action (an answer) is refused, saying where the action started."""
        fight = new_fight(*duelists(), faces=[6, 1, 1, 2])
        fight.attack("ash", "bo")
        answer_at = fight.version + 1
        fight.defend("bo", "dodge")
        version = fight.version
        with pytest.raises(RuleViolation, match="in progress there"):
            fight.undo(to_seq=answer_at)
        with pytest.raises(RuleViolation, match=r"is inside a command, which starts at seq \d+: an undo goes back"):
            fight.undo(to_seq=answer_at + 1)
        assert fight.version == version

    def test_undo_to_the_fights_start_and_inside_an_action_name_the_real_rule(self) -> None:
        """``undo --to 1`` says the fight's start is never undone (it said "seq 1 starts an undo or a redo"); an
        undo to the answer of an open action names the seq that works: the first of the command that declared it
        (it said "undo back to where it was declared", whose seq is inside that command)."""
        fight = new_fight(*duelists(), faces=[6, 1, 1, 2])
        with pytest.raises(RuleViolation, match=r"seq 1 starts the fight \(fight_started\), which no undo goes back "
                                                r"to: the fight's start is never undone"):
            fight.undo(to_seq=1)
        command_at = fight.version + 1
        fight.attack("ash", "bo")
        answer_at = fight.version + 1
        fight.defend("bo", "dodge")
        with pytest.raises(RuleViolation, match=rf"undo back to seq {command_at}, where the command that declared it "
                                                r"starts"):
            fight.undo(to_seq=answer_at)
        assert fight.undo(to_seq=command_at).from_seq == command_at

    def test_an_undo_inside_a_reaction_inside_a_move_names_the_move(self) -> None:
        """C23, C8: Kael's move opens Vesh's Attack of Opportunity; Vesh's strike (8 + 4 against Kael's 1) opens
        Kael's Active Defense window, answered. An undo back to that answer is refused naming the seq of the move,
        which an undo goes back to, not that of the strike (itself inside the move's action, so refused too: a GM
        had two refusals to find it); an undo back to the strike names the move too, and the move is accepted."""
        from omen_core.commands import AnswerActiveDefense, React
        from tests.test_decisions import at_attack_of_opportunity

        fight = at_attack_of_opportunity()
        move_at = fight.events[-1].batch
        strike_at = fight.version + 1
        fight.execute(React(who="vesh", weapon="sword", dice=(8, 4, 1)))
        answer_at = fight.version + 1
        fight.execute(AnswerActiveDefense(defender="kael", defense="dodge", dice=(1,)))
        move, strike = move_at + 1, strike_at + 1  # the actions: each command's declaration
        with pytest.raises(RuleViolation, match=rf"action {strike} is in progress there .*; undo back to seq "
                                                rf"{move_at}, where the command that declared action {move} starts "
                                                rf"\(action {strike} is inside it\)$"):
            fight.undo(to_seq=answer_at)
        with pytest.raises(RuleViolation, match=rf"undo back to seq {move_at}, where the command that declared it "
                                                r"starts$"):
            fight.undo(to_seq=strike_at)
        assert fight.undo(to_seq=move_at).from_seq == move_at

    def test_nothing_to_undo(self) -> None:
        """A fight that has only started has nothing to undo."""
        fight = Fight.start(MemoryStore(), "f", dice=ScriptedDice([]), clock=lambda: 0)
        with pytest.raises(RuleViolation, match="nothing to undo"):
            fight.undo()

    def test_undo_several_times_then_play_on(self) -> None:
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
        checks = [r.seq for r in fight.events if isinstance(r.event, StaticCheckResolved)]
        voided = landmarks_of(fight.events).voided()
        assert set(checks[:2]) <= voided and checks[2] not in voided
        assert_legal_order(fight.events)      # the live events (undone ones and the markers left out)


class TestRedo:
    def test_redo_restores_exactly(self) -> None:
        """Redo gives back exactly the state the undo took away."""
        fight = new_fight(*duelists(), faces=[6, 1, 1, 2])
        fight.attack("ash", "bo")
        fight.defend("bo", None)
        after = fight.state
        fight.undo()
        fight.redo()
        assert fight.state.combatants == after.combatants and fight.state.rolls == after.rolls

    def test_redo_after_new_events_is_refused(self) -> None:
        """Once something new happened after an undo, it can no longer be redone."""
        fight = new_fight(*duelists(), faces=[1, 2])
        fight.static_check(CheckSpec(who="ash", attribute="STR"), 3)
        fight.undo()
        fight.static_check(CheckSpec(who="bo", attribute="STR"), 3)
        with pytest.raises(RuleViolation, match="can no longer be redone"):
            fight.redo()

    def test_redo_without_undo_is_refused(self) -> None:
        """There is nothing to redo before any undo."""
        with pytest.raises(RuleViolation, match="no undo"):
            new_fight(*duelists()).redo()


class TestAudit:
    def test_seeded_dice_after_undo_come_out_the_same(self) -> None:
        """Seeded dice are a function of the roll counter, which an undo rewinds: undo cannot fish for a new roll,
        and the audit shows the attack's dice rolled again (an undo re-roll each: the voided faces beside the
        same faces rolled next), without making the log unsound."""
        store = MemoryStore()
        fight = Fight.start(store, "s", dice=SeededDice(bytes(range(32))), clock=lambda: 0)
        for s in duelists():
            fight.join(s)
        fight.attack("ash", "bo")
        first = [e for e in fight.events if isinstance(e.event, DiceRolled)]
        undo = fight.undo()
        undo_seq = fight.version
        fight.attack("ash", "bo")
        again = [e for e in fight.events if isinstance(e.event, DiceRolled)][len(first):]
        assert [r.as_(DiceRolled).dice for r in again[:2]] == [r.as_(DiceRolled).dice for r in first[:2]]
        assert [r.as_(DiceRolled).counter for r in again[:2]] == [r.as_(DiceRolled).counter for r in first[:2]]
        # rewound: the same counters again
        assert all(undo.from_seq <= r.seq <= undo.to_seq for r in first) and all(r.seq > undo_seq for r in again)
        report = verify(store.read("s"))
        assert report.clean and len(report.undone) == 1
        faces = {r.seq: f"{[d.face for d in r.as_(DiceRolled).dice]} at seq {r.seq}" for r in first + again}
        assert sorted((f.seq, f.expected, f.found) for f in report.rerolls) == sorted(
            (undo_seq, faces[old.seq], faces[new.seq]) for old, new in zip(first, again[:len(first)], strict=False))

    def test_narrative_marks_undone_events(self) -> None:
        """Undone events are told, marked as undone, not hidden; the undo itself is told too."""
        fight = new_fight(*duelists(), faces=[4])
        fight.static_check(CheckSpec(who="ash", attribute="STR"), 3)
        fight.undo()
        lines = list(narrate(fight.events))
        assert any(line.kind == "undone" and line.text.startswith("[undone]") for line in lines)
        assert any("UNDO of seq" in line.text for line in lines)

    def test_forged_undo_is_found(self) -> None:
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
def test_undo_then_replay_equals_the_state_before_and_redo_restores(script: list[tuple[str, int, int, int, int]],
                                                                    undos: int) -> None:
    """For random fights, undoing the last commands gives the state before them (live and replayed alike),
    and redoing the last undo restores exactly the state it undid."""
    fight = new_fight(*duelists())
    states = [fight.state]
    for kind, a, b, c, d in script:
        scripted(fight).feed([a, b, c, d])
        if kind == "check":
            fight.static_check(CheckSpec(who="ash", attribute="STR"), 3)
        elif kind == "attack":
            fight.attack("ash", "bo")
            if fight.waiting_for is not None:
                fight.defend("bo", None)
        else:
            fight.apply_condition("bo", "Exhausted")
        states.append(fight.state)
    n = min(undos, len(script))
    for _ in range(n):
        fight.undo()
    assert at_same_point(fight.state, states[-1 - n])
    assert project(fight.store.read(fight.fight_id)) == fight.state
    fight.redo()
    assert at_same_point(fight.state, states[-n])
    assert project(fight.store.read(fight.fight_id)) == fight.state


class ReadCountingStore(MemoryStore):
    """A memory store that remembers where every read started (``after_seq``, for ``read`` and ``read_lines``)
    and counts the events and lines a reader actually pulled (lines come in chunks of four, lazily, so a reader
    that stops early pulls no more)."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[int] = []
        self.pulled = 0

    def clear(self) -> None:
        """Forget the reads so far."""
        self.reads.clear()
        self.pulled = 0

    def read(self, fight_id: str, after_seq: int = 0) -> Iterator[StoredEvent]:
        self.reads.append(after_seq)
        events = super().read(fight_id, after_seq)

        def counted() -> Iterator[StoredEvent]:
            for rec in events:
                self.pulled += 1
                yield rec
        return counted()

    def read_lines(self, fight_id: str, after_seq: int = 0) -> Iterator[list[bytes]]:
        self.reads.append(after_seq)
        chunks = super().read_lines(fight_id, after_seq)

        def counted() -> Iterator[list[bytes]]:
            for chunk in chunks:
                for i in range(0, len(chunk), 4):
                    self.pulled += len(chunk[i:i + 4])
                    yield chunk[i:i + 4]
        return counted()


def counting(fight: Fight) -> ReadCountingStore:
    """The fight's read-counting store."""
    assert isinstance(fight.store, ReadCountingStore)
    return fight.store


def long_fight(checks: int, every: int = 10) -> Fight:
    """Ash and Bo with snapshots every ``every`` events, after ``checks`` static checks (3 events each: the
    command_issued, the die, the result)."""
    from omen_core.store import MemorySnapshots

    fight = Fight.start(ReadCountingStore(), "long", dice=ScriptedDice([]), clock=lambda: 0,
                        snapshots=MemorySnapshots(), snapshot_every=every)
    for s in duelists():
        fight.join(s)
    for i in range(checks):
        scripted(fight).feed([1 + i % 6])
        fight.static_check(CheckSpec(who="ash", attribute="STR"), 3)
    return fight


def reloaded(fight: Fight) -> Fight:
    """The same stored fight loaded again (as a fresh process would: no recent states in memory), with its
    snapshots and dice; the store's read counts cleared after the load."""
    again = Fight.load(fight.store, fight.fight_id, dice=fight.dice, clock=lambda: 0, snapshots=fight.snapshots,
                       snapshot_every=fight.snapshot_every)
    counting(fight).clear()
    return again


class TestUndoOnALongLog:
    @pytest.mark.parametrize("checks", [60, 400])
    def test_undo_reads_only_the_tail(self, checks: int) -> None:
        """Undoing the last command costs the same on a long log as on a short one (issue #5, issue #10 item 4):
        live, the state before it is one the fight kept, so the log is not read at all; loaded afresh, the
        state is walked from the latest snapshot before the command, never from seq 0, pulling no more lines
        than lie between that snapshot and the command. Both give the state of a full replay."""
        every = 10
        fight = long_fight(checks, every)
        before = fight.state
        scripted(fight).feed([6])
        fight.static_check(CheckSpec(who="ash", attribute="STR"), 3)
        counting(fight).clear()
        undone = fight.undo()
        assert (undone.from_seq, undone.to_seq) == (before.version + 1, before.version + 3)
        assert counting(fight).pulled <= 1 and all(seq >= before.version for seq in counting(fight).reads)
        assert project(fight.store.read("long")) == fight.state and at_same_point(fight.state, before)

        fight.redo()
        after = fight.state
        fresh = reloaded(fight)
        assert fresh.state == after
        back = fresh.undo()
        assert (back.from_seq, back.to_seq) == (before.version + 1, before.version + 3)
        assert counting(fresh).reads and min(counting(fresh).reads) >= before.version - 2 * every
        assert counting(fresh).pulled <= 3 * every
        assert project(fresh.store.read("long")) == fresh.state and at_same_point(fresh.state, before)

    def test_undo_of_an_open_action_on_a_loaded_fight_goes_back_to_its_declaration(self) -> None:
        """With an action's window open in a fight loaded afresh (its latest snapshot taken with the window open),
        undo still goes back to where the action was declared, as with the whole log in view: the state before
        the declaration is walked from an earlier snapshot, not from seq 0."""
        fight = long_fight(5)
        before = fight.state
        scripted(fight).feed([6, 1, 1])
        fight.attack("ash", "bo")           # declared, dice rolled, the Active Defense window open
        assert fight.waiting_for is not None
        assert present(fight.snapshots).seqs("long")[-1] == fight.version      # the snapshot holds the open window
        fresh = reloaded(fight)
        assert fresh.waiting_for is not None
        undone = fresh.undo()
        assert undone.from_seq == before.version + 1 and fresh.state.at_rest
        assert at_same_point(fresh.state, before)
        assert counting(fresh).reads and 0 < min(counting(fresh).reads) <= before.version
        assert project(fresh.store.read("long")) == fresh.state

    def test_a_snapshot_an_undo_reaches_across_is_passed_over_for_an_earlier_one(self) -> None:
        """After undoing back across the latest snapshot, the state comes from an earlier snapshot, not from a
        fold of the whole log, and equals the full replay."""
        from omen_core.walk import StoreSource, state_at

        fight = long_fight(40, every=10)
        checks = [r for r in fight.events if isinstance(r.event, StaticCheckResolved)]
        target = checks[-3].batch                            # the first of the last three checks
        snapshots = present(fight.snapshots).seqs("long")
        assert any(target <= s <= fight.version for s in snapshots)
        fight.undo(to_seq=target)
        counting(fight).clear()
        state = state_at(StoreSource(fight.store, "long"), fight.snapshots)
        assert state == project(fight.store.read("long")) == fight.state
        earlier = max(s for s in snapshots if s < target)
        walked = counting(fight).reads[:-1]                   # the last read is this test's own full replay
        assert earlier in walked and min(walked) >= earlier - 1   # (the snapshot's own event is read to check it)

    def test_redo_finds_an_undo_further_back_than_its_first_read(self) -> None:
        """After two undos and one redo, the next redo takes back the older undo; on a fight loaded afresh too,
        where each redo's state is walked from a snapshot, never from seq 0."""
        for fresh in (False, True):
            fight = long_fight(4)
            states = [fight.state]
            for face in (2, 5):
                scripted(fight).feed([face])
                fight.static_check(CheckSpec(who="ash", attribute="STR"), 3)
                states.append(fight.state)
            fight.undo()
            first_at = fight.version
            fight.undo()
            second_at = fight.version
            if fresh:
                fight = reloaded(fight)
            assert fight.redo().undo_seq == second_at and at_same_point(fight.state, states[1])
            assert fight.redo().undo_seq == first_at and at_same_point(fight.state, states[2])
            assert all(seq > 0 for seq in counting(fight).reads)
            assert project(fight.store.read("long")) == fight.state
