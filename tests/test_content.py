"""Tests for omen_core.content: combatant sheets from TOML and JSON, and errors that say where."""

from __future__ import annotations

import re
from importlib.resources import files
from pathlib import Path
from typing import Literal

import msgspec
import pytest

from omen_core import Fight, ManualDice, MemoryStore
from omen_core.commands import Join
from omen_core.content import (
    MAX_CONTENT_BYTES,
    AbilityLibrary,
    Armor,
    CombatantSheet,
    Economy,
    Ruleset,
    Shield,
    Training,
    Weapon,
    content_hash,
    decode_content,
    load_ruleset,
    load_sheet,
    read_content,
    refused_sheet,
)
from omen_core.errors import ContentError, RuleViolation
from tests.fights import present

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
    def test_toml_sheet(self, tmp_path: Path) -> None:
        """A TOML sheet loads with dice sizes, bonuses (negative allowed, C1) and skills (C2)."""
        path = tmp_path / "kael.toml"
        path.write_text(GOOD)
        sheet = load_sheet(path)
        assert (sheet.attributes.STR.sides, sheet.attributes.AGI.bonus, sheet.attributes.INT.bonus) == (8, -1, 0)
        assert sheet.skills["Perception"].attribute == "FCS" and sheet.skills["Perception"].level == 2

    def test_json_sheet_equals_toml_sheet(self, tmp_path: Path) -> None:
        """The same sheet in JSON decodes to the same value."""
        import msgspec

        toml_sheet = decode_content(GOOD, CombatantSheet, fmt="toml")
        path = tmp_path / "kael.json"
        path.write_bytes(msgspec.json.encode(toml_sheet))
        assert load_sheet(path) == toml_sheet

    def test_unknown_key_is_rejected_with_its_path(self, tmp_path: Path) -> None:
        """A typo (``bonsu``) is an error naming the file and the JSON path of the unknown key itself (the line it is
        written on), not silently ignored."""
        path = tmp_path / "typo.toml"
        path.write_text(GOOD.replace('bonus = 2 }\nAGI', 'bonsu = 2 }\nAGI'))
        with pytest.raises(ContentError) as info:
            load_sheet(path)
        assert info.value.source == str(path) and info.value.path == "$.attributes.STR.bonsu"
        assert "bonsu" in str(info.value)

    @pytest.mark.parametrize("old, new, path", [
        ('die = "d8", bonus = 2 }\nAGI', 'die = "d1", bonus = 2 }\nAGI', "$.attributes.STR.die"),
        ('die = "d8", bonus = 2 }\nAGI', 'die = "8", bonus = 2 }\nAGI', "$.attributes.STR.die"),
        ("hp = 24", "hp = 0", "$.hp"),
        ('attribute = "FCS"', 'attribute = "LUCK"', "$.skills.Perception.attribute"),
        ("level = 2", "level = -1", "$.skills.Perception.level"),
        ('FCS = { die = "d6", bonus = 1 }\n', "", "$.attributes.FCS"),
        ('die = "d8", bonus = 2 }\nAGI', 'die = "d8\\n", bonus = 2 }\nAGI', "$.attributes.STR.die"),
        ('id = "kael"', 'id = "kael\\n"', "$.id"),
    ])
    def test_invalid_field_names_its_path(self, old: str, new: str, path: str) -> None:
        """C1-C3 constraints (dN with N >= 2, HP >= 1, known attribute, level >= 0, all five attributes); the
        error names the file, the line the field is written on (or, for one left out, its table's) and the path
        (for one left out, where it belongs)."""
        assert old in GOOD
        text = GOOD.replace(old, new)
        with pytest.raises(ContentError) as info:
            decode_content(text, CombatantSheet, source="s.toml", fmt="toml")
        assert info.value.path == path and str(info.value).startswith(f"s.toml:{info.value.line}: ")
        written = path.rsplit(".", 1)[-1] if new else path.rsplit(".", 2)[-2]  # left out: its table's name
        assert written in text.splitlines()[present(info.value.line) - 1]

    def test_broken_toml_is_reported(self) -> None:
        """Text that is not TOML at all is a ContentError naming the source."""
        with pytest.raises(ContentError, match="not valid TOML"):
            decode_content("id = = 3", CombatantSheet, source="bad.toml", fmt="toml")

    def test_missing_file_is_reported(self, tmp_path: Path) -> None:
        """A sheet path that does not exist is a ContentError, not an OSError traceback."""
        with pytest.raises(ContentError, match="cannot read"):
            load_sheet(tmp_path / "nope.toml")

    def test_attribute_lookup_by_name(self) -> None:
        """Attributes can be looked up by their C1 name, and only by those names."""
        sheet = decode_content(GOOD, CombatantSheet, fmt="toml")
        assert sheet.attributes["RES"].bonus == 2
        with pytest.raises(KeyError):
            sheet.attributes["LUCK"]


# -- the shipped ruleset (C2, C14, C20, C22, C28) ---------------------------------------------------

CORE_TOML = (files("omen_core") / "data" / "core.toml").read_text()
C28_CONDITIONS = {"Exhausted", "Fatigued", "Prone", "Unseen", "Incapacitated", "Paralysed", "Dying"}


class TestShippedRuleset:
    def test_loads(self) -> None:
        """The shipped core ruleset loads without a path and is named core."""
        ruleset = load_ruleset()
        assert isinstance(ruleset, Ruleset) and ruleset.name == "core"

    def test_action_economy_defaults(self) -> None:
        """C20: 1 Action, 1 Movement Action and 2 Bonus Actions per turn."""
        economy = load_ruleset().economy
        assert (economy.actions, economy.movement_actions, economy.bonus_actions) == (1, 1, 2)

    def test_reaction_cost_defaults(self) -> None:
        """C22: Active Defense 1, Attack of Opportunity 1, Disengage 1, Catch 1, Interrupt 2 Bonus Actions."""
        costs = load_ruleset().reaction_costs
        assert (costs.active_defense, costs.attack_of_opportunity, costs.disengage, costs.catch,
                costs.interrupt) == (1, 1, 1, 1, 2)

    def test_skill_defaults(self) -> None:
        """C2 defaults: Stealth rolls AGI and Perception rolls FCS."""
        skills = load_ruleset().skill_attributes
        assert (skills["Stealth"], skills["Perception"]) == ("AGI", "FCS")

    def test_physical_damage_types(self) -> None:
        """C14: crushing, slashing and piercing are the physical types; fire is a type but not physical."""
        types = load_ruleset().damage_types
        assert set(types.physical) == {"crushing", "slashing", "piercing"}
        assert {"fire", "cold", "lightning", "poison", "arcane"} <= set(types.other)
        assert "fire" in types and "fire" not in types.physical and "sonic" not in types

    def test_c28_conditions_are_placeholders(self) -> None:
        """C28: Exhausted, Fatigued, Prone, Unseen, Incapacitated, Paralysed and Dying ship, all marked placeholder."""
        conditions = load_ruleset().conditions
        assert set(conditions) >= C28_CONDITIONS
        assert all(conditions[name].placeholder is True for name in C28_CONDITIONS)

    def test_exhausted_and_fatigued_stack_with_minus_one(self) -> None:
        """C28: Exhausted and Fatigued stack and take 1 from every attribute bonus per stack; Exhausted caps at 5."""
        conditions = load_ruleset().conditions
        assert conditions["Exhausted"].max_stacks == 5
        for name in ("Exhausted", "Fatigued"):
            assert conditions[name].max_stacks > 1 and conditions[name].attribute_bonus == -1


class TestContentHash:
    def test_stable(self) -> None:
        """The same ruleset loaded twice has the same sha256 hash (64 hex digits)."""
        first, second = load_ruleset().content_hash(), load_ruleset().content_hash()
        assert first == second and len(first) == 64 and int(first, 16) >= 0

    def test_equals_content_hash(self) -> None:
        """Ruleset.content_hash is the content_hash of the ruleset."""
        ruleset = load_ruleset()
        assert ruleset.content_hash() == content_hash(ruleset)

    def test_changes_when_a_number_changes(self) -> None:
        """A house rule of 3 Bonus Actions gives a different hash, so a log names the exact numbers."""
        ruleset = load_ruleset()
        changed = msgspec.structs.replace(ruleset, economy=Economy(bonus_actions=3))
        assert changed.content_hash() != ruleset.content_hash()

    def test_changes_when_a_file_number_changes(self, tmp_path: Path) -> None:
        """Editing Interrupt's cost from 2 to 3 in a copy of core.toml changes the hash; an unchanged copy does not."""
        same, edited = tmp_path / "same.toml", tmp_path / "edited.toml"
        same.write_text(CORE_TOML)
        assert "interrupt = 2" in CORE_TOML
        edited.write_text(CORE_TOML.replace("interrupt = 2", "interrupt = 3"))
        assert load_ruleset(same).content_hash() == load_ruleset().content_hash()
        assert load_ruleset(edited).content_hash() != load_ruleset().content_hash()
        assert load_ruleset(edited).reaction_costs.interrupt == 3


class TestRulesetErrors:
    @pytest.mark.parametrize("old, new, path, typo", [
        ("bonus_actions = 2", "bonus_action = 2", "$.economy.bonus_action", "bonus_action"),
        ("max_stacks = 5", "max_stack = 5", "$.conditions.Exhausted.max_stack", "max_stack"),
        ("[reaction_costs]", "[reaction_cost]", "$.reaction_cost", "reaction_cost"),
    ])
    def test_typo_key_names_file_and_path(self, tmp_path: Path, old: str, new: str, path: str, typo: str) -> None:
        """A typo in a ruleset file is a ContentError naming the file and the unknown key, at its own path (the line
        it is written on)."""
        assert old in CORE_TOML
        file = tmp_path / "house.toml"
        file.write_text(CORE_TOML.replace(old, new, 1))
        with pytest.raises(ContentError) as info:
            load_ruleset(file)
        assert (info.value.source, info.value.path) == (str(file), path)
        assert typo in str(info.value) and str(info.value).startswith(str(file))

    def test_bad_value_names_its_path(self, tmp_path: Path) -> None:
        """A condition with max_stacks 0 is refused at $.conditions.Prone.max_stacks."""
        file = tmp_path / "house.toml"
        file.write_text(CORE_TOML.replace("[conditions.Prone]\nplaceholder = true\nmax_stacks = 1",
                                          "[conditions.Prone]\nplaceholder = true\nmax_stacks = 0"))
        with pytest.raises(ContentError) as info:
            load_ruleset(file)
        assert info.value.path == "$.conditions.Prone.max_stacks"


GEAR = """
[[weapons]]
id = "rapier"
name = "Rapier"
weapon_damage = 3
hit_bonus = 1
damage_type = "piercing"
properties = ["finesse", "magical"]
parry_rating = 2

[[weapons]]
id = "wand"
damage_type = "fire"
properties = ["spell", "ranged"]

[[weapons]]
id = "bow"
weapon_damage = 2
damage_type = "piercing"
properties = ["ranged"]

[armor]
name = "chain"
rating = 3

[shield]
block_rating = 2
magical = true

[training]
hit_bonus = 1
veteran_shield = true

[resistances]
fire = 2
physical = 1

[features]
extra_primary_dice = 1
rogue_routing = true
will_conversion = true
rage = { count = 2, die = "d6" }

[incoming_damage]
multiply = 0.5
add = 1
"""


def geared(top: str = "", gear: str = GEAR) -> str:
    """The GOOD sheet with extra top-level keys (before any table) and gear tables after it."""
    return top + GOOD + gear


class TestSheetGear:
    def test_gear_loads_from_toml(self, tmp_path: Path) -> None:
        """C4, C9, C11-C13: weapons with properties, armor, shield, training, resistances and features all load."""
        path = tmp_path / "kael.toml"
        path.write_text(geared('wielding = ["rapier", "wand"]\n'))
        sheet = load_sheet(path)
        rapier = sheet.weapon("rapier")
        assert rapier == Weapon(id="rapier", name="Rapier", weapon_damage=3, hit_bonus=1, damage_type="piercing",
                                properties=frozenset({"finesse", "magical"}), parry_rating=2)
        wand = present(sheet.weapon("wand"))
        assert wand.properties == {"spell", "ranged"} and wand.weapon_damage == 0
        assert sheet.armor == Armor(name="chain", rating=3, magical=False)
        assert sheet.shield == Shield(block_rating=2, magical=True)
        assert sheet.training == Training(hit_bonus=1, veteran_shield=True)
        assert sheet.resistances == {"fire": 2, "physical": 1}
        f = sheet.features
        rage = present(f.rage)
        assert (f.extra_primary_dice, f.rogue_routing, f.will_conversion, rage.count, rage.sides) == (
            1, True, True, 2, 6)
        assert (sheet.incoming_damage.multiply, sheet.incoming_damage.add) == (0.5, 1)
        assert [w.id for w in sheet.wielded()] == ["rapier", "wand"]

    @pytest.mark.parametrize("written, value", [('"7/5"', "7/5"), ('"1.4"', "1.4"), ("1.4", 1.4), ("2", 2)])
    def test_incoming_multiplier_as_a_fraction_or_a_number(self, written: str, value: float | str) -> None:
        """C34: ``multiply`` may be a number or an exact fraction or decimal written as a string."""
        sheet = decode_content(geared(gear=f"[incoming_damage]\nmultiply = {written}\n"), CombatantSheet, fmt="toml")
        assert sheet.incoming_damage.multiply == value

    @pytest.mark.parametrize("written", ['"seven fifths"', '"7/0"', '"-1"', "-0.5"])
    def test_a_bad_multiplier_names_its_path(self, written: str) -> None:
        """C34: a multiplier that is no non-negative number or fraction is refused at $.incoming_damage.multiply; a
        text one saying what it may be, 0 or more, its denominator not 0 (it said only "a fraction", to "-1/2" and
        "1/0": found by a tester)."""
        with pytest.raises(ContentError) as info:
            decode_content(geared(gear=f"[incoming_damage]\nmultiply = {written}\n"), CombatantSheet,
                           source="s.toml", fmt="toml")
        assert info.value.path == "$.incoming_damage.multiply"
        if written.startswith('"'):
            assert "0 or more" in str(info.value) and "its denominator not 0" in str(info.value)

    def test_gear_defaults(self) -> None:
        """A sheet without gear has no weapons, armor or shield, no training bonus and no features."""
        sheet = decode_content(GOOD, CombatantSheet, fmt="toml")
        assert (sheet.weapons, sheet.armor, sheet.shield, sheet.wielded()) == ((), None, None, ())
        assert (sheet.training.hit_bonus, sheet.training.veteran_shield, sheet.features.rage) == (0, False, None)
        assert (sheet.incoming_damage.multiply, sheet.incoming_damage.add) == (1.0, 0)

    def test_weapon_defaults(self) -> None:
        """A weapon with only an id does slashing damage, WD 0, no properties, Parry Rating 0, labelled by its id."""
        sheet = decode_content(geared(gear='[[weapons]]\nid = "club"\n'), CombatantSheet, fmt="toml")
        club = present(sheet.weapon("club"))
        assert (club.damage_type, club.weapon_damage, club.properties, club.parry_rating, club.label) == (
            "slashing", 0, frozenset(), 0, "club")

    def test_wielded_defaults_to_the_first_weapon(self) -> None:
        """Without ``wielding`` the first weapon is in hand."""
        sheet = decode_content(geared(), CombatantSheet, fmt="toml")
        assert [w.id for w in sheet.wielded()] == ["rapier"]

    def test_wielding_picks_weapons(self) -> None:
        """``wielding`` names the weapons in hand, in sheet order."""
        sheet = decode_content(geared('wielding = ["bow"]\n'), CombatantSheet, fmt="toml")
        assert [w.id for w in sheet.wielded()] == ["bow"]

    def test_wielding_nothing(self) -> None:
        """An empty ``wielding`` list means empty hands (an unarmed attacker)."""
        sheet = decode_content(geared("wielding = []\n"), CombatantSheet, fmt="toml")
        assert sheet.wielded() == ()

    def test_unknown_weapon_lookup(self) -> None:
        """Looking up a weapon the sheet does not have gives None."""
        assert decode_content(geared(), CombatantSheet, fmt="toml").weapon("axe") is None


class TestSheetGearErrors:
    def test_unknown_weapon_property(self) -> None:
        """C4: a property that is not finesse, ranged, spell, magical or thrown is refused at its path."""
        text = geared().replace('properties = ["spell", "ranged"]', 'properties = ["spell", "rnaged"]')
        with pytest.raises(ContentError) as info:
            decode_content(text, CombatantSheet, source="k.toml", fmt="toml")
        assert info.value.path == "$.weapons[1].properties[1]" and "rnaged" in str(info.value)
        assert str(info.value).startswith(f"k.toml:{info.value.line}: ")
        assert '"rnaged"' in text.splitlines()[present(info.value.line) - 1]

    def test_unknown_gear_key(self) -> None:
        """A typo inside a gear table (``ratin``) is refused naming $.armor.ratin, where it is written."""
        with pytest.raises(ContentError) as info:
            decode_content(geared().replace("rating = 3", "ratin = 3"), CombatantSheet, source="k.toml", fmt="toml")
        assert info.value.path == "$.armor.ratin" and "ratin" in str(info.value)

    def test_negative_resistance(self) -> None:
        """Resistances are non-negative: fire = -1 is refused at $.resistances.fire."""
        with pytest.raises(ContentError) as info:
            decode_content(geared().replace("fire = 2", "fire = -1"), CombatantSheet, source="k.toml", fmt="toml")
        assert info.value.path == "$.resistances.fire"

    def test_duplicate_weapon_ids(self) -> None:
        """Two weapons with the id ``bow`` are a ContentError naming the file, the path and the id."""
        text = geared().replace('id = "wand"', 'id = "bow"')
        with pytest.raises(ContentError) as info:
            decode_content(text, CombatantSheet, source="k.toml", fmt="toml")
        assert info.value.source == "k.toml" and info.value.path in ("$", "$.weapons")
        assert "bow" in str(info.value) and "unique" in str(info.value)

    def test_wielding_a_weapon_not_on_the_sheet(self) -> None:
        """Wielding ``axe`` when the sheet has no axe is a ContentError naming the path and the axe."""
        with pytest.raises(ContentError) as info:
            decode_content(geared('wielding = ["rapier", "axe"]\n'), CombatantSheet, source="k.toml", fmt="toml")
        assert info.value.source == "k.toml" and info.value.path in ("$", "$.wielding")
        assert "axe" in str(info.value)

    def test_bad_rage_die(self) -> None:
        """C1: rage dice are dN with N >= 2: d1 is refused at $.features.rage.die."""
        with pytest.raises(ContentError) as info:
            decode_content(geared().replace('die = "d6" }', 'die = "d1" }'), CombatantSheet, source="k.toml",
                           fmt="toml")
        assert info.value.path == "$.features.rage.die"

    def test_too_many_extra_primary_dice(self) -> None:
        """C6: abilities add at most +2 primary dice: 3 is refused at $.features.extra_primary_dice."""
        with pytest.raises(ContentError) as info:
            decode_content(geared().replace("extra_primary_dice = 1", "extra_primary_dice = 3"), CombatantSheet,
                           source="k.toml", fmt="toml")
        assert info.value.path == "$.features.extra_primary_dice"


class TestReadContent:
    def test_reads_a_regular_file(self, tmp_path: Path) -> None:
        """A UTF-8 file is read whole, as text."""
        (tmp_path / "s.toml").write_text("name = \"Kaël\"\n")
        assert read_content(tmp_path / "s.toml") == "name = \"Kaël\"\n"

    def test_invalid_utf8_names_the_file_the_line_and_the_offset(self, tmp_path: Path) -> None:
        """Byte 0xE9 alone is a ContentError naming the file, its line and its byte offset."""
        (tmp_path / "s.toml").write_bytes(b"a = 1\nb = \"\xe9\"\n")
        with pytest.raises(ContentError) as caught:
            read_content(tmp_path / "s.toml")
        assert str(caught.value) == f"{tmp_path / 's.toml'}:2: not valid UTF-8: byte 0xe9 at offset 11 (at $)"

    @pytest.mark.parametrize("where", ["/dev/zero", "/dev/null", "."])
    def test_not_a_regular_file_is_refused(self, where: str) -> None:
        """A device or a directory is refused before anything is read."""
        with pytest.raises(ContentError, match="not a regular file"):
            read_content(where)

    def test_a_file_over_the_limit_is_refused(self, tmp_path: Path) -> None:
        """A file holding more than the limit is refused, naming the limit; one at the limit is read."""
        (tmp_path / "s.toml").write_text("x" * 11)
        assert read_content(tmp_path / "s.toml", limit=11) == "x" * 11
        with pytest.raises(ContentError, match="larger than 10 bytes"):
            read_content(tmp_path / "s.toml", limit=10)
        assert MAX_CONTENT_BYTES == 16 << 20

    def test_a_missing_file_names_it(self, tmp_path: Path) -> None:
        """A file that does not exist is a ContentError naming it."""
        with pytest.raises(ContentError, match=r"missing.toml: cannot read the file: No such file"):
            load_sheet(tmp_path / "missing.toml")

    @pytest.mark.parametrize("fmt,text", [("toml", "a = " + "[" * 500 + "]" * 500),
                                          ("toml", "a = " + "{b = " * 500 + "1" + "}" * 500),
                                          ("json", "[" * 5000 + "]" * 5000)])
    def test_deep_nesting_is_a_content_error(self, fmt: Literal["toml", "json"], text: str) -> None:
        """Nesting too deep for the decoder is a ContentError naming the source, not a RecursionError."""
        with pytest.raises(ContentError, match=r"deep.x:1: not valid .*: nested too deeply"):
            decode_content(text, CombatantSheet, source="deep.x", fmt=fmt)

    def test_a_deep_sheet_file_names_the_file(self, tmp_path: Path) -> None:
        """A sheet file nested 500 deep names the sheet file."""
        (tmp_path / "deep.toml").write_text("a = " + "[" * 500 + "]" * 500 + "\n")
        with pytest.raises(ContentError, match=r"deep.toml:1: not valid TOML: nested too deeply"):
            load_sheet(tmp_path / "deep.toml")


class TestByteOrderMark:
    @pytest.mark.parametrize("fmt", ["toml", "json"])
    def test_a_file_starting_with_a_bom_reads_as_without_it(self, tmp_path: Path, fmt: str) -> None:
        """A UTF-8 byte order mark (EF BB BF, an editor's) before a sheet, in TOML or JSON, is left out: the sheet
        loads equal to the same file without it."""
        text = GOOD if fmt == "toml" else msgspec.json.encode(msgspec.toml.decode(GOOD)).decode()
        (tmp_path / f"plain.{fmt}").write_text(text)
        (tmp_path / f"marked.{fmt}").write_bytes(b"\xef\xbb\xbf" + text.encode())
        assert read_content(tmp_path / f"marked.{fmt}") == text
        assert load_sheet(tmp_path / f"marked.{fmt}") == load_sheet(tmp_path / f"plain.{fmt}")

    def test_lines_are_counted_as_in_the_file(self, tmp_path: Path) -> None:
        """After a BOM an error still names its own line: hp = "many" is on line 5 (GOOD opens empty)."""
        (tmp_path / "kael.toml").write_bytes(b"\xef\xbb\xbf" + GOOD.replace("hp = 24", 'hp = "many"').encode())
        with pytest.raises(ContentError) as caught:
            load_sheet(tmp_path / "kael.toml")
        assert (caught.value.line, caught.value.path) == (5, "$.hp")

    def test_a_bom_inside_a_file_is_still_refused(self, tmp_path: Path) -> None:
        """Only a mark at the very start is left out: one after the first key is no TOML."""
        (tmp_path / "kael.toml").write_text(GOOD.replace('name = "Kael"', '\ufeffname = "Kael"'))
        with pytest.raises(ContentError, match="not valid TOML"):
            load_sheet(tmp_path / "kael.toml")


class TestWholeNumbers:
    @pytest.mark.parametrize(("fmt", "text", "line"), [
        ("toml", 'name = "r"\n\n[economy]\nactions = 9007199254740992\n', 4),
        ("toml", 'name = "r"\nreaction_costs = { catch = -9223372036854775808 }\n', 2),
        ("json", '{"name": "r",\n "economy": {\n  "actions": 9007199254740992}}', 3),
        ("json", '{"name": "r",\n "economy": {"actions": 1},\n "reaction_costs": {"catch": -9007199254740992}}', 3),
    ])
    def test_past_two_to_the_53_is_refused_at_its_line_and_field(self, fmt: Literal["toml", "json"], text: str,
                                                                 line: int) -> None:
        """I-JSON (RFC 7493): a whole number past 2**53 - 1 either way, which not every reader of a log holds
        exactly, is refused when content is read, at the file, its line and its field."""
        with pytest.raises(ContentError) as caught:
            decode_content(text, Ruleset, source=f"r.{fmt}", fmt=fmt)
        assert caught.value.source == f"r.{fmt}" and caught.value.line == line
        assert caught.value.path in ("$.economy.actions", "$.reaction_costs.catch")
        assert "past 9,007,199,254,740,991" in caught.value.reason

    def test_two_to_the_53_less_one_is_read(self) -> None:
        """The bound itself is a number every reader holds: 2**53 - 1 Actions a turn are read as written."""
        ruleset = decode_content('{"name": "r", "economy": {"actions": 9007199254740991}}', Ruleset)
        assert ruleset.economy.actions == 2**53 - 1


GRIT = ('[abilities.grit]\nname = "Grit"\nuse = "passive"\n'
        'effects = [{ kind = "modifier", total = "defense", value = 1 }]\n')


class TestWhereATableIsWritten:
    """Every error names the line the field is written on: a table a dotted header makes, too."""

    def test_an_unknown_table_under_a_dotted_header_in_a_library(self) -> None:
        """``[ability.tough]`` on line 6 of an ability library (a typo of ``abilities``) is refused at line 6, the
        header that writes ``ability``, not line 1."""
        text = GRIT + '\n[ability.tough]\nname = "Tough"\n'
        with pytest.raises(ContentError) as info:
            decode_content(text, AbilityLibrary, source="lib.toml", fmt="toml")
        assert str(info.value).startswith("lib.toml:6: did you mean `abilities`? (this table takes: abilities): "
                                          "Object contains unknown field `ability`")
        assert (info.value.path, info.value.line) == ("$.ability", 6)

    @pytest.mark.parametrize("written, line", [
        ("\n[skils.Perception]\nattribute = \"FCS\"\nlevel = 2\n", 18),
        ("\n[[skils.list]]\nattribute = \"FCS\"\n", 18),
        ("\n[skils]\nPerception = { attribute = \"FCS\", level = 2 }\n", 18),
        ("\n[features]\nskils.Perception = 2\n", 19),
    ])
    def test_an_unknown_table_in_a_sheet_is_at_its_first_header_or_key(self, written: str, line: int) -> None:
        """A sheet's ``[skils.Perception]``, ``[[skils.list]]``, ``[skils]`` or dotted key ``skils.Perception = 2``
        is refused at the line that first writes ``skils``."""
        text = GOOD + written
        assert text.splitlines()[line - 1].lstrip("[").startswith("skils")
        with pytest.raises(ContentError) as info:
            decode_content(text, CombatantSheet, source="tor.toml", fmt="toml")
        assert str(info.value).startswith(f"tor.toml:{line}: ")
        assert re.search(r": Object contains unknown field `skils` \(at \$(\.features)?\.skils\)$", str(info.value))
        assert info.value.path in ("$.skils", "$.features.skils")

    def test_an_unknown_table_under_a_dotted_header_in_a_ruleset(self) -> None:
        """A ruleset's ``[conditons.Foo]`` (a typo of ``conditions``) after the whole core ruleset is refused at
        its header's line."""
        text = CORE_TOML + "\n[conditons.Foo]\nmax_stacks = 1\n"
        line = text.count("\n") - 1
        assert text.splitlines()[line - 1] == "[conditons.Foo]"
        with pytest.raises(ContentError) as info:
            decode_content(text, Ruleset, source="rs.toml", fmt="toml")
        assert (info.value.path, info.value.line) == ("$.conditons", line)


class TestAKeyThatIsNoId:
    def test_a_library_key_that_is_no_id_is_named_at_its_line(self) -> None:
        """``[abilities."grit two"]`` on line 6: not an id (C37), refused at line 6 with the key in the path."""
        text = GRIT + '\n[abilities."grit two"]\nname = "Grit Two"\nuse = "passive"\n'
        with pytest.raises(ContentError) as info:
            decode_content(text, AbilityLibrary, source="lib-id.toml", fmt="toml")
        assert str(info.value) == ("lib-id.toml:6: [C37] Expected an id: 1 to 64 ASCII letters (a-z, A-Z), digits, "
                                   "'.', '_' or '-', starting with a letter or digit (at $.abilities.\"grit two\")")

    def test_in_json_too(self) -> None:
        """The same in a JSON library: the key's line, the key in the path."""
        text = ('{"abilities": {\n  "grit": {"name": "G", "use": "passive", "effects": '
                '[{"kind": "modifier", "total": "defense", "value": 1}]},\n  "": {}\n}}')
        with pytest.raises(ContentError) as info:
            decode_content(text, AbilityLibrary, source="lib.json")
        assert (info.value.path, info.value.line) == ('$.abilities.""', 3)

    def test_a_library_id_that_is_not_its_key_names_a_dotted_key_quoted(self) -> None:
        """An ability whose id differs from its key ``a.b`` is named at ``$.abilities."a.b".id``, its id's line."""
        text = GRIT.replace("[abilities.grit]", '[abilities."a.b"]\nid = "c"')
        with pytest.raises(ContentError) as info:
            decode_content(text, AbilityLibrary, source="lib.toml", fmt="toml")
        assert (info.value.path, info.value.line) == ('$.abilities."a.b".id', 2)

    def test_a_condition_name_with_a_bidirectional_control_is_escaped_in_the_path(self) -> None:
        """A condition named with U+202E is refused at its header's line; the path shows it escaped."""
        text = CORE_TOML + '\n[conditions."Bad\\u202eX"]\nmax_stacks = 1\n'
        with pytest.raises(ContentError) as info:
            decode_content(text, Ruleset, source="rs.toml", fmt="toml")
        assert (info.value.path, info.value.line) == ('$.conditions."Bad\\u202eX"', text.count("\n") - 1)


class TestRefusedSheet:
    """A sheet the rules refuse at join, named where a join command writes it (as a scenario names a sheet)."""

    JOIN = ('command = "join"\n\n[sheet]\nid = "bob"\nname = "Bob"\nside = "party"\nhp = 10\nwill = 2\n'
            'abilities = ["riposte", "nonesuch"]\n\n[sheet.attributes]\n'
            + "".join(f'{a} = {{ die = "d6" }}\n' for a in ("STR", "AGI", "INT", "RES", "FCS"))
            + '\n[[sheet.weapons]]\nid = "club"\nweapon_damage = 2\ndamage_type = "ooze"\n')

    def refused(self, text: str) -> RuleViolation:
        command = decode_content(text, Join, source="join.toml", fmt="toml")
        with pytest.raises(RuleViolation) as info:
            Fight.start(MemoryStore(), "f", dice=ManualDice(), clock=lambda: 0).join(command.sheet)
        return info.value

    def test_an_ability_neither_shipped_nor_written_out(self) -> None:
        """C37: ``nonesuch`` in the sheet's abilities is named at the line and path of that entry in the command."""
        text = self.JOIN.replace('"ooze"', '"crushing"')
        refused = self.refused(text)
        found = present(refused_sheet(refused, "join.toml", text, "toml", "$.sheet"))
        assert (found.source, found.path, found.line) == ("join.toml", "$.sheet.abilities[1]", 9)
        assert str(found).startswith("join.toml:9: the rules refuse this combatant: [C37] bob's abilities list "
                                     "'nonesuch'")

    def test_an_unknown_damage_type(self) -> None:
        """C14: a weapon's damage type the ruleset does not list is named at its line, in the sheet's own file
        (``$``) or in a command (``$.sheet``)."""
        text = self.JOIN.replace('"nonesuch"', '"battle_focus"')
        refused = self.refused(text)
        found = present(refused_sheet(refused, "join.toml", text, "toml", "$.sheet"))
        assert (found.path, found.line) == ("$.sheet.weapons[0].damage_type", 21)
        sheet_text = text.replace("[sheet.", "[").replace("[sheet]\n", "").replace('command = "join"\n\n', "")
        alone = present(refused_sheet(refused, "bob.toml", sheet_text, "toml"))
        assert (alone.path, alone.line) == ("$.weapons[0].damage_type", 18)
        assert sheet_text.splitlines()[17] == 'damage_type = "ooze"'

    def test_a_refusal_that_names_no_field_is_left_as_it_is(self) -> None:
        """A refusal without a field of the sheet (a rule of the fight's, not of the sheet) is not placed."""
        refused = RuleViolation("C9", "no shield in hand")
        assert refused_sheet(refused, "join.toml", self.JOIN, "toml", "$.sheet") is None


class TestWhatWasExpected:
    LIBRARY = ('[abilities.x]\nname = "X"\nuse = "free"\ntarget = "self"\nuses = { count = 1, per = "turn" }\n'
               'effects = [{ kind = "heal", to = "actor", flat = 1 }]\n')

    @pytest.mark.parametrize(("old", "new", "path", "expected"), [
        ('per = "turn"', 'per = "rest"', "$.abilities.x.uses.per",
         "[C41] Invalid enum value 'rest'; one of: fight, round, turn"),
        ('kind = "heal"', 'kind = "heel"', "$.abilities.x.effects[0].kind",
         "[C37] Invalid value 'heel'; one of: allow_defense, attack, clear, condition, damage, dice, heal, modifier, "
         "reroll, route, save, will_conversion (did you mean 'heal'?)"),
        ('target = "self"\n', 'target = "self"\ndeferred = { at = "end_of_next_round", effects = [] }\n',
         "$.abilities.x.deferred.at",
         "[C41] Invalid enum value 'end_of_next_round'; one of: end_of_next_turn, start_of_next_turn (did you mean "
         "'end_of_next_turn'?)"),
        ('use = "free"\ntarget = "self"\n',
         'use = "trigger"\ntrigger = { moment = "attack.damagd", owner = "target" }\n',
         "$.abilities.x.trigger.moment",
         "[C38] Invalid enum value 'attack.damagd'; one of: attack.damaged, attack.declared, attack.determined, "
         "attack.rolled, check.resolved, condition.applied, move.left, round.end, save.resolved, turn.end, "
         "turn.start (did you mean 'attack.damaged'?)"),
    ])
    def test_a_bad_value_of_a_library_says_the_values_it_may_take(self, old: str, new: str, path: str,
                                                                  expected: str) -> None:
        """A value a field of a fixed few does not take (a literal, or the `kind` tag of an effect) is refused at
        its path with the values it may take, sorted, and the close one (docs/content.md: "what was expected"),
        and the rule its ability breaks: C41 in its uses or deferred cost (a deferred cost's bad `at` said C37, its
        effect's bad `to` C41: a tester), else C38 for a triggered one's, C37 for any other's (docs/abilities.md)."""
        assert old in self.LIBRARY
        with pytest.raises(ContentError) as info:
            decode_content(self.LIBRARY.replace(old, new, 1), AbilityLibrary, source="lib.toml", fmt="toml")
        assert (info.value.path, info.value.reason) == (path, expected)

    @pytest.mark.parametrize(("old", "new", "path", "meant"), [
        ('use = "free"', 'use = "reaction"', "$.abilities.x.use",
         '(an ability that answers something is use = "trigger" with a [trigger] table (C38))'),
        ('use = "free"\ntarget = "self"\n', 'use = "trigger"\ntrigger = { moment = "attack.hit", owner = "target" }\n',
         "$.abilities.x.trigger.moment", '(a hit is moment = "attack.determined" with outcome = "hit" (C38))'),
        ('use = "free"\ntarget = "self"\n',
         'use = "trigger"\ntrigger = { moment = "attack.damaged", owner = "ally" }\n', "$.abilities.x.trigger.owner",
         "(did you mean 'ally_of_afflicted' or 'ally_of_saver' or 'ally_of_target'?)"),
        ('use = "free"\ntarget = "self"\n',
         'use = "trigger"\ntrigger = { moment = "attack.rolled", owner = "defender" }\n', "$.abilities.x.trigger.owner",
         '(the one an attack is made on is "target", C38)'),
    ])
    def test_a_word_a_gm_writes_for_another_is_told_what_it_stands_for(self, old: str, new: str, path: str,
                                                                      meant: str) -> None:
        """A word omen does not take whose closest spelling would mislead is told what it stands for (a tester's
        `use = "reaction"` was asked "did you mean 'action'?", `moment = "attack.hit"` "'attack.rolled'?"); a word
        that is part of several values names them all (`owner = "ally"` was asked "'caller'?"); `owner = "defender"`
        is told the attack's target is "target" (a tester got the list alone)."""
        assert old in self.LIBRARY
        with pytest.raises(ContentError) as info:
            decode_content(self.LIBRARY.replace(old, new, 1), AbilityLibrary, source="lib.toml", fmt="toml")
        assert info.value.path == path and info.value.reason.endswith(meant), info.value.reason
        assert "; one of: " in info.value.reason  # the values it may take are still listed

    @pytest.mark.parametrize(("old", "new", "path", "hint"), [
        ('name = "X"', 'sumary = "x"\nname = "X"', "$.abilities.x.sumary",
         "did you mean `summary`? (this table takes: id, name, summary, placeholder, rule, use, applies_to, target, "
         "within_reach, trigger, when, cost, uses, deferred, effects): "),
        ('target = "self"\n', 'target = "self"\ncost = { focus = 2 }\n', "$.abilities.x.cost.focus",
         "this table takes only actions, movement, bonus_actions, hp, will: "),
        ('to = "actor", flat = 1', 'to = "actor", flat = 1, half = true', "$.abilities.x.effects[0].half",
         "this table takes only kind, to, dice, flat: "),
    ])
    def test_an_unknown_key_is_told_the_one_meant_and_the_keys_taken(self, old: str, new: str, path: str,
                                                                    hint: str) -> None:
        """A key an object does not take is refused with the one most likely meant, if one is close, and every key
        it takes, in their order, before msgspec's words (which end with the key, as the path after them does:
        docs/content.md, "what was expected"; a tester's `sumary` and `cost = { focus = 2 }` named neither; a
        `heal` takes no `half`)."""
        assert old in self.LIBRARY
        with pytest.raises(ContentError) as info:
            decode_content(self.LIBRARY.replace(old, new, 1), AbilityLibrary, source="lib.toml", fmt="toml")
        field = path.rpartition(".")[2]
        assert (info.value.path, info.value.reason) == (path, f"[C37] {hint}Object contains unknown field `{field}`")
        assert str(info.value).endswith(f"unknown field `{field}` (at {path})")

    def test_a_rulesets_misspelt_key_is_told_the_one_meant(self) -> None:
        """A condition's `modifiers = { defence = 2 }` (British spelling) is told `defense` and the three totals a
        modifier may change (C28)."""
        with pytest.raises(ContentError) as info:
            decode_content('name = "h"\n[conditions.Shielded]\nmodifiers = { defence = 2 }\n', Ruleset,
                           source="r.toml", fmt="toml")
        assert (info.value.path, info.value.line, info.value.reason) == (
            "$.conditions.Shielded.modifiers.defence", 3,
            "[C28] did you mean `defense`? (this table takes: hit, defense, damage): Object contains unknown field "
            "`defence`")

    def test_a_tag_in_a_save_branch_lists_only_what_a_branch_holds(self) -> None:
        """An effect of a save's branch takes the four consequences only: those are the tags listed."""
        text = self.LIBRARY.replace('{ kind = "heal", to = "actor", flat = 1 }',
                                    '{ kind = "save", save = "AGI", against = "AGI", on_failure = [{ kind = "damge" '
                                    '}] }').replace('use = "free"\ntarget = "self"', 'use = "action"')
        with pytest.raises(ContentError) as info:
            decode_content(text, AbilityLibrary, source="lib.toml", fmt="toml")
        assert (info.value.path, info.value.reason) == (
            "$.abilities.x.effects[0].on_failure[0].kind",
            "[C37] Invalid value 'damge'; one of: clear, condition, damage, heal (did you mean 'damage'?)")

    def test_a_rulesets_and_a_sheets_bad_value_say_the_values_they_may_take(self) -> None:
        """A ruleset's save_ends.save and a sheet's attribute of a skill are refused with the attributes listed; a
        condition's tick, below a key written as a string, with its moments."""
        with pytest.raises(ContentError) as info:
            decode_content('name = "h"\n[conditions.Q]\nsave_ends = { save = "WIS" }\n', Ruleset, source="r.toml",
                           fmt="toml")
        assert (info.value.path, info.value.line, info.value.reason) == (
            "$.conditions.Q.save_ends.save", 3, "[C40] Invalid enum value 'WIS'; one of: AGI, FCS, INT, RES, STR")
        with pytest.raises(ContentError) as info:
            decode_content('name = "h"\n[conditions."Bad Luck"]\ntick = "turn_strt"\n', Ruleset, fmt="toml")
        assert (info.value.path, info.value.reason) == (
            '$.conditions."Bad Luck".tick',
            "[C28] Invalid enum value 'turn_strt'; one of: never, round_end, turn_end, turn_start (did you mean "
            "'turn_start'?)")
        with pytest.raises(ContentError) as info:
            decode_content(GOOD.replace('attribute = "FCS"', 'attribute = "FOC"'), CombatantSheet, fmt="toml")
        assert (info.value.path, info.value.reason) == (
            "$.skills.Perception.attribute", "Invalid enum value 'FOC'; one of: AGI, FCS, INT, RES, STR (did you "
                                             "mean 'FCS'?)")


    @pytest.mark.parametrize(("toml", "path", "rule"), [
        ('[skill_attributes]\nStealth = "LUCK"\n', "$.skill_attributes.Stealth", "[C2] "),
        ('[damage_types]\nphysical = ["fire"]\nother = ["fire"]\n', "$.damage_types.other[0]", ""),
        ("[economy]\nactions = -1\n", "$.economy.actions", "[C20] "),
        ('[economy]\ndraw = "swift"\n', "$.economy.draw", "[C35] "),
        ("[reaction_costs]\ninterrupt = -2\n", "$.reaction_costs.interrupt", "[C22] "),
        ("[conditions.Q]\nduration = 2\n", "$.conditions.Q.duration", "[C28] "),
        ("[conditions.Q]\nmax_stacks = 0\n", "$.conditions.Q.max_stacks", "[C28] "),
        ('[conditions."Q.r"]\ntick = "turn_end"\ndamage = { flat = -1, damage_type = "fire" }\n',
         '$.conditions."Q.r".damage.flat', "[C40] "),
        ('[conditions.Q]\nsave_ends = { save = "RES", against = "INT", timing = "never" }\n',
         "$.conditions.Q.save_ends.timing", "[C40] "),
        ('version = 3\n', "$.version", ""),
    ])
    def test_a_rulesets_error_names_the_rule_its_part_configures(self, toml: str, path: str, rule: str) -> None:
        """A ruleset's error is prefixed with the rule the part it is in configures (docs/content.md, "The
        ruleset": C2 skills, C14 damage types, C20 the economy and C35 its draw, C22 reaction costs, C28 a
        condition, C40 its damage and save ends); words that name their rule already (C14's "(C14; it lists")
        and a part no rule configures (the version) take none."""
        with pytest.raises(ContentError) as info:
            decode_content(f'name = "h"\n{toml}', Ruleset, source="r.toml", fmt="toml")
        assert info.value.path == path
        assert info.value.reason.startswith(rule) and (rule or not info.value.reason.startswith("["))
        assert "damage_types" not in path or info.value.reason.endswith("once (C13, C14)")


def test_a_condition_named_by_a_noun_is_had_not_been() -> None:
    """Narration and the table page say a condition as its holder has it: "is Prone", "is Poisoned", "is Burning",
    but "has Curse" and "has Mark of the Hunt" for a ruleset's condition named by a noun (it read "Vesh is Curse":
    found by a tester); cleared, "is no longer Prone", "no longer has Curse"."""
    from omen_core.content import condition_held

    assert [condition_held(c) for c in ("Prone", "Poisoned", "Burning", "Unseen", "Dying", "Curse",
                                        "Mark of the Hunt")] == [
        "is Prone", "is Poisoned", "is Burning", "is Unseen", "is Dying", "has Curse", "has Mark of the Hunt"]
    assert (condition_held("Prone", held=False), condition_held("Curse", held=False)) == (
        "is no longer Prone", "no longer has Curse")


def test_a_required_key_written_misspelt_is_named_with_the_key_written() -> None:
    """An effect whose `kind` is written `kindd` is refused at its line, naming the key written and the one meant
    (it said only "Object missing required field `kind`", as if nothing were there: a house-rules tester)."""
    from omen_core.content import Ability

    text = ('id = "x"\nname = "X"\nuse = "trigger"\ntrigger = { moment = "attack.rolled", owner = "attacker" }\n'
            'effects = [{ kindd = "modifier", total = "hit", value = 1 }]\n')
    with pytest.raises(ContentError) as info:
        decode_content(text, Ability, source="lib.toml", fmt="toml")
    assert (info.value.path, info.value.line) == ("$.effects[0].kind", 5)
    assert "Object missing required field `kind` (it has `kindd`: did you mean `kind`?)" in str(info.value)


@pytest.mark.parametrize("written", ["1e300", "1000.5", '"1000.0001"', '"5001/5"', '"99999999999999999999/1"'])
def test_an_incoming_damage_multiplier_past_1000_is_refused_at_the_join(written: str) -> None:
    """C13 step 5, C34: ``incoming_damage.multiply`` is at most 1000 however it is written (a float, a decimal, a
    fraction, read exactly): 1e300 was taken, and the first hit on its combatant made a damage total no log holds,
    every answer to that attack refused (a tester). The content reads (a log recorded before the bound still
    does); the join refuses it, at the sheet's field; 1000, 5000/5 and 7/5 join."""
    from omen_core.content import IncomingDamage, decode_content

    written_sheet = decode_content(f'{{"multiply": {written}}}', IncomingDamage)
    assert written_sheet.too_large()
    fight = Fight.start(MemoryStore(), "x", dice=ManualDice(), clock=lambda: 0)
    with pytest.raises(RuleViolation) as refused:
        fight.join(msgspec.structs.replace(decode_content(GOOD, CombatantSheet, fmt="toml"),
                                           incoming_damage=written_sheet))
    assert refused.value.rule == "C13" and refused.value.field_under("$") == "$.incoming_damage.multiply"
    assert "more than 1000" in str(refused.value) and fight.version == 1
    for taken in ("1000", '"5000/5"', '"7/5"'):
        sheet = decode_content(f'{{"multiply": {taken}}}', IncomingDamage)
        assert not sheet.too_large()


def test_a_ruleset_name_written_in_another_normalization_says_so() -> None:
    """A sheet's damage type written e + U+0301 where the ruleset has é (U+00E9) is named as the same text written
    with other code points, not merely "did you mean" a name that looks identical (a tester's GM, saving on macOS)."""
    from omen_core.content import known_words

    said = known_words("Cafe\u0301", ["Caf\u00e9", "fire"])
    assert said == ("the ruleset knows: Caf\u00e9, fire; did you mean 'Caf\u00e9'? (the same text written with other "
                    "code points (another Unicode normalization: save the file as NFC))")
