"""+1 and +2 primary dice (C6, C37): an attack rolls ``features.extra_primary_dice`` more dice of its primary attribute.

The sheet's ``extra_primary_dice`` is the shorthand; the dice come after the
rules' own primary die (C29, C39) and count in the hit total and, unrouted,
in the damage dice (C5, C12).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..events import AttackDeclared
from ..hooks import Extension, PoolDice
from ..parts import PoolTag
from ..rules.attack import primary_attribute

if TYPE_CHECKING:
    from ..state import FightState, Frame


def _dice(state: FightState, frame: Frame) -> tuple[tuple[PoolTag, int], ...]:
    decl = frame.declaration
    if not isinstance(decl, AttackDeclared):
        return ()
    sheet = state.combatants[decl.attacker].sheet
    extra = sheet.features.extra_primary_dice
    if not extra:
        return ()
    weapon = getattr(frame, "weapon", None)
    attribute = primary_attribute(decl.kind, weapon is not None and "finesse" in weapon.properties)
    return (("primary", sheet.attributes[attribute].sides),) * extra


EXTENSION = Extension(id="extra_primary_dice", name="+1 / +2 primary dice", keys="features.extra_primary_dice",
                      pools=(PoolDice(roll="hit", dice=_dice),))
