"""Content schemas: combatant sheets (attributes, skills, resources, gear, features), from TOML or JSON.

Sheets are msgspec Structs, so loading validates them: an unknown key (a
typo) or a wrong type is a :class:`~omen_core.errors.ContentError` naming
the file and the JSON path of the field.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
import os
import re
import stat
from collections.abc import Iterable, Sequence
from decimal import Decimal
from importlib.resources import files
from pathlib import Path
from types import UnionType
from typing import (
    Annotated,
    Final,
    Literal,
    TypeVar,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

import msgspec

from .defaults import settle_defaults
from .errors import ContentError, RuleViolation, expect, otherwise_said, written_otherwise
from .limits import (
    DIE_PATTERN,
    MAX_DICE,
    MAX_MULTIPLY,
    MAX_SIDES,
    MAX_WHOLE,
    beyond_whole,
    first_leaf,
    json_error_words,
    named_twice,
)
from .locate import Lines, error_line, key_step

__all__ = [
    "allowed_values",
    "one_of",
    "ATTRIBUTES",
    "CORE_RULESET",
    "AttributeName",
    "Attribute",
    "Attributes",
    "Skill",
    "Weapon",
    "Armor",
    "Shield",
    "Training",
    "RageDice",
    "Features",
    "IncomingDamage",
    "CombatantSheet",
    "DamageDice",
    "DealDamage",
    "ApplyCondition",
    "ClearCondition",
    "Heal",
    "Consequence",
    "Branches",
    "SaveEffect",
    "ConditionDef",
    "TotalModifiers",
    "ConditionDamage",
    "SaveEnds",
    "TurnMoment",
    "DamageTypes",
    "Economy",
    "ReactionCosts",
    "Ruleset",
    "Modify",
    "AddDice",
    "AllowDefense",
    "Save",
    "Reroll",
    "Route",
    "ConvertToWill",
    "MakeAttack",
    "Deferred",
    "Effect",
    "When",
    "Trigger",
    "Uses",
    "AbilityCost",
    "Ability",
    "AbilityLibrary",
    "SHIPPED_ABILITIES",
    "SHORTHANDS",
    "load_library",
    "with_abilities",
    "content_hash",
    "canonical",
    "load_ruleset",
    "load_sheet",
    "refused_sheet",
    "decode_content",
    "non_finite",
    "name_keys",
    "reason_and_path",
    "in_words",
    "read_bounded",
    "read_content",
    "MAX_CONTENT_BYTES",
]

AttributeName = Literal["STR", "AGI", "INT", "RES", "FCS"]
ATTRIBUTES: tuple[AttributeName, ...] = ("STR", "AGI", "INT", "RES", "FCS")

Die = Annotated[str, msgspec.Meta(pattern=DIE_PATTERN,
                                  description=f"a die, d2 to d{MAX_SIDES}, such as d8 (C1)")]
DiceCount = Annotated[int, msgspec.Meta(ge=1, le=MAX_DICE, description=f"how many dice, 1 to {MAX_DICE}")]
Identifier = Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$(?!\n)",
                                         description="an id: 1 to 64 ASCII letters (a-z, A-Z), digits, '.', '_' "
                                                     "or '-', starting with a letter or digit")]


Name = Annotated[str, msgspec.Meta(
    min_length=1, max_length=80,
    pattern=r"^[^\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]+$(?!\n)",
    description="a name: 1 to 80 characters, none of them a control character (C0, C1, DEL) nor a bidirectional "
                "control (a mark, an embedding, an override such as U+202E, an isolate) nor a line or paragraph "
                "separator")]
"""An ability's name, as players read it in prompts, terms and narratives: no character that could hide or reorder
what is shown beside it (every writer escapes them too: omen_replay.output.visible)."""
_NAME = re.compile(get_args(Name)[1].pattern)
""":data:`Name`'s pattern, for names a schema cannot constrain (a ruleset's condition names are its keys)."""


def _named(text: str) -> bool:
    """Whether ``text`` is a :data:`Name`: 1 to 80 characters, none a control or bidirectional character."""
    return len(text) <= 80 and _NAME.fullmatch(text) is not None


class _Content(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True, omit_defaults=True):
    """Base of every content schema: immutable, and unknown keys are rejected. Written without the fields at
    their defaults (a value equal to its default counts as it: :mod:`omen_core.defaults`), so a field added with
    a default changes neither the bytes nor the hash of content that leaves it at its default."""

    def __post_init__(self) -> None:
        settle_defaults(self)


class Attribute(_Content, frozen=True, kw_only=True):
    """One attribute: its die and its bonus (C1). The bonus may be negative."""

    die: Die
    bonus: int = 0

    @property
    def sides(self) -> int:
        """The number of faces of the attribute die (8 for ``d8``)."""
        return int(self.die[1:])


class Attributes(_Content, frozen=True, kw_only=True):
    """The five attributes of C1."""

    STR: Attribute
    AGI: Attribute
    INT: Attribute
    RES: Attribute
    FCS: Attribute

    def __getitem__(self, name: str) -> Attribute:
        if name not in ATTRIBUTES:
            raise KeyError(name)
        found: Attribute = getattr(self, name)
        return found


class Skill(_Content, frozen=True, kw_only=True):
    """A skill: the attribute it rolls with and its level (C2)."""

    attribute: AttributeName
    level: Annotated[int, msgspec.Meta(ge=0)] = 0


WeaponProperty = Literal["finesse", "ranged", "spell", "magical", "thrown"]
NonNegative = Annotated[int, msgspec.Meta(ge=0)]


class Weapon(_Content, frozen=True, kw_only=True):
    """A weapon: Weapon Damage (WD), hit bonus, damage type (C14), properties and Parry Rating.

    ``finesse`` makes AGI the primary attribute (C4); ``spell`` makes it INT
    and the attack a spell attack; ``ranged`` makes it a ranged attack;
    ``magical`` lets it Parry melee spells (C9); ``thrown`` lets its target Catch it in a ranged attack (C22).
    """

    id: Identifier
    name: str = ""
    weapon_damage: NonNegative = 0
    hit_bonus: int = 0
    damage_type: str = "slashing"
    properties: frozenset[WeaponProperty] = frozenset()
    parry_rating: NonNegative = 0

    @property
    def label(self) -> str:
        """The weapon's name, or its id if it has none."""
        return self.name or self.id


class Armor(_Content, frozen=True, kw_only=True):
    """Worn armor: its rating adds to Defense Rating and reduces damage where it applies (C11, C13)."""

    name: str = "armor"
    rating: NonNegative
    magical: bool = False


class Shield(_Content, frozen=True, kw_only=True):
    """A shield, needed in hand to Block (C9, C35); its Block Rating adds to a Block. ``id`` names it in
    ``wielding`` and to the draw command."""

    id: Identifier = "shield"
    name: str = "shield"
    block_rating: NonNegative
    magical: bool = False


class Training(_Content, frozen=True, kw_only=True):
    """Combat training: a hit bonus (C5) and Veteran Shield Training (Block against ranged, C9)."""

    hit_bonus: int = 0
    veteran_shield: bool = False


class RageDice(_Content, frozen=True, kw_only=True):
    """Brute rage: ``count`` dice of size ``die`` added to damage while raging (C12)."""

    count: DiceCount = 1
    die: Die

    @property
    def sides(self) -> int:
        """Faces of one rage die."""
        return int(self.die[1:])


class Features(_Content, frozen=True, kw_only=True):
    """Class features that change dice pools, damage routing or where damage lands (C6, C12, C13).

    ``will_conversion``: physical damage, after every reduction, goes to Will instead of HP, and what exceeds
    the Will left goes to HP (C31); ``true`` converts every hit, ``"choice"`` lets the defender choose per hit.
    """

    extra_primary_dice: Annotated[int, msgspec.Meta(ge=0, le=2)] = 0
    rage: RageDice | None = None
    rogue_routing: bool = False
    will_conversion: bool | Literal["choice"] = False


Multiplier = Annotated[str, msgspec.Meta(pattern=r"^(\d+(\.\d+)?|\.\d+|\d+/[1-9]\d*)$(?!\n)",
                                         description="an exact multiplier, 0 or more: a decimal (1.4) or a fraction "
                                                     "of whole numbers (7/5), its denominator not 0")]


#: A sha256 in hex as omen writes it (``omen_core.events.Hex64``; a reveal's ``next_commitment``): the one pattern
#: of a command's fields that is not content's (events imports this module, not the other way round).
HEX64_PATTERN = r"^[0-9a-f]{64}$(?!\n)"

_PATTERN_WORDS = {meta.pattern: meta.description for alias in (Die, Identifier, Multiplier, Name)
                  for meta in get_args(alias)[1:] if isinstance(meta, msgspec.Meta)}
_PATTERN_WORDS[HEX64_PATTERN] = "64 lowercase hex digits (a sha256, as omen writes it)"
"""Each pattern of ours in words, for errors: its alias's description."""


class IncomingDamage(_Content, frozen=True, kw_only=True):
    """Step 5 of mitigation (C13): final damage is multiplied by the exact fraction written (C34: 1.4 is 7/5),
    then ``add`` added, rounded down once, floor 0. ``multiply`` is a number or a fraction like ``"7/5"``."""

    multiply: Annotated[float, msgspec.Meta(ge=0)] | Multiplier = 1.0
    add: int = 0

    def too_large(self) -> bool:
        """Whether ``multiply`` is more than :data:`~omen_core.limits.MAX_MULTIPLY` (1000), however it is written
        (a float, a decimal ``"1.4"``, a fraction ``"7/5"``), read as decimals (C34: exact as written; no whole
        number is built from a long run of digits). A sheet that joins may not be (the join refuses it); a log
        recorded before the bound still reads."""
        if isinstance(self.multiply, float):
            return not self.multiply <= MAX_MULTIPLY  # (nan and inf too)
        top, _, bottom = self.multiply.partition("/")
        return Decimal(top) > MAX_MULTIPLY * Decimal(bottom or "1")


class CombatantSheet(_Content, frozen=True, kw_only=True, dict=True):
    """A combatant as written on its sheet: who it is, attributes, skills, resources and gear.

    >>> sheet = decode_content(
    ...     '{"id": "kael", "name": "Kael", "side": "heroes", "hp": 20, "will": 10,'
    ...     ' "attributes": {"STR": {"die": "d8", "bonus": 2}, "AGI": {"die": "d6"},'
    ...     ' "INT": {"die": "d4"}, "RES": {"die": "d8", "bonus": 1}, "FCS": {"die": "d6"}},'
    ...     ' "weapons": [{"id": "sword", "weapon_damage": 4}]}',
    ...     CombatantSheet, source="kael.json")
    >>> sheet.attributes.STR.sides, sheet.attributes.STR.bonus, sheet.wielded()[0].id
    (8, 2, 'sword')
    """

    id: Identifier
    name: str
    side: Identifier
    hp: Annotated[int, msgspec.Meta(ge=1)]
    will: NonNegative = 0
    attributes: Attributes
    skills: dict[str, Skill] = {}
    weapons: tuple[Weapon, ...] = ()
    wielding: tuple[str, ...] | None = None
    armor: Armor | None = None
    shield: Shield | None = None
    training: Training = Training()
    resistances: dict[str, NonNegative] = {}
    features: Features = Features()
    incoming_damage: IncomingDamage = IncomingDamage()
    abilities: tuple[Identifier | Ability, ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        ids = [w.id for w in self.weapons]
        if len(set(ids)) != len(ids):
            raise ValueError(f"weapon ids must be unique, got {ids}")
        gear = [*ids, self.shield.id] if self.shield is not None else ids
        if self.shield is not None and self.shield.id in ids:
            raise ValueError(f"the shield's id {self.shield.id!r} is also a weapon's id")
        for wid in self.wielding or ():
            if wid not in gear:
                raise ValueError(f"wielding {wid!r}, which is not among the weapons or the shield {gear}")
        for i, entry in enumerate(self.abilities):  # each problem named at the ability's own field (and line)
            if not isinstance(entry, str) and not entry.id:
                raise ValueError(_at(f"abilities[{i}]", f"abilities[{i}] ({entry.name!r}) is written out without "
                                                        "an id"))
        listed = self.ability_ids()
        again = next((i for i, a in enumerate(listed) if a in listed[:i]), None)
        if again is not None:
            raise ValueError(_at(f"abilities[{again}]", f"[C37] the ability {listed[again]!r} is listed twice: "
                                                        f"{', '.join(listed)}"))
        for key, ability_id in _shorthand_ids(self.features, self.training):
            if ability_id in listed:  # it would apply twice (C37)
                raise ValueError(_at(f"abilities[{listed.index(ability_id)}]",
                                     f"{key} is the shorthand of the ability {ability_id!r}, which abilities lists "
                                     "too: keep one"))

    def shorthand_abilities(self) -> tuple[Ability, ...]:
        """The shipped abilities the sheet's shorthand keys stand for (C37; ``SHORTHANDS``), in that table's order:
        ``features.rage`` is Brute Rage with the sheet's own rage dice. Expanded once per sheet value (kept in the
        sheet's own ``__dict__``, never encoded, compared or hashed)."""
        found: tuple[Ability, ...] | None = self.__dict__.get("_shorthands")
        if found is None:
            found = self.__dict__["_shorthands"] = _expand(self.features, self.training)
        return found

    def listed_by_id(self) -> frozenset[str]:
        """The ids the sheet lists as such, not written out (a Python extension's, :mod:`omen_core.extensions`);
        kept in the sheet's own ``__dict__``."""
        found: frozenset[str] | None = self.__dict__.get("_by_id")
        if found is None:
            found = self.__dict__["_by_id"] = frozenset(a for a in self.abilities if isinstance(a, str))
        return found

    def written_ids(self) -> frozenset[str]:
        """The ids of the abilities the sheet writes out (kept in its ``__dict__``)."""
        found: frozenset[str] | None = self.__dict__.get("_written_ids")
        if found is None:
            found = self.__dict__["_written_ids"] = frozenset(a.id for a in self.written_abilities())
        return found

    def shorthand_ids(self) -> frozenset[str]:
        """The ids of the shipped abilities its shorthand keys stand for (kept in its ``__dict__``)."""
        found: frozenset[str] | None = self.__dict__.get("_shorthand_ids")
        if found is None:
            found = self.__dict__["_shorthand_ids"] = frozenset(a.id for a in self.shorthand_abilities())
        return found

    def ability_ids(self) -> tuple[str, ...]:
        """The id of each ability the sheet lists, by id or written out (C37)."""
        return tuple(a if isinstance(a, str) else a.id for a in self.abilities)

    def written_abilities(self) -> tuple[Ability, ...]:
        """The abilities the sheet writes out in full (data abilities, C37)."""
        found: tuple[Ability, ...] | None = self.__dict__.get("_written")
        if found is None:
            found = self.__dict__["_written"] = tuple(a for a in self.abilities if not isinstance(a, str))
        return found

    def weapon(self, weapon_id: str) -> Weapon | None:
        """The weapon with this id, if the sheet has it."""
        return next((w for w in self.weapons if w.id == weapon_id), None)

    def carries(self, item: str) -> bool:
        """Whether ``item`` is the id of one of the sheet's weapons or of its shield (C35)."""
        return self.weapon(item) is not None or (self.shield is not None and self.shield.id == item)

    def wielded(self) -> tuple[Weapon, ...]:
        """Weapons in hand when the fight starts: those named in ``wielding``, or by default the first weapon."""
        if self.wielding is None:
            return self.weapons[:1]
        return tuple(w for w in self.weapons if w.id in self.wielding)

    def in_hand(self) -> tuple[str, ...]:
        """The ids of the gear in hand when the fight starts (C35): the weapons and the shield named in
        ``wielding``, or by default the first weapon and any shield."""
        shield = (self.shield.id,) if self.shield is not None and (
            self.wielding is None or self.shield.id in self.wielding) else ()
        return (*(w.id for w in self.wielded()), *shield)


class DamageDice(_Content, frozen=True, kw_only=True):
    """``count`` dice of size ``die``, e.g. 2 and d6 for 2d6."""

    count: DiceCount = 1
    die: Die

    @property
    def sides(self) -> int:
        """Faces of one die."""
        return int(self.die[1:])


Recipient = Literal["target", "actor"]


class DealDamage(_Content, frozen=True, tag_field="kind", tag="damage", kw_only=True):
    """A consequence: damage of a type (dice and/or flat), mitigated as in C13; ``half``: half of it, rounded
    down (a save's success branch: "half damage on a success")."""

    to: Recipient = "target"
    dice: DamageDice | None = None
    flat: NonNegative = 0  # the schema says so (a client checking content against it saw -5 pass: a tester)
    damage_type: str
    half: bool = False


#: Until which moment of a named combatant's next turn a condition lasts (C40).
TurnMoment = Literal["start_of_next_turn", "end_of_next_turn"]


class ApplyCondition(_Content, frozen=True, tag_field="kind", tag="condition", kw_only=True):
    """A consequence: stacks of a condition (C28). ``until``: it lasts until the start or the end of the next
    turn of ``of`` (the actor, who applied it, by default; or the target), and clears then (C40)."""

    to: Recipient = "target"
    condition: str
    stacks: Annotated[int, msgspec.Meta(ge=1)] = 1
    until: TurnMoment | None = None
    of: Recipient = "actor"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.until is None and self.of != "actor":
            raise ValueError("`of` names whose next turn ends the condition: give `until` with it")


class ClearCondition(_Content, frozen=True, tag_field="kind", tag="clear", kw_only=True):
    """A consequence: a condition ends."""

    to: Recipient = "target"
    condition: str


class Heal(_Content, frozen=True, tag_field="kind", tag="heal", kw_only=True):
    """A consequence: HP restored (dice and/or flat), never above the sheet's HP; one raised above 0 HP is no
    longer Dying (C36)."""

    to: Recipient = "target"
    dice: DamageDice | None = None
    flat: NonNegative = 0


Consequence = DealDamage | ApplyCondition | ClearCondition | Heal


class Branches(_Content, frozen=True, kw_only=True):
    """What an attack's outcome adds, in written order (C25): on a hit, on a miss, on a crit."""

    on_hit: tuple[Consequence, ...] = ()
    on_miss: tuple[Consequence, ...] = ()
    on_crit: tuple[Consequence, ...] = ()


class SaveEffect(_Content, frozen=True, kw_only=True):
    """An effect that calls for a save (C15, C25): the attributes opposed, and what each branch does.

    The saver rolls its ``save`` attribute against the caller's ``against``
    attribute; ``spell`` effects are not reduced by mundane armor (C13).
    """

    name: Annotated[str, msgspec.Meta(min_length=1)]
    save: AttributeName
    against: AttributeName
    spell: bool = True
    action_cost: Annotated[int, msgspec.Meta(ge=0)] = 1
    on_success: tuple[Consequence, ...] = ()
    on_failure: tuple[Consequence, ...] = ()


TickTiming = Literal["never", "turn_start", "turn_end", "round_end"]
#: The moments a condition's save is made at (C40): the afflicted's turn start or end, or the round's end.
SaveTiming = Literal["turn_start", "turn_end", "round_end"]


class ConditionDamage(_Content, frozen=True, kw_only=True):
    """What a condition deals each time it ticks (C25, C40): dice and/or a flat amount of a damage type (C14),
    mitigated as in C13 (``spell``: mundane armor does not reduce it). ``per_stack``: the dice and the flat
    amount are taken once per stack, in one roll."""

    dice: DamageDice | None = None
    flat: NonNegative = 0
    damage_type: str
    per_stack: bool = False
    spell: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.dice is None and not self.flat:
            raise ValueError("a condition's damage needs dice or a flat amount")


class SaveEnds(_Content, frozen=True, kw_only=True):
    """Save ends (C40): at ``timing`` the afflicted saves (C15) with ``save`` against whoever applied the
    condition, who rolls ``against``; the saver wins ties, and a success clears the condition."""

    save: AttributeName
    against: AttributeName
    timing: SaveTiming = "turn_end"


class TotalModifiers(_Content, frozen=True, kw_only=True):
    """A condition's modifier per stack to a named total of an attack (C28): the hit total and the damage of the
    attacks its bearer makes (C5, C12), the defense against those made on it (C11)."""

    hit: int = 0
    defense: int = 0
    damage: int = 0


class ConditionDef(_Content, frozen=True, kw_only=True):
    """A condition as data (C28, C40): stacks, per-stack modifiers (to every attribute bonus, or to named totals),
    tick timing, duration, what clears it, the damage it deals when it ticks, and the save that ends it."""

    placeholder: bool = False
    max_stacks: Annotated[int, msgspec.Meta(ge=1)] = 1
    attribute_bonus: int = 0
    modifiers: TotalModifiers = TotalModifiers()
    tick: TickTiming = "never"
    duration: Annotated[int, msgspec.Meta(ge=1)] | None = None
    cleared_by: tuple[str, ...] = ()
    damage: ConditionDamage | None = None
    save_ends: SaveEnds | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.damage is not None and self.tick == "never":
            lasting = " and counts its duration down" if self.duration is not None else ""
            raise ValueError(_at("damage", f"a condition deals its damage{lasting} when it ticks: give it a tick "
                                           "timing (tick = \"turn_start\", \"turn_end\" or \"round_end\")"
                                           + (", or no damage and no duration" if lasting else "")))
        if self.duration is not None and self.tick == "never":
            raise ValueError(_at("duration", "a duration counts down as the condition ticks: give it a tick timing "
                                             "(tick = \"turn_start\", \"turn_end\" or \"round_end\"), or no "
                                             "duration (it lasts until cleared)"))


class DamageTypes(_Content, frozen=True, kw_only=True):
    """The damage types of C14: physical ones take physical rollover (C13)."""

    physical: tuple[str, ...] = ("crushing", "slashing", "piercing")
    other: tuple[str, ...] = ("fire", "cold", "lightning", "poison", "arcane")

    def __contains__(self, name: object) -> bool:
        return name in self.physical or name in self.other


DrawCost = Literal["free", "bonus_action", "movement_action", "action"]


class Economy(_Content, frozen=True, kw_only=True):
    """Per-turn action economy (C20), and what drawing a weapon or shield costs on one's turn (C35)."""

    actions: NonNegative = 1
    movement_actions: NonNegative = 1
    bonus_actions: NonNegative = 2
    draw: DrawCost = "free"


class ReactionCosts(_Content, frozen=True, kw_only=True):
    """Bonus Action cost of each reaction (C22)."""

    active_defense: NonNegative = 1
    attack_of_opportunity: NonNegative = 1
    disengage: NonNegative = 1
    catch: NonNegative = 1
    interrupt: NonNegative = 2


# dict=True: a fight's compiled rows may be kept in its ruleset's __dict__ (never encoded, compared or hashed):
# omen_core.extensions.data_rows.
class Ruleset(_Content, frozen=True, kw_only=True, dict=True):
    """Every configurable number of the rules (C2, C14, C20, C22, C28), loaded from a ruleset file."""

    name: Identifier
    version: str = ""
    skill_attributes: dict[str, AttributeName] = {}
    damage_types: DamageTypes = DamageTypes()
    economy: Economy = Economy()
    reaction_costs: ReactionCosts = ReactionCosts()
    conditions: dict[str, ConditionDef] = {}

    def __post_init__(self) -> None:
        super().__post_init__()
        words = str(_PATTERN_WORDS[_NAME.pattern]).removeprefix("a name: ")
        for name, rule in self.conditions.items():
            if not _named(name):  # a condition's name is read in every prompt and narrative, as an ability's
                raise ValueError(_at(f"conditions{key_step(name)}", f"{name!a} is not a condition name: {words}"))
            if rule.damage is not None and rule.damage.damage_type not in self.damage_types:
                known = ", ".join([*self.damage_types.physical, *self.damage_types.other])
                raise ValueError(_at(f"conditions{key_step(name)}.damage.damage_type",
                                     f"condition {name!r} deals {rule.damage.damage_type!r}, a damage type the "
                                     f"ruleset does not list (C14; it lists: {known})"))

        for skill in self.skill_attributes:  # a skill's name is read in checks' prompts and narratives too (C2)
            if not _named(skill):
                raise ValueError(_at(f"skill_attributes{key_step(skill)}", f"{skill!a} is not a skill name: {words}"))
        seen: dict[str, str] = {}
        for kind in ("physical", "other"):  # a damage type is read in every damage line, and is one of the two (C14)
            for i, damage_type in enumerate(getattr(self.damage_types, kind)):
                where = f"damage_types.{kind}[{i}]"
                if not _named(damage_type):
                    raise ValueError(_at(where, f"{damage_type!a} is not a damage type's name: {words}"))
                if damage_type in seen:
                    raise ValueError(_at(where, f"the damage type {damage_type!r} is listed twice (first in "
                                                f"damage_types.{seen[damage_type]}): a type is physical or other, "
                                                "once (C13, C14)"))
                seen[damage_type] = kind

    def content_hash(self) -> str:
        """sha256 of the ruleset's canonical JSON: what the log records to name exactly these numbers."""
        return content_hash(self)


# -- abilities as data (C37-C41; docs/abilities.md) ---------------------------------------------------------------

TotalName = Literal["hit", "defense", "damage"]
#: The moments a triggered ability may answer (C38), as the engine's hook points name them (omen_core.hooks).
TriggerMoment = Literal["attack.declared", "attack.rolled", "attack.determined", "attack.damaged", "save.resolved",
                        "move.left", "condition.applied", "check.resolved", "turn.start", "turn.end", "round.end"]
#: The moments of the round (C38).
ROUND_MOMENTS = ("turn.start", "turn.end", "round.end")
#: The moments outside any other action, each the owner's own (``owner = "self"``): the round's, and a check's.
OWN_MOMENTS = (*ROUND_MOMENTS, "check.resolved")
#: Whom a trigger may name at the moments of an attack, at those of a save, and at those of the round (the owner
#: itself: at its own turn's start or end, or at the round's end).
ATTACK_OWNERS = ("attacker", "target", "ally_of_target")
SAVE_OWNERS = ("caller", "saver", "ally_of_saver")
ROUND_OWNERS = ("self",)
#: Whom a trigger may name when a combatant moves out of reach (C23, C38): each one whose reach it left.
MOVE_OWNERS = ("left_behind",)
#: Whom a trigger may name when an action applies a condition (C38): the combatant it was applied to, an ally within
#: its reach, or the one whose action applied it.
CONDITION_OWNERS = ("afflicted", "ally_of_afflicted", "applier")
AttackKindName = Literal["melee", "melee_spell", "ranged", "ranged_spell", "unarmed"]
DefenseName = Literal["dodge", "parry", "block"]


class Modify(_Content, frozen=True, tag_field="kind", tag="modifier", kw_only=True):
    """An ability's effect: a term on a named total (the hit total C5, the defense C11, the damage C12), named after
    the ability in explain and the log."""

    total: TotalName
    value: int


class AddDice(_Content, frozen=True, tag_field="kind", tag="dice", kw_only=True):
    """An ability's effect: dice added to the attack's primary or FCS pool (C6) or to its damage (rolled on a hit,
    C12). Added dice come after the pool's own dice of the same tag (C29, C39). Without ``die``, a primary or FCS
    die is the size of the pool's own (the primary attribute's die, the FCS die); damage dice name their die."""

    pool: Literal["primary", "fcs", "damage"]
    count: DiceCount = 1
    die: Die | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.pool == "damage" and self.die is None:
            raise ValueError("damage dice name their die (die = \"d6\")")


class AllowDefense(_Content, frozen=True, tag_field="kind", tag="allow_defense", kw_only=True):
    """An ability's effect: an eligibility override (C37, §Which Defenses Apply): the owner may use ``defense``
    against attacks the table refuses it against for their kind (those its ``when`` matches): a Parry against a
    ranged attack, a Block against one (Veteran Shield Training); for a Dodge, which no kind of attack refuses,
    while Prone. What else the table asks stands: a weapon or a shield in hand (C35), a magical weapon to Parry a
    melee spell, a magical shield to Block a spell."""

    defense: DefenseName


class Reroll(_Content, frozen=True, tag_field="kind", tag="reroll", kw_only=True):
    """An ability's effect (C39): a die of the owner's hit pool (``primary`` or ``fcs``) is rolled again, once; both
    faces are recorded and the new one counts. Passive: automatic, each die of the pool showing one of ``faces``
    (``faces = [1]``: "reroll 1s"), right after the roll. Triggered (``attack.rolled``, the owner attacking): a
    decision point once the dice are seen; used, the lowest die of the pool (of those showing one of ``faces``,
    if given) is rerolled."""

    pool: Literal["primary", "fcs"]
    faces: tuple[Annotated[int, msgspec.Meta(ge=1, le=MAX_SIDES)], ...] = ()


class Save(_Content, frozen=True, tag_field="kind", tag="save", kw_only=True):
    """An ability's effect, used on one's turn: its target saves (C15): the target rolls ``save``, the owner
    ``against``; each branch's consequences in written order (C25). ``spell``: mundane armor does not reduce its
    damage (C13)."""

    save: AttributeName
    against: AttributeName
    spell: bool = True
    on_success: tuple[Consequence, ...] = ()
    on_failure: tuple[Consequence, ...] = ()


class Route(_Content, frozen=True, tag_field="kind", tag="route", kw_only=True):
    """An ability's passive effect: result routing (C12; Rogue routing): when the owner's attack hits, the owner
    chooses which rolled die of the hit pool feeds damage, in place of the primary dice (the routing decision)."""


class ConvertToWill(_Content, frozen=True, tag_field="kind", tag="will_conversion", kw_only=True):
    """An ability's passive effect: Will conversion (C31): physical damage the owner takes lands on Will, after every
    reduction, and what exceeds the Will left goes to HP; every hit (``choice = false``, C31's default) or, with
    ``choice = true``, hit by hit as the owner chooses (the Will-conversion decision)."""

    choice: bool = False


class MakeAttack(_Content, frozen=True, tag_field="kind", tag="attack", kw_only=True):
    """An ability's triggered effect (C37, C38): the owner makes an attack on the other party of the attack it
    answers (a riposte), with ``weapon`` (one in hand), unarmed (``unarmed = true``), or by default the first
    weapon in hand, else unarmed. It is defended as any attack is (base defense, Active Defense), opens no
    decision point of any ability, costs nothing but the ability's cost; the attack it answers goes on once it
    settles."""

    weapon: Identifier | None = None
    unarmed: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.weapon is not None and self.unarmed:
            raise ValueError("an attack is made with a weapon or unarmed, not both")


Effect = (Modify | AddDice | AllowDefense | DealDamage | ApplyCondition | ClearCondition | Heal | Save | Reroll | Route
          | ConvertToWill | MakeAttack)


class When(_Content, frozen=True, kw_only=True):
    """Predicates an ability's use needs, all of them (an empty one always holds). Attack predicates read the
    attack the ability is about (``attack_option``: the attack was declared with that option of ``declare_attack``,
    which is then offered to the owner: ``rage``, Brute Rage's); ``owner_*`` read the ability's owner."""

    attack_kinds: tuple[AttackKindName, ...] = ()
    weapon_properties: tuple[WeaponProperty, ...] = ()
    target_has: tuple[str, ...] = ()
    target_lacks: tuple[str, ...] = ()
    attacker_unseen: bool | None = None
    attack_option: Literal["rage"] | None = None
    owner_has: tuple[str, ...] = ()
    owner_lacks: tuple[str, ...] = ()
    owner_hp_at_most: NonNegative | None = None


class Trigger(_Content, frozen=True, kw_only=True):
    """When a triggered ability is offered (C38): at which moment (docs/abilities.md), to whom, on which outcome.
    Owners: in an attack the attacker, the target or an ally within the target's reach; at save.resolved the
    caller, the saver or an ally within the saver's reach; at move.left each enemy whose reach the mover left
    (left_behind); at condition.applied the afflicted, an ally within its reach or the applier; at check.resolved
    and the round's moments the owner itself (self). Outcomes: hit, miss, crit at attack.determined; success,
    failure at save.resolved (the saver's) and check.resolved (the owner's own). ``condition``: at
    condition.applied, the condition it waits for (none: any)."""

    moment: TriggerMoment
    owner: Literal["attacker", "target", "ally_of_target", "caller", "saver", "ally_of_saver", "self", "left_behind",
                   "afflicted", "ally_of_afflicted", "applier"]
    outcome: Literal["any", "hit", "miss", "crit", "success", "failure"] = "any"
    condition: str | None = None


class Uses(_Content, frozen=True, kw_only=True):
    """How often an ability may be used (C41): ``count`` per turn (back at the start of the owner's turn), per
    round (back at the start of each round) or per fight (never back)."""

    count: Annotated[int, msgspec.Meta(ge=1)]
    per: Literal["turn", "round", "fight"]


class AbilityCost(_Content, frozen=True, kw_only=True):
    """What using an ability costs, paid through the one ledger (C20, C22, C41): HP never below 1 (C36)."""

    actions: NonNegative = 0
    movement: NonNegative = 0
    bonus_actions: NonNegative = 0
    hp: NonNegative = 0
    will: NonNegative = 0


class Deferred(_Content, frozen=True, kw_only=True):
    """A cost that settles later (C41): recorded when the ability is used, its ``effects`` (damage, healing,
    conditions, each on the owner: ``to = "actor"``, written) come at the start or the end of the owner's next turn;
    undoing the use undoes it with it."""

    at: TurnMoment
    effects: Annotated[tuple[Consequence, ...], msgspec.Meta(min_length=1)]

    def __post_init__(self) -> None:
        super().__post_init__()
        wrong = next((k for k, e in enumerate(self.effects) if e.to != "actor"), None)
        if wrong is not None:  # it settles on the owner alone: "target" (the default) would say otherwise
            raise ValueError(_at(f"effects[{wrong}].to", "[C41] a deferred cost is its owner's own: each of its "
                                                         "effects goes to the owner (to = \"actor\")"))


_PASSIVE_EFFECTS = (Modify, AddDice, AllowDefense, Reroll, Route, ConvertToWill)
#: Effects a passive ability only may have (they say how every attack of the owner's goes, not one moment of it).
_PASSIVE_ONLY = (AllowDefense, Route, ConvertToWill)


class Ability(_Content, frozen=True, kw_only=True, dict=True):
    """An ability written as data (C37): a passive one applies its effects while its ``when`` holds; a triggered
    one is offered as a decision point at its trigger's moment (C38) to an owner who can pay, and does its
    effects in written order (C25) when used; one used on its owner's turn (as an Action, a Bonus Action or a
    Free Action: ``use_ability``) does them to its ``target`` (the owner, an ally, an enemy, anyone; within
    reach if ``within_reach``). ``placeholder``: its numbers wait for the class chapters."""

    id: Annotated[str, msgspec.Meta(pattern=r"^([A-Za-z0-9][A-Za-z0-9._-]{0,63})?$(?!\n)")] = ""
    name: Name
    summary: str = ""
    placeholder: bool = False
    rule: str = "C37"
    use: Literal["passive", "trigger", "action", "bonus_action", "free"]
    applies_to: Literal["self", "allies_in_reach"] = "self"
    target: Literal["self", "ally", "enemy", "any"] = "enemy"
    within_reach: bool = False
    trigger: Trigger | None = None
    when: When = When()
    cost: AbilityCost = AbilityCost()
    uses: Uses | None = None
    deferred: Deferred | None = None
    effects: Annotated[tuple[Effect, ...], msgspec.Meta(min_length=1)]

    def __post_init__(self) -> None:
        super().__post_init__()
        problem = _ability_problem(self)
        if problem:  # named by its rule: a trigger's (C38), else an ability's as data (C37)
            raise ValueError(problem if problem.startswith("[") else
                             f"[{'C38' if self.use == 'trigger' else 'C37'}] {problem}")


_ON_TURN = ("action", "bonus_action", "free")
_ATTACK_PREDICATES = ("attack_kinds", "weapon_properties", "attacker_unseen", "attack_option")
#: A `when` with nothing set: what each predicate is when it is not given.
_NO_WHEN = When()


def _set_predicate(when: When, names: tuple[str, ...]) -> str:
    """The first of the predicates ``names`` that ``when`` sets (other than its default), or ""."""
    return next((n for n in names if getattr(when, n) != getattr(_NO_WHEN, n)), "")


def _at(field: str, why: str) -> str:
    """A problem found in one field of an ability: ``why``, with the field's path below the ability, which
    :func:`reason_and_path` adds to the path msgspec reports (the ability's)."""
    return f"{why}{_INNER}{field}`"


#: How a problem names the field below the struct msgspec reports it at (``... - at `.trigger.owner```).
_INNER = " - at `."


def _damage_problem(a: Ability) -> str:
    """A damage an ability deals that could never be meant (C25): no dice and no flat amount (a heal's too), a
    negative flat amount, or half of it where no save succeeded (``half`` is a save's success branch's, C15); or
    Dying cleared while the HP stay at 0 (C36: a heal ends it)."""
    places: list[tuple[str, object, bool]] = []
    for i, effect in enumerate(a.effects):
        places.append((f"effects[{i}]", effect, False))
        if isinstance(effect, Save):
            places += [(f"effects[{i}].{branch}[{k}]", c, branch == "on_success")
                       for branch in ("on_success", "on_failure") for k, c in enumerate(getattr(effect, branch))]
    places += [(f"deferred.effects[{k}]", c, False)
               for k, c in enumerate(a.deferred.effects if a.deferred is not None else ())]
    for where, c, on_success in places:
        if isinstance(c, ClearCondition) and c.condition == "Dying":
            return _at(f"{where}.condition", "Dying ends when HP rises above 0 (C36): heal instead (kind = \"heal\")")
        if isinstance(c, ApplyCondition) and c.condition == "Dying":
            return _at(f"{where}.condition", "Dying is set when HP reaches 0 (C28, C36): deal damage instead "
                                             "(kind = \"damage\")")
        if isinstance(c, Heal) and c.dice is None and not c.flat:
            return _at(where, "a heal effect needs dice or a flat amount (it would restore nothing)")
        if not isinstance(c, DealDamage):
            continue
        if c.flat < 0:
            return _at(f"{where}.flat", "flat damage is 0 or more (healing is its own effect: kind = \"heal\")")
        if c.dice is None and not c.flat:
            return _at(where, "a damage effect needs dice or a flat amount")
        if c.half and not on_success:
            return _at(f"{where}.half", "half is for a save's success branch (on_success): half of the damage, "
                                        "rounded down, where the saver succeeded (C15)")
    return ""


def _when_problem(a: Ability) -> str:
    """A ``when`` that could never hold: a condition both required and refused of the same combatant."""
    for has, lacks in (("owner_has", "owner_lacks"), ("target_has", "target_lacks")):
        for k, condition in enumerate(getattr(a.when, lacks)):
            if condition in getattr(a.when, has):
                return _at(f"when.{lacks}[{k}]", f"{condition} is in both {has} and {lacks}: the ability could "
                                                 "never apply")
    return ""


def _ability_problem(a: Ability) -> str:
    """What is wrong with an ability as a whole (msgspec reports it at the ability's path), or ""."""
    problem = _damage_problem(a) or _when_problem(a)
    if problem:
        return problem
    if a.use not in _ON_TURN and (a.target != "enemy" or a.within_reach):
        return "target and within_reach are for abilities used on one's turn (use = \"action\", ...)"
    if any(isinstance(e, Save) for e in a.effects) and a.use not in _ON_TURN:
        return "a save effect is for an ability used on one's turn (use = \"action\", \"bonus_action\" or \"free\")"
    if a.use in _ON_TURN:
        return _on_turn_problem(a)
    if a.use == "passive":
        if a.trigger is not None:
            return _at("trigger", "a passive ability has no trigger (use = \"trigger\" for one)")
        if a.cost != AbilityCost() or a.uses is not None or a.deferred is not None:
            field = "cost" if a.cost != AbilityCost() else "uses" if a.uses is not None else "deferred"
            return _at(field, "a passive ability costs nothing and has no uses: it applies while its `when` holds")
        wrong = [(i, type(e).__struct_config__.tag) for i, e in enumerate(a.effects)
                 if not isinstance(e, _PASSIVE_EFFECTS)]
        if wrong:
            return _at(f"effects[{wrong[0][0]}].kind", f"a passive ability's effects are modifier, dice, "
                       f"allow_defense, reroll, route and will_conversion; {wrong[0][1]!r} needs a trigger")
        empty = next((i for i, e in enumerate(a.effects) if isinstance(e, Reroll) and not e.faces), None)
        if empty is not None:
            return _at(f"effects[{empty}].faces", "a passive reroll is automatic: say which faces it rerolls "
                                                  "(faces = [1] rerolls 1s, C39)")
        if any(isinstance(e, ConvertToWill) for e in a.effects) and (
                a.applies_to != "self" or any(getattr(a.when, n) != getattr(When(), n) for n in _ATTACK_PREDICATES)):
            return ("Will conversion is the owner's, on every hit it takes (C31): its `when` reads the owner only "
                    "(owner_has, owner_lacks, owner_hp_at_most) and it applies to the owner (applies_to = \"self\")")
        if any(isinstance(e, Route) for e in a.effects) and a.applies_to != "self":
            return "routing is the attacker's own choice (C12): applies_to = \"self\""
        return ""
    if a.trigger is None:
        return "a triggered ability needs a trigger (its moment and whom it is offered to)"
    if a.applies_to != "self":
        return _at("applies_to", "applies_to is for passive abilities")
    moment, owner, outcome = a.trigger.moment, a.trigger.owner, a.trigger.outcome
    owners = (SAVE_OWNERS if moment == "save.resolved" else ROUND_OWNERS if moment in OWN_MOMENTS
              else MOVE_OWNERS if moment == "move.left" else CONDITION_OWNERS if moment == "condition.applied"
              else ATTACK_OWNERS)
    if owner not in owners:
        return _at("trigger.owner", f"at {moment} the trigger's owner is " + (
            f"\"{owners[0]}\"" if len(owners) == 1 else "one of " + ", ".join(owners)) + f", not {owner!r}")
    if a.trigger.condition is not None and moment != "condition.applied":
        return _at("trigger.condition",
                   f"a trigger's condition is the one applied at the moment condition.applied, not at {moment}")
    if moment in (*OWN_MOMENTS, "condition.applied"):
        return _round_problem(a)
    if outcome in ("hit", "miss", "crit") and moment != "attack.determined":
        return _at("trigger.outcome",
                   "a trigger's outcome (hit, miss, crit) is known from the moment attack.determined")
    if outcome in ("success", "failure") and moment != "save.resolved":
        return _at("trigger.outcome", "a save's outcome (success, failure) is known at the moment save.resolved (a "
                                      "check's at check.resolved)")
    predicate = _set_predicate(a.when, _ATTACK_PREDICATES)
    if moment in ("save.resolved", "move.left") and predicate:
        return _at(f"when.{predicate}", f"{'a save' if moment == 'save.resolved' else 'a move'} is no attack: at "
                                    f"{moment} `when` reads the owner and the "
                                    f"{'saver' if moment == 'save.resolved' else 'mover'} (owner_has, owner_lacks, "
                                    "owner_hp_at_most, target_has, target_lacks)")
    if outcome != "any" and moment == "move.left":
        return _at("trigger.outcome", "move.left has no outcome (outcome = \"any\")")
    done_at_once = moment in ("attack.determined", "attack.damaged", "save.resolved", "move.left")
    attacks = [i for i, e in enumerate(a.effects) if isinstance(e, MakeAttack)]
    if attacks and moment not in ("attack.determined", "attack.damaged"):
        return _at(f"effects[{attacks[0]}]", "an attack effect answers an attack: moment = \"attack.determined\" or "
                   f"\"attack.damaged\" (C38), not {moment!r}")
    if attacks and attacks != [len(a.effects) - 1]:
        return _at(f"effects[{attacks[0]}]",
                   "an ability makes one attack, its last effect (what it does before comes first, C25)")
    for i, e in enumerate(a.effects):
        problem = _triggered_effect_problem(a, e, moment, done_at_once)
        if problem:
            return _at(f"effects[{i}]", problem)
    return ""


def _triggered_effect_problem(a: Ability, e: Effect, moment: str, done_at_once: bool) -> str:
    """What is wrong with one effect of a triggered ability at its moment, or ""."""
    assert a.trigger is not None
    if isinstance(e, _PASSIVE_ONLY):
        return f"{type(e).__struct_config__.tag} is a passive effect (use = \"passive\")"
    if isinstance(e, Reroll) and (a.trigger.moment != "attack.rolled" or a.trigger.owner != "attacker"):
        return ("a chosen reroll of one's hit dice comes once they are seen: moment = \"attack.rolled\", "
                "owner = \"attacker\" (C39)")
    if isinstance(e, (Modify, AddDice, Reroll)) and moment in ("attack.damaged", "save.resolved", "move.left"):
        return (f"at {moment} the {_RESOLVED[moment]} is resolved: a "
                f"{type(e).__struct_config__.tag} effect cannot change it (damage, heal, condition and clear "
                "are done at once)")
    if isinstance(e, AddDice) and e.pool != "damage":
        return ("a triggered ability comes after the hit is rolled: its dice go to the damage pool "
                f"(pool = \"damage\"), not {e.pool!r}")
    if isinstance(e, MakeAttack):
        return ""
    if not isinstance(e, (Modify, AddDice, Reroll)) and not done_at_once:
        return (f"a {type(e).__struct_config__.tag} effect is done when the hit is known "
                "(moment = \"attack.determined\", \"attack.damaged\" or \"save.resolved\")")
    if isinstance(e, Modify) and e.total != "damage" and moment not in ("attack.declared", "attack.rolled"):
        return (f"a {e.total} modifier must come before the hit is determined (moment = \"attack.declared\" or "
                "\"attack.rolled\")")
    return ""


#: What is over at a moment after which nothing can be changed, in words.
_RESOLVED = {"attack.damaged": "attack", "save.resolved": "save", "move.left": "move"}


def _round_problem(a: Ability) -> str:
    """What is wrong with an ability triggered at a moment of the round (a turn's start or end, the round's end),
    at a check resolved, or when a condition is applied, or "": no attack is in play, so its effects are done at
    once and its `when` reads the owner; at a moment of the round or a check the owner alone takes part, so its
    effects are the owner's (a check's outcome, success or failure, is the owner's own)."""
    assert a.trigger is not None
    moment = a.trigger.moment
    if a.trigger.outcome not in (("any", "success", "failure") if moment == "check.resolved" else ("any",)):
        return _at("trigger.outcome", f"{moment} has no outcome (outcome = \"any\")" if moment != "check.resolved"
                   else "a check's outcome is success or failure (a tie is no success, C16), or any")
    wrong = _set_predicate(a.when, (*_ATTACK_PREDICATES, "target_has", "target_lacks"))
    if wrong:
        return _at(f"when.{wrong}", f"at {moment} there is no attack"
                   + (" and no target" if moment != "condition.applied" else "")
                   + ": `when` reads the owner (owner_has, owner_lacks, owner_hp_at_most)"
                   + (" and the trigger names the condition (trigger.condition)" if moment == "condition.applied"
                      else ""))
    for i, e in enumerate(a.effects):
        if isinstance(e, (Modify, AddDice, Reroll, MakeAttack, *_PASSIVE_ONLY)):
            return _at(f"effects[{i}]", f"{type(e).__struct_config__.tag!r} needs an attack: at {moment} an "
                                        "ability does damage, heal, condition or clear")
        if getattr(e, "to", "actor") != "actor" and moment in OWN_MOMENTS:
            return _at(f"effects[{i}].to",
                       f"at {moment} nobody else takes part: its effects go to the owner (to = \"actor\")")
    return ""


def _on_turn_problem(a: Ability) -> str:
    """What is wrong with an ability used on one's turn, or ""."""
    if a.trigger is not None or a.applies_to != "self":
        return "an ability used on one's turn has no trigger and no applies_to"
    if any(getattr(a.when, name) != getattr(When(), name) for name in _ATTACK_PREDICATES):
        return ("an ability used on one's turn makes no attack: its `when` reads the owner and the target "
                "(owner_has, owner_lacks, owner_hp_at_most, target_has, target_lacks)")
    if any(isinstance(e, MakeAttack) for e in a.effects):
        return ("an attack effect answers an attack (a triggered ability); on one's turn an attack is "
                "declare_attack")
    wrong = [type(e).__struct_config__.tag for e in a.effects if isinstance(e, _PASSIVE_EFFECTS)]
    if wrong:
        return (f"an ability used on one's turn does its effects at once: {wrong[0]!r} belongs to a passive or "
                "triggered ability")
    saves = [e for e in a.effects if isinstance(e, Save)]
    if saves and len(a.effects) > 1:
        return "a save effect is an ability's only effect (its branches say what follows)"
    if saves and a.target == "self":
        return "a save is made by another (C15): target = \"ally\", \"enemy\" or \"any\""
    return ""


class AbilityLibrary(_Content, frozen=True, kw_only=True):
    """A content library file: abilities by id (``[abilities.<id>]`` in TOML)."""

    abilities: dict[Identifier, Ability] = {}

    def __post_init__(self) -> None:
        super().__post_init__()
        for key, ability in self.abilities.items():
            if ability.id and ability.id != key:
                why = f"[C37] ability {key!r} says its id is {ability.id!r}: leave id out or make them equal"
                raise ValueError(_at(f"abilities{key_step(key)}.id", why))

    def get(self, ability_id: str) -> Ability | None:
        """The ability ``ability_id``, its id filled in from its key."""
        found = self.abilities.get(ability_id)
        return msgspec.structs.replace(found, id=ability_id) if found is not None and not found.id else found


def load_library(path: str | Path) -> AbilityLibrary:
    """Load an ability library file (TOML or JSON); errors name the file, the line and the field path."""
    return _load(Path(path), AbilityLibrary)


def _shipped_library() -> AbilityLibrary:
    """The shipped example abilities, read from the package's ``data/abilities.toml``."""
    resource = files("omen_core") / "data" / "abilities.toml"
    return decode_content(resource.read_bytes(), AbilityLibrary, source="abilities.toml", fmt="toml")


def with_abilities(sheet: CombatantSheet, *libraries: AbilityLibrary) -> CombatantSheet:
    """``sheet`` with each ability it lists by id that one of ``libraries`` defines written out in full (the first
    library that has it): what the log records, so a fight never depends on a library file again."""
    if not any(isinstance(a, str) for a in sheet.abilities):
        return sheet
    def written(entry: str | Ability) -> str | Ability:
        if not isinstance(entry, str):
            return entry
        return next((a for lib in libraries if (a := lib.get(entry)) is not None), entry)
    return msgspec.structs.replace(sheet, abilities=tuple(written(e) for e in sheet.abilities))


#: Each shorthand key a sheet may set and the shipped ability (or abilities, by value) it stands for (C37): the
#: engine runs the ability; the key is kept so every sheet and log written before abilities were data still means
#: what it meant.
SHORTHANDS: Final[dict[str, str]] = {
    "features.rage": "brute_rage (its dice effect: the sheet's count and die)",
    "features.extra_primary_dice": "extra_primary_die (1) or two_extra_primary_dice (2)",
    "features.rogue_routing": "rogue_routing",
    "training.veteran_shield": "veteran_shield_training",
    "features.will_conversion": "will_conversion (true) or will_conversion_choice (\"choice\")",
}


def _shorthand_ids(features: Features, training: Training) -> tuple[tuple[str, str], ...]:
    """The shorthand keys set on a sheet and the shipped ability id each stands for, in ``SHORTHANDS`` order."""
    return tuple((key, ability_id) for key, ability_id in (
        ("features.rage", "brute_rage" if features.rage is not None else ""),
        ("features.extra_primary_dice", {0: "", 1: "extra_primary_die"}.get(features.extra_primary_dice,
                                                                           "two_extra_primary_dice")),
        ("features.rogue_routing", "rogue_routing" if features.rogue_routing else ""),
        ("training.veteran_shield", "veteran_shield_training" if training.veteran_shield else ""),
        ("features.will_conversion", "will_conversion_choice" if features.will_conversion == "choice"
         else "will_conversion" if features.will_conversion else ""),
    ) if ability_id)



def _expand(features: Features, training: Training) -> tuple[Ability, ...]:
    """The shipped abilities a sheet's shorthand keys stand for (C37), in ``SHORTHANDS`` order."""
    found = []
    for _key, ability_id in _shorthand_ids(features, training):
        ability = SHIPPED_ABILITIES.get(ability_id)
        assert ability is not None, f"the shipped library lacks {ability_id!r}"
        if ability_id == "brute_rage" and features.rage is not None:
            ability = msgspec.structs.replace(ability, placeholder=False, effects=(
                AddDice(pool="damage", count=features.rage.count, die=features.rage.die),))
        found.append(ability)
    return tuple(found)


def content_hash(value: msgspec.Struct) -> str:
    """sha256 (hex) of a content value's canonical JSON (fields in declaration order, sets sorted)."""
    return hashlib.sha256(_CANONICAL.encode(value)).hexdigest()


_CANONICAL = msgspec.json.Encoder(order="deterministic")

C = TypeVar("C", bound=msgspec.Struct)


def canonical(value: C) -> C:
    """``value`` as the log holds it: its mappings in the canonical order (sorted keys) a log line encodes, so that a
    live fight's state holds them as a reloaded one does (a ruleset read from TOML kept the file's order, and a
    live state encoded to other bytes than the same state replayed)."""
    return msgspec.json.decode(_CANONICAL.encode(value), type=type(value))


def load_ruleset(path: str | Path | None = None) -> Ruleset:
    """Load a ruleset file (TOML or JSON); without a path, the shipped core ruleset (:data:`CORE_RULESET`)."""
    if path is None:
        return CORE_RULESET
    return _load(Path(path), Ruleset)


def _core_ruleset() -> Ruleset:
    """The shipped core ruleset, read from the package's ``data/core.toml``."""
    resource = files("omen_core") / "data" / "core.toml"
    return decode_content(resource.read_bytes(), Ruleset, source="core.toml", fmt="toml")



def load_sheet(path: str | Path) -> CombatantSheet:
    """Load a combatant sheet from a ``.toml`` or ``.json`` file."""
    return _load(Path(expect(path, (str, os.PathLike), "path", "a path (str or os.PathLike)")), CombatantSheet)


def refused_sheet(refused: RuleViolation, source: str, text: str, fmt: Literal["toml", "json"],
                  where: str = "$") -> ContentError | None:
    """A sheet the rules refuse when its combatant joins (``refused``: C14, C28, C37, an id taken), named where it
    is written, if the refusal names the sheet's field (its ``field`` fact, a path in the sheet): in ``source``,
    whose text is ``text``, the sheet at ``where`` in it (``$`` for a sheet file, ``$.sheet`` for a join command),
    at that field's line: ``join.toml:9: the rules refuse this combatant: [C37] ... (at $.sheet.abilities[1])``."""
    return placed_refusal(refused, source, text, fmt, where, "the rules refuse this combatant: ")


def placed_refusal(refused: RuleViolation, source: str, text: str, fmt: Literal["toml", "json"], where: str = "$",
                   lead: str = "") -> ContentError | None:
    """A command the rules refuse, named where the field they name (its ``field`` fact, a path in the command) is
    written: in ``source`` (whose text is ``text``), the command at ``where`` in it, at that field's line
    (``attack.toml:4: [C4] 'vesh' has no weapon 'maul' (weapons: knife) (at $.weapon)``); None if the refusal
    names no field."""
    path = refused.field_under(where)
    if path is None:
        return None
    return ContentError(source, path, f"{lead}{refused}", Lines(text, fmt)(path))


def _load(p: Path, kind: type[T]) -> T:
    fmt: Literal["toml", "json"] = "toml" if p.suffix == ".toml" else "json"
    return decode_content(read_content(p), kind, source=str(p), fmt=fmt)


MAX_CONTENT_BYTES = 16 << 20
"""The most a sheet, ruleset or scenario file may hold: 16 MiB (docs/content.md)."""


def read_content(path: str | Path, limit: int = MAX_CONTENT_BYTES) -> str:
    """The text of a content file (a sheet, a ruleset, a scenario, a command), read with bounds: a
    :class:`ContentError` naming the file if it cannot be read, is not a regular file (a directory, a device, a
    pipe), holds more than ``limit`` bytes, or is not UTF-8 (naming the byte offset and its line). A UTF-8 byte
    order mark at its start (an editor's) is no part of the text: it is left out (RFC 8259 §8.1 lets a JSON reader
    ignore it; TOML is UTF-8 and a mark is no statement)."""
    source = str(path)
    data = _read_bounded(source, limit)
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ContentError(source, "$", f"not valid UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start}",
                           line) from None


def read_bounded(path: str | Path, limit: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them, read as :func:`read_content` reads (a
    device, a pipe or a directory is a :class:`ContentError` at once, never read; so is a larger file)."""
    return _read_bounded(str(path), limit)


def _read_bounded(source: str, limit: int) -> bytes:
    """At most ``limit`` bytes of the regular file ``source``; opened without blocking, so a pipe never hangs."""
    if "\x00" in source:
        raise ContentError(source, "$", "cannot read the file: a path cannot hold a NUL byte")
    try:
        fd = os.open(source, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ContentError(source, "$", f"cannot read the file: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ContentError(source, "$", "cannot read the file: not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as stream:
            data = stream.read(limit + 1)
    except OSError as exc:
        raise ContentError(source, "$", f"cannot read the file: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise ContentError(source, "$", f"cannot read the file: larger than {_size(limit)}, the most it may hold")
    return data


def _size(limit: int) -> str:
    """A byte count in words: 16 MiB, 1 MiB, 512 bytes."""
    return f"{limit >> 20} MiB" if limit >= 1 << 20 and not limit % (1 << 20) else f"{limit} bytes"


T = TypeVar("T")

def reason_and_path(exc: Exception) -> tuple[str, str]:
    """What a msgspec ``ValidationError`` says is wrong, and the JSON path it says where (``$`` if none):
    ``"Expected `int`, got `str` - at `$.hp`"`` gives ``("Expected `int`, got `str`", "$.hp")``; a required field
    left out is named where it belongs (``$.command.who``, not msgspec's ``$.command``); a mapping's key that is
    not a key it may have (msgspec's ``- at `key` in `$.abilities```) is ``$.abilities[key]``, which
    :func:`name_keys` names (``$.abilities."grit two"``)."""
    text = str(exc).replace("got `NoneType`", "got `null`")  # a converted value's type in JSON's words
    reason, key_in, mapping = text.rpartition(_KEY_IN)
    if key_in:
        return reason, "$" + mapping.removesuffix("`") + "[key]"
    head, found, tail = text.rpartition(" - at `$")
    if not found:  # at the top: no path, or a problem naming a field of the top value (_at)
        reason, inner, field = text.partition(_INNER)
        if inner:
            path = "$." + field.removesuffix("`")
        else:
            reason, _, path = text.partition(" - at `")
            path = path.removesuffix("`") or "$"
    else:
        reason, inner, field = head.partition(_INNER)  # a problem naming the field below that path (_at)
        path = "$" + tail.removesuffix("`") + (f".{field.removesuffix('`')}" if inner else "")
    named = _MISSING.fullmatch(reason) or _UNKNOWN.fullmatch(reason)
    return reason, path + f".{named['field']}" if named else path  # where the field left out belongs, or is written


#: How msgspec says a mapping's key is not one it may have: ``... - at `key` in `$.abilities```.
_KEY_IN = " - at `key` in `$"
#: msgspec's words for a required field left out, and for a field the object does not have (it says the object's
#: path, not the field's: the field's is where it belongs, or the line it is written on).
_MISSING = re.compile(r"Object missing required field `(?P<field>[A-Za-z_][A-Za-z0-9_]*)`")
_UNKNOWN = re.compile(r"Object contains unknown field `(?P<field>[A-Za-z_][A-Za-z0-9_-]*)`")


def decode_content(data: bytes | str, kind: type[T], *, source: str = "<input>",
                   fmt: Literal["toml", "json"] = "json") -> T:
    """Decode and validate ``data`` as ``kind``; errors name ``source`` and the field path.

    msgspec reports a bad value inside a mapping as ``$.skills[...]``; the
    path in our error names the key instead (``$.skills.Perception``).
    """
    library = "[C37] " if kind is AbilityLibrary else ""  # a library's every problem is an ability's (C37)
    try:
        raw = msgspec.toml.decode(data) if fmt == "toml" else msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        twice_declared = _DECLARED_TWICE.search(str(exc))
        if twice_declared is not None:  # TOML's "Cannot declare ('abilities', 'x') twice": the table, by its path
            steps = re.findall(r"'((?:[^'\\]|\\.)*)'", twice_declared["keys"])
            where = "$" + "".join(key_step(k) for k in steps)
            raise ContentError(source, where, f"{library}the table [{'.'.join(steps)}] is written twice: write it "
                               "once (or give the second its own name)", error_line(str(exc), _text(data))) from None
        raise ContentError(source, "$", f"{library}not valid {fmt.upper()}: {json_error_words(str(exc), data)}",
                           error_line(str(exc), _text(data))) from None
    except RecursionError:
        raise ContentError(source, "$", f"not valid {fmt.upper()}: nested too deeply", 1) from None
    try:
        odd = non_finite(raw, "$")
    except RecursionError:
        raise ContentError(source, "$", "nested too deeply", 1) from None
    if odd is not None:  # TOML's inf and nan: no number a log can hold (its lines are JSON)
        raise ContentError(source, odd[0], f"{odd[1]} is not a number a fight can use (write a finite number)",
                           Lines(_text(data), fmt)(odd[0]))
    big = beyond_whole(raw)
    if big is not None:  # a log's lines are JSON, read in any language (I-JSON, RFC 7493)
        raise ContentError(source, big, f"a whole number past {MAX_WHOLE:,} (2**53 - 1, either sign) is more than "
                           "every JSON reader holds exactly: write a smaller one", Lines(_text(data), fmt)(big))
    twice = named_twice(data) if fmt == "json" else None  # (TOML's reader refuses a key given twice itself)
    if twice is not None:
        raise ContentError(source, twice, f"{twice.rpartition('.')[2]!r} is given twice in one object (readers "
                           "differ on which counts: give it once)", Lines(_text(data), fmt)(twice))
    try:
        return msgspec.convert(raw, kind)
    except RecursionError:
        raise ContentError(source, "$", "nested too deeply", 1) from None
    except msgspec.ValidationError as exc:
        reason, path = reason_and_path(exc)
        named = name_keys(raw, kind, path)
        if reason.startswith(("Invalid enum value '", "Invalid value '")):  # say what was expected
            reason += one_of(reason, allowed_values(raw, kind, named))
        reason += _misspelt(reason, _raw_at(raw, named.rpartition(".")[0]))
        words = in_words(reason)
        raise ContentError(source, named, _content_rule(raw, kind, named, words)
                           + _unknown_field(reason, raw, kind, named) + words, Lines(_text(data), fmt)(named)) from None


#: The rule each part of a ruleset configures (docs/content.md, "The ruleset"): the first whose path pattern matches
#: an error's field path names the rule the error breaks; a ruleset's name and version configure none.
_RULESET_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(pattern), rule) for pattern, rule in (
    (r"^\$\.skill_attributes\b", "C2"),
    (r"^\$\.damage_types\b", "C14"),
    (r"^\$\.economy\.draw\b", "C35"),
    (r"^\$\.economy\b", "C20"),
    (r"^\$\.reaction_costs\b", "C22"),
    (r'^\$\.conditions\.(?:"(?:[^"\\]|\\.)*"|[^.\[]+)\.(?:damage|save_ends)\b', "C40"),
    (r"^\$\.conditions\b", "C28"),
))


def _content_rule(raw: object, kind: type, path: str, words: str) -> str:
    """The rule a content error breaks, as its words' prefix (``[C40] ``): an ability's (C37, C38:
    :func:`_ability_rule`) or a ruleset's part's (:data:`_RULESET_RULES`); "" for words that name their rule
    already, or a field no rule configures."""
    if words.startswith("[C") or re.search(r"\(C\d+[;,)]", words):
        return ""
    if kind is Ruleset:
        return next((f"[{rule}] " for pattern, rule in _RULESET_RULES if pattern.match(path)), "")
    return _ability_rule(raw, path)


#: TOML's words for a table written twice: ``Cannot declare ('abilities', 'x') twice``.
_DECLARED_TWICE = re.compile(r"Cannot declare \((?P<keys>.*?)\) twice")
#: The path of an ability in a library (``$.abilities.x``), a sheet (``$.abilities[2]``) or a command's or
#: scenario's sheet (``$.sheet.abilities[0]``, ``$.combatants[1].abilities[0]``).
_ABILITY_AT = re.compile(r'^\$(?:\.sheet|\.combatants\[\d+\])?\.abilities(?:\.("(?:[^"\\]|\\.)*"|[^.\[]+)|\[\d+\])')


def _ability_rule(raw: object, path: str) -> str:
    """The rule a problem in an ability written as data breaks, as its words' prefix (docs/abilities.md, "Errors"):
    ``[C41] `` for one in its ``uses`` or ``deferred`` table, else ``[C38] `` for a triggered ability's (``use =
    "trigger"``), ``[C37] `` for any other's; "" for a problem elsewhere, or one whose words name their rule
    already."""
    found = _ABILITY_AT.match(path)
    if found is None:
        return ""
    if re.match(r"\.(?:uses|deferred)\b", path[found.end():]):  # its uses or its deferred cost (C41), whatever its use
        return "[C41] "
    ability = _raw_at(raw, found.group())
    return "[C38] " if isinstance(ability, dict) and ability.get("use") == "trigger" else "[C37] "


def _misspelt(reason: str, parent: object) -> str:
    """For a required field left out of ``parent`` (the object that lacks it), the key written in its place, if one
    is close (``kindd`` for ``kind``): msgspec names only the field missing, which reads as if nothing was there."""
    missing = _MISSING.fullmatch(reason)
    if missing is None or not isinstance(parent, dict):
        return ""
    close = difflib.get_close_matches(missing["field"], [str(k) for k in parent], n=1)
    return f" (it has `{close[0]}`: did you mean `{missing['field']}`?)" if close else ""


def _unknown_field(reason: str, raw: object, kind: object, path: str) -> str:
    """For a field the object at ``path`` does not take (msgspec's "unknown field"), what it most likely meant
    (``sumary``: ``summary``; ``defence``: ``defense``) and the fields it takes (a tester: the words named neither),
    said before msgspec's words (which end with the field, as the path after them does: "did you mean `summary`?
    (this table takes: id, name, ...): Object contains unknown field `sumary` (at $.abilities.x.sumary)")."""
    unknown = _UNKNOWN.search(reason)
    if unknown is None:
        return ""
    field = unknown["field"]
    parent = path.removesuffix("." + field) if path.endswith("." + field) else path
    fields = allowed_fields(raw, kind, parent)
    if not fields:
        return ""
    close = near(field, fields)
    takes = ", ".join(fields)
    return f"did you mean `{close[0]}`? (this table takes: {takes}): " if close else f"this table takes only {takes}: "


def allowed_fields(raw: object, kind: object, path: str) -> list[str]:
    """The fields the object at the named ``path`` of ``raw`` decoded as ``kind`` takes, in their order (a tagged
    union's member by the tag ``raw`` gives); empty if that is no object of fixed fields."""
    found = _type_at(raw, kind, path)
    return _struct_fields(*found) if found is not None else []


def _type_at(raw: object, kind: object, path: str) -> tuple[object, object] | None:
    """The type (msgspec.inspect) of the field at the named ``path`` of ``raw`` decoded as ``kind``, and its raw
    value, stepping through each tagged union by the tag ``raw`` gives; None where the path leaves the type."""
    info: object = msgspec.inspect.type_info(kind)
    for name, index in _NAMED_STEP.findall(path[1:]):
        key = json.loads(name) if name.startswith('"') else name
        info, raw = _step(info, raw, key if name else None, int(index) if index else 0)
        if info is None:
            return None
    return info, raw


def _struct_fields(info: object, raw: object) -> list[str]:
    """The field names of the struct type ``info`` stands for (through metadata and unions, a tagged union's
    member by ``raw``'s tag; the tag field first)."""
    mi = msgspec.inspect
    if isinstance(info, mi.Metadata):
        return _struct_fields(info.type, raw)
    if isinstance(info, mi.UnionType):
        structs = [t for t in info.types if isinstance(t, mi.StructType)]
        tagged = [t for t in structs if t.tag_field is not None and isinstance(raw, dict)
                  and raw.get(t.tag_field) == t.tag]
        return _struct_fields((tagged or structs)[0], raw) if len(tagged or structs) == 1 else []
    if isinstance(info, mi.StructType):
        tag = [info.tag_field] if info.tag_field is not None else []
        return [*tag, *(f.encode_name for f in info.fields)]
    return []


def _raw_at(raw: object, path: str) -> object:
    """The decoded value at the named ``path`` (:func:`name_keys`'s: ``$.effects[0]``) of ``raw``; None if there is
    none."""
    for name, index in _NAMED_STEP.findall(path[1:]):
        if name:
            key = json.loads(name) if name.startswith('"') else name
            raw = raw.get(key) if isinstance(raw, dict) else None
        else:
            raw = raw[int(index)] if isinstance(raw, list) and int(index) < len(raw) else None
    return raw


#: One step of a named path (:func:`name_keys`): ``.name``, ``."a key"`` (a JSON string) or ``[index]``.
_NAMED_STEP = re.compile(r'\.("(?:[^"\\]|\\.)*"|[^.\[]+)|\[(\d+)\]')


def allowed_values(raw: object, kind: object, path: str) -> list[str]:
    """The values the field at the named ``path`` (``$.abilities.x.uses.per``, as :func:`name_keys` writes it) of
    ``raw`` decoded as ``kind`` may take, sorted, where it takes one of a fixed few (a literal, an enum, or the tag
    of a tagged union: ``effects[0].kind``); empty otherwise. ``raw`` picks the member of a tagged union on the
    way."""
    found = _type_at(raw, kind, path)
    return sorted({str(v) for v in _literal_values(found[0])}) if found is not None else []


def _step(info: object, raw: object, name: str | None, index: int) -> tuple[object, object]:
    """The type (msgspec.inspect) and raw value one step below ``info``: the field or key ``name``, else the item at
    ``index``. A union is stepped through the member ``raw``'s tag names (or the first that has the step); the tag
    field of a tagged union stands for a literal of its members' tags."""
    mi = msgspec.inspect
    if isinstance(info, mi.Metadata):
        return _step(info.type, raw, name, index)
    if isinstance(info, mi.UnionType):
        structs = [t for t in info.types if isinstance(t, mi.StructType) and t.tag_field is not None]
        if structs and name == structs[0].tag_field:
            return mi.LiteralType(values=tuple(t.tag for t in structs)), None
        given = raw.get(structs[0].tag_field) if structs and isinstance(raw, dict) else None
        chosen: list[object] = [t for t in structs if t.tag == given] or list(info.types)
        return next(((t, r) for t, r in (_step(u, raw, name, index) for u in chosen) if t is not None), (None, None))
    if name is not None:
        if isinstance(info, mi.StructType):
            field = next((f for f in info.fields if f.encode_name == name), None)
            return (field.type, raw.get(name) if isinstance(raw, dict) else None) if field is not None else (None, None)
        if isinstance(info, mi.DictType):
            return info.value_type, raw.get(name) if isinstance(raw, dict) else None
        return None, None
    item = raw[index] if isinstance(raw, list) and index < len(raw) else None
    if isinstance(info, mi.ListType | mi.VarTupleType | mi.SetType | mi.FrozenSetType):
        return info.item_type, item
    if isinstance(info, mi.TupleType) and index < len(info.item_types):
        return info.item_types[index], item
    return None, None


def _literal_values(info: object) -> tuple[object, ...]:
    """The values of a literal or an enum (through unions and metadata); none for any other type."""
    mi = msgspec.inspect
    if isinstance(info, mi.Metadata):
        return _literal_values(info.type)
    if isinstance(info, mi.LiteralType):
        return info.values
    if isinstance(info, mi.EnumType):
        return tuple(m.value for m in info.cls)
    if isinstance(info, mi.UnionType):
        return tuple(v for t in info.types for v in _literal_values(t))
    return ()


def one_of(reason: str, allowed: list[str]) -> str:
    """What to add to ``reason`` (msgspec's "Invalid enum value 'x'") to say what was expected: "; one of: a, b, c",
    with what the value given most likely meant (:data:`MEANT`, then the values it is part of, then one close in
    spelling); nothing if ``allowed`` is empty."""
    if not allowed:
        return ""
    given = re.search(r"'(.*)'", reason)
    return f"; one of: {', '.join(allowed)}" + (_meant(given.group(1), allowed) if given else "")


#: What a GM writing a word omen does not take most likely meant, where the closest spelling would mislead (a
#: tester: ``use = "reaction"`` was told "did you mean 'action'?"): the word, the value it stands for (which must be
#: one of those allowed for the hint to be given), and how to write it.
MEANT: dict[str, tuple[str, str]] = {
    "reaction": ("trigger", 'an ability that answers something is use = "trigger" with a [trigger] table (C38)'),
    "reactive": ("trigger", 'an ability that answers something is use = "trigger" with a [trigger] table (C38)'),
    "interrupt": ("trigger", 'an ability that answers something is use = "trigger" with a [trigger] table (C38)'),
    "attack.hit": ("attack.determined", 'a hit is moment = "attack.determined" with outcome = "hit" (C38)'),
    "attack.miss": ("attack.determined", 'a miss is moment = "attack.determined" with outcome = "miss" (C38)'),
    "attack.missed": ("attack.determined", 'a miss is moment = "attack.determined" with outcome = "miss" (C38)'),
    "attack.crit": ("attack.determined", 'a critical hit is moment = "attack.determined" with outcome = "crit" '
                                         '(C38)'),
    "defender": ("target", 'the one an attack is made on is "target", C38'),
    "attacked": ("target", 'the one an attack is made on is "target", C38'),
}


def _meant(given: str, allowed: Sequence[str]) -> str:
    """" (did you mean ...?)" for a value ``given`` that ``allowed`` does not hold: what it stands for
    (:data:`MEANT`), else the values it is a word of (``ally``: ``ally_of_afflicted``, ``ally_of_target``), else
    the closest spelling; "" if none is near."""
    meant = MEANT.get(given.lower())
    if meant is not None and meant[0] in allowed:
        return f" ({meant[1]})"
    parts = [a for a in allowed if given.lower() in re.split(r"[_.]", a.lower())]
    close = parts[:3] or near(given, allowed)
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""


def near(given: str, known: Iterable[str]) -> list[str]:
    """The one of ``known`` ``given`` most likely misspells: the same but for case (``burning``, ``Burning``), else
    the closest spelling; none if nothing is close."""
    names = list(known)
    same = written_otherwise(given, names)  # the same but for case or Unicode normalization
    if same is not None:
        return [same]
    lowered = {k.lower(): k for k in names}
    return [lowered[c] for c in difflib.get_close_matches(given.lower(), list(lowered), n=1)]


def known_words(given: str, known: Iterable[str], what: str = "the ruleset knows") -> str:
    """``the ruleset knows: A, B, C`` and, if ``given`` is close to one, ``; did you mean 'B'?``: for a name a
    content file gives that its ruleset does not know (a condition, a damage type)."""
    names = list(known)
    otherwise = otherwise_said(given, names)  # the same text written otherwise says how
    close = near(given, names)
    return f"{what}: {', '.join(names)}" + (otherwise or (f"; did you mean {close[0]!r}?" if close else ""))


def non_finite(value: object, path: str = "$") -> tuple[str, str] | None:
    """The path of the first infinite or not-a-number float in decoded content, and how it was written, if any."""
    found = first_leaf(value, lambda v: isinstance(v, float) and not math.isfinite(v), path)
    if found is None:
        return None
    odd = found[1]
    assert isinstance(odd, float)
    return found[0], "nan" if math.isnan(odd) else ("inf" if odd > 0 else "-inf")


def _text(data: bytes | str) -> str:
    """Content as text (for finding a line)."""
    return data if isinstance(data, str) else data.decode("utf-8", "replace")


_REGEX = re.compile(r"^Expected `str` matching regex '(?P<pattern>.*)'$", re.S)


#: How a condition's name ends when it says what its holder is (Prone, Poisoned, Burning, Unseen, Invisible): such a
#: name follows "is"; another (a ruleset's Curse, Mark of the Hunt) follows "has".
_SAID_AS_STATE = ("ed", "ing", "en", "ible", "able", "ous", "ive", "ful", "less", "ne", "nt")


def condition_held(condition: str, held: bool = True) -> str:
    """A condition as its holder has it, in words: ``is Prone`` / ``is no longer Prone``, but ``has Curse`` / ``no
    longer has Curse`` for a ruleset's condition named by a noun (narration read "Vesh is Curse": found by a tester)."""
    state = " " not in condition.strip() and condition.lower().endswith(_SAID_AS_STATE)  # "Mark of the Hunt": has
    if held:
        return f"{'is' if state else 'has'} {condition}"
    return f"is no longer {condition}" if state else f"no longer has {condition}"


def in_words(reason: str, more: dict[str, str] | None = None) -> str:
    """msgspec's reason, with a pattern of ours (or of ``more``: pattern to words) said in words (a person reads
    "a die, d2 to d1000", not a regex). msgspec writes the pattern's backslashes doubled."""
    m = _REGEX.match(reason)
    pattern = m["pattern"].replace("\\\\", "\\") if m else ""
    words = ((more or {}).get(pattern) or _PATTERN_WORDS.get(pattern)) if m else None
    return f"Expected {words}" if words else reason


_SEGMENT = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.|key)\]")


def name_keys(raw: object, kind: object, path: str) -> str:
    """Replace each ``[...]`` in a msgspec error path by the mapping key whose value fails (``raw``: the decoded
    value that failed to validate as ``kind``): ``$.skills[...]`` becomes ``$.skills.Perception``; and a last
    ``[key]`` (:func:`reason_and_path`) by the key that is not one the mapping may have: ``$.abilities[key]``
    becomes ``$.abilities."grit two"``. A key that is not a bare TOML key is named as a JSON string
    (:func:`~omen_core.locate.key_step`)."""
    out = "$"
    for name, index in _SEGMENT.findall(path[1:]):
        kind = _unwrap(kind)
        if name:
            out += f".{name}"
            raw = raw.get(name) if isinstance(raw, dict) else None
            kind = get_type_hints(kind, include_extras=True).get(name) if isinstance(kind, type) else None
        elif index == "key":
            keys = {k: k for k in raw} if isinstance(raw, dict) else None  # each key checked as a key
            key = _failing_key(keys, (get_args(kind) or (None,))[0])
            out += key_step(key) if key is not None else "[key]"
        elif index != "...":
            out += f"[{index}]"
            raw = raw[int(index)] if isinstance(raw, list) and int(index) < len(raw) else None
            kind = (get_args(kind) or (None,))[0]
        else:
            value_kind = (get_args(kind) or (None, None))[-1]
            key = _failing_key(raw, value_kind)
            out += key_step(key) if key is not None else "[...]"
            raw, kind = (raw[key] if key is not None and isinstance(raw, dict) else None), value_kind
    return out


def _unwrap(kind: object) -> object:
    """Strip ``Annotated`` and ``X | None`` down to the type that holds fields or items."""
    while get_origin(kind) is Annotated:
        kind = get_args(kind)[0]
    args = [a for a in get_args(kind) if a is not type(None)]
    if get_origin(kind) in (Union, UnionType) and len(args) == 1:
        return _unwrap(args[0])
    return kind


def _failing_key(raw: object, value_kind: object) -> str | None:
    """The key of the first value of the mapping ``raw`` that does not validate as ``value_kind``; None if none
    fails."""
    if not isinstance(raw, dict) or value_kind is None:
        return None
    for key, value in raw.items():
        try:
            msgspec.convert(value, value_kind)
        except msgspec.ValidationError:
            return str(key)
    return None


#: The shipped core ruleset, parsed once at import (about 2 ms): a constant, immutable like every ruleset.
CORE_RULESET: Final[Ruleset] = _core_ruleset()
#: The shipped abilities (``omen_core/data/abilities.toml``, C37): a sheet lists them by id.
SHIPPED_ABILITIES: Final[AbilityLibrary] = _shipped_library()
