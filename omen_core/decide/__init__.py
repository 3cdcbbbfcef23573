"""``decide``: check a command against the rules and the state, and return the events it produces.

``decide`` is pure but for the dice source it is handed: it reads the state,
asks the source for faces in the order of C29, and returns new events, or
raises a :class:`~omen_core.errors.RuleViolation` naming the rule. One small
handler per command, in a dispatch table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, NamedTuple, get_args

import msgspec

from ..abilities import COST_RANK, attack_weapon
from ..commands import (
    UNDO_COMMANDS,
    AgreeInitiative,
    AnswerActiveDefense,
    AnswerCatch,
    AnswerDecision,
    ApplyConditionCommand,
    BeginAmbush,
    CallSave,
    CancelAction,
    CheckSpec,
    ChooseWillConversion,
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
    LeaveFight,
    Move,
    PassReaction,
    React,
    Redo,
    RevealSeed,
    RollInitiative,
    RollOff,
    RouteDamage,
    StandUp,
    StartFight,
    StaticCheck,
    Undo,
    UseAbility,
    first_field,
)
from ..content import DealDamage
from ..decisions import REACTION_STEPS, point_at, waiting_point
from ..dice import CommandFaces, DiceSource, FacesNeeded, FacesThenSource, RollRequest, ScriptedDice, Stop, SurplusFaces
from ..errors import DiceError, OmenError, RuleViolation, UnknownCombatant
from ..events import (
    ActionCancelled,
    AttackDeclared,
    CommandIssued,
    CostPaid,
    DiceSourceKind,
    Event,
)
from ..extensions import window, windows_at
from ..hooks import Window, amount_of
from ..machine import ORDER, PHASE_ORDER, OutOfPhase, Phase
from ..state import AbilityFrame, AttackFrame, FightState, Frame, MomentFrame, MoveFrame, SaveFrame
from .abilities import ability_actions, pay_after_window, use_ability, use_after_window
from .attack import (
    RESUMES,
    answer_active_defense,
    answer_catch,
    declare,
    declare_attack,
    pay_and_roll,
    route_damage,
)
from .checks import RESUMES as CHECK_RESUMES
from .checks import contest, static_check
from .draft import Draft, not_now
from .flow import (
    MOMENT_RESUMES,
    after_moment,
    agree_initiative,
    begin_ambush,
    disengage,
    draw,
    end_fight,
    end_turn,
    engage,
    leave_fight,
    roll_initiative,
    roll_off,
    settle_the_rounds,
)
from .flow import RESUMES as ROUND_RESUMES
from .reactions import RESUMES as MOVE_RESUMES
from .reactions import (
    close_window,
    finish_move,
    move,
    pass_reaction,
    reaction_window,
    stand_up,
)
from .saves import RESUMES as SAVE_RESUMES
from .saves import call_save, resolve_save
from .setup import apply_condition, clear_condition, join, reveal_seed, start
from .undo import History, Target, redo, undo
from .will import choose_will_conversion
from .windows import RESUMES as SETTLE_RESUMES
from .windows import answer_context, answer_decision, cannot_pay, not_offered, open_window

__all__ = [
    "decide",
    "decided",
    "passed_over_at",
    "dice_needed",
    "probe",
    "face_blind",
    "shut_out",
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
    "ChooseWillConversion",
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
    "StandUp",
    "Disengage",
    "React",
    "PassReaction",
    "AnswerCatch",
    "AnswerDecision",
    "UseAbility",
    "Engage",
    "Draw",
    "LeaveFight",
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
    in progress is answered (or undone) first: calling off the action it reacts to would leave it hanging. A
    moment outside any action (C38) called off leaves its decision points unanswered, and the fight goes on from
    it as it would once they closed (a turn's end ends the turn, a save-ends save's tick goes on: C40)."""
    draft.require("cancel", why="no action is waiting on a window to call off")
    state = draft.state
    assert state.pending is not None
    point = point_at(state.step.name, None)
    if point is not None and not point.cancellable:
        raise RuleViolation(point.rule, f"action {state.pending.action} waits on {point.title}, which cannot be "
                                        "called off: answer it (or end the fight, C33)")
    if len(state.stack) > 1:
        raise RuleViolation("cancel", f"action {state.pending.action} is a reaction to action "
                                      f"{state.stack[-2].action}: finish or undo the reaction first")
    frame = state.pending
    draft.emit(ActionCancelled(action=frame.action, reason=cmd.reason))
    if isinstance(frame, MomentFrame):  # its decision points go unanswered; the turn, the round or the tick goes on
        after_moment(draft, frame.declaration)


def _react(draft: Draft, cmd: React) -> None:
    """Take the reaction the open window offers: a basic melee attack on the acting combatant (C23, C24). One who
    cannot act (C10, C33, C36) is refused that first: no window is ever open to it."""
    draft.able(cmd.who, "react")
    opened = reaction_window(draft, cmd.who)
    rule = "C24" if opened.reaction == "interrupt" else "C23"
    costs = draft.ruleset.reaction_costs
    cost = costs.interrupt if opened.reaction == "interrupt" else costs.attack_of_opportunity
    if draft.combatant(cmd.who).bonus_actions < cost:
        raise RuleViolation("C22", f"{cmd.who!r} needs {amount_of('bonus_action', cost)} for this reaction")
    outer = draft.state.pending
    assert outer is not None
    draft.require("declare", rule=rule, reaction=True)
    declare(draft, DeclareAttack(attacker=cmd.who, target=outer.actor, weapon=cmd.weapon, unarmed=cmd.unarmed,
                                 situational=cmd.situational),  # C26, C27: claimed as for any attack
            reaction=opened.reaction, reacting_to=outer.action)
    pay_and_roll(draft)


def _answer_decision(draft: Draft, cmd: AnswerDecision) -> None:
    """An answer to an extension's decision point (C38); once it closes, the next one due at its hook point is
    offered, or the action goes on from there (:data:`~omen_core.decide.attack.RESUMES`)."""
    hook = answer_decision(draft, cmd)
    if hook is None:
        return
    if _ability_attack(draft, cmd):
        return  # the action goes on from ``hook`` once that attack settles (_carry_on)
    _go_on_from(draft, hook)


#: Every hook point's row: what is known there and how its action goes on (attack, save, move, the round's moments).
_RESUMES = {**RESUMES, **SAVE_RESUMES, **ROUND_RESUMES, **MOVE_RESUMES, **SETTLE_RESUMES, **CHECK_RESUMES}


def passed_over_at(state: FightState, hook: str) -> list[tuple[Window, str, str]]:
    """Whom each decision point due at ``hook`` of the action in progress in ``state`` passes over, and why (C38):
    its trigger names them, and the ability holds them back (its ``when``, its uses, what it could change, C41) or
    they cannot act or pay (:func:`~omen_core.decide.windows.not_offered`). The engine records only the decision
    points that open; explain derives the others from the state the engine decided in, by these same gates.
    Nothing inside a triggered ability's own attack (no decision point opens there)."""
    frame = state.pending
    rows = windows_at(state, hook)
    if frame is None or not rows or not _reached(frame, hook) or (isinstance(frame.declaration, AttackDeclared)
                                                                  and frame.declaration.reaction == "ability"):
        return []
    at_moment = isinstance(frame, MomentFrame) and hook in MOMENT_RESUMES
    known = (MOMENT_RESUMES[hook] if at_moment else _RESUMES[hook])[0]
    moment = known(Draft(state, ScriptedDice([])))  # (what is known there: no die is rolled to say it)
    out: list[tuple[Window, str, str]] = []
    for row in rows:
        out += [(row, who, why) for who in row.responders(state, frame, moment)
                if (why := not_offered(state, who, row)) is not None]
        if row.passed_over is not None:  # the ability's own first reason, or the cost it comes after (C38)
            out += [(row, who, short if rank > COST_RANK and (short := cannot_pay(state, who, row)) else why)
                    for who, why, rank in row.passed_over(state, frame, moment)]
    return out


def _reached(frame: Frame, hook: str) -> bool:
    """Whether ``frame`` holds what its hook point knows (:data:`_RESUMES`' moments): the hit roll at
    ``attack.rolled``, the determination after it, a save's resolution. An action always has them when it
    reaches the hook point; a seat's view of a log with events left out (the engine's own gates judged over what a
    player is shown) may not, and there nothing is judged."""
    if hook == "attack.rolled":
        return isinstance(frame, AttackFrame) and frame.hit_roll is not None
    if hook in ("attack.determined", "attack.damaged"):
        return isinstance(frame, AttackFrame) and frame.determination is not None
    if hook == "save.resolved" and not isinstance(frame, MomentFrame):
        return isinstance(frame, SaveFrame) and frame.resolution is not None
    return True


def _go_on_from(draft: Draft, hook: str) -> None:
    """The next decision point due at ``hook``, or the action goes on from there (a moment outside any action at a
    hook point an action has too, a save-ends save's ``save.resolved``: as that moment goes on)."""
    at_moment = isinstance(draft.state.pending, MomentFrame) and hook in MOMENT_RESUMES
    moment, resume = MOMENT_RESUMES[hook] if at_moment else _RESUMES[hook]
    if not open_window(draft, hook, moment):
        resume(draft)


def _ability_attack(draft: Draft, cmd: AnswerDecision) -> bool:
    """If the choice just made uses an ability that makes an attack (C38), the attack is declared on the other party
    of the action it answers, nested in it, and rolled; True if so."""
    frame = draft.state.pending
    row = window(cmd.decision, draft.state)
    choice = row.choice(cmd.choice) if row is not None else None
    if frame is None or choice is None or choice.attack is None:
        return False
    target = answer_context(frame, cmd.who, choice.label).target
    weapon, unarmed = attack_weapon(draft.state, cmd.who, choice.attack)
    declare(draft, DeclareAttack(attacker=cmd.who, target=target, weapon=weapon, unarmed=unarmed),
            reaction="ability", reacting_to=frame.action)
    pay_and_roll(draft)
    return True


def _carry_on(draft: Draft) -> None:
    """Resume actions whose reaction window can close (everyone answered, or an Interrupt hit, C24), and those
    whose ability's attack has settled (C38: they go on from the hook point they waited at)."""
    while True:
        top = draft.state.pending
        if top is not None and top.resume_at is not None and top.decision is None:
            _go_on_from(draft, top.resume_at)
            continue
        if top is None or top.step.name not in REACTION_STEPS or not top.window_done:
            return
        cut = top.interrupted
        close_window(draft)
        if isinstance(top, MoveFrame):
            finish_move(draft)
        elif cut:
            _spend_and_cancel(draft, top)
        elif isinstance(top, AttackFrame):
            pay_and_roll(draft)
        elif isinstance(top, AbilityFrame):
            use_after_window(draft, top.declaration)  # its costs, then what it does (C24, C37)
        else:
            if isinstance(top, SaveFrame):
                pay_after_window(draft, top.declaration)  # an ability's other costs, after the window (C24)
            resolve_save(draft)


def _spend_and_cancel(draft: Draft, frame: Frame) -> None:
    """C24: an Interrupt hit cancels the declared Action, and its Action is still spent."""
    amount = frame.declaration.effect.action_cost if isinstance(frame, SaveFrame) else \
        ability_actions(draft, frame.declaration) if isinstance(frame, AbilityFrame) else 1
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
    ChooseWillConversion: choose_will_conversion,
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
    StandUp: stand_up,
    Disengage: disengage,
    React: _react,
    PassReaction: pass_reaction,
    AnswerCatch: answer_catch,
    AnswerDecision: _answer_decision,
    UseAbility: use_ability,
    Engage: engage,
    Draw: draw,
    LeaveFight: leave_fight,
    EndFight: end_fight,
    Redo: redo,
}


# The lifecycle trigger the handler of each of these commands requires whatever the command's arguments
# (``Draft.require``): where the step of the innermost action in progress does not take it, every such command is
# refused, so options() need not probe them (a window open, say: no check, save, attack or move can be declared).
_GATES: dict[type, str] = {
    DeclareAttack: "declare",
    CallSave: "declare",
    UseAbility: "declare",
    Move: "declare",
    StandUp: "declare",
    StaticCheck: "roll_check",
    Contest: "roll_check",
    ApplyConditionCommand: "apply_condition",
    ClearConditionCommand: "clear_condition",
    EndTurn: "flow",
    Disengage: "flow",
    LeaveFight: "flow",
}


# The phase trigger the handler of each of these commands requires whatever its arguments (``Draft.require_phase``).
_PHASE_GATES: dict[type, str] = {BeginAmbush: "ambush", RollInitiative: "initiative"}


def shut_out(state: FightState, kind: type) -> bool:
    """Whether the rules refuse every command of type ``kind`` in ``state``, whatever its arguments: its handler
    requires a trigger (:data:`_GATES`) that the innermost action's step does not take, or one
    (:data:`_PHASE_GATES`) that the fight's phase does not."""
    trigger = _GATES.get(kind)
    if trigger is not None and (state.step, trigger) not in ORDER:
        return True
    phase_trigger = _PHASE_GATES.get(kind)
    return phase_trigger is not None and (state.phase, phase_trigger) not in PHASE_ORDER


_PROBE_LIMIT = 200  # rolls one probing run may see: foes tied again and again have shown their dice by then

ProbeFaces = Callable[[int, int, int], int]
"""Which face a probing run gives: from the count of dice so far, the index of the roll, and the die's sides."""

# The faces the probing runs give, each a different way through the rules' branches (hit or miss, crit or not,
# a defense that beats the hit total or not, a tie or not): low and high cycling faces break ties between foes;
# the bottom and top faces take the extreme branches; alternating rolls put one roller high and the next low.
_PROBES: tuple[ProbeFaces, ...] = (
    lambda count, _roll, sides: 1 + (count - 1) % sides,
    lambda count, _roll, sides: sides - (count % sides),
    lambda _count, _roll, _sides: 1,
    lambda _count, _roll, sides: sides,
    lambda _count, roll, sides: sides if roll % 2 == 0 else 1,
    lambda _count, roll, sides: 1 if roll % 2 == 0 else sides,
)


# The commands whose rolls never depend on the faces: the same dice in the same order whatever they show, so one
# probing run finds them all (:func:`probe`). Each type maps to whether one of its commands is such: a check and
# a contest roll one die a side and total them (C1, C2, C16); a save rolls the saver's die, then the caller's
# (C15, C29), and its branches roll no die unless one deals damage (C25: damage dice are rolled on one branch
# only, and damage may open a routing window). Tested: random fights' offers of these roll exactly their dice.
_FACE_BLIND: dict[type, Callable[[Any], bool]] = {
    StaticCheck: lambda _cmd: True,
    Contest: lambda _cmd: True,
    CallSave: lambda cmd: not any(isinstance(c, DealDamage) for c in (*cmd.effect.on_success,
                                                                       *cmd.effect.on_failure)),
}


def face_blind(command: Command) -> bool:
    """Whether ``command`` rolls the same dice whatever their faces (:data:`_FACE_BLIND`)."""
    blind = _FACE_BLIND.get(type(command))
    return blind is not None and blind(command)


class _Probe:
    """A dice source that answers every roll with the faces of one of :data:`_PROBES` and notes it: how
    :func:`probe` finds the dice a command rolls. ``lead``: faces a command was given, which its first dice take
    before the probing faces do (each where it fits its die: one that does not is the probing face)."""

    kind: DiceSourceKind = "manual"
    carried = True

    def __init__(self, faces: ProbeFaces, lead: Sequence[int] = ()):
        self.pick, self.count, self.lead = faces, 0, tuple(lead)
        self.requests: list[RollRequest] = []
        self.given: list[int] = []

    def faces(self, request: RollRequest) -> list[int]:
        if len(self.requests) >= _PROBE_LIMIT:
            raise DiceError("the probe stops here")
        roll, pick, count, lead = len(self.requests), self.pick, self.count, self.lead
        self.requests.append(request)
        faces = []
        for _tag, sides in request.pool:
            count += 1
            led = lead[count - 1] if count <= len(lead) else 0
            faces.append(led if type(led) is int and 1 <= led <= sides else pick(count, roll, sides))
        self.count = count
        self.given.extend(faces)
        return faces

    def checkpoint(self) -> object:
        return None

    def restore(self, mark: object) -> None:
        return None


def _gives(pick: ProbeFaces, run: _Probe) -> bool:
    """Whether ``pick`` gives the dice of ``run`` (die by die, in order) the faces it was given, stopping at the
    first that differs (the dice its lead faces went to are the same in every run with that lead)."""
    count, given, lead = 0, run.given, run.lead
    for number, request in enumerate(run.requests):
        for _tag, sides in request.pool:
            led = count < len(lead) and given[count] == lead[count]
            if not led and pick(count + 1, number, sides) != given[count]:
                return False
            count += 1
    return True


def _same_roll(a: RollRequest, b: RollRequest) -> bool:
    return (a.roller, a.purpose, a.pool) == (b.roller, b.purpose, b.pool)


def _common_prefix(runs: Sequence[Sequence[RollRequest]]) -> int:
    n = 0
    while all(n < len(run) for run in runs) and all(_same_roll(runs[0][n], run[n]) for run in runs):
        n += 1
    return n


def _merged(runs: Iterable[Sequence[RollRequest]], endless: Sequence[bool] = ()) -> list[RollRequest]:
    """The rolls of several runs, each once, in an order that keeps each run's own (C29: the order the engine rolls
    them): a roll a later run adds goes right after the roll that comes before it in that run. Three allies tied for
    initiative roll off in the order they joined (ash, cara, bo) whichever two of them a run found tied first. A
    roll a run makes twice is listed twice (two primary dice showing 1, each rerolled by Lucky Strikes: C39)."""
    found: list[RollRequest] = []
    for index, run in enumerate(runs):
        at = 0  # where the next new roll of this run goes: after the last of its rolls already found
        used = [False] * len(found)  # a roll found stands for one roll of this run: a run rolling one twice (two
        # primary 1s each rerolled, C39) needs it found twice; but a run the probe cut short (``endless``: foes
        # tied again and again, :data:`_PROBE_LIMIT`) repeats a roll without end, and each of its rolls is listed once
        once = index < len(endless) and endless[index]
        for request in run:
            same = next((i for i, other in enumerate(found) if (once or not used[i]) and _same_roll(request, other)),
                        None)
            if same is None:
                found.insert(at, request)
                used.insert(at, True)
                at += 1
            else:
                used[same] = True
                at = max(at, same + 1)
    return found


def _new_rolls(requests: Iterable[RollRequest], known: Sequence[RollRequest]) -> list[RollRequest]:
    """``requests`` with those like one in ``known`` (or earlier in ``requests``) left out, in order."""
    found: list[RollRequest] = []
    for request in requests:
        if not any(_same_roll(request, other) for other in (*known, *found)):
            found.append(request)
    return found


def probe(state: FightState, command: Command, history: History | None = None, lead: Sequence[int] = ()
          ) -> tuple[bool, list[RollRequest], list[RollRequest]]:
    """Whether the rules accept ``command`` in ``state``, and the dice it rolls, in C29 order: those it rolls
    whatever the faces, and those it may roll as well, depending on them (a hit's damage dice, say). Found by
    deciding it with probing dice (:data:`_PROBES`: cycling, bottom, top and alternating faces), setting aside
    the faces it carries, if any: the dice every run rolls, in the same order, are rolled whatever the faces;
    the others, once each, may be. The first run says whether the rules accept it; a command that rolls no die
    there rolls none whatever the faces, and is decided once, as is one that rolls the same dice whatever the
    faces (:func:`face_blind`: a check, a contest, a save dealing no damage); a probe that would give the dice
    of a run already made the same faces is not run again (a single d20 initiative roll is decided three times,
    not six).

    ``lead``: faces already given (too few, :func:`decided`): every run's first dice take them, then the probing
    faces, so the dice certain are those certain as these faces fall (two initiative faces that tie two
    combatants make both their roll-off dice certain, C19, C29), and the first dice listed are those they went
    to."""
    bare = command if command.dice is None else msgspec.structs.replace(command, dice=None)
    runs: list[list[RollRequest]] = []
    done: list[_Probe] = []
    for faces in _PROBES:
        if any(_gives(faces, run) for run in done):
            continue  # it would give a run already made the same faces: decide is a function, the same run
        dice = _Probe(faces, lead)
        done.append(dice)
        try:
            _decided(state, bare, dice, history, "")
        except OmenError:
            if not runs and len(dice.requests) < _PROBE_LIMIT:
                return False, [], []
        runs.append(dice.requests)
        if not runs[0] or face_blind(bare):
            break
    n = _common_prefix(runs)
    return True, runs[0][:n], _merged([run[n:] for run in runs], [len(run) >= _PROBE_LIMIT for run in runs])
def dice_needed(state: FightState, command: Command, history: History | None = None, lead: Sequence[int] = ()
                ) -> tuple[list[RollRequest], list[RollRequest]]:
    """The dice ``command`` rolls in ``state`` (see :func:`probe`, and its ``lead``: the faces already given);
    ``([], [])`` if the command is refused."""
    _ok, certain, maybe = probe(state, command, history, lead)
    return certain, maybe


def decide(state: FightState, command: Command, dice: DiceSource, history: History | None = None,
           by: str = "") -> list[Event]:
    """The events ``command`` produces in ``state``, rolling with ``dice``; raises if it breaks a rule.

    The batch opens with a ``command_issued`` event recording ``command`` (and
    ``by``, who gave it), but for the set-up commands that are their own record.
    An undo back to a chosen seq asks ``history`` about it (:class:`History`).
    """
    return decided(state, command, dice, history, by).events


def decided(state: FightState, command: Command, dice: DiceSource, history: History | None = None,
            by: str = "", then_roll: bool = False, typed: Callable[[RollRequest], bool] | None = None) -> Draft:
    """:func:`decide`, returning the whole :class:`Draft`: its events and the state they lead to (each event
    folded once, as it was emitted; an undo or redo marker is not folded: the walk applies it).

    A command that carries its faces (``dice``) rolls those, not ``dice``
    (recorded as manual, or scripted in a scripted fight): more faces than it
    rolls is :class:`~omen_core.dice.SurplusFaces`, fewer is
    :class:`~omen_core.dice.FacesNeeded`, naming every die to roll. A source
    that cannot roll (physical dice and no faces given) is FacesNeeded too.
    ``then_roll``: the dice after the command's faces roll from ``dice``
    (:class:`~omen_core.dice.FacesThenSource`: a player's own faces in a
    seeded fight, the others' dice the fight's). ``typed``: which rolls take
    the command's faces, the others rolling from ``dice`` before and after
    them (the rolls of combatants whose dice are physical in a seeded fight;
    too few faces for them is FacesNeeded naming those rolls alone).

    The boundary of extension code: what an extension's callable raises (or
    answers wrongly) is :class:`~omen_core.hooks.ExtensionFailed`, naming
    the extension, its module and the row (:mod:`omen_core.hooks`).
    """
    try:
        return _decided_command(state, command, dice, history, by, then_roll, typed)
    except UnknownCombatant as unknown:
        if "field" not in unknown.facts:  # the refusal names the field holding the unknown id (the first one)
            field = field_holding(command, unknown.combatant)
            if field is not None:
                unknown.facts["field"] = field
        raise


def field_holding(command: Command, value: str) -> str | None:
    """The path of the first field of ``command`` holding ``value`` (``$.who``, ``$.others[1]``,
    ``$.initiator.who``), in the command's field order; None if none does."""
    return first_field(command, lambda held: "" if isinstance(held, str) and held == value else None)


def _decided_command(state: FightState, command: Command, dice: DiceSource, history: History | None, by: str,
                     then_roll: bool, typed: Callable[[RollRequest], bool] | None) -> Draft:
    """:func:`decided`, at the boundary of extension code."""
    from ..hooks import extension_boundary  # here: this function is the boundary, and owns its import

    with extension_boundary():
        if typed is not None:
            given = command.dice or ()
            split = FacesThenSource(CommandFaces(given, "scripted" if state.dice_mode == "scripted" else "manual"),
                                    dice, typed)
            draft = _decided(state, command, split, history, by)  # FacesNeeded names the typed rolls alone
            if split.surplus:
                raise SurplusFaces(split.requests, len(given), _stops_at(draft.state), physical=True)
            return draft
        if command.dice is not None:
            carried = CommandFaces(command.dice, "scripted" if state.dice_mode == "scripted" else "manual")
            faces: CommandFaces | FacesThenSource = FacesThenSource(carried, dice) if then_roll else carried
            try:
                draft = _decided(state, command, faces, history, by)
            except FacesNeeded as short:  # too few: name every die still to roll, not only up to the first missing
                if short.whole:  # faces then the seed: they stopped inside a roll (said as such, the rest the seed's)
                    raise
                raise _still_to_roll(short.needed, len(command.dice),
                                     *dice_needed(state, command, history, command.dice)) from None
            if faces.surplus:
                raise SurplusFaces(faces.requests, len(command.dice), _stops_at(draft.state))
            return draft
        try:
            return _decided(state, command, dice, history, by)
        except FacesNeeded:
            certain, maybe = dice_needed(state, command, history)
            raise FacesNeeded(certain, 0, maybe) from None


def _stops_at(state: FightState) -> Stop | None:
    """The decision a command's events leave the fight waiting at (:class:`Stop`), or None."""
    found = waiting_point(state)
    if found is None:
        return None
    point, who, _action = found
    answers = tuple(dict.fromkeys(str(a.command.__struct_config__.tag) for a in point.answers))
    title = point.title.removeprefix("an ").removeprefix("a ").removeprefix("the ")  # "an initiative tie among..."
    return Stop(title, point.rule, tuple(who), answers)


def _still_to_roll(path: list[RollRequest], given: int, certain: list[RollRequest], maybe: list[RollRequest]
                   ) -> FacesNeeded:
    """Too few faces: the rolls the faces given led to (up to the first that found none), then the dice the
    command rolls beyond them whatever the faces still to give (``certain``, probed from the faces given), then
    those it may roll besides."""
    n = _common_prefix((path, certain))
    needed = path + certain[len(path):] if n == len(path) else path
    return FacesNeeded(needed, given, _new_rolls(maybe, needed))


class _Kind(NamedTuple):
    """What ``_decided`` asks of a command's type, read once per type: its tag, its handler, and whether it
    starts the fight, may come after the end (the seed, undo and redo), is its own record, is an undo or redo."""

    tag: str
    handler: Callable[[Draft, Any], None] | None
    starts: bool
    after_end: bool
    self_recording: bool
    undo: bool
    undo_batch: bool


def _kind(kind: type) -> _Kind:
    return _Kind(tag=str(kind.__struct_config__.tag), handler=_HANDLERS.get(kind),  # type: ignore[attr-defined]
                 starts=issubclass(kind, StartFight), after_end=issubclass(kind, (RevealSeed, *UNDO_COMMANDS)),
                 self_recording=issubclass(kind, SELF_RECORDING), undo=issubclass(kind, Undo),
                 undo_batch=issubclass(kind, UNDO_COMMANDS))


#: What decide reads of each command type, built once at import (an immutable table: no cache filled at run time).
_KINDS: Mapping[type, _Kind] = MappingProxyType({kind: _kind(kind) for kind in get_args(Command)})


def _decided(state: FightState, command: Command, dice: DiceSource, history: History | None, by: str) -> Draft:
    kind = _KINDS.get(type(command))
    if kind is None:  # a subclass of a command type: read as it comes
        kind = _kind(type(command))
    if not kind.starts and not state.started:
        raise RuleViolation("setup", "the fight has not started: start it first")
    if state.ending is not None and not kind.after_end:
        raise OutOfPhase(Phase.ENDED, "act", without=not_now(state))
    draft = Draft(state, dice)
    draft.command = kind.tag
    if not kind.self_recording:
        draft.emit(CommandIssued(command=command, by=by))
    if kind.undo:
        undo(draft, command, history)  # type: ignore[arg-type]
        return draft
    if kind.handler is None:
        raise KeyError(type(command))
    kind.handler(draft, command)
    if not kind.undo_batch:
        _carry_on(draft)
        settle_the_rounds(draft)
    return draft
