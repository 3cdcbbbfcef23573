"""Content schemas: combatant sheets (attributes, skills, resources), loaded from TOML or JSON.

Sheets are msgspec Structs, so loading validates them: an unknown key (a
typo) or a wrong type is a :class:`~omen_core.errors.ContentError` naming
the file and the JSON path of the field.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal, TypeVar

import msgspec

from .errors import ContentError

__all__ = [
    "ATTRIBUTES",
    "AttributeName",
    "Attribute",
    "Attributes",
    "Skill",
    "CombatantSheet",
    "load_sheet",
    "decode_content",
]

ATTRIBUTES = ("STR", "AGI", "INT", "RES", "FCS")
AttributeName = Literal["STR", "AGI", "INT", "RES", "FCS"]

Die = Annotated[str, msgspec.Meta(pattern=r"^d([2-9]|[1-9][0-9]+)$",
                                  description="an attribute die such as d8 (C1: any dN, N >= 2)")]
Identifier = Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$",
                                         description="letters, digits, '.', '_' or '-'")]


class _Content(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Base of every content schema: immutable, and unknown keys are rejected."""


class Attribute(_Content, kw_only=True):
    """One attribute: its die and its bonus (C1). The bonus may be negative."""

    die: Die
    bonus: int = 0

    @property
    def sides(self) -> int:
        """The number of faces of the attribute die (8 for ``d8``)."""
        return int(self.die[1:])


class Attributes(_Content, kw_only=True):
    """The five attributes of C1."""

    STR: Attribute
    AGI: Attribute
    INT: Attribute
    RES: Attribute
    FCS: Attribute

    def __getitem__(self, name: str) -> Attribute:
        if name not in ATTRIBUTES:
            raise KeyError(name)
        return getattr(self, name)


class Skill(_Content, kw_only=True):
    """A skill: the attribute it rolls with and its level (C2)."""

    attribute: AttributeName
    level: Annotated[int, msgspec.Meta(ge=0)] = 0


class CombatantSheet(_Content, kw_only=True):
    """A combatant as written on its sheet: who it is, its attributes, skills and resources.

    >>> sheet = decode_content(
    ...     '{"id": "kael", "name": "Kael", "side": "heroes", "hp": 20, "will": 10,'
    ...     ' "attributes": {"STR": {"die": "d8", "bonus": 2}, "AGI": {"die": "d6"},'
    ...     ' "INT": {"die": "d4"}, "RES": {"die": "d8", "bonus": 1}, "FCS": {"die": "d6"}}}',
    ...     CombatantSheet, source="kael.json")
    >>> sheet.attributes.STR.sides, sheet.attributes.STR.bonus
    (8, 2)
    """

    id: Identifier
    name: str
    side: Identifier
    hp: Annotated[int, msgspec.Meta(ge=1)]
    will: Annotated[int, msgspec.Meta(ge=0)] = 0
    attributes: Attributes
    skills: dict[str, Skill] = {}


T = TypeVar("T")

_AT = re.compile(r"^(?P<reason>.*) - at `(?P<path>[^`]*)`$", re.S)


def decode_content(data: bytes | str, kind: type[T], *, source: str = "<input>",
                      fmt: Literal["toml", "json"] = "json") -> T:
    """Decode and validate ``data`` as ``kind``; errors name ``source`` and the field path."""
    try:
        if fmt == "toml":
            return msgspec.toml.decode(data, type=kind)
        return msgspec.json.decode(data, type=kind)
    except msgspec.ValidationError as exc:
        m = _AT.match(str(exc))
        path, reason = (m["path"], m["reason"]) if m else ("$", str(exc))
        raise ContentError(source, path, reason) from None
    except msgspec.DecodeError as exc:
        raise ContentError(source, "$", f"not valid {fmt.upper()}: {exc}") from None


def load_sheet(path: str | Path) -> CombatantSheet:
    """Load a combatant sheet from a ``.toml`` or ``.json`` file."""
    p = Path(path)
    fmt: Literal["toml", "json"] = "toml" if p.suffix == ".toml" else "json"
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ContentError(str(p), "$", f"cannot read the file: {exc.strerror}") from None
    return decode_content(data, CombatantSheet, source=str(p), fmt=fmt)
