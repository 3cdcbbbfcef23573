"""Tests for omen_core.rules.attack: kinds, primary attribute, hit, defense, crit, eligibility, damage (C4-C12)."""

from __future__ import annotations

import inspect
from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omen_core.rules.attack import (
    ACTIVE_DEFENSES,
    ActiveDefense,
    AttackKind,
    Damage,
    attack_kind,
    base_defense,
    damage,
    defense_rating,
    fcs_portion,
    hit_total,
    hits,
    ineligibility,
    is_crit,
    is_ranged,
    is_spell,
    primary_attribute,
    res_portion,
    static_bonus,
)
from tests.fights import present

PROPERTIES = ("finesse", "ranged", "spell", "magical", "thrown")
ALL_PROPERTY_SETS = [frozenset(c) for n in range(len(PROPERTIES) + 1) for c in combinations(PROPERTIES, n)]
KINDS: tuple[AttackKind, ...] = ("melee", "melee_spell", "ranged", "ranged_spell", "unarmed")

totals = st.integers(-30, 60)
faces = st.lists(st.integers(1, 20), min_size=1, max_size=3)
bonuses = st.integers(-5, 10)


class TestAttackKind:
    @pytest.mark.parametrize("props", ALL_PROPERTY_SETS, ids=lambda p: "+".join(sorted(p)) or "none")
    def test_every_property_combination(self, props: frozenset[str]) -> None:
        """§Attack Rolls, C4: only `spell` and `ranged` decide the kind; finesse, magical and thrown do not."""
        expected = {(False, False): "melee", (True, False): "melee_spell",
                    (False, True): "ranged", (True, True): "ranged_spell"}[("spell" in props, "ranged" in props)]
        assert attack_kind(props) == expected

    def test_no_weapon_is_unarmed(self) -> None:
        """§Unarmed Attacks: no weapon (None) makes an unarmed attack."""
        assert attack_kind(None) == "unarmed"

    def test_empty_properties_are_melee_not_unarmed(self) -> None:
        """A weapon with no properties is a melee weapon, not an unarmed attack."""
        assert attack_kind([]) == "melee"

    def test_properties_may_be_any_iterable(self) -> None:
        """A list with repeats is read as a set: ranged twice is still ranged."""
        assert attack_kind(["ranged", "ranged"]) == "ranged"

    @pytest.mark.parametrize("kind, ranged, spell", [
        ("melee", False, False), ("melee_spell", False, True), ("ranged", True, False),
        ("ranged_spell", True, True), ("unarmed", False, False),
    ])
    def test_ranged_and_spell_flags(self, kind: AttackKind, ranged: bool, spell: bool) -> None:
        """§Which Defenses Apply: the four kinds of the table, with unarmed counted as neither ranged nor spell."""
        assert (is_ranged(kind), is_spell(kind)) == (ranged, spell)


class TestPrimaryAttribute:
    @pytest.mark.parametrize("kind, finesse, expected", [
        ("melee", False, "STR"),
        ("melee", True, "AGI"),
        ("ranged", False, "STR"),
        ("ranged", True, "AGI"),
        ("melee_spell", False, "INT"),
        ("melee_spell", True, "INT"),
        ("ranged_spell", False, "INT"),
        ("ranged_spell", True, "INT"),
        ("unarmed", False, "STR"),
        ("unarmed", True, "STR"),
    ])
    def test_c4_table(self, kind: AttackKind, finesse: bool, expected: str) -> None:
        """C4: STR for melee and ranged, AGI with finesse, INT for spells even if finesse, STR for unarmed always."""
        assert primary_attribute(kind, finesse) == expected

    def test_finesse_defaults_to_false(self) -> None:
        """C4: without the finesse flag a melee attack uses STR."""
        assert primary_attribute("melee") == "STR"


class TestHitTotal:
    def test_static_bonus_is_attribute_weapon_training(self) -> None:
        """C5: static bonus = primary attribute bonus 2 + weapon hit bonus 1 + training 3 = 6."""
        assert static_bonus(2, 1, 3) == 6

    def test_static_bonus_with_negatives(self) -> None:
        """C1, C5: a negative attribute bonus counts: -2 + 1 + 0 = -1."""
        assert static_bonus(-2, 1, 0) == -1

    def test_static_bonus_has_no_fcs_term(self) -> None:
        """C5: the FCS bonus is not part of the hit total, so static_bonus takes no FCS argument."""
        assert list(inspect.signature(static_bonus).parameters) == [
            "attribute_bonus", "weapon_hit_bonus", "training_bonus"]
        assert not any("fcs" in p for p in inspect.signature(hit_total).parameters if p != "fcs_faces")

    def test_worked_example(self) -> None:
        """§Attack Rolls: d8 6 + d6 4 + STR 2 + weapon 1 + training 0 = 13."""
        assert hit_total(primary_faces=[6], fcs_faces=[4], static_bonus=3) == 13

    def test_fcs_die_counts_but_fcs_bonus_does_not(self) -> None:
        """C5: a FCS die of 5 adds 5; a FCS bonus of 3 would make 16 but the total is 13 (3 + 5 + 5 static)."""
        assert hit_total([3], [5], static_bonus(5, 0, 0)) == 13

    def test_several_dice_and_situational(self) -> None:
        """C5, C6: Σ primary (3 + 5) + Σ FCS (2 + 6, Unseen) + static 1 + high ground 2 = 19."""
        assert hit_total([3, 5], [2, 6], 1, situational=2) == 19

    def test_negative_situational(self) -> None:
        """C27: a ranged shot at a prone target: 4 + 4 + 0 - 2 = 6."""
        assert hit_total([4], [4], 0, situational=-2) == 6


class TestDefense:
    def test_rating_with_armor_that_applies(self) -> None:
        """C11: RES bonus 2 + armor 3 (applies) = 5."""
        assert defense_rating(2, 3, armor_applies=True) == 5

    def test_rating_without_armor_that_does_not_apply(self) -> None:
        """C11, C13: mundane armor 3 against a spell does not count: RES bonus 2 alone."""
        assert defense_rating(2, 3, armor_applies=False) == 2

    def test_rating_with_modifiers_and_negative_bonus(self) -> None:
        """C11: RES bonus -1 + armor 2 + modifier 1 = 2."""
        assert defense_rating(-1, 2, armor_applies=True, modifiers=1) == 2

    def test_base_defense_adds_the_res_die(self) -> None:
        """§Defense: base defense = RES die 4 + Defense Rating 5 = 9."""
        assert base_defense(4, 5) == 9

    def test_base_defense_without_a_die(self) -> None:
        """C10: an incapacitated or paralysed defender rolls no die: base defense = Defense Rating 5."""
        assert base_defense(None, 5) == 5

    def test_base_defense_without_a_die_negative_rating(self) -> None:
        """C10: with no die and a rating of -2 the base defense is -2."""
        assert base_defense(None, -2) == -2


class TestHits:
    def test_strictly_greater_hits(self) -> None:
        """§Hit Determination: 14 against 13 hits."""
        assert hits(14, 13) is True

    def test_tie_goes_to_the_defender(self) -> None:
        """§Hit Determination: 13 against 13 misses; the defender wins ties."""
        assert hits(13, 13) is False

    def test_lower_misses(self) -> None:
        """§Hit Determination: 12 against 13 misses."""
        assert hits(12, 13) is False

    @given(totals, totals)
    def test_hit_iff_strictly_greater(self, a: int, d: int) -> None:
        """§Hit Determination for all totals: hits(a, d) iff a > d."""
        assert hits(a, d) == (a > d)


class TestCrit:
    def test_fcs_portion(self) -> None:
        """C7: Σ FCS dice 4 + FCS bonus 2 = 6."""
        assert fcs_portion([4], 2) == 6

    def test_fcs_portion_two_dice(self) -> None:
        """C6, C7: with an Unseen second FCS die: 4 + 3 + bonus 1 = 8."""
        assert fcs_portion([4, 3], 1) == 8

    def test_res_portion(self) -> None:
        """C7: the base defense RES die 5 + RES bonus 1 = 6."""
        assert res_portion(5, 1) == 6

    def test_res_portion_of_a_helpless_defender(self) -> None:
        """C10: no RES die: the RES portion is the RES bonus 2 alone."""
        assert res_portion(None, 2) == 2

    def test_tie_is_no_crit(self) -> None:
        """C7: 6 against 6 is no crit."""
        assert is_crit(6, 6) is False

    def test_strictly_more_is_a_crit(self) -> None:
        """C7: 7 against 6 is a crit."""
        assert is_crit(7, 6) is True

    def test_less_is_no_crit(self) -> None:
        """C7: 5 against 6 is no crit."""
        assert is_crit(5, 6) is False

    def test_helpless_defender_crit_against_bonus_alone(self) -> None:
        """C10: FCS 1 + 0 against a helpless RES bonus 0 alone: 1 > 0 is a crit."""
        assert is_crit(fcs_portion([1], 0), res_portion(None, 0)) is True

    @given(faces, bonuses, st.integers(1, 20), bonuses)
    def test_crit_needs_strictly_more(self, fcs: list[int], fcs_bonus: int, res: int, res_bonus: int) -> None:
        """C7 for all rolls: crit iff Σ FCS + FCS bonus > RES die + RES bonus; equality is no crit."""
        crit = is_crit(fcs_portion(fcs, fcs_bonus), res_portion(res, res_bonus))
        assert crit == (sum(fcs) + fcs_bonus > res + res_bonus)


NO_GEAR = {"prone": False, "weapon": False, "magical_weapon": False, "shield": False, "magical_shield": False,
               "veteran_shield": False}


def gear(**on: bool) -> dict[str, bool]:
    """The defender's situation: nothing but the flags named."""
    return {**NO_GEAR, **on}


#: The rows of rolls-and-resolution.txt §Which Defenses Apply plus C9 (prone, weapon, shield), by hand.
#: (defense, attack kind, defender's gear, allowed?)
ELIGIBILITY = [
    # Melee attacks can be Blocked, Dodged, and Parried (Parry needs a weapon, Block a shield: C9).
    ("dodge", "melee", gear(), True),
    ("dodge", "melee", gear(prone=True), False),
    ("parry", "melee", gear(weapon=True), True),
    ("parry", "melee", gear(weapon=True, magical_weapon=True), True),
    ("parry", "melee", gear(), False),
    ("parry", "melee", gear(shield=True, magical_shield=True, veteran_shield=True), False),
    ("parry", "melee", gear(weapon=True, prone=True), True),
    ("block", "melee", gear(shield=True), True),
    ("block", "melee", gear(shield=True, prone=True), True),
    ("block", "melee", gear(), False),
    ("block", "melee", gear(weapon=True, veteran_shield=True), False),
    # Unarmed attacks are melee attacks (§Unarmed Attacks).
    ("dodge", "unarmed", gear(), True),
    ("dodge", "unarmed", gear(prone=True), False),
    ("parry", "unarmed", gear(weapon=True), True),
    ("parry", "unarmed", gear(), False),
    ("block", "unarmed", gear(shield=True), True),
    ("block", "unarmed", gear(), False),
    # Melee Spell attacks: Dodge; Block only with a magical shield; Parry only with a magical weapon.
    ("dodge", "melee_spell", gear(), True),
    ("dodge", "melee_spell", gear(prone=True), False),
    ("parry", "melee_spell", gear(weapon=True), False),
    ("parry", "melee_spell", gear(weapon=True, magical_weapon=True), True),
    ("parry", "melee_spell", gear(), False),
    ("block", "melee_spell", gear(shield=True), False),
    ("block", "melee_spell", gear(shield=True, veteran_shield=True), False),
    ("block", "melee_spell", gear(shield=True, magical_shield=True), True),
    ("block", "melee_spell", gear(), False),
    # Ranged attacks: Dodge; Blocked only with Veteran Shield Training; never Parried.
    ("dodge", "ranged", gear(), True),
    ("dodge", "ranged", gear(prone=True), False),
    ("parry", "ranged", gear(weapon=True), False),
    ("parry", "ranged", gear(weapon=True, magical_weapon=True), False),
    ("block", "ranged", gear(shield=True), False),
    ("block", "ranged", gear(shield=True, magical_shield=True), False),
    ("block", "ranged", gear(shield=True, veteran_shield=True), True),
    ("block", "ranged", gear(veteran_shield=True), False),
    # Ranged Spell attacks: Dodge; Blocked only with a magical shield and Veteran Shield Training.
    ("dodge", "ranged_spell", gear(), True),
    ("dodge", "ranged_spell", gear(prone=True), False),
    ("parry", "ranged_spell", gear(weapon=True, magical_weapon=True), False),
    ("block", "ranged_spell", gear(shield=True), False),
    ("block", "ranged_spell", gear(shield=True, magical_shield=True), False),
    ("block", "ranged_spell", gear(shield=True, veteran_shield=True), False),
    ("block", "ranged_spell", gear(shield=True, magical_shield=True, veteran_shield=True), True),
    ("block", "ranged_spell", gear(veteran_shield=True), False),
]


def _consistent_gear() -> list[dict[str, bool]]:
    """Every defender situation where magical_weapon implies a weapon and magical_shield a shield."""
    out = []
    for bits in range(64):
        g = dict(zip(NO_GEAR, (bool(bits >> i & 1) for i in range(6)), strict=False))
        if (g["magical_weapon"] and not g["weapon"]) or (g["magical_shield"] and not g["shield"]):
            continue
        out.append(g)
    return out


class TestEligibility:
    @pytest.mark.parametrize("defense, kind, situation, allowed", ELIGIBILITY,
                             ids=[f"{d}-{k}-{'+'.join(x for x, v in g.items() if v) or 'bare'}"
                                  for d, k, g, _ in ELIGIBILITY])
    def test_table(self, defense: ActiveDefense, kind: AttackKind, situation: dict[str, bool], allowed: bool) -> None:
        """§Which Defenses Apply + C9: each row of the table, with None meaning allowed and a reason otherwise."""
        why = ineligibility(defense, kind, **situation)
        if allowed:
            assert why is None
        else:
            assert isinstance(why, str) and why

    @pytest.mark.parametrize("kind", KINDS)
    @pytest.mark.parametrize("situation", _consistent_gear())
    def test_dodge_is_refused_only_when_prone(self, kind: AttackKind, situation: dict[str, bool]) -> None:
        """§Which Defenses Apply, C9: every attack can be Dodged, unless the defender is prone."""
        assert (ineligibility("dodge", kind, **situation) is None) == (not situation["prone"])

    @pytest.mark.parametrize("kind", ["ranged", "ranged_spell"])
    @pytest.mark.parametrize("situation", _consistent_gear())
    def test_ranged_is_never_parried(self, kind: AttackKind, situation: dict[str, bool]) -> None:
        """§Which Defenses Apply: no row lets a ranged or ranged spell attack be Parried, whatever the gear."""
        assert ineligibility("parry", kind, **situation) is not None

    @pytest.mark.parametrize("kind", KINDS)
    @pytest.mark.parametrize("defense", ["parry", "block"])
    @pytest.mark.parametrize("situation", _consistent_gear())
    def test_parry_needs_a_weapon_and_block_a_shield(self, kind: AttackKind, defense: ActiveDefense,
                                                     situation: dict[str, bool]) -> None:
        """C9: Parry needs a wielded weapon and Block a shield; prone never matters to either."""
        why = ineligibility(defense, kind, **situation)
        needed = "weapon" if defense == "parry" else "shield"
        if not situation[needed]:
            assert why is not None
        flipped = {**situation, "prone": not situation["prone"]}
        assert (ineligibility(defense, kind, **flipped) is None) == (why is None)

    def test_reasons_cite_the_rules(self) -> None:
        """C9: each refusal says which rule refuses it."""
        assert "C9" in present(ineligibility("dodge", "melee", **gear(prone=True)))
        assert "C9" in present(ineligibility("parry", "melee", **gear()))
        assert "C9" in present(ineligibility("block", "melee", **gear()))
        assert "Which Defenses Apply" in present(ineligibility("block", "ranged", **gear(shield=True)))

    def test_active_defenses(self) -> None:
        """§Active Defense: the three options are Dodge, Parry and Block."""
        assert set(ACTIVE_DEFENSES) == {"dodge", "parry", "block"}


class TestDamage:
    def test_normal(self) -> None:
        """C12: primary die 5 + STR bonus 2 + WD 4 = 11."""
        d = damage(dice_result=5, primary_bonus=2, weapon_damage=4, crit=False)
        assert d == Damage(dice=5, primary_bonus=2, crit_bonus=0, weapon_damage=4, ability_dice=0, modifiers=0,
                           raw=11)

    def test_crit_adds_one_primary_bonus_only(self) -> None:
        """C12: crit = 5 + 2 x 2 + 4 = 13; the die, WD and modifiers do not double."""
        d = damage(dice_result=5, primary_bonus=2, weapon_damage=4, crit=True, modifiers=1)
        assert (d.dice, d.primary_bonus, d.crit_bonus, d.weapon_damage, d.modifiers, d.raw) == (5, 2, 2, 4, 1, 14)

    def test_crit_with_a_negative_bonus(self) -> None:
        """C12: a crit adds the bonus again even if it is negative: 5 + 2 x (-1) + 4 = 7."""
        assert damage(dice_result=5, primary_bonus=-1, weapon_damage=4, crit=True).raw == 7

    def test_unarmed_is_the_raw_die(self) -> None:
        """§Unarmed Attacks, C12: the raw STR die 4, no STR bonus 3, no WD 5: 4."""
        d = damage(dice_result=4, primary_bonus=3, weapon_damage=5, crit=False, unarmed=True)
        assert (d.primary_bonus, d.weapon_damage, d.crit_bonus, d.raw) == (0, 0, 0, 4)

    def test_unarmed_crit_adds_one_bonus(self) -> None:
        """C12, §Unarmed Attacks: an unarmed crit adds one STR bonus: 4 + 3 = 7."""
        d = damage(dice_result=4, primary_bonus=3, weapon_damage=5, crit=True, unarmed=True)
        assert (d.primary_bonus, d.crit_bonus, d.raw) == (0, 3, 7)

    def test_ability_dice_add_to_damage(self) -> None:
        """C12: Brute rage dice 3 and 2 add 5: 5 + 2 + 4 + 5 = 16."""
        d = damage(dice_result=5, primary_bonus=2, weapon_damage=4, crit=False, ability_dice=[3, 2])
        assert (d.ability_dice, d.raw) == (5, 16)

    def test_modifiers_add_and_may_be_negative(self) -> None:
        """C12: modifiers add to damage: 5 + 2 + 4 - 3 = 8."""
        assert damage(dice_result=5, primary_bonus=2, weapon_damage=4, crit=False, modifiers=-3).raw == 8

    def test_several_primary_dice_sum(self) -> None:
        """C6, C12: two primary dice 3 + 6 = 9, + bonus 1 + WD 2 = 12."""
        assert damage(dice_result=3 + 6, primary_bonus=1, weapon_damage=2, crit=False).raw == 12

    def test_all_terms_together(self) -> None:
        """C12: crit 6 + 2 + 2 + WD 3 + rage 4 + modifier 1 = 18."""
        d = damage(dice_result=6, primary_bonus=2, weapon_damage=3, crit=True, ability_dice=[4], modifiers=1)
        assert d.raw == 18

    @given(st.integers(1, 40), bonuses, st.integers(0, 10), st.booleans(),
           st.lists(st.integers(1, 12), max_size=3), st.integers(-5, 5))
    def test_crit_adds_exactly_one_primary_bonus(self, die: int, bonus: int, wd: int, unarmed: bool, rage: list[int],
                                                 mods: int) -> None:
        """C12 for all inputs: damage with a crit minus damage without equals the primary bonus."""
        with_crit, without = (damage(dice_result=die, primary_bonus=bonus, weapon_damage=wd, crit=crit, unarmed=unarmed,
                                     ability_dice=rage, modifiers=mods) for crit in (True, False))
        assert with_crit.raw - without.raw == bonus

    @given(st.integers(1, 40), bonuses, st.integers(0, 10), st.booleans(), st.booleans(),
           st.lists(st.integers(1, 12), max_size=3), st.integers(-5, 5))
    def test_raw_is_the_sum_of_the_terms(self, die: int, bonus: int, wd: int, crit: bool, unarmed: bool,
                                         rage: list[int],
                                         mods: int) -> None:
        """C12: the recorded terms always add up to the raw damage."""
        d = damage(dice_result=die, primary_bonus=bonus, weapon_damage=wd, crit=crit, unarmed=unarmed,
                   ability_dice=rage, modifiers=mods)
        assert d.raw == d.dice + d.primary_bonus + d.crit_bonus + d.weapon_damage + d.ability_dice + d.modifiers
