"""The written form without defaults: a field equal to its default is left out of every line and content hash.

msgspec's ``omit_defaults`` leaves a field out when it holds its default
*object* (or an empty collection), not any equal value: a sheet that writes
``damage_type = "slashing"`` decodes to another string than the default's,
and would be written out. :func:`settle_defaults`, called from the
``__post_init__`` of each struct with such a default (a non-empty string, a
float, a large int, a frozenset, a non-empty tuple, a struct), puts the
default object itself in place of an equal value, so that the written form
is canonical by value: equal values, equal bytes (docs/events.md, "Schema
versions"; docs/content.md).

>>> class Blade(msgspec.Struct, frozen=True, omit_defaults=True):
...     kind: str = "slashing"
...     def __post_init__(self) -> None:
...         settle_defaults(self)
>>> msgspec.json.encode(msgspec.json.decode(b'{"kind": "slashing"}', type=Blade))
b'{}'
"""

from __future__ import annotations

import msgspec

__all__ = ["settle_defaults", "needs_settling"]


def _identity_safe(default: object) -> bool:
    """Whether every value equal to ``default`` is the default object itself: None, booleans, the small ints
    CPython keeps one of, the empty string and the empty tuple."""
    if type(default) is int:
        return -5 <= default <= 256
    return default is None or isinstance(default, bool) or default in ("", ())


def needs_settling(kind: type[msgspec.Struct]) -> tuple[str, ...]:
    """The fields of ``kind`` whose default an equal value may not be, so :func:`settle_defaults` must run (a
    default from a factory, an empty dict or list, is left out by msgspec whatever object it is)."""
    return tuple(f.name for f in msgspec.structs.fields(kind)
                 if f.default is not msgspec.NODEFAULT and not _identity_safe(f.default))


def _settled_fields(kind: type[msgspec.Struct]) -> tuple[tuple[str, object], ...]:
    """The fields of ``kind`` :func:`settle_defaults` must look at, with their defaults: those whose default an
    equal value may not be (every other field holds its default object whenever it equals it). Worked out once a
    class and kept on the class itself (a fact of its definition, like ``__struct_fields__``)."""
    pairs = kind.__dict__.get("_omen_settled")
    if pairs is None:
        names = kind.__struct_fields__[len(kind.__struct_fields__) - len(kind.__struct_defaults__):]
        pairs = tuple((name, default) for name, default in zip(names, kind.__struct_defaults__, strict=True)
                      if default is not msgspec.NODEFAULT and not _identity_safe(default))
        setattr(kind, "_omen_settled", pairs)  # noqa: B010 (set on the class, not an instance)
    return pairs


def settle_defaults(value: msgspec.Struct) -> None:
    """Put the default object in place of each field of ``value`` that equals its default (see the module)."""
    for name, default in _settled_fields(type(value)):
        found = getattr(value, name)
        if found is not default and type(found) is type(default) and found == default:
            msgspec.structs.force_setattr(value, name, default)
