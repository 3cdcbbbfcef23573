"""Deciding an ability used on its owner's turn (C37): who may, on whom, at what cost; a save or its effects at once.

An ability written as data with ``use`` "action", "bonus_action" or
"free" (docs/abilities.md) is used with the ``use_ability`` command. One
whose effect is a save calls it (C15, C25): a ``save_called`` naming the
ability, and the save resolves as any does (an Action cost lets adjacent
enemies Interrupt first, C24). Any other does its effects at once, in
written order (C25), as an action of its own: ``ability_used``, its costs,
its consequences, settled.
"""

from __future__ import annotations

from ..abilities import aim_refusal, consequences_of, on_turn_cost, target_refusal, turn_cost, uses_left
from ..commands import UseAbility
from ..content import Ability, Save, SaveEffect
from ..errors import RuleViolation
from ..events import AbilityUsed, CostPaid, SaveCalled
from ..extensions import turn_actions
from ..hooks import Extension, Used
from ..ledger import shortfall
from ..machine import Phase
from .draft import Draft
from .effects import Context, check_consequences, run_consequences
from .flow import require_turn
from .reactions import open_interrupts
from .saves import resolve_save
from .windows import settle

__all__ = ["use_ability", "owned_ability", "use_after_window", "ability_actions"]


def owned_ability(draft: Draft, who: str, ability_id: str) -> Ability:
    """The ability ``ability_id`` that ``who``'s sheet writes out, used on one's turn; refused (C37) otherwise."""
    sheet = draft.combatant(who).sheet
    found = next((a for a in sheet.written_abilities() if a.id == ability_id), None)
    if found is None:
        have = ", ".join([*(a.id for a in sheet.written_abilities() if a.use in ("action", "bonus_action", "free")),
                          *(e.id for e in turn_actions(draft.state, who))])
        raise RuleViolation("C37", f"{who!r} has no ability {ability_id!r} to use on its turn (its abilities used "
                                   f"on its turn: {have or 'none'})", field="$.ability")
    if found.use not in ("action", "bonus_action", "free"):
        raise RuleViolation("C37", f"{found.name} is {'passive' if found.use == 'passive' else 'triggered'}: it is "
                                   "not used with use_ability (docs/abilities.md)", field="$.ability")
    return found


def use_ability(draft: Draft, cmd: UseAbility) -> None:
    """Use an ability on one's turn (C37): on one's own turn in the rounds, at rest, by one who can act (C10, C33,
    C36), on a target it allows, with a use left (C41) and the cost paid through the ledger (C20, C22). An
    extension's action (:class:`~omen_core.hooks.TurnAction`) listed on the sheet is used the same way."""
    known = cmd.who in draft.state.combatants
    extension = next((e for e in turn_actions(draft.state, cmd.who) if e.id == cmd.ability), None) if known else None
    if known:  # C10, C33, C36 before the step and the turn: the refusal names them
        sheet = draft.combatant(cmd.who).sheet
        named = extension.name if extension is not None else \
            next((a.name for a in sheet.written_abilities() if a.id == cmd.ability), cmd.ability)
        draft.able(cmd.who, f"use {named}")
    draft.require("declare")
    if extension is not None:
        _take_action(draft, cmd, extension)
        return
    ability = owned_ability(draft, cmd.who, cmd.ability)
    draft.able(cmd.who, f"use {ability.name}")
    require_turn(draft, cmd.who, f"use {ability.name}")
    target = cmd.who if cmd.target is None and ability.target in ("self", "ally", "any") and \
        not any(isinstance(e, Save) for e in ability.effects) else cmd.target
    if target is None:
        raise RuleViolation("C37", f"{ability.name} needs a target ({ability.target})", field="$.target")
    draft.present(target, f"be the target of {ability.name}")
    why = target_refusal(draft.state, cmd.who, target, ability)
    if why is not None:
        raise RuleViolation(ability.rule, f"{ability.name} on {target!r}: {why}")
    left = uses_left(draft.state, cmd.who, ability)
    if left == 0:
        assert ability.uses is not None
        raise RuleViolation("C41", f"{ability.name} has no use left this {ability.uses.per} "
                                   f"({ability.uses.count} per {ability.uses.per})")
    in_rounds = draft.state.phase is Phase.ROUNDS
    cost = on_turn_cost(ability, in_rounds)
    short = shortfall(draft.state, cmd.who, cost)
    if short is not None:
        raise RuleViolation(ability.rule, f"{ability.name}: {short}")
    save = next((e for e in ability.effects if isinstance(e, Save)), None)
    if save is not None:
        _call(draft, cmd.who, target, ability, save)
        return
    check_consequences(draft, consequences_of(ability), ability.name, self_target=target == cmd.who)
    used = AbilityUsed(action=draft.next_seq, who=cmd.who, ability=ability.id, name=ability.name, target=target)
    draft.emit(used)
    if cost.actions and open_interrupts(draft, cmd.who):
        return  # an Action declared: adjacent enemies may Interrupt before its costs are paid (C24)
    _do(draft, used, ability)


def _do(draft: Draft, used: AbilityUsed, ability: Ability) -> None:
    """An ability used on one's turn, its Interrupt window (if any) passed: its costs paid (C20, C22, C41), its
    consequences in written order (C25), settled."""
    cost = on_turn_cost(ability, draft.state.phase is Phase.ROUNDS)
    for resource, amount in cost.entries():
        draft.emit(CostPaid(action=used.action, who=used.who, resource=resource,  # type: ignore[arg-type]
                            amount=amount, purpose=ability.name))
    ctx = Context(action=used.action, actor=used.who, target=used.target, spell=False, source=ability.name)
    run_consequences(draft, ctx, consequences_of(ability), offer_will=False)
    settle(draft)


def _extension_of(draft: Draft, used: AbilityUsed) -> Extension | None:
    """The extension's action ``used`` took, if it was one (not an ability written as data)."""
    return next((e for e in turn_actions(draft.state, used.who) if e.id == used.ability), None)


def use_after_window(draft: Draft, used: AbilityUsed) -> None:
    """An ability (or an extension's action) used for an Action goes on after an Interrupt window that did not
    cancel it (C24): its costs, then what it does (C37)."""
    extension = _extension_of(draft, used)
    if extension is not None:
        _extension_does(draft, used, extension)
        return
    _do(draft, used, owned_ability(draft, used.who, used.ability))


def ability_actions(draft: Draft, used: AbilityUsed) -> int:
    """The Actions an ability (or an extension's action) used on one's turn costs: what an Interrupt that hits
    leaves spent (C24)."""
    in_rounds = draft.state.phase is Phase.ROUNDS
    extension = _extension_of(draft, used)
    if extension is not None:
        assert extension.action is not None
        return turn_cost(extension.action.cost, in_rounds).actions
    return on_turn_cost(owned_ability(draft, used.who, used.ability), in_rounds).actions


def _take_action(draft: Draft, cmd: UseAbility, extension: Extension) -> None:
    """Take an extension's action on one's turn (C37): the same gates as an ability's, its own refusal, its cost
    through the ledger; ``ability_used``, then (an Action, C24) any Interrupt window of adjacent enemies, then the
    costs and what its handler records, then it settles."""
    act = extension.action
    assert act is not None
    draft.able(cmd.who, f"use {extension.name}")
    require_turn(draft, cmd.who, f"use {extension.name}")
    target = cmd.target if cmd.target is not None else cmd.who if act.target in ("self", "ally", "any") else None
    if target is None:
        raise RuleViolation(act.rule, f"{extension.name} needs a target ({act.target})")
    draft.present(target, f"be the target of {extension.name}")
    why = aim_refusal(draft.state, cmd.who, target, act.target, act.within_reach)
    if why is None and act.refusal is not None:
        why = act.refusal(draft.state, cmd.who, target)
    if why is not None:
        raise RuleViolation(act.rule, f"{extension.name} on {target!r}: {why}")
    cost = turn_cost(act.cost, draft.state.phase is Phase.ROUNDS)
    short = shortfall(draft.state, cmd.who, cost)
    if short is not None:
        raise RuleViolation(act.rule, f"{extension.name}: {short}")
    used = AbilityUsed(action=draft.next_seq, who=cmd.who, ability=extension.id, name=extension.name, target=target)
    draft.emit(used)
    if cost.actions and open_interrupts(draft, cmd.who):
        return  # an Action declared: adjacent enemies may Interrupt before its costs are paid (C24)
    _extension_does(draft, used, extension)


def _extension_does(draft: Draft, used: AbilityUsed, extension: Extension) -> None:
    """An extension's action, its Interrupt window (if any) passed: its costs, what its handler records, settled."""
    act = extension.action
    assert act is not None
    cost = turn_cost(act.cost, draft.state.phase is Phase.ROUNDS)
    for resource, amount in cost.entries():
        draft.emit(CostPaid(action=used.action, who=used.who, resource=resource,  # type: ignore[arg-type]
                            amount=amount, purpose=extension.name))
    act.does(draft, Used(action=used.action, who=used.who, target=used.target))
    settle(draft)


def _call(draft: Draft, who: str, target: str, ability: Ability, save: Save) -> None:
    """An ability whose effect is a save calls it (C15): its Action is paid as a save's is, and every other cost
    with it, after any Interrupt window (C24: the window comes before costs are paid; an Interrupt's hit cancels
    the call, and only its Action is spent), at once when no window opens."""
    check_consequences(draft, [*save.on_success, *save.on_failure], ability.name)
    if who == target:
        raise RuleViolation("C15", f"{who!r} cannot call for a save against itself")
    in_rounds = draft.state.phase is Phase.ROUNDS
    actions = on_turn_cost(ability, in_rounds).actions
    effect = SaveEffect(name=ability.name, save=save.save, against=save.against, spell=save.spell,
                        action_cost=actions, on_success=save.on_success, on_failure=save.on_failure)
    action = draft.next_seq
    draft.emit(SaveCalled(action=action, caller=who, saver=target, effect=effect, ability=ability.id))
    if actions and open_interrupts(draft, who):
        return  # its other costs are paid once the window lets it go on (pay_after_window)
    _pay_the_rest(draft, action, who, ability)
    resolve_save(draft)


def _pay_the_rest(draft: Draft, action: int, who: str, ability: Ability) -> None:
    """An ability's costs but its Actions (Will, HP, Bonus Actions, C41), paid for the action ``action``."""
    rest = on_turn_cost(ability, draft.state.phase is Phase.ROUNDS, with_actions=False)
    for resource, amount in rest.entries():
        draft.emit(CostPaid(action=action, who=who, resource=resource,  # type: ignore[arg-type]
                            amount=amount, purpose=ability.name))


def pay_after_window(draft: Draft, called: SaveCalled) -> None:
    """A save an ability called goes on after an Interrupt window that did not cancel it (C24): the ability's
    costs but its Action are paid now (its Action is paid with the save's, :func:`resolve_save`)."""
    if called.ability:
        _pay_the_rest(draft, called.action, called.caller, owned_ability(draft, called.caller, called.ability))
