"""The numbers of a fight, derived from the state and an action's frame: decide records them, verify recomputes
them, explain shows them term by term, all through these functions.

Hit total (C5), defense (C10, C11, §Active Defense), the crit check (C7),
damage terms (C12), mitigation (C13), the roll primitive of a check or save
(C1, C2), and whether an Active Defense is allowed (C9). Pure: the rule math
itself is in :mod:`omen_core.rules`; this module feeds it what the state and
the frame say.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Literal, NamedTuple

from .content import CombatantSheet, Weapon
from .events import (
    ActiveDefenseTotal,
    AttackDeclared,
    CritCheck,
    DamageTerms,
    DefenseTotal,
    DiceRolled,
    HitTotal,
    MitigationStep,
    Modifier,
    RollTotal,
)
from .extensions import landing as landing_handlers
from .extensions import overrides, term_handlers
from .hooks import Total
from .rules import attack as rules
from .rules.checks import roll_total
from .rules.mitigation import armor_applies, mitigate
from .rules.modifiers import HIGH_GROUND, encircled_bonus, prone_target_bonus
from .rules.odds import at_least
from .state import AttackFrame, FightState, condition_adjustment, effective_bonus

__all__ = ["override_allowing", "UNARMED_DAMAGE", "BonusSource", "bonus_source", "check_total", "hit_numbers",
           "hit_total",
           "situational", "added_terms", "condition_terms", "defense_total", "active_attribute", "DefenseChance",
           "defense_chance",
           "parry_weapon",
           "defense_ineligibility", "attack_damage_type", "damage_terms", "mitigation_for", "landing",
           "will_choice_due", "lands_on", "ActiveDefenseAdds", "active_defense_adds", "StrikeNumbers", "strike_bonus",
           "Standing", "standing_hit"]

#: C12: an unarmed attack deals crushing damage.
UNARMED_DAMAGE = "crushing"


class BonusSource(NamedTuple):
    """An attribute bonus as it stands, split by where it comes from: the sheet, and the conditions (C1, C28)."""

    sheet: int
    conditions: int
    held: tuple[tuple[str, int], ...]

    @property
    def total(self) -> int:
        """The effective bonus."""
        return self.sheet + self.conditions

    def held_words(self) -> str:
        """The conditions that change it, in words (``Fatigued x2, Exhausted x1``; "" for none)."""
        return ", ".join(f"{name} x{stacks}" for name, stacks in self.held)


def bonus_source(state: FightState, who: str, attribute: str) -> BonusSource:
    """Where a combatant's ``attribute`` bonus comes from right now; ``held``: the conditions that change it
    (C28: a condition whose attribute bonus is 0, Burning's say, changes none)."""
    fighter = state.combatants[who]
    defs = state.ruleset.conditions if state.ruleset is not None else {}
    return BonusSource(fighter.sheet.attributes[attribute].bonus, condition_adjustment(state, who),
                       tuple((name, stacks) for name, stacks in fighter.conditions.items()
                             if name in defs and defs[name].attribute_bonus))


def check_total(state: FightState, who: str, attribute: str, skill: str | None, level: int, rolled: DiceRolled,
                modifiers: tuple[Modifier, ...]) -> RollTotal:
    """One side of a check or save by the roll primitive (C1, C2): its die, bonus, skill level and modifiers."""
    face = rolled.dice[0].face
    bonus = effective_bonus(state, who, attribute)
    return RollTotal(roller=who, attribute=attribute, skill=skill, counter=rolled.counter, face=face,
                     attribute_bonus=bonus, skill_level=level, modifiers=modifiers,
                     total=roll_total(face, bonus, level, (m.value for m in modifiers)))


def hit_numbers(state: FightState, frame: AttackFrame) -> tuple[HitTotal, DefenseTotal, CritCheck]:
    """The hit total (C5), the defense (C10, C11 and any Active Defense) and the crit check (C7)."""
    decl = frame.declaration
    attack = hit_total(state, frame)
    defense = defense_total(state, frame)
    fcs = attack.fcs_dice
    fcs_bonus = effective_bonus(state, decl.attacker, "FCS")
    fcs_portion = rules.fcs_portion(fcs, fcs_bonus)
    res_portion = rules.res_portion(defense.res_die, defense.res_bonus)
    crit = CritCheck(fcs_dice=fcs, fcs_bonus=fcs_bonus, fcs_portion=fcs_portion, res_die=defense.res_die,
                     res_bonus=defense.res_bonus, res_portion=res_portion,
                     exceeds=rules.is_crit(fcs_portion, res_portion))
    return attack, defense, crit


class Standing(NamedTuple):
    """An attack's hit total and defense as they stand, and whether it hits on them (§Hit Determination); the
    attacker's and the defender's ids."""

    attacker: str
    defender: str
    attack: int
    defense: int
    hit: bool
    determined: bool

    def said(self, attacker: str, defender: str) -> str:
        """In words, naming the attacker and the defender as the reader knows them."""
        how = "determined" if self.determined else "as it stands"
        return (f"{attacker}'s hit total {self.attack} against {defender}'s defense {self.defense}: "
                f"{'a hit' if self.hit else 'a miss'}, {how} (the defender wins ties, §Hit Determination)")


def standing_hit(state: FightState, frame: object) -> Standing | None:
    """What a decision inside an attack turns on: the hit total against the defense (C5, C10, C11), the
    determination's once the hit is determined, else as it stands once the hit roll and the base defense roll are
    in (as the hook point ``attack.rolled`` sees them: no Active Defense yet); None for another action, or before."""
    if not isinstance(frame, AttackFrame):
        return None
    decl, made = frame.declaration, frame.determination
    if made is not None:
        return Standing(decl.attacker, decl.target, made.attack.total, made.defense.total, made.hit, True)
    if frame.hit_roll is None or frame.base_defense_roll is None:
        return None
    attack, defense, _ = hit_numbers(state, frame)
    return Standing(decl.attacker, decl.target, attack.total, defense.total, rules.hits(attack.total, defense.total),
                    False)


def hit_total(state: FightState, frame: AttackFrame) -> HitTotal:
    """C5: Σ primary dice + Σ FCS dice + primary bonus + weapon hit bonus + training bonus + situational."""
    decl, weapon = frame.declaration, frame.weapon
    assert frame.hit_roll is not None
    sheet = state.combatants[decl.attacker].sheet
    attribute = rules.primary_attribute(decl.kind, weapon is not None and "finesse" in weapon.properties)
    primary = tuple(d.face for d in frame.hit_roll.dice if d.pool == "primary")
    fcs = tuple(d.face for d in frame.hit_roll.dice if d.pool == "fcs")
    bonus = effective_bonus(state, decl.attacker, attribute)
    weapon_bonus = weapon.hit_bonus if weapon else 0
    mods = situational(state, decl)
    added = added_terms("hit", state, frame)
    if added:
        mods = (*mods, *added)
    total = rules.hit_total(primary, fcs, rules.static_bonus(bonus, weapon_bonus, sheet.training.hit_bonus),
                            sum(m.value for m in mods))
    return HitTotal(attribute=attribute, primary_dice=primary, fcs_dice=fcs, attribute_bonus=bonus,
                    weapon_hit_bonus=weapon_bonus, training_bonus=sheet.training.hit_bonus, situational=mods,
                    total=total)


def situational(state: FightState, decl: AttackDeclared) -> tuple[Modifier, ...]:
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


def added_terms(total: Total, state: FightState, frame: AttackFrame) -> tuple[Modifier, ...]:
    """The terms added to ``total`` of this attack after the rules' own, each naming its source: the conditions' per
    stack (C28: the attacker's on the hit total and the damage, the target's on the defense), then the extensions'
    (:mod:`omen_core.hooks`), in the order they are registered."""
    handlers = term_handlers(state, total)
    conditions = condition_terms(total, state, frame)
    return (*conditions, *(m for handler in handlers for m in handler.terms(state, frame))) if handlers \
        else conditions


def condition_terms(total: Total, state: FightState, frame: AttackFrame) -> tuple[Modifier, ...]:
    """Each condition's modifier per stack to ``total`` (C28), times its stacks, named after it (``Marked x2``)."""
    decl = frame.declaration
    fighter = state.combatants[decl.target if total == "defense" else decl.attacker]
    if not fighter.conditions or state.ruleset is None:
        return ()
    defs = state.ruleset.conditions
    return tuple(Modifier(source=name if stacks == 1 else f"{name} x{stacks}",
                          value=getattr(defs[name].modifiers, total) * stacks, origin="condition")
                 for name, stacks in fighter.conditions.items()
                 if stacks and name in defs and getattr(defs[name].modifiers, total))


def attack_damage_type(frame: AttackFrame) -> str:
    """The damage type of the attack's own damage: the weapon's, or crushing unarmed (C12, C14)."""
    return frame.weapon.damage_type if frame.weapon else UNARMED_DAMAGE


def defense_total(state: FightState, frame: AttackFrame, modifiers: tuple[Modifier, ...] = ()) -> DefenseTotal:
    """Base defense = RES die (none if helpless, C10) + Defense Rating (C11: RES bonus + armor if it applies +
    ``modifiers``, the terms contributed to the defense, then those the extensions add), plus any Active Defense."""
    added = added_terms("defense", state, frame)
    if added:
        modifiers = (*modifiers, *added)
    decl = frame.declaration
    sheet = state.combatants[decl.target].sheet
    physical = state.ruleset is not None and attack_damage_type(frame) in state.ruleset.damage_types.physical
    armor = sheet.armor
    applies = armor is not None and armor_applies(magical_armor=armor.magical, spell_attack=rules.is_spell(decl.kind),
                                                  physical_damage=physical)
    res_die = frame.base_defense_roll.dice[0].face if frame.base_defense_roll else None
    res_bonus = effective_bonus(state, decl.target, "RES")
    rating = rules.defense_rating(res_bonus, armor.rating if armor else 0, applies, sum(m.value for m in modifiers))
    base = rules.base_defense(res_die, rating)
    active = _active_total(state, frame)
    return DefenseTotal(res_die=res_die, res_bonus=res_bonus, armor=armor.rating if armor and applies else 0,
                        armor_applies=applies, modifiers=modifiers, defense_rating=rating, base=base, active=active,
                        total=base + (active.amount if active else 0))


def active_attribute(defense: str, weapon: Weapon | None) -> Literal["AGI", "STR", "RES"]:
    """§Active Defense: Dodge rolls AGI; Parry the weapon's attribute (AGI if finesse, else STR); Block RES."""
    if defense == "dodge":
        return "AGI"
    if defense == "parry":
        return "AGI" if weapon is not None and "finesse" in weapon.properties else "STR"
    return "RES"


class ActiveDefenseAdds(NamedTuple):
    """What an Active Defense adds to the defense (§Active Defense): its attribute's die (``sides``), that
    attribute's bonus as it stands, and the Parry or Block Rating."""

    attribute: Literal["AGI", "STR", "RES"]
    sides: int
    bonus: int
    rating: int


def active_defense_adds(state: FightState, defender: str, defense: str, weapon_id: str | None) -> ActiveDefenseAdds:
    """What ``defense`` (dodge, parry with ``weapon_id``, else the weapon in hand :func:`parry_weapon` picks against
    the attack in progress; block) would add for ``defender`` now."""
    fighter = state.combatants[defender]
    sheet = fighter.sheet
    frame = state.pending
    kind = frame.declaration.kind if isinstance(frame, AttackFrame) and frame.declaration.target == defender else None
    weapon = sheet.weapon(weapon_id) if weapon_id else (
        parry_weapon(sheet, None, fighter.wielding, kind) if defense == "parry" else None)
    attribute = active_attribute(defense, weapon)
    rating = {"dodge": 0, "parry": weapon.parry_rating if weapon else 0,
              "block": sheet.shield.block_rating if sheet.shield else 0}[defense]
    return ActiveDefenseAdds(attribute, sheet.attributes[attribute].sides, effective_bonus(state, defender, attribute),
                             rating)


def _active_total(state: FightState, frame: AttackFrame) -> ActiveDefenseTotal | None:
    chosen, rolled = frame.defense, frame.active_defense_roll
    if chosen is None or rolled is None:
        return None
    adds = active_defense_adds(state, chosen.defender, chosen.defense, chosen.weapon)
    die = rolled.dice[0].face
    return ActiveDefenseTotal(defense=chosen.defense, attribute=adds.attribute, die=die, attribute_bonus=adds.bonus,
                              rating=adds.rating, amount=die + adds.bonus + adds.rating)


class DefenseChance(NamedTuple):
    """The exact chance that an Active Defense turns a hit into a miss (C8): its dice (their sides), the total
    they must reach (``needs``), the chance (``miss``), and whether the hit is a crit as it stands (C7)."""

    dice: tuple[int, ...]
    needs: int
    miss: Fraction
    crit: bool


def defense_chance(state: FightState, frame: AttackFrame, defense: str | None, weapon_id: str | None,
                   crit: bool | None = None) -> DefenseChance:
    """At an open Active Defense window: the chance that answering with ``defense`` (None: declining; a Parry
    with ``weapon_id``, or the first weapon in hand) turns the hit into a miss. Hit iff attack total > base +
    die + bonus + rating (§Hit Determination), so a miss needs the die to reach attack total - base - bonus -
    rating (:func:`omen_core.rules.odds.at_least`); a miss cancels the crit (C7). ``crit``: whether the hit is a
    crit, if already known (the same for every answer)."""
    window = frame.window
    assert window is not None
    if crit is None:
        crit = hit_numbers(state, frame)[2].exceeds
    gap = window.attack_total - window.base_defense
    if defense is None:
        return DefenseChance((), gap, Fraction(0), crit)
    adds = active_defense_adds(state, window.defender, defense, weapon_id)
    sides = (adds.sides,)
    needs = gap - adds.bonus - adds.rating
    return DefenseChance(sides, needs, at_least(sides, needs), crit)


def parry_weapon(sheet: CombatantSheet, weapon_id: str | None, wielding: tuple[str, ...],
                 kind: str | None = None) -> Weapon | None:
    """The weapon in hand a Parry uses (C9, C35): the one named, else the first in hand that the table of §Which
    Defenses Apply lets parry an attack of ``kind`` (a magical one against a melee spell), else the first in hand.
    Every weapon in hand counts, in the sheet's order; a spell never does: it is no gear and is never held
    (docs/rulings.md, "A spell needs no hand")."""
    wielded = [w for w in sheet.weapons if w.id in wielding and "spell" not in w.properties]
    if weapon_id is not None:
        return next((w for w in wielded if w.id == weapon_id), None)
    fit = [w for w in wielded if kind is None or rules.parries(kind, w.properties)]  # type: ignore[arg-type]
    first = fit or wielded
    return first[0] if first else None


def defense_ineligibility(state: FightState, decl: AttackDeclared, defense: str,
                          weapon_id: str | None = None) -> str | None:
    """Why the target may not use ``defense`` against this attack (C9), or None if it may: an eligibility
    override (C37) lifts the table's refusal for the kind of attack only, never the gear it needs."""
    why = _table_refusal(state, decl, defense, weapon_id)
    if why is not None and _overridden(state, decl, defense, weapon_id) is not None:
        return None  # an eligibility override (Veteran Shield Training, C37)
    return why


def override_allowing(state: FightState, decl: AttackDeclared, defense: str, weapon_id: str | None = None
                      ) -> str | None:
    """The ability whose eligibility override let the target use ``defense`` against this attack although the
    table of §Which Defenses Apply refuses it (C37), or None if the table allows it (or nothing does)."""
    if _table_refusal(state, decl, defense, weapon_id) is None:
        return None
    return _overridden(state, decl, defense, weapon_id)


def _overridden(state: FightState, decl: AttackDeclared, defense: str, weapon_id: str | None) -> str | None:
    """The name of the first eligibility override allowing ``defense`` here, if the table refuses it for the kind of
    attack only (C37: a weapon or a shield in hand, C35, and a magical one against a spell are still needed)."""
    allowing = overrides(state)
    if not allowing or _table_refusal(state, decl, defense, weapon_id, lifted=True) is not None:
        return None
    return next((o.name or "an eligibility override" for o in allowing if o.allows(state, decl, defense)), None)


#: The kind of attack a Parry treats a ranged one as, once an override lifts the table's refusal for its kind.
_NEAR = {"ranged": "melee", "ranged_spell": "melee_spell"}


def _table_refusal(state: FightState, decl: AttackDeclared, defense: str, weapon_id: str | None,
                   lifted: bool = False) -> str | None:
    """Why the table of §Which Defenses Apply (C9) refuses ``defense`` against this attack, overrides aside;
    ``lifted``: with its refusal for the kind of attack lifted (a ranged Parry, a ranged Block; a Prone Dodge)."""
    target = state.combatants[decl.target]
    sheet = target.sheet
    kind = _NEAR.get(decl.kind, decl.kind) if lifted and defense == "parry" else decl.kind
    named = sheet.weapon(weapon_id) if weapon_id is not None else None
    if defense == "parry" and named is not None and "spell" in named.properties:
        return f"{named.label} is a spell, not a weapon to Parry with (C9; a spell is never held: docs/rulings.md)"
    weapon = parry_weapon(sheet, weapon_id, target.wielding, kind)  # none named: any in hand that may parry it
    why = rules.ineligibility(
        defense, kind, prone=target.prone and not (lifted and defense == "dodge"),  # type: ignore[arg-type]
        weapon=weapon is not None,
        magical_weapon=weapon is not None and "magical" in weapon.properties,
        shield=sheet.shield is not None and sheet.shield.id in target.wielding,
        magical_shield=sheet.shield is not None and sheet.shield.magical,
        veteran_shield=lifted)
    return why


def damage_terms(state: FightState, frame: AttackFrame) -> DamageTerms:
    """C12: the damage formula from the hit roll (or the routed die), bonuses, WD, crit and rage dice."""
    decl, determined, weapon = frame.declaration, frame.determination, frame.weapon
    assert determined is not None and frame.hit_roll is not None
    routed_die = frame.routed.die if frame.routed else None
    dice_result = (frame.hit_roll.dice[routed_die].face if routed_die is not None
                   else sum(determined.attack.primary_dice))
    rage = frame.rage_roll
    rage_faces = tuple(d.face for d in rage.dice) if rage else ()
    named = rage is not None and any(d.origin for d in rage.dice)  # the abilities that added them (C39)
    sources = tuple(d.origin or "rage" for d in rage.dice) if rage is not None and named else ()
    modifiers = decl.damage_modifiers
    added = added_terms("damage", state, frame)
    if added:
        modifiers = (*modifiers, *added)
    d = rules.damage(dice_result=dice_result, primary_bonus=determined.attack.attribute_bonus,
                     weapon_damage=weapon.weapon_damage if weapon else 0, crit=determined.crit,
                     unarmed=weapon is None, ability_dice=rage_faces,
                     modifiers=sum(m.value for m in modifiers))
    return DamageTerms(dice=d.dice, routed_die=routed_die, primary_bonus=d.primary_bonus,
                       crit_bonus=d.crit_bonus, weapon_damage=d.weapon_damage, ability_dice=rage_faces,
                       ability_sources=sources, modifiers=modifiers, raw=d.raw)


def mitigation_for(state: FightState, who: str, raw: int, damage_type: str, *, spell: bool
                   ) -> tuple[tuple[MitigationStep, ...], int]:
    """C13 for one combatant: the mitigation steps and the final damage (where it lands: :func:`landing`)."""
    sheet = state.combatants[who].sheet
    assert state.ruleset is not None
    physical = damage_type in state.ruleset.damage_types.physical
    armor = sheet.armor
    applies = armor is not None and armor_applies(magical_armor=armor.magical, spell_attack=spell,
                                                  physical_damage=physical)
    steps = mitigate(raw, resistance=sheet.resistances.get(damage_type, 0), physical=physical,
                     physical_resistance=sheet.resistances.get("physical", 0),
                     armor=armor.rating if armor else 0, armor_applies=applies,
                     multiply=sheet.incoming_damage.multiply, add=sheet.incoming_damage.add)
    return tuple(MitigationStep(step=s.step, amount=s.amount, after=s.after) for s in steps), steps[-1].after


def lands_on(state: FightState, who: str) -> Literal["will", "choice"] | None:
    """Where ``who``'s physical damage lands, as the extensions say (C31): "will", "choice" or None (on HP)."""
    for handler in landing_handlers(state):
        lands = handler.lands(state, who)
        if lands is not None:
            return lands
    return None


def will_choice_due(state: FightState, who: str, damage_type: str, final: int) -> bool:
    """C31: whether ``who`` chooses where this damage lands: a Will-conversion feature marked ``"choice"``,
    physical damage, something to convert, and Will left to take it (with none, all of it goes to HP anyway).
    A combatant at 0 HP makes no choice (C36): the damage lands as if it chose HP."""
    assert state.ruleset is not None
    fighter = state.combatants[who]
    return (lands_on(state, who) == "choice" and damage_type in state.ruleset.damage_types.physical
            and final > 0 and fighter.will > 0 and not fighter.dying)


def landing(state: FightState, who: str, damage_type: str, final: int, chosen: bool | None = None
            ) -> tuple[Literal["hp", "will"], int]:
    """Where final damage lands (C13, C31) and what overflows: ``("will", overflow)`` when physical damage is
    converted (automatically, or as the defender chose: ``chosen``), the overflow being the part beyond the
    Will left, which goes to HP; else ``("hp", 0)``."""
    assert state.ruleset is not None
    fighter = state.combatants[who]
    lands = lands_on(state, who)
    converts = damage_type in state.ruleset.damage_types.physical and (
        lands == "will" or (lands == "choice" and chosen is True))
    if not converts:
        return "hp", 0
    return "will", max(final - fighter.will, 0)


class StrikeNumbers(NamedTuple):
    """An attack's pool and bonuses before it is rolled (C4, C5, C12): the primary attribute and die, the FCS die,
    the hit bonus (primary bonus + weapon hit bonus + training, C5), and the damage bonus and Weapon Damage
    (unarmed: none, C12)."""

    attribute: str
    primary_sides: int
    fcs_sides: int
    hit_bonus: int
    damage_bonus: int
    weapon_damage: int


def strike_bonus(state: FightState, who: str, weapon_id: str | None) -> StrikeNumbers:
    """The numbers of ``who``'s attack with ``weapon_id`` (None: unarmed) as they stand now."""
    sheet = state.combatants[who].sheet
    weapon = sheet.weapon(weapon_id) if weapon_id else None
    kind = rules.attack_kind(weapon.properties if weapon else None)
    attribute = rules.primary_attribute(kind, weapon is not None and "finesse" in weapon.properties)
    bonus = effective_bonus(state, who, attribute)
    hit = rules.static_bonus(bonus, weapon.hit_bonus if weapon else 0, sheet.training.hit_bonus)
    return StrikeNumbers(attribute, sheet.attributes[attribute].sides, sheet.attributes["FCS"].sides, hit,
                         bonus if weapon else 0, weapon.weapon_damage if weapon else 0)
