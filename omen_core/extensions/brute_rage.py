"""Brute Rage (C12, C37): an attack declared with ``rage`` adds the sheet's rage dice to its damage, rolled on a hit.

The sheet's ``features.rage`` (count and die) is the shorthand; the attack
option ``rage`` is offered to those who have it and refused to others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..events import AttackDeclared
from ..hooks import AttackOption, Extension, PoolDice
from ..parts import PoolTag

if TYPE_CHECKING:
    from ..state import FightState, Frame


def _dice(state: FightState, frame: Frame) -> tuple[tuple[PoolTag, int], ...]:
    decl = frame.declaration
    if not isinstance(decl, AttackDeclared) or not decl.rage:
        return ()
    rage = state.combatants[decl.attacker].sheet.features.rage
    return (("damage", rage.sides),) * rage.count if rage is not None else ()


def _offered(state: FightState, who: str) -> bool:
    return state.combatants[who].sheet.features.rage is not None


EXTENSION = Extension(
    id="brute_rage", name="Brute Rage", keys="features.rage",
    pools=(PoolDice(roll="damage", dice=_dice),),
    attack_options=(AttackOption(field="rage", offered=_offered, rule="C12",
                                 refusal=lambda who: f"{who!r} has no Brute rage dice to add"),),
)
