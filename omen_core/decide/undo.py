"""Deciding undo and redo: which range an undo voids, which undo a redo takes back.

History is never rewritten: an undo appends an ``undone`` event voiding the
live events from a safe point (:func:`omen_core.state.is_undo_point`), never
before the last seed revealed (``undo_floor``, C42), to the last live one; a
redo appends ``redone``, taking the last undo back, as long as nothing was
done since (:func:`omen_core.state.redo_stack_after`, :func:`omen_core.state.redoable`). The state keeps
what these decisions need (``undo_point``, ``live_seq``, ``redo_stack``); an
undo back to a chosen seq also asks the :class:`History` about that seq. The state *after* a marker is
the walk's to give (:func:`omen_core.walk.after_marker`).
"""

from __future__ import annotations

from typing import Protocol

import msgspec

from ..commands import Redo, Undo
from ..errors import RuleViolation
from ..events import Event, Redone, Undone
from ..state import FightState, is_undo_point, redoable
from .draft import Draft

__all__ = ["History", "Target", "undo", "redo"]


class Target(msgspec.Struct, frozen=True, kw_only=True):
    """What undo needs to know of the event an undo would go back to: the event, where it stands, whether it
    is live (not undone) now, and the state just before it as the log stands now."""

    before: FightState
    event: Event
    seq: int
    batch: int
    live: bool


class History(Protocol):
    """The log behind the state, as far as an undo to a chosen seq must see it."""

    def target(self, seq: int) -> Target | None:
        """The event at ``seq`` and the state before it; None if the log has no event there."""
        ...


def undo(draft: Draft, cmd: Undo, history: History | None) -> None:
    """Void the live events from the last undo point (or from ``to_seq``, if it is one) to the last live event."""
    state = draft.state
    if cmd.to_seq is not None and 0 < cmd.to_seq < state.undo_floor:  # C42 first: a hint about the seq's command
        raise _past_reveal(state, _TO_SEQ)  # would point at another seq the reveal puts out of reach too
    start = state.undo_point if cmd.to_seq is None else _checked_target(state, cmd.to_seq, history)
    if not start:
        raise RuleViolation("undo", "there is nothing to undo")
    if start < state.undo_floor:
        raise _past_reveal(state)
    draft.record(Undone(from_seq=start, to_seq=state.live_seq, reason=cmd.reason))


def _past_reveal(state: FightState, field: str | None = None) -> RuleViolation:
    """C42: an undo back past the last seed revealed, refused saying how far back an undo may go (at ``field``,
    the ``to_seq`` given, if one was)."""
    reach = ("an undo goes back no further than the first command after the reveal"
             if state.undo_point >= state.undo_floor else "nothing can be undone")
    return RuleViolation("C42", f"{reach}: the seed revealed at seq {state.undo_floor - 1} is public, and a reveal "
                                "is never undone (a revealed seed is spent)", **({"field": field} if field else {}))


#: Where an undo's target is, in the command: a refusal of it names that field.
_TO_SEQ = "$.to_seq"


def _at_target(why: str) -> RuleViolation:
    """An undo refused for its ``to_seq`` (rule ``undo``), at that field."""
    return RuleViolation("undo", why, field=_TO_SEQ)


def _checked_target(state: FightState, seq: int, history: History | None) -> int:
    """``seq`` if an undo may go back to it now; otherwise a RuleViolation saying why, at ``$.to_seq``."""
    hint = (f"; the last command that can be undone starts at seq {state.undo_point} (the first seq of an earlier "
            "command at rest takes back more)" if state.undo_point and state.undo_point >= state.undo_floor else "")
    if seq > state.live_seq:
        raise _at_target(f"seq {seq} is past the last live event (seq {state.live_seq}){hint}")
    found = history.target(seq) if history is not None else None
    if found is None:
        raise _at_target(f"cannot look back to seq {seq} (no history given){hint}")
    if not found.live:
        raise _at_target(f"seq {seq} is undone already{hint}")
    if not is_undo_point(found.before, found.event, found.seq, found.batch):
        if found.seq == 1:  # the fight's first event: its start is set-up, never undone
            raise _at_target(f"seq 1 starts the fight (fight_started), which no undo goes back to: the "
                             f"fight's start is never undone (start another fight instead){hint}")
        if found.seq == found.batch and found.before.pending is not None:
            action = found.before.pending.action
            start, outer = _outermost_declaration(found, history)
            declared = "it starts" if outer == action else f"action {outer} starts (action {action} is inside it)"
            raise _at_target(f"cannot undo back to seq {seq}: action {action} is in progress there (at "
                             f"'{found.before.step.value}'); undo back to seq {start}, where the command "
                             f"that declared {declared}")
        if found.seq == found.batch:  # an undo's or a redo's own batch: taken back with redo, never undone to
            raise _at_target(f"seq {seq} starts an undo or a redo, which an undo does not go back to "
                             f"(redo takes back the last undo){hint}")
        raise _at_target(f"seq {seq} is inside a command, which starts at seq {found.batch}: an undo goes "
                         f"back to the first seq of a command{hint}")
    return seq


def _declared_at(action: int, history: History | None) -> int:
    """The first seq of the command that declared ``action`` (the action's own seq, if the history cannot say)."""
    declared = history.target(action) if history is not None else None
    return declared.batch if declared is not None else action


def _outermost_declaration(found: Target, history: History | None) -> tuple[int, int]:
    """Where an undo may go back to instead of ``found``, a command given while an action was in progress: the
    first seq of the command that declared that action, or, where that command too was given inside an action (a
    reaction's strike in the window a move opened), of the one that declared the outermost (a GM told to go back
    to the inner one was refused there again: a tester); with the action that command declared."""
    assert found.before.pending is not None
    action = found.before.pending.action
    start = _declared_at(action, history)
    while True:
        outer = history.target(start) if history is not None else None
        if outer is None or outer.before.pending is None or outer.seq != outer.batch or outer.seq >= found.seq:
            return start, action
        found, action = outer, outer.before.pending.action
        start = _declared_at(action, history)


def redo(draft: Draft, cmd: Redo) -> None:
    """Take back the last undo, if nothing has been done since."""
    target = redoable(draft.state)
    if target is None:
        raise RuleViolation("undo", "there is no undo to take back: a redo comes right after the undo it takes "
                                    "back (once another command follows an undo, it can no longer be redone)")
    draft.record(Redone(undo_seq=target, reason=cmd.reason))
