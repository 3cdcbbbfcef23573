"""Content schemas: combatant sheets (attributes, skills, resources), loaded from TOML or JSON.

Sheets are msgspec Structs, so loading validates them: an unknown key (a
typo) or a wrong type is a :class:`~omen_core.errors.ContentError` naming
the file and the JSON path of the field.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import UnionType
from typing import Annotated, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

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
    """Decode and validate ``data`` as ``kind``; errors name ``source`` and the field path.

    msgspec reports a bad value inside a mapping as ``$.skills[...]``; the
    path in our error names the key instead (``$.skills.Perception``).
    """
    try:
        raw = msgspec.toml.decode(data) if fmt == "toml" else msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        raise ContentError(source, "$", f"not valid {fmt.upper()}: {exc}") from None
    try:
        return msgspec.convert(raw, kind)
    except msgspec.ValidationError as exc:
        m = _AT.match(str(exc))
        path, reason = (m["path"], m["reason"]) if m else ("$", str(exc))
        raise ContentError(source, _name_keys(raw, kind, path), reason) from None


_SEGMENT = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")


def _name_keys(raw: object, kind: object, path: str) -> str:
    """Replace each ``[...]`` in a msgspec error path by the mapping key whose value fails."""
    out = "$"
    for name, index in _SEGMENT.findall(path[1:]):
        kind = _unwrap(kind)
        if name:
            out += f".{name}"
            raw = raw.get(name) if isinstance(raw, dict) else None
            kind = get_type_hints(kind, include_extras=True).get(name) if isinstance(kind, type) else None
        elif index != "...":
            out += f"[{index}]"
            raw = raw[int(index)] if isinstance(raw, list) and int(index) < len(raw) else None
            kind = (get_args(kind) or (None,))[0]
        else:
            value_kind = (get_args(kind) or (None, None))[-1]
            key = _failing_key(raw, value_kind)
            out += f".{key}" if key is not None else "[...]"
            raw, kind = (raw[key] if key is not None else None), value_kind
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
    if not isinstance(raw, dict) or value_kind is None:
        return None
    for key, value in raw.items():
        try:
            msgspec.convert(value, value_kind)
        except msgspec.ValidationError:
            return key
    return None


def load_sheet(path: str | Path) -> CombatantSheet:
    """Load a combatant sheet from a ``.toml`` or ``.json`` file."""
    p = Path(path)
    fmt: Literal["toml", "json"] = "toml" if p.suffix == ".toml" else "json"
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ContentError(str(p), "$", f"cannot read the file: {exc.strerror}") from None
    return decode_content(data, CombatantSheet, source=str(p), fmt=fmt)
