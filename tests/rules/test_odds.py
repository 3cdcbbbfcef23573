"""Exact odds from the dice distributions (omen_core/rules/odds.py): held to counting every face by hand."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omen_core.rules.odds import at_least, sum_counts


@given(st.lists(st.integers(1, 8), max_size=3), st.integers(-3, 26))
def test_at_least_is_the_share_of_face_combinations_reaching_the_total(sides: list[int], need: int) -> None:
    """§Active Defense: the chance that fair dice sum to ``need`` or more is the share of every combination of
    their faces (enumerated one by one) whose sum reaches it."""
    combos = list(itertools.product(*(range(1, n + 1) for n in sides)))
    assert at_least(sides, need) == Fraction(sum(1 for c in combos if sum(c) >= need), len(combos))


def test_a_d8_dodge_needing_a_6_is_3_in_8() -> None:
    """C8: a Dodge on a d8 that must show 6 or more to turn the hit (faces 6, 7, 8) turns it 3 times in 8; a
    total beyond the die never, one at or below 1 always."""
    assert (at_least((8,), 6), at_least((8,), 9), at_least((8,), 1), at_least((8,), -4)) == (
        Fraction(3, 8), Fraction(0), Fraction(1), Fraction(1))


def test_the_counts_of_two_d4() -> None:
    """Two d4 make 2 one way, 5 four ways, 8 one way (16 in all)."""
    assert sum_counts((4, 4)) == [0, 0, 1, 2, 3, 4, 3, 2, 1]


def test_a_die_without_faces_is_refused() -> None:
    """A die has at least one face (C1: a die is any dN with N >= 2; 1 is the least that still counts)."""
    with pytest.raises(ValueError, match="at least one face"):
        sum_counts((0,))
