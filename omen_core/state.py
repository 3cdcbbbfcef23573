"""Fight state and the projection that folds events into it (``evolve``), used live and in replay.

Folding also checks the order of events: against the fight's phases
(:data:`omen_core.machine.PHASE_ORDER`) and against the lifecycle of the
action each event belongs to (:data:`omen_core.machine.ORDER`), so a log in
an impossible order cannot be replayed into a state.

Actions nest: a reaction (an Attack of Opportunity, an Interrupt) is an
action of its own, declared while another waits at its reaction window, so
the actions in progress form a stack.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import msgspec
from msgspec.structs import replace

from .content import CombatantSheet, Ruleset
from .events import (
    GENESIS_HASH,
    UNDO_MARKERS,
    AttackDeclared,
    BonusActionsRefilled,
    CombatantJoined,
    ConditionApplied,
    ConditionCleared,
    ConditionTicked,
    CostPaid,
    DiceRolled,
    DiceSourceKind,
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
    Moved,
    Redone,
    ResourceChanged,
    RoundStarted,
    SeedRevealed,
    StoredEvent,
    SurpriseDetermined,
    TurnEnded,
    TurnStarted,
    Undone,
    WeaponDrawn,
)
from .machine import (
    DONE,
    IllegalOrder,
    Phase,
    Step,
    action_of,
    next_phase,
    next_step,
    trigger_of,
)
from .rules.ambush import SurpriseTier
from .rules.initiative import break_ties, initiative_order

__all__ = ["CombatantState", "Reaction", "PendingAction", "FightState", "UndoRecord", "EFFECTS",
           "condition_adjustment", "effective_bonus", "evolve", "fold", "project", "undo_history"]

E = TypeVar("E")


class CombatantState(msgspec.Struct, frozen=True, kw_only=True):
    """A combatant as the fight has left it: resources (C3), Bonus Actions (C20), conditions (C28), gear in hand."""

    sheet: CombatantSheet
    hp: int
    will: int
    bonus_actions: int
    conditions: dict[str, int] = {}
    remaining: dict[str, int] = {}
    wielding: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        """The combatant's id from its sheet."""
        return self.sheet.id

    @property
    def side(self) -> str:
        """The side the combatant fights for."""
        return self.sheet.side

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
        """Incapacitated or paralysed: no base defense die, no Active Defense (C10), no reactions."""
        return self.has("Incapacitated") or self.has("Paralysed")

    @property
    def down(self) -> bool:
        """Out of the fight for the purpose of defeat: at 0 HP, or Incapacitated (Paralysis passes)."""
        return self.hp == 0 or self.has("Incapacitated")


class Reaction(msgspec.Struct, frozen=True, kw_only=True):
    """A reaction made to an action: who made it, as which action, and whether it hit."""

    who: str
    action: int
    hit: bool


class PendingAction(msgspec.Struct, frozen=True, kw_only=True):
    """An action in progress: its number, its lifecycle step, its events so far and the reactions to it."""

    action: int
    step: Step
    events: tuple[Event, ...]
    reactions: tuple[Reaction, ...] = ()

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
    phase: Phase = Phase.SETUP
    stack: tuple[PendingAction, ...] = ()
    combatants: dict[str, CombatantState] = {}
    engagements: tuple[tuple[str, str], ...] = ()
    surprise: dict[str, SurpriseTier] = {}
    initiative: dict[str, int] = {}
    ranking: tuple[tuple[str, ...], ...] = ()
    tie_open: tuple[str, ...] = ()
    order: tuple[str, ...] = ()
    round: int = 0
    turn: str | None = None
    turn_actions: int = 0
    turn_movement: int = 0
    disengaged: bool = False
    turns_taken: tuple[str, ...] = ()
    ending: FightEnded | None = None

    def had_a_turn(self, who: str) -> bool:
        """Whether ``who``'s first turn has started: before it, Bonus Actions are for defence only (C20)."""
        return who in self.turns_taken

    @property
    def pending(self) -> PendingAction | None:
        """The innermost action in progress, if any."""
        return self.stack[-1] if self.stack else None

    @property
    def step(self) -> Step:
        """The lifecycle step of the innermost action in progress (IDLE when none is)."""
        return self.stack[-1].step if self.stack else Step.IDLE

    @property
    def at_rest(self) -> bool:
        """No action is in progress."""
        return not self.stack

    def engaged(self, a: str, b: str) -> bool:
        """Whether two combatants are within each other's reach (adjacent), as stated by commands."""
        return tuple(sorted((a, b))) in self.engagements

    def engaged_with(self, who: str) -> list[str]:
        """Everyone within reach of ``who``."""
        return [x for pair in self.engagements if who in pair for x in pair if x != who]


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


def _with(state: FightState, who: str, **changes: object) -> FightState:
    """The state with one combatant's fields changed."""
    fighter = replace(state.combatants[who], **changes)
    return replace(state, combatants={**state.combatants, who: fighter})


def _conditions(state: FightState, who: str, name: str, stacks: int) -> FightState:
    fighter = state.combatants[who]
    conditions = {k: v for k, v in fighter.conditions.items() if k != name}
    remaining = {k: v for k, v in fighter.remaining.items() if k != name}
    if stacks:
        conditions[name] = stacks
        rule = state.ruleset.conditions.get(name) if state.ruleset else None
        if rule is not None and rule.duration is not None:
            remaining[name] = rule.duration
    return _with(state, who, conditions=conditions, remaining=remaining)


def _engage(state: FightState, who: str, others: Iterable[str], engaged: bool) -> FightState:
    pairs = set(state.engagements)
    for other in others:
        pair = tuple(sorted((who, other)))
        if engaged:
            pairs.add(pair)
        else:
            pairs.discard(pair)
    return replace(state, engagements=tuple(sorted(pairs)))


def _rank(state: FightState) -> tuple[tuple[str, ...], ...]:
    """Initiative groups from the totals so far, ties broken by the AGI bonus as it stands (C19, C28)."""
    agi = {who: effective_bonus(state, who, "AGI") for who in state.initiative}
    return tuple(tuple(g) for g in initiative_order(state.initiative, agi))


def _replace_group(ranking: tuple[tuple[str, ...], ...], group: tuple[str, ...],
                   parts: Iterable[Iterable[str]]) -> tuple[tuple[str, ...], ...]:
    out: list[tuple[str, ...]] = []
    for g in ranking:
        out.extend(tuple(p) for p in parts) if set(g) == set(group) else out.append(g)
    return tuple(out)


def _paid(state: FightState, event: CostPaid) -> FightState:
    if event.resource == "bonus_action":
        fighter = state.combatants[event.who]
        return _with(state, event.who, bonus_actions=fighter.bonus_actions - event.amount)
    if state.turn != event.who:
        return state
    if event.resource == "action":
        return replace(state, turn_actions=state.turn_actions - event.amount)
    return replace(state, turn_movement=state.turn_movement - event.amount)


def _started(state: FightState, event: FightStarted) -> FightState:
    return replace(state, started=True, title=event.title, ruleset=event.ruleset, dice=event.dice,
                   seed_commitment=event.seed_commitment)


def _joined(state: FightState, event: CombatantJoined) -> FightState:
    sheet = event.sheet
    bonus = state.ruleset.economy.bonus_actions if state.ruleset else 0
    joined = CombatantState(sheet=sheet, hp=sheet.hp, will=sheet.will, bonus_actions=bonus,
                            wielding=tuple(w.id for w in sheet.wielded()))
    return replace(state, combatants={**state.combatants, sheet.id: joined})


def _ticked(state: FightState, event: ConditionTicked) -> FightState:
    fighter = state.combatants[event.who]
    return _with(state, event.who, remaining={**fighter.remaining, event.condition: event.remaining})


def _initiative(state: FightState, event: InitiativeRolled) -> FightState:
    state = replace(state, initiative={**state.initiative, event.who: event.check.total})
    return replace(state, ranking=_rank(state))


def _roll_off(state: FightState, event: InitiativeRollOff) -> FightState:
    parts = break_ties(list(event.group), {r.roller: r.total for r in event.rolls})
    return replace(state, ranking=_replace_group(state.ranking, event.group, parts), tie_open=())


def _agreed(state: FightState, event: InitiativeAgreed) -> FightState:
    parts = [[who] for who in event.order]
    return replace(state, ranking=_replace_group(state.ranking, event.order, parts), tie_open=())


def _turn_started(state: FightState, event: TurnStarted) -> FightState:
    economy = state.ruleset.economy if state.ruleset else None
    taken = state.turns_taken if event.who in state.turns_taken else (*state.turns_taken, event.who)
    return replace(state, turn=event.who, disengaged=False, turns_taken=taken,
                   turn_actions=economy.actions if economy else 1,
                   turn_movement=economy.movement_actions if economy else 1)


def _disengaged(state: FightState, event: Disengaged) -> FightState:
    fighter = state.combatants[event.who]
    return replace(_with(state, event.who, bonus_actions=fighter.bonus_actions - event.cost), disengaged=True)


def _drawn(state: FightState, event: WeaponDrawn) -> FightState:
    fighter = state.combatants[event.who]
    return _with(state, event.who, wielding=(*fighter.wielding, event.weapon))


#: What each event type changes besides the lifecycle, the phase and the envelope's position: one function
#: per type that changes anything (the fight's set-up, resources, conditions, the fight's flow: surprise,
#: initiative, rounds and turns, positions, gear, the end); every other type changes nothing. An effect reads
#: neither the action stack, the phase, the action count nor the position (``fight_id``, ``version``,
#: ``last_hash``): :mod:`omen_core.lazy` relies on it, and a test checks it.
EFFECTS: dict[type, Callable[[FightState, Any], FightState]] = {
    FightStarted: _started,
    CombatantJoined: _joined,
    DiceRolled: lambda state, event: replace(state, rolls=event.counter),
    CostPaid: _paid,
    ResourceChanged: lambda state, event: _with(state, event.who, **{event.resource: event.after}),
    ConditionApplied: lambda state, event: _conditions(state, event.who, event.condition, event.stacks),
    ConditionCleared: lambda state, event: _conditions(state, event.who, event.condition, 0),
    ConditionTicked: _ticked,
    SeedRevealed: lambda state, event: replace(state, revealed_seed=event.seed),
    SurpriseDetermined: lambda state, event: replace(state, surprise={**state.surprise, event.who: event.tier}),
    InitiativeRolled: _initiative,
    InitiativeTied: lambda state, event: replace(state, tie_open=event.group if event.allies else ()),
    InitiativeRollOff: _roll_off,
    InitiativeAgreed: _agreed,
    InitiativeOrderSet: lambda state, event: replace(state, order=event.order),
    RoundStarted: lambda state, event: replace(state, round=event.round),
    TurnStarted: _turn_started,
    TurnEnded: lambda state, event: replace(state, turn=None, turn_actions=0, turn_movement=0, disengaged=False),
    BonusActionsRefilled: lambda state, event: _with(state, event.who, bonus_actions=event.after),
    EngagementChanged: lambda state, event: _engage(state, event.who, event.others, event.engaged),
    Moved: lambda state, event: _engage(state, event.who, event.left, False),
    Disengaged: _disengaged,
    WeaponDrawn: _drawn,
    FightEnded: lambda state, event: replace(state, ending=event),
}


def _effects(state: FightState, event: Event) -> FightState:
    """What an event changes besides the lifecycle and the phase (:data:`EFFECTS`)."""
    effect = EFFECTS.get(type(event))
    return state if effect is None else effect(state, event)


def _stack(state: FightState, event: Event, seq: int | None, trigger: str) -> tuple[PendingAction, ...]:
    """Advance the lifecycle of the action ``event`` belongs to; push new actions, pop finished ones."""
    stack = state.stack
    if trigger == "declare":
        if stack:
            next_step(stack[-1].step, event, seq, trigger="nest")
            if not (isinstance(event, AttackDeclared) and event.reacting_to == stack[-1].action):
                raise IllegalOrder(stack[-1].step, "declare", ["a reaction"], seq,
                                   why=f"only a reaction may be declared while action {stack[-1].action} waits")
        step = next_step(Step.IDLE, event, seq)
        return (*stack, PendingAction(action=action_of(event) or 0, step=step, events=(event,)))
    step = next_step(state.step, event, seq, trigger)
    if not stack:
        return stack
    top = stack[-1]
    action = action_of(event)
    if action is not None and action != top.action:
        raise IllegalOrder(top.step, trigger, [], seq, why=f"an event of action {action} while action "
                                                          f"{top.action} is in progress")
    top = replace(top, step=step, events=(*top.events, event))
    if step not in DONE:
        return (*stack[:-1], top)
    return _pop(stack[:-1], top)


def _pop(rest: tuple[PendingAction, ...], done: PendingAction) -> tuple[PendingAction, ...]:
    """A finished action leaves the stack; a finished reaction is recorded on the action it answered."""
    declared = done.events[0]
    if rest and isinstance(declared, AttackDeclared) and declared.reacting_to == rest[-1].action:
        hit = next((e.hit for e in done.events if isinstance(e, HitDetermined)), False)
        outer = rest[-1]
        reaction = Reaction(who=declared.attacker, action=done.action, hit=hit)
        return (*rest[:-1], replace(outer, reactions=(*outer.reactions, reaction)))
    return rest


def evolve(state: FightState, event: Event, seq: int | None = None) -> FightState:
    """Fold one event into the state. Pure. Raises IllegalOrder / OutOfPhase if the event cannot come now."""
    return _evolve(state, event, seq, {})


def _evolve(state: FightState, event: Event, seq: int | None, envelope: dict) -> FightState:
    """``evolve``, with envelope fields to set in the same (single) copy of the state."""
    trigger = trigger_of(event)
    phase = next_phase(state.phase, event, seq)
    stack = _stack(state, event, seq, trigger)
    actions = (action_of(event) or state.actions) if trigger == "declare" else state.actions
    state = _effects(state, event)
    if phase is state.phase and stack is state.stack and actions == state.actions and not envelope:
        return state
    return replace(state, phase=phase, stack=stack, actions=actions, **envelope)


def fold(state: FightState, stored: StoredEvent) -> FightState:
    """Fold one stored event: its payload through :func:`evolve`, plus the envelope's position.

    Undo markers only move the position: undoing needs the whole log (see :func:`project`).
    """
    envelope = {"fight_id": stored.fight_id, "version": stored.seq, "last_hash": stored.hash}
    if isinstance(stored.event, UNDO_MARKERS):
        return replace(state, **envelope)
    return _evolve(state, stored.event, stored.seq, envelope)


class UndoRecord(msgspec.Struct, frozen=True, kw_only=True):
    """An undo as the log records it: where, which range, why, and whether it was redone later."""

    seq: int
    from_seq: int
    to_seq: int
    reason: str
    redone_at: int | None = None


def undo_history(records: Iterable[StoredEvent]) -> tuple[set[int], list[UndoRecord]]:
    """The seqs that are undone now, and every undo in the log (redone or not)."""
    undos: dict[int, UndoRecord] = {}
    for rec in records:
        match rec.event:
            case Undone(from_seq=start, to_seq=end, reason=reason):
                undos[rec.seq] = UndoRecord(seq=rec.seq, from_seq=start, to_seq=end, reason=reason)
            case Redone(undo_seq=target) if target in undos:
                undos[target] = replace(undos[target], redone_at=rec.seq)
    voided = {seq for u in undos.values() if u.redone_at is None for seq in range(u.from_seq, u.to_seq + 1)}
    return voided, list(undos.values())


def project(records: Iterable[StoredEvent], state: FightState | None = None,
            voided: set[int] | None = None) -> FightState:
    """Fold a log, from the empty state or from ``state``, skipping the events that are undone.

    ``voided`` (from :func:`undo_history`) lets a caller that streams a long
    log find the undone seqs in a first pass (see ``omen_replay.replay.replay_store``),
    and the fold then streams; without it, a list is scanned for undos first,
    and any other iterable is read into a list once to find them.
    """
    if voided is None:
        records = records if isinstance(records, (list, tuple)) else list(records)
        voided = undo_history(records)[0]
    state = FightState() if state is None else state
    for rec in records:
        if rec.seq in voided:
            state = replace(state, version=rec.seq, last_hash=rec.hash)
            continue
        state = fold(state, rec)
    return state
