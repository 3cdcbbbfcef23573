"""Deciding consequences in written order, and damage landing on a combatant (C13, C25, C28, C31)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from ..content import ApplyCondition, ClearCondition, Consequence, DealDamage, Heal, known_words
from ..derive import landing, mitigation_for, will_choice_due
from ..errors import RuleViolation
from ..events import (
    DYING_REASON,
    ConditionApplied,
    ConditionCleared,
    DamageResolved,
    DamageTerms,
    Modifier,
    ResourceChanged,
    WillConversionOffered,
)
from ..parts import HALF_ON_SUCCESS
from .draft import Draft
from .setup import check_damage_type, condition_stacks

__all__ = ["Context", "run_consequences", "land_damage", "deal_damage",
           "check_consequences", "heal", "applied_by", "self_saved", "self_saved_why"]


class Context(NamedTuple):
    """What an action's consequences need: the action, who acts, who is targeted, whether it is a spell (for
    armor, C13), and the source its results name."""

    action: int
    actor: str
    target: str
    spell: bool
    source: str


def check_consequences(draft: Draft, consequences: Iterable[Consequence], where: str, *,
                       self_target: bool = False) -> None:
    """Refuse consequences naming damage types (C14) or conditions (C28) the ruleset does not know, and a
    condition a save ends applied by the actor to itself (C15: the saver's die is opposed by another's): one
    ``to = "actor"``, or ``to = "target"`` when the target is the actor (``self_target``)."""
    for c in consequences:
        if isinstance(c, DealDamage):
            check_damage_type(draft, c.damage_type, where)
        elif isinstance(c, Heal):
            continue
        elif c.condition not in draft.ruleset.conditions:
            raise RuleViolation("C28", f"unknown condition {c.condition!r} in {where} "
                                       f"({known_words(c.condition, draft.ruleset.conditions)})")
        elif c.condition == "Dying":  # C28, C36: Dying follows HP, as the GM's apply and clear of it are refused
            done = "applies" if isinstance(c, ApplyCondition) else "clears"
            raise RuleViolation("C36", f"{where} {done} Dying, which follows HP: it is set when HP reaches 0 (C28) and "
                                       "ends when HP rises above 0 (C36), never by a condition effect: deal damage or "
                                       "heal instead")
        elif self_saved(draft, c) or (self_target and isinstance(c, ApplyCondition)
                                      and draft.ruleset.conditions[c.condition].save_ends is not None):
            raise RuleViolation("C40", self_saved_why(c.condition, where))


def self_saved(draft: Draft, c: Consequence) -> bool:
    """Whether ``c`` applies to its actor a condition a save ends (refused: nobody would oppose the save, C15)."""
    return isinstance(c, ApplyCondition) and c.to == "actor" and \
        draft.ruleset.conditions[c.condition].save_ends is not None


def self_saved_why(condition: str, where: str) -> str:
    """Why a condition a save ends cannot be applied by the actor to itself (C15, C40)."""
    return (f"{where} applies {condition} to its own actor, but a save ends {condition}: the save is opposed by "
            "whoever applied it (C15), who must be another")


def run_consequences(draft: Draft, ctx: Context, consequences: Sequence[Consequence], start: int = 0, *,
                     offer_will: bool = True) -> bool:
    """Apply consequences in the order written (C25), from index ``start``, each to the target or to the actor.
    False if one stopped to let its target choose where its damage lands (C31): the choice resumes the rest.
    Without ``offer_will`` (an ability's answer, done at once inside another step) no such choice is offered:
    the damage lands on HP for one who would choose (docs/abilities.md)."""
    for index in range(start, len(consequences)):
        c = consequences[index]
        who = ctx.target if c.to == "target" else ctx.actor
        match c:
            case DealDamage() if not offer_will:
                deal_damage(draft, ctx.action, who, _consequence_terms(draft, c, ctx.actor), c.damage_type,
                            spell=ctx.spell, source=ctx.source, chosen=False)
            case DealDamage():
                if not land_damage(draft, ctx.action, who, _consequence_terms(draft, c, ctx.actor), c.damage_type,
                                   spell=ctx.spell, source=ctx.source, then=index + 1):
                    return False
            case Heal():
                heal(draft, ctx.action, who, c, ctx.actor, ctx.source)
            case ApplyCondition():
                added, after = condition_stacks(draft, who, c.condition, c.stacks)
                by, of = applied_by(draft, ctx, c)
                draft.emit(ConditionApplied(action=ctx.action, who=who, condition=c.condition, added=added,
                                            stacks=after, reason=ctx.source, by=by, until=c.until, of=of))
            case ClearCondition():
                if draft.combatant(who).has(c.condition):
                    draft.emit(ConditionCleared(action=ctx.action, who=who, condition=c.condition,
                                                reason=ctx.source))
    return True


def applied_by(draft: Draft, ctx: Context, c: ApplyCondition) -> tuple[str | None, str | None]:
    """What a condition's application records besides its stacks (C40): who applied it, for a condition a save
    ends (its die opposes the save, C15), and whose next turn ends it (``of``: the actor or the target), each None
    where it has none."""
    by = ctx.actor if draft.ruleset.conditions[c.condition].save_ends is not None else None
    of = None if c.until is None else ctx.actor if c.of == "actor" else ctx.target
    return by, of


def heal(draft: Draft, action: int, who: str, c: Heal, actor: str, source: str) -> None:
    """Restore HP (dice rolled by the actor, plus the flat amount), never above the sheet's HP; one raised above 0
    HP is no longer Dying (C36)."""
    amount = c.flat
    if c.dice is not None:
        rolled = draft.roll("healing", actor, [("heal", c.dice.sides)] * c.dice.count)
        amount += sum(d.face for d in rolled.dice)
    target = draft.combatant(who)
    after = min(target.hp + amount, target.sheet.hp)
    if after != target.hp:
        draft.emit(ResourceChanged(action=action, who=who, resource="hp", before=target.hp, after=after))
    if target.hp == 0 < after and target.has("Dying"):
        draft.emit(ConditionCleared(action=action, who=who, condition="Dying",
                                    reason=f"raised above 0 HP by {source}: no longer Dying (C36)"))


def _consequence_terms(draft: Draft, c: DealDamage, actor: str) -> DamageTerms:
    """A damage consequence's dice (rolled by the actor) and flat amount."""
    faces: list[int] = []
    if c.dice is not None:
        rolled = draft.roll("damage", actor, [("damage", c.dice.sides)] * c.dice.count)
        faces = [d.face for d in rolled.dice]
    terms = (Modifier(source="flat", value=c.flat),) if c.flat else ()
    whole = sum(faces) + c.flat
    if c.half and whole - whole // 2:  # half, rounded down: the rest is a term of its own, so the terms add up
        terms = (*terms, Modifier(source=HALF_ON_SUCCESS, value=-(whole - whole // 2)))
    return DamageTerms(dice=sum(faces), modifiers=terms, raw=whole // 2 if c.half else whole)


def land_damage(draft: Draft, action: int, who: str, terms: DamageTerms, damage_type: str, *, spell: bool,
                source: str, then: int) -> bool:
    """Deal the damage, unless ``who`` first chooses whether it goes to Will (C31): then the choice is offered
    (``then``: the consequence that follows it) and False returned; the answer deals it."""
    _steps, final = mitigation_for(draft.state, who, terms.raw, damage_type, spell=spell)
    if will_choice_due(draft.state, who, damage_type, final):
        draft.emit(WillConversionOffered(action=action, who=who, damage_type=damage_type, source=source, spell=spell,
                                         terms=terms, final=final, will=draft.combatant(who).will, then=then))
        return False
    deal_damage(draft, action, who, terms, damage_type, spell=spell, source=source)
    return True


def deal_damage(draft: Draft, action: int | None, who: str, terms: DamageTerms, damage_type: str, *,
                spell: bool, source: str, chosen: bool | None = None) -> DamageResolved:
    """Mitigate raw damage in C13's order, record every step, and move HP, or Will with conversion: Will stops
    at 0 and the rest goes to HP (C31; ``chosen`` is the defender's answer where the feature leaves it to them).
    ``action`` None: a condition's damage as it ticks, outside any action (C40).

    HP reaching 0 sets Dying (C28).
    """
    steps, final = mitigation_for(draft.state, who, terms.raw, damage_type, spell=spell)
    resource, overflow = landing(draft.state, who, damage_type, final, chosen)
    resolved = draft.emit(DamageResolved(action=action, target=who, damage_type=damage_type, source=source,
                                         spell=spell, terms=terms, steps=steps, final=final,
                                         resource=resource, overflow=overflow))
    target = draft.combatant(who)
    to_hp = overflow if resource == "will" else final
    if resource == "will" and final - overflow:
        draft.emit(ResourceChanged(action=action, who=who, resource="will", before=target.will,
                                   after=target.will - (final - overflow)))
    if to_hp:
        after = max(target.hp - to_hp, 0)
        if after != target.hp:
            draft.emit(ResourceChanged(action=action, who=who, resource="hp", before=target.hp, after=after))
        if after == 0 < target.hp and not target.has("Dying") and "Dying" in draft.ruleset.conditions:
            draft.emit(ConditionApplied(action=action, who=who, condition="Dying", added=1, stacks=1,
                                        reason=DYING_REASON))
    return resolved
