"""The action-lifecycle state machine: states, the transition table, and the order check replay uses.

One ``transitions`` machine, declared as data (an Enum of steps and a
module-level transition table, ``auto_transitions=False``), is the single
source of truth for the order of events within an action (combat.txt §How a
Single Action Resolves, §Resolving an Attack, §Resolving a Save):

    declared → costs paid → hit rolled → base defense rolled
      → Active Defense window (open → chosen → paid → rolled, or declined; or skipped)
      → hit and crit determined → [Rogue routing window] → [Will conversion choice] → damage resolved
      → settled

and for a save: declared → [costs paid] → saver rolled → opposing rolled →
save resolved → consequences → settled; plus the paths of a cancelled action.

Every event maps to a trigger (:func:`trigger_of`). The machine is built
once, and :data:`ORDER`, a table *derived* from it, is what live play and
replay look each event up in (a ``transitions`` trigger costs ~10 µs, a look-up
a fraction of that); the machine stays the single source of truth. Events of
:data:`UNORDERED` types are outside every lifecycle and phase.

>>> lifecycle = Lifecycle()
>>> lifecycle.fire("declare")
<Step.DECLARED: 'declared'>
>>> lifecycle.legal()
['cancel', 'decide', 'open_reactions', 'pay', 'roll_save']
"""

from __future__ import annotations

from enum import Enum
from types import MappingProxyType
from typing import Any

from transitions import Machine, MachineError

from .decisions import transitions as decision_transitions
from .errors import RuleViolation
from .events import (
    EVENT_TYPES,
    AbilityUsed,
    ActionCancelled,
    ActionSettled,
    ActiveDefenseChosen,
    ActiveDefenseDeclined,
    ActiveDefenseWindowOpened,
    ActiveDefenseWindowSkipped,
    AmbushDifficultySet,
    AmbushStarted,
    AttackDeclared,
    BonusActionsRefilled,
    CatchAnswered,
    CatchWindowOpened,
    CombatantJoined,
    CombatantLeft,
    CommandIssued,
    ConditionApplied,
    ConditionCleared,
    ConditionTicked,
    ContestResolved,
    CostPaid,
    DamageResolved,
    DamageRouted,
    DecisionAnswered,
    DecisionClosed,
    DecisionOpened,
    DiceRolled,
    DiceSourceChanged,
    Disengaged,
    EngagementChanged,
    Event,
    FightEnded,
    FightStarted,
    HitDetermined,
    InitiativeAgreed,
    InitiativeOrderSet,
    InitiativeRolled,
    InitiativeRollOff,
    InitiativeTied,
    MomentReached,
    Moved,
    MovementDeclared,
    ReactionPassed,
    ReactionWindowClosed,
    ReactionWindowOpened,
    Redone,
    ResourceChanged,
    RoundEnded,
    RoundStarted,
    RoutingWindowOpened,
    SaveCalled,
    SaveResolved,
    SeedCommitted,
    SeedRevealed,
    StaticCheckResolved,
    SurpriseDetermined,
    TurnEnded,
    TurnSkipped,
    TurnStarted,
    Undone,
    WeaponDrawn,
    WillConversionChosen,
    WillConversionOffered,
)

__all__ = ["Step", "UNORDERED", "AT_REST", "DONE", "TRANSITIONS", "ORDER", "Lifecycle", "IllegalOrder", "trigger_of",
           "action_of", "Phase", "PHASE_TRANSITIONS", "PHASE_ORDER", "FightFlow", "OutOfPhase",
           "phase_trigger_of", "phase_trigger_for", "trigger_for", "next_phase",
           "legal_triggers", "next_step", "mermaid"]


class Step(Enum):
    """Where the current action stands; the three rest steps accept a new action."""

    __hash__ = object.__hash__  # the order tables are keyed by steps: keep hashing in C

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
    WILL_CHOICE_OPEN = "Will conversion choice open"
    WILL_CHOSEN = "Will conversion chosen"
    SAVER_ROLLED = "saver rolled"
    OPPOSING_ROLLED = "opposing die rolled"
    SAVE_RESOLVED = "save resolved"
    REACTIONS_OPEN = "reaction window open"
    REACTIONS_CLOSED = "reaction window closed"
    CATCH_OPEN = "Catch window open"
    CAUGHT = "caught"
    CATCH_PAID = "Catch paid"
    MOVE_RESOLVED = "movement completed"
    ABILITY_USED = "ability used"
    ABILITY_REACTIONS_OPEN = "reaction window open before an ability's costs"
    MOMENT = "moment reached"
    SETTLED = "settled"
    CANCELLED = "cancelled"


#: Events outside every action's lifecycle and the fight's phases: the command that opens a batch, a change of
#: dice source, and the undo markers (which the walk applies). They may come at any step, in any phase.
UNORDERED = (CommandIssued, DiceSourceChanged, Undone, Redone)

S = Step
AT_REST = (S.IDLE, S.SETTLED, S.CANCELLED)
#: The triggers that begin an action: a declaration (an attack, a save, a move), an ability used on one's turn
#: (C37), a moment of the round that abilities answer (C38).
OPENING = ("declare", "use", "reach")
DONE = (S.SETTLED, S.CANCELLED)
_CONSEQUENCES = [S.HIT_DETERMINED, S.DAMAGE_RESOLVED, S.SAVE_RESOLVED, S.ABILITY_USED, S.MOMENT, S.MOVE_RESOLVED]
#: The steps where paying a cost moves the lifecycle on (the declared action's cost, an Active Defense's, a Catch's)
_PAYING = (S.DECLARED, S.REACTIONS_CLOSED, S.DEFENSE_CHOSEN, S.CAUGHT)

def _steps_named(row: dict[str, Any]) -> dict[str, Any]:
    """A transition row whose steps are given by name (as :mod:`omen_core.decisions` declares them), as steps."""
    def step(value: Any) -> Any:
        if isinstance(value, list):
            return [Step[name] for name in value]
        return Step[value] if value in Step.__members__ else value

    return {key: step(value) if key in ("source", "dest") else value for key, value in row.items()}


#: The transition table: one row per (trigger, sources, destination); "=" keeps the step.
TRANSITIONS: list[dict[str, Any]] = [
    # outside any action: set-up, the fight's flow (ambush, initiative, turns), GM commands, checks
    {"trigger": "setup", "source": list(AT_REST), "dest": "="},
    {"trigger": "flow", "source": list(AT_REST), "dest": "="},
    {"trigger": "roll_check", "source": list(AT_REST), "dest": "="},
    {"trigger": "resolve_check", "source": list(AT_REST), "dest": "="},
    # a condition taking effect at its timing, outside any action (C25, C40): its damage, its save
    {"trigger": "tick", "source": list(AT_REST), "dest": "="},
    # declaration and costs
    {"trigger": "declare", "source": list(AT_REST), "dest": S.DECLARED},
    {"trigger": "pay", "source": [S.DECLARED, S.REACTIONS_CLOSED], "dest": S.COSTS_PAID},
    {"trigger": "cancel", "source": [S.DECLARED, S.COSTS_PAID], "dest": S.CANCELLED},
    # an ability used on one's turn (C37): its costs, then its effects as consequences (below)
    {"trigger": "use", "source": list(AT_REST), "dest": S.ABILITY_USED},
    # a moment of the round that abilities answer (C38): its decision points, then its consequences (below)
    {"trigger": "reach", "source": list(AT_REST), "dest": S.MOMENT},
    # a movement
    {"trigger": "resolve_move", "source": [S.COSTS_PAID, S.REACTIONS_CLOSED], "dest": S.MOVE_RESOLVED},
    # an attack: hit roll, base defense, the Active Defense window, hit and crit
    {"trigger": "roll_hit", "source": S.COSTS_PAID, "dest": S.HIT_ROLLED},
    {"trigger": "roll_base_defense", "source": S.HIT_ROLLED, "dest": S.BASE_DEFENSE_ROLLED},
    # a reroll of a hit-pool die (C39): automatic right after the hit roll, or chosen once the dice are seen
    {"trigger": "reroll", "source": [S.HIT_ROLLED, S.BASE_DEFENSE_ROLLED], "dest": "="},
    {"trigger": "skip_window", "source": [S.HIT_ROLLED, S.BASE_DEFENSE_ROLLED], "dest": S.WINDOW_CLOSED},
    {"trigger": "pay", "source": S.DEFENSE_CHOSEN, "dest": S.DEFENSE_PAID},
    {"trigger": "roll_active_defense", "source": S.DEFENSE_PAID, "dest": S.WINDOW_CLOSED},
    {"trigger": "determine_hit", "source": S.WINDOW_CLOSED, "dest": S.HIT_DETERMINED},
    {"trigger": "pay", "source": S.CAUGHT, "dest": S.CATCH_PAID},
    # a save
    {"trigger": "roll_save", "source": [S.DECLARED, S.COSTS_PAID], "dest": S.SAVER_ROLLED},
    {"trigger": "roll_save", "source": S.SAVER_ROLLED, "dest": S.OPPOSING_ROLLED},
    {"trigger": "resolve_save", "source": S.OPPOSING_ROLLED, "dest": S.SAVE_RESOLVED},
    # consequences, in written order (C25), then settling
    {"trigger": "roll_damage", "source": _CONSEQUENCES, "dest": "="},
    {"trigger": "resolve_damage", "source": [*_CONSEQUENCES, S.WILL_CHOSEN], "dest": S.DAMAGE_RESOLVED},
    {"trigger": "change_resource", "source": [*_CONSEQUENCES, *AT_REST], "dest": "="},
    {"trigger": "apply_condition", "source": [*_CONSEQUENCES, S.CATCH_PAID, *AT_REST], "dest": "="},
    {"trigger": "clear_condition", "source": [*_CONSEQUENCES, S.CATCH_PAID, *AT_REST], "dest": "="},
    {"trigger": "settle", "source": [*_CONSEQUENCES, S.CATCH_PAID], "dest": S.SETTLED},
    # an attack an ability's answer makes on the other party (C38), nested in the action it answers
    {"trigger": "nest", "source": _CONSEQUENCES, "dest": "="},
    # the decision points extensions declare (omen_core.hooks): opened at a hook point inside an action, answered
    # and closed there; the step stays (the action goes on from the hook point when the decision closes)
    {"trigger": "decide", "source": [s for s in Step if s not in AT_REST], "dest": "="},
    # an action waiting on such a decision may be called off, as at any window (the GM's cancel, ending the fight)
    {"trigger": "cancel", "source": [s for s in Step if s not in AT_REST], "dest": S.CANCELLED},
    # a cost paid anywhere else inside an action (an answer to an extension's decision point) leaves the step
    {"trigger": "pay", "source": [s for s in Step if s not in (*AT_REST, *_PAYING)], "dest": "="},
    # the windows where the action waits for a choice (Active Defense, Interrupt, Attack of Opportunity,
    # Catch, routing, Will conversion): declared once, with who answers them and how, in omen_core.decisions
    *(_steps_named(row) for row in decision_transitions()),
]


class IllegalOrder(RuleViolation):
    """A command or event that does not fit the current step; names the step and the legal next steps.

    ``step``: the action's step now; ``trigger`` and ``legal``: the lifecycle machine's own words, the transition
    tried and those it takes from here (``decide``, ``pay``: an event's place in the lifecycle, what an audit of a
    log names); ``legal_now``: for a refused command, what is accepted now in command words, as ``options()`` says
    them (``answer_active_defense by vesh (Active Defense, C8)``), None for an event out of place."""

    def __init__(self, step: Step, trigger: str, legal: list[str], seq: int | None = None,
                 rule: str = "lifecycle", why: str = "", command: str = "", legal_now: list[str] | None = None):
        self.step, self.trigger, self.legal, self.seq, self.why = step, trigger, legal, seq, why
        self.legal_now = legal_now
        where = f"seq {seq}: " if seq is not None else ""
        why = f"{why}; " if why else ""
        if legal_now is not None:  # a command refused: say it in command words, as options() does
            super().__init__(rule, f"{why}{command or 'this command'} is not accepted now: the action is at "
                                   f"'{step.value}'; legal now: {'; '.join(legal_now)}")
            return
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


def _derive(machine: Machine, states: type[Enum]) -> MappingProxyType[tuple[Any, str], Any]:
    """The (state, trigger) → next state table, read off a built machine: the machine stays the source of truth."""
    table: dict[tuple[Any, str], Any] = {}
    for name, event in machine.events.items():
        for source, transitions in event.transitions.items():
            table[(states[source], name)] = states[transitions[0].dest or source]
    return MappingProxyType(table)


#: The order table for replay: ``ORDER[(step, trigger)]`` is the next step.
ORDER: MappingProxyType[tuple[Step, str], Step] = _derive(Lifecycle().machine, Step)


# -- the fight's phases ---------------------------------------------------------------------


class Phase(Enum):
    """The phases of a fight (combat.txt: setup, ambush, initiative, rounds of turns, the end)."""

    __hash__ = object.__hash__  # as for Step

    SETUP = "setup"
    AMBUSH = "ambush"
    INITIATIVE = "initiative"
    ROUNDS = "rounds"
    ENDED = "ended"


P = Phase
_LIVE = [P.SETUP, P.AMBUSH, P.INITIATIVE, P.ROUNDS]

#: The phase table. In SETUP the GM may also resolve single actions outside any turn structure
#: (to settle a roll, or test a build); from the ambush on, the structure is enforced.
PHASE_TRANSITIONS: list[dict[str, Any]] = [
    {"trigger": "setup", "source": P.SETUP, "dest": "="},
    {"trigger": "ambush", "source": P.SETUP, "dest": P.AMBUSH},
    {"trigger": "ambush_roll", "source": P.AMBUSH, "dest": "="},
    {"trigger": "initiative", "source": [P.SETUP, P.AMBUSH, P.INITIATIVE], "dest": P.INITIATIVE},
    {"trigger": "round", "source": [P.INITIATIVE, P.ROUNDS], "dest": P.ROUNDS},
    {"trigger": "turn", "source": P.ROUNDS, "dest": "="},
    {"trigger": "act", "source": [P.SETUP, P.ROUNDS], "dest": "="},
    {"trigger": "gm", "source": _LIVE, "dest": "="},
    {"trigger": "draw", "source": [P.SETUP, P.AMBUSH, P.ROUNDS], "dest": "="},
    {"trigger": "reveal", "source": [*_LIVE, P.ENDED], "dest": "="},
    {"trigger": "end", "source": _LIVE, "dest": P.ENDED},
]


class FightFlow:
    """The fight's phase machine, a ``transitions`` machine built from :data:`PHASE_TRANSITIONS`."""

    def __init__(self, phase: Phase = Phase.SETUP):
        self.machine = Machine(model=self, states=Phase, transitions=PHASE_TRANSITIONS, initial=phase,
                               auto_transitions=False, model_attribute="phase")
        self.phase: Phase

    def legal(self) -> list[str]:
        """The triggers legal in the current phase, sorted."""
        return sorted(self.machine.get_triggers(self.phase.name))


#: The phase table for replay: ``PHASE_ORDER[(phase, trigger)]`` is the next phase.
PHASE_ORDER: MappingProxyType[tuple[Phase, str], Phase] = _derive(FightFlow().machine, Phase)


class OutOfPhase(RuleViolation):
    """An event or command that does not belong in the current phase; names the phase and what is legal (but the
    triggers ``without`` names: revealing a seed in a fight that has none to reveal; ``"undo"``: nothing can be
    undone or redone, C42)."""

    def __init__(self, phase: Phase, trigger: str, seq: int | None = None, without: tuple[str, ...] = (),
                 waiting: list[str] | None = None):
        self.phase, self.trigger, self.seq = phase, trigger, seq
        legal = [t for t in _LEGAL_PHASE_TRIGGERS[phase] if t not in without]
        where = f"seq {seq}: " if seq is not None else ""
        over = "the fight has ended: " if phase.value == "ended" else ""
        now = ("; ".join(waiting) if waiting  # a decision waits (an initiative tie among allies): its answers
               else f"{', '.join(_PHASE_VERBS[t] for t in legal) or 'nothing'}"
               f"{'' if seq is not None or 'undo' in without else '; undo and redo at any time'}")
        super().__init__("phase", f"{where}{over}cannot {_PHASE_VERBS.get(trigger, trigger)} in the {phase.value} "
                                  f"phase; legal now: {now}")


_PHASE_VERBS = {"setup": "set up (start, join)", "ambush": "start an ambush", "ambush_roll": "roll for the ambush",
                "initiative": "roll initiative", "round": "start a round", "turn": "take or end turns",
                "act": "act (attack, save, check, move)", "gm": "state positions, conditions or resources",
                "draw": "draw a weapon", "reveal": "reveal the seed", "end": "end the fight"}

_PHASE_PURPOSES = {"stealth": "ambush_roll", "perception": "ambush_roll", "initiative": "initiative",
                   "roll_off": "initiative"}
_PHASE_TRIGGERS: dict[type, str] = {
    FightStarted: "setup", CombatantJoined: "setup", AmbushStarted: "ambush",
    AmbushDifficultySet: "ambush_roll", SurpriseDetermined: "ambush_roll",
    **dict.fromkeys((InitiativeRolled, InitiativeTied, InitiativeRollOff, InitiativeAgreed, InitiativeOrderSet),
                    "initiative"),
    RoundStarted: "round",
    **dict.fromkeys((RoundEnded, TurnStarted, TurnSkipped, TurnEnded, BonusActionsRefilled, ConditionTicked), "turn"),
    WeaponDrawn: "draw", EngagementChanged: "gm", CombatantLeft: "gm", SeedRevealed: "reveal",
    SeedCommitted: "reveal", FightEnded: "end",
}


def mermaid(table: MappingProxyType[tuple[Any, str], Any] | None = None) -> str:
    """A machine as a Mermaid state diagram, generated from its derived table so it cannot drift.

    ``table`` is :data:`ORDER` (the action lifecycle, the default) or :data:`PHASE_ORDER`.
    """
    table = ORDER if table is None else table
    kind: Any = type(next(iter(table))[0])
    states: list[Enum] = list(kind)
    lines = ["stateDiagram-v2", f"    [*] --> {states[0].name}"]
    rank = states
    for (source, trigger), dest in sorted(table.items(), key=lambda kv: (rank.index(kv[0][0]), kv[0][1])):
        if source is not dest:
            lines.append(f"    {source.name} --> {dest.name}: {trigger}")
    loops: dict[Enum, list[str]] = {}
    for (source, trigger), dest in table.items():
        if source is dest:
            loops.setdefault(source, []).append(trigger)
    for state in states:
        label = state.value + (f" (also: {', '.join(sorted(loops[state]))})" if state in loops else "")
        lines.append(f"    {state.name}: {label}")
    return "\n".join(lines) + "\n"


def phase_trigger_of(event: Event) -> str:
    """The phase trigger an event fires: its place in the fight's flow (not for :data:`UNORDERED` events)."""
    return phase_trigger_for(type(event), event)


_GM_WITHOUT_ACTION = (ConditionApplied, ConditionCleared, ResourceChanged)
#: A condition's damage and save at its timing (C40) are rolled and resolved outside any action (``action`` None).
_TICK_PURPOSES = ("damage", "save")
_TICK_RESULTS = (DamageResolved, SaveResolved)


def phase_trigger_for(kind: type, fields: Any) -> str:
    """The phase trigger of an event of type ``kind`` whose fields ``fields`` has (the event itself, or a
    partial decode of it: the walk's skimming passes one, so only a roll's ``purpose`` and ``action`` are read).
    ``KeyError`` for an :data:`UNORDERED` type, which has none."""
    if kind in UNORDERED:
        raise KeyError(kind)
    if kind is DiceRolled:
        if fields.action is None and fields.purpose in _TICK_PURPOSES:
            return "turn"
        return _PHASE_PURPOSES.get(fields.purpose, "act")
    if kind in _GM_WITHOUT_ACTION and fields.action is None:
        return "gm"
    if kind in _TICK_RESULTS and fields.action is None:
        return "turn"
    return _PHASE_TRIGGERS.get(kind, "act")


def next_phase(phase: Phase, event: Event, seq: int | None = None) -> Phase:
    """The phase after ``event``; :class:`OutOfPhase` if the event does not belong in ``phase``."""
    trigger = _PHASE_TRIGGER_OF_TYPE.get(type(event)) or phase_trigger_of(event)
    try:
        return _PHASE_NEXT[(phase, trigger)]
    except KeyError:
        raise OutOfPhase(phase, trigger, seq) from None


def legal_triggers(step: Step) -> list[str]:
    """The triggers legal from ``step``, from the derived table."""
    return list(_LEGAL_TRIGGERS[step])


def next_step(step: Step, event: Event, seq: int | None = None, trigger: str | None = None) -> Step:
    """The step after ``event`` (fired as ``trigger``, by default its own); :class:`IllegalOrder` if it cannot
    come now."""
    trigger = trigger or trigger_of(event)
    try:
        return _ORDER[(step, trigger)]
    except KeyError:
        raise IllegalOrder(step, trigger, legal_triggers(step), seq) from None


_PURPOSE_TRIGGER = {"hit": "roll_hit", "base_defense": "roll_base_defense",
                    "active_defense": "roll_active_defense", "damage": "roll_damage", "save": "roll_save",
                    "ability_damage": "roll_damage", "healing": "roll_damage", "reroll": "reroll"}

_TRIGGERS: dict[type, str] = {
    FightStarted: "setup", CombatantJoined: "setup", SeedRevealed: "setup", SeedCommitted: "setup",
    StaticCheckResolved: "resolve_check", ContestResolved: "resolve_check",
    AttackDeclared: "declare", SaveCalled: "declare", CostPaid: "pay",
    ActiveDefenseWindowOpened: "open_window", ActiveDefenseWindowSkipped: "skip_window",
    ActiveDefenseChosen: "choose_defense", ActiveDefenseDeclined: "decline",
    HitDetermined: "determine_hit", RoutingWindowOpened: "open_routing", DamageRouted: "route",
    WillConversionOffered: "offer_will_conversion", WillConversionChosen: "choose_will_conversion",
    SaveResolved: "resolve_save", DamageResolved: "resolve_damage", ResourceChanged: "change_resource",
    ConditionApplied: "apply_condition", ConditionCleared: "clear_condition",
    ActionSettled: "settle", ActionCancelled: "cancel",
    MovementDeclared: "declare", Moved: "resolve_move", AbilityUsed: "use", MomentReached: "reach",
    ReactionWindowOpened: "open_reactions", ReactionPassed: "pass_reaction",
    ReactionWindowClosed: "close_reactions", CatchWindowOpened: "open_catch",
    DecisionOpened: "decide", DecisionAnswered: "decide", DecisionClosed: "decide",
    **dict.fromkeys((AmbushStarted, AmbushDifficultySet, SurpriseDetermined, InitiativeRolled, InitiativeTied,
                     InitiativeRollOff, InitiativeAgreed, InitiativeOrderSet, RoundStarted, RoundEnded, TurnStarted,
                     TurnSkipped, TurnEnded, BonusActionsRefilled, ConditionTicked, EngagementChanged, WeaponDrawn,
                     Disengaged, CombatantLeft, FightEnded), "flow"),
}


def trigger_of(event: Event) -> str:
    """The lifecycle trigger an event fires."""
    return _TRIGGER_OF_TYPE.get(type(event)) or trigger_for(type(event), event)


def trigger_for(kind: type, fields: Any) -> str:
    """The lifecycle trigger of an event of type ``kind`` whose fields ``fields`` has (the event itself, or a
    partial decode of it, as for :func:`phase_trigger_for`: only a roll's ``purpose`` and a Catch's ``caught``
    are read). ``KeyError`` for a type no trigger is defined for."""
    if kind is DiceRolled:
        if fields.action is None and fields.purpose in _TICK_PURPOSES:
            return "tick"
        return _PURPOSE_TRIGGER.get(fields.purpose, "roll_check")
    if kind in _TICK_RESULTS and fields.action is None:
        return "tick"
    if kind is CatchAnswered:
        return "catch" if fields.caught else "decline_catch"
    return _TRIGGERS[kind]


def action_of(event: Event) -> int | None:
    """The action an event belongs to, if any (``action`` field)."""
    return getattr(event, "action", None)


# -- the tables above, read per event type: what live play and replay look up per event ------------------------

_NO_FIELDS = object()


def _static(rule: Any, kind: type) -> str | None:
    """The trigger ``rule`` gives events of type ``kind`` if it does not depend on their fields, else None."""
    try:
        trigger: str = rule(kind, _NO_FIELDS)
    except (AttributeError, KeyError):
        return None
    return trigger


#: Per event type, its lifecycle and phase triggers where they do not depend on the event's fields (a roll's
#: purpose, a Catch's answer, a GM change's action): the others are read per event.
_TRIGGER_OF_TYPE: dict[type, str | None] = {kind: _static(trigger_for, kind) for kind in EVENT_TYPES}
_PHASE_TRIGGER_OF_TYPE: dict[type, str | None] = {kind: _static(phase_trigger_for, kind) for kind in EVENT_TYPES}
#: Plain dicts of the derived tables (a mapping proxy's look-up costs more), and the legal triggers of each step.
_ORDER: dict[tuple[Step, str], Step] = dict(ORDER)
_PHASE_NEXT: dict[tuple[Phase, str], Phase] = dict(PHASE_ORDER)
_LEGAL_TRIGGERS: dict[Step, tuple[str, ...]] = {step: tuple(sorted(t for (s, t) in ORDER if s is step))
                                                for step in Step}
_LEGAL_PHASE_TRIGGERS: dict[Phase, tuple[str, ...]] = {phase: tuple(sorted(t for (p, t) in PHASE_ORDER if p is phase))
                                                       for phase in Phase}
