"""The Draft: events being decided, folded as they are emitted and checked by the lifecycle machine.

Every decision function writes through a :class:`Draft`: each emitted event
fires its trigger on a live ``transitions`` machine (so an out-of-order
event is impossible) and is folded into the draft's state (so later steps
see earlier ones: roll counters, Bonus Actions spent, the pending action).
Nothing reaches the store until the whole command has been decided.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from ..content import CombatantSheet, Ruleset
from ..dice import DiceSource, RollRequest, roll
from ..errors import RuleViolation, UnknownCombatant
from ..events import DiceRolled, Event, PoolTag, RollPurpose
from ..machine import IllegalOrder, Lifecycle, trigger_of
from ..state import CombatantState, FightState, evolve

__all__ = ["Draft", "condition_adjustment", "effective_bonus"]

E = TypeVar("E", bound=Event)


class Draft:
    """A command's events in the making, with the state they lead to."""

    def __init__(self, state: FightState, dice: DiceSource):
        self.state, self.dice = state, dice
        self.events: list[Event] = []
        self.lifecycle = Lifecycle(state.step)

    @property
    def ruleset(self) -> Ruleset:
        """The fight's ruleset (set by its first event)."""
        if self.state.ruleset is None:
            raise RuleViolation("setup", "the fight has not started: start it first")
        return self.state.ruleset

    def require(self, trigger: str, rule: str = "lifecycle", why: str = "") -> None:
        """Refuse the command unless ``trigger`` is legal at the current step; name step and legal steps."""
        legal = self.lifecycle.legal()
        if trigger not in legal:
            raise IllegalOrder(self.lifecycle.step, trigger, legal, rule=rule, why=why)

    def emit(self, event: E) -> E:
        """Add an event: fire its trigger on the machine, then fold it into the state."""
        self.lifecycle.fire(trigger_of(event))
        self.state = evolve(self.state, event)
        self.events.append(event)
        return event

    def roll(self, purpose: RollPurpose, roller: str, pool: Iterable[tuple[PoolTag, int]]) -> DiceRolled:
        """Roll a pool (in C29 order) with the fight's dice source and emit the roll."""
        request = RollRequest(self.state.fight_id, self.state.rolls + 1, purpose, roller, tuple(pool))
        return self.emit(roll(self.dice, request))

    def combatant(self, who: str) -> CombatantState:
        """A joined combatant, or :class:`UnknownCombatant`."""
        try:
            return self.state.combatants[who]
        except KeyError:
            raise UnknownCombatant(who, list(self.state.combatants)) from None

    def sheet(self, who: str) -> CombatantSheet:
        """A joined combatant's sheet."""
        return self.combatant(who).sheet


def condition_adjustment(state: FightState, who: str) -> int:
    """What a combatant's conditions add to every attribute bonus (C28: e.g. −1 per Exhausted stack)."""
    fighter = state.combatants[who]
    if state.ruleset is None:
        return 0
    defs = state.ruleset.conditions
    return sum(defs[name].attribute_bonus * stacks for name, stacks in fighter.conditions.items()
               if name in defs)


def effective_bonus(state: FightState, who: str, attribute: str) -> int:
    """An attribute bonus as it stands now: the sheet's, adjusted by conditions (C1, C28)."""
    return state.combatants[who].sheet.attributes[attribute].bonus + condition_adjustment(state, who)
