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
from ..events import (
    ActionCancelled,
    AttackDeclared,
    CostPaid,
    Event,
    MovementDeclared,
    SaveCalled,
)
from ..machine import OutOfPhase, Phase, Step
from ..state import FightState
from .attack import (
    answer_active_defense,
    answer_catch,
    declare,
    declare_attack,
    pay_and_roll,
    route_damage,
)
from .checks import contest, static_check
from .commands import (
    AgreeInitiative,
    AnswerActiveDefense,
    AnswerCatch,
    ApplyConditionCommand,
    BeginAmbush,
    CallSave,
    CancelAction,
    CheckSpec,
    ClearConditionCommand,
    Command,
    CommandBase,
    Contest,
    DeclareAttack,
    Disengage,
    Draw,
    EndFight,
    EndTurn,
    Engage,
    Join,
    Move,
    PassReaction,
    React,
    RevealSeed,
    RollInitiative,
    RollOff,
    RouteDamage,
    StartFight,
    StaticCheck,
)
from .draft import Draft
from .effects import call_save, resolve_save
from .flow import (
    agree_initiative,
    begin_ambush,
    check_defeat,
    disengage,
    draw,
    end_fight,
    end_turn,
    engage,
    roll_initiative,
    roll_off,
)
from .reactions import (
    actor_of,
    close_window,
    finish_move,
    interrupted,
    move,
    pass_reaction,
    reaction_window,
    window_done,
)
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
    "BeginAmbush",
    "RollInitiative",
    "AgreeInitiative",
    "RollOff",
    "EndTurn",
    "Move",
    "Disengage",
    "React",
    "PassReaction",
    "AnswerCatch",
    "Engage",
    "Draw",
    "EndFight",
]


def _cancel(draft: Draft, cmd: CancelAction) -> None:
    """The GM calls off the action in progress while it waits on a window (an Interrupt or Attack of
    Opportunity window, the Active Defense, routing or Catch window); costs already paid stay paid. A reaction
    in progress is answered (or undone) first: calling off the action it reacts to would leave it hanging."""
    draft.require("cancel", why="no action is waiting on a window to call off")
    state = draft.state
    assert state.pending is not None
    if len(state.stack) > 1:
        raise RuleViolation("cancel", f"action {state.pending.action} is a reaction to action "
                                      f"{state.stack[-2].action}: finish or undo the reaction first")
    draft.emit(ActionCancelled(action=state.pending.action, reason=cmd.reason))


def _react(draft: Draft, cmd: React) -> None:
    """Take the reaction the open window offers: a basic melee attack on the acting combatant (C23, C24)."""
    opened = reaction_window(draft, cmd.who)
    rule = "C24" if opened.reaction == "interrupt" else "C23"
    costs = draft.ruleset.reaction_costs
    cost = costs.interrupt if opened.reaction == "interrupt" else costs.attack_of_opportunity
    if draft.combatant(cmd.who).bonus_actions < cost:
        raise RuleViolation("C22", f"{cmd.who!r} needs {cost} Bonus Action(s) for this reaction")
    outer = draft.state.pending
    draft.require("declare", rule=rule, reaction=True)
    declare(draft, DeclareAttack(attacker=cmd.who, target=actor_of(outer), weapon=cmd.weapon, unarmed=cmd.unarmed),
            reaction=opened.reaction, reacting_to=outer.action)
    pay_and_roll(draft)


def _carry_on(draft: Draft) -> None:
    """Resume actions whose reaction window can close: everyone answered, or an Interrupt hit (C24)."""
    while True:
        top = draft.state.pending
        if top is None or top.step is not Step.REACTIONS_OPEN or not window_done(top):
            return
        cut = interrupted(top)
        close_window(draft)
        first = top.events[0]
        if isinstance(first, MovementDeclared):
            finish_move(draft)
        elif cut:
            _spend_and_cancel(draft, first)
        elif isinstance(first, AttackDeclared):
            pay_and_roll(draft)
        else:
            resolve_save(draft)


def _spend_and_cancel(draft: Draft, first: AttackDeclared | SaveCalled) -> None:
    """C24: an Interrupt hit cancels the declared Action, and its Action is still spent."""
    who = first.attacker if isinstance(first, AttackDeclared) else first.caller
    amount = 1 if isinstance(first, AttackDeclared) else first.effect.action_cost
    draft.emit(CostPaid(action=first.action, who=who, resource="action", amount=amount,
                        purpose="the interrupted Action (still spent, C24)"))
    draft.emit(ActionCancelled(action=first.action, reason="an Interrupt hit (C24)"))


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
    BeginAmbush: begin_ambush,
    RollInitiative: roll_initiative,
    AgreeInitiative: agree_initiative,
    RollOff: roll_off,
    EndTurn: end_turn,
    Move: move,
    Disengage: disengage,
    React: _react,
    PassReaction: pass_reaction,
    AnswerCatch: answer_catch,
    Engage: engage,
    Draw: draw,
    EndFight: end_fight,
}


def decide(state: FightState, command: Command, dice: DiceSource) -> list[Event]:
    """The events ``command`` produces in ``state``, rolling with ``dice``; raises if it breaks a rule."""
    if not state.started and not isinstance(command, StartFight):
        raise RuleViolation("setup", "the fight has not started: start it first")
    if state.ending is not None and not isinstance(command, RevealSeed):
        raise OutOfPhase(Phase.ENDED, "act")
    draft = Draft(state, dice)
    _HANDLERS[type(command)](draft, command)
    _carry_on(draft)
    check_defeat(draft)
    return draft.events
