"""Damage reduction in the canonical order of C13, every step kept so the log can show it.

>>> [(s.step, s.amount, s.after) for s in mitigate(9, resistance=2, physical=True,
...     physical_resistance=1, armor=3, armor_applies=True)]
[('resistance', 2, 7), ('physical rollover', 1, 6), ('armor', 3, 3), ('floor', 0, 3), ('incoming', 0, 3)]
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import NamedTuple

__all__ = ["MitigationStep", "mitigate", "armor_applies", "exact"]


class MitigationStep(NamedTuple):
    """One step of C13: its name, the amount it took away (or added), and the damage after it."""

    step: str
    amount: int
    after: int


def exact(multiplier: float | str | Fraction) -> Fraction:
    """C34: a multiplier as the exact fraction written: ``1.4`` is ``7/5`` (its decimal, never its binary float),
    ``"7/5"`` is ``7/5``.

    >>> exact(1.4), exact("7/5"), exact(0.5)
    (Fraction(7, 5), Fraction(7, 5), Fraction(1, 2))
    """
    return multiplier if isinstance(multiplier, Fraction) else Fraction(str(multiplier))


def armor_applies(*, magical_armor: bool, spell_attack: bool, physical_damage: bool) -> bool:
    """C13 (3): magical armor applies to all attacks; mundane armor only to non-spell physical damage."""
    return magical_armor or (not spell_attack and physical_damage)


def mitigate(raw: int, *, resistance: int, physical: bool, physical_resistance: int, armor: int,
             armor_applies: bool, multiply: float | str | Fraction = 1, add: int = 0) -> list[MitigationStep]:
    """C13: (1) type resistance, (2) physical rollover, (3) armor, (4) floor at 0, (5) incoming modifiers.

    Step 5 multiplies by the exact fraction (C34: ×1.4 is ×7/5, no floating
    point), then adds, rounds down once and floors at 0. The last step's
    ``after`` is the final damage.

    >>> mitigate(45, resistance=0, physical=False, physical_resistance=0, armor=0, armor_applies=False,
    ...          multiply=1.4)[-1].after   # 45 x 7/5 = 63 exactly (in floating point 62.99999999999999, so 62)
    63
    """
    steps = []
    after = raw - resistance
    steps.append(MitigationStep("resistance", resistance, after))
    rollover = physical_resistance if physical else 0
    after -= rollover
    steps.append(MitigationStep("physical rollover", rollover, after))
    worn = armor if armor_applies else 0
    after -= worn
    steps.append(MitigationStep("armor", worn, after))
    floored = max(after, 0)
    steps.append(MitigationStep("floor", floored - after, floored))
    scaled = floored if multiply == 1 else floored * exact(multiply)  # the usual 1 (or 1.0) takes no fraction
    final = max(math.floor(scaled + add), 0)
    steps.append(MitigationStep("incoming", final - floored, final))
    return steps
