"""Deciding an attack, from declaration to settled damage (combat.txt §Resolving an Attack; C4-C13, C26, C27).

The numbers are computed by :func:`hit_numbers` and :func:`damage_terms`
from the action's recorded events and the state, the same functions the
audit uses to recompute them.
"""

from __future__ import annotations

from ..content import CombatantSheet, Weapon
from ..errors import RuleViolation
from ..events import (
    ActionSettled,
    ActiveDefenseChosen,
    ActiveDefenseDeclined,
    ActiveDefenseTotal,
    ActiveDefenseWindowOpened,
    ActiveDefenseWindowSkipped,
    AttackDeclared,
    CatchAnswered,
    CatchWindowOpened,
    ConditionCleared,
    CostPaid,
    CritCheck,
    DamageRouted,
    DamageTerms,
    DefenseTotal,
    DiceRolled,
    EngagementChanged,
    HitDetermined,
    HitTotal,
    Modifier,
    RoutingWindowOpened,
)
from ..machine import Phase
from ..rules import attack as rules
from ..rules.mitigation import armor_applies
from ..rules.modifiers import HIGH_GROUND, encircled_bonus, prone_target_bonus
from ..state import FightState, PendingAction
from .commands import AnswerActiveDefense, AnswerCatch, DeclareAttack, RouteDamage
from .draft import Draft, effective_bonus
from .effects import apply_consequences, check_consequences, deal_damage
from .flow import require_turn
from .reactions import open_interrupts

__all__ = ["declare_attack", "declare", "pay_and_roll", "answer_active_defense", "answer_catch", "after_catch",
           "route_damage", "hit_numbers", "damage_terms", "defense_ineligibility"]

UNARMED_DAMAGE = "crushing"


def declare_attack(draft: Draft, cmd: DeclareAttack) -> None:
    """Declare an attack on one's turn (an Action, C20); adjacent enemies may Interrupt before costs are
    paid (C24); then pay, roll hit and base defense, and open the Active Defense window or resolve on."""
    draft.require("declare")
    require_turn(draft, cmd.attacker, "attack")
    if draft.state.phase is Phase.ROUNDS and draft.state.turn_actions < 1:
        raise RuleViolation("C20", f"{cmd.attacker!r} has no Action left this turn (1 Action per turn)")
    declare(draft, cmd)
    if not open_interrupts(draft, cmd.attacker):
        pay_and_roll(draft)


def declare(draft: Draft, cmd: DeclareAttack, reaction: str | None = None, reacting_to: int | None = None) -> None:
    """Check and record the declaration of an attack (a plain one, or a reaction to another action)."""
    attacker, target = draft.combatant(cmd.attacker), draft.combatant(cmd.target)
    if attacker.id == target.id:
        raise RuleViolation("§Resolving an Attack", f"{attacker.id!r} cannot attack itself")
    if attacker.helpless:
        raise RuleViolation("C10", f"{attacker.id!r} is incapacitated or paralysed and cannot attack")
    weapon = _weapon(attacker.sheet, cmd, attacker.wielding)
    kind = rules.attack_kind(weapon.properties if weapon else None)
    if reaction is not None and rules.is_ranged(kind):
        raise RuleViolation("C24" if reaction == "interrupt" else "C23",
                            f"an {reaction.replace('_', ' ')} is a melee attack; {weapon.label} is ranged")
    if cmd.rage and attacker.sheet.features.rage is None:
        raise RuleViolation("C12", f"{attacker.id!r} has no Brute rage dice to add")
    b = cmd.branches
    check_consequences(draft, [*b.on_hit, *b.on_miss, *b.on_crit], "the attack's branches")
    if reaction is None and not rules.is_ranged(kind) and not draft.state.engaged(attacker.id, target.id):
        # A melee attack is made within reach: declaring one states it, so the target's side sees an adjacent
        # enemy act (C24) and leaving reach later provokes (C23). Recorded, never assumed silently.
        draft.emit(EngagementChanged(who=attacker.id, others=(target.id,), engaged=True))
    draft.emit(AttackDeclared(
        action=draft.state.actions + 1, attacker=attacker.id, target=target.id,
        weapon=weapon.id if weapon else None, kind=kind, situational=cmd.situational, rage=cmd.rage,
        damage_modifiers=cmd.damage_modifiers, branches=cmd.branches, reaction=reaction,
        reacting_to=reacting_to))


def pay_and_roll(draft: Draft) -> None:
    """Pay the attack's cost (an Action, or Bonus Actions for a reaction, C22), roll, open or skip the window."""
    decl = _declaration(draft.state)
    costs = draft.ruleset.reaction_costs
    if decl.reaction is None:
        draft.emit(CostPaid(action=decl.action, who=decl.attacker, resource="action", amount=1, purpose="attack"))
    else:
        amount = costs.interrupt if decl.reaction == "interrupt" else costs.attack_of_opportunity
        draft.emit(CostPaid(action=decl.action, who=decl.attacker, resource="bonus_action", amount=amount,
                            purpose=decl.reaction.replace("_", " ")))
    _roll_hit_and_defense(draft)
    _open_or_skip_window(draft)


def _weapon(sheet: CombatantSheet, cmd: DeclareAttack, wielding: tuple[str, ...] | None = None) -> Weapon | None:
    """The weapon named, else the first one in hand; None for an unarmed attack (C12)."""
    if cmd.unarmed:
        return None
    if cmd.weapon is None:
        wielded = [w for w in sheet.weapons if w.id in wielding] if wielding is not None else sheet.wielded()
        return wielded[0] if wielded else None
    weapon = sheet.weapon(cmd.weapon)
    if weapon is None:
        have = ", ".join(w.id for w in sheet.weapons) or "none"
        raise RuleViolation("C4", f"{sheet.id!r} has no weapon {cmd.weapon!r} (weapons: {have})")
    return weapon


def _roll_hit_and_defense(draft: Draft) -> None:
    """C29: attacker primary dice, attacker FCS dice, then the defender's RES die (none if helpless, C10)."""
    decl = _declaration(draft.state)
    attacker = draft.sheet(decl.attacker)
    weapon = attacker.weapon(decl.weapon) if decl.weapon else None
    primary = rules.primary_attribute(decl.kind, weapon is not None and "finesse" in weapon.properties)
    n_primary = 1 + attacker.features.extra_primary_dice
    n_fcs = 1 + (1 if draft.combatant(decl.attacker).unseen else 0)
    pool = ([("primary", attacker.attributes[primary].sides)] * n_primary
            + [("fcs", attacker.attributes.FCS.sides)] * n_fcs)
    draft.roll("hit", decl.attacker, pool)
    target = draft.combatant(decl.target)
    if not target.helpless:
        draft.roll("base_defense", decl.target, [("res", target.sheet.attributes.RES.sides)])


def _open_or_skip_window(draft: Draft) -> None:
    """C8: open the window only if the attack would hit, the defender can act, has a Bonus Action and a defense."""
    state = draft.state
    decl = _declaration(state)
    target = draft.combatant(decl.target)
    attack, defense, _ = hit_numbers(state, state.pending)
    cost = draft.ruleset.reaction_costs.active_defense
    refusals = {d: defense_ineligibility(state, decl, d) for d in rules.ACTIVE_DEFENSES}
    eligible = tuple(d for d, why in refusals.items() if why is None)
    reason = None
    if target.helpless:
        reason = "the defender is incapacitated or paralysed: no base defense die and no Active Defense (C10)"
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


def defense_ineligibility(state: FightState, decl: AttackDeclared, defense: str,
                          weapon_id: str | None = None) -> str | None:
    """Why the target may not use ``defense`` against this attack (C9), or None if it may."""
    target = state.combatants[decl.target]
    sheet = target.sheet
    parry_weapon = _parry_weapon(sheet, weapon_id, target.wielding)
    return rules.ineligibility(
        defense, decl.kind, prone=target.prone, weapon=parry_weapon is not None,
        magical_weapon=parry_weapon is not None and "magical" in parry_weapon.properties,
        shield=sheet.shield is not None, magical_shield=sheet.shield is not None and sheet.shield.magical,
        veteran_shield=sheet.training.veteran_shield)


def _parry_weapon(sheet: CombatantSheet, weapon_id: str | None, wielding: tuple[str, ...]) -> Weapon | None:
    """The weapon in hand a Parry uses: the one named, else the first in hand (C9)."""
    wielded = [w for w in sheet.weapons if w.id in wielding]
    if weapon_id is None:
        return wielded[0] if wielded else None
    return next((w for w in wielded if w.id == weapon_id), None)


def answer_active_defense(draft: Draft, cmd: AnswerActiveDefense) -> None:
    """The defender's answer (C8, C9): decline, or pay a Bonus Action and roll Dodge, Parry or Block."""
    trigger = "decline" if cmd.defense is None else "choose_defense"
    draft.require(trigger, rule="C8", why="no Active Defense window is open (at most one Active Defense "
                                          "per attack, answered while its window is open)")
    state = draft.state
    opened = state.pending.first(ActiveDefenseWindowOpened)
    if cmd.defender != opened.defender:
        raise RuleViolation("C8", f"the open window is {opened.defender!r}'s, not {cmd.defender!r}'s")
    if cmd.defense is None:
        draft.emit(ActiveDefenseDeclined(action=opened.action, defender=cmd.defender))
        _determine_hit(draft)
        return
    decl = _declaration(state)
    why = defense_ineligibility(state, decl, cmd.defense, cmd.weapon)
    if why is not None:
        raise RuleViolation("C9", f"{cmd.defender!r} cannot {cmd.defense}: {why}")
    sheet = draft.sheet(cmd.defender)
    weapon = (_parry_weapon(sheet, cmd.weapon, draft.combatant(cmd.defender).wielding)
              if cmd.defense == "parry" else None)
    draft.emit(ActiveDefenseChosen(action=opened.action, defender=cmd.defender, defense=cmd.defense,
                                   weapon=weapon.id if weapon else None))
    draft.emit(CostPaid(action=opened.action, who=cmd.defender, resource="bonus_action",
                        amount=draft.ruleset.reaction_costs.active_defense, purpose=f"Active Defense ({cmd.defense})"))
    attribute = _active_attribute(cmd.defense, weapon)
    draft.roll("active_defense", cmd.defender, [("active", sheet.attributes[attribute].sides)])
    _determine_hit(draft)


def _active_attribute(defense: str, weapon: Weapon | None) -> str:
    """§Active Defense: Dodge rolls AGI; Parry the weapon's attribute (AGI if finesse, else STR); Block RES."""
    if defense == "dodge":
        return "AGI"
    if defense == "parry":
        return "AGI" if weapon is not None and "finesse" in weapon.properties else "STR"
    return "RES"


def _determine_hit(draft: Draft) -> None:
    """Hit iff attack total > total defense; crit by C7, effective only on a hit; then damage or routing."""
    state = draft.state
    attack, defense, crit = hit_numbers(state, state.pending)
    hit = rules.hits(attack.total, defense.total)
    decl = _declaration(state)
    draft.emit(HitDetermined(action=decl.action, attack=attack, defense=defense, hit=hit, crit_check=crit,
                             crit=hit and crit.exceeds))
    if hit and _catchable(draft, decl):
        draft.emit(CatchWindowOpened(action=decl.action, target=decl.target))
        return
    after_catch(draft)


def _catchable(draft: Draft, decl: AttackDeclared) -> bool:
    """A thrown item about to hit opens a Catch window for a target who can act and pay (C22)."""
    weapon = draft.sheet(decl.attacker).weapon(decl.weapon) if decl.weapon else None
    target = draft.combatant(decl.target)
    return (weapon is not None and "thrown" in weapon.properties and not target.helpless
            and target.bonus_actions >= draft.ruleset.reaction_costs.catch)


def after_catch(draft: Draft) -> None:
    """A hit that was not caught: a Rogue's routing window on an Unseen attack (C12, "Rogue (unseen
    expansion)" in §Dice-Pool and Result-Routing Modifiers), else damage."""
    state = draft.state
    decl = _declaration(state)
    determined = state.pending.first(HitDetermined)
    rogue = draft.sheet(decl.attacker).features.rogue_routing
    if determined.hit and rogue and draft.combatant(decl.attacker).unseen:
        hit_roll = _roll(state.pending, "hit")
        draft.emit(RoutingWindowOpened(action=decl.action, attacker=decl.attacker, dice=hit_roll.dice))
        return
    _resolve_outcome(draft)


def route_damage(draft: Draft, cmd: RouteDamage) -> None:
    """The Rogue picks the hit-pool die whose result feeds damage (C12); the hit total is unchanged."""
    draft.require("route", rule="C12", why="no routing window is open")
    opened = draft.state.pending.first(RoutingWindowOpened)
    if cmd.attacker != opened.attacker:
        raise RuleViolation("C12", f"the routing choice is {opened.attacker!r}'s, not {cmd.attacker!r}'s")
    if cmd.die is not None and cmd.die >= len(opened.dice):
        raise RuleViolation("C12", f"die {cmd.die} is not in the hit pool (dice 0 to {len(opened.dice) - 1})")
    draft.emit(DamageRouted(action=opened.action, attacker=cmd.attacker, die=cmd.die))
    _resolve_outcome(draft)


def answer_catch(draft: Draft, cmd: AnswerCatch) -> None:
    """The target catches the thrown item (1 Bonus Action, C22: no damage, no on-hit effects) or lets it hit."""
    draft.require("catch" if cmd.catch else "decline_catch", rule="C22", why="no Catch window is open")
    opened = draft.state.pending.first(CatchWindowOpened)
    if cmd.who != opened.target:
        raise RuleViolation("C22", f"the Catch window is {opened.target!r}'s, not {cmd.who!r}'s")
    draft.emit(CatchAnswered(action=opened.action, who=cmd.who, caught=cmd.catch))
    if not cmd.catch:
        after_catch(draft)
        return
    cost = draft.ruleset.reaction_costs.catch
    draft.emit(CostPaid(action=opened.action, who=cmd.who, resource="bonus_action", amount=cost, purpose="Catch"))
    _finish(draft, _declaration(draft.state))


def _finish(draft: Draft, decl: AttackDeclared) -> None:
    """Attacking from hiding ends Unseen (C27); the action settles."""
    if draft.combatant(decl.attacker).unseen:
        draft.emit(ConditionCleared(action=decl.action, who=decl.attacker, condition="Unseen",
                                    reason="attacked from hiding: no longer Unseen (C27)"))
    draft.emit(ActionSettled(action=decl.action))


def _resolve_outcome(draft: Draft) -> None:
    """Damage on a hit, then the branches in written order (C25); Unseen ends (C27); the action settles."""
    state = draft.state
    decl = _declaration(state)
    determined = state.pending.first(HitDetermined)
    weapon = draft.sheet(decl.attacker).weapon(decl.weapon) if decl.weapon else None
    spell = rules.is_spell(decl.kind)
    b = decl.branches
    if determined.hit:
        if decl.rage:
            rage = draft.sheet(decl.attacker).features.rage
            draft.roll("damage", decl.attacker, [("damage", rage.sides)] * rage.count)
        terms = damage_terms(draft.state, draft.state.pending)
        damage_type = weapon.damage_type if weapon else UNARMED_DAMAGE
        deal_damage(draft, decl.action, decl.target, terms, damage_type, spell=spell,
                    source=weapon.label if weapon else "unarmed")
        branch = (*b.on_hit, *(b.on_crit if determined.crit else ()))
    else:
        branch = b.on_miss
    apply_consequences(draft, decl.action, branch, actor=decl.attacker, target=decl.target, spell=spell,
                       source=f"attack {decl.action}")
    _finish(draft, decl)


# -- the numbers, from the action's events --------------------------------------------------


def _declaration(state: FightState) -> AttackDeclared:
    assert state.pending is not None
    decl = state.pending.first(AttackDeclared)
    assert decl is not None
    return decl


def _roll(pending: PendingAction, purpose: str) -> DiceRolled | None:
    return next((r for r in pending.all(DiceRolled) if r.purpose == purpose), None)


def _fcs(pending: PendingAction) -> list[int]:
    return [d.face for d in _roll(pending, "hit").dice if d.pool == "fcs"]


def hit_numbers(state: FightState, pending: PendingAction) -> tuple[HitTotal, DefenseTotal, CritCheck]:
    """The hit total (C5), the defense (C10, C11 and any Active Defense) and the crit check (C7)."""
    decl = pending.first(AttackDeclared)
    attack = _hit_total(state, decl, _roll(pending, "hit"))
    defense = _defense_total(state, decl, pending)
    res_die = defense.res_die
    fcs = tuple(_fcs(pending))
    fcs_bonus = effective_bonus(state, decl.attacker, "FCS")
    fcs_portion = rules.fcs_portion(fcs, fcs_bonus)
    res_portion = rules.res_portion(res_die, defense.res_bonus)
    crit = CritCheck(fcs_dice=fcs, fcs_bonus=fcs_bonus, fcs_portion=fcs_portion, res_die=res_die,
                     res_bonus=defense.res_bonus, res_portion=res_portion,
                     exceeds=rules.is_crit(fcs_portion, res_portion))
    return attack, defense, crit


def _hit_total(state: FightState, decl: AttackDeclared, hit_roll: DiceRolled) -> HitTotal:
    sheet = state.combatants[decl.attacker].sheet
    weapon = sheet.weapon(decl.weapon) if decl.weapon else None
    attribute = rules.primary_attribute(decl.kind, weapon is not None and "finesse" in weapon.properties)
    primary = tuple(d.face for d in hit_roll.dice if d.pool == "primary")
    fcs = tuple(d.face for d in hit_roll.dice if d.pool == "fcs")
    bonus = effective_bonus(state, decl.attacker, attribute)
    weapon_bonus = weapon.hit_bonus if weapon else 0
    situational = _situational(state, decl)
    total = rules.hit_total(primary, fcs, rules.static_bonus(bonus, weapon_bonus, sheet.training.hit_bonus),
                            sum(m.value for m in situational))
    return HitTotal(attribute=attribute, primary_dice=primary, fcs_dice=fcs, attribute_bonus=bonus,
                    weapon_hit_bonus=weapon_bonus, training_bonus=sheet.training.hit_bonus,
                    situational=situational, total=total)


def _situational(state: FightState, decl: AttackDeclared) -> tuple[Modifier, ...]:
    """High ground (+2), encircled (C26) and a prone target (C27), each with where it came from."""
    mods = []
    if decl.situational.high_ground:
        mods.append(Modifier(source="high ground (C27)", value=HIGH_GROUND))
    circle = decl.situational.encircled
    if circle is not None:
        bonus = encircled_bonus(circle.attackers, circle.defenders)
        note = "" if bonus else f": not 2 to 1 ({circle.attackers} < 2 x {circle.defenders}), no bonus"
        mods.append(Modifier(source=f"encircled, {circle.attackers} vs {circle.defenders}{note} (C26)", value=bonus))
    if state.combatants[decl.target].prone:
        ranged = rules.is_ranged(decl.kind)
        mods.append(Modifier(source=f"prone target, {'ranged' if ranged else 'melee'} (C27)",
                             value=prone_target_bonus(ranged)))
    return tuple(mods)


def _defense_total(state: FightState, decl: AttackDeclared, pending: PendingAction) -> DefenseTotal:
    target = state.combatants[decl.target]
    sheet = target.sheet
    attacker_weapon = state.combatants[decl.attacker].sheet.weapon(decl.weapon) if decl.weapon else None
    damage_type = attacker_weapon.damage_type if attacker_weapon else UNARMED_DAMAGE
    physical = state.ruleset is not None and damage_type in state.ruleset.damage_types.physical
    armor = sheet.armor
    applies = armor is not None and armor_applies(magical_armor=armor.magical, spell_attack=rules.is_spell(decl.kind),
                                                  physical_damage=physical)
    res_roll = _roll(pending, "base_defense")
    res_die = res_roll.dice[0].face if res_roll else None
    res_bonus = effective_bonus(state, decl.target, "RES")
    rating = rules.defense_rating(res_bonus, armor.rating if armor else 0, applies)
    base = rules.base_defense(res_die, rating)
    active = _active_total(state, pending)
    return DefenseTotal(res_die=res_die, res_bonus=res_bonus, armor=armor.rating if applies else 0,
                        armor_applies=applies, defense_rating=rating, base=base, active=active,
                        total=base + (active.amount if active else 0))


def _active_total(state: FightState, pending: PendingAction) -> ActiveDefenseTotal | None:
    chosen = pending.first(ActiveDefenseChosen)
    rolled = _roll(pending, "active_defense")
    if chosen is None or rolled is None:
        return None
    sheet = state.combatants[chosen.defender].sheet
    weapon = sheet.weapon(chosen.weapon) if chosen.weapon else None
    attribute = _active_attribute(chosen.defense, weapon)
    bonus = effective_bonus(state, chosen.defender, attribute)
    rating = {"dodge": 0, "parry": weapon.parry_rating if weapon else 0,
              "block": sheet.shield.block_rating if sheet.shield else 0}[chosen.defense]
    die = rolled.dice[0].face
    return ActiveDefenseTotal(defense=chosen.defense, attribute=attribute, die=die, attribute_bonus=bonus,
                              rating=rating, amount=die + bonus + rating)


def damage_terms(state: FightState, pending: PendingAction) -> DamageTerms:
    """C12: the damage formula from the hit roll (or the routed die), bonuses, WD, crit and rage dice."""
    decl = pending.first(AttackDeclared)
    determined = pending.first(HitDetermined)
    hit_roll = _roll(pending, "hit")
    routed = pending.first(DamageRouted)
    routed_die = routed.die if routed else None
    primary_sum = sum(determined.attack.primary_dice)
    dice_result = hit_roll.dice[routed_die].face if routed_die is not None else primary_sum
    sheet = state.combatants[decl.attacker].sheet
    weapon = sheet.weapon(decl.weapon) if decl.weapon else None
    rage = _roll(pending, "damage") if decl.rage else None
    rage_faces = tuple(d.face for d in rage.dice) if rage else ()
    d = rules.damage(dice_result=dice_result, primary_bonus=determined.attack.attribute_bonus,
                     weapon_damage=weapon.weapon_damage if weapon else 0, crit=determined.crit,
                     unarmed=weapon is None, ability_dice=rage_faces,
                     modifiers=sum(m.value for m in decl.damage_modifiers))
    return DamageTerms(dice=d.dice, routed_die=routed_die, primary_bonus=d.primary_bonus,
                       crit_bonus=d.crit_bonus, weapon_damage=d.weapon_damage, ability_dice=rage_faces,
                       modifiers=decl.damage_modifiers, raw=d.raw)
