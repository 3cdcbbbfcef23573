"""Helpers to play small fights in tests with scripted dice (C29), and to check replay against live state."""

from __future__ import annotations

from typing import TypeVar

from omen_core import Fight, ManualDice, MemoryStore, ScriptedDice
from omen_core.content import CORE_RULESET, CombatantSheet, Ruleset
from omen_core.events import Event, EventBase, StoredEvent
from omen_core.machine import (
    DONE,
    OPENING,
    ORDER,
    PHASE_ORDER,
    Phase,
    Step,
    phase_trigger_of,
    trigger_of,
)
from omen_core.state import AttackFrame, FightState, MoveFrame, SaveFrame
from omen_core.walk import Finding, project

E = TypeVar("E", bound=EventBase)
T = TypeVar("T")
F = TypeVar("F", AttackFrame, SaveFrame, MoveFrame)

__all__ = ["new_fight", "scripted", "present", "pending", "as_", "payloads", "last", "of", "assert_replays",
           "assert_legal_order", "TURNS_BEFORE_C36", "TURNS_BEFORE_C36_V1", "unsound_turns"]

#: The turns the Dying Brin and Skarn took in the Ember Ford fight as omen recorded it before C36 (the logs kept
#: under fixtures/formats, versions 3 and 4): the seq of each ``turn_started`` and whose. Deciding those commands
#: again under today's rules skips each turn instead (C36), so the audit lists each as a finding of the
#: re-decision; the fight as omen records it today (fixtures/ember-ford) skips them.
TURNS_BEFORE_C36 = ((220, "brin"), (295, "brin"), (298, "skarn"))

#: The same three turns in the fight as schema version 1 recorded it (fixtures/formats/v1-ember-ford), which records
#: no commands: the audit checks it event by event, and finds each turn a Dying combatant takes (C36), in the words
#: the re-decision gives for a later log.
TURNS_BEFORE_C36_V1 = ((185, "brin"), (249, "brin"), (251, "skarn"))


def unsound_turns(problems: tuple[Finding, ...]) -> tuple[tuple[int, str], ...]:
    """Each integrity finding as (seq, whose turn) where it is a turn the rules now skip at 0 HP (C36), else as
    (seq, what it says)."""
    skipped = "the rules give turn_skipped here where the log has turn_started"
    return tuple((f.seq, f.expected.split('"who":"')[1].split('"')[0])
                 if f.what == skipped and "(C36)" in f.expected else (f.seq, f.what) for f in problems)


def new_fight(*sheets: CombatantSheet, faces: list[int] | None = None, fight_id: str = "t") -> Fight:
    """A started fight in a memory store with ``sheets`` joined, rolling scripted ``faces`` in C29 order."""
    fight = Fight.start(MemoryStore(), fight_id, dice=ScriptedDice(faces or []), clock=lambda: 0)
    for s in sheets:
        fight.join(s)
    return fight


def scripted(fight: Fight) -> ScriptedDice:
    """The fight's scripted dice (fails the test if it rolls another kind)."""
    assert isinstance(fight.dice, ScriptedDice), f"{fight.fight_id} rolls {type(fight.dice).__name__} dice"
    return fight.dice


def present(value: T | None) -> T:
    """``value``, which the test expects to be there (fails the test if it is None)."""
    assert value is not None
    return value


def as_(value: object, kind: type[T]) -> T:
    """``value`` (an event, a store...), which the test expects to be a ``kind`` (fails the test if it is not)."""
    assert isinstance(value, kind), f"{value!r} is not a {kind.__name__}"
    return value


def pending(state: FightState, kind: type[F]) -> F:
    """The innermost action in progress, which the test expects to be of ``kind``."""
    frame = state.pending
    assert isinstance(frame, kind), f"the action in progress is {frame!r}, not a {kind.__name__}"
    return frame


def payloads(fight: Fight) -> list[Event]:
    """Every event of the fight, without envelopes."""
    return [rec.event for rec in fight.events]


def last(fight: Fight, kind: type[E]) -> E:
    """The last event of a type (fails the test if there is none)."""
    found = [e for e in payloads(fight) if isinstance(e, kind)]
    assert found, f"no {kind.__name__} in the log"
    return found[-1]


def of(events: list[Event], kind: type[E]) -> list[E]:
    """The events of a type, in order."""
    return [e for e in events if isinstance(e, kind)]


def assert_replays(fight: Fight) -> None:
    """Replaying the fight's stored events gives exactly its live state."""
    assert project(fight.store.read(fight.fight_id)) == fight.state


def assert_legal_order(records: list[StoredEvent]) -> None:
    """Every event of the log is a legal next step of the phase table and of its action's lifecycle table.

    Actions nest (reactions), so the lifecycle steps are kept on a stack; a new action may be
    declared at rest, or where the action in progress allows nesting. Undone events and the undo and
    redo markers are left out: what remains is the fight as it now stands.
    """
    from omen_core.machine import UNORDERED
    from omen_core.walk import landmarks_of

    voided = landmarks_of(records).voided()
    phase, stack = Phase.SETUP, list[Step]()
    for rec in records:
        if rec.seq in voided or isinstance(rec.event, UNORDERED):
            continue
        key = (phase, phase_trigger_of(rec.event))
        assert key in PHASE_ORDER, f"seq {rec.seq}: {key[1]} is not legal in phase {phase}"
        phase = PHASE_ORDER[key]
        trigger = trigger_of(rec.event)
        if trigger in OPENING:  # an action begins (an ability used on one's turn: "use", C37; a moment, C38)
            assert not stack or (stack[-1], "nest") in ORDER, f"seq {rec.seq}: cannot nest at {stack[-1]}"
            stack.append(ORDER[(Step.IDLE, trigger)])
            continue
        step = stack[-1] if stack else Step.IDLE
        assert (step, trigger) in ORDER, f"seq {rec.seq}: {trigger} is not legal at {step}"
        if stack:
            stack[-1] = ORDER[(step, trigger)]
            if stack[-1] in DONE:
                stack.pop()


def interrupt_window(ruleset: Ruleset = CORE_RULESET) -> Fight:
    """A manual-dice fight under ``ruleset`` whose open Interrupt window (C24) is Vesh's unarmed attack on Kael, for
    Kael and Brin, both engaged with Vesh and past their first turns (initiative Kael, Brin, Vesh)."""
    from tests.sheets import sheet

    fight = Fight.start(MemoryStore(), "window", dice=ManualDice(), clock=lambda: 0, ruleset=ruleset, combatants=[
        sheet("kael", AGI=(20, 0)), sheet("brin", AGI=(20, 0)), sheet("vesh", side="raiders")])
    fight.roll_initiative(dice=[20, 19, 1])
    for who in ("kael", "brin"):
        fight.engage(who, "vesh")
        fight.end_turn(who)
    fight.attack("vesh", "kael", unarmed=True)
    return fight
