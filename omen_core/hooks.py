"""Hook points of an action's lifecycle, and the rows an extension answers them with: decision points and terms.

A hook point is a named moment of an action (:data:`HOOK_POINTS`). An
extension (:class:`Extension`, one module under :mod:`omen_core.extensions`)
is data: the decision points (:class:`Window`) it opens at a hook point, who
may answer them, with which choices at what cost, and the terms
(:class:`TermHandler`) it adds to a named total (hit, defense, damage), each
with its source. The engine does the rest: ``decide`` opens a window at its
hook point when someone may answer it, records each answer and its cost, closes
it and resumes the action from the hook point (one window at a time, C38); the
state records it on the action's frame; ``derive`` asks the term handlers for
their terms on every total it computes, so the log, the audit and explain see
them; ``options()``, ``omen status``, the server and the table page offer the
answers. Adding a window is one such module and its tests (docs/architecture.md,
"How to add a window").

Rows here may read the state and frames they are handed (typed only for the
checker: this module sits below the state), never import them.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol, TypeVar

import msgspec

from .commands import DeclareAttack
from .content import (
    SHIPPED_ABILITIES,
    ApplyCondition,
    ClearCondition,
    Consequence,
    DealDamage,
    Heal,
    MakeAttack,
    Reroll,
)
from .errors import OmenError
from .parts import Modifier, PoolTag

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from .events import AttackDeclared, DiceRolled, RollPurpose
    from .state import CombatantState, FightState, Frame

__all__ = ["HOOK_POINTS", "HookPoint", "TOTALS", "Total", "Moment", "Cost", "FREE", "amount_of", "Choice", "Window",
           "TermHandler", "Roll", "PoolDice", "AutoReroll", "AttackOption", "DefenseOverride", "Routing", "Landing",
           "Extension", "check_extension", "TurnAction", "Used", "Acting", "ExtensionFailed", "ExtensionInvalid",
           "ExtensionCrash", "guarded", "extension_boundary", "BUILT_IN_DECISIONS", "CHOICE_EFFECTS", "moment_said"]


class HookPoint(NamedTuple):
    """A hook point in words: when it comes, and what happens once the decision points open there close (an
    open decision's ``resumes``, docs/live.md)."""

    when: str
    then: str


#: The hook points an extension's window may open at, each with when it comes (combat.txt §Resolving an Attack,
#: §Resolving a Save) and how the fight goes on from it.
HOOK_POINTS: dict[str, HookPoint] = {
    "attack.declared": HookPoint(
        "an attack has been declared and its cost paid (after any Interrupt, C24), before its dice are rolled (C29): "
        "what answers an attack declared is decided here, the totals unknown",
        "the attack's dice are rolled (C29)"),
    "attack.rolled": HookPoint(
        "an attack's hit and base defense are rolled (C29), before the Active Defense window (C8): what changes the "
        "defense is decided here",
        "the Active Defense window opens if it is due (C8), then hit and crit are determined"),
    "attack.determined": HookPoint(
        "an attack's hit and crit are determined (C5, C7), and a thrown item that would hit was let hit at its "
        "Catch window (C22: a caught one has no on-hit effects), before routing (C12) or the damage: what answers a "
        "hit, a miss or a crit is decided here",
        "routing or the damage, as the hit calls for (C12)"),
    "attack.damaged": HookPoint(
        "an attack's damage has landed on its target (C13) and its consequences are done (C25), before it settles; "
        "only if the attack's own damage (its hit's and its branches') reached the target: what answers damage "
        "taken is decided here",
        "the attack settles"),
    "save.resolved": HookPoint(
        "a save is resolved (C15) and its branch's consequences are done (C25), before it settles; or a save-ends "
        "save is resolved as its condition ticks (C40), a success having cleared it: what answers a save made or "
        "failed is decided here",
        "the save settles (a save-ends save: the conditions due go on ticking, C40, then the turn or the round)"),
    "move.left": HookPoint(
        "a combatant's movement has completed and it has left the reach it said it would leave (C23), after any "
        "Attack of Opportunity, before the move settles: what answers an enemy leaving reach is decided here",
        "the move settles"),
    "condition.applied": HookPoint(
        "an action has applied a condition (C28, C40) and done everything else it does (after its other hook "
        "points), before it settles; only conditions the action itself applied (an attack's or a save's branches, "
        "an ability's effects, Dying from its own damage), not an answer's (C38): what answers a condition applied "
        "is decided here",
        "the action settles"),
    "check.resolved": HookPoint(
        "a static check or a contest is resolved (C16), outside any action: what answers a check made or failed "
        "(each side of a contest its own outcome; a tie is no success) is decided here",
        "the fight goes on where the check left it"),
    "turn.start": HookPoint(
        "a combatant's turn has started: its Bonus Actions refilled, what expires at the start of its turn gone, its "
        "deferred costs settled and its conditions ticked (C40, C41); then the turn is its to play",
        "the turn is its combatant's to play"),
    "turn.end": HookPoint(
        "a combatant ends its turn, before what expires at its end goes, its deferred costs settle and its "
        "conditions tick (C40, C41)",
        "the turn ends: what expires at its end goes, deferred costs settle, conditions tick (C40, C41), and the "
        "next turn starts"),
    "round.end": HookPoint(
        "the last turn of the round is over, before the conditions that tick at the round's end do (C40) and the "
        "next round starts",
        "the conditions that tick at the round's end do (C40), and the next round starts"),
}

def moment_said(moment: str, round_: object, who: str, other: str | None = None, outcome: str | None = None,
                condition: str | None = None) -> str:
    """A moment outside any action that abilities answer (C38), in words, its combatants as the caller names them
    (``who``, ``other``): the start or the end of whose turn, the end of which round, whose check (a contest:
    against whom) or whose save-ends save against which condition (C40), and how it went for them.

    >>> moment_said("round.end", 2, ""), moment_said("turn.start", 1, "Ana")
    ('the end of round 2', "the start of Ana's turn")
    >>> moment_said("save.resolved", 1, "Kael", "Vesh", "failure", "Poisoned")
    "Kael's save against Poisoned (failed; save ends, C40)"
    """
    went = "made" if outcome == "success" else "failed"
    if moment == "round.end":
        return f"the end of round {round_}"
    if moment == "check.resolved":
        return f"{who}'s{f' contest against {other}' if other else ' check'} ({went})"
    if moment == "save.resolved":
        return f"{who}'s save against {condition} ({went}; save ends, C40)"
    return f"the {'start' if moment == 'turn.start' else 'end'} of {who}'s turn"


#: The kinds of the built-in decision points (``omen_core.decisions.DECISION_POINTS``, which sits above this module:
#: tests/test_hooks.py keeps the two equal). A window of one of these kinds would be taken for the built-in one.
BUILT_IN_DECISIONS: tuple[str, ...] = ("active_defense", "interrupt", "attack_of_opportunity", "catch", "routing",
                                       "will_conversion", "initiative_tie")

#: What a window's choice may do at each hook point, as the lifecycle step there takes it (the same rule an ability
#: written as data follows, docs/abilities.md "Triggered abilities"): ``consequences`` (damage, heal, condition,
#: clear, done at once) once the hit is known or outside an attack; ``attack`` (C38) only in answer to an attack
#: whose hit is known; ``rerolls`` of the hit dice (C39) once they are seen, before the hit is determined.
CHOICE_EFFECTS: dict[str, frozenset[str]] = {
    "attack.declared": frozenset(),
    "attack.rolled": frozenset({"rerolls"}),
    "attack.determined": frozenset({"consequences", "attack"}),
    "attack.damaged": frozenset({"consequences", "attack"}),
    **{hook: frozenset({"consequences"}) for hook in ("save.resolved", "move.left", "condition.applied",
                                                      "check.resolved", "turn.start", "turn.end", "round.end")},
}

Total = Literal["hit", "defense", "damage"]
#: The totals a term handler may add to (C5 the hit total, C10/C11 the defense, C12 the damage).
TOTALS: tuple[Total, ...] = ("hit", "defense", "damage")


class Moment(NamedTuple):
    """What the engine knows at a hook point, for a window to decide whether it can change anything: in an attack
    the hit total and the defense as they stand (C5, C10, C11), once determined whether it hit and crit (None
    before), and at ``attack.damaged`` the damage its target took (C13); in a save, the saver's total and the
    opposing one and whether the saver succeeded (C15)."""

    attack_total: int
    defense_total: int
    hit: bool | None = None
    crit: bool | None = None
    damage: int = 0
    saved: bool | None = None


@dataclass(frozen=True)
class Cost:
    """What something costs, paid through the one ledger (:mod:`omen_core.ledger`; C20, C22, C41): Actions,
    Movement Actions and Bonus Actions, HP and Will. Each is a ``cost_paid`` of its own when paid, undone with the
    command that paid it."""

    actions: int = 0
    movement: int = 0
    bonus_actions: int = 0
    hp: int = 0
    will: int = 0

    def entries(self) -> tuple[tuple[str, int], ...]:
        """The resources to pay and how much of each, in the order they are paid (as ``cost_paid`` names them)."""
        return tuple((resource, amount) for resource, amount in (
            ("action", self.actions), ("movement_action", self.movement), ("bonus_action", self.bonus_actions),
            ("hp", self.hp), ("will", self.will)) if amount)

    def words(self) -> str:
        """The cost in words: ``1 Bonus Action``, ``1 Action and 2 HP``, or ``free``."""
        return " and ".join(amount_of(resource, amount) for resource, amount in self.entries()) or "free"


def amount_of(resource: str, amount: int) -> str:
    """An amount of a resource a cost takes, in the rulebook's words (``2 Bonus Actions``, ``3 HP``)."""
    plural = "s" if amount != 1 and resource not in ("hp", "will") else ""
    return f"{amount} {_WORDS.get(resource, resource.replace('_', ' '))}{plural}"


_WORDS = {"action": "Action", "movement_action": "Movement Action", "bonus_action": "Bonus Action", "hp": "HP",
          "will": "Will"}
FREE = Cost()


@dataclass(frozen=True)
class Choice:
    """One answer to a window: its name (the ``choice`` of ``answer_decision``), what it does in words, what it
    costs (:class:`Cost`), whether making it closes the window for everyone still to answer, and what it does at
    once (``consequences``, in written order, C25: the one answering is their actor, the other party of the
    action, the attacker or the attack's target, their target), the hit-pool dice it rerolls (``rerolls``,
    C39: the lowest die of each pool named), and the attack it then makes on that other party (``attack``, C38)."""

    name: str
    label: str
    cost: Cost = FREE
    closes: bool = False
    consequences: tuple[Consequence, ...] = ()
    rerolls: tuple[Reroll, ...] = ()
    attack: MakeAttack | None = None


@dataclass(frozen=True)
class Window:
    """A decision point an extension opens at ``hook``: ``responders(state, frame, moment)`` says who may answer it
    now, in the order they are asked (C38: the acting combatant first, then initiative order) — none, and it does
    not open; each answers once with one of ``choices``; when all have answered (or a closing choice is made)
    it closes and the action goes on from ``hook``. ``target(state, frame, who)``, if given, names the target of
    ``who``'s answer (by default the other party of the action). ``passed_over(state, frame, moment)``, if given,
    says whom the row's trigger names but ``responders`` leaves out, why, and the rank of that reason (before or
    after a cost it cannot pay: :data:`omen_core.abilities.COST_RANK`; explain derives it, C38)."""

    kind: str
    title: str
    rule: str
    hook: str
    choices: tuple[Choice, ...]
    responders: Callable[[FightState, Frame, Moment], tuple[str, ...]]
    target: Callable[[FightState, Frame, str], str] | None = None
    passed_over: Callable[[FightState, Frame, Moment], tuple[tuple[str, str, int], ...]] | None = None

    def choice(self, name: str) -> Choice | None:
        """The choice called ``name``, if this window has one."""
        return next((c for c in self.choices if c.name == name), None)


@dataclass(frozen=True)
class TermHandler:
    """Terms an extension adds to a named total of an action, each a :class:`~omen_core.parts.Modifier` naming its
    source: ``terms(state, frame)`` reads what the frame recorded (an answer to its window, say)."""

    total: Total
    terms: Callable[[FightState, Frame], tuple[Modifier, ...]]


Roll = Literal["hit", "damage"]


@dataclass(frozen=True)
class PoolDice:
    """Dice an ability adds to an attack's roll (C6, C12, C37): ``roll`` "hit" (its primary or FCS pool) or
    "damage" (dice rolled on a hit before the damage is resolved, as Brute Rage's); ``dice(state, frame)`` gives
    them as (pool tag, sides). Added dice come after the pool's own dice of the same tag (C29, C39); ``origin``,
    the ability's name, is recorded on each (``Die.origin``; none for the features recorded before it was)."""

    roll: Roll
    dice: Callable[[FightState, Frame], tuple[tuple[PoolTag, int], ...]]
    origin: str = ""


@dataclass(frozen=True)
class AutoReroll:
    """Automatic rerolls (C39): ``dice(state, frame)`` gives the indices of the attack's hit-roll dice to roll again
    right after the roll (each once), and ``origin`` the ability that rerolls them."""

    origin: str
    dice: Callable[[FightState, Frame], tuple[int, ...]]


@dataclass(frozen=True)
class AttackOption:
    """An argument of ``declare_attack`` an ability gives meaning to (Brute Rage's ``rage``): ``offered(state,
    who)`` says whether ``who`` may set it (``options()`` offers the attack with it set only then), and a command
    setting it for one who may not is refused with ``rule`` and ``refusal(who)``."""

    field: str
    offered: Callable[[FightState, str], bool]
    rule: str
    refusal: Callable[[str], str]


@dataclass(frozen=True)
class DefenseOverride:
    """An eligibility override (C37, §Which Defenses Apply): ``allows(state, declaration, defense)`` says the target
    may use ``defense`` against this attack although the table refuses it; ``name``, the ability that allows it
    (what explain says)."""

    allows: Callable[[FightState, AttackDeclared, str], bool]
    name: str = ""


@dataclass(frozen=True)
class Routing:
    """Result routing (C12): ``routes(state, frame)`` says the attacker of this hit may choose the hit-pool die that
    feeds damage (the routing window opens)."""

    routes: Callable[[FightState, Frame], bool]


@dataclass(frozen=True)
class Landing:
    """Where damage lands (C13, C31): ``lands(state, who)`` is "will" (converted, what exceeds the Will left going
    to HP), "choice" (the defender chooses, hit by hit) or None (on HP, unless another extension says otherwise);
    physical damage only."""

    lands: Callable[[FightState, str], Literal["will", "choice"] | None]


class Acting(Protocol):
    """What a :class:`TurnAction`'s handler is handed (the decider's draft of the command, ``omen_core.decide``):
    the fight's state as it stands, its combatants, the fight's dice, and the one way to record what happens.
    Every event it emits is checked by the fold as it comes (a combatant that does not exist, an event the action's
    step does not take, a refusal it raises: the whole command is refused, the log left as it was)."""

    @property
    def state(self) -> FightState: ...

    def emit(self, event: Any) -> Any:
        """Record ``event`` (an :mod:`omen_core.events` struct) as the command's next event, folded at once."""

    def roll(self, purpose: RollPurpose, roller: str, pool: Iterable[tuple[PoolTag, int]]) -> DiceRolled:
        """Roll ``pool`` (pool tag, sides) in C29 order with the fight's dice, recorded as ``dice_rolled``."""

    def combatant(self, who: str) -> CombatantState:
        """The combatant ``who`` as it stands (refused with a clear error if there is none)."""


class Used(NamedTuple):
    """The use of a :class:`TurnAction`: the action's number (its events carry it), its owner, its target."""

    action: int
    who: str
    target: str


@dataclass(frozen=True)
class TurnAction:
    """An action an extension adds, taken on its owner's turn with the ``use_ability`` command (C37), as an
    ability written as data is: offered by ``options()``, the server and the table page, refused with the rule
    and why, recorded as ``ability_used`` naming the extension, its ``cost`` paid through the one ledger (C20,
    C22; outside the rounds no turn's Actions or Movement are counted; one costing an Action is an Action
    declared: adjacent enemies may Interrupt it first, C24), then ``does(acting, used)`` records what it
    does, and the action settles. ``target``: whom it may be used on (its owner, an ally or the owner, an enemy,
    anyone), ``within_reach`` (C23); ``refusal(state, who, target)``: why it may not be used now beyond those (None:
    it may), checked before anything is recorded."""

    summary: str
    cost: Cost
    does: Callable[[Acting, Used], None]
    rule: str = "C37"
    target: Literal["self", "ally", "enemy", "any"] = "self"
    within_reach: bool = False
    refusal: Callable[[FightState, str, str], str | None] | None = None


@dataclass(frozen=True)
class Extension:
    """What one extension module declares (its ``EXTENSION``): an id (what a sheet's ``abilities`` lists), a name,
    its windows and its handlers at the hook points: terms on totals, dice in pools, attack options, eligibility
    overrides, routing, where damage lands; and an ``action`` its owner takes on its turn. ``keys``: the sheet
    keys that give it (the shipped features, whose keys are their shorthands); an extension without keys is given
    by listing its id in a sheet's ``abilities``."""

    id: str
    name: str
    keys: str = ""
    windows: tuple[Window, ...] = ()
    terms: tuple[TermHandler, ...] = ()
    pools: tuple[PoolDice, ...] = ()
    attack_options: tuple[AttackOption, ...] = ()
    overrides: tuple[DefenseOverride, ...] = ()
    routing: tuple[Routing, ...] = ()
    landing: tuple[Landing, ...] = ()
    rerolls: tuple[AutoReroll, ...] = ()
    action: TurnAction | None = None

    @property
    def listed(self) -> bool:
        """Whether a sheet gives it by listing its id in ``abilities`` (else by its own ``keys``)."""
        return not self.keys


def check_extension(extension: Extension, module: str) -> list[str]:
    """What is wrong with an extension's rows, each naming the module and the row: the registry refuses to load it.
    An unknown hook point or total, a window without choices or with a choice named twice, two windows of one kind,
    a window kind that is a built-in decision point's or a shipped ability's, an id that is a shipped ability's, a
    handler that is not callable, a field its events would record that is not of its type (a ``rule`` that is not a
    string, a cost that is not whole numbers 0 or more), a consequence its struct refuses, and a consequence, an
    attack or a reroll at a hook point whose step cannot take it (:data:`CHOICE_EFFECTS`)."""
    rows = ("windows", "terms", "pools", "attack_options", "overrides", "routing", "landing", "rerolls")
    loose = [f"{module}: EXTENSION: {field} is {type(getattr(extension, field)).__name__}, not a tuple of rows"
             for field in rows if not isinstance(getattr(extension, field), tuple)]
    loose += [f"{module}: window {w.kind!r}: choices is {type(w.choices).__name__}, not a tuple of Choice"
              for w in (extension.windows if not loose else ()) if not isinstance(w.choices, tuple)]
    if loose:  # nothing below can walk them
        return loose
    problems = [f"{module}: {row}: {reason}" for row, reason in _row_problems(extension)]
    problems += [f"{module}: {row}: {reason}" for row, reason in _field_problems(extension)]
    kinds = [window.kind for window in extension.windows]
    for window in extension.windows:
        where = f"{module}: window {window.kind!r}"
        if window.hook not in HOOK_POINTS:
            problems.append(f"{where}: unknown hook point {window.hook!r} (hook points: {', '.join(HOOK_POINTS)})")
        if kinds.count(window.kind) > 1 and kinds.index(window.kind) == extension.windows.index(window):
            problems.append(f"{where}: the kind is used by two windows (answer_decision names a window by its kind)")
        names = [getattr(c, "name", repr(c)) for c in window.choices]
        if not names:
            problems.append(f"{where}: no choices")
        if len(set(names)) != len(names):
            problems.append(f"{where}: a choice is named twice ({', '.join(map(str, names))})")
    for handler in extension.terms:
        if handler.total not in TOTALS:
            problems.append(f"{module}: terms for unknown total {handler.total!r} (totals: {', '.join(TOTALS)})")
    return problems


def _field_problems(extension: Extension) -> Iterator[tuple[str, str]]:
    """The fields of ``extension``'s rows that are not of their type (what its events record: ``decision_opened``'s
    kind, rule, title, choices and labels, ``cost_paid``'s amounts, ``ability_used``'s id and name), the names that
    clash with a built-in decision point or a shipped ability, and the choices that do what their hook point
    cannot take, as (row, reason)."""
    if isinstance(extension.id, str) and extension.id in SHIPPED_ABILITIES.abilities:
        yield "EXTENSION", (f"id {extension.id!r} is a shipped ability's (omen_core/data/abilities.toml): a sheet "
                            f"listing {extension.id!r} would get the extension, not the ability: rename it")
    yield from _typed("EXTENSION", extension, keys=str)
    for window in extension.windows:
        where = f"window {window.kind!r}"
        yield from _typed(where, window, kind=_WORD, title=str, rule=str, hook=str)
        if window.kind in BUILT_IN_DECISIONS:
            yield where, (f"kind {window.kind!r} is a built-in decision point's (omen_core.decisions: "
                          f"{', '.join(BUILT_IN_DECISIONS)}): rename it")
        elif isinstance(window.kind, str) and window.kind in SHIPPED_ABILITIES.abilities:
            yield where, (f"kind {window.kind!r} is a shipped ability's decision point "
                          "(omen_core/data/abilities.toml): rename it")
        for choice in (c for c in window.choices if isinstance(c, Choice)):
            yield from _choice_problems(f"{where} choice {choice.name!r}", choice, window.hook)
    for pool in extension.pools:
        yield from _typed(f"{pool.roll} dice", pool, origin=str)
    for reroll in extension.rerolls:
        yield from _typed("automatic rerolls", reroll, origin=str)
    for option in extension.attack_options:
        yield from _typed(f"attack option {option.field!r}", option, field=_WORD, rule=str)
        if isinstance(option.field, str) and option.field and option.field not in _OPTION_FIELDS:
            yield (f"attack option {option.field!r}", f"field {option.field!r} is not a yes-or-no argument of "
                   f"declare_attack an ability may give meaning to ({', '.join(sorted(_OPTION_FIELDS))}): a command "
                   "could never set it")
    for override in extension.overrides:
        yield from _typed("defense override", override, name=str)
    action = extension.action
    if action is not None:
        yield from _typed("action", action, summary=str, rule=str, within_reach=bool)
        yield from _cost_problems("action", action.cost)
        if action.target not in ("self", "ally", "enemy", "any"):
            yield "action", f"target {action.target!r} is not one of self, ally, enemy, any"


#: The arguments of ``declare_attack`` an :class:`AttackOption` may give meaning to: its yes-or-no ones but
#: ``unarmed``, which the core rules give theirs (C12).
_OPTION_FIELDS = frozenset(f.name for f in msgspec.structs.fields(DeclareAttack) if f.type is bool) - {"unarmed"}
#: A field that must be a non-empty string (a name something else refers to).
_WORD = "word"
#: The consequence structs a choice may carry, by name.
_CONSEQUENCES = (DealDamage, ApplyCondition, ClearCondition, Heal)


def _typed(row: str, value: object, **fields: type | str) -> Iterator[tuple[str, str]]:
    """Each of ``fields`` of ``value`` that is not of its type (``bool`` is no ``int``; :data:`_WORD`: a non-empty
    string), as (row, reason)."""
    for field, kind in fields.items():
        got = getattr(value, field)
        if kind == _WORD:
            if not isinstance(got, str) or not got:
                yield row, f"{field} {got!r} is {type(got).__name__}, not a non-empty string"
        elif kind is bool and not isinstance(got, bool):
            yield row, f"{field} {got!r} is {type(got).__name__}, not a bool"
        elif kind is str and not isinstance(got, str):
            yield row, f"{field} {got!r} is {type(got).__name__}, not a string"


def _cost_problems(row: str, cost: object) -> Iterator[tuple[str, str]]:
    """What is wrong with a cost: not a :class:`Cost`, or an amount that is not a whole number 0 or more (what
    ``cost_paid`` records)."""
    if not isinstance(cost, Cost):
        yield row, f"cost {cost!r} is {type(cost).__name__}, not a Cost"
        return
    for field in dataclasses.fields(Cost):
        amount = getattr(cost, field.name)
        if not isinstance(amount, int) or isinstance(amount, bool) or amount < 0:
            yield row, f"cost: {field.name} {amount!r} is {type(amount).__name__}, not a whole number 0 or more"


def _choice_problems(row: str, choice: Choice, hook: str) -> Iterator[tuple[str, str]]:
    """What is wrong with one choice: a field ``decision_opened`` or ``decision_answered`` records that is not of
    its type, its cost, a consequence, reroll or attack its struct refuses, and what it does at ``hook`` that the
    lifecycle step there cannot take (:data:`CHOICE_EFFECTS`)."""
    yield from _typed(row, choice, name=_WORD, label=str, closes=bool)
    yield from _cost_problems(row, choice.cost)
    for field, kinds in (("consequences", _CONSEQUENCES), ("rerolls", (Reroll,))):
        given = getattr(choice, field)
        if not isinstance(given, tuple):
            yield row, f"{field} is {type(given).__name__}, not a tuple of {field}"
            continue
        for i, value in enumerate(given):
            yield from _struct_problems(f"{row}", f"{field}[{i}]", value, kinds)
    if choice.attack is not None:
        yield from _struct_problems(row, "attack", choice.attack, (MakeAttack,))
    allowed = CHOICE_EFFECTS.get(hook)
    if allowed is None:
        return  # an unknown hook point: refused already
    if choice.consequences and "consequences" not in allowed:
        done = ", ".join(h for h, can in CHOICE_EFFECTS.items() if "consequences" in can)
        yield row, (f"consequences at {hook}: the attack's step there takes none (damage, heal, condition and clear "
                    f"are done at {done}; docs/abilities.md)")
    if choice.attack is not None and "attack" not in allowed:
        yield row, f"an attack at {hook}: an attack answers an attack (attack.determined, attack.damaged; C38)"
    if choice.rerolls and "rerolls" not in allowed:
        yield row, (f"rerolls at {hook}: a chosen reroll of the hit dice comes once they are seen (attack.rolled; "
                    "C39)")


def _struct_problems(row: str, field: str, value: object, kinds: tuple[type[msgspec.Struct], ...]
                     ) -> Iterator[tuple[str, str]]:
    """What is wrong with a consequence, reroll or attack: not one of ``kinds``, or a value its struct's schema
    refuses (msgspec checks a struct's types and constraints when decoding, not when it is built in code: it is
    decoded again from its own builtins, as content is)."""
    if not isinstance(value, kinds):
        names = ", ".join(k.__name__ for k in kinds)
        what = "a consequence" if len(kinds) > 1 else f"a {names}"
        yield row, f"{field}: {type(value).__name__} is not {what}" + (f" ({names})" if len(kinds) > 1 else "")
        return
    try:
        msgspec.convert(msgspec.to_builtins(value), type(value))
    except (msgspec.ValidationError, TypeError, ValueError) as exc:
        yield row, f"{field}: {exc}"
        return
    if isinstance(value, (ApplyCondition, ClearCondition)) and value.condition == "Dying":  # as content's (C36)
        yield row, (f"{field}: Dying follows HP: it is set when HP reaches 0 (C28) and ends when HP rises above 0 "
                    "(C36), never by a condition effect: deal damage or heal instead")


def _row_problems(extension: Extension) -> Iterator[tuple[str, str]]:
    """The rows of ``extension`` whose handlers are not callable (``responders=None``, say), or whose id or name is
    not a word, as (row, reason)."""
    if not isinstance(extension.id, str) or not extension.id:
        yield "EXTENSION", f"id {extension.id!r} is not a non-empty string"
    if not isinstance(extension.name, str) or not extension.name:
        yield "EXTENSION", f"name {extension.name!r} is not a non-empty string"
    rows: list[tuple[str, object, bool]] = []
    for w in extension.windows:
        rows += [(f"window {w.kind!r} responders", w.responders, False), (f"window {w.kind!r} target", w.target, True)]
        rows += [(f"window {w.kind!r} choice {c!r}", None, False) for c in w.choices if not isinstance(c, Choice)]
    rows += [(f"terms on {h.total}", h.terms, False) for h in extension.terms]
    rows += [(f"{p.roll} dice", p.dice, False) for p in extension.pools]
    rows += [(f"attack option {o.field!r}", f, False) for o in extension.attack_options for f in (o.offered, o.refusal)]
    rows += [("defense override", o.allows, False) for o in extension.overrides]
    rows += [("routing", r.routes, False) for r in extension.routing]
    rows += [("landing", x.lands, False) for x in extension.landing]
    rows += [("automatic rerolls", r.dice, False) for r in extension.rerolls]
    if extension.action is not None:
        rows += [("action", extension.action.does, False), ("action refusal", extension.action.refusal, True)]
    for row, fn, optional in rows:
        if not callable(fn) and not (optional and fn is None):
            yield row, ("is not a Choice" if " choice " in row else f"{fn!r} is not callable")


class ExtensionFailed(OmenError):
    """Code of an extension failed while a command was decided (or its answers probed): ``extension`` (its id),
    ``module`` (where it is written), ``hook`` (which of its callables: ``window 'shield_wall' responders``,
    ``terms on defense``...), ``error`` (the original exception's type, or ``bad result``) and ``reason`` (its
    message, or what is wrong with what it returned). Raised chained from the original exception; nothing is
    written (the CLI prints it in one line, exit 2)."""

    def __init__(self, extension: str, module: str, hook: str, error: str, reason: str):
        self.extension, self.module, self.hook, self.error, self.reason = extension, module, hook, error, reason
        super().__init__(f"extension {extension!r} ({module}) failed in its {hook}: {error}: {reason}")

    def __reduce__(self) -> tuple[type[ExtensionFailed], tuple[str, str, str, str, str]]:
        """Pickled whole (a simulation's worker process sends it back as it was raised)."""
        return type(self), (self.extension, self.module, self.hook, self.error, self.reason)


class ExtensionInvalid(OmenError):
    """An extension the registry refuses to load: ``module`` (or modules, for two sharing an id) and ``reason``,
    which names the row at fault (``window 'shield_wall': unknown hook point ...``, :func:`check_extension`).
    Nothing runs until it is fixed (the registry is built when omen_core is imported)."""

    def __init__(self, module: str, reason: str):
        self.module, self.reason = module, reason
        super().__init__(f"extension {module} cannot be loaded: {reason}")


class ExtensionCrash(Exception):
    """An :class:`ExtensionFailed` on its way to the boundary (:func:`extension_boundary`): not an OmenError, so
    that no probe of the engine's (which reads an OmenError as "the rules refuse it") hides a broken extension."""

    def __init__(self, failed: ExtensionFailed):
        self.failed = failed
        super().__init__(str(failed))


@contextlib.contextmanager
def extension_boundary() -> Iterator[None]:
    """The one boundary of extension code: a failure inside it (:class:`ExtensionCrash`) leaves as the
    :class:`ExtensionFailed` it carries, chained from the original exception. Where a command is decided
    (``decide.decided``) and where answers are probed (``options.options``)."""
    try:
        yield
    except ExtensionCrash as crash:
        raise crash.failed from crash.__cause__


_F = TypeVar("_F", bound=Callable[..., Any])
_Check = Callable[[tuple[Any, ...], Any], "str | None"]


def _combatant_ids(args: tuple[Any, ...], result: Any) -> str | None:
    """What is wrong with a ``responders`` answer: not a tuple or list of the fight's combatant ids."""
    if not isinstance(result, tuple | list):
        return f"returned {result!r}, not a tuple of combatant ids"
    unknown = [who for who in result if not isinstance(who, str) or who not in args[0].combatants]
    return f"returned {unknown[0]!r}, not a combatant of this fight" if unknown else None


def _combatant_id(args: tuple[Any, ...], result: Any) -> str | None:
    """What is wrong with a window's ``target`` answer: not one of the fight's combatant ids."""
    return None if isinstance(result, str) and result in args[0].combatants else (
        f"returned {result!r}, not a combatant of this fight")


def _modifiers(_args: tuple[Any, ...], result: Any) -> str | None:
    """What is wrong with a term handler's answer: not a tuple of :class:`~omen_core.parts.Modifier`."""
    if isinstance(result, list):
        return "returned a list, not a tuple of omen_core.parts.Modifier"
    if not isinstance(result, tuple):
        return f"returned {result!r}, not a tuple of omen_core.parts.Modifier"
    wrong = [m for m in result if not isinstance(m, Modifier)]
    if wrong:
        return f"returned {wrong[0]!r} among its terms, not an omen_core.parts.Modifier"
    for m in result:  # a Struct checks no field's type when made: a float, a bool or a text here would reach the log
        try:  # (a float's term was recorded, and the log then failed verify: an extension tester)
            msgspec.convert(msgspec.structs.asdict(m), Modifier)
        except msgspec.ValidationError as exc:
            return f"returned {m!r} among its terms: {exc} (a Modifier's source is a text, its value a whole number)"
    return None


def _guard(fn: _F, extension: str, module: str, hook: str, check: _Check | None = None) -> _F:
    """``fn`` (an extension's callable), raising :class:`ExtensionCrash` for what it raises (an OmenError it raises
    on purpose, a refusal, goes through as it is) and for an answer ``check`` finds wrong."""

    def call(*args: Any) -> Any:
        try:
            result = fn(*args)
        except (OmenError, ExtensionCrash):
            raise
        except (Exception, SystemExit) as exc:  # (sys.exit in an extension is its failure, not omen's exit code)
            raise ExtensionCrash(ExtensionFailed(extension, module, hook, type(exc).__name__, str(exc))) from exc
        problem = check(args, result) if check is not None else None
        if problem is not None:
            raise ExtensionCrash(ExtensionFailed(extension, module, hook, "bad result", problem))
        return result

    call.__wrapped__ = fn  # type: ignore[attr-defined]
    call.__name__ = getattr(fn, "__name__", "call")
    return call  # type: ignore[return-value]


def guarded(extension: Extension, module: str) -> Extension:
    """``extension`` with each of its callables guarded (:func:`_guard`), as the registry hands them out: a failure
    inside one is an :class:`ExtensionFailed` naming the extension, ``module`` and the row; a ``responders``
    answering someone not in the fight, or a term handler answering what is not a tuple of modifiers, too."""
    e, m = extension.id, module

    def window(w: Window) -> Window:
        target = None if w.target is None else _guard(w.target, e, m, f"window {w.kind!r} target", _combatant_id)
        return dataclasses.replace(w, responders=_guard(w.responders, e, m, f"window {w.kind!r} responders",
                                                        _combatant_ids), target=target)

    action = extension.action
    if action is not None:
        refusal = None if action.refusal is None else _guard(action.refusal, e, m, "action refusal")
        action = dataclasses.replace(action, does=_guard(action.does, e, m, "action"), refusal=refusal)
    return dataclasses.replace(
        extension,
        windows=tuple(window(w) for w in extension.windows),
        terms=tuple(dataclasses.replace(h, terms=_guard(h.terms, e, m, f"terms on {h.total}", _modifiers))
                    for h in extension.terms),
        pools=tuple(dataclasses.replace(p, dice=_guard(p.dice, e, m, f"{p.roll} dice")) for p in extension.pools),
        attack_options=tuple(dataclasses.replace(o, offered=_guard(o.offered, e, m, f"attack option {o.field!r}"),
                                                 refusal=_guard(o.refusal, e, m, f"attack option {o.field!r} refusal"))
                             for o in extension.attack_options),
        overrides=tuple(dataclasses.replace(o, allows=_guard(o.allows, e, m, "defense override"))
                        for o in extension.overrides),
        routing=tuple(dataclasses.replace(r, routes=_guard(r.routes, e, m, "routing")) for r in extension.routing),
        landing=tuple(dataclasses.replace(x, lands=_guard(x.lands, e, m, "landing")) for x in extension.landing),
        rerolls=tuple(dataclasses.replace(r, dice=_guard(r.dice, e, m, "automatic rerolls"))
                      for r in extension.rerolls),
        action=action)
