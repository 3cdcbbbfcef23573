"""Initiative order and its tie-break ladder (combat.txt §Determine Initiative; C19).

Order is highest total first; ties go to the higher AGI bonus; combatants
still tied form a group that must roll off (or, if allies, agree an order).

>>> initiative_order({"a": 12, "b": 15, "c": 12, "d": 12}, {"a": 1, "b": 0, "c": 3, "d": 1})
[['b'], ['c'], ['a', 'd']]
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import groupby

__all__ = ["initiative_order", "break_ties"]


def initiative_order(totals: Mapping[str, int], agi_bonus: Mapping[str, int]) -> list[list[str]]:
    """Combatants in initiative order as groups: each group of more than one is still tied after AGI bonus.

    Within a group, names keep the order of ``totals`` (the order they joined).
    """
    def key(who: str) -> tuple[int, int]:
        return (-totals[who], -agi_bonus[who])

    ranked = sorted(totals, key=key)  # sorted() is stable: joined order within a tie
    return [list(group) for _, group in groupby(ranked, key=key)]


def break_ties(group: list[str], roll_off: Mapping[str, int]) -> list[list[str]]:
    """Re-order a tied group by a roll-off's totals, highest first; those tied again stay grouped (C19)."""
    ranked = sorted(group, key=lambda who: -roll_off[who])
    return [list(g) for _, g in groupby(ranked, key=lambda who: -roll_off[who])]
