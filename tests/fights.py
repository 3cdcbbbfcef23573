"""Helpers to play small fights in tests with scripted dice (C29), and to check replay against live state."""

from __future__ import annotations

from omen_core import Fight, MemoryStore, ScriptedDice
from omen_core.content import CombatantSheet
from omen_core.events import Event, StoredEvent
from omen_core.machine import ORDER, Step, trigger_of
from omen_core.state import project

__all__ = ["new_fight", "payloads", "last", "assert_replays", "assert_legal_order"]


def new_fight(*sheets: CombatantSheet, faces: list[int] | None = None, fight_id: str = "t") -> Fight:
    """A started fight in a memory store with ``sheets`` joined, rolling scripted ``faces`` in C29 order."""
    fight = Fight.start(MemoryStore(), fight_id, dice=ScriptedDice(faces or []), clock=lambda: 0)
    for s in sheets:
        fight.join(s)
    return fight


def payloads(fight: Fight) -> list[Event]:
    """Every event of the fight, without envelopes."""
    return [rec.event for rec in fight.events]


def last(fight: Fight, kind: type) -> Event:
    """The last event of a type (fails the test if there is none)."""
    found = [e for e in payloads(fight) if isinstance(e, kind)]
    assert found, f"no {kind.__name__} in the log"
    return found[-1]


def assert_replays(fight: Fight) -> None:
    """Replaying the fight's stored events gives exactly its live state."""
    assert project(fight.store.read(fight.fight_id)) == fight.state


def assert_legal_order(records: list[StoredEvent]) -> None:
    """Every event of the log is a legal next step of the lifecycle table derived from the machine."""
    step = Step.IDLE
    for rec in records:
        key = (step, trigger_of(rec.event))
        assert key in ORDER, f"seq {rec.seq}: {key[1]} is not legal at {step}"
        step = ORDER[key]
