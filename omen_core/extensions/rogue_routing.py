"""Rogue routing (C12, C37): a Rogue whose attack from Unseen hits chooses which hit-pool die feeds damage.

The sheet's ``features.rogue_routing`` is the shorthand; as docs/rulings.md
says, only while the attacker is Unseen ("Rogue (unseen expansion)").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..events import AttackDeclared
from ..hooks import Extension, Routing

if TYPE_CHECKING:
    from ..state import FightState, Frame


def _routes(state: FightState, frame: Frame) -> bool:
    decl = frame.declaration
    if not isinstance(decl, AttackDeclared):
        return False
    attacker = state.combatants[decl.attacker]
    return attacker.sheet.features.rogue_routing and attacker.unseen


EXTENSION = Extension(id="rogue_routing", name="Rogue routing", keys="features.rogue_routing",
                      routing=(Routing(routes=_routes),))
