"""One attack, declaration to applied damage, through the ``Fight`` façade with scripted dice (C29).

Every expected number is worked out by hand from rolls-and-resolution.txt,
combat.txt and CLARIFICATIONS.md (the arithmetic is in each docstring or
comment); no test calls the engine's own rule functions to get a number.

The two sheets used throughout give every attribute a different die size,
so the ``sides`` of a rolled die tell which attribute the engine rolled:

=========  ======  ======  ======  ======  ======
           STR     AGI     INT     RES     FCS
=========  ======  ======  ======  ======  ======
kael       d8 +2   d10 +3  d12 +4  d6 +0   d4 +1
vesh       d8 +1   d10 +2  d4 +0   d6 +1   d4 +0
=========  ======  ======  ======  ======  ======

Kael's sword: WD 4, hit bonus +1, slashing. So a sword hit total is
STR face + FCS face + 2 (STR) + 1 (sword) = P + F + 3, and because Kael's FCS
bonus (+1) equals Vesh's RES bonus (+1), a crit (C7) happens iff the FCS face
exceeds the RES face. Vesh's base defense without armor is RES face + 1.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from omen_core import Fight, Modifier
from omen_core.content import (
    ApplyCondition,
    Armor,
    Branches,
    CombatantSheet,
    DealDamage,
    Features,
    IncomingDamage,
    RageDice,
    Shield,
    Training,
    Weapon,
)
from omen_core.errors import RuleViolation, UnknownCombatant
from omen_core.events import (
    ActionSettled,
    ActiveDefenseChosen,
    ActiveDefenseDeclined,
    ActiveDefenseWindowOpened,
    ActiveDefenseWindowSkipped,
    AttackDeclared,
    ConditionApplied,
    ConditionCleared,
    CostPaid,
    DamageResolved,
    DamageRouted,
    DiceRolled,
    HitDetermined,
    ResourceChanged,
    RoutingWindowOpened,
    WeaponDrawn,
)
from omen_core.rules.attack import ActiveDefense
from tests.fights import as_, assert_legal_order, assert_replays, last, new_fight, payloads, present, scripted
from tests.sheets import attributes, sheet

# -- gear -------------------------------------------------------------------------------------

SWORD = Weapon(id="sword", weapon_damage=4, hit_bonus=1, damage_type="slashing", parry_rating=2)
RAPIER = Weapon(id="rapier", weapon_damage=3, damage_type="piercing", properties=frozenset({"finesse"}))
BOW = Weapon(id="bow", weapon_damage=3, hit_bonus=1, damage_type="piercing", properties=frozenset({"ranged"}))
TORCH = Weapon(id="torch", weapon_damage=4, hit_bonus=1, damage_type="fire")
SHARD = Weapon(id="shard", weapon_damage=2, damage_type="piercing", properties=frozenset({"spell"}))
FIREBOLT = Weapon(id="firebolt", weapon_damage=2, damage_type="fire", properties=frozenset({"spell", "ranged"}))

AXE = Weapon(id="axe", weapon_damage=5, damage_type="slashing", parry_rating=2)
DAGGER = Weapon(id="dagger", weapon_damage=2, damage_type="piercing", properties=frozenset({"finesse"}),
                parry_rating=1)
RUNEBLADE = Weapon(id="runeblade", weapon_damage=4, properties=frozenset({"magical"}), parry_rating=2)
BUCKLER = Shield(name="buckler", block_rating=2)
WARDED = Shield(name="warded shield", block_rating=2, magical=True)
VETERAN = Training(veteran_shield=True)

KAEL_ATTRS = {"STR": (8, 2), "AGI": (10, 3), "INT": (12, 4), "RES": (6, 0), "FCS": (4, 1)}
VESH_ATTRS = {"STR": (8, 1), "AGI": (10, 2), "INT": (4, 0), "RES": (6, 1), "FCS": (4, 0)}


def fighter(cid: str, side: str, attrs: dict[str, tuple[int, int]], *, hp: int = 20, will: int = 10,
            weapons: tuple[Weapon, ...] = (), armor: Armor | None = None, shield: Shield | None = None,
            training: Training = Training(), resistances: dict[str, int] | None = None,
            features: Features = Features(), incoming: IncomingDamage = IncomingDamage()) -> CombatantSheet:
    """A test sheet (tests/sheets.py) with gear, training, resistances, features and incoming damage."""
    return replace(sheet(cid, side=side, hp=hp, will=will), attributes=attributes(attrs), weapons=weapons, armor=armor,
                   shield=shield, training=training, resistances=resistances or {}, features=features,
                   incoming_damage=incoming)


def kael(*, weapons: tuple[Weapon, ...] = (SWORD,), **kw: Any) -> CombatantSheet:
    """The attacker: STR d8+2, AGI d10+3, INT d12+4, RES d6+0, FCS d4+1, a sword in hand."""
    return fighter("kael", "heroes", KAEL_ATTRS, weapons=weapons, **kw)


def vesh(**kw: Any) -> CombatantSheet:
    """The defender: STR d8+1, AGI d10+2, INT d4+0, RES d6+1, FCS d4+0, 20 HP, 10 Will, no gear by default."""
    return fighter("vesh", "raiders", VESH_ATTRS, **kw)


# -- every fight is checked against its replay and the lifecycle order ---------------------------

Play = Callable[..., Fight]


@pytest.fixture
def play() -> Iterator[Play]:
    """Start a fight with scripted faces; at teardown check replay, legal order and the dice left over.

    ``spare`` is how many scripted faces must still be unused at the end (C29
    order and count: a test that expects a die *not* to be rolled leaves one).
    """
    made: list[tuple[Fight, int]] = []

    def start(*sheets: CombatantSheet, faces: list[int], spare: int = 0) -> Fight:
        fight = new_fight(*sheets, faces=faces)
        made.append((fight, spare))
        return fight

    yield start
    for fight, spare in made:
        assert_replays(fight)
        assert_legal_order(fight.events)
        assert scripted(fight).remaining == spare, "scripted dice not consumed as C29 expects"


def duel(play: Play, faces: list[int], attacker: CombatantSheet | None = None,
         defender: CombatantSheet | None = None, spare: int = 0) -> Fight:
    """Kael against Vesh (or the given sheets)."""
    return play(attacker or kael(), defender or vesh(), faces=faces, spare=spare)


def refused(fight: Fight, command: Callable[[], object], rule: str) -> RuleViolation:
    """The command raises RuleViolation naming ``rule``; the log, its version and the dice are untouched."""
    before, version, remaining = fight.events, fight.version, scripted(fight).remaining
    with pytest.raises(RuleViolation) as info:
        command()
    assert info.value.rule == rule
    assert fight.events == before and fight.version == version and scripted(fight).remaining == remaining
    return info.value


def rolls(fight: Fight) -> list[tuple[str, str, tuple[tuple[str, int, int], ...]]]:
    """Every roll as (purpose, roller, ((pool, sides, face), ...)), in log order."""
    return [(e.purpose, e.roller, tuple((d.pool, d.sides, d.face) for d in e.dice))
            for e in payloads(fight) if isinstance(e, DiceRolled)]


def hp(fight: Fight, who: str = "vesh") -> int:
    return fight.state.combatants[who].hp


def bonus_actions(fight: Fight, who: str = "vesh") -> int:
    return fight.state.combatants[who].bonus_actions


def steps(fight: Fight) -> list[tuple[str, int, int]]:
    """The C13 steps of the last DamageResolved, as (step, amount, after)."""
    return [(s.step, s.amount, s.after) for s in last(fight, DamageResolved).steps]


# -- the worked example -----------------------------------------------------------------------


class TestWorkedExample:
    def test_worked_melee_example_step_by_step(self, play: Play) -> None:
        """combat.txt §Resolving an Attack: hit 13 vs base 6, Dodge +5 makes 11, still a hit; 12 damage - 1 - 2 = 9."""
        # 1-2. STR d8 6 + FCS d4 3 + STR 2 + sword 1 + training 1 = 13 (FCS bonus not in the hit, C5).
        # 3. RES d6 3 + Defense Rating (RES 1 + mundane armor 2 vs slashing) = 6.
        # 4-5. 13 > 6, so the window opens; Dodge: AGI d10 3 + AGI 2 = 5; total 11; 13 > 11: hit.
        #      Crit: FCS 3 + 1 = 4 vs RES 3 + 1 = 4: no crit.
        # 6. Damage: 6 + STR 2 + WD 4 = 12.  7. - slashing resistance 1 = 11, - armor 2 = 9. HP 20 -> 11.
        fight = duel(play, [6, 3, 3, 3], attacker=kael(training=Training(hit_bonus=1)),
                     defender=vesh(armor=Armor(rating=2), resistances={"slashing": 1}))
        fight.attack("kael", "vesh")
        opened = fight.waiting_for
        assert isinstance(opened, ActiveDefenseWindowOpened)
        assert (opened.attack_total, opened.base_defense) == (13, 6)
        fight.defend("vesh", "dodge")
        assert rolls(fight) == [("hit", "kael", (("primary", 8, 6), ("fcs", 4, 3))),
                                ("base_defense", "vesh", (("res", 6, 3),)),
                                ("active_defense", "vesh", (("active", 10, 3),))]
        hit = last(fight, HitDetermined)
        assert (hit.attack.total, hit.attack.attribute) == (13, "STR")
        assert (hit.defense.defense_rating, hit.defense.base, present(hit.defense.active).amount, hit.defense.total) \
            == (3, 6, 5, 11)
        assert (hit.hit, hit.crit) == (True, False)
        dealt = last(fight, DamageResolved)
        assert (dealt.terms.raw, dealt.damage_type, dealt.final, dealt.resource) == (12, "slashing", 9, "hp")
        assert steps(fight) == [("resistance", 1, 11), ("physical rollover", 0, 11), ("armor", 2, 9),
                                ("floor", 0, 9), ("incoming", 0, 9)]
        changed = last(fight, ResourceChanged)
        assert (changed.who, changed.resource, changed.before, changed.after) == ("vesh", "hp", 20, 11)
        assert hp(fight) == 11 and bonus_actions(fight) == 1
        assert isinstance(payloads(fight)[-1], ActionSettled) and fight.waiting_for is None


# -- primary attribute and damage formula -------------------------------------------------------


class TestPrimaryAttribute:
    def test_finesse_weapon_rolls_agi(self, play: Play) -> None:
        """C4: a finesse rapier rolls AGI (d10): hit 5+2+AGI 3 = 10 vs 4+1 = 5; damage 5+3+WD 3 = 11, HP 9."""
        fight = duel(play, [5, 2, 4], attacker=kael(weapons=(RAPIER,)))
        fight.attack("kael", "vesh")
        fight.defend("vesh", None)
        hit = last(fight, HitDetermined)
        assert rolls(fight)[0][2][0] == ("primary", 10, 5)
        assert (hit.attack.attribute, hit.attack.attribute_bonus, hit.attack.total) == ("AGI", 3, 10)
        assert (last(fight, DamageResolved).terms.raw, hp(fight)) == (11, 9)

    def test_spell_attack_ignores_mundane_armor(self, play: Play) -> None:
        """C4, C11, C13: a spell rolls INT (d12); mundane armor 3 adds nothing to Defense Rating nor reduction."""
        # Hit: INT d12 7 + FCS 1 + INT 4 = 12. Defense Rating = RES 1 (armor does not apply) -> base 2 + 1 = 3.
        # Damage 7 + INT 4 + WD 2 = 13 piercing (physical, but a spell): armor 0 -> 13. HP 20 -> 7.
        fight = duel(play, [7, 1, 2], attacker=kael(weapons=(SHARD,)), defender=vesh(armor=Armor(rating=3)))
        fight.attack("kael", "vesh")
        assert last(fight, AttackDeclared).kind == "melee_spell"
        fight.defend("vesh", None)
        hit = last(fight, HitDetermined)
        assert rolls(fight)[0][2][0] == ("primary", 12, 7)
        assert (hit.attack.attribute, hit.attack.total) == ("INT", 12)
        assert (hit.defense.armor_applies, hit.defense.armor, hit.defense.defense_rating, hit.defense.base) \
            == (False, 0, 1, 3)
        assert steps(fight)[2] == ("armor", 0, 13)
        assert (last(fight, DamageResolved).final, hp(fight)) == (13, 7)

    def test_spell_attack_meets_magical_armor(self, play: Play) -> None:
        """C11, C13: magical armor 3 applies to a spell: Defense Rating 1+3 = 4 (base 6), damage 13 - 3 = 10."""
        fight = duel(play, [7, 1, 2], attacker=kael(weapons=(SHARD,)),
                     defender=vesh(armor=Armor(rating=3, magical=True)))
        fight.attack("kael", "vesh")
        fight.defend("vesh", None)
        hit = last(fight, HitDetermined)
        assert (hit.defense.armor_applies, hit.defense.armor, hit.defense.defense_rating, hit.defense.base) \
            == (True, 3, 4, 6)
        assert steps(fight)[2] == ("armor", 3, 10)
        assert (last(fight, DamageResolved).final, hp(fight)) == (10, 10)

    def test_ranged_weapon_rolls_str(self, play: Play) -> None:
        """C4: a bow rolls STR (d8): hit 6+2+STR 2+bow 1 = 11 vs 2+1 = 3; damage 6+2+WD 3 = 11, HP 9."""
        fight = duel(play, [6, 2, 2], attacker=kael(weapons=(BOW,)))
        fight.attack("kael", "vesh")
        assert last(fight, AttackDeclared).kind == "ranged"
        fight.defend("vesh", None)
        hit = last(fight, HitDetermined)
        assert rolls(fight)[0][2][0] == ("primary", 8, 6)
        assert (hit.attack.attribute, hit.attack.total, hit.crit) == ("STR", 11, False)
        assert (last(fight, DamageResolved).terms.raw, hp(fight)) == (11, 9)

    def test_unarmed_deals_the_raw_str_die_as_crushing(self, play: Play) -> None:
        """C12, §Unarmed Attacks: unarmed hit 5+1+STR 2 = 8 vs 4+1+armor 1 = 6; damage is the raw die 5 (no bonus, no
        WD) - 1 = 4."""
        fight = duel(play, [5, 1, 4], defender=vesh(armor=Armor(rating=1)))
        fight.attack("kael", "vesh", unarmed=True)
        assert (last(fight, AttackDeclared).weapon, last(fight, AttackDeclared).kind) == (None, "unarmed")
        fight.defend("vesh", None)
        hit = last(fight, HitDetermined)
        assert (hit.attack.attribute, hit.attack.weapon_hit_bonus, hit.attack.total, hit.crit) == ("STR", 0, 8, False)
        dealt = last(fight, DamageResolved)
        terms = dealt.terms
        assert (terms.dice, terms.primary_bonus, terms.crit_bonus, terms.weapon_damage, terms.raw) == (5, 0, 0, 0, 5)
        assert (dealt.damage_type, dealt.final, hp(fight)) == ("crushing", 4, 16)

    def test_unarmed_crit_adds_one_str_bonus(self, play: Play) -> None:
        """C12, §Unarmed Attacks: unarmed crit (FCS 4+1 = 5 > RES 1+1 = 2): damage 5 + one STR bonus 2 = 7, - armor 1
        = 6."""
        fight = duel(play, [5, 4, 1], defender=vesh(armor=Armor(rating=1)))
        fight.attack("kael", "vesh", unarmed=True)
        fight.defend("vesh", None)
        hit = last(fight, HitDetermined)
        assert (hit.attack.total, hit.defense.base, hit.hit, hit.crit) == (11, 3, True, True)
        terms = last(fight, DamageResolved).terms
        assert (terms.dice, terms.primary_bonus, terms.crit_bonus, terms.weapon_damage, terms.raw) == (5, 0, 2, 0, 7)
        assert (last(fight, DamageResolved).final, hp(fight)) == (6, 14)


# -- Active Defense ------------------------------------------------------------------------------


class TestActiveDefense:
    @pytest.mark.parametrize(
        "defense, defender, face, attribute, sides, bonus, rating, hit, hp_after", [
            # Dodge: AGI d10 6 + AGI 2 = 8; total 3 + 8 = 11; 12 > 11 hit; damage 8+2+4 = 14.
            ("dodge", vesh(), 6, "AGI", 10, 2, 0, True, 6),
            # Parry, axe (not finesse): STR d8 7 + STR 1 + Parry Rating 2 = 10; total 13; 12 > 13 fails.
            ("parry", vesh(weapons=(AXE,)), 7, "STR", 8, 1, 2, False, 20),
            # Parry, finesse dagger: AGI d10 5 + AGI 2 + Parry Rating 1 = 8; total 11; hit, 14 damage.
            ("parry", vesh(weapons=(DAGGER,)), 5, "AGI", 10, 2, 1, True, 6),
            # Block: RES d6 6 + RES 1 + Block Rating 2 = 9; total 12; 12 > 12 fails (tie).
            ("block", vesh(shield=BUCKLER), 6, "RES", 6, 1, 2, False, 20),
        ], ids=["dodge", "parry-str", "parry-finesse", "block"])
    def test_active_defense_adds_die_bonus_and_rating(self, play: Play, defense: ActiveDefense,
                                                      defender: CombatantSheet, face: int,
                                                      attribute: str, sides: int,
                                                      bonus: int, rating: int, hit: bool, hp_after: int) -> None:
        """§Active Defense: hit 8+1+3 = 12 vs base 2+1 = 3; the defense adds die + bonus + rating and costs 1 BA."""
        fight = duel(play, [8, 1, 2, face], defender=defender)
        fight.attack("kael", "vesh")
        assert bonus_actions(fight) == 2
        fight.defend("vesh", defense)
        assert rolls(fight)[-1] == ("active_defense", "vesh", (("active", sides, face),))
        paid = last(fight, CostPaid)
        assert (paid.who, paid.resource, paid.amount) == ("vesh", "bonus_action", 1)
        assert bonus_actions(fight) == 1
        determined = last(fight, HitDetermined)
        active = present(determined.defense.active)
        amount = face + bonus + rating
        assert (active.defense, active.attribute, active.die, active.attribute_bonus, active.rating, active.amount) \
            == (defense, attribute, face, bonus, rating, amount)
        assert (determined.attack.total, determined.defense.total, determined.hit) == (12, 3 + amount, hit)
        assert hp(fight) == hp_after

    def test_parry_records_the_weapon(self, play: Play) -> None:
        """C9: a Parry names the wielded weapon whose attribute and Parry Rating it uses."""
        fight = duel(play, [8, 1, 2, 7], defender=vesh(weapons=(AXE,)))
        fight.attack("kael", "vesh")
        fight.defend("vesh", "parry")
        assert last(fight, ActiveDefenseChosen).weapon == "axe"

    def test_declining_spends_nothing(self, play: Play) -> None:
        """C8: declining records ActiveDefenseDeclined, rolls no die, keeps 2 BA; 12 > 3 hits for 14, HP 6."""
        fight = duel(play, [8, 1, 2])
        fight.attack("kael", "vesh")
        fight.defend("vesh", None)
        assert last(fight, ActiveDefenseDeclined).defender == "vesh"
        assert [r[0] for r in rolls(fight)] == ["hit", "base_defense"]
        assert not [e for e in payloads(fight) if isinstance(e, CostPaid) and e.resource == "bonus_action"]
        determined = last(fight, HitDetermined)
        assert (determined.defense.active, determined.defense.total, determined.hit) == (None, 3, True)
        assert (bonus_actions(fight), hp(fight)) == (2, 6)


# -- which defenses apply ------------------------------------------------------------------------

MUNDANE_KIT = {"weapons": (AXE,), "shield": BUCKLER}
MAGIC_KIT = {"weapons": (RUNEBLADE,), "shield": WARDED}


class TestEligibility:
    @pytest.mark.parametrize("weapon, kit, prone, eligible", [
        (SWORD, MUNDANE_KIT, False, ("dodge", "parry", "block")),
        (None, MUNDANE_KIT, False, ("dodge", "parry", "block")),
        (SHARD, MUNDANE_KIT, False, ("dodge",)),
        (SHARD, {"weapons": (RUNEBLADE,), "shield": BUCKLER}, False, ("dodge", "parry")),
        (SHARD, {"weapons": (AXE,), "shield": WARDED}, False, ("dodge", "block")),
        (SHARD, MAGIC_KIT, False, ("dodge", "parry", "block")),
        (BOW, MUNDANE_KIT, False, ("dodge",)),
        (BOW, {**MUNDANE_KIT, "training": VETERAN}, False, ("dodge", "block")),
        (FIREBOLT, MAGIC_KIT, False, ("dodge",)),
        (FIREBOLT, {**MUNDANE_KIT, "training": VETERAN}, False, ("dodge",)),
        (FIREBOLT, {**MAGIC_KIT, "training": VETERAN}, False, ("dodge", "block")),
        (SWORD, MUNDANE_KIT, True, ("parry", "block")),
        (BOW, {**MUNDANE_KIT, "training": VETERAN}, True, ("block",)),
    ], ids=["melee", "unarmed-is-melee", "melee-spell", "melee-spell-magical-weapon",
            "melee-spell-magical-shield", "melee-spell-magical-both", "ranged", "ranged-veteran",
            "ranged-spell-magical-shield-only", "ranged-spell-veteran-only", "ranged-spell-magical-and-veteran",
            "prone-melee", "prone-ranged-veteran"])
    def test_window_lists_the_eligible_defenses(self, play: Play, weapon: Weapon | None, kit: dict[str, Any],
                                                prone: bool, eligible: tuple[str, ...]) -> None:
        """§Which Defenses Apply, C9: the opened window's ``eligible`` tuple follows the table row."""
        # STR d8 6 + FCS 1 + 2 + weapon (sword/bow +1) >= 9 (INT 6 + 1 + 4 = 11 for spells),
        # plus 4 or -2 against a prone target; all beat the base defense 1 + 1 = 2.
        attacker = kael(weapons=(weapon,)) if weapon else kael()
        fight = duel(play, [6, 1, 1], attacker=attacker, defender=vesh(**kit))
        if prone:
            fight.apply_condition("vesh", "Prone")
        fight.attack("kael", "vesh", unarmed=weapon is None)
        opened = last(fight, ActiveDefenseWindowOpened)
        assert fight.waiting_for == opened
        assert opened.eligible == eligible
        assert len(opened.ineligible) == 3 - len(eligible)
        fight.defend("vesh", None)

    @pytest.mark.parametrize("weapon, kit, prone, defense", [
        (SHARD, MUNDANE_KIT, False, "parry"),
        (SHARD, MUNDANE_KIT, False, "block"),
        (BOW, {**MAGIC_KIT, "training": VETERAN}, False, "parry"),
        (BOW, MUNDANE_KIT, False, "block"),
        (FIREBOLT, MAGIC_KIT, False, "block"),
        (FIREBOLT, {**MUNDANE_KIT, "training": VETERAN}, False, "block"),
        (FIREBOLT, {**MAGIC_KIT, "training": VETERAN}, False, "parry"),
        (SWORD, MUNDANE_KIT, True, "dodge"),
        (SWORD, {"weapons": (AXE,)}, False, "block"),
        (SWORD, {"shield": BUCKLER}, False, "parry"),
    ], ids=["melee-spell-parry-mundane-weapon", "melee-spell-block-mundane-shield", "ranged-parry",
            "ranged-block-no-veteran", "ranged-spell-block-no-veteran", "ranged-spell-block-mundane-shield",
            "ranged-spell-parry", "prone-dodge", "block-without-shield", "parry-without-weapon"])
    def test_forbidden_defense_is_refused_and_logs_nothing(self, play: Play, weapon: Weapon, kit: dict[str, Any],
                                                           prone: bool, defense: ActiveDefense) -> None:
        """C9: a defense the table forbids raises RuleViolation('C9'); log, version and dice are unchanged."""
        fight = duel(play, [6, 1, 1, 5], attacker=kael(weapons=(weapon,)), defender=vesh(**kit), spare=1)
        if prone:
            fight.apply_condition("vesh", "Prone")
        fight.attack("kael", "vesh")
        assert defense not in last(fight, ActiveDefenseWindowOpened).eligible
        refused(fight, lambda: fight.defend("vesh", defense), "C9")
        assert bonus_actions(fight) == 2
        fight.defend("vesh", None)


class TestParryWithAnyWeaponInHand:
    """C9, §Which Defenses Apply: a Parry may use any weapon in hand, not only the first in the sheet's order; a spell
    is no weapon in hand (docs/rulings.md, "A spell needs no hand"). Found by a tester: the window looked at the first
    weapon in hand only, so it recorded Parry as ineligible against a melee spell while accepting a Parry with the
    magical weapon held second, and opened no window at all for a Prone defender holding one."""

    @staticmethod
    def holding_both() -> CombatantSheet:
        """Vesh holding the axe, then the runeblade (magical, Parry Rating 2), no shield."""
        return replace(vesh(weapons=(AXE, RUNEBLADE)), wielding=("axe", "runeblade"))

    def test_a_magical_weapon_held_second_parries_a_melee_spell(self, play: Play) -> None:
        """Kael's shard (INT d12 6 + FCS 1 + INT 4 = 11) against Vesh's base 1 + 1 = 2, Vesh holding the axe and
        the runeblade: the window lists Parry; a Parry naming no weapon takes the runeblade (STR d8 5 + 1 + rating
        2 = 8, total 10): 11 > 10 hits, no crit (FCS 1 + 1 = 2 vs RES 1 + 1 = 2), 6 + 4 + WD 2 = 12: HP 20 -> 8."""
        fight = duel(play, [6, 1, 1, 5], attacker=kael(weapons=(SHARD,)), defender=self.holding_both())
        fight.attack("kael", "vesh")
        opened = last(fight, ActiveDefenseWindowOpened)
        assert (opened.attack_total, opened.base_defense) == (11, 2)
        assert (opened.eligible, opened.ineligible) == (("dodge", "parry"), ("Block needs a shield (C9)",))
        fight.defend("vesh", "parry")
        assert last(fight, ActiveDefenseChosen).weapon == "runeblade"
        determined = last(fight, HitDetermined)
        assert (present(determined.defense.active).amount, determined.defense.total) == (8, 10)
        assert (determined.hit, determined.crit, hp(fight)) == (True, False, 8)

    def test_the_mundane_weapon_is_refused_and_not_offered(self, play: Play) -> None:
        """The same window: a Parry naming the axe is refused, saying so, what is in hand and what the window
        allows (the words agree with the window's record); options() offers the Parry with the runeblade or none
        named, never the axe."""
        fight = duel(play, [6, 1, 1, 5], attacker=kael(weapons=(SHARD,)), defender=self.holding_both(), spare=1)
        fight.attack("kael", "vesh")
        said = str(refused(fight, lambda: fight.defend("vesh", "parry", weapon="axe"), "C9"))
        assert said.startswith("[C9] 'vesh' cannot parry: a melee spell can be Parried only with a magical weapon "
                               "(§Which Defenses Apply) (in hand: axe, runeblade); this window allows dodge, parry "
                               "or declining; legal now: ")
        answers = next(o for o in fight.options().offers if o.command == "answer_active_defense")
        assert [c.args.get("weapon") for c in answers.choices if c.args.get("defense") == "parry"] \
            == [None, "runeblade"]
        fight.defend("vesh", None)

    def test_a_prone_defender_holding_one_gets_the_window(self, play: Play) -> None:
        """C8, C9, C27: Vesh Prone (no Dodge) still holds the runeblade: the window opens with Parry alone (the shard
        11 + 4 against a prone target = 15 against 2); the Parry adds 5 + 1 + 2 = 8: 15 > 10 hits for 12, HP 8."""
        fight = duel(play, [6, 1, 1, 5], attacker=kael(weapons=(SHARD,)), defender=self.holding_both())
        fight.apply_condition("vesh", "Prone")
        fight.attack("kael", "vesh")
        opened = fight.waiting_for
        assert isinstance(opened, ActiveDefenseWindowOpened)
        assert (opened.attack_total, opened.eligible) == (15, ("parry",))
        assert opened.ineligible == ("a prone defender cannot Dodge (C9, C27)", "Block needs a shield (C9)")
        fight.defend("vesh", "parry")
        assert (last(fight, ActiveDefenseChosen).weapon, last(fight, HitDetermined).hit, hp(fight)) \
            == ("runeblade", True, 8)

    def test_a_spell_is_never_said_to_be_in_hand(self, play: Play) -> None:
        """docs/rulings.md, "A spell needs no hand": Vesh's sheet lists the shard first in ``wielding``, then the
        axe: the table is told the axe alone is in hand (the state's ``held``, what status, options and the seats'
        views show), as a Parry's refusal says."""
        fight = duel(play, [], defender=replace(vesh(weapons=(SHARD, AXE)), wielding=("shard", "axe")))
        vesh_now = fight.state.combatants["vesh"]
        assert vesh_now.wielding == ("shard", "axe") and vesh_now.held == ("axe",)
        assert next(b for b in fight.options().combatants if b.who == "vesh").in_hand == ("axe",)

    def test_no_weapon_in_hand_can_parry_it_the_words_stay(self, play: Play) -> None:
        """With only mundane weapons in hand (the axe and the dagger) the window records the refusal it always has,
        so the logs written before still audit: Dodge alone, 'a melee spell can be Parried only with a magical
        weapon'."""
        fight = duel(play, [6, 1, 1], attacker=kael(weapons=(SHARD,)),
                     defender=replace(vesh(weapons=(AXE, DAGGER)), wielding=("axe", "dagger")))
        fight.attack("kael", "vesh")
        opened = last(fight, ActiveDefenseWindowOpened)
        assert (opened.eligible, opened.ineligible) == (("dodge",), (
            "a melee spell can be Parried only with a magical weapon (§Which Defenses Apply)",
            "Block needs a shield (C9)"))
        fight.defend("vesh", None)

    def test_a_block_refused_for_a_shield_not_in_hand_lists_no_spell_in_hand(self, play: Play) -> None:
        """C9, C35, docs/rulings.md "A spell needs no hand": Vesh carries a buckler not in hand and wields the shard
        (a spell) and the axe: the Block's refusal says what is in hand as the Parry's does, the axe alone (it listed
        the shard too: a tester)."""
        defender = replace(vesh(weapons=(SHARD, AXE), shield=Shield(id="buckler", block_rating=2)),
                           wielding=("shard", "axe"))
        fight = duel(play, [6, 1, 1], defender=defender)
        fight.attack("kael", "vesh")
        said = str(refused(fight, lambda: fight.defend("vesh", "block"), "C9"))
        assert "Block needs the shield in hand (C9, C35): 'buckler' is not in hand; in hand: axe;" in said, said
        fight.defend("vesh", None)

    def test_a_spell_never_parries(self, play: Play) -> None:
        """docs/rulings.md "A spell needs no hand", C9: Vesh's sheet lists the shard first and in ``wielding``; a
        Parry naming it is refused; one naming no weapon takes the axe (STR d8 5 + 1 + rating 2 = 8, total 10),
        not the shard (it took 5 + 1 + 0 = 6, total 8, and the sword's 6 + 1 + 2 + 1 = 10 hit): 10 is no hit."""
        fight = duel(play, [6, 1, 1, 5], defender=replace(vesh(weapons=(SHARD, AXE)), wielding=("shard", "axe")))
        fight.attack("kael", "vesh")
        said = str(refused(fight, lambda: fight.defend("vesh", "parry", weapon="shard"), "C9"))
        assert said.startswith("[C9] 'vesh' cannot parry: shard is a spell, not a weapon to Parry with (C9; a spell "
                               "is never held: docs/rulings.md) (in hand: axe); this window allows dodge, parry or ")
        fight.defend("vesh", "parry")
        determined = last(fight, HitDetermined)
        assert (last(fight, ActiveDefenseChosen).weapon, determined.defense.total, determined.hit, hp(fight)) \
            == ("axe", 10, False, 20)

    def test_a_spell_alone_in_hand_gives_no_parry(self, play: Play) -> None:
        """C9: a sheet whose only weapon is a spell (wielded by default, C35) has no weapon to Parry with."""
        fight = duel(play, [6, 1, 1], defender=vesh(weapons=(SHARD,)))
        fight.attack("kael", "vesh")
        opened = last(fight, ActiveDefenseWindowOpened)
        assert (opened.eligible, opened.ineligible) == (("dodge",), ("Parry needs a wielded weapon (C9)",
                                                                     "Block needs a shield (C9)"))
        fight.defend("vesh", None)


# -- the window skipped --------------------------------------------------------------------------


class TestWindowSkipped:
    def test_skipped_when_the_attack_does_not_beat_base_defense(self, play: Play) -> None:
        """C8: hit 1+1+3 = 5 vs base 6+1 = 7: no window (nothing to defend against), a miss, HP unchanged."""
        fight = duel(play, [1, 1, 6], defender=vesh(weapons=(AXE,), shield=BUCKLER))
        fight.attack("kael", "vesh")
        assert fight.waiting_for is None
        assert "does not beat the base defense" in last(fight, ActiveDefenseWindowSkipped).reason
        determined = last(fight, HitDetermined)
        assert (determined.attack.total, determined.defense.base, determined.hit) == (5, 7, False)
        assert not [e for e in payloads(fight) if isinstance(e, ActiveDefenseWindowOpened)]
        assert (hp(fight), bonus_actions(fight)) == (20, 2)

    @pytest.mark.parametrize("condition", ["Incapacitated", "Paralysed"])
    def test_helpless_defender_rolls_no_res_die(self, play: Play, condition: str) -> None:
        """C10: no RES die (the spare stays unused); base = Defense Rating 1+2 = 3; crit FCS 1+1 = 2 > RES bonus 1."""
        # Hit: 2 + 1 + 3 = 6 > 3. Had a RES die been rolled (the spare 6), 2 vs 6+1 = 7 would be no crit.
        # Crit damage: 2 + STR 2 + crit 2 + WD 4 = 10, - mundane armor 2 = 8; HP 20 -> 12.
        fight = duel(play, [2, 1, 6], defender=vesh(armor=Armor(rating=2), weapons=(AXE,), shield=BUCKLER),
                     spare=1)
        fight.apply_condition("vesh", condition)
        fight.attack("kael", "vesh")
        assert [r[0] for r in rolls(fight)] == ["hit"]
        assert "C10" in last(fight, ActiveDefenseWindowSkipped).reason
        determined = last(fight, HitDetermined)
        assert (determined.defense.res_die, determined.defense.defense_rating, determined.defense.base) == (None, 3, 3)
        crit = determined.crit_check
        assert (crit.fcs_portion, crit.res_die, crit.res_portion, crit.exceeds) == (2, None, 1, True)
        assert (determined.hit, determined.crit) == (True, True)
        assert (last(fight, DamageResolved).terms.raw, hp(fight)) == (10, 12)

    def test_skipped_when_no_bonus_action_is_left(self, play: Play) -> None:
        """C8, C20: two Dodges spend both Bonus Actions; the third attack's window is skipped and it hits for 14."""
        # Each attack: 8 + 1 + 3 = 12 vs base 2 + 1 = 3. Dodge: 10 + 2 = 12, total 15: a miss (twice).
        fight = duel(play, [8, 1, 2, 10, 8, 1, 2, 10, 8, 1, 2])
        for left in (1, 0):
            fight.attack("kael", "vesh")
            fight.defend("vesh", "dodge")
            assert (last(fight, HitDetermined).hit, bonus_actions(fight)) == (False, left)
        fight.attack("kael", "vesh")
        assert fight.waiting_for is None
        assert "no Bonus Action left" in last(fight, ActiveDefenseWindowSkipped).reason
        assert (last(fight, HitDetermined).hit, hp(fight)) == (True, 6)

    def test_skipped_when_no_defense_is_eligible(self, play: Play) -> None:
        """C8, C9: a prone defender without weapon or shield has no eligible defense; 1+1+3+4 = 9 > 2 hits for 7."""
        fight = duel(play, [1, 1, 1])
        fight.apply_condition("vesh", "Prone")
        fight.attack("kael", "vesh")
        assert "no Active Defense is allowed" in last(fight, ActiveDefenseWindowSkipped).reason
        assert (last(fight, HitDetermined).attack.total, hp(fight)) == (9, 13)


# -- hit, crit and damage ------------------------------------------------------------------------


class TestHitAndCrit:
    def test_tie_is_a_miss(self, play: Play) -> None:
        """§Hit Determination: 4+1+3 = 8 against base 6 + (RES 1 + armor 1) = 8: the defender wins the tie."""
        fight = duel(play, [4, 1, 6], defender=vesh(armor=Armor(rating=1)))
        fight.attack("kael", "vesh")
        determined = last(fight, HitDetermined)
        assert (determined.attack.total, determined.defense.total, determined.hit) == (8, 8, False)
        assert not [e for e in payloads(fight) if isinstance(e, DamageResolved)] and hp(fight) == 20

    def test_crit_tie_is_no_crit(self, play: Play) -> None:
        """C7: a crit tie (FCS 3+1 = 4 vs RES 3+1 = 4) is no crit: damage 6+2+4 = 12, no extra bonus; HP 8."""
        fight = duel(play, [6, 3, 3])
        fight.attack("kael", "vesh")
        fight.defend("vesh", None)
        determined = last(fight, HitDetermined)
        crit = determined.crit_check
        assert (crit.fcs_portion, crit.res_portion, crit.exceeds, determined.crit) == (4, 4, False, False)
        assert (determined.hit, last(fight, DamageResolved).terms.crit_bonus, hp(fight)) == (True, 0, 8)

    def test_crit_turned_into_a_miss_by_active_defense_has_no_effect(self, play: Play) -> None:
        """C7: FCS 4+1 = 5 > RES 1+1 = 2, but Dodge 10+2 lifts 2 to 14 >= 13: a miss, no crit, no on_crit."""
        fight = duel(play, [6, 4, 1, 10])
        fight.attack("kael", "vesh", branches=Branches(on_crit=(ApplyCondition(condition="Prone"),)))
        fight.defend("vesh", "dodge")
        determined = last(fight, HitDetermined)
        assert (determined.attack.total, determined.defense.total) == (13, 14)
        assert (determined.crit_check.exceeds, determined.hit, determined.crit) == (True, False, False)
        assert not [e for e in payloads(fight) if isinstance(e, (DamageResolved, ConditionApplied))]
        assert hp(fight) == 20 and not fight.state.combatants["vesh"].prone

    def test_crit_doubles_only_the_primary_bonus(self, play: Play) -> None:
        """C12: crit damage = die 6 + STR 2 + extra STR 2 + WD 4 + modifier 1 = 15 (die, WD, modifier not doubled)."""
        fight = duel(play, [6, 4, 1])
        fight.attack("kael", "vesh", damage_modifiers=(Modifier(source="whetstone", value=1),))
        fight.defend("vesh", None)
        assert last(fight, HitDetermined).crit
        terms = last(fight, DamageResolved).terms
        assert (terms.dice, terms.primary_bonus, terms.crit_bonus, terms.weapon_damage) == (6, 2, 2, 4)
        assert (terms.modifiers, terms.raw, hp(fight)) == ((Modifier(source="whetstone", value=1),), 15, 5)

    @pytest.mark.parametrize("extra, primary, hit_total, raw", [
        (1, [3, 5], 12, 14),     # hit 3+5 + FCS 1 + 3 = 12; damage (3+5) + 2 + 4 = 14
        (2, [3, 5, 2], 14, 16),  # hit 3+5+2 + 1 + 3 = 14; damage (3+5+2) + 2 + 4 = 16
    ], ids=["one-extra", "two-extra"])
    def test_several_primary_dice_sum_into_hit_and_damage(self, play: Play, extra: int, primary: list[int],
                                                          hit_total: int, raw: int) -> None:
        """C6: extra primary dice are rolled first (C29) and damage uses their sum; base 2+1 = 3, no crit (1 < 2)."""
        fight = duel(play, [*primary, 1, 2], attacker=kael(features=Features(extra_primary_dice=extra)))
        fight.attack("kael", "vesh")
        fight.defend("vesh", None)
        assert rolls(fight)[0][2] == (*(("primary", 8, f) for f in primary), ("fcs", 4, 1))
        determined = last(fight, HitDetermined)
        assert (determined.attack.primary_dice, determined.attack.total, determined.crit) \
            == (tuple(primary), hit_total, False)
        assert (last(fight, DamageResolved).terms.dice, last(fight, DamageResolved).terms.raw) == (sum(primary), raw)
        assert hp(fight) == 20 - raw

    def test_brute_rage_dice_are_rolled_last_and_added(self, play: Play) -> None:
        """C12, C29, §Dice-Pool and Result-Routing Modifiers: rage 2d6 rolled after the Dodge die: damage 6+2+4 +
        rage 3+5 = 20; HP 30 -> 10."""
        # Hit 6+1+3 = 10 vs base 2+1 = 3; Dodge 1+2 = 3, total 6: hit. No crit (1 < 2).
        brute = kael(features=Features(rage=RageDice(count=2, die="d6")))
        fight = duel(play, [6, 1, 2, 1, 3, 5], attacker=brute, defender=vesh(hp=30))
        fight.attack("kael", "vesh", rage=True)
        fight.defend("vesh", "dodge")
        assert [(r[0], r[1]) for r in rolls(fight)] == [("hit", "kael"), ("base_defense", "vesh"),
                                                          ("active_defense", "vesh"), ("damage", "kael")]
        assert rolls(fight)[-1][2] == (("damage", 6, 3), ("damage", 6, 5))
        terms = last(fight, DamageResolved).terms
        assert (terms.ability_dice, terms.crit_bonus, terms.raw, hp(fight)) == ((3, 5), 0, 20, 10)

    @pytest.mark.parametrize("route, dice, raw", [
        (1, 3, 9),        # the first FCS die (3) feeds damage: 3 + 2 + 4 = 9
        (2, 1, 7),        # the Unseen attack's second FCS die (1): 1 + 2 + 4 = 7
        (None, 2, 8),     # no routing: the primary die 2: 2 + 2 + 4 = 8
    ], ids=["route-fcs-die", "route-unseen-die", "keep-primary"])
    def test_rogue_routes_a_die_to_damage(self, play: Play, route: int | None, dice: int, raw: int) -> None:
        """C12, C27, §Dice-Pool and Result-Routing Modifiers (docs/rulings.md: "Rogue (unseen expansion)"): after an
        Unseen hit (2 + 3 + 1 + 3 = 9 vs 4 + 1 = 5; crit (3 + 1) + 1 = 5 vs 5, no) the Rogue picks which rolled
        die feeds damage."""
        fight = duel(play, [2, 3, 1, 4], attacker=kael(features=Features(rogue_routing=True)))
        fight.apply_condition("kael", "Unseen")
        fight.attack("kael", "vesh")
        fight.defend("vesh", None)
        opened = fight.waiting_for
        assert isinstance(opened, RoutingWindowOpened) and opened.attacker == "kael"
        assert [(d.pool, d.face) for d in opened.dice] == [("primary", 2), ("fcs", 3), ("fcs", 1)]
        fight.route("kael", route)
        assert last(fight, DamageRouted).die == route
        assert (last(fight, HitDetermined).attack.total, last(fight, HitDetermined).crit) == (9, False)
        terms = last(fight, DamageResolved).terms
        assert (terms.routed_die, terms.dice, terms.raw, hp(fight)) == (route, dice, raw, 20 - raw)

    def test_rogue_gets_no_routing_window_when_seen(self, play: Play) -> None:
        """C12, §Dice-Pool and Result-Routing Modifiers, docs/rulings.md: routing is the Unseen attack's expansion: a
        seen Rogue's hit (2 + 4 + 3 = 9 vs 4 + 1 = 5, crit 5 vs 5 no) deals its primary die at once: 2 + 2 + 4 =
        8."""
        fight = duel(play, [2, 4, 4], attacker=kael(features=Features(rogue_routing=True)))
        fight.attack("kael", "vesh")
        fight.defend("vesh", None)
        assert fight.waiting_for is None
        assert not [e for e in payloads(fight) if isinstance(e, RoutingWindowOpened)]
        assert (last(fight, DamageResolved).terms.raw, hp(fight)) == (8, 12)

    def test_rogue_gets_no_routing_window_on_a_miss(self, play: Play) -> None:
        """C12: routing feeds damage, so a miss (1+1+3 = 5 vs 6+1 = 7) opens no routing window."""
        fight = duel(play, [1, 1, 6], attacker=kael(features=Features(rogue_routing=True)))
        fight.attack("kael", "vesh")
        assert fight.waiting_for is None
        assert not [e for e in payloads(fight) if isinstance(e, RoutingWindowOpened)]


# -- damage reduction ----------------------------------------------------------------------------


class TestMitigation:
    """Kael's sword hits 6+1+3 = 10 for 6 + 2 + 4 = 12 raw slashing (torch: 12 raw fire); Vesh declines."""

    def hit_for_12(self, play: Play, weapon: Weapon = SWORD, **defender: Any) -> Fight:
        fight = duel(play, [6, 1, 1], attacker=kael(weapons=(weapon,)), defender=vesh(**defender))
        fight.attack("kael", "vesh")
        fight.defend("vesh", None)
        assert last(fight, DamageResolved).terms.raw == 12
        return fight

    def test_type_resistance_comes_first(self, play: Play) -> None:
        """C13 (1): slashing resistance 3: 12 - 3 = 9; nothing else applies; HP 11."""
        fight = self.hit_for_12(play, resistances={"slashing": 3})
        assert steps(fight) == [("resistance", 3, 9), ("physical rollover", 0, 9), ("armor", 0, 9),
                                ("floor", 0, 9), ("incoming", 0, 9)]
        assert hp(fight) == 11

    def test_physical_rollover_then_armor(self, play: Play) -> None:
        """C13 (1-3): 12 - slashing 2 = 10, - Physical 3 = 7, - armor 2 = 5; HP 15."""
        fight = self.hit_for_12(play, resistances={"slashing": 2, "physical": 3}, armor=Armor(rating=2))
        assert steps(fight) == [("resistance", 2, 10), ("physical rollover", 3, 7), ("armor", 2, 5),
                                ("floor", 0, 5), ("incoming", 0, 5)]
        assert hp(fight) == 15

    def test_physical_resistance_and_mundane_armor_skip_fire(self, play: Play) -> None:
        """C13: fire takes fire resistance 1 only: 12 - 1 = 11 (no Physical 3, no mundane armor 2); HP 9."""
        fight = self.hit_for_12(play, TORCH, resistances={"fire": 1, "physical": 3}, armor=Armor(rating=2))
        assert last(fight, HitDetermined).defense.armor_applies is False
        assert steps(fight) == [("resistance", 1, 11), ("physical rollover", 0, 11), ("armor", 0, 11),
                                ("floor", 0, 11), ("incoming", 0, 11)]
        assert (last(fight, DamageResolved).damage_type, hp(fight)) == ("fire", 9)

    def test_damage_floors_at_zero_and_never_heals(self, play: Play) -> None:
        """C13 (4): 12 - 10 - 3 - armor 2 = -3, floored to 0; HP stays 20 and no HP change is logged."""
        fight = self.hit_for_12(play, resistances={"slashing": 10, "physical": 3}, armor=Armor(rating=2))
        assert steps(fight) == [("resistance", 10, 2), ("physical rollover", 3, -1), ("armor", 2, -3),
                                ("floor", 3, 0), ("incoming", 0, 0)]
        assert last(fight, DamageResolved).final == 0 and hp(fight) == 20
        assert not [e for e in payloads(fight) if isinstance(e, ResourceChanged)]

    @pytest.mark.parametrize("multiply, add, final", [
        (0.5, 1, 6),     # 11 x 0.5 = 5.5, + 1 = 6.5, round down 6
        (1.5, -2, 14),   # 11 x 1.5 = 16.5, - 2 = 14.5, round down 14 (adding first would give 13)
        (0.5, -10, 0),   # 5.5 - 10 = -4.5, floor 0
    ], ids=["halve-plus-one", "multiply-then-add", "floor-zero"])
    def test_incoming_modifier_multiplies_then_adds(self, play: Play, multiply: float, add: int, final: int) -> None:
        """C13 (5): after slashing resistance 1 (12 -> 11), incoming damage multiplies, adds, rounds down, floors 0."""
        fight = self.hit_for_12(play, resistances={"slashing": 1},
                                incoming=IncomingDamage(multiply=multiply, add=add))
        assert steps(fight)[3:] == [("floor", 0, 11), ("incoming", final - 11, final)]
        assert (last(fight, DamageResolved).final, hp(fight)) == (final, 20 - final)

    def test_will_conversion_moves_physical_damage_to_will(self, play: Play) -> None:
        """§Damage, C13: with Will conversion, 12 slashing - mundane armor 2 = 10 lands on Will (20 -> 10), not HP."""
        fight = duel(play, [6, 1, 1], defender=vesh(will=20, armor=Armor(rating=2),
                                                    features=Features(will_conversion=True)))
        fight.attack("kael", "vesh")
        fight.defend("vesh", None)
        dealt = last(fight, DamageResolved)
        assert (dealt.final, dealt.resource) == (10, "will")
        changed = last(fight, ResourceChanged)
        assert (changed.resource, changed.before, changed.after) == ("will", 20, 10)
        assert (hp(fight), fight.state.combatants["vesh"].will) == (20, 10)

    def test_will_conversion_leaves_fire_on_hp(self, play: Play) -> None:
        """§Damage, C13: Will conversion is for physical damage: 12 fire still hits HP (20 -> 8), Will stays 20."""
        fight = self.hit_for_12(play, TORCH, will=20, features=Features(will_conversion=True))
        assert last(fight, DamageResolved).resource == "hp"
        assert (hp(fight), fight.state.combatants["vesh"].will) == (8, 20)

    def test_hp_reaching_zero_sets_dying_and_never_goes_below(self, play: Play) -> None:
        """C28: 12 damage on 5 HP leaves 0 (not -7) and sets Dying; a second hit changes nothing more (at 0 HP
        Vesh rolls no RES die and has no Active Defense window, C36: the second attack rolls 2 dice, not 3)."""
        fight = duel(play, [6, 1, 1, 6, 1], defender=vesh(hp=5))
        fight.attack("kael", "vesh")
        fight.defend("vesh", None)
        changed = last(fight, ResourceChanged)
        assert (changed.before, changed.after, hp(fight)) == (5, 0, 0)
        dying = last(fight, ConditionApplied)
        assert (dying.who, dying.condition, dying.stacks) == ("vesh", "Dying", 1)
        fight.attack("kael", "vesh")
        assert isinstance(last(fight, ActiveDefenseWindowSkipped), ActiveDefenseWindowSkipped)
        assert hp(fight) == 0 and fight.state.combatants["vesh"].conditions["Dying"] == 1
        assert len([e for e in payloads(fight) if isinstance(e, (ResourceChanged, ConditionApplied))]) == 2


# -- C36: a defender at 0 HP -----------------------------------------------------------------------

#: Vesh in armor rated 6: Defense Rating = RES bonus 1 + armor 6 = 7 (C11).
PLATED = Armor(rating=6)
SKIPPED_AT_0_HP = ("the defender is at 0 HP, Dying: treated as Incapacitated: no base defense die and no Active "
                   "Defense (C36)")


def dropped(fight: Fight) -> Fight:
    """Kael takes the plated Vesh (5 HP) to 0 with the first faces [8, 1, 1]: hit 8 + 1 + 3 = 12 vs base
    1 + 7 = 8, the window declined; crit FCS 1 + 1 = 2 vs RES 1 + 1 = 2: none; damage 8 + 2 + 4 = 14 - 6 armor
    = 8 >= 5: HP 0, Dying."""
    fight.attack("kael", "vesh")
    fight.defend("vesh", None)
    assert hp(fight) == 0 and fight.state.combatants["vesh"].has("Dying")
    return fight


class TestDefenderAtZeroHp:
    """C36 (treated as Incapacitated, C10): no base defense die, base defense = Defense Rating, the crit against
    the RES bonus alone, no Active Defense window; it can still be attacked."""

    @pytest.mark.parametrize("primary, hit", [(3, False), (4, True)])
    def test_defense_is_the_defense_rating_alone(self, play: Play, primary: int, hit: bool) -> None:
        """C36, C10, C11: the second attack rolls Kael's two dice and no RES die; hit total primary + 1 + 3 against
        the Defense Rating 7 alone (3: 7, a tie, misses; 4: 8 hits); crit FCS 1 + 1 = 2 > RES bonus 1, so a hit
        is a crit; the window is skipped, naming C36."""
        fight = dropped(duel(play, [8, 1, 1, primary, 1], defender=vesh(hp=5, armor=PLATED)))
        mark = len(fight.events)
        fight.attack("kael", "vesh")
        later = payloads(fight)[mark:]
        assert [(e.purpose, e.roller, [d.face for d in e.dice]) for e in later if isinstance(e, DiceRolled)] == [
            ("hit", "kael", [primary, 1])]
        skipped = last(fight, ActiveDefenseWindowSkipped)
        assert (skipped.defender, skipped.reason) == ("vesh", SKIPPED_AT_0_HP)
        determined = last(fight, HitDetermined)
        defense, crit = determined.defense, determined.crit_check
        assert (defense.res_die, defense.defense_rating, defense.base, defense.total) == (None, 7, 7, 7)
        assert (determined.attack.total, determined.hit, determined.crit) == (primary + 4, hit, hit)
        assert (crit.fcs_portion, crit.res_die, crit.res_portion, crit.exceeds) == (2, None, 1, True)
        assert fight.waiting_for is None and hp(fight) == 0

    @given(primary=st.integers(1, 8), fcs=st.integers(1, 4))
    @settings(max_examples=40, deadline=None)
    def test_every_attack_on_it_is_decided_without_a_defense_roll(self, primary: int, fcs: int) -> None:
        """C36, C10: whatever Kael rolls, an attack on Vesh at 0 HP rolls only Kael's two dice, opens no window,
        hits iff primary + fcs + 3 > 7 and crits iff it hits (FCS fcs + 1 > RES bonus 1 always)."""
        fight = dropped(new_fight(kael(), vesh(hp=5, armor=PLATED), faces=[8, 1, 1, primary, fcs]))
        fight.attack("kael", "vesh")
        determined = last(fight, HitDetermined)
        hits = primary + fcs + 3 > 7
        assert (determined.hit, determined.crit, determined.defense.total) == (hits, hits, 7)
        assert scripted(fight).remaining == 0 and fight.waiting_for is None
        assert_replays(fight)

    def test_an_attacker_at_0_hp_is_refused(self, play: Play) -> None:
        """C36: Vesh at 0 HP cannot strike back: the attack is refused naming C36; nothing is written."""
        fight = dropped(duel(play, [8, 1, 1], defender=vesh(hp=5, armor=PLATED, weapons=(SWORD,))))
        before = fight.events
        with pytest.raises(RuleViolation) as info:
            fight.attack("vesh", "kael")
        assert info.value.rule == "C36" and fight.events == before


# -- situational modifiers -----------------------------------------------------------------------


class TestSituational:
    """A bare sword hit is 1 + 1 + 3 = 5 against Vesh's base defense 1 + 1 = 2."""

    def hit_total(self, play: Play, *, weapon: Weapon = SWORD, prone: bool = False, **claims: Any) -> tuple[int,
                  list[int]]:
        fight = duel(play, [1, 1, 1], attacker=kael(weapons=(weapon,)))
        attackers, defenders = claims.get("encircled") or (1, 1)
        for i in range(attackers - 1):  # C26 counts combatants in the fight: the sides have them (in the set-up)
            fight.join(sheet(f"ally{i}", "heroes"))
        for i in range(defenders - 1):
            fight.join(sheet(f"guard{i}", "raiders"))
        if prone:
            fight.apply_condition("vesh", "Prone")
        fight.attack("kael", "vesh", **claims)
        if fight.waiting_for is not None:
            fight.defend("vesh", None)
        attack = last(fight, HitDetermined).attack
        return attack.total, [m.value for m in attack.situational]

    def test_high_ground(self, play: Play) -> None:
        """C27: high ground +2: 5 + 2 = 7."""
        assert self.hit_total(play, high_ground=True) == (7, [2])

    @pytest.mark.parametrize("circle, bonus", [
        ((2, 1), 2),   # A = 2 = 2D: applies, 2 x (2 - 1) = 2
        ((3, 2), 0),   # A = 3 = 2D - 1: does not apply
        ((4, 2), 4),   # A = 4 = 2D: 2 x (4 - 2) = 4
        ((5, 1), 6),   # 2 x (5 - 1) = 8, capped at 6
    ], ids=["2v1", "3v2", "4v2", "5v1-capped"])
    def test_encircled_boundaries(self, play: Play, circle: tuple[int, int], bonus: int) -> None:
        """C26: +min(6, 2(A - D)) iff A >= 2D."""
        assert self.hit_total(play, encircled=circle) == (5 + bonus, [bonus])

    def test_prone_target_in_melee(self, play: Play) -> None:
        """C27: melee against a prone target +4: 5 + 4 = 9."""
        assert self.hit_total(play, prone=True) == (9, [4])

    def test_prone_target_at_range(self, play: Play) -> None:
        """C27: a bow (hit +1) against a prone target -2: 1 + 1 + 2 + 1 - 2 = 3."""
        assert self.hit_total(play, weapon=BOW, prone=True) == (3, [-2])

    @pytest.mark.parametrize(("circle", "field", "said"), [
        ((3, 1), "attackers", "an Encircled claim of 3 attackers, but the attacking side (heroes) has 2 in the fight"),
        ((2, 3), "defenders", "an Encircled claim of 3 defenders, but the target's side (raiders) has 2 in the fight"),
    ])
    def test_an_encircled_claim_past_a_sides_numbers_is_refused(self, play: Play, circle: tuple[int, int],
                                                                 field: str, said: str) -> None:
        """C26: A counts the attacking side's combatants adjacent to the target (the attacker included), D the
        target's side's adjacent to the attacker: with two a side, a claim of 3 is refused at its field, nothing
        written (a claim of 5 for a side of 2 was taken at full value: a tester)."""
        fight = duel(play, [])
        fight.join(sheet("brin", "heroes"))
        fight.join(sheet("skarn", "raiders"))
        failed = refused(fight, lambda: fight.attack("kael", "vesh", encircled=circle), "C26")
        assert (str(failed), failed.facts["field"]) == (f"[C26] {said}", f"$.situational.encircled.{field}")

    def test_a_damage_modifier_past_1000_is_refused(self, play: Play) -> None:
        """C12, docs/rulings.md: a damage modifier is at most 1000 either way (a GM's form took 1e9 and dealt it: a
        tester); 1000 itself is taken."""
        fight = duel(play, [1, 1, 1])
        failed = refused(fight, lambda: fight.attack("kael", "vesh", damage_modifiers=(
            Modifier(source="poison", value=-1001),)), "C12")
        assert failed.facts["field"] == "$.damage_modifiers[0].value"
        fight.attack("kael", "vesh", damage_modifiers=(Modifier(source="poison", value=1000),))

    def test_all_claims_stack(self, play: Play) -> None:
        """C26, C27: high ground 2 + encircled (4, 2) 4 + prone melee 4: 5 + 10 = 15."""
        assert self.hit_total(play, prone=True, high_ground=True, encircled=(4, 2)) == (15, [2, 4, 4])

    def test_unseen_attacker_rolls_a_second_fcs_die_then_is_seen(self, play: Play) -> None:
        """C27: Unseen: hit 5+3+4+3 = 15; crit (3+4)+1 = 8 > 6+1 = 7 (one die: 5, no crit); 13 damage; seen after."""
        # Damage on the crit: 5 + STR 2 + extra 2 + WD 4 = 13; HP 20 -> 7.
        fight = duel(play, [5, 3, 4, 6])
        fight.apply_condition("kael", "Unseen")
        fight.attack("kael", "vesh")
        assert rolls(fight)[0][2] == (("primary", 8, 5), ("fcs", 4, 3), ("fcs", 4, 4))
        fight.defend("vesh", None)
        determined = last(fight, HitDetermined)
        assert (determined.attack.fcs_dice, determined.attack.total) == ((3, 4), 15)
        assert (determined.crit_check.fcs_portion, determined.crit_check.res_portion, determined.crit) == (8, 7, True)
        assert (last(fight, DamageResolved).terms.raw, hp(fight)) == (13, 7)
        cleared = last(fight, ConditionCleared)
        assert (cleared.who, cleared.condition) == ("kael", "Unseen")
        assert not fight.state.combatants["kael"].unseen

    def test_unseen_ends_after_a_miss_too(self, play: Play) -> None:
        """C27: 1+1+1+3 = 6 vs 6+1 = 7 misses, and the attacker is still no longer Unseen."""
        fight = duel(play, [1, 1, 1, 6])
        fight.apply_condition("kael", "Unseen")
        fight.attack("kael", "vesh")
        assert (last(fight, HitDetermined).attack.total, last(fight, HitDetermined).hit) == (6, False)
        assert last(fight, ConditionCleared).condition == "Unseen"
        assert not fight.state.combatants["kael"].unseen


# -- branches ------------------------------------------------------------------------------------

BRANCHES = Branches(
    on_hit=(ApplyCondition(condition="Prone"), DealDamage(flat=3, damage_type="fire")),
    on_miss=(ApplyCondition(to="actor", condition="Fatigued"),),
    on_crit=(DealDamage(flat=2, damage_type="cold"),),
)


def outcome(fight: Fight) -> list[tuple[object, ...]]:
    """What the attack did after hit determination, in log order."""
    out: list[tuple[object, ...]] = []
    for e in payloads(fight):
        if isinstance(e, DamageResolved):
            out.append(("damage", e.damage_type, e.final))
        elif isinstance(e, ConditionApplied) and e.action is not None:
            out.append(("condition", e.who, e.condition))
    return out


class TestBranches:
    def test_on_hit_consequences_apply_in_written_order(self, play: Play) -> None:
        """C25: a plain hit (6+1+3 = 10 > 2, no crit): weapon 12 (HP 8), Prone, then 3 fire (HP 5); no miss/crit."""
        fight = duel(play, [6, 1, 1])
        fight.attack("kael", "vesh", branches=BRANCHES)
        fight.defend("vesh", None)
        assert outcome(fight) == [("damage", "slashing", 12), ("condition", "vesh", "Prone"), ("damage", "fire", 3)]
        assert hp(fight) == 5 and fight.state.combatants["vesh"].prone
        assert not fight.state.combatants["kael"].conditions

    def test_on_miss_consequences_only_on_a_miss(self, play: Play) -> None:
        """C25: a miss (1+1+3 = 5 vs 6+1 = 7) applies only on_miss: Kael is Fatigued, Vesh untouched."""
        fight = duel(play, [1, 1, 6])
        fight.attack("kael", "vesh", branches=BRANCHES)
        assert outcome(fight) == [("condition", "kael", "Fatigued")]
        assert hp(fight) == 20 and not fight.state.combatants["vesh"].conditions

    def test_on_crit_follows_on_hit(self, play: Play) -> None:
        """C25: a crit (FCS 4+1 > RES 1+1): weapon 6+2+2+4 = 14 (HP 6), Prone, 3 fire (3), then 2 cold (1)."""
        fight = duel(play, [6, 4, 1])
        fight.attack("kael", "vesh", branches=BRANCHES)
        fight.defend("vesh", None)
        assert last(fight, HitDetermined).crit
        assert outcome(fight) == [("damage", "slashing", 14), ("condition", "vesh", "Prone"),
                                  ("damage", "fire", 3), ("damage", "cold", 2)]
        assert hp(fight) == 1


# -- illegal commands ----------------------------------------------------------------------------


class TestIllegalCommands:
    def test_dodge_while_prone(self, play: Play) -> None:
        """C9: a prone defender cannot Dodge; the refusal says what the window allows (a Parry with the axe in hand,
        or declining) and what is legal now, as other refusals inside a window do. Kael: STR 6 + FCS 1 + 2 + 1
        sword = 10 against vesh's base RES 1 + 1 = 2: the window opens."""
        fight = duel(play, [6, 1, 1, 5], defender=vesh(weapons=(AXE,)), spare=1)
        fight.apply_condition("vesh", "Prone")
        fight.attack("kael", "vesh")
        said = str(refused(fight, lambda: fight.defend("vesh", "dodge"), "C9"))
        assert said == ("[C9] 'vesh' cannot dodge: a prone defender cannot Dodge (C9, C27); this window allows parry "
                        "or declining; legal now: answer_active_defense by vesh (Active Defense, C8); the GM's "
                        "cancel_action; the GM's end_fight or undo")
        fight.defend("vesh", None)

    def test_a_weapon_with_a_dodge_a_block_or_declining_is_refused(self, play: Play) -> None:
        """C9: a weapon goes with a Parry alone; options() never offers one with a Dodge, a Block or declining, so
        none is accepted (found by a tester: it was recorded as given, even one the defender does not carry)."""
        fight = duel(play, [6, 1, 1, 5], defender=vesh(weapons=(AXE,)), spare=1)
        fight.attack("kael", "vesh")
        said = str(refused(fight, lambda: fight.defend("vesh", "dodge", weapon="no-such-thing"), "C9"))
        assert said == "[C9] a weapon goes with a Parry alone: a Dodge names none (weapon 'no-such-thing' given)"
        said = str(refused(fight, lambda: fight.defend("vesh", None, weapon="axe"), "C9"))
        assert said == "[C9] a weapon goes with a Parry alone: declining names none (weapon 'axe' given)"
        answers = next(o for o in fight.options().offers if o.command == "answer_active_defense")
        assert all(c.args.get("defense") == "parry" for c in answers.choices if "weapon" in c.args)
        fight.defend("vesh", None)

    def test_parry_with_a_weapon_not_in_hand(self, play: Play) -> None:
        """C9, C35: vesh holds the axe (the first weapon, wielded by default) and carries the dagger: a Parry with
        the dagger is refused, naming what is in hand, what the window allows and what is legal now. 10 against
        2, as above: the window opens."""
        fight = duel(play, [6, 1, 1, 5], defender=vesh(weapons=(AXE, DAGGER)), spare=1)
        fight.attack("kael", "vesh")
        said = str(refused(fight, lambda: fight.defend("vesh", "parry", weapon="dagger"), "C9"))
        assert said.startswith("[C9] 'vesh' cannot parry: Parry needs a wielded weapon (C9) ('dagger' is not in "
                               "hand; in hand: axe); this window allows dodge, parry or declining; legal now: "
                               "answer_active_defense by vesh (Active Defense, C8)")
        fight.defend("vesh", None)

    def test_parry_with_a_weapon_the_sheet_has_not(self, play: Play) -> None:
        """C4, C9: a Parry naming a bow vesh's sheet does not list is refused saying so, as an attack naming one is
        (it said "'bow' is not in hand", as if it had one to draw: found by a tester). 10 against 2: the window
        opens."""
        fight = duel(play, [6, 1, 1, 5], defender=vesh(weapons=(AXE, DAGGER)), spare=1)
        fight.attack("kael", "vesh")
        said = str(refused(fight, lambda: fight.defend("vesh", "parry", weapon="bow"), "C9"))
        assert said.startswith("[C9] 'vesh' cannot parry: Parry needs a wielded weapon (C9) ('vesh' has no weapon "
                               "'bow' (weapons: axe, dagger); in hand: axe); this window allows")
        fight.defend("vesh", None)

    def test_parry_with_the_shield_says_a_shield_is_no_weapon(self, play: Play) -> None:
        """C9, C35: vesh holds the axe and its buckler (id: shield); a Parry naming the shield is refused saying a
        shield is not a weapon to Parry with (it said "'shield' is not in hand" while the shield was in hand; found
        by a tester). 10 against 2, as above: the window opens."""
        fight = duel(play, [6, 1, 1, 5], defender=replace(vesh(weapons=(AXE,), shield=BUCKLER),
                                                          wielding=("axe", "shield")), spare=1)
        fight.attack("kael", "vesh")
        said = str(refused(fight, lambda: fight.defend("vesh", "parry", weapon="shield"), "C9"))
        assert said.startswith("[C9] 'vesh' cannot parry: Parry needs a wielded weapon (C9) ('shield' is a shield, "
                               "not a weapon to Parry with (a shield Blocks); in hand: axe); this window allows dodge, "
                               "parry, block or declining; legal now: ")
        fight.defend("vesh", None)

    def test_parry_with_nothing_in_hand(self, play: Play) -> None:
        """C9, C35: vesh carries the axe but holds nothing: a Parry is refused, saying no weapon is in hand; the
        window allows a Dodge or declining. 10 against 2: the window opens."""
        fight = duel(play, [6, 1, 1, 5], defender=replace(vesh(weapons=(AXE,)), wielding=()), spare=1)
        fight.attack("kael", "vesh")
        said = str(refused(fight, lambda: fight.defend("vesh", "parry"), "C9"))
        assert "Parry needs a wielded weapon (C9) (in hand: no weapon); this window allows dodge or declining" in said
        fight.defend("vesh", None)

    def test_a_ranged_spells_block_refused_says_the_whole_line(self, play: Play) -> None:
        """§Which Defenses Apply ("Ranged Spell attacks can be Dodged; Blocked only with a magical shield and Veteran
        Shield Training"): Kael's firebolt on Vesh, who holds a mundane buckler and has no training: the Block is
        refused naming both (it named the magical shield alone: a rules lawyer); the window's recorded refusal keeps
        its words."""
        fight = duel(play, [6, 1, 1, 5], attacker=kael(weapons=(FIREBOLT,)), defender=vesh(**MUNDANE_KIT), spare=1)
        fight.attack("kael", "vesh")
        said = str(refused(fight, lambda: fight.defend("vesh", "block"), "C9"))
        assert ("'vesh' cannot block: a spell attack can be Blocked only with a magical shield, and a ranged one with "
                "Veteran Shield Training too (§Which Defenses Apply: \"Ranged Spell attacks can be Dodged; Blocked "
                "only with a magical shield and Veteran Shield Training\")") in said, said
        assert "a spell attack can be Blocked only with a magical shield (§Which Defenses Apply)" in \
            last(fight, ActiveDefenseWindowOpened).ineligible
        fight.defend("vesh", None)

    def test_block_without_a_shield(self, play: Play) -> None:
        """C9: Block needs a shield."""
        fight = duel(play, [6, 1, 1, 5], spare=1)
        fight.attack("kael", "vesh")
        refused(fight, lambda: fight.defend("vesh", "block"), "C9")
        fight.defend("vesh", None)

    def test_block_with_a_shield_carried_but_not_in_hand(self, play: Play) -> None:
        """C9, C35: vesh carries a buckler (its id: shield) but holds only the axe: a Block is refused, saying the
        shield is not in hand and what is (it said "Block needs a shield (C9)", found by a tester); the window's
        recorded refusals keep their words (the logs already written still audit). 10 against 2: the window opens."""
        fight = duel(play, [6, 1, 1, 5], defender=replace(vesh(weapons=(AXE,), shield=BUCKLER), wielding=("axe",)),
                     spare=1)
        fight.attack("kael", "vesh")
        said = str(refused(fight, lambda: fight.defend("vesh", "block"), "C9"))
        assert said.startswith("[C9] 'vesh' cannot block: Block needs the shield in hand (C9, C35): 'shield' is not "
                               "in hand; in hand: axe; this window allows dodge, parry or declining; legal now: ")
        fight.defend("vesh", None)

    def test_parry_against_a_ranged_attack(self, play: Play) -> None:
        """C9, §Which Defenses Apply: ranged attacks cannot be Parried, even with a weapon in hand."""
        fight = duel(play, [6, 1, 1, 5], attacker=kael(weapons=(BOW,)), defender=vesh(weapons=(AXE,)), spare=1)
        fight.attack("kael", "vesh")
        refused(fight, lambda: fight.defend("vesh", "parry"), "C9")
        fight.defend("vesh", None)

    def test_second_active_defense_on_the_same_attack(self, play: Play) -> None:
        """C8: at most one Active Defense per attack: a second answer while the attack still waits is refused."""
        # Unseen: 8+1+1+3 = 13 vs 2+1 = 3; Dodge 1+2 = 3, total 6: a hit (crit 2+1 = 3 vs 3: no), and the
        # Unseen Rogue's routing window keeps the attack open.
        fight = duel(play, [8, 1, 1, 2, 1, 5], attacker=kael(features=Features(rogue_routing=True)), spare=1)
        fight.apply_condition("kael", "Unseen")
        fight.attack("kael", "vesh")
        fight.defend("vesh", "dodge")
        assert isinstance(fight.waiting_for, RoutingWindowOpened)
        refused(fight, lambda: fight.defend("vesh", "dodge"), "C8")
        refused(fight, lambda: fight.defend("vesh", None), "C8")
        fight.route("kael", None)
        refused(fight, lambda: fight.defend("vesh", "dodge"), "C8")

    def test_answering_with_no_window_open(self, play: Play) -> None:
        """C8: an Active Defense answers an open window; at rest there is none."""
        fight = duel(play, [5], spare=1)
        refused(fight, lambda: fight.defend("vesh", "dodge"), "C8")
        refused(fight, lambda: fight.defend("vesh", None), "C8")

    def test_answering_for_the_wrong_defender(self, play: Play) -> None:
        """C8: the window is Vesh's; Kael cannot answer it."""
        fight = duel(play, [6, 1, 1, 5], spare=1)
        fight.attack("kael", "vesh")
        refused(fight, lambda: fight.defend("kael", "dodge"), "C8")
        refused(fight, lambda: fight.defend("kael", None), "C8")
        fight.defend("vesh", None)

    def test_active_defense_with_no_bonus_action_left(self, play: Play) -> None:
        """C8: with both Bonus Actions spent the window is skipped, so a Dodge is refused."""
        fight = duel(play, [8, 1, 2, 10, 8, 1, 2, 10, 8, 1, 2, 5], spare=1)
        for _ in range(2):
            fight.attack("kael", "vesh")
            fight.defend("vesh", "dodge")
        fight.attack("kael", "vesh")
        assert bonus_actions(fight) == 0 and isinstance(payloads(fight)[-1], ActionSettled)
        refused(fight, lambda: fight.defend("vesh", "dodge"), "C8")

    def test_attacking_oneself(self, play: Play) -> None:
        """§Resolving an Attack: an attack needs a target other than the attacker."""
        fight = duel(play, [6, 1, 1], spare=3)
        refused(fight, lambda: fight.attack("kael", "kael"), "§Resolving an Attack")

    def test_unknown_weapon(self, play: Play) -> None:
        """C4: the weapon must be on the attacker's sheet."""
        fight = duel(play, [6, 1, 1], spare=3)
        refused(fight, lambda: fight.attack("kael", "vesh", weapon="halberd"), "C4")

    def test_rage_without_rage_dice(self, play: Play) -> None:
        """C12: only a combatant with Brute rage dice can add them."""
        fight = duel(play, [6, 1, 1], spare=3)
        refused(fight, lambda: fight.attack("kael", "vesh", rage=True), "C12")

    @pytest.mark.parametrize("condition", ["Incapacitated", "Paralysed"])
    def test_helpless_attacker(self, play: Play, condition: str) -> None:
        """C10: an incapacitated or paralysed combatant cannot attack."""
        fight = duel(play, [6, 1, 1], spare=3)
        fight.apply_condition("kael", condition)
        refused(fight, lambda: fight.attack("kael", "vesh"), "C10")

    @pytest.mark.parametrize("attacker, target", [("ghost", "vesh"), ("kael", "ghost")], ids=["attacker", "target"])
    def test_unknown_combatant(self, play: Play, attacker: str, target: str) -> None:
        """A combatant who has not joined can neither attack nor be attacked."""
        fight = duel(play, [6, 1, 1], spare=3)
        error = refused(fight, lambda: fight.attack(attacker, target), "setup")
        assert isinstance(error, UnknownCombatant) and error.combatant == "ghost"


# -- C35: gear in hand ---------------------------------------------------------------------------


class TestGearInHand:
    def test_the_first_weapon_and_any_shield_start_in_hand(self, play: Play) -> None:
        """C35: with no ``wielding`` on the sheet, the first weapon and the shield are in hand; the rest is
        carried."""
        fight = duel(play, [], defender=vesh(weapons=(AXE, DAGGER), shield=BUCKLER))
        assert fight.state.combatants["vesh"].wielding == ("axe", "shield")

    def test_wielding_names_weapons_and_the_shield(self, play: Play) -> None:
        """C35: ``wielding`` may name the shield by its id; what it leaves out is carried, not in hand."""
        defender = replace(vesh(weapons=(AXE, DAGGER), shield=Shield(id="buckler", block_rating=2)),
                           wielding=("dagger", "buckler"))
        fight = duel(play, [], defender=defender)
        assert fight.state.combatants["vesh"].wielding == ("dagger", "buckler")

    def test_a_weapon_not_in_hand_cannot_attack_until_drawn(self, play: Play) -> None:
        """C35: kael carries an axe but holds the sword: an axe attack is refused, naming what is in hand; once
        drawn (free, outside the rounds), the axe attack is declared."""
        fight = duel(play, [6, 1, 1], attacker=kael(weapons=(SWORD, AXE)))
        error = refused(fight, lambda: fight.attack("kael", "vesh", weapon="axe"), "C35")
        assert "'axe'" in str(error) and "sword" in str(error) and error.facts["field"] == "$.weapon"
        assert as_(fight.draw("kael", "axe")[0], WeaponDrawn).cost == "free"
        fight.attack("kael", "vesh", weapon="axe")
        assert last(fight, AttackDeclared).weapon == "axe"
        fight.defend("vesh", None)

    def test_a_spell_needs_no_hand(self, play: Play) -> None:
        """C35, docs/rulings.md: a spell written as a weapon (the ``spell`` property) is no gear: kael casts the
        shard while holding only the sword."""
        fight = duel(play, [6, 1, 1], attacker=kael(weapons=(SWORD, SHARD)))
        assert fight.state.combatants["kael"].wielding == ("sword",)
        fight.attack("kael", "vesh", weapon="shard")
        assert last(fight, AttackDeclared).weapon == "shard"
        fight.defend("vesh", None)

    def test_a_spell_is_never_drawn_nor_offered(self, play: Play) -> None:
        """C35, docs/rulings.md "A spell needs no hand": drawing the shard is refused (it was drawn, and then parried
        with: found by a tester), nothing written; options() offers drawing the axe, not the shard."""
        fight = duel(play, [], attacker=kael(weapons=(SWORD, SHARD, AXE)))
        said = str(refused(fight, lambda: fight.draw("kael", "shard"), "C35"))
        assert said == ("[C35] 'kael' cannot draw 'shard': it is a spell, no gear; it needs no hand and is never drawn "
                        "(docs/rulings.md, \"A spell needs no hand\")")
        draws = next(o for o in fight.options().offers if o.command == "draw" and o.actor == "kael")
        assert [c.args["weapon"] for c in draws.choices] == ["axe"]
        assert fight.state.combatants["kael"].wielding == ("sword",)

    def test_unarmed_needs_nothing_and_takes_no_weapon(self, play: Play) -> None:
        """C35, C12: an unarmed attack needs nothing in hand; naming a weapon as well is refused."""
        fight = duel(play, [6, 1, 1], attacker=replace(kael(), wielding=()))
        refused(fight, lambda: fight.attack("kael", "vesh", weapon="sword", unarmed=True), "C12")
        fight.attack("kael", "vesh", unarmed=True)
        assert last(fight, AttackDeclared).weapon is None
        fight.defend("vesh", None)

    def test_block_needs_the_shield_in_hand(self, play: Play) -> None:
        """C35, C9: vesh carries a buckler but holds only the axe: no Block in the window; with the buckler
        drawn, the next window offers it."""
        defender = replace(vesh(weapons=(AXE,), shield=BUCKLER), wielding=("axe",))
        fight = duel(play, [6, 1, 1, 6, 1, 1], defender=defender)
        fight.attack("kael", "vesh")
        assert last(fight, ActiveDefenseWindowOpened).eligible == ("dodge", "parry")
        refused(fight, lambda: fight.defend("vesh", "block"), "C9")
        fight.defend("vesh", None)
        fight.draw("vesh", "shield")
        fight.attack("kael", "vesh")
        assert last(fight, ActiveDefenseWindowOpened).eligible == ("dodge", "parry", "block")
        fight.defend("vesh", None)

    def test_parry_needs_a_weapon_in_hand(self, play: Play) -> None:
        """C35, C9: vesh carries an axe but holds nothing: no Parry in the window."""
        fight = duel(play, [6, 1, 1], defender=replace(vesh(weapons=(AXE,)), wielding=()))
        fight.attack("kael", "vesh")
        assert "parry" not in last(fight, ActiveDefenseWindowOpened).eligible
        fight.defend("vesh", None)

    @pytest.mark.parametrize("wielding, error", [
        (("hammer",), "not among the weapons or the shield"),
    ])
    def test_wielding_gear_the_sheet_lacks_is_refused(self, wielding: tuple[str], error: str) -> None:
        """C35: ``wielding`` may only name the sheet's weapons and its shield."""
        with pytest.raises(ValueError, match=error):
            replace(vesh(weapons=(AXE,), shield=BUCKLER), wielding=wielding).__post_init__()

    def test_a_shield_may_not_share_a_weapons_id(self) -> None:
        """C35: the shield's id names it for ``wielding`` and ``draw``, so no weapon may have it."""
        with pytest.raises(ValueError, match="also a weapon's id"):
            replace(vesh(weapons=(AXE,), shield=Shield(id="axe", block_rating=1))).__post_init__()
