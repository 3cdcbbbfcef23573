"""Deciding saves (C15, C24, C25): the call, both dice, the resolution, its branch, and the hook point after it."""

from __future__ import annotations

from ..commands import CallSave, CheckSpec
from ..errors import RuleViolation
from ..events import CostPaid, SaveCalled, SaveResolved
from ..hooks import Moment
from ..machine import Phase
from ..rules.checks import save_succeeds
from ..state import SaveFrame
from .checks import roll_side
from .draft import Draft, require_turn
from .effects import Context, check_consequences, run_consequences
from .reactions import open_interrupts
from .windows import Resume, open_window, settle

__all__ = ["call_save", "resolve_save", "save_context", "save_branch_done", "saved_moment", "RESUMES"]


def call_save(draft: Draft, cmd: CallSave) -> None:
    """An effect calls for a save. If it costs an Action on the caller's turn, adjacent enemies may
    Interrupt first (C24); then the saver's die, then the caller's (C29); the saver wins ties (C15)."""
    draft.require("declare")
    caller, saver = draft.present(cmd.caller, "call for a save"), draft.present(cmd.saver, "be made to save")
    if caller.id == saver.id:
        raise RuleViolation("C15", f"{caller.id!r} cannot call for a save against itself: the saver's die is "
                                   "opposed by the caller's")
    draft.able(cmd.caller, "act")  # C10, C36
    effect = cmd.effect
    check_consequences(draft, [*effect.on_success, *effect.on_failure], effect.name)
    if effect.action_cost:
        require_turn(draft, caller.id, f"use {effect.name}")
        if draft.state.phase is Phase.ROUNDS and draft.state.turn_actions < effect.action_cost:
            raise RuleViolation("C20", f"{caller.id!r} has no Action left this turn for {effect.name}")
    draft.emit(SaveCalled(action=draft.next_seq, caller=caller.id, saver=saver.id, effect=effect))
    if effect.action_cost and open_interrupts(draft, caller.id):
        return
    resolve_save(draft)


def resolve_save(draft: Draft) -> None:
    """Pay the effect's Action, roll both dice, resolve the save and apply its branch in written order (C25)."""
    frame = draft.state.pending
    assert isinstance(frame, SaveFrame)
    called = frame.declaration
    action, effect = called.action, called.effect
    if effect.action_cost:
        draft.emit(CostPaid(action=action, who=called.caller, resource="action", amount=effect.action_cost,
                            purpose=effect.name))
    saving = roll_side(draft, CheckSpec(who=called.saver, attribute=effect.save), "save", "save")
    opposing = roll_side(draft, CheckSpec(who=called.caller, attribute=effect.against), "save", "save")
    success = save_succeeds(saving.total, opposing.total)
    draft.emit(SaveResolved(action=action, effect=effect.name, saver=saving, opposing=opposing, success=success))
    if run_consequences(draft, save_context(called), effect.on_success if success else effect.on_failure):
        save_branch_done(draft)


def save_branch_done(draft: Draft) -> None:
    """A save's branch is done (C25): the decision points due at the hook point ``save.resolved`` are offered (C38),
    else the save settles."""
    if open_window(draft, "save.resolved", saved_moment):
        return
    settle(draft)


def saved_moment(draft: Draft) -> Moment:
    """The hook point ``save.resolved``: the saver's total, the opposing one, and whether the saver succeeded."""
    frame = draft.state.pending
    assert isinstance(frame, SaveFrame) and frame.resolution is not None
    resolved = frame.resolution
    return Moment(attack_total=resolved.saver.total, defense_total=resolved.opposing.total, saved=resolved.success)


#: The hook point of a save: what it knows, and how the save goes on once its decision points have closed.
RESUMES: dict[str, Resume] = {"save.resolved": (saved_moment, settle)}


def save_context(called: SaveCalled) -> Context:
    """A save's consequences: the caller acts on the saver, with the effect's name (C25)."""
    effect = called.effect
    return Context(action=called.action, actor=called.caller, target=called.saver, spell=effect.spell,
                   source=effect.name)


