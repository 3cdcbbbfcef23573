"""Commands: what a GM, a player or a tool asks the engine to do, as tagged msgspec Structs.

Each command has a ``command`` tag (its class name in snake_case), so tools
can send commands as JSON and scenario files can script them. Any command may
carry the faces of the dice it rolls (``dice``, in the order of C29): typed in
from physical dice, they are recorded as manual (scripted in a scripted
fight). Fields left at their defaults are not written out.

>>> import msgspec
>>> msgspec.json.decode(b'{"command": "answer_active_defense", "defender": "kael", "defense": "block"}',
...                     type=Command)
AnswerActiveDefense(dice=None, idempotency_key=None, defender='kael', defense='block', weapon=None)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Annotated, Literal

import msgspec

from .content import AttributeName, Branches, CombatantSheet, Ruleset, SaveEffect, reason_and_path
from .defaults import settle_defaults
from .errors import InvalidCommand
from .limits import MAX_FACES, MAX_SIDES
from .parts import DiceSourceKind, Modifier, Sequence_, Situational
from .rules.ambush import TimeWaited
from .rules.attack import ActiveDefense

__all__ = [
    "first_field",
    "Face",
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
    "Command",
    "UNDO_COMMANDS",
    "command_from",
]


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name.removesuffix("Command")).lower()


Face = Annotated[int, msgspec.Meta(ge=1, le=MAX_SIDES, description="a die face as it came up")]
Faces = Annotated[tuple[Face, ...], msgspec.Meta(max_length=MAX_FACES)]


IdempotencyKey = Annotated[str, msgspec.Meta(min_length=1, max_length=200,
                                              description="a caller's key for this command (1 to 200 characters): "
                                                          "a retry with the same key finds it done")]


class CommandBase(msgspec.Struct, frozen=True, tag_field="command", tag=_snake,
                  forbid_unknown_fields=True, kw_only=True, omit_defaults=True):
    """Base of every command; the ``command`` tag is the class name in snake_case. ``dice``: the faces of the
    dice this command rolls, in the order of C29 (None: the fight's own dice source rolls them).
    ``idempotency_key``: a key the caller gives this command, recorded with it in its ``command_issued``, so that
    a retry can find the command done instead of doing it twice (``omen do --idempotency-key``); the rules
    ignore it."""

    dice: Faces | None = None
    idempotency_key: IdempotencyKey | None = None


class CheckSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True, omit_defaults=True):
    """Who rolls, with which skill (C2) or bare attribute (C1), and any situational modifiers."""

    who: str
    skill: str | None = None
    attribute: AttributeName | None = None
    modifiers: tuple[Modifier, ...] = ()


class StartFight(CommandBase, frozen=True, kw_only=True):
    """Open a fight: its ruleset, its dice source (``dice_source``) and, for seeded dice, the seed commitment."""

    ruleset: Ruleset
    dice_source: DiceSourceKind
    seed_commitment: str | None = None
    title: str = ""


class Join(CommandBase, frozen=True, kw_only=True):
    """Add a combatant from its sheet."""

    sheet: CombatantSheet


class StaticCheck(CommandBase, frozen=True, kw_only=True):
    """A check against a difficulty set by the GM (C16)."""

    check: CheckSpec
    difficulty: int


class Contest(CommandBase, frozen=True, kw_only=True):
    """A contested check between an initiator and a defender (C16)."""

    initiator: CheckSpec
    defender: CheckSpec


class DeclareAttack(CommandBase, frozen=True, kw_only=True):
    """Declare an attack and resolve it up to the first choice someone must make.

    ``weapon`` names a weapon on the attacker's sheet; left out, the first
    wielded weapon is used, or an unarmed attack if none is wielded;
    ``unarmed`` forces an unarmed attack (C12). ``situational`` holds the
    claimed high ground and encirclement; prone targets and unseen attackers
    come from their conditions (C27). ``rage`` adds Brute rage dice to damage.
    """

    attacker: str
    target: str
    weapon: str | None = None
    unarmed: bool = False
    situational: Situational = Situational()
    rage: bool = False
    damage_modifiers: tuple[Modifier, ...] = ()
    branches: Branches = Branches()

    def __post_init__(self) -> None:
        settle_defaults(self)


class AnswerActiveDefense(CommandBase, frozen=True, kw_only=True):
    """The defender's answer to an open Active Defense window: a defense, or None (the default) to decline (C8)."""

    defender: str
    defense: ActiveDefense | None = None
    weapon: str | None = None


class RouteDamage(CommandBase, frozen=True, kw_only=True):
    """A Rogue's choice of which hit-pool die feeds damage (C12): its index, or None (the default) for the
    primary dice."""

    attacker: str
    die: Annotated[int, msgspec.Meta(ge=0)] | None = None


class ChooseWillConversion(CommandBase, frozen=True, kw_only=True):
    """The defender's choice, where a Will-conversion feature leaves it to them (C31): ``convert`` true sends
    the hit's physical damage to Will (what exceeds the Will left goes to HP), false to HP."""

    who: str
    convert: bool


class CallSave(CommandBase, frozen=True, kw_only=True):
    """An effect calls for a save: ``caller`` opposes, ``saver`` rolls (C15, C25)."""

    caller: str
    saver: str
    effect: SaveEffect


class CancelAction(CommandBase, frozen=True, kw_only=True):
    """Cancel the declared action before it resolves; costs already paid stay paid (C24)."""

    reason: str


class ApplyConditionCommand(CommandBase, frozen=True, kw_only=True):
    """The GM applies stacks of a condition to a combatant (C28). ``by``: the combatant who applied it (needed
    for a condition a save ends: its die opposes the save, C15, C40). ``until``: it lasts until the start or the
    end of the next turn of ``of`` (by default ``by``), and clears then (C40)."""

    who: str
    condition: str
    stacks: Annotated[int, msgspec.Meta(ge=1)] = 1
    reason: str = ""
    by: str | None = None
    until: Literal["start_of_next_turn", "end_of_next_turn"] | None = None
    of: str | None = None


class ClearConditionCommand(CommandBase, frozen=True, kw_only=True):
    """The GM clears a condition from a combatant."""

    who: str
    condition: str
    reason: str = ""


class RevealSeed(CommandBase, frozen=True, kw_only=True):
    """Disclose the seed of the seeded dice (hex); it must match the commitment the dice are drawn under now.

    A revealed seed is spent (C42): in a fight that goes on, ``next_commitment``
    is the sha256 (hex) of a fresh seed, committed to in the same command, from
    which the dice are drawn next (``Fight.reveal_seed``, ``omen do`` and the
    server make the seed and fill it in); in a fight that is over it is left
    out. In a scenario file the seed may be left out: the ``[fight]`` seed is
    used.
    """

    seed: str = ""
    next_commitment: Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{64}$(?!\n)")] | None = None


class BeginAmbush(CommandBase, frozen=True, kw_only=True):
    """Ambushers roll Stealth for the Ambush Difficulty (C17), or the GM presets it; defenders roll Perception (C18).

    Give ``time_waited`` or ``difficulty`` (a GM preset), not both. The time
    waited is a band (``under_a_minute``, ``one_to_two_minutes``,
    ``three_minutes_or_more``) or a number of minutes (C30).
    """

    ambushers: tuple[str, ...]
    defenders: tuple[str, ...]
    time_waited: TimeWaited | Annotated[float, msgspec.Meta(ge=0)] | None = None
    difficulty: int | None = None


class RollInitiative(CommandBase, frozen=True, kw_only=True):
    """Everyone rolls Initiative, an AGI check with its modifiers (C19); ties are broken by the ladder."""

    modifiers: dict[str, tuple[Modifier, ...]] = {}


class AgreeInitiative(CommandBase, frozen=True, kw_only=True):
    """Tied allies agree their order instead of rolling off (C19)."""

    order: tuple[str, ...]


class RollOff(CommandBase, frozen=True, kw_only=True):
    """Tied allies choose to roll off after all (C19)."""


class EndTurn(CommandBase, frozen=True, kw_only=True):
    """The turn's owner ends its turn; the next combatant in initiative order begins."""

    who: str


class Move(CommandBase, frozen=True, kw_only=True):
    """A Movement Action; ``leaves`` names the enemies whose reach it leaves (C23)."""

    who: str
    leaves: tuple[str, ...] = ()


class StandUp(CommandBase, frozen=True, kw_only=True):
    """A Prone combatant stands up: in the rounds, on its own turn, for its Movement Action (C20; the core ruleset's
    Prone is cleared by "standing up (a Movement Action)"); free outside the rounds. It leaves no one's reach, so it
    provokes no Attack of Opportunity (C23)."""

    who: str


class Disengage(CommandBase, frozen=True, kw_only=True):
    """Disengage (1 Bonus Action, C22): this turn's movement provokes no Attack of Opportunity (C23)."""

    who: str


class React(CommandBase, frozen=True, kw_only=True):
    """Take the reaction an open window offers (an Attack of Opportunity or an Interrupt): a basic attack.

    ``situational`` holds the claimed high ground and encirclement, as for
    ``declare_attack``: C26 and C27 apply to any attack, a reaction's too
    (a prone target's bonus comes from its condition, C27).
    """

    who: str
    weapon: str | None = None
    unarmed: bool = False
    situational: Situational = Situational()

    def __post_init__(self) -> None:
        settle_defaults(self)


class PassReaction(CommandBase, frozen=True, kw_only=True):
    """Let an open reaction window pass."""

    who: str


class AnswerCatch(CommandBase, frozen=True, kw_only=True):
    """The target of a thrown item catches it (1 Bonus Action, C22) or lets it hit."""

    who: str
    catch: bool


class AnswerDecision(CommandBase, frozen=True, kw_only=True):
    """Answer an open decision point an extension declares (:mod:`omen_core.hooks`): ``who`` makes ``choice``, one of
    those its ``decision_opened`` event lists (``omen status`` and ``options()`` show them)."""

    decision: str
    who: str
    choice: str


class UseAbility(CommandBase, frozen=True, kw_only=True):
    """``who`` uses one of its abilities on its turn (C37: an Action, a Bonus Action or a Free Action, as the ability
    says) on ``target`` (left out: itself, for an ability that targets its owner). docs/abilities.md."""

    who: str
    ability: str
    target: str | None = None


class Engage(CommandBase, frozen=True, kw_only=True):
    """The GM states who is within reach of (adjacent to) whom, or no longer is."""

    who: str
    others: tuple[str, ...]
    engaged: bool = True


class Draw(CommandBase, frozen=True, kw_only=True):
    """Draw a weapon or the shield the sheet carries into hand (``weapon``: its id), on one's own turn at the
    ruleset's cost, or before initiative unless Completely Surprised (§Preparing for Combat, C18, C35)."""

    who: str
    weapon: str


class LeaveFight(CommandBase, frozen=True, kw_only=True):
    """The GM records that one combatant fled, yielded or died: it is out of the fight (C33)."""

    who: str
    reason: Literal["fled", "yielded", "dead"]
    note: str = ""


class EndFight(CommandBase, frozen=True, kw_only=True):
    """End the fight, at any time (C33): by the GM's call, or because a side yielded, fled or was defeated
    (§Your Turn). An action in progress is called off first."""

    reason: Literal["gm", "yielded", "fled", "defeated"] = "gm"
    side: str | None = None
    note: str = ""

    def __post_init__(self) -> None:
        settle_defaults(self)


class Undo(CommandBase, frozen=True, kw_only=True):
    """Undo the last command, or everything from ``to_seq`` on (a safe point: the first event of a command
    that began with no action in progress); history is never rewritten: an ``undone`` event voids them."""

    to_seq: Sequence_ | None = None
    reason: str = ""


class Redo(CommandBase, frozen=True, kw_only=True):
    """Take back the last undo, if nothing has been done since."""

    reason: str = ""


Command = (StartFight | Join | StaticCheck | Contest | DeclareAttack | AnswerActiveDefense
           | RouteDamage | ChooseWillConversion | CallSave | CancelAction | ApplyConditionCommand
           | ClearConditionCommand
           | RevealSeed | BeginAmbush | RollInitiative | AgreeInitiative | RollOff | EndTurn | Move | StandUp
           | Disengage | React | PassReaction | AnswerCatch | AnswerDecision | UseAbility | Engage | Draw | LeaveFight
           | EndFight
           | Undo | Redo)

#: The commands whose batches are undo markers: they are not undone themselves, and are no safe point.
UNDO_COMMANDS = (Undo, Redo)


_DECODE_COMMAND = msgspec.json.Decoder(Command)
_ENCODE_DATA = msgspec.json.Encoder()


def command_from(data: Mapping[str, object] | bytes | bytearray | memoryview | str) -> Command:
    """The command ``data`` describes (a dict as ``json.loads`` gives it, or JSON text: a ``str`` or any bytes-like
    object), checked exactly as the
    JSON decoders check a command; :class:`~omen_core.errors.InvalidCommand` otherwise, with the JSON ``path``
    of the field at fault (an unknown ``command``, a face out of range, an unknown field...).

    >>> command_from({"command": "end_turn", "who": "vesh"})
    EndTurn(dice=None, idempotency_key=None, who='vesh')
    >>> command_from({"command": "roll_initiative", "dice": [0, 5]})
    Traceback (most recent call last):
    omen_core.errors.InvalidCommand: roll_initiative: Expected `int` >= 1 (at $.dice[0])
    """
    tag = data.get("command") if isinstance(data, Mapping) else None
    name = tag if isinstance(tag, str) and len(tag) <= 40 else "command"
    try:
        text = data if isinstance(data, (bytes, bytearray, memoryview, str)) else _ENCODE_DATA.encode(data)
        command: Command = _DECODE_COMMAND.decode(text)
    except msgspec.ValidationError as exc:
        reason, path = reason_and_path(exc)
        raise InvalidCommand(name, path, reason) from None
    except (msgspec.DecodeError, TypeError, ValueError, UnicodeError, OverflowError) as exc:
        raise InvalidCommand(name, "$", f"not a command as JSON holds one: {exc}") from None
    return command


def first_field(held: object, found: Callable[[object], str | None], path: str = "$") -> str | None:
    """The path of the first part of ``held`` (a command, in its fields' order: its structs, lists and mappings'
    values) that ``found`` recognizes, ``found``'s answer appended (``""``: the part itself; ``".origin"``: a field
    of it); None if none is. One walk for every refusal that names a command's field."""
    said = found(held)
    if said is not None:
        return path + said
    if isinstance(held, msgspec.Struct):
        return next((p for f in held.__struct_fields__ if (p := first_field(getattr(held, f), found, f"{path}.{f}"))),
                    None)
    if isinstance(held, (tuple, list)):
        return next((p for i, item in enumerate(held) if (p := first_field(item, found, f"{path}[{i}]"))), None)
    if isinstance(held, Mapping):
        return next((p for k, item in held.items() if (p := first_field(item, found, f"{path}.{k}"))), None)
    return None
