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
           "Encircled", "Situational", "TermSource", "TERM_SOURCES", "Term", "bonus_terms", "modifier_terms",
           "HALF_ON_SUCCESS"]

DiceSourceKind = Literal["seeded", "manual", "scripted"]
PoolTag = Literal["primary", "fcs", "res", "active", "damage", "check", "save", "heal"]
RollPurpose = Literal[
    "hit", "base_defense", "active_defense", "damage", "ability_damage", "healing", "reroll",
    "check", "save", "stealth", "perception", "initiative", "roll_off",
]
Sequence_ = Annotated[int, msgspec.Meta(ge=1)]


class Part(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True, omit_defaults=True):
    """Base of the value objects that events and commands are made of; written without the fields at their
    defaults (docs/events.md, "Schema versions")."""


class Die(Part, frozen=True, kw_only=True):
    """One rolled die: the pool it belongs to (C6), its size and the face that came up, and its history (C39):
    ``origin``, the ability that added it to the pool (None: the rules' own die), and ``rerolled``, the face a
    reroll replaced (None: not rerolled; ``face`` is the face that counts). Both are left out of a line when None,
    so every die recorded before them keeps its bytes."""

    pool: PoolTag
    sides: Annotated[int, msgspec.Meta(ge=2, le=MAX_SIDES)]
    face: Annotated[int, msgspec.Meta(ge=1, le=MAX_SIDES)]
    origin: Annotated[str, msgspec.Meta(min_length=1, description=(
        "the ability that added this die to its pool, by name (absent: the rules' own die; C39)"))] | None = None
    rerolled: Annotated[int, msgspec.Meta(ge=1, le=MAX_SIDES, description=(
        "the face a reroll replaced (absent: not rerolled; `face` is the face that counts; C39)"))] | None = None


#: The source a damage consequence's term records for what "half damage on a success" takes off (C15, C25): the
#: damage less half of it, rounded down. Recorded in logs as written: its words are explain's (``omen explain``).
HALF_ON_SUCCESS = "half (a save's success)"


class Modifier(Part, frozen=True, kw_only=True, repr_omit_defaults=True):
    """A situational or other bonus added to a total, and where it came from: ``source`` in words; ``origin`` what
    made it when it is not a situational claim or modifier (``condition``, C28; ``ability:<name>``, C37); ``owner``
    the combatant whose ability it is (a seat is shown its own terms in another's total). Both are recorded by the
    engine, absent from a line when empty (so every modifier recorded before them keeps its bytes), and not given
    with a command (a command's modifiers are the GM's situational word)."""

    source: str
    value: int
    origin: Annotated[str, msgspec.Meta(description=(
        "what made the term when it is not a situational claim or modifier: `condition` (C28) or `ability:<name>` "
        "(C37); absent: situational"))] = ""
    owner: Annotated[str, msgspec.Meta(description=(
        "the combatant whose ability gave the term (absent: none; a seat is shown its own terms)"))] = ""


#: Where a term of a total comes from: the dice, the combatant's sheet, its conditions (C28), its weapon or shield,
#: its training, a situational claim or modifier, an ability (``ability:<name>``), or a rule itself (a crit's extra
#: bonus, the floor of mitigation).
TermSource = str
TERM_SOURCES = ("dice", "sheet", "condition", "weapon", "training", "situational", "rule")


class Term(msgspec.Struct, frozen=True, gc=False):
    """One number that goes into a total, what it is and where it came from (a :data:`TERM_SOURCES` word, or
    ``ability:<name>``). ``kind`` names the term for a reader that words it its own way (``primary_die``,
    ``attribute_bonus``, ``situational``...: docs/events.md, "Every total's terms"); ``label`` is its short name,
    a modifier's own source for a modifier."""

    label: str
    value: int
    source: TermSource
    kind: str = ""


def bonus_terms(attribute: str, effective: int, conditions: int = 0, kind: str = "attribute_bonus"
                ) -> tuple[Term, ...]:
    """An attribute bonus as it stood (C1): the sheet's value, and what conditions changed (C28) if the caller
    knows it (``conditions``, the adjustment included in ``effective``; none, one term sourced to the sheet)."""
    if not conditions:
        return (Term(attribute, effective, "sheet", kind),)
    return (Term(attribute, effective - conditions, "sheet", kind),
            Term("conditions", conditions, "condition", "conditions"))


def modifier_terms(modifiers: tuple[Modifier, ...], source: TermSource, kind: str) -> tuple[Term, ...]:
    """Modifiers as terms, each labelled by its own source text, from its recorded origin (``condition``,
    ``ability:<name>``) or, where it records none, ``source``."""
    return tuple(Term(m.source, m.value, m.origin or source, kind) for m in modifiers)


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

    def terms(self, conditions: int = 0) -> tuple[Term, ...]:
        """The roll primitive term by term, adding up to ``total``: the die, the attribute bonus (split into the
        sheet's and the conditions' when ``conditions`` is given, C28), the skill level (C2), the modifiers."""
        skill = ((Term(f"{self.skill} level", self.skill_level, "sheet", "skill_level"),)
                 if self.skill is not None or self.skill_level else ())
        return (Term("die", self.face, "dice", "die"), *bonus_terms(self.attribute, self.attribute_bonus, conditions),
                *skill, *modifier_terms(self.modifiers, "situational", "modifier"))


class Encircled(Part, frozen=True, kw_only=True):
    """The encircled claim of C26: A, the attacking side adjacent to the target (the attacker included); D, the
    target's side adjacent to the attacker (the target included)."""

    attackers: Annotated[int, msgspec.Meta(ge=1)]
    defenders: Annotated[int, msgspec.Meta(ge=1)]


class Situational(Part, frozen=True, kw_only=True):
    """Situational modifiers claimed by the attacker (§Special Combat Conditions, C26, C27).

    Prone targets and Unseen attackers are not claimed: they come from the
    combatants' conditions.
    """

    high_ground: bool = False
    encircled: Encircled | None = None
