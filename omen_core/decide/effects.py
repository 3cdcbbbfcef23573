"""Deciding saves, consequences in written order, and damage landing on a combatant (C13, C15, C25, C28)."""

from __future__ import annotations

from collections.abc import Iterable

from ..commands import CallSave, CheckSpec
from ..content import ApplyCondition, ClearCondition, Consequence, DealDamage
from ..derive import mitigation_for
from ..errors import RuleViolation
from ..events import (
    ActionSettled,
    ConditionApplied,
    ConditionCleared,
    CostPaid,
    DamageResolved,
    DamageTerms,
    Modifier,
    ResourceChanged,
    SaveCalled,
    SaveResolved,
)
from ..machine import Phase
from ..rules.checks import save_succeeds
from ..state import SaveFrame
from .checks import roll_side
from .draft import Draft
from .flow import require_turn
from .reactions import open_interrupts
from .setup import check_damage_type, condition_stacks

__all__ = ["call_save", "resolve_save", "apply_consequences", "deal_damage", "check_consequences"]


def call_save(draft: Draft, cmd: CallSave) -> None:
    """An effect calls for a save. If it costs an Action on the caller's turn, adjacent enemies may
    Interrupt first (C24); then the saver's die, then the caller's (C29); the saver wins ties (C15)."""
    draft.require("declare")
    caller, saver = draft.combatant(cmd.caller), draft.combatant(cmd.saver)
    if caller.helpless:
        raise RuleViolation("C10", f"{caller.id!r} is incapacitated or paralysed and cannot act")
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
    branch = effect.on_success if success else effect.on_failure
    apply_consequences(draft, action, branch, actor=called.caller, target=called.saver, spell=effect.spell,
                       source=effect.name)
    draft.emit(ActionSettled(action=action))


def check_consequences(draft: Draft, consequences: Iterable[Consequence], where: str) -> None:
    """Refuse consequences naming damage types (C14) or conditions (C28) the ruleset does not know."""
    for c in consequences:
        if isinstance(c, DealDamage):
            check_damage_type(draft, c.damage_type, where)
        elif c.condition not in draft.ruleset.conditions:
            raise RuleViolation("C28", f"unknown condition {c.condition!r} in {where} "
                                       f"(the ruleset knows: {', '.join(draft.ruleset.conditions)})")


def apply_consequences(draft: Draft, action: int, consequences: Iterable[Consequence], *, actor: str,
                       target: str, spell: bool, source: str) -> None:
    """Apply consequences in the order written (C25), each to the target or to the actor."""
    for c in consequences:
        who = target if c.to == "target" else actor
        match c:
            case DealDamage():
                _consequence_damage(draft, action, c, who, actor, spell, source)
            case ApplyCondition():
                added, after = condition_stacks(draft, who, c.condition, c.stacks)
                draft.emit(ConditionApplied(action=action, who=who, condition=c.condition, added=added,
                                            stacks=after, reason=source))
            case ClearCondition():
                if draft.combatant(who).has(c.condition):
                    draft.emit(ConditionCleared(action=action, who=who, condition=c.condition, reason=source))


def _consequence_damage(draft: Draft, action: int, c: DealDamage, who: str, actor: str, spell: bool,
                        source: str) -> None:
    faces: list[int] = []
    if c.dice is not None:
        rolled = draft.roll("damage", actor, [("damage", c.dice.sides)] * c.dice.count)
        faces = [d.face for d in rolled.dice]
    flat = (Modifier(source="flat", value=c.flat),) if c.flat else ()
    terms = DamageTerms(dice=sum(faces), modifiers=flat, raw=sum(faces) + c.flat)
    deal_damage(draft, action, who, terms, c.damage_type, spell=spell, source=source)


def deal_damage(draft: Draft, action: int, who: str, terms: DamageTerms, damage_type: str, *,
                spell: bool, source: str) -> DamageResolved:
    """Mitigate raw damage in C13's order, record every step, and move HP (or Will, with conversion).

    HP reaching 0 sets Dying (C28).
    """
    steps, final, resource = mitigation_for(draft.state, who, terms.raw, damage_type, spell=spell)
    resolved = draft.emit(DamageResolved(action=action, target=who, damage_type=damage_type, source=source,
                                         spell=spell, terms=terms, steps=steps, final=final,
                                         resource=resource))
    target = draft.combatant(who)
    before = target.will if resource == "will" else target.hp
    after = max(before - final, 0)
    if after != before:
        draft.emit(ResourceChanged(action=action, who=who, resource=resource, before=before, after=after))
    if resource == "hp" and after == 0 < before and not target.has("Dying") \
            and "Dying" in draft.ruleset.conditions:
        draft.emit(ConditionApplied(action=action, who=who, condition="Dying", added=1, stacks=1,
                                    reason="HP reached 0 (C28)"))
    return resolved
