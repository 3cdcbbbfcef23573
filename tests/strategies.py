"""Hypothesis strategies for omen's value types, events and sealed logs, shared by the test suite."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import msgspec.inspect as mi
from hypothesis import strategies as st
from msgspec.structs import replace

from omen_core.content import (
    _NAME,
    ATTRIBUTES,
    ApplyCondition,
    Attribute,
    Attributes,
    CombatantSheet,
    ConditionDamage,
    ConditionDef,
    Ruleset,
    Skill,
)
from omen_core.events import EVENT_TYPES, GENESIS_HASH, Event, StoredEvent, seal

ids = st.from_regex(r"[a-z][a-z0-9_-]{0,11}", fullmatch=True)
text = st.text(max_size=30)

attribute = st.builds(lambda s, b: Attribute(die=f"d{s}", bonus=b), st.integers(2, 100), st.integers(-5, 10))
attributes = st.builds(lambda xs: Attributes(**dict(zip(ATTRIBUTES, xs, strict=False))),
                       st.lists(attribute, min_size=5, max_size=5))
skill = st.builds(Skill, attribute=st.sampled_from(ATTRIBUTES), level=st.integers(0, 10))
sheets = st.builds(CombatantSheet, id=ids, name=text, side=ids, hp=st.integers(1, 200),
                   will=st.integers(0, 50), attributes=attributes,
                   skills=st.dictionaries(st.text(min_size=1, max_size=12), skill, max_size=3))

def from_type_info(info: mi.Type) -> st.SearchStrategy[Any]:
    """A strategy for any msgspec type, honouring its constraints (ranges, patterns, lengths, literals).

    Derived from ``msgspec.inspect``, so every event type, present and future,
    gets a strategy without a hand-written copy of its fields.
    """
    match info:
        case mi.Metadata(type=inner):
            return from_type_info(inner)
        case mi.IntType(ge=ge, gt=gt, le=le, lt=lt):
            low = ge if ge is not None else (gt + 1 if gt is not None else -1000)
            high = le if le is not None else (lt - 1 if lt is not None else max(low, 0) + 1000)
            return st.integers(low, high)
        case mi.FloatType(ge=ge):
            return st.floats(min_value=ge if ge is not None else -1e6, max_value=1e6, allow_nan=False)
        case mi.StrType(pattern=pattern, min_length=min_length) if pattern:
            return st.from_regex(pattern, fullmatch=True)
        case mi.StrType(min_length=min_length):
            return st.text(min_size=min_length or 0, max_size=16)
        case mi.BoolType():
            return st.booleans()
        case mi.NoneType():
            return st.none()
        case mi.LiteralType(values=values):
            return st.sampled_from(values)
        case mi.UnionType(types=types):
            return st.one_of([from_type_info(t) for t in types])
        case mi.VarTupleType(item_type=item) | mi.ListType(item_type=item):
            return st.lists(from_type_info(item), max_size=3).map(tuple)
        case mi.FrozenSetType(item_type=item):
            return st.frozensets(from_type_info(item), max_size=3)
        case mi.DictType(key_type=key, value_type=value):
            return st.dictionaries(from_type_info(key), from_type_info(value), max_size=3)
        case mi.StructType(cls=cls) if cls in OVERRIDES:
            return OVERRIDES[cls]
        case mi.StructType(cls=cls, fields=fields):
            return st.fixed_dictionaries({f.name: from_type_info(f.type) for f in fields}).map(
                partial(_make, cls))
    raise TypeError(f"no strategy for {info!r}")



def _make(cls: type, fields: dict[str, Any]) -> Any:
    """An instance of ``cls`` from its fields by name (made consistent first where the type checks its fields
    together: :data:`FIXES`)."""
    fix = FIXES.get(cls)
    return cls(**(fix(fields) if fix is not None else fields))


def _condition_def(fields: dict[str, Any]) -> dict[str, Any]:
    """A condition that deals damage, or has a duration, ticks (C25, C28)."""
    ticks = fields["damage"] is not None or fields["duration"] is not None
    return {**fields, "tick": "turn_start"} if ticks and fields["tick"] == "never" else fields


def _apply_condition(fields: dict[str, Any]) -> dict[str, Any]:
    """`of` only with `until` (C40)."""
    return fields if fields["until"] is not None else {**fields, "of": "actor"}


def _ruleset(fields: dict[str, Any]) -> dict[str, Any]:
    """Names as a ruleset takes them (a skill's, a damage type's: :func:`_named`), each damage type listed once
    (C13, C14); a condition's damage is of a type the ruleset lists (C14), or it deals none."""
    given = fields["damage_types"]
    physical = tuple(dict.fromkeys(_named(t, f"physical type {i}") for i, t in enumerate(given.physical)))
    other = tuple(t for t in dict.fromkeys(_named(t, f"other type {i}") for i, t in enumerate(given.other))
                  if t not in physical)
    fields = {**fields, "damage_types": replace(given, physical=physical, other=other),
              "skill_attributes": {_named(k, f"Skill {i}"): v
                                   for i, (k, v) in enumerate(fields["skill_attributes"].items())}}
    types = [*physical, *other]
    def listed(rule: Any) -> Any:
        if rule.damage is None or rule.damage.damage_type in types:
            return rule
        damage = replace(rule.damage, damage_type=types[0]) if types else None
        return replace(rule, damage=damage)
    return {**fields, "conditions": {_named(name, f"Condition {n}"): listed(rule)
                                     for n, (name, rule) in enumerate(fields["conditions"].items())}}


def _named(name: str, made_up: str) -> str:
    """A name as a ruleset takes one (a condition's, a skill's, a damage type's: 1 to 80 characters, no control or
    bidi character), else ``made_up`` (distinct)."""
    return name if len(name) <= 80 and _NAME.fullmatch(name) else made_up


def _condition_damage(fields: dict[str, Any]) -> dict[str, Any]:
    """A condition's damage has dice or a flat amount."""
    return fields if fields["dice"] is not None or fields["flat"] else {**fields, "flat": 1}


FIXES: dict[type, Any] = {ConditionDamage: _condition_damage, ConditionDef: _condition_def,
                          ApplyCondition: _apply_condition, Ruleset: _ruleset}


OVERRIDES: dict[type, st.SearchStrategy[Any]] = {CombatantSheet: sheets}

#: Any single event of any type in the union.
events: st.SearchStrategy[Event] = st.one_of([from_type_info(mi.type_info(kind)) for kind in EVENT_TYPES])


def chained(fight_id: str, payloads: Sequence[Event], start_seq: int = 1, prev: str = GENESIS_HASH,
            recorded_at: int = 1_700_000_000_000) -> list[StoredEvent]:
    """Seal ``payloads`` into a hash-chained list starting at ``start_seq``."""
    out: list[StoredEvent] = []
    for i, event in enumerate(payloads):
        rec = seal(fight_id, start_seq + i, recorded_at + i, prev, event)
        out.append(rec)
        prev = rec.hash
    return out


logs = st.builds(chained, ids, st.lists(events, min_size=1, max_size=12))
