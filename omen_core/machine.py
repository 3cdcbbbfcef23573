"""The action-lifecycle state machine: states, the transition table, and the order check replay uses.

One ``transitions`` machine, declared as data (an Enum of steps and a
module-level transition table, ``auto_transitions=False``), is the single
source of truth for the order of events within an action (combat.txt §How a
Single Action Resolves, §Resolving an Attack, §Resolving a Save):

    declared → costs paid → hit rolled → base defense rolled
      → Active Defense window (open → chosen → paid → rolled, or declined; or skipped)
      → hit and crit determined → [Rogue routing window] → damage resolved → settled

and for a save: declared → [costs paid] → saver rolled → opposing rolled →
save resolved → consequences → settled; plus the paths of a cancelled action.

Every event maps to a trigger (:func:`trigger_of`). Live play fires the
triggers on a real :class:`Lifecycle`; replay, which must be fast, looks
them up in :data:`ORDER`, a table *derived* from the same machine.

>>> lifecycle = Lifecycle()
>>> lifecycle.fire("declare")
<Step.DECLARED: 'declared'>
>>> lifecycle.legal()
['cancel', 'pay', 'roll_save']
"""

from __future__ import annotations

from enum import Enum
from types import MappingProxyType
from typing import Any

from transitions import Machine, MachineError

from .errors import RuleViolation
from .events import (
    ActionCancelled,
    ActionSettled,
    ActiveDefenseChosen,
    ActiveDefenseDeclined,
    ActiveDefenseWindowOpened,
    ActiveDefenseWindowSkipped,
    AttackDeclared,
    CombatantJoined,
    ConditionApplied,
    ConditionCleared,
    ContestResolved,
    CostPaid,
    DamageResolved,
    DamageRouted,
    DiceRolled,
    Event,
    FightStarted,
    HitDetermined,
    ResourceChanged,
    RoutingWindowOpened,
    SaveCalled,
    SaveResolved,
    SeedRevealed,
    StaticCheckResolved,
)

__all__ = ["Step", "AT_REST", "TRANSITIONS", "ORDER", "Lifecycle", "IllegalOrder", "trigger_of",
           "legal_triggers", "next_step", "mermaid"]


class Step(Enum):
    """Where the current action stands; the three rest steps accept a new action."""

    IDLE = "idle"
    DECLARED = "declared"
    COSTS_PAID = "costs paid"
    HIT_ROLLED = "hit rolled"
    BASE_DEFENSE_ROLLED = "base defense rolled"
    WINDOW_OPEN = "Active Defense window open"
    DEFENSE_CHOSEN = "Active Defense chosen"
    DEFENSE_PAID = "Active Defense paid"
    WINDOW_CLOSED = "Active Defense window closed"
    HIT_DETERMINED = "hit and crit determined"
    ROUTING_OPEN = "routing window open"
    DAMAGE_RESOLVED = "damage resolved"
    SAVER_ROLLED = "saver rolled"
    OPPOSING_ROLLED = "opposing die rolled"
    SAVE_RESOLVED = "save resolved"
    SETTLED = "settled"
    CANCELLED = "cancelled"


S = Step
AT_REST = (S.IDLE, S.SETTLED, S.CANCELLED)
_CONSEQUENCES = [S.HIT_DETERMINED, S.DAMAGE_RESOLVED, S.SAVE_RESOLVED]

#: The transition table: one row per (trigger, sources, destination); "=" keeps the step.
TRANSITIONS: list[dict[str, Any]] = [
    # outside any action: set-up, GM commands and plain checks
    {"trigger": "setup", "source": list(AT_REST), "dest": "="},
    {"trigger": "roll_check", "source": list(AT_REST), "dest": "="},
    {"trigger": "resolve_check", "source": list(AT_REST), "dest": "="},
    # declaration and costs
    {"trigger": "declare", "source": list(AT_REST), "dest": S.DECLARED},
    {"trigger": "pay", "source": S.DECLARED, "dest": S.COSTS_PAID},
    {"trigger": "cancel", "source": [S.DECLARED, S.COSTS_PAID], "dest": S.CANCELLED},
    # an attack: hit roll, base defense, the Active Defense window, hit and crit
    {"trigger": "roll_hit", "source": S.COSTS_PAID, "dest": S.HIT_ROLLED},
    {"trigger": "roll_base_defense", "source": S.HIT_ROLLED, "dest": S.BASE_DEFENSE_ROLLED},
    {"trigger": "open_window", "source": S.BASE_DEFENSE_ROLLED, "dest": S.WINDOW_OPEN},
    {"trigger": "skip_window", "source": [S.HIT_ROLLED, S.BASE_DEFENSE_ROLLED], "dest": S.WINDOW_CLOSED},
    {"trigger": "choose_defense", "source": S.WINDOW_OPEN, "dest": S.DEFENSE_CHOSEN},
    {"trigger": "decline", "source": S.WINDOW_OPEN, "dest": S.WINDOW_CLOSED},
    {"trigger": "pay", "source": S.DEFENSE_CHOSEN, "dest": S.DEFENSE_PAID},
    {"trigger": "roll_active_defense", "source": S.DEFENSE_PAID, "dest": S.WINDOW_CLOSED},
    {"trigger": "determine_hit", "source": S.WINDOW_CLOSED, "dest": S.HIT_DETERMINED},
    {"trigger": "open_routing", "source": S.HIT_DETERMINED, "dest": S.ROUTING_OPEN},
    {"trigger": "route", "source": S.ROUTING_OPEN, "dest": S.HIT_DETERMINED},
    # a save
    {"trigger": "roll_save", "source": [S.DECLARED, S.COSTS_PAID], "dest": S.SAVER_ROLLED},
    {"trigger": "roll_save", "source": S.SAVER_ROLLED, "dest": S.OPPOSING_ROLLED},
    {"trigger": "resolve_save", "source": S.OPPOSING_ROLLED, "dest": S.SAVE_RESOLVED},
    # consequences, in written order (C25), then settling
    {"trigger": "roll_damage", "source": _CONSEQUENCES, "dest": "="},
    {"trigger": "resolve_damage", "source": _CONSEQUENCES, "dest": S.DAMAGE_RESOLVED},
    {"trigger": "change_resource", "source": [S.DAMAGE_RESOLVED, *AT_REST], "dest": "="},
    {"trigger": "apply_condition", "source": [*_CONSEQUENCES, *AT_REST], "dest": "="},
    {"trigger": "clear_condition", "source": [*_CONSEQUENCES, *AT_REST], "dest": "="},
    {"trigger": "settle", "source": _CONSEQUENCES, "dest": S.SETTLED},
]


class IllegalOrder(RuleViolation):
    """A command or event that does not fit the current step; names the step and the legal next steps."""

    def __init__(self, step: Step, trigger: str, legal: list[str], seq: int | None = None,
                 rule: str = "lifecycle", why: str = ""):
        self.step, self.trigger, self.legal, self.seq = step, trigger, legal, seq
        where = f"seq {seq}: " if seq is not None else ""
        why = f"{why}; " if why else ""
        super().__init__(rule, f"{where}{why}cannot {trigger.replace('_', ' ')} now: the action is at "
                                      f"'{step.value}'; legal next: {', '.join(legal) or 'nothing'}")


class Lifecycle:
    """A live action lifecycle: a ``transitions`` machine over :class:`Step` built from :data:`TRANSITIONS`."""

    def __init__(self, step: Step = Step.IDLE):
        self.machine = Machine(model=self, states=Step, transitions=TRANSITIONS, initial=step,
                               auto_transitions=False, model_attribute="step")
        self.step: Step

    def legal(self) -> list[str]:
        """The triggers legal from the current step, sorted."""
        return sorted(self.machine.get_triggers(self.step.name))

    def fire(self, trigger: str) -> Step:
        """Take one step; raise :class:`IllegalOrder` (and stay put) if ``trigger`` is not legal now."""
        try:
            self.trigger(trigger)  # type: ignore[attr-defined]  # added by transitions
        except (MachineError, AttributeError):
            raise IllegalOrder(self.step, trigger, self.legal()) from None
        return self.step


def _derive_order() -> MappingProxyType[tuple[Step, str], Step]:
    """The (step, trigger) → next step table, read off a built machine: the machine stays the source of truth."""
    machine = Lifecycle().machine
    table = {}
    for name, event in machine.events.items():
        for source, transitions in event.transitions.items():
            table[(Step[source], name)] = Step[transitions[0].dest or source]
    return MappingProxyType(table)


#: The order table for replay: ``ORDER[(step, trigger)]`` is the next step.
ORDER = _derive_order()


def mermaid() -> str:
    """The lifecycle as a Mermaid state diagram, generated from :data:`ORDER` so it cannot drift."""
    lines = ["stateDiagram-v2", f"    [*] --> {Step.IDLE.name}"]
    for (source, trigger), dest in sorted(ORDER.items(), key=lambda kv: (list(Step).index(kv[0][0]), kv[0][1])):
        if source is not dest:
            lines.append(f"    {source.name} --> {dest.name}: {trigger}")
    loops: dict[Step, list[str]] = {}
    for (source, trigger), dest in ORDER.items():
        if source is dest:
            loops.setdefault(source, []).append(trigger)
    for step in Step:
        label = step.value + (f" (also: {', '.join(sorted(loops[step]))})" if step in loops else "")
        lines.append(f"    {step.name}: {label}")
    return "\n".join(lines) + "\n"


def legal_triggers(step: Step) -> list[str]:
    """The triggers legal from ``step``, from the derived table."""
    return sorted(t for (s, t) in ORDER if s is step)


def next_step(step: Step, event: Event, seq: int | None = None) -> Step:
    """The step after ``event``; :class:`IllegalOrder` if the event cannot come now (replay's check)."""
    trigger = trigger_of(event)
    try:
        return ORDER[(step, trigger)]
    except KeyError:
        raise IllegalOrder(step, trigger, legal_triggers(step), seq) from None


_PURPOSE_TRIGGER = {"hit": "roll_hit", "base_defense": "roll_base_defense",
                    "active_defense": "roll_active_defense", "damage": "roll_damage", "save": "roll_save"}

_TRIGGERS: dict[type, str] = {
    FightStarted: "setup", CombatantJoined: "setup", SeedRevealed: "setup",
    StaticCheckResolved: "resolve_check", ContestResolved: "resolve_check",
    AttackDeclared: "declare", SaveCalled: "declare", CostPaid: "pay",
    ActiveDefenseWindowOpened: "open_window", ActiveDefenseWindowSkipped: "skip_window",
    ActiveDefenseChosen: "choose_defense", ActiveDefenseDeclined: "decline",
    HitDetermined: "determine_hit", RoutingWindowOpened: "open_routing", DamageRouted: "route",
    SaveResolved: "resolve_save", DamageResolved: "resolve_damage", ResourceChanged: "change_resource",
    ConditionApplied: "apply_condition", ConditionCleared: "clear_condition",
    ActionSettled: "settle", ActionCancelled: "cancel",
}


def trigger_of(event: Event) -> str:
    """The lifecycle trigger an event fires."""
    if isinstance(event, DiceRolled):
        return _PURPOSE_TRIGGER.get(event.purpose, "roll_check")
    return _TRIGGERS[type(event)]
