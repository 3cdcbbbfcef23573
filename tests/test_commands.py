"""Tests for omen_core.commands: building a command from data (``command_from``) with the JSON decoders' checks."""

from __future__ import annotations

from typing import Any, get_args

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omen_core.commands import Command, EndTurn, React, RollInitiative, command_from
from omen_core.errors import InvalidCommand, OmenError
from omen_core.parts import Encircled, Situational

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                    max_leaves=8)
TAGS = st.sampled_from(["end_turn", "roll_initiative", "declare_attack", "move", "undo", "fly", ""])


class TestCommandFrom:
    def test_a_dict_bytes_and_text_give_the_same_command(self) -> None:
        """A dict, its JSON bytes and its JSON text each give EndTurn(who='vesh')."""
        data = {"command": "end_turn", "who": "vesh"}
        assert command_from(data) == command_from(msgspec.json.encode(data)) == \
            command_from(msgspec.json.encode(data).decode()) == EndTurn(who="vesh")

    def test_any_bytes_like_json_gives_the_command(self) -> None:
        """JSON in a bytearray or a memoryview is read as JSON text (it was said to be a `str` where an object was
        expected)."""
        text = b'{"command": "end_turn", "who": "vesh"}'
        assert command_from(bytearray(text)) == command_from(memoryview(text)) == EndTurn(who="vesh")

    @pytest.mark.parametrize(("data", "command", "path", "reason"), [
        ({"command": "fly"}, "fly", "$.command", "Invalid value 'fly'"),
        ({"command": "roll_initiative", "dice": [0, 5]}, "roll_initiative", "$.dice[0]", "Expected `int` >= 1"),
        ({"command": "roll_initiative", "dice": [10**6, 5]}, "roll_initiative", "$.dice[0]",
         "Expected `int` <= 1000"),
        ({"command": "end_turn", "who": "vesh", "idempotency_key": "k" * 201}, "end_turn", "$.idempotency_key",
         "Expected `str` of length <= 200"),
        ({"command": "end_turn", "who": "vesh", "colour": "red"}, "end_turn", "$.colour",
         "Object contains unknown field `colour`"),
        ({"command": "end_turn", "who": None}, "end_turn", "$.who", "Expected `str`, got `null`"),
        ({"who": "vesh"}, "command", "$.command", "Object missing required field `command`"),
        (None, "command", "$", "Expected `object`, got `null`"),
    ])
    def test_bad_data_is_invalid_command_naming_the_field(self, data: Any, command: str, path: str,
                                                          reason: str) -> None:
        """Each of the cases msgspec.convert raised ValidationError for is InvalidCommand with its tag, the JSON
        path of the field at fault and the decoder's reason."""
        with pytest.raises(InvalidCommand) as caught:
            command_from(data)
        assert (caught.value.command, caught.value.path, caught.value.reason) == (command, path, reason)

    def test_text_that_is_not_json_is_invalid_command(self) -> None:
        """Truncated JSON text is InvalidCommand at $."""
        with pytest.raises(InvalidCommand, match=r"not a command as JSON holds one: Input data was truncated"):
            command_from(b'{"command": "end_turn"')

    def test_react_takes_the_claims_declare_attack_takes(self) -> None:
        """C26, C27: ``react`` takes ``situational`` in declare_attack's shape (it was refused as an unknown field:
        found by a tester), checked as there: an encircled claim of 0 attackers is refused at its path."""
        data = {"command": "react", "who": "x", "situational": {"high_ground": True,
                                                                  "encircled": {"attackers": 4, "defenders": 2}}}
        assert command_from(data) == React(who="x", situational=Situational(
            high_ground=True, encircled=Encircled(attackers=4, defenders=2)))
        with pytest.raises(InvalidCommand) as caught:
            command_from({"command": "react", "who": "x", "situational": {"encircled": {"attackers": 0,
                                                                                         "defenders": 1}}})
        assert (caught.value.path, caught.value.reason) == ("$.situational.encircled.attackers",
                                                            "Expected `int` >= 1")
        assert msgspec.json.encode(command_from({"command": "react", "who": "x", "situational": {}})) \
            == b'{"command":"react","who":"x"}'   # the default claim is left out, as written before

    def test_faces_are_kept(self) -> None:
        """A command's faces come through as a tuple, in order."""
        assert command_from({"command": "roll_initiative", "dice": [4, 6]}) == RollInitiative(dice=(4, 6))

    @settings(max_examples=300, deadline=None)
    @given(TAGS, st.dictionaries(st.sampled_from(["who", "dice", "attacker", "target", "to_seq", "x", "leaves"]),
                                 JSON, max_size=4), JSON)
    def test_any_data_gives_a_command_or_invalid_command(self, tag: str, fields: dict[str, Any], other: Any
                                                         ) -> None:
        """For any dict (tagged or not) or other JSON value, command_from returns a Command or raises
        InvalidCommand, never another error."""
        for data in ({"command": tag, **fields}, fields, other):
            try:
                made = command_from(data)
            except OmenError as exc:
                assert isinstance(exc, InvalidCommand)
            else:
                assert isinstance(made, get_args(Command))
