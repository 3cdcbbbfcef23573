"""Conditions taking effect at their timing (C25, C28, C40): damage as they tick, durations, save ends, and the
durations that end at the start or the end of a named combatant's next turn.

At one moment, conditions whose time is up end first (a condition lasting until the start of a turn does
not also tick then); then the conditions due tick in the order they were applied (C40), each completely
before the next: its damage (C13), its duration counting down (C28), its save (save ends, C15).
"""

from __future__ import annotations

from typing import Literal

from ..commands import CheckSpec
from ..content import ConditionDamage, ConditionDef, SaveEnds
from ..errors import RuleViolation
from ..events import DEFERRED_SOURCE, ConditionCleared, ConditionTicked, DamageTerms, Modifier, SaveResolved, Ticking
from ..limits import MAX_FACES
from ..rules.checks import save_succeeds
from ..state import Pending, side_down
from .checks import roll_side
from .draft import Draft
from .effects import Context, deal_damage, run_consequences
from .windows import open_moment

__all__ = ["tick", "Timing", "clear_until", "settle_deferred", "TURN_MOMENTS"]

Moment = Literal["start_of_next_turn", "end_of_next_turn"]
#: When conditions tick or are saved against (C40): a turn's start or end, or the round's end.
Timing = Literal["turn_start", "turn_end", "round_end"]
#: The words a clearing's reason gives each moment of a turn.
TURN_MOMENTS: dict[str, str] = {"start_of_next_turn": "start", "end_of_next_turn": "end"}


def tick(draft: Draft, timing: Timing, who: str | None = None, *, after: int | None = None,
         through: int | None = None) -> bool:
    """The conditions due at ``timing`` (``who``'s at its turn start or end; everyone's at the round's end), in
    the order they were applied (C40): each deals its damage and counts its duration down if it ticks now (C25,
    C28; at 0 it clears), then, if its save is made now, the afflicted saves (C40). One out of the fight (C33)
    takes no damage and makes no save. A save that abilities answer (C38: a save made or failed) stops the tick
    at its ``save.resolved`` moment: True (the tick waits), and it goes on from there once the moment settles
    (``after`` the saved condition's application number, ``through`` the last one applied when it began; a
    condition applied since is not due in this tick). A damage that takes the last of a side down stops the tick
    there (C33: the fight is over; nothing more is rolled)."""
    rules = draft.ruleset.conditions
    state = draft.state
    names = list(state.combatants) if who is None else [who]
    if not any(state.combatants[w].conditions for w in names):
        return False  # nobody has a condition to tick: nothing to do (the common case)
    last = state.applications if through is None else through
    due = sorted(((order, w, name) for w in names for name in state.combatants[w].conditions
                  for order in (state.combatants[w].applied.get(name, 0),)
                  if _due(rules.get(name), timing) and (after is None or order > after) and order <= last),
                 key=lambda entry: entry[0])
    for order, w, name in due:
        rule = rules[name]
        if rule.damage is not None and rule.tick == timing and _afflicted(draft, w, name):
            _damage(draft, w, name, rule.damage)
            if side_down(draft.state):  # the last of a side went down: the fight is over, and the tick goes no
                return False            # further (no count down, no save, no other condition: C33)
        fighter = draft.combatant(w)
        if rule.tick == timing and name in fighter.remaining and fighter.has(name):
            left = fighter.remaining[name] - 1
            draft.emit(ConditionTicked(who=w, condition=name, remaining=left))
            if left <= 0:
                draft.emit(ConditionCleared(action=None, who=w, condition=name, reason="its duration ran out (C28)"))
                continue
        if rule.save_ends is not None and rule.save_ends.timing == timing and _afflicted(draft, w, name) \
                and _save(draft, w, name, rule.save_ends, Ticking(timing=timing, after=order, through=last)):
            return True
    return False


def _due(rule: ConditionDef | None, timing: str) -> bool:
    """Whether a condition does anything at ``timing``: ticks then, or is saved against then."""
    if rule is None:
        return False
    return rule.tick == timing or (rule.save_ends is not None and rule.save_ends.timing == timing)


def _afflicted(draft: Draft, who: str, name: str) -> bool:
    """``who`` still has ``name`` and is in the fight (C33)."""
    fighter = draft.combatant(who)
    return fighter.has(name) and not fighter.out


def _damage(draft: Draft, who: str, name: str, damage: ConditionDamage) -> None:
    """A condition's damage as it ticks: its dice (rolled for the afflicted, one roll) and flat amount, once per
    stack if ``per_stack``, mitigated as C13 says; the damage names the condition as its source. Outside any
    action, so no Will-conversion choice is offered (C31: a defender who would choose takes it on HP)."""
    times = draft.combatant(who).conditions[name] if damage.per_stack else 1
    faces: list[int] = []
    if damage.dice is not None:
        count = damage.dice.count * times
        if count > MAX_FACES:  # refused before the pool is made: a roll past the bound is a line no reader decodes
            raise RuleViolation("C40", f"{name}'s damage as it ticks on {who!r} would roll {count:,} dice "
                                       f"({damage.dice.count} {damage.dice.die} for each of {times:,} stacks): more "
                                       f"than the {MAX_FACES:,} one roll may hold (docs/rulings.md, \"Limits on "
                                       "dice\"); clear stacks of it first")
        rolled = draft.roll("damage", who, [("damage", damage.dice.sides)] * count, about=f"{name} damage")
        faces = [d.face for d in rolled.dice]
    flat = damage.flat * times
    terms = DamageTerms(dice=sum(faces), modifiers=(Modifier(source="flat", value=flat),) if flat else (),
                        raw=sum(faces) + flat)
    deal_damage(draft, None, who, terms, damage.damage_type, spell=damage.spell, source=name)


def _save(draft: Draft, who: str, name: str, save: SaveEnds, ticking: Ticking) -> bool:
    """Save ends (C40): the afflicted rolls its ``save`` attribute, then whoever applied the condition its
    ``against`` (C29: saver first), one die per side; the saver wins ties (C15). A success clears the condition.
    Then the abilities that answer a save made or failed may (C38: the ``save.resolved`` moment, ``ticking`` where
    the tick goes on after it): True if one may, and the tick waits on it. A condition with no applier on record
    (one the engine applies itself, such as Dying) makes no save."""
    by = draft.combatant(who).appliers.get(name)
    if by is None or by == who or by not in draft.state.combatants:
        return False
    saving = roll_side(draft, CheckSpec(who=who, attribute=save.save), "save", "save",
                       about=f"{save.save} save against {name}")
    opposing = roll_side(draft, CheckSpec(who=by, attribute=save.against), "save", "save",
                         about=f"{save.against} opposing the save against {name}")
    success = save_succeeds(saving.total, opposing.total)
    draft.emit(SaveResolved(action=None, effect=name, saver=saving, opposing=opposing, success=success))
    if success:
        draft.emit(ConditionCleared(action=None, who=who, condition=name,
                                    reason=f"{who} saved: {saving.total} >= {by}'s {opposing.total} "
                                           "(save ends, C40; C15)"))
    return open_moment(draft, "save.resolved", who, other=by, outcome="success" if success else "failure",
                       condition=name, ticking=ticking)


def clear_until(draft: Draft, whose: str, moment: Moment | None) -> None:
    """The conditions lasting until the start or the end (``moment``) of ``whose`` next turn end now (C40), in the
    order they were applied; ``moment`` None: that turn came and was skipped, so both kinds end. A condition
    lasting until a turn's end counts only a turn that started after it was applied."""
    state = draft.state
    if not state.until:
        return
    ending = [u for u in state.until if u.of == whose and (
        moment is None or (u.moment == moment and (moment == "start_of_next_turn" or u.armed)))]
    ending.sort(key=lambda u: state.combatants[u.who].applied.get(u.condition, 0))
    for u in ending:
        if not draft.combatant(u.who).has(u.condition):
            continue
        when = "was skipped" if moment is None else "started" if u.moment == "start_of_next_turn" else "ended"
        draft.emit(ConditionCleared(action=None, who=u.who, condition=u.condition,
                                    reason=f"it lasted until the {TURN_MOMENTS[u.moment]} of {whose}'s next turn, "
                                           f"which {when} (C40)"))


def settle_deferred(draft: Draft, due: tuple[Pending, ...]) -> None:
    """Deferred costs whose moment has come (C41; ``state.deferred_due``, taken before the turn's event that
    settles them): each ability's deferred effects, in the order the abilities were used, on its owner, outside
    any action (no Will-conversion choice: C31, a defender who would choose takes it on HP)."""
    for pending in due:
        ability = next((a for a in draft.state.abilities if a.id == pending.ability), None)
        if ability is None or ability.deferred is None or draft.combatant(pending.who).out:
            continue
        ctx = Context(action=None, actor=pending.who, target=pending.who, spell=False,  # type: ignore[arg-type]
                      source=f"{ability.name}{DEFERRED_SOURCE}")
        run_consequences(draft, ctx, ability.deferred.effects, offer_will=False)
