"""Tests for omen_core.rules.modifiers: encircled, high ground and prone (combat.txt §Special Combat Conditions)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omen_core.rules.modifiers import (
    HIGH_GROUND,
    PRONE_MELEE,
    PRONE_RANGED,
    encircled_bonus,
    prone_target_bonus,
)


class TestEncircled:
    @pytest.mark.parametrize("attackers, defenders, bonus", [
        (2, 1, 2),   # A = 2D: applies, 2 x (2 - 1)
        (4, 2, 4),   # A = 2D: 2 x (4 - 2)
        (6, 3, 6),   # A = 2D: 2 x (6 - 3)
        (3, 1, 4),   # 2 x (3 - 1)
        (5, 2, 6),   # 2 x (5 - 2)
    ])
    def test_applies_at_two_to_one(self, attackers: int, defenders: int, bonus: int) -> None:
        """C26: A >= 2D applies, with +2 per outnumbering combatant: 2 x (A - D)."""
        assert encircled_bonus(attackers, defenders) == bonus

    @pytest.mark.parametrize("attackers, defenders", [(1, 1), (3, 2), (5, 3), (7, 4), (1, 2)])
    def test_one_short_of_two_to_one_does_not_apply(self, attackers: int, defenders: int) -> None:
        """C26: A = 2D - 1 (or fewer) is not 2 to 1: no bonus."""
        assert encircled_bonus(attackers, defenders) == 0

    @pytest.mark.parametrize("attackers, defenders", [(4, 1), (5, 1), (8, 2), (12, 3), (12, 1)])
    def test_capped_at_six(self, attackers: int, defenders: int) -> None:
        """C26, §Special Combat Conditions: up to +6, e.g. 4 vs 1 would be 2 x 3 = 6 and 5 vs 1 would be 8."""
        assert encircled_bonus(attackers, defenders) == 6

    @pytest.mark.parametrize("attackers", [0, 1, 2, 6])
    def test_no_defender_no_bonus(self, attackers: int) -> None:
        """C26: D counts the target, so D >= 1; with D = 0 no encirclement is granted."""
        assert encircled_bonus(attackers, 0) == 0

    @given(st.integers(1, 12), st.integers(1, 12))
    def test_formula(self, a: int, d: int) -> None:
        """C26 for A, D in 1..12: min(6, 2(A - D)) iff A >= 2D, else 0; so always 0, 2, 4 or 6."""
        bonus = encircled_bonus(a, d)
        assert bonus == (min(6, 2 * (a - d)) if a >= 2 * d else 0)
        assert bonus in (0, 2, 4, 6)
        assert (bonus > 0) == (a >= 2 * d)


class TestProne:
    def test_melee(self) -> None:
        """C27: a melee attack on a prone target gains +4 to hit."""
        assert prone_target_bonus(ranged=False) == PRONE_MELEE == 4

    def test_ranged(self) -> None:
        """C27: a ranged attack on a prone target takes -2 to hit."""
        assert prone_target_bonus(ranged=True) == PRONE_RANGED == -2


class TestHighGround:
    def test_high_ground(self) -> None:
        """C27, §Special Combat Conditions: high ground grants +2 to hit."""
        assert HIGH_GROUND == 2
