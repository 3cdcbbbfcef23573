"""Tests for omen_core.decide.effects: saves as effects and their consequences (C13, C15, C25, C28, C29)."""

from __future__ import annotations

from typing import Any

import pytest
from msgspec.structs import replace

from omen_core.content import (
    ApplyCondition,
    Armor,
    ClearCondition,
    CombatantSheet,
    DamageDice,
    DealDamage,
    SaveEffect,
)
from omen_core.engine import Fight
from omen_core.errors import RuleViolation
from omen_core.events import (
    ActionSettled,
    ConditionApplied,
    ConditionCleared,
    CostPaid,
    DamageResolved,
    DiceRolled,
    Event,
    ResourceChanged,
    SaveCalled,
    SaveResolved,
)
from tests.fights import assert_legal_order, assert_replays, last, new_fight, payloads, scripted
from tests.sheets import sheet

#: The saver: AGI d6 +1, HP 20, mundane armor 2.
KAEL = replace(sheet("kael", hp=20, AGI=(6, 1)), armor=Armor(rating=2))
#: The caller: INT d8 +2, HP 15.
VESH = sheet("vesh", side="raiders", hp=15, INT=(8, 2))

#: Faces for a failed save: Kael AGI 1 + 1 = 2 against Vesh INT 8 + 2 = 10.
FAIL = [1, 8]
#: Faces for a successful save: Kael 6 + 1 = 7 against Vesh 1 + 2 = 3.
SUCCEED = [6, 1]


def effect(**kw: Any) -> SaveEffect:
    """An AGI save against INT (a spell, costing 1 Action unless told)."""
    return SaveEffect(name=kw.pop("name", "cinder flask"), save="AGI", against="INT", **kw)


def fight(faces: list[int], *sheets: CombatantSheet) -> Fight:
    """Kael and Vesh (or ``sheets``) in a fight rolling ``faces``."""
    return new_fight(*(sheets or (KAEL, VESH)), faces=faces)


def after_save(f: Fight) -> list[Event]:
    """The events of the last save action after its SaveResolved."""
    events = payloads(f)
    start = max(i for i, e in enumerate(events) if isinstance(e, SaveResolved))
    return events[start + 1:]


def finish(f: Fight) -> None:
    """Every fight ends replaying to its live state, in a legal order."""
    assert_replays(f)
    assert_legal_order(f.events)


class TestSaveRoll:
    def test_saver_die_first_then_opposing(self) -> None:
        """C29: the saver's die is consumed first: Kael 1 + 1 = 2 against Vesh 8 + 2 = 10 fails."""
        f = fight(FAIL)
        f.call_save("vesh", "kael", effect())
        rolls = [e for e in payloads(f) if isinstance(e, DiceRolled)]
        assert [(r.roller, r.purpose, [d.face for d in r.dice]) for r in rolls] == [
            ("kael", "save", [1]), ("vesh", "save", [8])]
        result = last(f, SaveResolved)
        assert (result.saver.total, result.opposing.total, result.success) == (2, 10, False)
        finish(f)

    def test_saver_wins_ties(self) -> None:
        """C15: Kael 5 + 1 = 6 against Vesh 4 + 2 = 6 succeeds on the tie."""
        f = fight([5, 4])
        f.call_save("vesh", "kael", effect())
        result = last(f, SaveResolved)
        assert (result.saver.total, result.opposing.total, result.success) == (6, 6, True)
        finish(f)

    def test_one_short_fails(self) -> None:
        """C15: Kael 4 + 1 = 5 against Vesh 4 + 2 = 6 fails."""
        f = fight([4, 4])
        f.call_save("vesh", "kael", effect())
        assert last(f, SaveResolved).success is False
        finish(f)

    def test_event_order_of_a_save(self) -> None:
        """combat.txt §Resolving a Save: declared, cost paid, saver's die, opposing die, resolved, settled."""
        f = fight(SUCCEED)
        new = f.call_save("vesh", "kael", effect())
        assert [type(e) for e in new] == [SaveCalled, CostPaid, DiceRolled, DiceRolled, SaveResolved, ActionSettled]
        finish(f)


class TestBranches:
    BOTH = {"on_success": (DealDamage(flat=1, damage_type="fire"),),
                "on_failure": (DealDamage(flat=5, damage_type="fire"), ApplyCondition(condition="Prone"))}

    def test_success_branch_only(self) -> None:
        """C25: on a success only on_success applies: 1 fire, HP 20 -> 19, and no Prone."""
        f = fight(SUCCEED)
        f.call_save("vesh", "kael", effect(**self.BOTH))
        assert f.state.combatants["kael"].hp == 19 and not f.state.combatants["kael"].has("Prone")
        assert not any(isinstance(e, ConditionApplied) for e in payloads(f))
        finish(f)

    def test_failure_branch_only(self) -> None:
        """C25: on a failure only on_failure applies: 5 fire, HP 20 -> 15, and Prone."""
        f = fight(FAIL)
        f.call_save("vesh", "kael", effect(**self.BOTH))
        assert f.state.combatants["kael"].hp == 15 and f.state.combatants["kael"].has("Prone")
        assert [e.final for e in payloads(f) if isinstance(e, DamageResolved)] == [5]
        finish(f)

    def test_damage_then_condition_in_written_order(self) -> None:
        """C25: a DealDamage written before an ApplyCondition lands first."""
        f = fight(FAIL)
        f.call_save("vesh", "kael", effect(on_failure=(DealDamage(flat=3, damage_type="fire"),
                                                       ApplyCondition(condition="Prone"))))
        assert [type(e) for e in after_save(f)] == [DamageResolved, ResourceChanged, ConditionApplied,
                                                    ActionSettled]
        finish(f)

    def test_condition_then_damage_in_written_order(self) -> None:
        """C25: written the other way round, the condition lands before the damage."""
        f = fight(FAIL)
        f.call_save("vesh", "kael", effect(on_failure=(ApplyCondition(condition="Prone"),
                                                       DealDamage(flat=3, damage_type="fire"))))
        assert [type(e) for e in after_save(f)] == [ConditionApplied, DamageResolved, ResourceChanged,
                                                    ActionSettled]
        finish(f)

    def test_empty_branch_settles(self) -> None:
        """C25: a branch with no consequences changes nothing; the action still settles."""
        f = fight(SUCCEED)
        f.call_save("vesh", "kael", effect(on_failure=(DealDamage(flat=3, damage_type="fire"),)))
        assert [type(e) for e in after_save(f)] == [ActionSettled]
        assert f.state.combatants["kael"].hp == 20
        finish(f)


class TestDealDamage:
    def test_dice_rolled_after_the_save_dice(self) -> None:
        """C29: 2d4 damage is roll 3, after both save dice, purpose damage: 3 + 2 + flat 1 = 6 fire, HP 20 -> 14."""
        f = fight([*FAIL, 3, 2])
        f.call_save("vesh", "kael", effect(on_failure=(DealDamage(dice=DamageDice(count=2, die="d4"), flat=1,
                                                                  damage_type="fire"),)))
        rolls = [e for e in payloads(f) if isinstance(e, DiceRolled)]
        assert [(r.counter, r.purpose) for r in rolls] == [(1, "save"), (2, "save"), (3, "damage")]
        assert [(d.pool, d.sides, d.face) for d in rolls[-1].dice] == [("damage", 4, 3), ("damage", 4, 2)]
        resolved = last(f, DamageResolved)
        assert (resolved.terms.dice, resolved.terms.raw, resolved.final) == (5, 6, 6)
        assert f.state.combatants["kael"].hp == 14
        finish(f)

    def test_flat_damage_rolls_nothing(self) -> None:
        """A flat 4 fire needs no damage die: only the two save dice are rolled; HP 20 -> 16."""
        f = fight(FAIL)
        f.call_save("vesh", "kael", effect(on_failure=(DealDamage(flat=4, damage_type="fire"),)))
        assert [e.purpose for e in payloads(f) if isinstance(e, DiceRolled)] == ["save", "save"]
        assert f.state.combatants["kael"].hp == 16
        finish(f)

    def test_spell_physical_damage_ignores_mundane_armor(self) -> None:
        """C13 (3): a spell's 5 slashing is not reduced by Kael's mundane armor 2: HP 20 -> 15."""
        f = fight(FAIL)
        f.call_save("vesh", "kael", effect(spell=True, on_failure=(DealDamage(flat=5, damage_type="slashing"),)))
        resolved = last(f, DamageResolved)
        armor = next(s for s in resolved.steps if s.step == "armor")
        assert (resolved.spell, armor.amount, resolved.final) == (True, 0, 5)
        assert f.state.combatants["kael"].hp == 15
        finish(f)

    def test_non_spell_physical_damage_takes_mundane_armor(self) -> None:
        """C13 (3): a non-spell 5 slashing minus mundane armor 2 = 3: HP 20 -> 17."""
        f = fight(FAIL)
        f.call_save("vesh", "kael", effect(spell=False, on_failure=(DealDamage(flat=5, damage_type="slashing"),)))
        resolved = last(f, DamageResolved)
        armor = next(s for s in resolved.steps if s.step == "armor")
        assert (resolved.spell, armor.amount, resolved.final) == (False, 2, 3)
        assert f.state.combatants["kael"].hp == 17
        finish(f)

    def test_non_spell_fire_ignores_mundane_armor(self) -> None:
        """C13 (3), §Damage Reduction: mundane armor applies only to physical damage: 5 fire stays 5."""
        f = fight(FAIL)
        f.call_save("vesh", "kael", effect(spell=False, on_failure=(DealDamage(flat=5, damage_type="fire"),)))
        assert last(f, DamageResolved).final == 5
        finish(f)

    def test_magical_armor_reduces_spell_damage(self) -> None:
        """C13 (3): magical armor 2 applies to all attacks: a spell's 5 fire becomes 3."""
        warded = replace(KAEL, armor=Armor(rating=2, magical=True))
        f = fight(FAIL, warded, VESH)
        f.call_save("vesh", "kael", effect(spell=True, on_failure=(DealDamage(flat=5, damage_type="fire"),)))
        assert last(f, DamageResolved).final == 3
        finish(f)

    def test_resistance_and_physical_rollover(self) -> None:
        """C13: 9 piercing (not a spell) - piercing 1 - Physical 2 - armor 2 = 4: HP 20 -> 16."""
        tough = replace(KAEL, resistances={"piercing": 1, "physical": 2})
        f = fight(FAIL, tough, VESH)
        f.call_save("vesh", "kael", effect(spell=False, on_failure=(DealDamage(flat=9, damage_type="piercing"),)))
        resolved = last(f, DamageResolved)
        assert [(s.step, s.amount, s.after) for s in resolved.steps][:3] == [
            ("resistance", 1, 8), ("physical rollover", 2, 6), ("armor", 2, 4)]
        assert f.state.combatants["kael"].hp == 16
        finish(f)

    def test_to_actor_hits_the_caller(self) -> None:
        """C25: a consequence with to="actor" lands on the caller: Vesh 15 -> 11, Kael untouched."""
        f = fight(FAIL)
        f.call_save("vesh", "kael", effect(on_failure=(DealDamage(flat=4, damage_type="fire", to="actor"),)))
        resolved = last(f, DamageResolved)
        assert resolved.target == "vesh"
        assert (f.state.combatants["vesh"].hp, f.state.combatants["kael"].hp) == (11, 20)
        finish(f)

    def test_fully_mitigated_damage_moves_no_resource(self) -> None:
        """C13 (4): a non-spell 2 slashing against armor 2 is 0: no ResourceChanged, HP stays 20."""
        f = fight(FAIL)
        f.call_save("vesh", "kael", effect(spell=False, on_failure=(DealDamage(flat=2, damage_type="slashing"),)))
        assert last(f, DamageResolved).final == 0
        assert not any(isinstance(e, ResourceChanged) for e in payloads(f))
        finish(f)

    def test_reaching_zero_hp_sets_dying(self) -> None:
        """C28: 25 fire on HP 20 leaves HP 0 (not -5) and sets Dying."""
        f = fight(FAIL)
        f.call_save("vesh", "kael", effect(on_failure=(DealDamage(flat=25, damage_type="fire"),)))
        changed = last(f, ResourceChanged)
        assert (changed.before, changed.after) == (20, 0)
        assert f.state.combatants["kael"].conditions.get("Dying") == 1
        finish(f)


class TestConditions:
    def test_stacks_capped_at_max(self) -> None:
        """C28: Exhausted (max 5) at 4 stacks + 3 more adds only 1, for 5 in all."""
        f = fight(FAIL)
        f.apply_condition("kael", "Exhausted", 4)
        # Kael's AGI bonus is 1 - 4 (Exhausted) = -3: 1 - 3 = -2 against 10 still fails.
        f.call_save("vesh", "kael", effect(on_failure=(ApplyCondition(condition="Exhausted", stacks=3),)))
        applied = last(f, ConditionApplied)
        # the GM's stacks were no action: the save's are its action's (the seq of its declaration)
        assert (applied.added, applied.stacks, applied.action) == (1, 5, last(f, SaveCalled).action)
        assert last(f, SaveResolved).saver.total == -2
        assert f.state.combatants["kael"].conditions["Exhausted"] == 5
        finish(f)

    def test_stacks_added_below_the_cap(self) -> None:
        """C28: Exhausted 0 + 2 stacks adds 2 and ends at 2."""
        f = fight(FAIL)
        f.call_save("vesh", "kael", effect(on_failure=(ApplyCondition(condition="Exhausted", stacks=2),)))
        applied = last(f, ConditionApplied)
        assert (applied.added, applied.stacks) == (2, 2)
        finish(f)

    def test_already_at_max_adds_nothing(self) -> None:
        """C28: Prone (max 1) on a prone combatant adds 0 and stays at 1."""
        f = fight(FAIL)
        f.apply_condition("kael", "Prone")
        f.call_save("vesh", "kael", effect(on_failure=(ApplyCondition(condition="Prone"),)))
        applied = last(f, ConditionApplied)
        assert (applied.added, applied.stacks) == (0, 1)
        assert f.state.combatants["kael"].conditions["Prone"] == 1
        finish(f)

    def test_clear_a_present_condition(self) -> None:
        """C25, C28: a ClearCondition on a prone Kael ends Prone."""
        f = fight(SUCCEED)
        f.apply_condition("kael", "Prone")
        f.call_save("vesh", "kael", effect(on_success=(ClearCondition(condition="Prone"),)))
        assert [type(e) for e in after_save(f)] == [ConditionCleared, ActionSettled]
        assert not f.state.combatants["kael"].has("Prone")
        finish(f)

    def test_clear_an_absent_condition_does_nothing(self) -> None:
        """C25: a ClearCondition of a condition Kael does not have records nothing and is not refused."""
        f = fight(SUCCEED)
        f.call_save("vesh", "kael", effect(on_success=(ClearCondition(condition="Prone"),)))
        assert [type(e) for e in after_save(f)] == [ActionSettled]
        finish(f)


class TestCost:
    def test_default_cost_is_one_action(self) -> None:
        """C20: calling a save costs the caller 1 Action by default."""
        f = fight(SUCCEED)
        f.call_save("vesh", "kael", effect())
        paid = last(f, CostPaid)
        assert (paid.who, paid.resource, paid.amount) == ("vesh", "action", 1)
        finish(f)

    def test_zero_cost_pays_nothing(self) -> None:
        """An effect with action_cost 0 records no CostPaid: straight from declared to the saver's die."""
        f = fight(SUCCEED)
        new = f.call_save("vesh", "kael", effect(action_cost=0))
        assert not any(isinstance(e, CostPaid) for e in new)
        assert [type(e) for e in new][:2] == [SaveCalled, DiceRolled]
        finish(f)


class TestRefusals:
    @pytest.mark.parametrize("bad, rule", [
        ({"on_failure": (ApplyCondition(condition="Burning"),)}, "C28"),
        ({"on_success": (ApplyCondition(condition="Burning"),)}, "C28"),
        ({"on_failure": (ClearCondition(condition="Burning"),)}, "C28"),
        ({"on_failure": (DealDamage(flat=2, damage_type="sonic"),)}, "C14"),
        ({"on_success": (DealDamage(flat=2, damage_type="sonic"),)}, "C14"),
    ], ids=["condition-fail", "condition-success", "clear", "damage-fail", "damage-success"])
    def test_unknown_names_are_refused(self, bad: dict[str, Any], rule: str) -> None:
        """C14, C28: an unknown damage type or condition in either branch is refused; log and dice unchanged."""
        f = fight(SUCCEED)
        before, version = f.events, f.version
        with pytest.raises(RuleViolation) as info:
            f.call_save("vesh", "kael", effect(**bad))
        assert info.value.rule == rule
        assert (f.events, f.version, scripted(f).remaining) == (before, version, 2)
        finish(f)

    @pytest.mark.parametrize("condition", ["Incapacitated", "Paralysed"])
    def test_helpless_caller_cannot_call_a_save(self, condition: str) -> None:
        """C10: an incapacitated or paralysed caller cannot act; nothing is recorded and no die is used."""
        f = fight(SUCCEED)
        f.apply_condition("vesh", condition)
        before, version = f.events, f.version
        with pytest.raises(RuleViolation) as info:
            f.call_save("vesh", "kael", effect())
        assert info.value.rule == "C10"
        assert (f.events, f.version, scripted(f).remaining) == (before, version, 2)
        finish(f)


def test_a_save_is_called_against_another() -> None:
    """C15: the saver's die is opposed by the caller's, so a combatant cannot call for a save against itself;
    nothing is written."""
    f = fight([])
    before = f.events
    with pytest.raises(RuleViolation) as info:
        f.call_save("kael", "kael", effect())
    assert info.value.rule == "C15" and f.events == before


def test_a_new_condition_with_a_numeric_effect_is_one_data_change() -> None:
    """Issue 27: a condition is data (C28): a ruleset with one table more, ``[conditions.Blessed]`` adding +1 to
    every attribute bonus, and Kael's STR check (die 4, bonus 0) totals 4 + 1 = 5 against difficulty 4 (C1, C16)."""
    from importlib.resources import files

    from omen_core import CheckSpec, MemoryStore, ScriptedDice
    from omen_core.content import Ruleset, decode_content

    core = (files("omen_core") / "data" / "core.toml").read_text()
    text = core + '\n[conditions.Blessed]\nplaceholder = true\nmax_stacks = 1\nattribute_bonus = 1\n'
    ruleset = decode_content(text, Ruleset, source="blessed.toml", fmt="toml")
    fight = Fight.start(MemoryStore(), "f", dice=ScriptedDice([4]), clock=lambda: 0, ruleset=ruleset)
    fight.join(sheet("kael"))
    fight.apply_condition("kael", "Blessed")
    result = fight.static_check(CheckSpec(who="kael", attribute="STR"), 4)
    assert (result.check.face, result.check.attribute_bonus, result.check.total, result.outcome) == (4, 1, 5, "success")
    assert_replays(fight)
