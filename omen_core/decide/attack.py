"""Deciding an attack, from declaration to settled damage (combat.txt §Resolving an Attack; C4-C13, C26, C27).

The numbers come from :mod:`omen_core.derive`, computed from the attack's
frame and the state: the same functions the audit uses to recompute them.
"""

from __future__ import annotations

from ..commands import AnswerActiveDefense, AnswerCatch, DeclareAttack, RouteDamage
from ..content import CombatantSheet, Consequence, Weapon
from ..decisions import legal_now
from ..derive import (
    active_attribute,
    attack_damage_type,
    damage_terms,
    defense_ineligibility,
    hit_numbers,
    parry_weapon,
)
from ..errors import RuleViolation
from ..events import (
    ActiveDefenseChosen,
    ActiveDefenseDeclined,
    ActiveDefenseWindowOpened,
    ActiveDefenseWindowSkipped,
    AttackDeclared,
    CatchAnswered,
    CatchWindowOpened,
    ConditionCleared,
    CostPaid,
    DamageRouted,
    EngagementChanged,
    HitDetermined,
    RoutingWindowOpened,
)
from ..extensions import ATTACK_OPTION_FIELDS, attack_option_offered, pool_dice, routes
from ..hooks import Moment
from ..limits import MAX_DAMAGE_MODIFIER
from ..machine import Phase
from ..parts import PoolTag
from ..rules import attack as rules
from ..state import AttackFrame, in_hand
from .draft import Draft, helplessness
from .effects import Context, check_consequences, land_damage, run_consequences
from .flow import require_turn
from .reactions import open_interrupts
from .rerolls import auto_reroll
from .windows import Resume, nothing_rolled, open_window, settle

__all__ = ["declare_attack", "declare", "pay_and_roll", "answer_active_defense", "answer_catch", "after_catch",
           "route_damage", "attack_frame", "rolled_moment", "RESUMES"]


def attack_frame(draft: Draft) -> AttackFrame:
    """The attack in progress (the innermost action, which the lifecycle check has made sure is an attack)."""
    frame = draft.state.pending
    assert isinstance(frame, AttackFrame)
    return frame


def declare_attack(draft: Draft, cmd: DeclareAttack) -> None:
    """Declare an attack on one's turn (an Action, C20); adjacent enemies may Interrupt before costs are
    paid (C24); then pay, roll hit and base defense, and open the Active Defense window or resolve on."""
    draft.able(cmd.attacker, "attack")  # C10, C33, C36 before the step and the turn: the refusal names them
    draft.require("declare")
    require_turn(draft, cmd.attacker, "attack")
    if draft.state.phase is Phase.ROUNDS and draft.state.turn_actions < 1:
        raise RuleViolation("C20", f"{cmd.attacker!r} has no Action left this turn (1 Action per turn)")
    declare(draft, cmd)
    if not open_interrupts(draft, cmd.attacker):
        pay_and_roll(draft)


def declare(draft: Draft, cmd: DeclareAttack, reaction: str | None = None, reacting_to: int | None = None) -> None:
    """Check and record the declaration of an attack (a plain one, or a reaction to another action)."""
    attacker, target = draft.present(cmd.attacker, "attack"), draft.present(cmd.target, "be attacked")
    if attacker.id == target.id:
        raise RuleViolation("§Resolving an Attack", f"{attacker.id!r} cannot attack itself")
    draft.able(cmd.attacker, "attack")  # C10, C36; a target at 0 HP can still be attacked (C36)
    weapon = _weapon(attacker.sheet, cmd, attacker.wielding)
    kind = rules.attack_kind(weapon.properties if weapon else None)
    if reaction in ("interrupt", "attack_of_opportunity") and rules.is_ranged(kind):
        assert weapon is not None
        raise RuleViolation("C24" if reaction == "interrupt" else "C23",
                            f"an {reaction.replace('_', ' ')} is a melee attack; {weapon.label} is ranged",
                            **({"field": "$.weapon"} if cmd.weapon is not None else {}))
    for field, (rule, words) in ATTACK_OPTION_FIELDS.items():  # an argument an ability gives meaning to (rage)
        if getattr(cmd, field) and not attack_option_offered(draft.state, attacker.id, field):
            raise RuleViolation(rule, f"{attacker.id!r} has no {words}")
    _check_claims(draft, cmd, attacker.side, target.side)
    b = cmd.branches
    check_consequences(draft, [*b.on_hit, *b.on_miss, *b.on_crit], "the attack's branches")
    if reaction is None and not rules.is_ranged(kind) and not draft.state.engaged(attacker.id, target.id):
        # A melee attack is made within reach: declaring one states it, so the target's side sees an adjacent
        # enemy act (C24) and leaving reach later provokes (C23). Recorded, never assumed silently. Closing in is
        # movement: in the rounds it needs the turn's Movement Action unspent (C20; docs/rulings.md).
        _closing_in(draft, attacker.id, target.id)
        draft.emit(EngagementChanged(who=attacker.id, others=(target.id,), engaged=True))
    draft.emit(AttackDeclared(
        action=draft.next_seq, attacker=attacker.id, target=target.id,
        weapon=weapon.id if weapon else None, kind=kind, situational=cmd.situational, rage=cmd.rage,
        damage_modifiers=cmd.damage_modifiers, branches=cmd.branches,
        reaction=reaction, reacting_to=reacting_to))  # type: ignore[arg-type]


def _check_claims(draft: Draft, cmd: DeclareAttack, attacking: str, defending: str) -> None:
    """An Encircled claim counts combatants in the fight (C26): at most the attacking side's (the attacker
    included) adjacent to the target, at most the target's side's (the target included) adjacent to the attacker
    (a claim of 5 attackers for a side of 2 was taken at full value: a tester); a damage modifier is at most
    :data:`~omen_core.limits.MAX_DAMAGE_MODIFIER` either way (C12)."""
    circle = cmd.situational.encircled
    if circle is not None:
        for count, side, field, who in ((circle.attackers, attacking, "attackers", "attacking"),
                                        (circle.defenders, defending, "defenders", "target's")):
            there = sum(1 for c in draft.state.combatants.values() if c.side == side and c.left is None)
            if count > there:
                raise RuleViolation("C26", f"an Encircled claim of {count} {field}, but the {who} side ({side}) has "
                                           f"{there} in the fight", field=f"$.situational.encircled.{field}")
    for i, modifier in enumerate(cmd.damage_modifiers):
        if abs(modifier.value) > MAX_DAMAGE_MODIFIER:
            raise RuleViolation("C12", f"a damage modifier of {modifier.value} ({modifier.source}) is past "
                                       f"±{MAX_DAMAGE_MODIFIER}, far beyond any of the rules' numbers",
                                field=f"$.damage_modifiers[{i}].value")


def _closing_in(draft: Draft, attacker: str, target: str) -> None:
    """A melee attack on a target not within reach closes in, which is movement: in the rounds it is refused once
    the attacker's Movement Action this turn is spent (C20: 1 Movement Action per turn; docs/rulings.md, "A melee
    attack is made within reach"). Closing in costs nothing more: the Movement Action unspent, it stays so."""
    state = draft.state
    if state.phase is Phase.ROUNDS and state.turn_movement < 1:
        raise RuleViolation("C20", f"{attacker!r} cannot make a melee attack on {target!r}: {target!r} is not within "
                                   f"{attacker}'s reach and {attacker}'s Movement Action this turn is spent (C20: 1 "
                                   "Movement Action per turn; closing in is movement)")


def pay_and_roll(draft: Draft) -> None:
    """Pay the attack's cost (an Action, or Bonus Actions for a reaction, C22), roll, open or skip the window."""
    decl = attack_frame(draft).declaration
    costs = draft.ruleset.reaction_costs
    if decl.reaction is None:
        draft.emit(CostPaid(action=decl.action, who=decl.attacker, resource="action", amount=1, purpose="attack"))
    elif decl.reaction == "ability":  # paid with the ability that makes it (C38): nothing more
        draft.emit(CostPaid(action=decl.action, who=decl.attacker, resource="action", amount=0,
                            purpose="an ability's attack (paid with the ability, C38)"))
    else:
        amount = costs.interrupt if decl.reaction == "interrupt" else costs.attack_of_opportunity
        draft.emit(CostPaid(action=decl.action, who=decl.attacker, resource="bonus_action", amount=amount,
                            purpose=decl.reaction.replace("_", " ")))
    if open_window(draft, "attack.declared", nothing_rolled):  # C38: an attack declared, before its dice
        return
    _roll(draft)


def _roll(draft: Draft) -> None:
    """The hit and base defense dice (C29), the decision points due once they are seen, the Active Defense
    window (C8)."""
    _roll_hit_and_defense(draft)
    if open_window(draft, "attack.rolled", rolled_moment):
        return
    _open_or_skip_window(draft)


def _weapon(sheet: CombatantSheet, cmd: DeclareAttack, wielding: tuple[str, ...]) -> Weapon | None:
    """The weapon named, which must be in hand (C35; a spell, written as a weapon with the ``spell`` property, is
    no gear and needs no hand: docs/rulings.md), else the first one in hand; None for an unarmed attack (C12),
    which needs nothing in hand."""
    if cmd.unarmed:
        if cmd.weapon is not None:
            raise RuleViolation("C12", f"an unarmed attack uses no weapon: leave out weapon {cmd.weapon!r} or "
                                       "unarmed")
        return None
    if cmd.weapon is None:
        wielded = [w for w in sheet.weapons if w.id in wielding]
        return wielded[0] if wielded else None
    weapon = sheet.weapon(cmd.weapon)
    if weapon is None:
        have = ", ".join(w.id for w in sheet.weapons) or "none"
        raise RuleViolation("C4", f"{sheet.id!r} has no weapon {cmd.weapon!r} (weapons: {have})", field="$.weapon")
    if weapon.id not in wielding and "spell" not in weapon.properties:  # a spell is no gear to hold
        held = ", ".join(w.id for w in sheet.weapons if w.id in in_hand(sheet, wielding)) or "nothing"
        raise RuleViolation("C35", f"{sheet.id!r} does not hold {weapon.id!r} (in hand: {held}); draw it first",
                            field="$.weapon")
    return weapon


def _roll_hit_and_defense(draft: Draft) -> None:
    """C29: attacker primary dice, attacker FCS dice, then the defender's RES die (none if helpless: C10, or at
    0 HP, C36)."""
    frame = attack_frame(draft)
    decl, weapon = frame.declaration, frame.weapon
    attacker = draft.sheet(decl.attacker)
    primary = rules.primary_attribute(decl.kind, weapon is not None and "finesse" in weapon.properties)
    n_fcs = 1 + (1 if draft.combatant(decl.attacker).unseen else 0)
    added = [(*die, handler.origin) for handler in pool_dice("hit", draft.state)
             for die in handler.dice(draft.state, frame)]
    pool: list[tuple[PoolTag, int, str]] = [
        ("primary", attacker.attributes[primary].sides, ""), *(d for d in added if d[0] == "primary"),
        *(("fcs", attacker.attributes.FCS.sides, "") for _ in range(n_fcs)), *(d for d in added if d[0] == "fcs")]
    draft.roll("hit", decl.attacker, [(tag, sides) for tag, sides, _o in pool], origins=tuple(o for *_d, o in pool))
    auto_reroll(draft)
    target = draft.combatant(decl.target)
    if not target.helpless:
        draft.roll("base_defense", decl.target, [("res", target.sheet.attributes.RES.sides)])


def rolled_moment(draft: Draft) -> Moment:
    """The hook point ``attack.rolled``: the hit total and the defense as they stand (no Active Defense yet)."""
    attack, defense, _ = hit_numbers(draft.state, attack_frame(draft))
    return Moment(attack_total=attack.total, defense_total=defense.total)


def _open_or_skip_window(draft: Draft) -> None:
    """C8: open the window only if the attack would hit, the defender can act (C10, C36), has a Bonus Action and a
    defense."""
    state = draft.state
    frame = attack_frame(draft)
    decl = frame.declaration
    target = draft.combatant(decl.target)
    attack, defense, _ = hit_numbers(state, frame)
    cost = draft.ruleset.reaction_costs.active_defense
    refusals = {d: defense_ineligibility(state, decl, d) for d in rules.ACTIVE_DEFENSES}
    eligible = tuple(d for d, why in refusals.items() if why is None)
    reason = None
    helpless = helplessness(target)
    if helpless is not None:
        reason = f"the defender {helpless[1]}: no base defense die and no Active Defense ({helpless[0]})"
    elif not rules.hits(attack.total, defense.base):
        reason = (f"the attack ({attack.total}) does not beat the base defense ({defense.base}): "
                  "there is nothing to defend against (C8)")
    elif target.bonus_actions < cost:
        reason = f"the defender has no Bonus Action left (an Active Defense costs {cost}, C8, C22)"
    elif not eligible:
        reason = "no Active Defense is allowed: " + "; ".join(w for w in refusals.values() if w)
    if reason is not None:
        draft.emit(ActiveDefenseWindowSkipped(action=decl.action, defender=target.id, reason=reason))
        _determine_hit(draft)
        return
    draft.emit(ActiveDefenseWindowOpened(
        action=decl.action, defender=target.id, attack_total=attack.total, base_defense=defense.base,
        eligible=eligible, ineligible=tuple(why for why in refusals.values() if why)))


def answer_active_defense(draft: Draft, cmd: AnswerActiveDefense) -> None:
    """The defender's answer (C8, C9): decline, or pay a Bonus Action and roll Dodge, Parry or Block."""
    trigger = "decline" if cmd.defense is None else "choose_defense"
    draft.able(cmd.defender, "make an Active Defense")  # C10, C36 first: a window is never open to one who cannot act
    draft.require(trigger, rule="C8", why="no Active Defense window is open (at most one Active Defense "
                                          "per attack, answered while its window is open)")
    frame = attack_frame(draft)
    opened = frame.window
    assert opened is not None
    if cmd.defender != opened.defender:
        raise RuleViolation("C8", f"the open window is {opened.defender}'s, not {cmd.defender}'s")
    if cmd.weapon is not None and cmd.defense != "parry":  # what options() never offers is never accepted
        raise RuleViolation("C9", f"a weapon goes with a Parry alone: {_said(cmd.defense)} names none "
                                  f"(weapon {cmd.weapon!r} given)")
    if cmd.defense is None:
        draft.emit(ActiveDefenseDeclined(action=opened.action, defender=cmd.defender))
        _determine_hit(draft)
        return
    why = defense_ineligibility(draft.state, frame.declaration, cmd.defense, cmd.weapon)
    if why is not None:
        allowed = ", ".join(opened.eligible)
        raise RuleViolation("C9", f"{cmd.defender!r} cannot {cmd.defense}: {_in_hand(draft, cmd, why)}; this window "
                                  f"allows {allowed + ' or ' if allowed else ''}declining; legal now: "
                                  f"{'; '.join(legal_now(draft.state))}")
    sheet = draft.sheet(cmd.defender)
    weapon = (parry_weapon(sheet, cmd.weapon, draft.combatant(cmd.defender).wielding, frame.declaration.kind)
              if cmd.defense == "parry" else None)  # none named: the first in hand that may parry this (C9)
    draft.emit(ActiveDefenseChosen(action=opened.action, defender=cmd.defender, defense=cmd.defense,
                                   weapon=weapon.id if weapon else None))
    draft.emit(CostPaid(action=opened.action, who=cmd.defender, resource="bonus_action",
                        amount=draft.ruleset.reaction_costs.active_defense, purpose=f"Active Defense ({cmd.defense})"))
    attribute = active_attribute(cmd.defense, weapon)
    draft.roll("active_defense", cmd.defender, [("active", sheet.attributes[attribute].sides)])
    _determine_hit(draft)


def _in_hand(draft: Draft, cmd: AnswerActiveDefense, why: str) -> str:
    """Why an Active Defense is refused, in words: ``why`` (C9), and for a Parry the weapons the defender holds (C35:
    a Parry needs one in hand; a spell is never held, docs/rulings.md); a Block refused for want of a shield when one
    is carried but not in hand says so, and what is in hand (C35: a Block needs the shield in hand; the window's
    ``ineligible`` keeps its recorded words, so that the logs already written still audit). A Parry naming a
    weapon the sheet has not says so, as an attack naming one does (C4; it said "not in hand": found by a tester)."""
    fighter = draft.combatant(cmd.defender)
    shield = fighter.sheet.shield
    if cmd.defense == "block" and why == rules.SPELL_BLOCK and attack_frame(draft).declaration.kind == "ranged_spell":
        return (why.removesuffix(" (§Which Defenses Apply)") + ", and a ranged one with Veteran Shield Training too "
                "(§Which Defenses Apply: \"Ranged Spell attacks can be Dodged; Blocked only with a magical shield "
                "and Veteran Shield Training\")")  # the whole line, not its half (a rules lawyer)
    if cmd.defense == "block" and shield is not None and shield.id not in fighter.wielding and \
            why == "Block needs a shield (C9)":
        return (f"Block needs the shield in hand (C9, C35): {shield.id!r} is not in hand; in hand: "
                f"{', '.join(fighter.held) or 'nothing'}")  # a spell takes no hand (docs/rulings.md)
    if cmd.defense != "parry":
        return why
    held = [w.id for w in fighter.sheet.weapons if w.id in fighter.held]
    spell = cmd.weapon is not None and "spell" in getattr(fighter.sheet.weapon(cmd.weapon), "properties", ())
    shield_named = cmd.weapon is not None and shield is not None and cmd.weapon == shield.id
    carried = cmd.weapon is not None and fighter.sheet.weapon(cmd.weapon) is not None
    named = ("" if cmd.weapon is None or cmd.weapon in held or spell else
             f"{cmd.weapon!r} is a shield, not a weapon to Parry with (a shield Blocks); " if shield_named else
             f"{cmd.weapon!r} is not in hand; " if carried else
             f"{fighter.sheet.id!r} has no weapon {cmd.weapon!r} (weapons: "
             f"{', '.join(w.id for w in fighter.sheet.weapons) or 'none'}); ")
    return f"{why} ({named}in hand: {', '.join(held) or 'no weapon'})"


def _said(defense: str | None) -> str:
    """An Active Defense answer in words: "a Dodge", "a Block", "declining"."""
    return f"a {defense.capitalize()}" if defense else "declining"


def _determine_hit(draft: Draft) -> None:
    """Hit iff attack total > total defense; crit by C7, effective only on a hit; then damage or routing."""
    frame = attack_frame(draft)
    attack, defense, crit = hit_numbers(draft.state, frame)
    hit = rules.hits(attack.total, defense.total)
    decl = frame.declaration
    draft.emit(HitDetermined(action=decl.action, attack=attack, defense=defense, hit=hit, crit_check=crit,
                             crit=hit and crit.exceeds))
    if hit and _catchable(draft, frame):  # C22: a thrown item about to hit is caught or not before anything on a hit
        draft.emit(CatchWindowOpened(action=frame.action, target=decl.target))
        return
    _determined(draft)


def determined_moment(draft: Draft) -> Moment:
    """The hook point ``attack.determined``: the totals, and whether it hit and crit (C5, C7)."""
    determined = attack_frame(draft).determination
    assert determined is not None
    return Moment(attack_total=determined.attack.total, defense_total=determined.defense.total,
                  hit=determined.hit, crit=determined.crit)


def _determined(draft: Draft) -> None:
    """The hook point ``attack.determined`` (its decision points, C38), then routing or damage. A thrown item that
    would hit comes here only once its Catch window is answered and it was let hit (C22; docs/rulings.md, "A Catch
    is automatic once paid"): a caught item has no on-hit effects, an ability's at this moment included."""
    if open_window(draft, "attack.determined", determined_moment):
        return
    after_catch(draft)


def _catchable(draft: Draft, frame: AttackFrame) -> bool:
    """A thrown item about to hit opens a Catch window for a target who can act (C10, C36) and pay (C22). An item is
    thrown only in a ranged attack: a melee attack with a weapon marked ``thrown`` (an Interrupt's, an Attack of
    Opportunity's: C23, C24) strikes with it in hand, and there is nothing in flight to catch (docs/rulings.md, "A
    weapon is thrown only in a ranged attack")."""
    target = draft.combatant(frame.declaration.target)
    return (frame.weapon is not None and rules.is_thrown(frame.weapon.properties, frame.declaration.kind)
            and not target.helpless and target.bonus_actions >= draft.ruleset.reaction_costs.catch)


def after_catch(draft: Draft) -> None:
    """A hit that was not caught: a Rogue's routing window on an Unseen attack (C12, "Rogue (unseen
    expansion)" in §Dice-Pool and Result-Routing Modifiers), else damage."""
    frame = attack_frame(draft)
    decl = frame.declaration
    assert frame.determination is not None and frame.hit_roll is not None
    if frame.determination.hit and routes(draft.state, frame):
        draft.emit(RoutingWindowOpened(action=decl.action, attacker=decl.attacker, dice=frame.hit_roll.dice))
        return
    _resolve_outcome(draft)


def route_damage(draft: Draft, cmd: RouteDamage) -> None:
    """The Rogue picks the hit-pool die whose result feeds damage (C12); the hit total is unchanged."""
    draft.require("route", rule="C12", why="no routing window is open")
    opened = attack_frame(draft).routing
    assert opened is not None
    if cmd.attacker != opened.attacker:
        raise RuleViolation("C12", f"the routing choice is {opened.attacker}'s, not {cmd.attacker}'s")
    if cmd.die is not None and cmd.die >= len(opened.dice):
        raise RuleViolation("C12", f"die {cmd.die} is not in the hit pool (dice 0 to {len(opened.dice) - 1})")
    draft.emit(DamageRouted(action=opened.action, attacker=cmd.attacker, die=cmd.die))
    _resolve_outcome(draft)


def answer_catch(draft: Draft, cmd: AnswerCatch) -> None:
    """The target catches the thrown item (1 Bonus Action, C22: no damage, no on-hit effects) or lets it hit."""
    draft.able(cmd.who, "catch")  # C10, C36 first: a Catch window is never open to one who cannot act
    draft.require("catch" if cmd.catch else "decline_catch", rule="C22", why="no Catch window is open")
    opened = attack_frame(draft).catch_window
    assert opened is not None
    if cmd.who != opened.target:
        raise RuleViolation("C22", f"the Catch window is {opened.target}'s, not {cmd.who}'s")
    draft.emit(CatchAnswered(action=opened.action, who=cmd.who, caught=cmd.catch))
    if not cmd.catch:
        _determined(draft)
        return
    cost = draft.ruleset.reaction_costs.catch
    draft.emit(CostPaid(action=opened.action, who=cmd.who, resource="bonus_action", amount=cost, purpose="Catch"))
    finish(draft, attack_frame(draft).declaration)


def finish(draft: Draft, decl: AttackDeclared) -> None:
    """Attacking from hiding ends Unseen (C27); the action settles, once the decision points due if it applied a
    condition have closed (C38)."""
    if draft.combatant(decl.attacker).unseen:
        draft.emit(ConditionCleared(action=decl.action, who=decl.attacker, condition="Unseen",
                                    reason="attacked from hiding: no longer Unseen (C27)"))
    settle(draft)


def _resolve_outcome(draft: Draft) -> None:
    """Damage on a hit, then the branches in written order (C25); Unseen ends (C27); the action settles. A
    defender who chooses where the damage lands (C31) is asked first; the answer goes on from there."""
    frame = attack_frame(draft)
    decl, determined, weapon = frame.declaration, frame.determination, frame.weapon
    assert determined is not None
    if determined.hit:
        added = [(*die, handler.origin) for handler in pool_dice("damage", draft.state)
                 for die in handler.dice(draft.state, frame)]
        if added:  # abilities' damage dice (Brute Rage's as recorded since its first fights), rolled on a hit (C12)
            draft.roll("damage" if decl.rage else "ability_damage", decl.attacker,
                       [(tag, sides) for tag, sides, _o in added], origins=tuple(o for *_d, o in added))
        terms = damage_terms(draft.state, attack_frame(draft))
        if not land_damage(draft, decl.action, decl.target, terms, attack_damage_type(frame),
                           spell=rules.is_spell(decl.kind), source=weapon.label if weapon else "unarmed", then=0):
            return
    resume_branch(draft, attack_frame(draft), 0)


def attack_branch(frame: AttackFrame) -> tuple[Consequence, ...]:
    """The consequences an attack resolves (C25): on a hit its on-hit ones, then on a crit its on-crit ones; on
    a miss its on-miss ones."""
    b, determined = frame.declaration.branches, frame.determination
    assert determined is not None
    return (*b.on_hit, *(b.on_crit if determined.crit else ())) if determined.hit else tuple(b.on_miss)


def resume_branch(draft: Draft, frame: AttackFrame, start: int) -> None:
    """An attack's consequences from index ``start`` (C25), then the decision points due at the hook point
    ``attack.damaged`` (C38), then it ends (C27), unless one waits on a choice."""
    decl = frame.declaration
    ctx = Context(action=decl.action, actor=decl.attacker, target=decl.target, spell=rules.is_spell(decl.kind),
                  source=branch_source(decl))
    if run_consequences(draft, ctx, attack_branch(frame), start):
        if open_window(draft, "attack.damaged", damaged_moment):
            return
        finish(draft, decl)


def branch_source(decl: AttackDeclared) -> str:
    """What the damage and conditions of an attack's branches name as their source."""
    return f"attack {decl.action}"


def damage_taken(frame: AttackFrame) -> int:
    """The damage the attack itself dealt its target (C13): its hit's and its branches', not what an ability
    answering it did (C38: that opens no decision point)."""
    decl, weapon = frame.declaration, frame.weapon
    own = (weapon.label if weapon else "unarmed", branch_source(decl))
    return sum(d.final for d in frame.damage if d.target == decl.target and d.source in own)


def damaged_moment(draft: Draft) -> Moment:
    """The hook point ``attack.damaged``: the totals, the hit and the crit, and the damage its target took."""
    frame = attack_frame(draft)
    determined = frame.determination
    assert determined is not None
    return Moment(attack_total=determined.attack.total, defense_total=determined.defense.total,
                  hit=determined.hit, crit=determined.crit, damage=damage_taken(frame))


def _settle(draft: Draft) -> None:
    """The attack ends once the decision points at ``attack.damaged`` have closed (C27)."""
    finish(draft, attack_frame(draft).declaration)


#: Each hook point of an attack: what it knows (its :class:`~omen_core.hooks.Moment`) and how the attack goes on
#: from it once its decision points have closed (:mod:`omen_core.decide.windows`).
RESUMES: dict[str, Resume] = {
    "attack.declared": (nothing_rolled, _roll),
    "attack.rolled": (rolled_moment, _open_or_skip_window),
    "attack.determined": (determined_moment, after_catch),
    "attack.damaged": (damaged_moment, _settle),
}
