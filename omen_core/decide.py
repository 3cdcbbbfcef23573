"""Commands, and ``decide``: check a command against the rules and the state, and return its events.

``decide`` is pure but for the dice source it is handed: it reads the state,
asks the source for faces in the order of C29, and returns new events, or
raises a :class:`~omen_core.errors.RuleViolation` naming the rule.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from .content import ATTRIBUTES, AttributeName, CombatantSheet
from .dice import DiceSource, RollRequest, roll
from .errors import RuleViolation, SeedMismatch, UnknownCombatant
from .events import (
    CombatantJoined,
    ContestResolved,
    DiceRolled,
    DiceSourceKind,
    Event,
    FightStarted,
    Modifier,
    PoolTag,
    RollPurpose,
    RollTotal,
    SaveResolved,
    SeedRevealed,
    StaticCheckResolved,
)
from .dice import commitment
from .rules.checks import contest_winner, roll_total, save_succeeds, static_outcome
from .state import CombatantState, FightState

__all__ = [
    "CommandBase",
    "CheckSpec",
    "StartFight",
    "Join",
    "StaticCheck",
    "Contest",
    "Save",
    "RevealSeed",
    "Command",
    "decide",
]


class CommandBase(msgspec.Struct, frozen=True, tag_field="command", tag=str.lower,
                  forbid_unknown_fields=True, kw_only=True):
    """Base of every command; the ``command`` tag is the class name in lower case."""


class CheckSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Who rolls, with which skill (C2) or bare attribute (C1), and any situational modifiers."""

    who: str
    skill: str | None = None
    attribute: AttributeName | None = None
    modifiers: tuple[Modifier, ...] = ()


class StartFight(CommandBase, kw_only=True):
    """Open a fight: its ruleset, dice source and, for seeded dice, the seed commitment."""

    ruleset: str = "core"
    dice: DiceSourceKind
    seed_commitment: str | None = None
    title: str = ""


class Join(CommandBase, kw_only=True):
    """Add a combatant from its sheet."""

    sheet: CombatantSheet


class StaticCheck(CommandBase, kw_only=True):
    """A check against a difficulty set by the GM (C16)."""

    check: CheckSpec
    difficulty: int


class Contest(CommandBase, kw_only=True):
    """A contested check between an initiator and a defender (C16)."""

    initiator: CheckSpec
    defender: CheckSpec


class Save(CommandBase, kw_only=True):
    """An effect calls for a save: the saver's die against the opposing die (C15)."""

    effect: Annotated[str, msgspec.Meta(min_length=1)]
    saver: CheckSpec
    opposing: CheckSpec


class RevealSeed(CommandBase, kw_only=True):
    """Disclose the seed of the seeded dice (hex); it must match the commitment."""

    seed: str


Command = StartFight | Join | StaticCheck | Contest | Save | RevealSeed


def decide(state: FightState, command: Command, dice: DiceSource) -> list[Event]:
    """The events ``command`` produces in ``state``, rolling with ``dice``; raises if it breaks a rule."""
    if not state.started and not isinstance(command, StartFight):
        raise RuleViolation("setup", "the fight has not started: start it first")
    match command:
        case StartFight():
            return _start(state, command)
        case Join(sheet=sheet):
            return _join(state, sheet)
        case StaticCheck():
            return _static_check(state, command, dice)
        case Contest():
            return _contest(state, command, dice)
        case Save():
            return _save(state, command, dice)
        case RevealSeed():
            return _reveal_seed(state, command)
    raise TypeError(f"not a command: {command!r}")


def _start(state: FightState, cmd: StartFight) -> list[Event]:
    if state.started:
        raise RuleViolation("setup", f"fight {state.fight_id!r} has already started")
    if (cmd.dice == "seeded") != (cmd.seed_commitment is not None):
        raise RuleViolation("dice", "a seed commitment is recorded for seeded dice, and only for them")
    return [FightStarted(ruleset=cmd.ruleset, dice=cmd.dice,
                         seed_commitment=cmd.seed_commitment, title=cmd.title)]


def _join(state: FightState, sheet: CombatantSheet) -> list[Event]:
    if sheet.id in state.combatants:
        raise RuleViolation("setup", f"a combatant with id {sheet.id!r} has already joined")
    return [CombatantJoined(sheet=sheet)]


def _static_check(state: FightState, cmd: StaticCheck, dice: DiceSource) -> list[Event]:
    rolled, side = _roll_side(state, cmd.check, state.rolls + 1, "check", "check", dice)
    outcome = static_outcome(side.total, cmd.difficulty)
    return [rolled, StaticCheckResolved(check=side, difficulty=cmd.difficulty, outcome=outcome)]


def _contest(state: FightState, cmd: Contest, dice: DiceSource) -> list[Event]:
    """C29: the initiator rolls first, then the other side."""
    if cmd.initiator.who == cmd.defender.who:
        raise RuleViolation("C16", f"{cmd.initiator.who!r} cannot contest against itself")
    rolled_i, ini = _roll_side(state, cmd.initiator, state.rolls + 1, "check", "check", dice)
    rolled_d, dfd = _roll_side(state, cmd.defender, state.rolls + 2, "check", "check", dice)
    winner = ini.roller if contest_winner(ini.total, dfd.total) == "initiator" else dfd.roller
    return [rolled_i, rolled_d, ContestResolved(initiator=ini, defender=dfd, winner=winner,
                                                tie=ini.total == dfd.total)]


def _save(state: FightState, cmd: Save, dice: DiceSource) -> list[Event]:
    """C29: the saver's die first, then the opposing die; one die per side (C15)."""
    rolled_s, saver = _roll_side(state, cmd.saver, state.rolls + 1, "save", "save", dice)
    rolled_o, opp = _roll_side(state, cmd.opposing, state.rolls + 2, "save", "save", dice)
    return [rolled_s, rolled_o, SaveResolved(effect=cmd.effect, saver=saver, opposing=opp,
                                             success=save_succeeds(saver.total, opp.total))]


def _reveal_seed(state: FightState, cmd: RevealSeed) -> list[Event]:
    if state.seed_commitment is None:
        raise RuleViolation("dice", "this fight has no seed commitment: its dice are not seeded")
    if state.revealed_seed is not None:
        raise RuleViolation("dice", "the seed has already been revealed")
    try:
        actual = commitment(bytes.fromhex(cmd.seed))
    except ValueError:
        raise RuleViolation("dice", f"the seed must be hex, got {cmd.seed!r}") from None
    if actual != state.seed_commitment:
        raise SeedMismatch(state.seed_commitment, actual)
    return [SeedRevealed(seed=cmd.seed.lower())]


def _combatant(state: FightState, who: str) -> CombatantState:
    try:
        return state.combatants[who]
    except KeyError:
        raise UnknownCombatant(who, list(state.combatants)) from None


def _roll_side(state: FightState, spec: CheckSpec, counter: int, purpose: RollPurpose,
               tag: PoolTag, dice: DiceSource) -> tuple[DiceRolled, RollTotal]:
    """Roll one die for one side of a check or save and total it by the roll primitive."""
    sheet = _combatant(state, spec.who).sheet
    attribute, level = _attribute_and_level(sheet, spec)
    attr = sheet.attributes[attribute]
    request = RollRequest(state.fight_id, counter, purpose, spec.who, ((tag, attr.sides),))
    rolled = roll(dice, request)
    face = rolled.dice[0].face
    total = roll_total(face, attr.bonus, level, (m.value for m in spec.modifiers))
    return rolled, RollTotal(roller=spec.who, attribute=attribute, skill=spec.skill, roll=counter,
                             face=face, attribute_bonus=attr.bonus, skill_level=level,
                             modifiers=spec.modifiers, total=total)


def _attribute_and_level(sheet: CombatantSheet, spec: CheckSpec) -> tuple[str, int]:
    """A skill roll uses the skill's attribute and level (C2); an attribute check, level 0 (C1)."""
    if (spec.skill is None) == (spec.attribute is None):
        raise RuleViolation("C1", "name either a skill or an attribute to roll, not both or neither")
    if spec.attribute is not None:
        return spec.attribute, 0
    skill = sheet.skills.get(spec.skill or "")
    if skill is None:
        known = ", ".join(sorted(sheet.skills)) or "none"
        raise RuleViolation("C2", f"{sheet.id!r} has no skill {spec.skill!r} (skills: {known})")
    assert skill.attribute in ATTRIBUTES
    return skill.attribute, skill.level
