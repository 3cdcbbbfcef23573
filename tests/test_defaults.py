"""Tests for omen_core.defaults: the written form leaves out every field at its default, so a field added with a
default changes no bytes of events or content that leave it there (issue 27, item 6)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings

from omen_core.commands import DeclareAttack, EndFight
from omen_core.content import (
    CombatantSheet,
    DamageTypes,
    Economy,
    IncomingDamage,
    Ruleset,
    Weapon,
    content_hash,
    decode_content,
    load_ruleset,
)
from omen_core.defaults import needs_settling, settle_defaults
from omen_core.events import (
    AttackDeclared,
    CombatantJoined,
    FightStarted,
    StoredEvent,
    WeaponDrawn,
    decode_line,
    encode_line,
    line_hash,
)
from omen_core.parts import Situational
from tests.random_fights import RandomFight, fights

#: The encoder of lines and content hashes: a set's members in a fixed order (a frozenset's own order varies with
#: the process's string hashing, so a plain encode of a weapon's properties may not give the recorded bytes).
_CANONICAL = msgspec.json.Encoder(order="deterministic")

ROOT = Path(__file__).resolve().parent.parent
FIXTURE_LOGS = sorted(ROOT.glob("fixtures/*/fight.jsonl"))

#: Defaults of every kind a new field could have: each left out when the field holds it.
ADDED_DEFAULTS: tuple[tuple[Any, Any], ...] = (
    (int, 0), (int, 1000), (str, ""), (str, "a house rule"), (bool, False), (float, 1.5),
    (tuple[int, ...], ()), (int | None, None), (Situational, Situational()),
)


def _default(kind: type[msgspec.Struct], name: str) -> Any:
    """The default object of ``kind``'s field ``name``."""
    return next(f.default for f in msgspec.structs.fields(kind) if f.name == name)


def _struct_kinds(kind: type[msgspec.Struct]) -> Iterator[type[msgspec.Struct]]:
    """Every struct type a value of ``kind`` can hold, ``kind`` included, found through msgspec's type info."""
    seen: set[type] = set()

    def visit(info: msgspec.inspect.Type) -> Iterator[type[msgspec.Struct]]:
        if isinstance(info, msgspec.inspect.StructType):
            if info.cls in seen:
                return
            seen.add(info.cls)
            yield info.cls
            for f in info.fields:
                yield from visit(f.type)
            return
        for name in ("item_type", "key_type", "value_type"):
            if isinstance(getattr(info, name, None), msgspec.inspect.Type):
                yield from visit(getattr(info, name))
        for inner in (*getattr(info, "types", ()), *getattr(info, "item_types", ())):
            yield from visit(inner)

    yield from visit(msgspec.inspect.type_info(kind))


def _extended(value: Any, field_type: Any, default: Any) -> Any:
    """``value`` with every struct in it (itself included) turned into a subclass of its type that has one more
    field, ``added_later``, at ``default``: what the value would be under a schema that added that field (a field
    that holds its default keeps it: a struct at its default stays the default object)."""
    if isinstance(value, msgspec.Struct):
        kind = type(value)
        plus = msgspec.defstruct(kind.__name__, [("added_later", field_type, default)], bases=(kind,),
                                 frozen=True, kw_only=True)
        defaults = {f.name: f.default for f in msgspec.structs.fields(kind)}
        return plus(**{name: _extended(getattr(value, name), field_type, default)
                       for name in kind.__struct_fields__ if getattr(value, name) is not defaults[name]})
    if isinstance(value, tuple):
        return tuple(_extended(item, field_type, default) for item in value)
    if isinstance(value, dict):
        return {key: _extended(item, field_type, default) for key, item in value.items()}
    return value


def _nodes(value: Any) -> Iterator[msgspec.Struct]:
    """Every struct in ``value``, itself included."""
    if isinstance(value, msgspec.Struct):
        yield value
        for name in type(value).__struct_fields__:
            yield from _nodes(getattr(value, name))
    elif isinstance(value, (tuple, list, frozenset)):
        for item in value:
            yield from _nodes(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _nodes(item)


def _defaults_settled(value: msgspec.Struct) -> list[str]:
    """The fields anywhere in ``value`` that equal their default without being it (so would be written)."""
    found = []
    for node in _nodes(value):
        for f in msgspec.structs.fields(type(node)):
            held = getattr(node, f.name)
            if f.default is not msgspec.NODEFAULT and held == f.default and held is not f.default \
                    and type(held) is type(f.default):
                found.append(f"{type(node).__name__}.{f.name}")
    return found


def _lines_with_a_field_added(records: list[StoredEvent]) -> Iterator[tuple[bytes, bytes]]:
    """Each record's line as written today, beside the same record with a defaulted field added to every struct
    in it (each kind of default in turn)."""
    for rec in records:
        line = encode_line(rec)
        for field_type, default in ADDED_DEFAULTS:
            yield line, encode_line(_extended(rec, field_type, default))


class TestSettle:
    def test_an_equal_value_becomes_the_default_itself(self) -> None:
        """A weapon decoded with ``damage_type = "slashing"`` written out holds the default object, so its bytes and
        hash are those of the weapon that leaves the key out (sheets equal as values hash alike)."""
        explicit = decode_content('{"id": "sword", "damage_type": "slashing", "properties": [], "name": ""}', Weapon)
        implicit = decode_content('{"id": "sword"}', Weapon)
        assert explicit.damage_type is _default(Weapon, "damage_type")
        assert msgspec.json.encode(explicit) == msgspec.json.encode(implicit) == b'{"id":"sword"}'
        assert content_hash(explicit) == content_hash(implicit)

    def test_a_nested_default_and_a_float_settle(self) -> None:
        """A ruleset that writes its economy and damage types out as the defaults, and a sheet that writes
        ``multiply = 1.0``, are written as the ones that leave them out."""
        ruleset = decode_content('{"name": "core", "economy": {"actions": 1, "draw": "free"}, '
                                 '"damage_types": {"physical": ["crushing", "slashing", "piercing"]}}', Ruleset)
        assert msgspec.json.encode(ruleset) == b'{"name":"core"}'
        assert ruleset.economy is _default(Ruleset, "economy")
        assert ruleset.damage_types is _default(Ruleset, "damage_types") == DamageTypes()
        assert msgspec.json.encode(IncomingDamage(multiply=float("1.0"))) == b"{}"
        free: Any = "".join(["fr", "ee"])  # equal to the default, not the default object
        assert msgspec.json.encode(Economy(draw=free)) == b"{}"

    def test_a_value_of_another_type_is_not_taken_for_the_default(self) -> None:
        """``True == 1`` and ``1 == 1.0`` do not make a value its default: only a value of the default's own type
        that equals it settles (a float multiplier 1.0 does; nothing else is touched)."""
        class Odd(msgspec.Struct, frozen=True, omit_defaults=True):
            flag: int | bool = 1

            def __post_init__(self) -> None:
                settle_defaults(self)

        assert msgspec.json.encode(Odd(flag=True)) == b'{"flag":true}'

    def test_events_and_commands_with_such_defaults_settle(self) -> None:
        """The event and command types whose defaults an equal value may not be (a struct, a string) are written
        without them when they hold an equal value."""
        free: Any = "".join(["fr", "ee"])  # equal to the default, not the default object
        drawn = WeaponDrawn(who="a", weapon="bow", cost=free)
        assert b"cost" not in msgspec.json.encode(drawn)
        attack = AttackDeclared(action=1, attacker="a", target="b", weapon=None, kind="unarmed",
                                situational=Situational(high_ground=False))
        assert b"situational" not in msgspec.json.encode(attack)
        assert b"situational" not in msgspec.json.encode(DeclareAttack(attacker="a", target="b",
                                                                       situational=Situational()))
        gm: Any = "".join(["g", "m"])
        assert msgspec.json.encode(EndFight(reason=gm)) == b'{"command":"end_fight"}'


class TestEveryStructSettles:
    def test_every_type_a_line_holds_with_an_unsafe_default_settles(self) -> None:
        """Every struct type a stored line can hold (events, their parts, commands, content) is written without
        defaults, and each one with a default an equal value may not be settles in ``__post_init__``: a new such
        type without it fails here."""
        kinds = list(_struct_kinds(StoredEvent))
        assert {FightStarted, CombatantSheet, Ruleset, DeclareAttack, Situational} <= set(kinds)
        for kind in kinds:
            assert kind.__struct_config__.omit_defaults, kind
            if needs_settling(kind):
                assert "__post_init__" in {name for klass in kind.__mro__ for name in vars(klass)}, kind

    @pytest.mark.parametrize("path", FIXTURE_LOGS, ids=lambda p: p.parent.name)
    def test_fixture_events_hold_their_defaults_settled(self, path: Path) -> None:
        """No value anywhere in a golden fixture's events equals its default without being it: every line is
        written in the canonical form, and reads back as its own bytes."""
        for line in path.read_bytes().splitlines():
            rec = decode_line(line)
            assert _defaults_settled(rec) == [], rec.seq
            assert encode_line(rec) == line


class TestAddingAField:
    @pytest.mark.parametrize("path", FIXTURE_LOGS, ids=lambda p: p.parent.name)
    def test_a_defaulted_field_added_everywhere_changes_no_byte_of_a_fixture(self, path: Path) -> None:
        """Each golden fixture's every line, with one defaulted field added to every struct it holds (the
        envelope aside: events, parts, commands, ruleset, sheets), of each kind of default in turn, is the same
        bytes, so the same hash."""
        records = [decode_line(line) for line in path.read_bytes().splitlines()]
        for rec in records:
            line = encode_line(rec)
            for field_type, default in ADDED_DEFAULTS:
                event = _extended(rec.event, field_type, default)
                plus = msgspec.structs.replace(rec, event=event)
                assert encode_line(plus) == line
                assert line_hash(rec.prev_hash, encode_line(plus)) == rec.hash

    @settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(fights(max_commands=25))
    def test_a_defaulted_field_added_changes_no_byte_of_a_random_fight(self, rf: RandomFight) -> None:
        """Random fights: every event, with a defaulted field added to every struct in it, is written as the same
        line."""
        for line, plus in _lines_with_a_field_added(rf.records):
            assert plus == line

    @pytest.mark.parametrize("path", FIXTURE_LOGS[:3], ids=lambda p: p.parent.name)
    def test_recorded_content_read_under_a_ruleset_and_sheet_with_a_new_field_keeps_its_hash(self, path: Path) -> None:
        """The ruleset and sheets a fixture records, read under a Ruleset and a CombatantSheet that gained a field
        with a default (and a nested Economy that gained one too), are written as the same bytes and hash to the
        recorded hashes."""
        economy = msgspec.defstruct("Economy", [("reactions", int, 1)], bases=(Economy,), frozen=True, kw_only=True)
        ruleset = msgspec.defstruct("Ruleset", [("economy", economy, economy()), ("house_rules", tuple[str, ...], ()),
                                                ("crit_range", int, 1)], bases=(Ruleset,), frozen=True, kw_only=True)
        sheet = msgspec.defstruct("CombatantSheet", [("reach", int, 1), ("title", str, "")],
                                  bases=(CombatantSheet,), frozen=True, kw_only=True)
        lines = path.read_bytes().splitlines()
        started = decode_line(lines[0]).event
        assert isinstance(started, FightStarted)
        recorded = _CANONICAL.encode(started.ruleset)  # sets in a fixed order, as every line and hash writes them
        again = msgspec.json.decode(recorded, type=ruleset)
        assert _CANONICAL.encode(again) == recorded and content_hash(again) == started.ruleset_hash
        joins = [rec.event for rec in map(decode_line, lines) if isinstance(rec.event, CombatantJoined)]
        assert joins
        for joined in joins:
            recorded = _CANONICAL.encode(joined.sheet)
            again = msgspec.json.decode(recorded, type=sheet)
            assert _CANONICAL.encode(again) == recorded and content_hash(again) == joined.sheet_hash

    def test_the_core_ruleset_hash_is_of_its_form_without_defaults(self) -> None:
        """The core ruleset's hash is the sha256 of its written form, which leaves out the fields at their
        defaults (the economy, the reaction costs, the physical damage types)."""
        import hashlib

        core = load_ruleset()
        written = msgspec.json.Encoder(order="deterministic").encode(core)  # as a line writes it
        assert b'"economy"' not in written and b'"reaction_costs"' not in written and b'"physical"' not in written
        assert core.content_hash() == hashlib.sha256(written).hexdigest()
