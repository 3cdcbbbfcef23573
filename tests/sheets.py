"""Small combatant sheets for tests, built in code so each test states the numbers it relies on."""

from __future__ import annotations

from collections.abc import Mapping

from omen_core.content import (
    ATTRIBUTES,
    Attribute,
    AttributeName,
    Attributes,
    CombatantSheet,
    Skill,
    content_hash,
    load_ruleset,
)
from omen_core.events import CombatantJoined

#: The shipped core ruleset.
CORE = load_ruleset()


def sheet(cid: str, side: str = "heroes", hp: int = 20, will: int = 10,
          skills: dict[str, tuple[AttributeName, int]] | None = None, **attrs: tuple[int, int]) -> CombatantSheet:
    """A sheet whose attributes default to d6 +0; pass e.g. ``STR=(8, 2)`` for a d8 with bonus 2."""
    return CombatantSheet(id=cid, name=cid.title(), side=side, hp=hp, will=will, attributes=attributes(attrs),
                          skills={k: Skill(attribute=a, level=lv) for k, (a, lv) in (skills or {}).items()})


def attributes(attrs: Mapping[str, tuple[int, int]]) -> Attributes:
    """Attributes from (sides, bonus) pairs by name, d6 +0 for those not given."""
    made = {name: Attribute(die=f"d{attrs.get(name, (6, 0))[0]}", bonus=attrs.get(name, (6, 0))[1])
            for name in ATTRIBUTES}
    return Attributes(**made)


def joined(s: CombatantSheet) -> CombatantJoined:
    """The event of ``s`` joining a fight."""
    return CombatantJoined(sheet=s, sheet_hash=content_hash(s))
