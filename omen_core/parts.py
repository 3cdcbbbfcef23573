"""The value objects events and commands are made of: dice, modifiers, roll totals, situational claims.

They sit below both :mod:`omen_core.commands` and :mod:`omen_core.events`
(an event records the command that produced its batch, and both name the
same modifiers and claims).
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from .limits import MAX_SIDES

__all__ = ["DiceSourceKind", "PoolTag", "RollPurpose", "Sequence_", "Part", "Die", "Modifier", "RollTotal",
           "Encircled", "Situational"]

DiceSourceKind = Literal["seeded", "manual", "scripted"]
PoolTag = Literal["primary", "fcs", "res", "active", "damage", "check", "save"]
RollPurpose = Literal[
    "hit", "base_defense", "active_defense", "damage",
    "check", "save", "stealth", "perception", "initiative", "roll_off",
]
Sequence_ = Annotated[int, msgspec.Meta(ge=1)]


class Part(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True, omit_defaults=True):
    """Base of the value objects that events and commands are made of; written without the fields at their
    defaults (docs/events.md, "Schema versions")."""


class Die(Part, frozen=True, kw_only=True):
    """One rolled die: the pool it belongs to (C6), its size and the face that came up."""

    pool: PoolTag
    sides: Annotated[int, msgspec.Meta(ge=2, le=MAX_SIDES)]
    face: Annotated[int, msgspec.Meta(ge=1, le=MAX_SIDES)]


class Modifier(Part, frozen=True, kw_only=True):
    """A situational or other bonus added to a total, and where it came from."""

    source: str
    value: int


class RollTotal(Part, frozen=True, kw_only=True):
    """One side of a check or save: the roll primitive, term by term.

    ``total = face + attribute_bonus + skill_level + sum(modifiers)``
    (rolls-and-resolution.txt §The Roll Primitive; C1, C2). ``counter`` is
    the counter of the ``dice_rolled`` event whose die gave ``face`` (it was
    called ``roll`` in schema version 1; the upcaster renames it).
    """

    roller: str
    attribute: str
    skill: str | None = None
    counter: Sequence_
    face: int
    attribute_bonus: int
    skill_level: int = 0
    modifiers: tuple[Modifier, ...] = ()
    total: int


class Encircled(Part, frozen=True, kw_only=True):
    """The encircled claim of C26: A attackers adjacent to the target, D defenders adjacent to the attacker."""

    attackers: Annotated[int, msgspec.Meta(ge=1)]
    defenders: Annotated[int, msgspec.Meta(ge=1)]


class Situational(Part, frozen=True, kw_only=True):
    """Situational modifiers claimed by the attacker (§Special Combat Conditions, C26, C27).

    Prone targets and Unseen attackers are not claimed: they come from the
    combatants' conditions.
    """

    high_ground: bool = False
    encircled: Encircled | None = None
