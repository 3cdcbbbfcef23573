"""Fight state and the projection that folds events into it (``evolve``), used live and in replay.

Folding also checks the order of events against the action lifecycle
(:data:`omen_core.machine.ORDER`), so a log in an impossible order cannot
be replayed into a state.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

import msgspec
from msgspec.structs import replace

from .content import CombatantSheet, Ruleset
from .events import (
    GENESIS_HASH,
    ActionCancelled,
    ActionSettled,
    AttackDeclared,
    CombatantJoined,
    ConditionApplied,
    ConditionCleared,
    CostPaid,
    DiceRolled,
    DiceSourceKind,
    Event,
    FightStarted,
    ResourceChanged,
    SaveCalled,
    SeedRevealed,
    StoredEvent,
)
from .machine import AT_REST, Step, next_step

__all__ = ["CombatantState", "PendingAction", "FightState", "evolve", "fold", "project"]

E = TypeVar("E")


class CombatantState(msgspec.Struct, frozen=True, kw_only=True):
    """A combatant as the fight has left it: sheet, HP and Will (C3), Bonus Actions (C20), conditions (C28)."""

    sheet: CombatantSheet
    hp: int
    will: int
    bonus_actions: int
    conditions: dict[str, int] = {}

    @property
    def id(self) -> str:
        """The combatant's id from its sheet."""
        return self.sheet.id

    def has(self, condition: str) -> bool:
        """Whether the combatant has at least one stack of ``condition``."""
        return condition in self.conditions

    @property
    def prone(self) -> bool:
        """Prone: easier to hit in melee, harder at range, cannot Dodge (C27)."""
        return self.has("Prone")

    @property
    def unseen(self) -> bool:
        """Unseen: attacks with an extra FCS die, then is seen (C27)."""
        return self.has("Unseen")

    @property
    def helpless(self) -> bool:
        """Incapacitated or paralysed: no base defense die, no Active Defense (C10)."""
        return self.has("Incapacitated") or self.has("Paralysed")


class PendingAction(msgspec.Struct, frozen=True, kw_only=True):
    """The action in progress: its number and every event it has produced so far."""

    action: int
    events: tuple[Event, ...]

    def first(self, kind: type[E]) -> E | None:
        """The first event of this type in the action, if any."""
        return next((e for e in self.events if isinstance(e, kind)), None)

    def all(self, kind: type[E]) -> list[E]:
        """Every event of this type in the action, in order."""
        return [e for e in self.events if isinstance(e, kind)]


class FightState(msgspec.Struct, frozen=True, kw_only=True):
    """Everything derived from a fight's events so far. Never stored: always rebuilt by folding."""

    fight_id: str = ""
    version: int = 0
    last_hash: str = GENESIS_HASH
    started: bool = False
    title: str = ""
    ruleset: Ruleset | None = None
    dice: DiceSourceKind | None = None
    seed_commitment: str | None = None
    revealed_seed: str | None = None
    rolls: int = 0
    actions: int = 0
    step: Step = Step.IDLE
    pending: PendingAction | None = None
    combatants: dict[str, CombatantState] = {}

    @property
    def at_rest(self) -> bool:
        """No action is in progress."""
        return self.step in AT_REST


def _with(state: FightState, who: str, **changes: object) -> FightState:
    """The state with one combatant's fields changed."""
    fighter = replace(state.combatants[who], **changes)
    return replace(state, combatants={**state.combatants, who: fighter})


def _conditions(state: FightState, who: str, name: str, stacks: int) -> FightState:
    conditions = {k: v for k, v in state.combatants[who].conditions.items() if k != name}
    if stacks:
        conditions[name] = stacks
    return _with(state, who, conditions=conditions)


def _effects(state: FightState, event: Event) -> FightState:
    """What an event changes besides the lifecycle step."""
    match event:
        case FightStarted():
            return replace(state, started=True, title=event.title, ruleset=event.ruleset,
                           dice=event.dice, seed_commitment=event.seed_commitment)
        case CombatantJoined(sheet=sheet):
            bonus = state.ruleset.economy.bonus_actions if state.ruleset else 0
            joined = CombatantState(sheet=sheet, hp=sheet.hp, will=sheet.will, bonus_actions=bonus)
            return replace(state, combatants={**state.combatants, sheet.id: joined})
        case DiceRolled():
            return replace(state, rolls=event.counter)
        case CostPaid(resource="bonus_action"):
            fighter = state.combatants[event.who]
            return _with(state, event.who, bonus_actions=fighter.bonus_actions - event.amount)
        case ResourceChanged():
            return _with(state, event.who, **{event.resource: event.after})
        case ConditionApplied():
            return _conditions(state, event.who, event.condition, event.stacks)
        case ConditionCleared():
            return _conditions(state, event.who, event.condition, 0)
        case SeedRevealed():
            return replace(state, revealed_seed=event.seed)
    return state


def _track(state: FightState, event: Event) -> FightState:
    """Keep the events of the action in progress; forget them once it settles or is cancelled."""
    if isinstance(event, (AttackDeclared, SaveCalled)):
        return replace(state, actions=event.action, pending=PendingAction(action=event.action, events=(event,)))
    if isinstance(event, (ActionSettled, ActionCancelled)):
        return replace(state, pending=None)
    if state.pending is not None:
        pending = replace(state.pending, events=(*state.pending.events, event))
        return replace(state, pending=pending)
    return state


def evolve(state: FightState, event: Event, seq: int | None = None) -> FightState:
    """Fold one event into the state. Pure. Raises IllegalOrder if the event cannot come now."""
    step = next_step(state.step, event, seq)
    state = _track(_effects(state, event), event)
    return state if state.step is step else replace(state, step=step)


def fold(state: FightState, stored: StoredEvent) -> FightState:
    """Fold one stored event: its payload through :func:`evolve`, plus the envelope's position."""
    state = evolve(state, stored.event, stored.seq)
    return replace(state, fight_id=stored.fight_id, version=stored.seq, last_hash=stored.hash)


def project(records: Iterable[StoredEvent], state: FightState | None = None) -> FightState:
    """Fold a stream of stored events, from the empty state or from ``state``."""
    state = FightState() if state is None else state
    for rec in records:
        state = fold(state, rec)
    return state
