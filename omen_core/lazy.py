"""Plain replay that decodes lazily: the same state as :func:`omen_core.state.project`, for a fraction of the cost.

Each stored line is decoded once, into :class:`LazyStored`: the whole envelope
(every field typed as in :class:`~omen_core.events.StoredEvent`, unknown
fields refused; the hashes as plain strings) around a *lazy* event. An event
whose type changes the state (a key of :data:`omen_core.state.EFFECTS`) or is
an undo marker decodes in full, with every check of its type. Every other
event (the lifecycle traffic: most of a log) decodes into a small stand-in
that holds its ``type`` tag and only the fields the order checks read
(:data:`LAZY_FIELDS`); the rest of its body is checked for JSON syntax, not
decoded.

The fold is the reference fold, rearranged around the stand-ins:

- every event's phase and lifecycle step are checked against the tables
  :mod:`omen_core.machine` derives from its machines (``PHASE_ORDER``,
  ``ORDER``), each event type's triggers taken from the functions the
  reference fold uses (:func:`~omen_core.machine.trigger_for`,
  :func:`~omen_core.machine.phase_trigger_for`), as are the checks that an
  event belongs to the action in progress and that only a reaction to it may
  be declared meanwhile;
- the effects of a state-changing event are the reference's own
  (:data:`~omen_core.state.EFFECTS`), applied to the fully decoded event;
- the actions in progress are followed as (action, step) only. The state's
  ``stack`` (their events and the reactions recorded on them) is rebuilt at
  the end by the reference's own ``_stack``, from the events of the actions
  still open, read in full through the store's ``read``.

Whatever the fast path does not take, it hands to the reference: a line that
does not decode, an event out of sequence or of another fight, an event out
of order or out of phase, an undo marker, an event type without a lifecycle
trigger, any error at all. The state so far is rebuilt in full, the event is
read again through the store's ``read`` (which raises the store's own error
for a bad line, exactly as a full read does) and folded by
:func:`omen_core.state.fold`, which raises the reference's own error
(:class:`~omen_core.machine.IllegalOrder`,
:class:`~omen_core.machine.OutOfPhase`, ...) or folds it; the fast path then
carries on from the reference's state.

What plain replay does not check, by design: the content of the bodies it
does not decode (their JSON syntax is checked, their fields are not), and the
form of the hashes (the hash of the last event, which lands in the state, is
checked in full). Verified replay (``Fight.load``, ``omen verify``) decodes
and checks every event, and the hash chain.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Set
from typing import Any, Union

import msgspec
from msgspec.structs import replace

from .errors import LogCorrupted
from .events import (
    EVENT_TYPES,
    UNDO_MARKERS,
    AttackDeclared,
    StoredEvent,
)
from .machine import (
    DONE,
    ORDER,
    PHASE_ORDER,
    Phase,
    Step,
    phase_trigger_for,
    trigger_for,
    trigger_of,
)
from .state import EFFECTS, FightState, PendingAction, _stack, fold

__all__ = ["LAZY_FIELDS", "LazyStored", "UndoMarkerFound", "decode_lazy", "fold_lines", "FoldStats"]

#: The fields of an event that its stand-in keeps: the action it belongs to, and what the order checks read
#: (a roll's purpose, a Catch's answer, the action a reaction answers). A trigger rule that one day reads
#: another field finds it missing, and the event goes to the reference fold instead.
LAZY_FIELDS = ("action", "purpose", "caught", "reacting_to")

_NO_ACTION = {"action": None}  # the stand-in of a type without an ``action`` field reads as belonging to none


def _stand_in(kind: type) -> type:
    """A struct with ``kind``'s tag and only its :data:`LAZY_FIELDS`, typed as in ``kind``; other fields ignored."""
    fields = {f.name: f for f in msgspec.structs.fields(kind)}
    spec: list[tuple] = []
    for name in LAZY_FIELDS:
        if name in fields:
            f = fields[name]
            default = (msgspec.field(default_factory=f.default_factory) if f.default is msgspec.NODEFAULT
                       else f.default)
            spec.append((name, f.type) if f.required else (name, f.type, default))
    config = kind.__struct_config__
    return msgspec.defstruct(f"Lazy{kind.__name__}", spec, tag_field=config.tag_field, tag=config.tag,
                             frozen=True, kw_only=True, gc=False, module=__name__,
                             namespace=None if "action" in fields else dict(_NO_ACTION))


def _decoded_in_full(kind: type) -> bool:
    """Event types the fold needs whole: those that change the state, and the undo markers."""
    return kind in EFFECTS or kind in UNDO_MARKERS


_LAZY_TYPES: dict[type, type] = {kind: kind if _decoded_in_full(kind) else _stand_in(kind) for kind in EVENT_TYPES}
LazyEvent = Union[tuple(_LAZY_TYPES.values())]  # noqa: UP007 - a runtime union of a computed tuple

_HEX64 = re.compile(r"[0-9a-f]{64}")


def _envelope() -> type:
    """:class:`StoredEvent`'s fields in its order, the event lazy and the hashes plain strings."""
    spec = []
    for f in msgspec.structs.fields(StoredEvent):
        kind = LazyEvent if f.name == "event" else (str if f.name in ("prev_hash", "hash") else f.type)
        spec.append((f.name, kind))
    return msgspec.defstruct("LazyStored", spec, frozen=True, kw_only=True, forbid_unknown_fields=True,
                             gc=False, module=__name__)


#: A stored line decoded lazily: the whole envelope, the event in full or as a stand-in (see the module doc).
LazyStored = _envelope()
decode_lazy: Callable[[bytes], Any] = msgspec.json.Decoder(LazyStored).decode

# -- the tables the fast fold runs on, derived from the machines and the effects ------------------------------

_NOTHING = object()


def _static(rule: Callable[[type, Any], str], kind: type) -> str | None:
    """The trigger of ``kind`` if it does not depend on the event's fields, else None (read per event)."""
    try:
        return rule(kind, _NOTHING)
    except AttributeError:
        return None


def _spec(kind: type) -> tuple | None:
    """(type, trigger or None, phase trigger or None, effect or None) for one event type; None: always slow
    (the undo markers, which are rare, and any type without a lifecycle trigger)."""
    if kind in UNDO_MARKERS:
        return None
    try:
        trigger = _static(trigger_for, kind)
    except KeyError:  # no lifecycle trigger for this type: the reference fold says what it says about it
        return None
    return kind, trigger, _static(phase_trigger_for, kind), EFFECTS.get(kind)


_SPECS: dict[type, tuple | None] = {lazy: _spec(kind) for kind, lazy in _LAZY_TYPES.items()}


def _nodes() -> dict[Step, dict[str, tuple]]:
    """``ORDER`` as linked nodes: for each step, ``{trigger: (next step, its node, whether it is done)}``."""
    nodes: dict[Step, dict[str, tuple]] = {step: {} for step in Step}
    for (step, trigger), dest in ORDER.items():
        nodes[step][trigger] = (dest, nodes[dest], dest in DONE)
    return nodes


_NODES = _nodes()
_PHASE_NEXT: dict[Phase, dict[str, Phase]] = {phase: {t: dest for (p, t), dest in PHASE_ORDER.items() if p is phase}
                                              for phase in Phase}
_ATTACKS = (AttackDeclared, _LAZY_TYPES[AttackDeclared])


class UndoMarkerFound(Exception):  # noqa: N818 - a signal, not an error
    """Raised by :func:`fold_lines` without ``voided`` at the first undo marker: find the undone seqs, fold again."""


class _Slow(Exception):  # noqa: N818 - a signal: hand this event to the reference fold
    pass


class FoldStats:
    """What a lazy fold did: how many events it folded, and how many of them went to the reference fold."""

    def __init__(self) -> None:
        self.events = 0
        self.slow: list[int] = []


# An action in progress is a frame: (action, step, node), ``node`` being ``_NODES[step]``. The innermost frame
# lives in local variables, the others in a list. The fold needs nothing else of them: the events of an action
# and the reactions recorded on it only matter for the state's ``stack`` at the end, which is rebuilt by the
# reference's own ``_stack`` from the events of the actions still open (see :func:`_materialise`).


def fold_lines(chunks: Iterable[list[bytes]], fight_id: str, read: Callable[[int], Iterator[StoredEvent]], *,
               voided: Set[int] | None = None, to_seq: int | None = None,
               stats: FoldStats | None = None) -> FightState:
    """The state after the stored lines of ``fight_id`` (up to ``to_seq``), equal to :func:`project`'s.

    ``chunks`` are the lines as stored, in order, seq 1 first (a store's
    ``read_lines``); ``read(after_seq)`` is the store's own ``read``, used to
    report or fold any line the fast path does not take (see the module doc)
    and to read the events of the actions still open at the end. ``voided``
    are the undone seqs (:func:`~omen_core.state.undo_history`); without it,
    the fold assumes none and raises :class:`UndoMarkerFound` at the first
    undo marker.
    """
    optimistic = voided is None
    voided = frozenset() if voided is None else voided
    if to_seq is not None and to_seq < 1:
        return FightState()
    state = FightState()
    phase, actions = state.phase, state.actions
    rec: Any = None  # the last record read: the state's version and last hash
    expected = 1
    slow: list[int] = []
    dec, specs, phases = decode_lazy, _SPECS, _PHASE_NEXT
    phase_next, at_rest = phases[phase], _NODES[Step.IDLE]
    declared, declared_node, _ = at_rest["declare"]
    frames: list[tuple] = []  # the actions in progress around the innermost one
    action, step, node = None, Step.IDLE, at_rest  # the innermost action in progress (None: none is)
    open_from = None  # the seq where the outermost action in progress was declared
    try:
        for chunk in chunks:
            last_chunk = to_seq is not None and expected + len(chunk) > to_seq
            if last_chunk:
                chunk = chunk[:to_seq - expected + 1]
            for line in chunk:
                try:
                    rec = dec(line)
                    seq = rec.seq
                    if seq != expected or rec.fight_id != fight_id:
                        raise _Slow
                    if voided and seq in voided:
                        expected += 1
                        continue
                    ev = rec.event
                    kind, trigger, phase_trigger, effect = specs[ev.__class__]  # TypeError (None): slow
                    if trigger is None:
                        trigger = trigger_for(kind, ev)
                    if phase_trigger is None:
                        phase_trigger = phase_trigger_for(kind, ev)
                    next_phase = phase_next[phase_trigger]
                    if trigger == "declare":
                        if action is not None and ("nest" not in node or ev.__class__ not in _ATTACKS
                                                   or ev.reacting_to != action):
                            raise _Slow
                        number = ev.action
                        if effect is not None:
                            state = effect(state, ev)
                        if action is None:  # every check has passed: commit
                            open_from = seq
                        else:
                            frames.append((action, step, node))
                        action = number or 0
                        actions = number or actions
                        step, node = declared, declared_node
                    elif action is None:
                        if trigger not in node:
                            raise _Slow
                        if effect is not None:
                            state = effect(state, ev)
                    else:
                        next_step, next_node, finished = node[trigger]
                        belongs = ev.action
                        if belongs is not None and belongs != action:
                            raise _Slow
                        if effect is not None:
                            state = effect(state, ev)
                        if not finished:  # every check has passed: commit
                            step, node = next_step, next_node
                        elif frames:
                            action, step, node = frames.pop()
                        else:
                            action, step, node, open_from = None, Step.IDLE, at_rest, None
                    if next_phase is not phase:
                        phase, phase_next = next_phase, phases[next_phase]
                    expected += 1
                except UndoMarkerFound:
                    raise
                except Exception:  # noqa: BLE001 - whatever it is, the reference fold decides
                    slow.append(expected)  # the line at ``expected``
                    if action is not None:
                        frames.append((action, step, node))
                    full = _materialise(state, phase, actions, frames, open_from, expected - 1, voided, fight_id,
                                        read)
                    rec = stored = _reread(read, expected)
                    if stored.seq in voided:
                        full = replace(full, version=stored.seq, last_hash=stored.hash)
                    elif optimistic and isinstance(stored.event, UNDO_MARKERS):
                        raise UndoMarkerFound(stored.seq) from None
                    else:
                        full = fold(full, stored)
                    if not full.stack:
                        open_from = None
                    elif open_from is None:
                        open_from = stored.seq
                    state, phase, actions = full, full.phase, full.actions
                    frames = [(p.action, p.step, _NODES[p.step]) for p in full.stack]
                    action, step, node = frames.pop() if frames else (None, Step.IDLE, at_rest)
                    phase_next, expected = phases[phase], stored.seq + 1
            if last_chunk:
                break
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
    if stats is not None:
        stats.events, stats.slow = expected - 1, slow
    if rec is None:
        return state
    if not _HEX64.fullmatch(rec.hash):
        _reread(read, rec.seq)  # the store's own error for the line whose hash would land in the state
    if action is not None:
        frames.append((action, step, node))
    state = _materialise(state, phase, actions, frames, open_from, rec.seq, voided, fight_id, read)
    return replace(state, version=rec.seq, last_hash=rec.hash)


def _materialise(state: FightState, phase: Phase, actions: int, frames: list[tuple], open_from: int | None,
                 last: int, voided: Set[int], fight_id: str, read: Callable[[int], Iterator[StoredEvent]]
                 ) -> FightState:
    """The full state after seq ``last`` but for the position (``version``, ``last_hash``): the fast fold's
    phase and action count set on its state, and the actions in progress rebuilt by the reference's ``_stack``
    from their events, read in full."""
    stack: tuple[PendingAction, ...] = ()
    if open_from is not None:
        holder = FightState()
        for stored in read(open_from - 1):
            if stored.seq > last:
                break
            if stored.seq not in voided and not isinstance(stored.event, UNDO_MARKERS):
                holder = replace(holder, stack=_stack(holder, stored.event, stored.seq, trigger_of(stored.event)))
        stack = holder.stack
    if [(p.action, p.step) for p in stack] != [(action, step) for action, step, _ in frames]:
        raise RuntimeError(f"the lazy fold and the reference disagree on the actions in progress after seq {last}: "
                           f"{frames} against {stack}")  # never: a test folds every kind of log both ways
    folded = last > sum(1 for seq in voided if seq <= last)  # a record that is not undone sets the fight id
    return replace(state, phase=phase, actions=actions, stack=stack, **({"fight_id": fight_id} if folded else {}))


def _reread(read: Callable[[int], Iterator[StoredEvent]], seq: int) -> StoredEvent:
    """The event at ``seq`` through the store's ``read``, which raises the store's own error if it is bad."""
    stored = next(read(seq - 1), None)
    if stored is None:
        raise LogCorrupted("the store", seq, "an event read a moment ago is gone")
    return stored
