"""omen_core/limits.py: the largest die, the most dice of one kind and the most faces a command carries are
checked wherever dice are read: sheets, commands and stored lines; and no command holds a whole number past what
every JSON reader holds (rulings, docs/rulings.md "Limits")."""

from __future__ import annotations

import json
import re

import msgspec
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from omen_core import Fight, MemoryStore, ScriptedDice
from omen_core.commands import CheckSpec, Command
from omen_core.content import CombatantSheet, decode_content
from omen_core.errors import ContentError, InvalidCommand
from omen_core.events import GENESIS_HASH, DiceRolled, decode_line, encode_line, seal
from omen_core.limits import MAX_DICE, MAX_FACES, MAX_SIDES, MAX_WHOLE, beyond_whole, json_error_words, named_twice
from omen_core.parts import Die
from tests.fights import present
from tests.sheets import sheet
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
