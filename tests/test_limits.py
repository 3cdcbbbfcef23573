"""omen_core/limits.py: the largest die, the most dice of one kind and the most faces a command carries are
checked wherever dice are read: sheets, commands and stored lines; and no command holds a whole number past what
every JSON reader holds (rulings, docs/rulings.md "Limits")."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import msgspec
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from omen_core import Fight, MemoryStore, ScriptedDice, SeededDice
from omen_core.commands import CheckSpec, Command
from omen_core.content import (
    Armor,
    CombatantSheet,
    ConditionDef,
    DealDamage,
    IncomingDamage,
    SaveEffect,
    Skill,
    TotalModifiers,
    Training,
    Weapon,
    decode_content,
)
from omen_core.errors import ContentError, InvalidCommand, OmenError
from omen_core.events import GENESIS_HASH, DamageResolved, DiceRolled, decode_line, encode_line, seal
from omen_core.limits import MAX_DICE, MAX_FACES, MAX_SIDES, MAX_WHOLE, beyond_whole, json_error_words, named_twice
from omen_core.parts import Die, Modifier
from omen_replay.verify import verify
from tests.fights import present
from tests.sheets import CORE, attributes, sheet
from tests.test_content import geared


def sheet_with_rage(rage: str) -> str:
    """The gear test sheet (tests/test_content.py) with its rage dice replaced."""
    return geared().replace('rage = { count = 2, die = "d6" }', f"rage = {rage}")


class TestSheets:
    @pytest.mark.parametrize("die", ["d2", "d20", "d100", f"d{MAX_SIDES}"])
    def test_dice_up_to_the_largest_load(self, die: str) -> None:
        """C1: any dN from d2 to d1000 is a die."""
        sheet = decode_content(sheet_with_rage(f'{{ count = 2, die = "{die}" }}'), CombatantSheet,
                               source="k.toml", fmt="toml")
        assert sheet.features.rage is not None and sheet.features.rage.sides == int(die[1:])

    @pytest.mark.parametrize("die", [f"d{MAX_SIDES + 1}", "d18446744073709551617", "d0100"])
    def test_a_die_beyond_the_largest_is_refused_at_its_path(self, die: str) -> None:
        """A d1001, a d(2^64 + 1) (which no seeded draw could roll) or a d0100 is refused at
        $.features.rage.die, saying the largest die."""
        with pytest.raises(ContentError) as info:
            decode_content(sheet_with_rage(f'{{ count = 2, die = "{die}" }}'), CombatantSheet, source="k.toml",
                           fmt="toml")
        assert info.value.path == "$.features.rage.die"

    @pytest.mark.parametrize("count, ok", [(MAX_DICE, True), (MAX_DICE + 1, False), (10**9, False)])
    def test_the_most_dice_of_one_kind(self, count: int, ok: bool) -> None:
        """100 rage dice load; 101, or 10^9, are refused at $.features.rage.count before anything is rolled."""
        text = sheet_with_rage(f'{{ count = {count}, die = "d6" }}')
        if ok:
            rage = decode_content(text, CombatantSheet, source="k.toml", fmt="toml").features.rage
            assert present(rage).count == count
            return
        with pytest.raises(ContentError) as info:
            decode_content(text, CombatantSheet, source="k.toml", fmt="toml")
        assert info.value.path == "$.features.rage.count" and "100" in str(info.value)


class TestCommands:
    def test_a_face_beyond_the_largest_die_is_refused(self) -> None:
        """A face of 1001 cannot have come up on any die: the command is refused at $.dice[0]."""
        with pytest.raises(msgspec.ValidationError, match=r"\$\.dice\[0\]"):
            msgspec.convert({"command": "roll_initiative", "dice": [MAX_SIDES + 1]}, Command)

    def test_too_many_faces_are_refused(self) -> None:
        """10,000 faces may be carried; 10,001 are refused at $.dice."""
        msgspec.convert({"command": "roll_initiative", "dice": [1] * MAX_FACES}, Command)
        with pytest.raises(msgspec.ValidationError, match=r"\$\.dice"):
            msgspec.convert({"command": "roll_initiative", "dice": [1] * (MAX_FACES + 1)}, Command)


class TestStoredLines:
    def line_with_die(self, sides: int, face: int = 1) -> bytes:
        """A sealed DiceRolled line whose one die has ``sides`` sides, written by hand (as a tampered log is)."""
        good = encode_line(seal("f", 1, 0, GENESIS_HASH, DiceRolled(counter=1, purpose="check", roller="kael",
                                                                    dice=(Die(pool="check", sides=6, face=1),),
                                                                    source="manual")))
        return good.replace(b'"sides":6,"face":1', f'"sides":{sides},"face":{face}'.encode())

    @pytest.mark.parametrize("sides, face", [(MAX_SIDES + 1, 1), (2**64 + 1, 1), (6, MAX_SIDES + 1)])
    def test_a_recorded_die_beyond_the_largest_is_undecodable(self, sides: int, face: int) -> None:
        """A stored die with more than 1000 sides (verify once looped forever on 2^64 + 1) or a face above 1000
        does not decode: the readers report the line as malformed instead of rolling it again."""
        with pytest.raises(msgspec.ValidationError):
            decode_line(self.line_with_die(sides, face))

    def test_the_largest_recorded_die_decodes(self) -> None:
        """A d1000 showing 1000 decodes (the hash no longer matches the edit: that is verify's finding)."""
        assert decode_line(self.line_with_die(MAX_SIDES, MAX_SIDES)).as_(DiceRolled).dice[0].sides == MAX_SIDES


class TestWholeNumbers:
    """The largest whole number a command may hold (``MAX_WHOLE``, 2**53 - 1: every JSON reader holds it exactly)."""

    @pytest.mark.parametrize(("value", "path"), [(MAX_WHOLE, None), (-MAX_WHOLE, None), (MAX_WHOLE + 1, "$.a[1].b"),
                                                 (-(10**400), "$.a[1].b"), (True, None)])
    def test_beyond_whole_names_the_first_number_past_the_bound(self, value: int, path: str | None) -> None:
        """``beyond_whole`` finds a number past ±MAX_WHOLE at its path in decoded JSON (a boolean is no number)."""
        assert beyond_whole({"a": [0, {"b": value}], "c": "12345678901234567890"}) == path

    def test_a_command_past_the_bound_is_refused_at_its_field(self) -> None:
        """A static check's difficulty of 2**53 is refused at ``$.difficulty``, nothing written; 2**53 - 1 goes."""
        fight = Fight.start(MemoryStore(), "w", dice=ScriptedDice([3, 3]), clock=lambda: 0)
        fight.join(sheet("kael"))
        before = fight.version
        with pytest.raises(InvalidCommand) as refused:
            fight.static_check(CheckSpec(who="kael", attribute="STR"), MAX_WHOLE + 1)
        assert refused.value.path == "$.difficulty" and fight.version == before
        assert fight.static_check(CheckSpec(who="kael", attribute="STR"), MAX_WHOLE).outcome == "failure"


def _past_the_bound(fight: Fight) -> list[str]:
    """The path of each whole number past ±MAX_WHOLE in the fight's stored lines (``seq:path``)."""
    found = ((rec.seq, beyond_whole(msgspec.json.decode(encode_line(rec)))) for rec in fight.events)
    return [f"{seq}:{path}" for seq, path in found if path is not None]


def _refusal(command: str, event: str, seq: int, value: int, field: str) -> str:
    """The words of a command refused because one of its events would record ``value`` at ``field``."""
    return (f"{command}: its {event} event (seq {seq}) would record {value} at {field}, a whole number beyond "
            f"±{MAX_WHOLE} (2**53 - 1: the largest every JSON reader holds exactly): the numbers it adds up or "
            "multiplies (bonuses, ratings, modifiers, stacks, damage) are too large for a log; nothing written (at $)")


def _hexed(per_stack: int, stacks: int) -> Fight:
    """Kael (a sword of WD 1) and Vesh in a fight whose ruleset adds ``per_stack`` damage per stack of Hexed, Kael
    holding ``stacks`` of it; initiative rolled (Kael first), Kael's attack declared and waiting on Vesh's answer."""
    ruleset = msgspec.structs.replace(CORE, conditions={**CORE.conditions, "Hexed": ConditionDef(
        max_stacks=stacks, modifiers=TotalModifiers(damage=per_stack))})
    kael = msgspec.structs.replace(sheet("kael"), weapons=(Weapon(id="sword", weapon_damage=1),))
    fight = Fight.start(MemoryStore(), "h", dice=ScriptedDice([6, 1, 5, 3, 2, 4, 1]), clock=lambda: 0,
                        ruleset=ruleset, combatants=[kael, sheet("vesh", side="foes")])
    fight.apply_condition("kael", "Hexed", stacks)
    fight.roll_initiative()
    fight.attack("kael", "vesh", weapon="sword")
    return fight


class TestRecordedNumbers:
    """No number a fight's events record passes ±MAX_WHOLE (docs/rulings.md "Limits on dice"): each number a command
    or a sheet holds is within it, but the totals the engine makes of them (sums, and products: stacks times a
    per-stack modifier, damage times an incoming multiplier) may not be, and a command whose events would record
    one is refused, naming the event, its seq, the field and the number, nothing written."""

    def test_a_total_past_the_bound_refuses_the_command(self) -> None:
        """Kael's AGI bonus of 2**53 - 1 plus a 6 on his initiative die is 2**53 + 5: roll_initiative is refused
        at its initiative_rolled, nothing written, and the log verifies clean."""
        kael = sheet("kael", AGI=(6, MAX_WHOLE))
        fight = Fight.start(MemoryStore(), "i", dice=ScriptedDice([6, 1]), clock=lambda: 0,
                            combatants=[kael, sheet("vesh", side="foes")])
        before = fight.version
        with pytest.raises(InvalidCommand) as refused:
            fight.roll_initiative()
        assert str(refused.value) == _refusal("roll_initiative", "initiative_rolled", 6, MAX_WHOLE + 6,
                                              "$.event.check.total")
        assert (refused.value.command, refused.value.path) == ("roll_initiative", "$")
        assert fight.version == before == 3 and _past_the_bound(fight) == []
        assert verify(fight.events).clean

    def test_the_tester_s_sheets_are_refused_at_the_first_total_past_the_bound(self) -> None:
        """The tester's case: a hit bonus of 2**53 - 1 with a 3 and a 3 on the d6 pool makes an attack total of
        2**53 + 5, refused at the window it would open (active_defense_window_opened's attack_total)."""
        kael = msgspec.structs.replace(sheet("kael"), weapons=(Weapon(id="sword", hit_bonus=MAX_WHOLE),))
        fight = Fight.start(MemoryStore(), "t", dice=ScriptedDice([6, 1, 3, 3, 2]), clock=lambda: 0,
                            combatants=[kael, sheet("vesh", side="foes")])
        fight.roll_initiative()
        before = fight.version
        with pytest.raises(InvalidCommand) as refused:
            fight.attack("kael", "vesh", weapon="sword")
        assert str(refused.value) == _refusal("declare_attack", "active_defense_window_opened", before + 7,
                                              MAX_WHOLE + 6, "$.event.attack_total")
        assert fight.version == before

    def test_damage_past_the_bound_refuses_the_answer_that_deals_it(self) -> None:
        """WD 2**53 - 1 plus the 3 of Kael's d6 (STR bonus 0) is 2**53 + 2 raw damage: Vesh's answer to the window,
        which resolves the damage, is refused at damage_resolved's terms.raw; the window stays open."""
        kael = msgspec.structs.replace(sheet("kael"), weapons=(Weapon(id="sword", weapon_damage=MAX_WHOLE),))
        fight = Fight.start(MemoryStore(), "d", dice=ScriptedDice([6, 1, 3, 3, 2]), clock=lambda: 0,
                            combatants=[kael, sheet("vesh", side="foes")])
        fight.roll_initiative()
        fight.attack("kael", "vesh", weapon="sword")
        before = fight.version
        with pytest.raises(InvalidCommand) as refused:
            fight.defend("vesh", None)
        assert str(refused.value) == _refusal("answer_active_defense", "damage_resolved", before + 4,
                                              MAX_WHOLE + 3, "$.event.terms.raw")
        assert fight.version == before and fight.waiting_for is not None

    def test_an_incoming_multiplier_times_damage_past_the_bound_is_refused(self) -> None:
        """A product (C13 step 5, C34): 10^13 + 3 damage (WD 10^13 and a 3) times Vesh's incoming 1000 (the most a
        sheet may write, MAX_MULTIPLY) is 1000 x (10^13 + 3); its incoming step adds 999 x (10^13 + 3), past the
        bound."""
        kael = msgspec.structs.replace(sheet("kael"), weapons=(Weapon(id="sword", weapon_damage=10**13),))
        vesh = msgspec.structs.replace(sheet("vesh", side="foes"), incoming_damage=IncomingDamage(multiply="1000"))
        fight = Fight.start(MemoryStore(), "m", dice=ScriptedDice([6, 1, 3, 3, 2]), clock=lambda: 0,
                            combatants=[kael, vesh])
        fight.roll_initiative()
        fight.attack("kael", "vesh", weapon="sword")
        with pytest.raises(InvalidCommand) as refused:
            fight.defend("vesh", None)
        assert str(refused.value) == _refusal("answer_active_defense", "damage_resolved", 22,
                                              999 * (10**13 + 3), "$.event.steps[4].amount")

    def test_stacks_times_a_per_stack_modifier_past_the_bound_is_refused(self) -> None:
        """A product (C28): 4 stacks of Hexed at 2**51 damage per stack is a damage term of 2**53, refused at the
        term's value; 4 stacks of 2**51 - 2 with WD 1 and a 5 are 2**53 - 2 raw damage, recorded."""
        with pytest.raises(InvalidCommand) as refused:
            _hexed(2**51, 4).defend("vesh", None)
        assert str(refused.value) == _refusal("answer_active_defense", "damage_resolved", 24, 2**53,
                                              "$.event.terms.modifiers[0].value")
        fight = _hexed(2**51 - 2, 4)
        fight.defend("vesh", None)
        damage = next(rec.event for rec in fight.events if isinstance(rec.event, DamageResolved))
        assert (damage.terms.raw, damage.final) == (2**53 - 2, 2**53 - 2)
        assert _past_the_bound(fight) == [] and fight.state.combatants["vesh"].hp == 0

    def test_a_clock_past_the_bound_is_refused_at_recorded_at(self) -> None:
        """A clock in nanoseconds (past 2**53 - 1 today) would record every event's time past the bound: the
        fight's start is refused at ``$.recorded_at``, nothing written."""
        store = MemoryStore()
        with pytest.raises(InvalidCommand) as refused:
            Fight.start(store, "c", dice=ScriptedDice([]), clock=lambda: 2**53)
        assert refused.value.command == "start_fight" and refused.value.path == "$"
        assert "its fight_started event (seq 1) would record 9007199254740992 at $.recorded_at" in str(refused.value)
        assert "no log holds it; nothing written" in str(refused.value) and store.fights() == []


_WHOLE = st.one_of(st.sampled_from([MAX_WHOLE, -MAX_WHOLE]), st.integers(-3, 3), st.integers(-MAX_WHOLE, MAX_WHOLE))
_NON_NEGATIVE = st.one_of(st.just(MAX_WHOLE), st.integers(0, 3), st.integers(0, MAX_WHOLE))
_MULTIPLIERS: tuple[float | str, ...] = (1.0, "7/5", "1/2", "1000")  # (at most 1000: MAX_MULTIPLY)


@st.composite
def _extreme_sheet(draw: st.DrawFn, cid: str, side: str) -> CombatantSheet:
    """A sheet whose every number is drawn up to the bound either way (often at it, often small): attribute bonuses,
    a weapon's hit bonus, WD and Parry Rating, training, armor, HP, Will, resistances, a skill and incoming damage."""
    bonuses = {name: (6, draw(_WHOLE)) for name in ("STR", "AGI", "INT", "RES", "FCS")}
    base = sheet(cid, side)
    return msgspec.structs.replace(
        base, hp=draw(st.one_of(st.just(MAX_WHOLE), st.integers(1, MAX_WHOLE))), will=draw(_NON_NEGATIVE),
        attributes=attributes(bonuses), skills={"Perception": Skill(attribute="FCS", level=draw(_NON_NEGATIVE))},
        weapons=(Weapon(id="sword", hit_bonus=draw(_WHOLE), weapon_damage=draw(_NON_NEGATIVE),
                        parry_rating=draw(_NON_NEGATIVE)),),
        training=Training(hit_bonus=draw(_WHOLE)), armor=Armor(rating=draw(_NON_NEGATIVE)),
        resistances={"slashing": draw(_NON_NEGATIVE), "physical": draw(_NON_NEGATIVE)},
        incoming_damage=IncomingDamage(multiply=draw(st.sampled_from(_MULTIPLIERS)),
                                       add=draw(_WHOLE)))


_BLAST = SaveEffect(name="blast", save="AGI", against="INT", on_failure=(
    DealDamage(flat=MAX_WHOLE, damage_type="fire"),), on_success=(DealDamage(flat=MAX_WHOLE, damage_type="fire",
                                                                             half=True),))


class TestRecordedNumbersProperty:
    @given(kael=_extreme_sheet("kael", "heroes"), vesh=_extreme_sheet("vesh", "foes"), seed=st.binary(
        min_size=16, max_size=16), modifier=_WHOLE, stacks=st.integers(0, 5))
    def test_no_recorded_number_passes_the_bound(self, kael: CombatantSheet, vesh: CombatantSheet, seed: bytes,
                                                 modifier: int, stacks: int) -> None:
        """Sheets at the bounds play initiative, attacks both ways (answered with a Dodge or not), a check, a
        contest and a save dealing 2**53 - 1 fire damage, with Exhausted stacks (C28) and modifiers at the bound:
        each command is recorded or refused, nothing of a refused one is written, and no recorded whole number
        passes ±(2**53 - 1)."""
        fight = Fight.start(MemoryStore(), "p", dice=SeededDice(seed), clock=lambda: 0, combatants=[kael, vesh])
        mods = (Modifier(source="gm", value=modifier),)
        plays: list[Callable[[], object]] = [
            lambda: fight.apply_condition("vesh", "Exhausted", stacks) if stacks else None,
            fight.roll_initiative,
            lambda: fight.attack("kael", "vesh", weapon="sword", damage_modifiers=mods),
            lambda: fight.defend("vesh", "dodge"), lambda: fight.defend("vesh", None),
            lambda: fight.end_turn("kael"),
            lambda: fight.attack("vesh", "kael", weapon="sword"), lambda: fight.defend("kael", None),
            lambda: fight.end_turn("vesh"),
            lambda: fight.static_check(CheckSpec(who="kael", skill="Perception", modifiers=mods), MAX_WHOLE),
            lambda: fight.contest(CheckSpec(who="kael", attribute="STR"), CheckSpec(who="vesh", attribute="RES")),
            lambda: fight.call_save("kael", "vesh", _BLAST)]
        for play in plays:
            before = fight.version
            try:
                play()
            except InvalidCommand as refused:
                assert "would record" in refused.reason and fight.version == before
            except OmenError:
                assert fight.version == before
        assert _past_the_bound(fight) == []


_KEYS = st.text(alphabet="abcdwho_", min_size=1, max_size=4)
_JSON = st.recursive(st.none() | st.booleans() | st.integers(-99, 99) | st.text(max_size=3),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
                     max_leaves=12)


def _paths(value: object, path: str = "$") -> list[str]:
    """The path of every object in ``value`` (decoded JSON), outer ones first."""
    found = [path] if isinstance(value, dict) else []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, item in items:
        found += _paths(item, f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}")
    return found


def _twice(value: object, at: str, path: str = "$") -> str:
    """``value`` written as JSON, the object at ``at`` giving its first member's name again (with another value)."""
    if isinstance(value, list):
        return "[" + ",".join(_twice(item, at, f"{path}[{n}]") for n, item in enumerate(value)) + "]"
    if not isinstance(value, dict):
        return json.dumps(value)
    members = [f"{json.dumps(k)}:{_twice(v, at, f'{path}.{k}')}" for k, v in value.items()]
    if path == at:
        members.append(f"{json.dumps(next(iter(value)))}:0")
    return "{" + ",".join(members) + "}"


class TestNamesGivenTwice:
    """I-JSON (RFC 7493): an object gives each name once; readers differ on which of two values counts."""

    @given(_JSON)
    def test_json_naming_each_member_once_has_none(self, value: object) -> None:
        """Any JSON whose objects name each member once (as every encoder writes it) is not flagged."""
        assert named_twice(json.dumps(value)) is None

    @given(st.dictionaries(_KEYS, _JSON, min_size=1), st.data())
    def test_a_name_given_twice_is_found_at_its_path(self, value: object, data: st.DataObject) -> None:
        """A name given again in any one non-empty object is found at that member's path, however deep."""
        objects = [p for p in _paths(value) if _at(value, p)]
        assume(objects)
        at = data.draw(st.sampled_from(objects))
        first = next(iter(_at(value, at)))
        assert named_twice(_twice(value, at)) == f"{at}.{first}"

    def test_a_command_naming_a_field_twice_is_refused_at_its_line(self) -> None:
        """A command file giving ``who`` twice is refused naming the file, the line and ``$.who``."""
        text = '{"command": "end_turn",\n "who": "kael",\n "who": "vesh"}'
        with pytest.raises(ContentError) as refused:
            decode_content(text, Command, source="turn.json")  # type: ignore[arg-type]
        assert refused.value.path == "$.who" and refused.value.line in (2, 3)
        assert "given twice" in str(refused.value) and "turn.json" in str(refused.value)


def _at(value: object, path: str) -> dict[str, object]:
    """The non-empty object at ``path`` in ``value`` ({} if it is empty or not an object)."""
    for name, index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path):
        value = value[name] if name else value[int(index)]  # type: ignore[index]
    return value if isinstance(value, dict) and value else {}


class TestJsonErrorWords:
    """msgspec's words for JSON it cannot read, made plain where they mislead."""

    @pytest.mark.parametrize(("text", "said"), [
        (b'{"who": "\\ud800"}', "\\ud800 at byte 9"),
        (b'{"who": "\\udc00x"}', "\\udc00 at byte 9"),
        (b'{"who": "\\ud83d\\ude00\\ud800"}', "\\ud800 at byte 21"),
    ])
    def test_a_lone_surrogate_escape_is_named_with_its_byte(self, text: bytes, said: str) -> None:
        """Half a surrogate pair (high without low, low without high) is named with the byte it starts at; a whole
        pair before it is not."""
        with pytest.raises(msgspec.DecodeError) as raised:
            msgspec.json.decode(text)
        assert json_error_words(str(raised.value), text).startswith(f"{said} is half of a surrogate pair")

    def test_other_errors_keep_their_words(self) -> None:
        """JSON cut short (a whole pair in it) keeps msgspec's words: nothing is half a character."""
        text = b'{"who": "\\ud83d\\ude00"'
        with pytest.raises(msgspec.DecodeError) as raised:
            msgspec.json.decode(text)
        assert json_error_words(str(raised.value), text) == "Input data was truncated"
