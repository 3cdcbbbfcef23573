"""Attack math: attack kinds, primary attribute, hit total, defense, crits, eligibility, damage (C4-C12).

Pure functions on numbers and flags, with the rules' own names. Worked
example (combat.txt §Resolving an Attack): a d8 primary rolling 6 and a d6
FCS rolling 4, STR bonus 2, weapon hit bonus 1, no training:

>>> hit_total(primary_faces=[6], fcs_faces=[4], static_bonus=static_bonus(2, 1, 0))
13
>>> hits(attack_total=13, total_defense=13)   # the defender wins ties
False
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, NamedTuple

__all__ = [
    "AttackKind",
    "ActiveDefense",
    "ACTIVE_DEFENSES",
    "attack_kind",
    "is_ranged",
    "is_spell",
    "primary_attribute",
    "static_bonus",
    "hit_total",
    "defense_rating",
    "base_defense",
    "hits",
    "fcs_portion",
    "res_portion",
    "is_crit",
    "ineligibility",
    "parries",
    "Damage",
    "damage",
]

AttackKind = Literal["melee", "melee_spell", "ranged", "ranged_spell", "unarmed"]
ActiveDefense = Literal["dodge", "parry", "block"]
ACTIVE_DEFENSES: tuple[ActiveDefense, ...] = ("dodge", "parry", "block")


def attack_kind(properties: Iterable[str] | None) -> AttackKind:
    """The kind of attack a weapon makes (``None`` for unarmed): spell and/or ranged, else melee."""
    if properties is None:
        return "unarmed"
    props = set(properties)
    if "spell" in props:
        return "ranged_spell" if "ranged" in props else "melee_spell"
    return "ranged" if "ranged" in props else "melee"


def is_ranged(kind: AttackKind) -> bool:
    """Ranged and ranged spell attacks."""
    return kind in ("ranged", "ranged_spell")


def is_thrown(properties: Iterable[str], kind: AttackKind) -> bool:
    """Whether an attack throws its weapon (C22: a Catch may intercept it): a weapon marked ``thrown`` in a ranged
    attack; in a melee attack it strikes in hand (docs/rulings.md, "A weapon is thrown only in a ranged attack")."""
    return "thrown" in properties and is_ranged(kind)


def is_spell(kind: AttackKind) -> bool:
    """Melee and ranged spell attacks."""
    return kind in ("melee_spell", "ranged_spell")


def primary_attribute(kind: AttackKind, finesse: bool = False) -> Literal["STR", "AGI", "INT"]:
    """C4: INT for spell attacks, AGI for finesse weapons, STR otherwise (melee, ranged, unarmed)."""
    if is_spell(kind):
        return "INT"
    return "AGI" if finesse and kind != "unarmed" else "STR"


def static_bonus(attribute_bonus: int, weapon_hit_bonus: int, training_bonus: int) -> int:
    """C5: static bonus = primary attribute bonus + weapon hit bonus + training bonus (not the FCS bonus)."""
    return attribute_bonus + weapon_hit_bonus + training_bonus


def hit_total(primary_faces: Iterable[int], fcs_faces: Iterable[int], static_bonus: int,
              situational: int = 0) -> int:
    """C5: Σ primary dice + Σ FCS dice + static bonus + situational."""
    return sum(primary_faces) + sum(fcs_faces) + static_bonus + situational


def defense_rating(res_bonus: int, armor_rating: int, armor_applies: bool, modifiers: int = 0) -> int:
    """C11: RES bonus + armor rating (only if the armor applies to this attack, C13) + modifiers."""
    return res_bonus + (armor_rating if armor_applies else 0) + modifiers


def base_defense(res_face: int | None, rating: int) -> int:
    """Base defense = RES die + Defense Rating; no die (``None``) if incapacitated or paralysed (C10) or at 0 HP
    (C36)."""
    return (res_face or 0) + rating


def hits(attack_total: int, total_defense: int) -> bool:
    """§Hit Determination: a hit iff the attack total strictly exceeds the total defense."""
    return attack_total > total_defense


def fcs_portion(fcs_faces: Iterable[int], fcs_bonus: int) -> int:
    """C7: the attack's side of the crit comparison: Σ FCS dice + FCS bonus."""
    return sum(fcs_faces) + fcs_bonus


def res_portion(res_face: int | None, res_bonus: int) -> int:
    """C7, C10: the defender's side: the base defense RES die + RES bonus (the bonus alone if no die)."""
    return (res_face or 0) + res_bonus


def is_crit(fcs: int, res: int) -> bool:
    """C7: a crit iff the FCS portion strictly exceeds the RES portion; ties are no crit."""
    return fcs > res


#: Why a Block is refused against a spell with a shield that is not magical: words the window's ``ineligible``
#: records (logs already written hold them; a refusal of a ranged spell's Block adds the rest of the rule).
SPELL_BLOCK = "a spell attack can be Blocked only with a magical shield (§Which Defenses Apply)"


def ineligibility(defense: ActiveDefense, kind: AttackKind, *, prone: bool, weapon: bool,
                  magical_weapon: bool, shield: bool, magical_shield: bool,
                  veteran_shield: bool) -> str | None:
    """Why ``defense`` is not allowed against this attack (C9, §Which Defenses Apply), or None if it is.

    ``weapon``/``magical_weapon`` describe the wielded weapon the Parry would use (:func:`parries` picks it among
    those in hand);
    ``shield``/``magical_shield`` its shield. Unarmed attacks are melee.
    """
    match defense:
        case "dodge":
            return "a prone defender cannot Dodge (C9, C27)" if prone else None
        case "parry":
            if is_ranged(kind):
                return "ranged attacks cannot be Parried (§Which Defenses Apply)"
            if not weapon:
                return "Parry needs a wielded weapon (C9)"
            if kind == "melee_spell" and not magical_weapon:
                return "a melee spell can be Parried only with a magical weapon (§Which Defenses Apply)"
            return None
        case "block":
            if not shield:
                return "Block needs a shield (C9)"
            if is_spell(kind) and not magical_shield:
                return SPELL_BLOCK
            if is_ranged(kind) and not veteran_shield:
                return "a ranged attack can be Blocked only with Veteran Shield Training (§Which Defenses Apply)"
            return None


def parries(kind: AttackKind, properties: Iterable[str]) -> bool:
    """Whether a weapon with ``properties``, in hand, may Parry an attack of ``kind`` (§Which Defenses Apply, C9):
    never a ranged attack; a melee spell only if the weapon is magical. A spell is no weapon in hand (docs/rulings.md,
    "A spell needs no hand"): it never parries.

    >>> parries("melee_spell", ["magical"]), parries("melee_spell", []), parries("melee", ["spell"])
    (True, False, False)
    """
    props = set(properties)
    return "spell" not in props and ineligibility(
        "parry", kind, prone=False, weapon=True, magical_weapon="magical" in props, shield=False,
        magical_shield=False, veteran_shield=False) is None


class Damage(NamedTuple):
    """C12's damage formula, term by term: ``raw`` is the sum of the other fields."""

    dice: int
    primary_bonus: int
    crit_bonus: int
    weapon_damage: int
    ability_dice: int
    modifiers: int
    raw: int


def damage(*, dice_result: int, primary_bonus: int, weapon_damage: int, crit: bool,
           unarmed: bool = False, ability_dice: Iterable[int] = (), modifiers: int = 0) -> Damage:
    """C12: dice result + primary bonus + WD + modifiers (+ one more primary bonus on a crit) + ability dice.

    ``dice_result`` is the sum of the primary dice, or the result a Rogue
    routed to damage. Unarmed: the raw STR die, no STR bonus and no WD, but
    a crit still adds one STR bonus.
    """
    bonus = 0 if unarmed else primary_bonus
    wd = 0 if unarmed else weapon_damage
    extra = primary_bonus if crit else 0
    rage = sum(ability_dice)
    return Damage(dice_result, bonus, extra, wd, rage, modifiers,
                  dice_result + bonus + extra + wd + rage + modifiers)
