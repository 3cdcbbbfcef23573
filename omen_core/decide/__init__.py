"""``decide``: check a command against the rules and the state, and return the events it produces.

``decide`` is pure but for the dice source it is handed: it reads the state,
asks the source for faces in the order of C29, and returns new events, or
raises a :class:`~omen_core.errors.RuleViolation` naming the rule. One small
handler per command, in a dispatch table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..dice import DiceSource
from ..errors import RuleViolation
from ..events import ActionCancelled, Event
from ..state import FightState
from .attack import answer_active_defense, declare_attack, route_damage
from .checks import contest, static_check
from .commands import (
    AnswerActiveDefense,
    ApplyConditionCommand,
    CallSave,
    CancelAction,
    CheckSpec,
    ClearConditionCommand,
    Command,
    CommandBase,
    Contest,
    DeclareAttack,
    Join,
    RevealSeed,
    RouteDamage,
    StartFight,
    StaticCheck,
)
from .draft import Draft
from .effects import call_save
from .setup import apply_condition, clear_condition, join, reveal_seed, start

__all__ = [
    "decide",
    "Command",
    "CommandBase",
    "CheckSpec",
    "StartFight",
    "Join",
    "StaticCheck",
    "Contest",
    "DeclareAttack",
    "AnswerActiveDefense",
    "RouteDamage",
    "CallSave",
    "CancelAction",
    "ApplyConditionCommand",
    "ClearConditionCommand",
    "RevealSeed",
]


def _cancel(draft: Draft, cmd: CancelAction) -> None:
    draft.require("cancel")
    assert draft.state.pending is not None
    draft.emit(ActionCancelled(action=draft.state.pending.action, reason=cmd.reason))


_HANDLERS: dict[type, Callable[[Draft, Any], None]] = {
    StartFight: start,
    Join: join,
    StaticCheck: static_check,
    Contest: contest,
    DeclareAttack: declare_attack,
    AnswerActiveDefense: answer_active_defense,
    RouteDamage: route_damage,
    CallSave: call_save,
    CancelAction: _cancel,
    ApplyConditionCommand: apply_condition,
    ClearConditionCommand: clear_condition,
    RevealSeed: reveal_seed,
}


def decide(state: FightState, command: Command, dice: DiceSource) -> list[Event]:
    """The events ``command`` produces in ``state``, rolling with ``dice``; raises if it breaks a rule."""
    if not state.started and not isinstance(command, StartFight):
        raise RuleViolation("setup", "the fight has not started: start it first")
    draft = Draft(state, dice)
    _HANDLERS[type(command)](draft, command)
    return draft.events
