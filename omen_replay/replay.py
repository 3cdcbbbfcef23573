"""Replay a stored fight into its state, at the end or at any seq, and summarise that state for people and tools."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

import msgspec

from omen_core.events import StoredEvent, encode_line
from omen_core.options import Options
from omen_core.state import FightState, Lasting
from omen_core.store import EventStore, SnapshotStore
from omen_core.walk import LinesSource, Step, StoreSource, project, replay, state_at
from omen_core.walk import step_through as walk_steps

__all__ = ["CombatantSummary", "StateSummary", "StepLine", "DoResult", "replay_store", "replay_records", "step_through",
           "summarise"]


class CombatantSummary(msgspec.Struct, frozen=True, kw_only=True):
    """One combatant as the fight has left it (``left``: fled, yielded or dead, if it is out of the fight, C33;
    ``remaining``: the ticks left of each condition that has a duration, C28; ``until``: each condition lasting
    until a named combatant's next turn, and which moment of it, C40)."""

    id: str
    name: str
    side: str
    hp: int
    hp_max: int
    will: int
    will_max: int
    bonus_actions: int
    conditions: dict[str, int]
    wielding: tuple[str, ...]
    engaged_with: tuple[str, ...]
    left: str | None = None
    remaining: dict[str, int] = {}
    until: dict[str, Lasting] = {}


def conditions_words(conditions: Mapping[str, int], remaining: Mapping[str, int], until: Mapping[str, Lasting],
               name_of: Mapping[str, str]) -> list[str]:
    """Conditions with their stacks and how long they last, as every summary says them (``omen status``, ``omen
    replay``, the session log's rounds and end): ``Fatigued (2 left)`` (ticks, C28), ``Exhausted x2``, ``Prone
    (until the end of Kael Arden's next turn)`` (C40; ``name_of`` names the combatant by id)."""
    said = []
    for name, stacks in conditions.items():
        text = f"{name} x{stacks}" if stacks > 1 else name
        if name in remaining:
            text += f" ({remaining[name]} left)"
        u = until.get(name)
        if u is not None and u.of is not None:
            text += f" (until {u.said(name_of.get(u.of, u.of))})"
        said.append(text)
    return said


class StateSummary(msgspec.Struct, frozen=True, kw_only=True):
    """A fight's state in plain terms: what ``omen replay --json`` prints. ``turn`` is whose turn it is, and once
    the fight has ended (``ended``) whose turn it was when it ended (C33): ``omen status --json`` and the server's
    options say no one's (``null``) then. A recorded fixture's fingerprint is of this summary, so it stays so."""

    fight_id: str
    title: str
    seq: int
    hash: str
    phase: str
    round: int
    turn: str | None
    initiative_order: tuple[str, ...]
    action_step: str
    ended: bool
    end_reason: str | None
    end_side: str | None
    combatants: tuple[CombatantSummary, ...]


class StepLine(msgspec.Struct, frozen=True, kw_only=True):
    """One line of ``omen replay --steps --json``: an event (its seq and type), whether it is undone now, and the
    state after it (an undone event's: the state unmoved)."""

    seq: int
    type: str
    undone: bool
    state: StateSummary


class DoResult(msgspec.Struct, frozen=True, kw_only=True):
    """What ``omen do --json`` prints: the events the command appended (or, for a retry of a command already
    done, the events it appended then), and what the fight waits for now."""

    events: tuple[StoredEvent, ...]
    options: Options
    already_done: bool = False
    undone_at: int | None = None
    """For a retry of a command already done (``already_done``): the seq of the undo that voids its events now,
    not redone since (the fight stands as if the command had not been given); None otherwise."""
    next_seed: str | None = None
    """After a ``reveal_seed`` in a fight that goes on, the fresh seed (hex) omen drew for it (C42): as secret as
    the first, the log holds only its commitment; give it as ``--seed`` from then on. None otherwise (and where it
    was given with ``--next-seed``)."""


def step_through(records: Iterable[StoredEvent]) -> Iterator[Step]:
    """Each event of an in-memory log with the states before and after it and whether it is undone now
    (:func:`omen_core.walk.step_through` over a store's lines is the streaming form)."""
    return walk_steps(LinesSource([encode_line(r) for r in records], where="the events given"))


def replay_store(store: EventStore, fight_id: str, to_seq: int | None = None,
                 snapshots: SnapshotStore | None = None) -> FightState:
    """The state of a stored fight after ``to_seq`` (or at the end), streaming: the walk's state-only way,
    from the latest usable snapshot if ``snapshots`` has one."""
    source = StoreSource(store, fight_id)
    return state_at(source, snapshots, to_seq) if snapshots is not None else replay(source, to_seq=to_seq)


def replay_records(records: Iterable[StoredEvent], to_seq: int | None = None) -> FightState:
    """The state after every event of an in-memory log (or as it stood right after ``to_seq``)."""
    return project(records, to_seq)


def summarise(state: FightState) -> StateSummary:
    """The state as a plain summary: phase, round, turn, initiative order, and each combatant's resources."""
    fighters = tuple(
        CombatantSummary(id=c.id, name=c.sheet.name, side=c.side, hp=c.hp, hp_max=c.sheet.hp, will=c.will,
                         will_max=c.sheet.will, bonus_actions=c.bonus_actions, conditions=dict(c.conditions),
                         wielding=c.wielding, engaged_with=tuple(state.engaged_with(c.id)), left=c.left,
                         remaining=c.ticks_left(), until=state.lasting(c.id))
        for c in state.combatants.values())
    ending = state.ending
    return StateSummary(fight_id=state.fight_id, title=state.title, seq=state.version, hash=state.last_hash,
                        phase=state.phase.value,
                        round=state.round, turn=state.turn, initiative_order=state.order,
                        action_step=state.step.value, ended=ending is not None,
                        end_reason=ending.reason if ending else None, end_side=ending.side if ending else None,
                        combatants=fighters)
