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

import msgspec

from ..content import CombatantSheet, Ruleset
from ..dice import DiceSource, RollRequest, roll
from ..errors import RuleViolation, UnknownCombatant
from ..events import DiceRolled, Event, PoolTag, RollPurpose
from ..machine import (
    FightFlow,
    IllegalOrder,
    Lifecycle,
    OutOfPhase,
    Step,
    phase_trigger_of,
    trigger_of,
)
from ..state import (
    CombatantState,
    FightState,
    condition_adjustment,
    effective_bonus,
    evolve,
)

__all__ = ["Draft", "condition_adjustment", "effective_bonus"]

E = TypeVar("E", bound=Event)


class Draft:
    """A command's events in the making, with the state they lead to."""

    def __init__(self, state: FightState, dice: DiceSource):
        self.state, self.dice = state, dice
        self.events: list[Event] = []
        self._lifecycle, self._flow = Lifecycle(), FightFlow()

    def _at(self, step: Step) -> Lifecycle:
        """The draft's live lifecycle machine, set to ``step`` (built once, reused: building costs ~0.1 ms)."""
        self._lifecycle.machine.set_state(step.name)
        return self._lifecycle

    @property
    def ruleset(self) -> Ruleset:
        """The fight's ruleset (set by its first event)."""
        if self.state.ruleset is None:
            raise RuleViolation("setup", "the fight has not started: start it first")
        return self.state.ruleset

    def require(self, trigger: str, rule: str = "lifecycle", why: str = "", reaction: bool = False) -> None:
        """Refuse the command unless ``trigger`` is legal now; name the step and the legal next steps.

        A new action (``declare``) is legal at rest; a ``reaction`` may also be
        declared nested in an action waiting at its reaction window.
        """
        lifecycle = self._at(self.state.step)
        legal = lifecycle.legal()
        wanted = "nest" if trigger == "declare" and not self.state.at_rest and reaction else trigger
        if wanted not in legal:
            raise IllegalOrder(lifecycle.step, trigger, legal, rule=rule, why=why)

    def require_phase(self, trigger: str) -> None:
        """Refuse the command unless the fight's phase allows ``trigger``; name the phase and what is legal."""
        self._flow.machine.set_state(self.state.phase.name)
        if trigger not in self._flow.legal():
            raise OutOfPhase(self.state.phase, trigger)

    def emit(self, event: E) -> E:
        """Add an event: fire it on the live phase and lifecycle machines, then fold it into the state."""
        trigger = trigger_of(event)
        self.require_phase(phase_trigger_of(event))
        if trigger == "declare":
            if not self.state.at_rest:
                self._at(self.state.step).fire("nest")
            self._at(Step.IDLE).fire(trigger)
        else:
            self._at(self.state.step).fire(trigger)
        self.state = evolve(self.state, event)
        self.events.append(event)
        return event

    def roll(self, purpose: RollPurpose, roller: str, pool: Iterable[tuple[PoolTag, int]]) -> DiceRolled:
        """Roll a pool (in C29 order) with the fight's dice source and emit the roll, tagged with its action."""
        request = RollRequest(self.state.fight_id, self.state.rolls + 1, purpose, roller, tuple(pool))
        rolled = roll(self.dice, request)
        pending = self.state.pending
        if pending is not None:
            rolled = msgspec.structs.replace(rolled, action=pending.action)
        return self.emit(rolled)

    def combatant(self, who: str) -> CombatantState:
        """A joined combatant, or :class:`UnknownCombatant`."""
        try:
            return self.state.combatants[who]
        except KeyError:
            raise UnknownCombatant(who, list(self.state.combatants)) from None

    def sheet(self, who: str) -> CombatantSheet:
        """A joined combatant's sheet."""
        return self.combatant(who).sheet
