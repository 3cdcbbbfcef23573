"""Tests for omen_core.rules.mitigation: damage reduction in the canonical order of C13."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omen_core.rules.mitigation import MitigationStep, armor_applies, exact, mitigate

STEP_NAMES = ["resistance", "physical rollover", "armor", "floor", "incoming"]


def table(steps: list[MitigationStep]) -> list[tuple[str, int, int]]:
    """The steps as (name, amount, after) triples."""
    return [(s.step, s.amount, s.after) for s in steps]


def plain(raw: int, **kw: Any) -> list[MitigationStep]:
    """Mitigate with nothing applying unless given."""
    args = {"resistance": 0, "physical": False, "physical_resistance": 0, "armor": 0, "armor_applies": False}
    return mitigate(raw, **{**args, **kw})


class TestOrder:
    def test_every_step_in_order(self) -> None:
        """C13: slashing 9 - slashing resistance 2 = 7, - physical 1 = 6, - armor 3 = 3, floor 3, incoming 3."""
        steps = mitigate(9, resistance=2, physical=True, physical_resistance=1, armor=3, armor_applies=True)
        assert table(steps) == [("resistance", 2, 7), ("physical rollover", 1, 6), ("armor", 3, 3),
                                ("floor", 0, 3), ("incoming", 0, 3)]

    def test_no_reduction(self) -> None:
        """C13: with nothing to subtract, 7 stays 7 through all five steps."""
        assert table(plain(7)) == [(name, 0, 7) for name in STEP_NAMES]

    def test_type_resistance_alone(self) -> None:
        """C13 (1): fire 10 against Fire Resistance 4 leaves 6."""
        assert plain(10, resistance=4)[-1].after == 6


class TestPhysicalRollover:
    def test_physical_damage_takes_physical_resistance(self) -> None:
        """C13 (2): piercing 8 - piercing resistance 1 - Physical Resistance 2 = 5."""
        steps = plain(8, resistance=1, physical=True, physical_resistance=2)
        assert table(steps)[:2] == [("resistance", 1, 7), ("physical rollover", 2, 5)]
        assert steps[-1].after == 5

    def test_non_physical_damage_ignores_physical_resistance(self) -> None:
        """C13 (2): fire 8 - Fire Resistance 1 = 7; Physical Resistance 2 does not apply (amount 0)."""
        steps = plain(8, resistance=1, physical=False, physical_resistance=2)
        assert steps[1] == MitigationStep("physical rollover", 0, 7) and steps[-1].after == 7


class TestArmor:
    def test_armor_subtracts_when_it_applies(self) -> None:
        """C13 (3): slashing 8 - armor 3 = 5."""
        steps = plain(8, physical=True, armor=3, armor_applies=True)
        assert steps[2] == MitigationStep("armor", 3, 5) and steps[-1].after == 5

    def test_armor_does_nothing_when_it_does_not_apply(self) -> None:
        """C13 (3): armor 3 that does not apply takes 0 off 8."""
        steps = plain(8, physical=True, armor=3, armor_applies=False)
        assert steps[2] == MitigationStep("armor", 0, 8) and steps[-1].after == 8


class TestFloor:
    def test_floor_at_zero(self) -> None:
        """C13 (4): crushing 3 - resistance 2 - physical 1 - armor 3 = -3, floored to 0 (amount +3)."""
        steps = mitigate(3, resistance=2, physical=True, physical_resistance=1, armor=3, armor_applies=True)
        assert table(steps) == [("resistance", 2, 1), ("physical rollover", 1, 0), ("armor", 3, -3),
                                ("floor", 3, 0), ("incoming", 0, 0)]

    def test_floor_comes_before_incoming_modifiers(self) -> None:
        """C13 (4) then (5): 2 - armor 5 = -3 floors to 0 first, so an incoming +3 gives 3 (not 0)."""
        steps = plain(2, physical=True, armor=5, armor_applies=True, add=3)
        assert table(steps)[3:] == [("floor", 3, 0), ("incoming", 3, 3)]


class TestIncoming:
    def test_multiply_rounds_down(self) -> None:
        """C13 (5): 5 x 1.5 = 7.5, rounded down to 7."""
        steps = plain(5, multiply=1.5)
        assert steps[-1] == MitigationStep("incoming", 2, 7)

    def test_halving_rounds_down(self) -> None:
        """C13 (5): 7 x 0.5 = 3.5, rounded down to 3."""
        assert plain(7, multiply=0.5)[-1] == MitigationStep("incoming", -4, 3)

    def test_multiply_then_add(self) -> None:
        """C13 (5): 10 x 0.5 = 5, then + 2 = 7 (adding first would give 6)."""
        assert plain(10, multiply=0.5, add=2)[-1].after == 7

    def test_multiply_then_add_then_round(self) -> None:
        """C13 (5): 3 x 0.5 = 1.5, + 1 = 2.5, rounded down to 2."""
        assert plain(3, multiply=0.5, add=1)[-1].after == 2

    def test_negative_add_floors_at_zero(self) -> None:
        """C13 (5): 8 x 0.5 = 4, then - 10 = -6, floored to 0: the step takes all 8 away."""
        assert plain(8, multiply=0.5, add=-10)[-1] == MitigationStep("incoming", -8, 0)

    def test_doubling_after_reductions(self) -> None:
        """C13: incoming modifiers come last: (9 - armor 3) x 2 = 12, not 9 x 2 - 3 = 15."""
        assert plain(9, physical=True, armor=3, armor_applies=True, multiply=2.0)[-1].after == 12


class TestArmorApplies:
    @pytest.mark.parametrize("magical, spell, physical, expected", [
        (True, True, True, True),
        (True, True, False, True),
        (True, False, True, True),
        (True, False, False, True),
        (False, False, True, True),
        (False, False, False, False),
        (False, True, True, False),
        (False, True, False, False),
    ])
    def test_truth_table(self, magical: bool, spell: bool, physical: bool, expected: bool) -> None:
        """C13 (3): magical armor always applies, mundane armor only to non-spell physical damage."""
        assert armor_applies(magical_armor=magical, spell_attack=spell, physical_damage=physical) is expected


class TestProperties:
    @given(st.integers(0, 60), st.integers(0, 20), st.booleans(), st.integers(0, 20), st.integers(0, 20),
           st.booleans(), st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, 3.0]), st.integers(-20, 20))
    def test_steps_chain_and_final_is_never_negative(self, raw: int, res: int, physical: bool, phys_res: int,
                                                     armor: int, applies: bool,
                                                     multiply: float, add: int) -> None:
        """C13 for all inputs: five steps in order, each subtraction's after = previous after - amount, final >= 0."""
        steps = mitigate(raw, resistance=res, physical=physical, physical_resistance=phys_res, armor=armor,
                         armor_applies=applies, multiply=multiply, add=add)
        assert [s.step for s in steps] == STEP_NAMES
        before = raw
        for s in steps[:3]:
            assert s.after == before - s.amount
            before = s.after
        assert steps[0].amount == res
        assert steps[1].amount == (phys_res if physical else 0)
        assert steps[2].amount == (armor if applies else 0)
        assert steps[3].after == max(steps[2].after, 0) == steps[2].after + steps[3].amount
        assert steps[4].after == steps[3].after + steps[4].amount
        assert steps[-1].after >= 0


class TestExactMultipliers:
    @pytest.mark.parametrize("written, fraction", [
        (1.4, Fraction(7, 5)), ("1.4", Fraction(7, 5)), ("7/5", Fraction(7, 5)), (0.5, Fraction(1, 2)),
        (2, Fraction(2)), (1.0, Fraction(1))])
    def test_a_multiplier_is_the_fraction_written(self, written: float | str, fraction: Fraction) -> None:
        """C34: x1.4 is x7/5, whether written as a number, a decimal string or a fraction."""
        assert exact(written) == fraction

    def test_45_times_1_4_is_63_not_62(self) -> None:
        """C34: 45 x 7/5 = 63 exactly; floating point (45 * 1.4 = 62.99999999999999) would round down to 62."""
        assert 45 * 1.4 < 63
        assert plain(45, multiply=1.4)[-1].after == 63
        assert plain(45, multiply="7/5")[-1].after == 63

    def test_multiply_then_add_then_round_down_once(self) -> None:
        """C34, C13 step 5: 7 x 3/2 = 10.5, + 1 = 11.5, rounded down once: 11; 5 x 1/3 + 1 = 2.67: 2; 2 x 1/2 - 5 = -4,
        floored at 0."""
        assert plain(7, multiply="3/2", add=1)[-1].after == 11
        assert plain(5, multiply="1/3", add=1)[-1].after == 2
        assert plain(2, multiply="1/2", add=-5)[-1].after == 0     # 1 - 5 = -4, floored at 0

    @given(st.integers(0, 500), st.integers(0, 40), st.integers(1, 40), st.integers(-10, 10))
    def test_exact_against_integer_arithmetic(self, raw: int, num: int, den: int, add: int) -> None:
        """C34: step 5 is floor(raw x num / den + add), floored at 0, in integers: no floating point drift."""
        assert plain(raw, multiply=f"{num}/{den}", add=add)[-1].after == max((raw * num + add * den) // den, 0)
