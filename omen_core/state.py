"""Fight state, the typed frames of the actions in progress, and ``evolve``: the one fold, live and in replay.

``evolve(state, event, seq)`` folds one event: it checks the event's order
against the fight's phases (:data:`omen_core.machine.PHASE_ORDER`) and the
lifecycle of the action it belongs to (:data:`omen_core.machine.ORDER`),
applies what the event changes (:data:`EFFECTS`), and records it in the
action's frame. Live play folds each event as it is decided
(:mod:`omen_core.decide`); every reader of a log folds through the one walk
(:mod:`omen_core.walk`), which also applies undo markers.

Actions nest: a reaction (an Attack of Opportunity, an Interrupt) is an
action of its own, declared while another waits at its reaction window, so
the actions in progress form a stack of frames. A frame is typed per kind of
action (:class:`AttackFrame`, :class:`SaveFrame`, :class:`MoveFrame`) with a
named field for each step's event: the declaration, each roll, each window
and its answer, the determination, the damage dealt, the reactions made to it.
An action is identified by the seq of its declaration (``declared_at``),
which no undo can give to another action.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal

import msgspec
from msgspec.structs import replace

from .abilities import PASS, use_key
from .content import Ability, CombatantSheet, Ruleset, Weapon
from .events import (
    DYING_REASON,
    GENESIS_HASH,
    AbilityUsed,
    ActionCancelled,
    ActiveDefenseChosen,
    ActiveDefenseDeclined,
    ActiveDefenseWindowOpened,
    ActiveDefenseWindowSkipped,
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
    CostPaid,
    DamageResolved,
    DamageRouted,
    DecisionAnswered,
    DecisionClosed,
    DecisionOpened,
    DiceRolled,
    DiceSourceChanged,
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
    Modifier,
    MomentReached,
    Moved,
    MovementDeclared,
    ReactionPassed,
    ReactionWindowOpened,
    Redone,
    ResourceChanged,
    RoundStarted,
    RoutingWindowOpened,
    SaveCalled,
    SaveResolved,
    SeedCommitted,
    SeedRevealed,
    SurpriseDetermined,
    TurnEnded,
    TurnStarted,
    Undone,
    WeaponDrawn,
    WillConversionChosen,
    WillConversionOffered,
    is_undo_batch,
)
from .machine import (
    DONE,
    OPENING,
    UNORDERED,
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

__all__ = ["CombatantState", "in_hand", "Until", "Lasting", "Pending", "deferred_due", "Reaction", "AttackFrame",
           "SaveFrame", "sides_standing", "side_down", "MoveFrame", "AbilityFrame", "MomentFrame", "Frame",
           "FightState", "EFFECTS", "FRAME_FIELDS", "condition_adjustment", "effective_bonus", "evolve",
           "is_undo_point", "opens_undo_point", "redo_stack_after", "redoable", "spend"]


class CombatantState(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A combatant as the fight has left it: resources (C3), Bonus Actions (C20), conditions (C28), gear in hand."""

    sheet: CombatantSheet
    hp: int
    will: int
    bonus_actions: int
    conditions: dict[str, int] = {}
    remaining: dict[str, int] = {}
    wielding: tuple[str, ...] = ()
    left: Literal["fled", "yielded", "dead"] | None = None
    applied: dict[str, int] = {}
    appliers: dict[str, str] = {}

    @property
    def id(self) -> str:
        """The combatant's id from its sheet."""
        return self.sheet.id

    def ticks_left(self) -> dict[str, int]:
        """The ticks left of each of its conditions that has a duration (C28), in the order they were applied."""
        return {name: self.remaining[name] for name, _stacks in self.conditions_applied() if name in self.remaining}

    def conditions_applied(self) -> list[tuple[str, int]]:
        """Its conditions with their stacks in the order they were applied (C40: the order they take effect in at
        one moment), ties by name."""
        return sorted(self.conditions.items(), key=lambda c: (self.applied.get(c[0], 0), c[0]))

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
    def dying(self) -> bool:
        """At 0 HP and still in the fight: Dying (C28), and treated as Incapacitated while it lasts (C36)."""
        return self.hp == 0 and self.left is None

    @property
    def helpless(self) -> bool:
        """Incapacitated or paralysed (C10), or at 0 HP (Dying, treated as Incapacitated: C36): no base defense
        die, no Active Defense (C10), no action, reaction or ability use."""
        return self.dying or self.has("Incapacitated") or self.has("Paralysed")

    @property
    def down(self) -> bool:
        """Down for the purpose of defeat (C33): at 0 HP (Dying), or dead, fled or yielded. Incapacitated and
        Paralysed combatants are not: they can still be attacked (C10)."""
        return self.hp == 0 or self.left is not None

    @property
    def out(self) -> bool:
        """Out of the fight (C33): fled, yielded or dead; it takes no turns, cannot act or be targeted."""
        return self.left is not None

    @property
    def held(self) -> tuple[str, ...]:
        """What is in hand as the table is told it (C35): :func:`in_hand` of its sheet and ``wielding``."""
        return in_hand(self.sheet, self.wielding)


def in_hand(sheet: CombatantSheet, wielding: tuple[str, ...]) -> tuple[str, ...]:
    """What is in hand (C35): the gear in ``wielding`` but spells, which take no hand (docs/rulings.md, "A spell
    needs no hand": a sheet's ``wielding`` naming one, or a spell first on a sheet that lists none, gives it no
    hand)."""
    return tuple(item for item in wielding
                 if (weapon := sheet.weapon(item)) is None or "spell" not in weapon.properties)


class Until(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A condition lasting until the start or the end of a named combatant's next turn (C40): ``who`` has
    ``condition`` until ``moment`` of ``of``'s next turn. ``armed``: that next turn has started (its end is the
    one that counts, not the end of a turn under way when the condition was applied)."""

    who: str
    condition: str
    of: str
    moment: Literal["start_of_next_turn", "end_of_next_turn"]
    armed: bool = False


class Lasting(msgspec.Struct, frozen=True, kw_only=True):
    """When a condition applied to last until a named combatant's next turn clears (C40), as the surfaces say it:
    at ``moment`` of ``of``'s next turn; ``started``: that turn is under way (its end is the one that counts).
    ``of`` is None in the view of a seat that does not see that combatant."""

    of: str | None
    moment: Literal["start_of_next_turn", "end_of_next_turn"]
    started: bool = False

    def said(self, name: str) -> str:
        """When it clears, ``of`` called ``name``: ``the end of Kael Arden's next turn``, ``current turn`` once
        that turn is under way (it read "next turn" all through the turn whose end cleared it: a tester)."""
        moment = "start" if self.moment == "start_of_next_turn" else "end"
        return f"the {moment} of {name}'s {'current' if self.started else 'next'} turn"


class Pending(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A deferred cost (C41): ``who`` used ``ability``, whose deferred effects come at ``moment`` of its next turn.
    ``armed``: that next turn has started (its end is the one that counts, not the end of a turn under way when
    the ability was used). ``action``: the action that used it (its ``ability_used`` or ``save_called``), whose
    cancelling takes the cost back (C24, C41: a cancelled ability's costs but its Action are not paid)."""

    who: str
    ability: str
    moment: Literal["start_of_next_turn", "end_of_next_turn"]
    armed: bool = False
    action: int | None = None


class Reaction(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A reaction made to an action: who made it, as which action (its declaration's seq), and whether it hit."""

    who: str
    action: int
    hit: bool


class _FrameBase(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind", gc=False):
    """What every action in progress has: its id, where it was declared, its step, and the reactions to it.

    ``action`` is the number its events carry (the seq of its declaration in
    today's logs); ``declared_at`` is the seq of its declaration, the id shown
    to people. ``damage`` lists the damage the action has dealt so far;
    ``will_offer`` and ``will_choice`` are the last Will-conversion choice
    offered and its answer (C31). ``decision`` is the extension's decision point
    open now (:mod:`omen_core.hooks`), ``decisions`` every one opened in this
    action and ``answers`` every answer given to them, in order. ``resume_at``: the hook point the action goes on
    from once the attack an ability's answer made on it (C38) settles (cleared by the action's next event).
    ``applied``: the conditions the action itself has applied (its branches and effects, Dying from its own
    damage; not an answer's, C38), which abilities may answer at ``condition.applied``.
    """

    action: int
    declared_at: int
    step: Step
    reaction_window: ReactionWindowOpened | None = None
    passed: tuple[str, ...] = ()
    reactions: tuple[Reaction, ...] = ()
    damage: tuple[DamageResolved, ...] = ()
    damage_rolls: tuple[DiceRolled, ...] = ()
    will_offer: WillConversionOffered | None = None
    will_choice: WillConversionChosen | None = None
    decision: DecisionOpened | None = None
    decisions: tuple[DecisionOpened, ...] = ()
    answers: tuple[DecisionAnswered, ...] = ()
    resume_at: str | None = None
    applied: tuple[ConditionApplied, ...] = ()

    def answered_decision(self, opened: DecisionOpened) -> tuple[str, ...]:
        """Who has answered the decision point ``opened`` (an extension's window, :mod:`omen_core.hooks`)."""
        return tuple(a.who for a in self.answers if a.action == opened.action and a.decision == opened.decision)

    def chose(self, decision: str, choice: str) -> tuple[str, ...]:
        """Who made ``choice`` at the decision point ``decision`` in this action (a term handler's question)."""
        return tuple(a.who for a in self.answers if a.decision == decision and a.choice == choice)

    @property
    def answered(self) -> frozenset[str]:
        """Everyone who has passed or reacted in the action's reaction window."""
        return frozenset(self.passed) | {r.who for r in self.reactions}

    @property
    def interrupted(self) -> bool:
        """C24: an Interrupt that hit cancels the declared Action."""
        window = self.reaction_window
        return window is not None and window.reaction == "interrupt" and any(r.hit for r in self.reactions)

    @property
    def window_done(self) -> bool:
        """The reaction window may close: everyone answered, or an Interrupt hit."""
        window = self.reaction_window
        return window is not None and (set(window.responders) <= self.answered or self.interrupted)


class AttackFrame(_FrameBase, frozen=True, kw_only=True, tag="attack"):
    """An attack in progress (combat.txt §Resolving an Attack): every step's event in its own field."""

    declaration: AttackDeclared
    weapon: Weapon | None = None
    hit_roll: DiceRolled | None = None
    base_defense_roll: DiceRolled | None = None
    window: ActiveDefenseWindowOpened | None = None
    skipped: ActiveDefenseWindowSkipped | None = None
    defense: ActiveDefenseChosen | None = None
    declined: ActiveDefenseDeclined | None = None
    active_defense_roll: DiceRolled | None = None
    determination: HitDetermined | None = None
    catch_window: CatchWindowOpened | None = None
    catch: CatchAnswered | None = None
    routing: RoutingWindowOpened | None = None
    routed: DamageRouted | None = None
    ability_damage_roll: DiceRolled | None = None

    @property
    def actor(self) -> str:
        """The attacker."""
        return self.declaration.attacker

    @property
    def rage_roll(self) -> DiceRolled | None:
        """The dice abilities added to the damage of a hit (C12, C37): the roll made for them, or (a raging attack,
        as recorded before ``ability_damage`` rolls) the first damage roll of a raging attack that hit."""
        if self.ability_damage_roll is not None:
            return self.ability_damage_roll
        return self.damage_rolls[0] if self.declaration.rage and self.damage_rolls else None


class SaveFrame(_FrameBase, frozen=True, kw_only=True, tag="save"):
    """A save in progress (combat.txt §Resolving a Save): the saver's and the opposing roll, the resolution."""

    declaration: SaveCalled
    saver_roll: DiceRolled | None = None
    opposing_roll: DiceRolled | None = None
    resolution: SaveResolved | None = None

    @property
    def actor(self) -> str:
        """The caller of the save."""
        return self.declaration.caller


class MoveFrame(_FrameBase, frozen=True, kw_only=True, tag="move"):
    """A Movement Action in progress (C23): whose reach it leaves, and its completion."""

    declaration: MovementDeclared
    moved: Moved | None = None

    @property
    def actor(self) -> str:
        """The mover."""
        return self.declaration.who


class AbilityFrame(_FrameBase, frozen=True, kw_only=True, tag="ability"):
    """An ability used on its owner's turn (C37): its declaration; its costs and effects follow as consequences."""

    declaration: AbilityUsed

    @property
    def actor(self) -> str:
        """The ability's owner."""
        return self.declaration.who


class MomentFrame(_FrameBase, frozen=True, kw_only=True, tag="moment"):
    """A moment of the round that abilities answer (C38: a turn's start or end, the round's end): its decision
    points, one at a time; it settles once they close."""

    declaration: MomentReached

    @property
    def actor(self) -> str:
        """The combatant whose turn it is (none at the end of the round: "")."""
        return self.declaration.who or ""


Frame = AttackFrame | SaveFrame | MoveFrame | AbilityFrame | MomentFrame


class FightState(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Everything derived from a fight's events so far. Never stored: always rebuilt by folding.

    Besides the fight itself, three fields let undo be decided from the state
    alone: ``undo_point`` (the last live command that began with no action in
    progress: where an undo goes back to), ``live_seq`` (the last event not
    undone, undo batches aside: where an undo reaches) and ``redo_stack`` (the
    undos that a redo may take back, the last one last); and ``undo_floor``,
    the first seq an undo may go back to: just past the last seed revealed (a
    revealed seed is public, voided or not: its reveal is never undone, C42).
    ``seed_commitment`` is the commitment the seeded dice are drawn under now
    (the fight's first, or the fresh one after a reveal, C42) and
    ``revealed_seed`` its seed once revealed; ``spent`` the commitments of every seed revealed so far (a revealed
    seed is spent: no fresh seed may be one of them, C42). ``uses`` counts each combatant's uses of each ability
    (``who/ability``: this turn, this round, this fight; C41), from the decisions answered with it;
    ``abilities`` every ability the sheets write out (C37), once each by id, in the order they joined;
    ``shorthands`` the shipped abilities their shorthand keys stand for (``features.rage``...), once each, in the
    order they joined (run before the written ones, as the features always were).
    ``applications`` counts the conditions applied so far: each combatant's ``applied`` gives each of its
    conditions the number it began with, so that conditions due at one moment tick in the order they were
    applied (C40); ``until`` lists the conditions that last until a named combatant's next turn (C40);
    ``deferred`` the costs abilities used have left to settle at their owner's next turn (C41).
    """

    fight_id: str = ""
    version: int = 0
    last_hash: str = GENESIS_HASH
    started: bool = False
    title: str = ""
    ruleset: Ruleset | None = None
    dice: DiceSourceKind | None = None
    dice_mode: DiceSourceKind | None = None
    seed_commitment: str | None = None
    revealed_seed: str | None = None
    spent: tuple[str, ...] = ()
    rolls: int = 0
    phase: Phase = Phase.SETUP
    stack: tuple[Frame, ...] = ()
    combatants: dict[str, CombatantState] = {}
    engagements: tuple[tuple[str, str], ...] = ()
    surprise: dict[str, SurpriseTier] = {}
    initiative: dict[str, int] = {}
    initiative_modifiers: dict[str, tuple[Modifier, ...]] = {}
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
    undo_point: int = 0
    live_seq: int = 0
    redo_stack: tuple[int, ...] = ()
    undo_floor: int = 0
    uses: dict[str, tuple[int, int, int]] = {}
    abilities: tuple[Ability, ...] = ()
    shorthands: tuple[Ability, ...] = ()
    applications: int = 0
    until: tuple[Until, ...] = ()
    deferred: tuple[Pending, ...] = ()

    def lasting(self, who: str) -> dict[str, Lasting]:
        """``who``'s conditions that last until a named combatant's next turn (C40), by condition; once the fight
        has ended no turn is under way (they said "current turn" after the end: a durations tester)."""
        return {u.condition: Lasting(of=u.of, moment=u.moment, started=u.armed and self.ending is None)
                for u in self.until if u.who == who}

    def had_a_turn(self, who: str) -> bool:
        """Whether ``who``'s first turn has started: before it, Bonus Actions are for defence only (C20)."""
        return who in self.turns_taken

    @property
    def pending(self) -> Frame | None:
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

    @property
    def whose_turn(self) -> str | None:
        """Whose turn it is now: ``turn``, but no one's once the fight has ended (C33), where ``turn`` still names
        whose turn it was."""
        return self.turn if self.ending is None else None

    def engaged(self, a: str, b: str) -> bool:
        """Whether two combatants are within each other's reach (adjacent), as stated by commands."""
        return tuple(sorted((a, b))) in self.engagements

    def engaged_with(self, who: str) -> list[str]:
        """Everyone within reach of ``who``."""
        return [x for pair in self.engagements if who in pair for x in pair if x != who]


def condition_adjustment(state: FightState, who: str) -> int:
    """What a combatant's conditions add to every attribute bonus (C28: e.g. −1 per Exhausted stack)."""
    fighter = state.combatants[who]
    if not fighter.conditions or state.ruleset is None:
        return 0
    defs = state.ruleset.conditions
    return sum(defs[name].attribute_bonus * stacks for name, stacks in fighter.conditions.items()
               if name in defs)


def sides_standing(state: FightState) -> dict[str, bool]:
    """Each side, in the order met: whether one of its combatants is still standing (not down, C33)."""
    up: dict[str, bool] = {}
    for fighter in state.combatants.values():
        side = fighter.sheet.side
        up[side] = up.get(side, False) or not fighter.down
    return up


def side_down(state: FightState) -> bool:
    """Whether a side of a fight of several is down (C33): the fight is over, whatever is left of the command (no
    condition ticks further, no turn or round begins); the check after the command ends it."""
    up = sides_standing(state)
    return len(up) > 1 and not all(up.values())


def effective_bonus(state: FightState, who: str, attribute: str) -> int:
    """An attribute bonus as it stands now: the sheet's, adjusted by conditions (C1, C28)."""
    return state.combatants[who].sheet.attributes[attribute].bonus + condition_adjustment(state, who)


def opens_undo_point(seq: int, batch: int, at_rest: bool, undo_batch: bool) -> bool:
    """The safe-point rule of undo, the one predicate every reader and writer uses (through :func:`is_undo_point`,
    or on its parts where a fold holds them apart): an event is a point an undo may go back to iff it opens a
    command's batch (not the fight's first, not an undo or redo: ``undo_batch``) with no action in progress before
    it (``at_rest``). Undoing the answer to a window therefore undoes the whole action."""
    return seq == batch and seq > 1 and at_rest and not undo_batch


def is_undo_point(before: FightState, event: Event, seq: int, batch: int) -> bool:
    """:func:`opens_undo_point` for ``event`` at ``seq`` in the batch starting at ``batch``, ``before`` being the
    state just before it."""
    return opens_undo_point(seq, batch, before.at_rest, is_undo_batch(event))


def redo_stack_after(stack: tuple[int, ...], kind: type, seq: int, batch: int, undo_batch: bool) -> tuple[int, ...]:
    """The redo-stack rule, the one every reader and writer uses: the stack of undos a redo may take back after an
    event of type ``kind`` at ``seq`` (in the batch starting at ``batch``; ``undo_batch``: an undo's or a redo's).

    The stack follows time, not what is live: an undo marker pushes its seq, a
    redo marker pops the undo it takes back, and any other command's batch
    empties the stack where it opens, even a batch a later undo voided (while
    it stood, the undo before it could not be redone). Nothing else moves it.
    """
    if kind is Undone:
        return (*stack, seq)
    if kind is Redone:
        return stack[:-1]
    if seq == batch and not undo_batch and stack:
        return ()
    return stack


def redoable(state: FightState) -> int | None:
    """The seq of the undo a redo would take back now (the top of the redo stack), if any."""
    return state.redo_stack[-1] if state.redo_stack else None


# -- effects: what each event type changes, besides the lifecycle, the phase and the position --------------------


def _with(state: FightState, who: str, **changes: object) -> FightState:
    """The state with one combatant's fields changed."""
    return replace(state, **_combatant(state, who, **changes))


def _combatant(state: FightState, who: str, **changes: object) -> dict[str, Any]:
    """The state's fields that change with one combatant's fields."""
    fighter = replace(state.combatants[who], **changes)
    return {"combatants": {**state.combatants, who: fighter}}


def _applied(state: FightState, event: ConditionApplied) -> FightState:
    """Stacks of a condition land (C28). One that begins (the combatant lacked it) takes the next application
    number (C40: the order conditions tick in); its applier and its turn duration are the latest application's."""
    who, name = event.who, event.condition
    fighter = state.combatants[who]
    fresh = name not in fighter.applied
    number = state.applications + 1 if fresh else fighter.applied[name]
    state = _conditions(state, who, name, event.stacks)
    fighter = state.combatants[who]
    changes: dict[str, Any] = {"applied": {**fighter.applied, name: number}}
    if event.by is not None:
        changes["appliers"] = {**fighter.appliers, name: event.by}
    state = _with(state, who, **changes)
    until = tuple(u for u in state.until if (u.who, u.condition) != (who, name))
    if event.until is not None and event.of is not None:
        until = (*until, Until(who=who, condition=name, of=event.of, moment=event.until))
    if fresh or until != state.until:
        state = replace(state, applications=state.applications + (1 if fresh else 0), until=until)
    return state


def _cleared(state: FightState, event: ConditionCleared) -> FightState:
    """A condition ends: its stacks, its duration, its place in the order and its applier go with it (C28, C40)."""
    who, name = event.who, event.condition
    state = _conditions(state, who, name, 0)
    fighter = state.combatants[who]
    if name in fighter.applied or name in fighter.appliers:
        state = _with(state, who, applied={k: v for k, v in fighter.applied.items() if k != name},
                      appliers={k: v for k, v in fighter.appliers.items() if k != name})
    if any((u.who, u.condition) == (who, name) for u in state.until):
        state = replace(state, until=tuple(u for u in state.until if (u.who, u.condition) != (who, name)))
    return state


def _conditions(state: FightState, who: str, name: str, stacks: int) -> FightState:
    """``who``'s stacks of ``name`` set to ``stacks`` (0: it ends), its duration starting again; a condition keeps
    its place among the combatant's where it began (more stacks, a renewal at its most, do not move it: C40)."""
    fighter = state.combatants[who]
    conditions, remaining = dict(fighter.conditions), dict(fighter.remaining)
    rule = state.ruleset.conditions.get(name) if state.ruleset and stacks else None
    if stacks:
        conditions[name] = stacks
    else:
        conditions.pop(name, None)
    if rule is not None and rule.duration is not None:
        remaining[name] = rule.duration
    else:
        remaining.pop(name, None)
    return _with(state, who, conditions=conditions, remaining=remaining)


def _engage(state: FightState, who: str, others: Iterable[str], engaged: bool) -> FightState:
    pairs = set(state.engagements)
    for other in others:
        a, b = sorted((who, other))
        if engaged:
            pairs.add((a, b))
        else:
            pairs.discard((a, b))
    return replace(state, engagements=tuple(sorted(pairs)))


def _rank(state: FightState) -> tuple[tuple[str, ...], ...]:
    """Initiative groups from the totals so far, ties broken by the AGI bonus as it stands (C19, C28)."""
    agi = {who: effective_bonus(state, who, "AGI") for who in state.initiative}
    return tuple(tuple(g) for g in initiative_order(state.initiative, agi))


def _replace_group(ranking: tuple[tuple[str, ...], ...], group: tuple[str, ...],
                   parts: Iterable[Iterable[str]]) -> tuple[tuple[str, ...], ...]:
    out: list[tuple[str, ...]] = []
    for g in ranking:
        if set(g) == set(group):
            out.extend(tuple(p) for p in parts)
        else:
            out.append(g)
    return tuple(out)


def spend(state: FightState, who: str, resource: str, amount: int) -> dict[str, Any]:
    """The ledger's arithmetic, the one place a cost is taken (C20, C22, C41): the state's fields after ``who`` pays
    ``amount`` of ``resource``. Bonus Actions, HP and Will are the combatant's; an Action or a Movement Action is
    the turn's, and only on the payer's own turn (a reaction's or an interrupted action's is spent off-turn, with
    nothing left to take)."""
    if resource in _COMBATANT_RESOURCES:
        fighter = state.combatants[who]
        field = _COMBATANT_RESOURCES[resource]
        return _combatant(state, who, **{field: getattr(fighter, field) - amount})
    if state.turn != who:
        return {}
    if resource == "action":
        return {"turn_actions": state.turn_actions - amount}
    return {"turn_movement": state.turn_movement - amount}


#: The resources a combatant holds itself (the others are its turn's), by the field that holds them.
_COMBATANT_RESOURCES = {"bonus_action": "bonus_actions", "hp": "hp", "will": "will"}


def _paid(state: FightState, event: CostPaid) -> FightState:
    changes = _paid_fields(state, event)
    return replace(state, **changes) if changes else state


def _paid_fields(state: FightState, event: CostPaid) -> dict[str, Any]:
    return spend(state, event.who, event.resource, event.amount)


def _resource_changed(state: FightState, event: ResourceChanged) -> dict[str, Any]:
    return _combatant(state, event.who, **{event.resource: event.after})


def _refilled(state: FightState, event: BonusActionsRefilled) -> dict[str, Any]:
    return _combatant(state, event.who, bonus_actions=event.after)


def _started(state: FightState, event: FightStarted) -> FightState:
    return replace(state, started=True, title=event.title, ruleset=event.ruleset, dice=event.dice,
                   dice_mode=event.dice, seed_commitment=event.seed_commitment)


def _joined(state: FightState, event: CombatantJoined) -> FightState:
    sheet = event.sheet
    bonus = state.ruleset.economy.bonus_actions if state.ruleset else 0
    joined = CombatantState(sheet=sheet, hp=sheet.hp, will=sheet.will, bonus_actions=bonus,
                            wielding=sheet.in_hand())
    written = sheet.written_abilities()
    if written:
        known = {a.id for a in state.abilities}
        state = replace(state, abilities=(*state.abilities, *(a for a in written if a.id not in known)))
    shorthands = sheet.shorthand_abilities()
    if shorthands:
        state = replace(state, shorthands=(*state.shorthands, *(a for a in shorthands if a not in state.shorthands)))
    return replace(state, combatants={**state.combatants, sheet.id: joined})


def _ticked(state: FightState, event: ConditionTicked) -> FightState:
    fighter = state.combatants[event.who]
    return _with(state, event.who, remaining={**fighter.remaining, event.condition: event.remaining})


def _initiative(state: FightState, event: InitiativeRolled) -> FightState:
    state = replace(state, initiative={**state.initiative, event.who: event.check.total},
                    initiative_modifiers={**state.initiative_modifiers, event.who: event.check.modifiers})
    return replace(state, ranking=_rank(state))


def _roll_off(state: FightState, event: InitiativeRollOff) -> FightState:
    parts = break_ties(list(event.group), {r.roller: r.total for r in event.rolls})
    return replace(state, ranking=_replace_group(state.ranking, event.group, parts), tie_open=())


def _agreed(state: FightState, event: InitiativeAgreed) -> FightState:
    parts = [[who] for who in event.order]
    return replace(state, ranking=_replace_group(state.ranking, event.order, parts), tie_open=())


def _turn_started(state: FightState, event: TurnStarted) -> dict[str, Any]:
    economy = state.ruleset.economy if state.ruleset else None
    taken = state.turns_taken if event.who in state.turns_taken else (*state.turns_taken, event.who)
    fields = {"turn": event.who, "disengaged": False, "turns_taken": taken,
              "turn_actions": economy.actions if economy else 1,
              "turn_movement": economy.movement_actions if economy else 1}
    if state.uses:  # uses per turn come back at the start of the owner's turn (C41)
        mine = f"{event.who}/"
        fields["uses"] = {k: ((0, r, f) if k.startswith(mine) else (t, r, f)) for k, (t, r, f) in state.uses.items()}
    if any(u.of == event.who and not u.armed for u in state.until):  # C40: the named combatant's next turn is here
        fields["until"] = tuple(replace(u, armed=True) if u.of == event.who else u for u in state.until)
    if state.deferred:  # deferred costs due at this turn's start settle; those due at its end wait for it (C41)
        fields["deferred"] = _deferred_at(state, event.who, started=True)
    return fields


def _round_started(state: FightState, event: RoundStarted) -> FightState:
    """A new round; uses per round come back (C41)."""
    if not state.uses:
        return replace(state, round=event.round)
    return replace(state, round=event.round, uses={k: (t, 0, f) for k, (t, _r, f) in state.uses.items()})


def _answered(state: FightState, event: DecisionAnswered) -> FightState:
    """A decision answered with anything but passing uses the ability once (C41)."""
    return state if event.choice == PASS else _used(state, event.who, event.decision)


def _used(state: FightState, who: str, ability: str, action: int | None = None) -> FightState:
    """``who`` uses ``ability`` once more: this turn, this round, this fight (C41); its deferred cost, if it has one,
    is recorded to settle at its next turn (owed by ``action``, the action that used it, if any)."""
    key = use_key(who, ability)
    t, r, f = state.uses.get(key, (0, 0, 0))
    state = replace(state, uses={**state.uses, key: (t + 1, r + 1, f + 1)})
    written = next((a for a in state.abilities if a.id == ability), None)
    if written is None or written.deferred is None:
        return state
    owed = Pending(who=who, ability=ability, moment=written.deferred.at, action=action)
    return replace(state, deferred=(*state.deferred, owed))


def _action_cancelled(state: FightState, event: ActionCancelled) -> FightState:
    """An action called off before it resolved (an Interrupt that hits, C24; the GM's cancel): the deferred cost of
    an ability it used is not owed (C41: only its Action is spent; its use stays counted)."""
    if not any(p.action == event.action for p in state.deferred):
        return state
    return replace(state, deferred=tuple(p for p in state.deferred if p.action != event.action))


def deferred_due(state: FightState, who: str, moment: str) -> tuple[Pending, ...]:
    """The deferred costs of ``who`` that settle at ``moment`` of the turn starting or ending now (C41): at a turn's
    start every one waiting for a start; at its end those whose next turn this is (armed)."""
    return tuple(p for p in state.deferred if p.who == who and p.moment == moment
                 and (moment == "start_of_next_turn" or p.armed))


def _deferred_at(state: FightState, who: str, started: bool) -> tuple[Pending, ...]:
    """The deferred costs left once ``who``'s turn starts (``started``) or ends: those due then are settled and go;
    at a start, those waiting for a turn's end are armed (this is their turn)."""
    moment = "start_of_next_turn" if started else "end_of_next_turn"
    due = set(deferred_due(state, who, moment))
    return tuple(replace(p, armed=True) if started and p.who == who and p.moment == "end_of_next_turn" else p
                 for p in state.deferred if p not in due)


def _rolled(state: FightState, event: DiceRolled) -> dict[str, Any]:
    return {"rolls": event.counter}


def _turn_ended(state: FightState, event: TurnEnded) -> dict[str, Any]:
    fields: dict[str, Any] = {"turn": None, "turn_actions": 0, "turn_movement": 0, "disengaged": False}
    if state.deferred:  # deferred costs due at the end of this, the owner's next turn, have settled (C41)
        fields["deferred"] = _deferred_at(state, event.who, started=False)
    return fields


def _disengaged(state: FightState, event: Disengaged) -> FightState:
    return replace(state, **spend(state, event.who, "bonus_action", event.cost), disengaged=True)


def _left(state: FightState, event: CombatantLeft) -> FightState:
    """C33: out of the fight, and out of everyone's reach."""
    state = _with(state, event.who, left=event.reason)
    return replace(state, engagements=tuple(p for p in state.engagements if event.who not in p))


def _drawn(state: FightState, event: WeaponDrawn) -> FightState:
    """C35: the weapon or shield is in hand, and its cost paid (none outside the rounds)."""
    fighter = state.combatants[event.who]
    state = _with(state, event.who, wielding=(*fighter.wielding, event.weapon))
    return state if event.cost == "free" else replace(state, **spend(state, event.who, event.cost, 1))


#: What each event type changes besides the lifecycle, the phase and the position: one function per type that
#: changes anything (the fight's set-up, the dice source, resources, conditions, the fight's flow: surprise,
#: initiative, rounds and turns, positions, gear, the end); every other type changes nothing here. An effect
#: reads neither the action stack, the phase nor the position (``fight_id``, ``version``, ``last_hash``): the
#: walk's skimming path relies on it, and a test checks it.
EFFECTS: dict[type, Callable[[FightState, Any], FightState]] = {
    FightStarted: _started,
    CombatantJoined: _joined,
    DiceSourceChanged: lambda state, event: replace(state, dice_mode=event.after),
    DiceRolled: lambda state, event: replace(state, **_rolled(state, event)),
    CostPaid: _paid,
    ResourceChanged: lambda state, event: replace(state, **_resource_changed(state, event)),
    ConditionApplied: _applied,
    ConditionCleared: _cleared,
    ConditionTicked: _ticked,
    SeedRevealed: lambda state, event: replace(state, revealed_seed=event.seed,
                                               spent=(*state.spent, state.seed_commitment or "")),
    SeedCommitted: lambda state, event: replace(state, seed_commitment=event.commitment, revealed_seed=None),
    SurpriseDetermined: lambda state, event: replace(state, surprise={**state.surprise, event.who: event.tier}),
    InitiativeRolled: _initiative,
    InitiativeTied: lambda state, event: replace(state, tie_open=event.group if event.allies else ()),
    InitiativeRollOff: _roll_off,
    InitiativeAgreed: _agreed,
    InitiativeOrderSet: lambda state, event: replace(state, order=event.order),
    RoundStarted: _round_started,
    DecisionAnswered: _answered,
    AbilityUsed: lambda state, event: _used(state, event.who, event.ability, event.action),
    SaveCalled: lambda state, event: _used(state, event.caller, event.ability, event.action) if event.ability
    else state,
    ActionCancelled: _action_cancelled,
    TurnStarted: lambda state, event: replace(state, **_turn_started(state, event)),
    TurnEnded: lambda state, event: replace(state, **_turn_ended(state, event)),
    BonusActionsRefilled: lambda state, event: replace(state, **_refilled(state, event)),
    EngagementChanged: lambda state, event: _engage(state, event.who, event.others, event.engaged),
    Moved: lambda state, event: _engage(state, event.who, event.left, False),
    Disengaged: _disengaged,
    WeaponDrawn: _drawn,
    CombatantLeft: _left,
    FightEnded: lambda state, event: replace(state, ending=event),
}


#: The effects that set fields of the state from the event alone, as those fields: the fold sets them in the one
#: copy of the state it makes for the event (``EFFECTS`` holds the same, as functions of the state).
FIELD_EFFECTS: dict[type, Callable[[FightState, Any], dict[str, Any]]] = {
    DiceRolled: _rolled,
    CostPaid: _paid_fields,
    ResourceChanged: _resource_changed,
    BonusActionsRefilled: _refilled,
    TurnStarted: _turn_started,
    TurnEnded: _turn_ended,
}


# -- frames: each step's event in its named field --------------------------------------------------------------

#: The frame field each event type fills: ``(name, appends)``; rolls go by purpose (:func:`_roll_field`). Types
#: not listed only move the step (costs, closing a window, results that land on combatants).
FRAME_FIELDS: dict[type, tuple[str, bool]] = {
    ReactionWindowOpened: ("reaction_window", False),
    ReactionPassed: ("passed", True),
    ActiveDefenseWindowOpened: ("window", False),
    ActiveDefenseWindowSkipped: ("skipped", False),
    ActiveDefenseChosen: ("defense", False),
    ActiveDefenseDeclined: ("declined", False),
    HitDetermined: ("determination", False),
    CatchWindowOpened: ("catch_window", False),
    CatchAnswered: ("catch", False),
    RoutingWindowOpened: ("routing", False),
    DamageRouted: ("routed", False),
    DamageResolved: ("damage", True),
    WillConversionOffered: ("will_offer", False),
    WillConversionChosen: ("will_choice", False),
    SaveResolved: ("resolution", False),
    Moved: ("moved", False),
}

#: How an extension's decision point is recorded on its action's frame (:mod:`omen_core.hooks`): while one is open
#: nothing else of the action may come (but the cost of an answer, and the GM's calling the action off).
_DECISION_EVENTS: dict[type, Callable[[Any, Any], Frame]] = {
    DecisionOpened: lambda frame, event: replace(frame, decision=event, decisions=(*frame.decisions, event)),
    DecisionAnswered: lambda frame, event: replace(frame, answers=(*frame.answers, event)),
    DecisionClosed: lambda frame, event: replace(frame, decision=None),
}

_WHILE_DECIDING = (CostPaid, ActionCancelled)

_ROLL_FIELDS = {"hit": "hit_roll", "base_defense": "base_defense_roll", "active_defense": "active_defense_roll",
                "ability_damage": "ability_damage_roll"}


def _roll_field(frame: Frame, rolled: DiceRolled) -> tuple[str, bool] | None:
    """Where a roll goes in its action's frame: by purpose; a save's first die is the saver's (C29)."""
    if rolled.purpose == "damage":
        return "damage_rolls", True
    if isinstance(frame, SaveFrame) and rolled.purpose == "save":
        return ("saver_roll" if frame.saver_roll is None else "opposing_roll"), False
    name = _ROLL_FIELDS.get(rolled.purpose)
    return (name, False) if name is not None and isinstance(frame, AttackFrame) else None


def _record(frame: Frame, event: Event, step: Step) -> Frame:
    """The frame after ``event``: its step moved on, and the event in its named field."""
    kind = type(event)
    if kind in _DECISION_EVENTS:
        return _DECISION_EVENTS[kind](replace(frame, step=step), event)
    if frame.decision is not None and kind not in _WHILE_DECIDING:
        raise IllegalOrder(step, trigger_of(event), ["answer_decision"], None,
                           why=f"action {frame.action} waits on the decision point {frame.decision.decision!r}")
    if kind is DiceRolled and event.purpose == "reroll":  # type: ignore[union-attr]
        return _rerolled(replace(frame, step=step), event)  # type: ignore[arg-type]
    if kind is ConditionApplied and _applied_by_action(frame, event):  # type: ignore[arg-type]
        return replace(frame, step=step, applied=(*frame.applied, event))
    spot = _roll_field(frame, event) if isinstance(event, DiceRolled) else FRAME_FIELDS.get(type(event))
    if spot is None:
        return replace(frame, step=step)
    name, appends = spot
    if not hasattr(frame, name):  # an event no frame of this kind has a place for: the order check allowed it
        return replace(frame, step=step)
    value = (*getattr(frame, name), event) if appends else event
    if name == "passed":
        value = (*frame.passed, event.who)  # type: ignore[union-attr]
    return replace(frame, step=step, **{name: value})


def _applied_by_action(frame: Frame, event: ConditionApplied) -> bool:
    """Whether the action itself applied the condition (C38): stacks were added, and not by an answer to one of
    its decision points (whose consequences name the ability, its title), nor Dying from an answer's damage."""
    if event.added <= 0:
        return False
    answers = {d.title for d in frame.decisions}
    if event.condition == "Dying" and event.reason == DYING_REASON:
        return not frame.damage or frame.damage[-1].source not in answers
    return event.reason not in answers


def _rerolled(frame: Frame, event: DiceRolled) -> Frame:
    """A reroll (C39) replaces the face of one die of the attack's hit roll: the new face counts, the old one is
    kept on the die (``rerolled``)."""
    roll = frame.hit_roll if isinstance(frame, AttackFrame) else None
    if roll is None or event.rerolls != roll.counter or event.die is None or event.die >= len(roll.dice) \
            or len(event.dice) != 1:
        raise IllegalOrder(frame.step, "reroll", [], None, why="a reroll changes one die of the attack's hit roll")
    dice = list(roll.dice)
    old = dice[event.die]
    dice[event.die] = replace(old, face=event.dice[0].face, rerolled=old.face)
    assert isinstance(frame, AttackFrame)
    return replace(frame, hit_roll=replace(roll, dice=tuple(dice)))


def _new_frame(state: FightState, event: Event, seq: int, step: Step) -> Frame:
    """The frame a declaration opens; an attack's weapon is resolved from the attacker's sheet."""
    number = action_of(event) or seq
    if isinstance(event, AttackDeclared):
        attacker = state.combatants.get(event.attacker)
        weapon = attacker.sheet.weapon(event.weapon) if attacker is not None and event.weapon else None
        return AttackFrame(action=number, declared_at=seq, step=step, declaration=event, weapon=weapon)
    if isinstance(event, SaveCalled):
        return SaveFrame(action=number, declared_at=seq, step=step, declaration=event)
    if isinstance(event, AbilityUsed):
        return AbilityFrame(action=number, declared_at=seq, step=step, declaration=event)
    if isinstance(event, MomentReached):
        return MomentFrame(action=number, declared_at=seq, step=step, declaration=event)
    assert isinstance(event, MovementDeclared)
    return MoveFrame(action=number, declared_at=seq, step=step, declaration=event)


def _stack(state: FightState, event: Event, seq: int | None, trigger: str) -> tuple[Frame, ...]:
    """Advance the lifecycle of the action ``event`` belongs to; push new actions, pop finished ones."""
    stack = state.stack
    if trigger in OPENING:
        if stack:
            next_step(stack[-1].step, event, seq, trigger="nest")
            if not (isinstance(event, AttackDeclared) and event.reacting_to == stack[-1].action):
                raise IllegalOrder(stack[-1].step, "declare", ["a reaction"], seq,
                                   why=f"only a reaction may be declared while action {stack[-1].action} waits")
        step = next_step(Step.IDLE, event, seq)
        if stack and isinstance(event, AttackDeclared) and event.reaction == "ability" and stack[-1].decisions:
            stack = (*stack[:-1], replace(stack[-1], resume_at=stack[-1].decisions[-1].hook))
        return (*stack, _new_frame(state, event, seq or 0, step))
    if not stack:
        next_step(Step.IDLE, event, seq, trigger)
        return stack
    top = stack[-1]
    step = next_step(top.step, event, seq, trigger)
    action = getattr(event, "action", None)
    if action is not None and action != top.action:
        raise IllegalOrder(top.step, trigger, [], seq, why=f"an event of action {action} while action "
                                                          f"{top.action} is in progress")
    top = _record(top, event, step)
    if top.resume_at is not None:
        top = replace(top, resume_at=None)
    if step not in DONE:
        return (*stack[:-1], top)
    return _pop(stack[:-1], top)


def _pop(rest: tuple[Frame, ...], done: Frame) -> tuple[Frame, ...]:
    """A finished action leaves the stack; a finished reaction is recorded on the action it answered, as a hit only
    if it hit and was not caught (C22: a caught attack has none of its on-hit effects, so a caught Interrupt cancels
    nothing, C24)."""
    if rest and isinstance(done, AttackFrame) and done.declaration.reacting_to == rest[-1].action:
        caught = done.catch is not None and done.catch.caught
        hit = done.determination is not None and done.determination.hit and not caught
        outer = rest[-1]
        reaction = Reaction(who=done.declaration.attacker, action=done.action, hit=hit)
        return (*rest[:-1], replace(outer, reactions=(*outer.reactions, reaction)))
    return rest


# -- the fold --------------------------------------------------------------------------------------------------


def evolve(state: FightState, event: Event, seq: int, batch: int | None = None) -> FightState:
    """Fold one event written at ``seq`` in the batch starting at ``batch`` (default: a batch of its own). Pure.

    Raises :class:`~omen_core.machine.IllegalOrder` or
    :class:`~omen_core.machine.OutOfPhase` if the event cannot come now. Undo
    markers are not folded here: the walk applies them (:mod:`omen_core.walk`).
    Besides the fight, it keeps undo's three fields (see :class:`FightState`):
    a live command moves ``live_seq`` on, opens an undo point where
    :func:`is_undo_point` says so, and ends what a redo could take back.
    """
    kind = type(event)
    if batch is None:
        batch = seq
    changes: dict[str, Any] = {}
    if kind is CommandIssued:
        undo_batch = is_undo_batch(event)
    elif kind is DiceSourceChanged:
        undo_batch = False
    elif kind in UNORDERED:
        raise IllegalOrder(state.step, "undo", [], seq, why="an undo marker is applied by the walk, not folded")
    else:
        undo_batch = False
        phase = next_phase(state.phase, event, seq)
        stack = _stack(state, event, seq, trigger_of(event))
        if phase is not state.phase:
            changes["phase"] = phase
        if stack is not state.stack:
            changes["stack"] = stack
    if not undo_batch:
        changes["live_seq"] = seq
    if seq == batch:
        redo_stack = redo_stack_after(state.redo_stack, kind, seq, batch, undo_batch)
        if redo_stack is not state.redo_stack:
            changes["redo_stack"] = redo_stack
        if opens_undo_point(seq, batch, not state.stack, undo_batch):
            changes["undo_point"] = seq
    if kind is SeedRevealed:
        changes["undo_floor"] = seq + 1  # C42: the reveal is never undone
    fields = FIELD_EFFECTS.get(kind)
    if fields is not None:  # the effect's fields and the fold's in one copy (an effect sets none of the fold's)
        return replace(state, **fields(state, event), **changes)
    effect = EFFECTS.get(kind)
    after = state if effect is None else effect(state, event)
    return replace(after, **changes) if changes else after
