"""Arcane Ward (a shipped example ability, C37, C38): when an ally within reach is attacked, ward it for a Bonus Action.

When an attack on an ally within the warder's reach would hit (after the hit
and base defense rolls, before the Active Defense window: the hook point
``attack.rolled``), the warder may spend 1 Bonus Action (C22) to add +2 to
that ally's defense. A sheet has it by listing ``arcane_ward`` in
``abilities``. The +2 and the cost are placeholders until the class chapters
are available (C37).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..events import AttackDeclared
from ..hooks import Choice, Cost, Extension, Moment, TermHandler, Window
from ..parts import Modifier

if TYPE_CHECKING:
    from ..state import FightState, Frame

KIND = "arcane_ward"
#: What a ward adds to the defense (a placeholder, C37).
WARD = 2


def _responders(state: FightState, frame: Frame, moment: Moment) -> tuple[str, ...]:
    """Allies of the target within its reach who have the ward and a Bonus Action, while the attack would hit (a
    decision is offered only where it can change the outcome); never the attacker itself, attacking an ally."""
    decl = frame.declaration
    if not isinstance(decl, AttackDeclared) or moment.attack_total <= moment.defense_total:
        return ()
    target = state.combatants[decl.target]
    return tuple(who for who, ally in state.combatants.items()
                 if KIND in ally.sheet.abilities and who not in (decl.target, decl.attacker)
                 and ally.side == target.side and state.engaged(who, decl.target) and ally.bonus_actions >= 1)


def _terms(state: FightState, frame: Frame) -> tuple[Modifier, ...]:
    """Each ward raised adds to the defense. The term names the ability, not the warder: the defender's seat sees
    its defense's terms, and a warder it does not see must stay unseen (who warded is in the decision's events,
    shown to the seats that see the warder)."""
    return tuple(Modifier(source="Arcane Ward", value=WARD, origin="ability:Arcane Ward", owner=who)
                 for who in frame.chose(KIND, "ward"))


EXTENSION = Extension(
    id=KIND, name="Arcane Ward",
    windows=(Window(kind=KIND, title="Arcane Ward", rule="C38", hook="attack.rolled",
                    choices=(Choice("ward", f"add {WARD} to the ally's defense (a placeholder)",
                                    cost=Cost(bonus_actions=1)),
                             Choice("pass", "let it be")),
                    responders=_responders),),
    terms=(TermHandler(total="defense", terms=_terms),),
)
