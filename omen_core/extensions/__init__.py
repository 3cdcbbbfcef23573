"""The extensions: each module of this package declares an ``EXTENSION`` (:mod:`omen_core.hooks`), read at import.

A module here is a whole extension: its decision points and its terms, as
rows (:mod:`omen_core.hooks`). Dropping a module in this package is all it
takes to register it; a sheet lists the ones its combatant has in
``abilities``. The tables below are built at import and never change.
"""

from __future__ import annotations

import pkgutil
from importlib import import_module
from types import MappingProxyType
from typing import Any

from ..hooks import (
    TOTALS,
    AttackOption,
    DefenseOverride,
    Extension,
    Landing,
    PoolDice,
    Roll,
    Routing,
    TermHandler,
    Total,
    Window,
    check_extension,
)

__all__ = ["EXTENSIONS", "BY_ID", "WINDOWS", "ATTACK_OPTIONS", "OVERRIDES", "ROUTING", "LANDING", "windows_at",
           "window", "term_handlers", "pool_dice", "in_play"]


def _load() -> tuple[Extension, ...]:
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        name = f"{__name__}.{info.name}"
        extension = getattr(import_module(name), "EXTENSION", None)
        if not isinstance(extension, Extension):
            raise TypeError(f"{name} declares no EXTENSION (an omen_core.hooks.Extension)")
        problems = check_extension(extension, name)
        if problems:
            raise ValueError("; ".join(problems))
        found.append(extension)
    ids = [e.id for e in found]
    if len(set(ids)) != len(ids):
        raise ValueError(f"two extensions share an id: {', '.join(ids)}")
    return tuple(found)


#: Every extension, by module name.
EXTENSIONS: tuple[Extension, ...] = _load()
#: The extensions by id (what a sheet's ``abilities`` names).
BY_ID: MappingProxyType[str, Extension] = MappingProxyType({e.id: e for e in EXTENSIONS})
#: Every window, by kind.
WINDOWS: MappingProxyType[str, Window] = MappingProxyType({w.kind: w for e in EXTENSIONS for w in e.windows})

_AT: MappingProxyType[str, tuple[tuple[Extension, Window], ...]] = MappingProxyType(
    {hook: tuple((e, w) for e in EXTENSIONS for w in e.windows if w.hook == hook)
     for hook in {w.hook for e in EXTENSIONS for w in e.windows}})
#: The term handlers by total, each with its extension.
_TERMS: MappingProxyType[str, tuple[tuple[Extension, TermHandler], ...]] = MappingProxyType(
    {total: tuple((e, h) for e in EXTENSIONS for h in e.terms if h.total == total) for total in TOTALS})


def in_play(state: Any, extension: Extension) -> bool:
    """Whether ``extension`` may do anything in this fight: one given by sheet keys always asks its own keys; one a
    sheet lists in ``abilities``, only if a combatant's sheet lists it (so a fight where nobody has it pays
    nothing for it)."""
    return not extension.listed or any(extension.id in c.sheet.abilities for c in state.combatants.values())


def windows_at(state: Any, hook: str) -> tuple[Window, ...]:
    """The windows that may open at hook point ``hook`` in this fight, in the order the extensions are
    registered."""
    return tuple(w for e, w in _AT.get(hook, ()) if in_play(state, e))


def pool_dice(roll: Roll) -> tuple[PoolDice, ...]:
    """The handlers adding dice to an attack's ``roll``, in registry order."""
    return _POOLS[roll]


#: Each kind of handler across every extension, in registry order.
_POOLS: MappingProxyType[str, tuple[PoolDice, ...]] = MappingProxyType(
    {roll: tuple(p for e in EXTENSIONS for p in e.pools if p.roll == roll) for roll in ("hit", "damage")})
ATTACK_OPTIONS: tuple[AttackOption, ...] = tuple(o for e in EXTENSIONS for o in e.attack_options)
OVERRIDES: tuple[DefenseOverride, ...] = tuple(o for e in EXTENSIONS for o in e.overrides)
ROUTING: tuple[Routing, ...] = tuple(r for e in EXTENSIONS for r in e.routing)
LANDING: tuple[Landing, ...] = tuple(x for e in EXTENSIONS for x in e.landing)


def window(kind: str) -> Window | None:
    """The window of kind ``kind``, if an extension declares one."""
    return WINDOWS.get(kind)


def term_handlers(state: Any, total: Total) -> tuple[TermHandler, ...]:
    """The term handlers that may add to ``total`` in this fight."""
    found = _TERMS[total]
    return tuple(h for e, h in found if in_play(state, e)) if found else ()
