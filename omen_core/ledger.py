"""The cost ledger's question: can a combatant pay a cost now, and if not, why (C20, C22, C36, C37).

What paying takes is :func:`omen_core.state.spend`, the one place a cost's
arithmetic is done (a ``cost_paid``, a Disengage's and a draw's cost all go
through it); what a cost is, :class:`omen_core.hooks.Cost`.
"""

from __future__ import annotations

from .hooks import Cost, amount_of
from .state import FightState

__all__ = ["shortfall"]


def shortfall(state: FightState, who: str, cost: Cost) -> str | None:
    """Why ``who`` cannot pay ``cost`` now, naming the rule (None: it can). An Action or a Movement Action is paid
    on one's own turn from what the turn has left (C20); Bonus Actions from what is left this round (C22); HP and
    Will may not be spent down past 0 (at 0 HP a combatant is Dying, C36: no cost takes it there)."""
    fighter = state.combatants[who]
    left = {"action": state.turn_actions if state.turn == who else 0,
            "movement_action": state.turn_movement if state.turn == who else 0,
            "bonus_action": fighter.bonus_actions, "hp": fighter.hp - 1, "will": fighter.will}
    rules = {"action": "C20", "movement_action": "C20", "bonus_action": "C22", "hp": "C36", "will": "C37"}
    for resource, amount in cost.entries():
        if amount > left[resource]:
            return (f"{who!r} cannot pay {cost.words()}: {amount_of(resource, max(left[resource], 0))} left to "
                    f"spend ({rules[resource]})")
    return None
