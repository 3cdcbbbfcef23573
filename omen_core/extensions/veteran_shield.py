"""Veteran Shield Training (§Which Defenses Apply, C37): an eligibility override letting a shield Block ranged attacks.

The sheet's ``training.veteran_shield`` is the shorthand. The override lifts
only what the training lifts: the other limits on a Block (a shield in hand,
a magical one against a spell) stand.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..hooks import DefenseOverride, Extension
from ..rules.attack import ineligibility

if TYPE_CHECKING:
    from ..events import AttackDeclared
    from ..state import FightState


def _allows(state: FightState, decl: AttackDeclared, defense: str) -> bool:
    target = state.combatants[decl.target]
    sheet = target.sheet
    if defense != "block" or not sheet.training.veteran_shield or sheet.shield is None:
        return False
    return ineligibility("block", decl.kind, prone=target.prone, weapon=False, magical_weapon=False,
                         shield=sheet.shield.id in target.wielding, magical_shield=sheet.shield.magical,
                         veteran_shield=True) is None


EXTENSION = Extension(id="veteran_shield", name="Veteran Shield Training", keys="training.veteran_shield",
                      overrides=(DefenseOverride(allows=_allows, name="Veteran Shield Training"),))
