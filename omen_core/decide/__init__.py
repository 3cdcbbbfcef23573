"""``decide``: check a command against the rules and the state, and return the events it produces.

``decide`` is pure but for the dice source it is handed: it reads the state,
asks the source for faces in the order of C29, and returns new events, or
raises a :class:`~omen_core.errors.RuleViolation` naming the rule. One small
handler per command, in a dispatch table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..commands import (
    UNDO_COMMANDS,
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
    Redo,
    RevealSeed,
    RollInitiative,
    RollOff,
    RouteDamage,
    StartFight,
    StaticCheck,
    Undo,
)
from ..dice import DiceSource
from ..errors import RuleViolation
from ..events import (
    ActionCancelled,
    CommandIssued,
    CostPaid,
    Event,
)
from ..machine import OutOfPhase, Phase, Step
from ..state import AttackFrame, FightState, Frame, MoveFrame, SaveFrame
from .attack import (
    answer_active_defense,
    answer_catch,
    declare,
    declare_attack,
    pay_and_roll,
    route_damage,
)
from .checks import contest, static_check
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
    close_window,
    finish_move,
    move,
    pass_reaction,
    reaction_window,
)
from .setup import apply_condition, clear_condition, join, reveal_seed, start
from .undo import History, Target, redo, undo

__all__ = [
    "decide",
    "decided",
    "Draft",
    "SELF_RECORDING",
    "History",
    "Target",
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
    "Undo",
    "Redo",
]

#: The commands that are their own record: their batch is their one event (``fight_started``,
#: ``combatant_joined``), with no ``command_issued`` before it.
SELF_RECORDING = (StartFight, Join)


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
    assert outer is not None
    draft.require("declare", rule=rule, reaction=True)
    declare(draft, DeclareAttack(attacker=cmd.who, target=outer.actor, weapon=cmd.weapon, unarmed=cmd.unarmed),
            reaction=opened.reaction, reacting_to=outer.action)
    pay_and_roll(draft)


def _carry_on(draft: Draft) -> None:
    """Resume actions whose reaction window can close: everyone answered, or an Interrupt hit (C24)."""
    while True:
        top = draft.state.pending
        if top is None or top.step is not Step.REACTIONS_OPEN or not top.window_done:
            return
        cut = top.interrupted
        close_window(draft)
        if isinstance(top, MoveFrame):
            finish_move(draft)
        elif cut:
            _spend_and_cancel(draft, top)
        elif isinstance(top, AttackFrame):
            pay_and_roll(draft)
        else:
            resolve_save(draft)


def _spend_and_cancel(draft: Draft, frame: Frame) -> None:
    """C24: an Interrupt hit cancels the declared Action, and its Action is still spent."""
    amount = frame.declaration.effect.action_cost if isinstance(frame, SaveFrame) else 1
    draft.emit(CostPaid(action=frame.action, who=frame.actor, resource="action", amount=amount,
                        purpose="the interrupted Action (still spent, C24)"))
    draft.emit(ActionCancelled(action=frame.action, reason="an Interrupt hit (C24)"))


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
    Redo: redo,
}


def decide(state: FightState, command: Command, dice: DiceSource, history: History | None = None,
           by: str = "") -> list[Event]:
    """The events ``command`` produces in ``state``, rolling with ``dice``; raises if it breaks a rule.

    The batch opens with a ``command_issued`` event recording ``command`` (and
    ``by``, who gave it), but for the set-up commands that are their own record.
    An undo back to a chosen seq asks ``history`` about it (:class:`History`).
    """
    return decided(state, command, dice, history, by).events


def decided(state: FightState, command: Command, dice: DiceSource, history: History | None = None,
            by: str = "") -> Draft:
    """:func:`decide`, returning the whole :class:`Draft`: its events and the state they lead to (each event
    folded once, as it was emitted; an undo or redo marker is not folded: the walk applies it)."""
    if not state.started and not isinstance(command, StartFight):
        raise RuleViolation("setup", "the fight has not started: start it first")
    if state.ending is not None and not isinstance(command, (RevealSeed, *UNDO_COMMANDS)):
        raise OutOfPhase(Phase.ENDED, "act")
    draft = Draft(state, dice)
    if not isinstance(command, SELF_RECORDING):
        draft.emit(CommandIssued(command=command, by=by))
    if isinstance(command, Undo):
        undo(draft, command, history)
        return draft
    _HANDLERS[type(command)](draft, command)
    if not isinstance(command, UNDO_COMMANDS):
        _carry_on(draft)
        check_defeat(draft)
    return draft
