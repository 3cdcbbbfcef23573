"""The extensions: each module of this package declares an ``EXTENSION`` (:mod:`omen_core.hooks`), read at import.

A module here is a whole extension: its decision points and its terms, as
rows (:mod:`omen_core.hooks`). Dropping a module in this package is all it
takes to register it; a sheet lists the ones its combatant has in
``abilities``. The tables below are built at import and never change.
The abilities a fight's sheets write as data (:mod:`omen_core.abilities`)
give the same rows, compiled from the fight's state when asked: each
function here answers with both (the modules' rows first, then the
abilities the sheets' shorthand keys stand for, then those written out).
"""

from __future__ import annotations

import pkgutil
from collections.abc import Iterable
from importlib import import_module
from types import MappingProxyType
from typing import Any

from ..abilities import compile_ability
from ..errors import OmenError
from ..hooks import (
    TOTALS,
    AttackOption,
    AutoReroll,
    DefenseOverride,
    Extension,
    ExtensionInvalid,
    Landing,
    PoolDice,
    Roll,
    Routing,
    TermHandler,
    Total,
    Window,
    check_extension,
    guarded,
)

__all__ = ["EXTENSIONS", "BY_ID", "WINDOWS", "ATTACK_OPTION_FIELDS", "windows_at", "window", "term_handlers",
           "pool_dice", "overrides", "auto_rerolls", "in_play", "data_extensions", "attack_options",
           "attack_option_offered", "routes", "landing", "turn_actions"]


def _load(names: Iterable[str] | None = None) -> tuple[Extension, ...]:
    """The extensions the modules ``names`` declare (by default every module of this package, by name), checked
    (:func:`~omen_core.hooks.check_extension`) and their callables guarded (:func:`~omen_core.hooks.guarded`);
    one that cannot be imported, declares no ``EXTENSION``, has a bad row, or shares another's id or a window kind
    with another is :class:`~omen_core.hooks.ExtensionInvalid`, naming the module (both, for an id or a kind) and
    the row."""
    if names is None:
        names = (f"{__name__}.{info.name}" for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name))
    found: list[tuple[str, Extension]] = []
    for name in names:
        extension = _declared(name)
        problems = check_extension(extension, name)
        if problems:
            raise ExtensionInvalid(name, "; ".join(p.removeprefix(f"{name}: ") for p in problems))
        for other, known in found:
            if known.id == extension.id:
                raise ExtensionInvalid(f"{other} and {name}", f"EXTENSION: both have the id {extension.id!r} (an id "
                                                              "names one extension: rename one)")
            shared = next((w.kind for w in extension.windows if any(w.kind == k.kind for k in known.windows)), None)
            if shared is not None:
                raise ExtensionInvalid(f"{other} and {name}", f"window {shared!r}: both declare a window of kind "
                                                              f"{shared!r} (answer_decision names a window by its "
                                                              "kind: rename one)")
        found.append((name, extension))
    return tuple(guarded(extension, name) for name, extension in found)


def _declared(name: str) -> Extension:
    """The ``EXTENSION`` module ``name`` declares; what its import raises, or its declaring none, is
    :class:`~omen_core.hooks.ExtensionInvalid`."""
    try:
        module = import_module(name)
    except OmenError:
        raise
    except (Exception, SystemExit) as exc:  # a module that calls sys.exit as it loads cannot be loaded: not an exit
        raise ExtensionInvalid(name, f"importing it raised {type(exc).__name__}: {exc}") from exc
    extension = getattr(module, "EXTENSION", None)
    if not isinstance(extension, Extension):
        raise ExtensionInvalid(name, f"EXTENSION: {type(extension).__name__ if extension is not None else 'none'} "
                                     "declared, not an omen_core.hooks.Extension")
    return extension


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


class DataRows:
    """The rows of a fight's data abilities, compiled and sorted by what asks for them: every extension, the windows
    by hook point, the term handlers by total, the dice by roll, and the rest in order. Built from the abilities the
    state keeps (``shorthands``, ``abilities``: they change only when a combatant joins)."""

    __slots__ = (
        "abilities",
        "attack_options",
        "extensions",
        "landing",
        "overrides",
        "pools",
        "rerolls",
        "routing",
        "shorthands",
        "terms",
        "windows",
    )

    def __init__(self, shorthands: tuple[Any, ...], abilities: tuple[Any, ...]) -> None:
        self.shorthands, self.abilities = shorthands, abilities
        data = (*(compile_ability(a, named=False) for a in shorthands), *(compile_ability(a) for a in abilities))
        self.extensions: tuple[Extension, ...] = data
        windows: dict[str, list[Window]] = {}
        for w in (w for e in data for w in e.windows):
            windows.setdefault(w.hook, []).append(w)
        self.windows = {hook: tuple(rows) for hook, rows in windows.items()}
        self.terms = {total: tuple(h for e in data for h in e.terms if h.total == total) for total in TOTALS}
        self.pools = {roll: tuple(p for e in data for p in e.pools if p.roll == roll) for roll in ("hit", "damage")}
        self.rerolls = tuple(r for e in data for r in e.rerolls)
        self.overrides = tuple(o for e in data for o in e.overrides)
        self.attack_options = tuple(o for e in data for o in e.attack_options)
        self.routing = tuple(r for e in data for r in e.routing)
        self.landing = tuple(x for e in data for x in e.landing)


_NO_ROWS = DataRows((), ())


def data_rows(state: Any) -> DataRows:
    """The fight's data rows (:class:`DataRows`). Kept, once built, in the fight's ruleset's own ``__dict__`` (a
    msgspec ``dict=True`` struct: never encoded, compared or hashed) beside the two tuples they were built from,
    and built again whenever the state's tuples are others (a combatant joined, another fight): a memo the fight's
    state owns through its ruleset, not a module's."""
    if state is None:
        return _NO_ROWS
    abilities, shorthands = state.abilities, state.shorthands  # fight_abilities(state), read directly: a hot path
    if not abilities and not shorthands:
        return _NO_ROWS
    ruleset = state.ruleset
    rows = ruleset.__dict__.get("_data_rows") if ruleset is not None else None
    if rows is None or rows.abilities is not abilities or rows.shorthands is not shorthands:
        rows = DataRows(shorthands, abilities)
        if ruleset is not None:
            ruleset.__dict__["_data_rows"] = rows
    return rows


def data_extensions(state: Any) -> tuple[Extension, ...]:
    """The rows of the abilities this fight's sheets have as data (C37), compiled from them (none: nothing to do):
    first those their shorthand keys stand for (their dice recorded without an origin, as always), then those
    written out."""
    return data_rows(state).extensions


def in_play(state: Any, extension: Extension) -> bool:
    """Whether ``extension`` may do anything in this fight: one given by sheet keys always asks its own keys; one a
    sheet lists in ``abilities``, only if a combatant's sheet lists it (so a fight where nobody has it pays
    nothing for it)."""
    return bool(extension.keys) or extension.id in listed_in_fight(state)


def listed_in_fight(state: Any) -> frozenset[str]:
    """The ids the fight's sheets list as such (:meth:`~omen_core.content.CombatantSheet.listed_by_id`), all of
    them. Kept, once worked out, in the fight's ruleset's own ``__dict__`` with the combatants and the sheets it
    was worked out from: the same combatants (the same dict), or the same sheets in the same order, give it back
    (a combatant's sheet never changes once joined, so the many states of one fight share it)."""
    combatants = state.combatants
    ruleset = state.ruleset
    memo = ruleset.__dict__.get("_listed") if ruleset is not None else None
    if memo is not None and memo[0] is combatants:
        return memo[2]  # type: ignore[no-any-return]
    sheets = tuple(c.sheet for c in combatants.values())
    if memo is not None and memo[1] == sheets:
        ids = memo[2]
    else:
        ids = frozenset().union(*(sheet.listed_by_id() for sheet in sheets))
    if ruleset is not None:
        ruleset.__dict__["_listed"] = (combatants, sheets, ids)
    return ids  # type: ignore[no-any-return]


def turn_actions(state: Any, who: str) -> tuple[Extension, ...]:
    """The extensions whose action (:class:`~omen_core.hooks.TurnAction`) ``who`` may take on its turn: those its
    sheet lists in ``abilities``, in the order it lists them."""
    listed = state.combatants[who].sheet.abilities
    return tuple(e for e in (BY_ID.get(i) for i in listed if isinstance(i, str)) if e is not None and e.action)


def windows_at(state: Any, hook: str) -> tuple[Window, ...]:
    """The windows that may open at hook point ``hook`` in this fight, in the order the extensions are
    registered, then the fight's data abilities' in the order their owners joined."""
    static = _AT.get(hook)
    data = data_rows(state).windows.get(hook, ())
    if not static:
        return data
    return (*(w for e, w in static if in_play(state, e)), *data)


def pool_dice(roll: Roll, state: Any = None) -> tuple[PoolDice, ...]:
    """The handlers adding dice to an attack's ``roll``, in registry order, then the fight's data abilities'."""
    data = data_rows(state).pools[roll]
    return (*_POOLS[roll], *data) if data else _POOLS[roll]


def auto_rerolls(state: Any) -> tuple[AutoReroll, ...]:
    """The automatic rerolls of the extensions, then of the fight's data abilities (C39)."""
    data = data_rows(state).rerolls
    return (*_REROLLS, *data) if data else _REROLLS


def overrides(state: Any) -> tuple[DefenseOverride, ...]:
    """The eligibility overrides of the extensions, then of the fight's data abilities (C37)."""
    data = data_rows(state).overrides
    return (*OVERRIDES, *data) if data else OVERRIDES


#: Each kind of handler across every extension, in registry order.
_POOLS: MappingProxyType[str, tuple[PoolDice, ...]] = MappingProxyType(
    {roll: tuple(p for e in EXTENSIONS for p in e.pools if p.roll == roll) for roll in ("hit", "damage")})
_ATTACK_OPTIONS: tuple[AttackOption, ...] = tuple(o for e in EXTENSIONS for o in e.attack_options)
OVERRIDES: tuple[DefenseOverride, ...] = tuple(o for e in EXTENSIONS for o in e.overrides)
_ROUTING: tuple[Routing, ...] = tuple(r for e in EXTENSIONS for r in e.routing)
_LANDING: tuple[Landing, ...] = tuple(x for e in EXTENSIONS for x in e.landing)

#: The arguments of ``declare_attack`` an ability may give meaning to (``When.attack_option``), each with the rule
#: and the words of its refusal to one no ability of whose gives it meaning.
ATTACK_OPTION_FIELDS: MappingProxyType[str, tuple[str, str]] = MappingProxyType(
    {"rage": ("C12", "Brute rage dice to add")})


def attack_options(state: Any) -> tuple[AttackOption, ...]:
    """The attack options the extensions and the fight's data abilities give meaning to."""
    return (*_ATTACK_OPTIONS, *data_rows(state).attack_options)


def attack_option_offered(state: Any, who: str, field: str) -> bool:
    """Whether ``who`` may declare an attack with ``field`` set (an ability of theirs gives it meaning)."""
    return any(o.field == field and o.offered(state, who) for o in attack_options(state))


def routes(state: Any, frame: Any) -> bool:
    """Whether the attacker of this hit may route a die to damage (C12): an extension or a data ability says so."""
    return any(r.routes(state, frame) for r in (*_ROUTING, *data_rows(state).routing))


def landing(state: Any) -> tuple[Landing, ...]:
    """Where damage lands (C31): the extensions' handlers, then the fight's data abilities'."""
    data = data_rows(state).landing
    return (*_LANDING, *data) if data else _LANDING
_REROLLS: tuple[AutoReroll, ...] = tuple(r for e in EXTENSIONS for r in e.rerolls)


def window(kind: str, state: Any = None) -> Window | None:
    """The window of kind ``kind``, if an extension declares one (or, given the fight's state, one of its data
    abilities)."""
    found = WINDOWS.get(kind)
    if found is None and state is not None:
        found = next((w for e in data_extensions(state) for w in e.windows if w.kind == kind), None)
    return found


def term_handlers(state: Any, total: Total) -> tuple[TermHandler, ...]:
    """The term handlers that may add to ``total`` in this fight (the modules', then the data abilities')."""
    found = _TERMS[total]
    data = data_rows(state).terms[total]
    if not found:
        return data
    static = tuple(h for e, h in found if in_play(state, e))
    return (*static, *data) if data else static
