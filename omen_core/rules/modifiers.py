"""Situational modifiers to hit (combat.txt §Special Combat Conditions; C26, C27).

>>> encircled_bonus(attackers=4, defenders=2)
4
>>> encircled_bonus(attackers=3, defenders=2)   # 3 < 2 * 2: not encircled
0
"""

from __future__ import annotations

__all__ = ["HIGH_GROUND", "PRONE_MELEE", "PRONE_RANGED", "encircled_bonus", "prone_target_bonus"]

HIGH_GROUND = 2
PRONE_MELEE = 4
PRONE_RANGED = -2
ENCIRCLED_CAP = 6


def encircled_bonus(attackers: int, defenders: int) -> int:
    """C26: with A attackers adjacent to the target and D defenders adjacent to the attacker,
    +min(6, 2·(A − D)) to hit iff A ≥ 2·D, else 0."""
    if defenders < 1 or attackers < 2 * defenders:
        return 0
    return min(ENCIRCLED_CAP, 2 * (attackers - defenders))


def prone_target_bonus(ranged: bool) -> int:
    """C27: attacking a prone target is +4 in melee, −2 at range."""
    return PRONE_RANGED if ranged else PRONE_MELEE
