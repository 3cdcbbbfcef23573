"""Exact odds from the dice distributions: the chance that fair dice reach a total, as a fraction (no sampling).

What the Active Defense window's odds are made of (§Active Defense, §Hit Determination, C7, C8): the attack
hits iff its total > the total defense, so an Active Defense turns the hit into a miss iff base defense + the
defense's dice + its bonus + its rating >= the attack total, i.e. iff its dice reach
``attack total - base defense - bonus - rating``. A worked example: an attack of 12 against a base defense of
7, and a Dodge with AGI d6 + 1: the die must show 12 - 7 - 1 = 4 or more, three faces of six.

>>> at_least((6,), 12 - 7 - 1)
Fraction(1, 2)
>>> str(at_least((6, 6), 11))        # two d6 reach 11 on (5, 6), (6, 5) and (6, 6)
'1/12'
>>> at_least((), 1), at_least((), 0)   # no dice: the total is 0
(Fraction(0, 1), Fraction(1, 1))
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

__all__ = ["sum_counts", "at_least"]


def sum_counts(sides: Sequence[int]) -> list[int]:
    """How many ways fair dice of ``sides`` faces each (1 to N) make each total: index ``t`` counts total ``t``
    (the convolution of the dice, in whole numbers)."""
    counts = [1]  # no dice: one way to make 0
    for n in sides:
        if n < 1:
            raise ValueError(f"a die has at least one face, not {n}")
        nxt = [0] * (len(counts) + n)
        for total, ways in enumerate(counts):
            if ways:
                for face in range(1, n + 1):
                    nxt[total + face] += ways
        counts = nxt
    return counts


def at_least(sides: Sequence[int], need: int) -> Fraction:
    """The exact chance that fair dice of ``sides`` faces sum to ``need`` or more."""
    counts = sum_counts(sides)
    reached = sum(counts[max(need, 0):])
    return Fraction(reached, sum(counts))
