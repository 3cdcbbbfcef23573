"""Tests for omen_core.content: combatant sheets from TOML and JSON, and errors that say where."""

from __future__ import annotations

import pytest

from omen_core.content import CombatantSheet, decode_content, load_sheet
from omen_core.errors import ContentError

GOOD = """
id = "kael"
name = "Kael"
side = "wardens"
hp = 24
will = 10

[attributes]
STR = { die = "d8", bonus = 2 }
AGI = { die = "d6", bonus = -1 }
INT = { die = "d4" }
RES = { die = "d8", bonus = 2 }
FCS = { die = "d6", bonus = 1 }

[skills]
Perception = { attribute = "FCS", level = 2 }
"""


class TestLoadSheet:
    def test_toml_sheet(self, tmp_path):
        """A TOML sheet loads with dice sizes, bonuses (negative allowed, C1) and skills (C2)."""
        path = tmp_path / "kael.toml"
        path.write_text(GOOD)
        sheet = load_sheet(path)
        assert (sheet.attributes.STR.sides, sheet.attributes.AGI.bonus, sheet.attributes.INT.bonus) == (8, -1, 0)
        assert sheet.skills["Perception"].attribute == "FCS" and sheet.skills["Perception"].level == 2

    def test_json_sheet_equals_toml_sheet(self, tmp_path):
        """The same sheet in JSON decodes to the same value."""
        import msgspec

        toml_sheet = decode_content(GOOD, CombatantSheet, fmt="toml")
        path = tmp_path / "kael.json"
        path.write_bytes(msgspec.json.encode(toml_sheet))
        assert load_sheet(path) == toml_sheet

    def test_unknown_key_is_rejected_with_its_path(self, tmp_path):
        """A typo (``bonsu``) is an error naming the file and the JSON path, not silently ignored."""
        path = tmp_path / "typo.toml"
        path.write_text(GOOD.replace('bonus = 2 }\nAGI', 'bonsu = 2 }\nAGI'))
        with pytest.raises(ContentError) as info:
            load_sheet(path)
        assert info.value.source == str(path) and info.value.path == "$.attributes.STR"
        assert "bonsu" in str(info.value)

    @pytest.mark.parametrize("old, new, path", [
        ('die = "d8", bonus = 2 }\nAGI', 'die = "d1", bonus = 2 }\nAGI', "$.attributes.STR.die"),
        ('die = "d8", bonus = 2 }\nAGI', 'die = "8", bonus = 2 }\nAGI', "$.attributes.STR.die"),
        ("hp = 24", "hp = 0", "$.hp"),
        ('attribute = "FCS"', 'attribute = "LUCK"', "$.skills.Perception.attribute"),
        ("level = 2", "level = -1", "$.skills.Perception.level"),
        ('FCS = { die = "d6", bonus = 1 }\n', "", "$.attributes"),
    ])
    def test_invalid_field_names_its_path(self, old, new, path):
        """C1-C3 constraints (dN with N >= 2, HP >= 1, known attribute, level >= 0, all five attributes)."""
        assert old in GOOD
        with pytest.raises(ContentError) as info:
            decode_content(GOOD.replace(old, new), CombatantSheet, source="s.toml", fmt="toml")
        assert info.value.path == path and str(info.value).startswith("s.toml: ")

    def test_broken_toml_is_reported(self):
        """Text that is not TOML at all is a ContentError naming the source."""
        with pytest.raises(ContentError, match="not valid TOML"):
            decode_content("id = = 3", CombatantSheet, source="bad.toml", fmt="toml")

    def test_missing_file_is_reported(self, tmp_path):
        """A sheet path that does not exist is a ContentError, not an OSError traceback."""
        with pytest.raises(ContentError, match="cannot read"):
            load_sheet(tmp_path / "nope.toml")

    def test_attribute_lookup_by_name(self):
        """Attributes can be looked up by their C1 name, and only by those names."""
        sheet = decode_content(GOOD, CombatantSheet, fmt="toml")
        assert sheet.attributes["RES"].bonus == 2
        with pytest.raises(KeyError):
            sheet.attributes["LUCK"]
