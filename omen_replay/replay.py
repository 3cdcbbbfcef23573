"""Replay a stored fight into its state, at the end or at any seq, and summarise that state for people and tools."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from itertools import takewhile

import msgspec

from omen_core.errors import LogCorrupted
from omen_core.events import UNDO_MARKERS, StoredEvent, decode_line
from omen_core.lazy import UndoMarkerFound, fold_lines
from omen_core.state import FightState, fold, project, undo_history
from omen_core.store import EventStore

__all__ = ["CombatantSummary", "StateSummary", "replay", "replay_store", "undo_markers", "step_through", "summarise"]


class CombatantSummary(msgspec.Struct, frozen=True, kw_only=True):
    """One combatant as the fight has left it."""

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


class StateSummary(msgspec.Struct, frozen=True, kw_only=True):
    """A fight's state in plain terms: what ``omen replay --json`` prints."""

    fight_id: str
    title: str
    seq: int
    phase: str
    round: int
    turn: str | None
    initiative_order: tuple[str, ...]
    action_step: str
    ended: bool
    end_reason: str | None
    end_side: str | None
    combatants: tuple[CombatantSummary, ...]


def step_through(records: Iterable[StoredEvent]) -> Iterator[tuple[StoredEvent, FightState, bool]]:
    """Each stored event with the state right after it and whether it is undone now, in order.

    Undone events are shown where they were written (the state does not move
    on them); an undo marker is followed by the state it restored.
    """
    records = list(records)
    voided, _ = undo_history(records)
    state = FightState()
    for i, rec in enumerate(records):
        if isinstance(rec.event, UNDO_MARKERS):
            state = project(records[:i + 1])  # rare: rebuild the state the undo or redo leaves
        else:
            state = fold(state, rec)
        yield rec, state, rec.seq in voided


def undo_markers(store: EventStore, fight_id: str, after_seq: int = 0) -> list[StoredEvent]:
    """The fight's undo and redo events (after ``after_seq``), found without decoding the rest where the store
    keeps raw lines: a byte search over each chunk of lines, then over the lines of a chunk that has a hit.

    A line that only looks like a marker and does not decode, a torn tail or missing rows are left to the
    replay, which reports them if it reads that far.
    """
    chunks = getattr(store, "read_lines", None)
    raw = getattr(store, "raw_lines", None)
    if chunks is None and raw is None:
        return [r for r in store.read(fight_id, after_seq) if isinstance(r.event, UNDO_MARKERS)]
    found = []
    with contextlib.suppress(LogCorrupted):  # a torn tail, missing rows: the replay reports them if it gets there
        skip = after_seq
        for chunk in chunks(fight_id) if chunks is not None else ([line] for line in raw(fight_id)):
            if skip >= len(chunk):
                skip -= len(chunk)
                continue
            chunk, skip = chunk[skip:], 0
            if b'done"' not in b"".join(chunk):  # both markers' tags end so
                continue
            for line in chunk:
                if b'"type":"undone"' in line or b'"type":"redone"' in line:
                    with contextlib.suppress(msgspec.DecodeError):
                        found.append(decode_line(line))
    return [r for r in found if isinstance(r.event, UNDO_MARKERS)]


def replay_store(store: EventStore, fight_id: str, to_seq: int | None = None) -> FightState:
    """The state of a stored fight after ``to_seq`` (or at the end), streaming, the log never held in memory.

    Stores that keep raw lines (JSON Lines, SQLite) replay lazily (:func:`omen_core.lazy.fold_lines`): one
    pass that decodes in full only what the fold needs and checks every event's order, as if nothing were
    undone; if it meets an undo marker (or fails, and the log has undos: the event that failed may be undone
    later), a cheap pass finds the markers and the fold starts again with the undone seqs. Other stores: one pass
    finds the undos, one folds the events (:func:`~omen_core.state.project`). Either way the state is the
    reference's, and nothing after ``to_seq`` is folded.
    """
    lines = getattr(store, "read_lines", None)
    if lines is not None:
        def read(after: int) -> Iterator[StoredEvent]:
            return store.read(fight_id, after)

        try:
            return fold_lines(lines(fight_id), fight_id, read, to_seq=to_seq)
        except UndoMarkerFound as found:  # the first marker: the others come after it
            markers = [m for m in undo_markers(store, fight_id, found.args[0] - 1) if to_seq is None or m.seq <= to_seq]
        except Exception:
            # folded as if nothing were undone: an event that fails may be one a later undo voids
            markers = [m for m in undo_markers(store, fight_id) if to_seq is None or m.seq <= to_seq]
            if not markers:
                raise
        return fold_lines(lines(fight_id), fight_id, read, voided=undo_history(markers)[0], to_seq=to_seq)
    markers = [m for m in undo_markers(store, fight_id) if to_seq is None or m.seq <= to_seq]
    stream = store.read(fight_id)
    if to_seq is not None:
        stream = takewhile(lambda rec: rec.seq <= to_seq, stream)
    return project(stream, voided=undo_history(markers)[0])


def replay(records: Iterable[StoredEvent], to_seq: int | None = None) -> FightState:
    """The state after every event (or as it stood right after the event at ``to_seq``, undos so far applied)."""
    records = [r for r in records if to_seq is None or r.seq <= to_seq]
    return project(records)


def summarise(state: FightState) -> StateSummary:
    """The state as a plain summary: phase, round, turn, initiative order, and each combatant's resources."""
    fighters = tuple(
        CombatantSummary(id=c.id, name=c.sheet.name, side=c.side, hp=c.hp, hp_max=c.sheet.hp, will=c.will,
                         will_max=c.sheet.will, bonus_actions=c.bonus_actions, conditions=dict(c.conditions),
                         wielding=c.wielding, engaged_with=tuple(state.engaged_with(c.id)))
        for c in state.combatants.values())
    ending = state.ending
    return StateSummary(fight_id=state.fight_id, title=state.title, seq=state.version, phase=state.phase.value,
                        round=state.round, turn=state.turn, initiative_order=state.order,
                        action_step=state.step.value, ended=ending is not None,
                        end_reason=ending.reason if ending else None, end_side=ending.side if ending else None,
                        combatants=fighters)
