"""omen_core/derive.py: the numbers a decision shows before its dice are rolled (what an Active Defense adds, an
attack's pool and bonuses), worked out by hand from the Ember Ford sheets."""

from __future__ import annotations

from pathlib import Path

import msgspec

from omen_core import Fight, MemoryStore, ScriptedDice
from omen_core.content import load_sheet
from omen_core.derive import ActiveDefenseAdds, StrikeNumbers, active_defense_adds, defense_total, strike_bonus
from omen_core.events import DefenseTotal
from omen_core.parts import Modifier
from omen_core.state import AttackFrame

SHEETS = Path(__file__).resolve().parents[1] / "omen_replay" / "data" / "ember-ford" / "sheets"


def duel() -> Fight:
    return Fight.start(MemoryStore(), "duel", dice=ScriptedDice([]),
                       combatants=[load_sheet(SHEETS / "kael.toml"), load_sheet(SHEETS / "vesh.toml")])


class TestActiveDefenseAdds:
    def test_each_defense_adds_its_attributes_die_bonus_and_rating(self) -> None:
        """§Active Defense: Kael's Dodge adds d6 + 1 (AGI); his Parry with the longsword d8 + 2 (STR) + parry
        rating 1; his Block d8 + 2 (RES) + block rating 2; Vesh's Parry with the finesse knife rolls AGI (C9)."""
        state = duel().state
        assert active_defense_adds(state, "kael", "dodge", None) == ActiveDefenseAdds("AGI", 6, 1, 0)
        assert active_defense_adds(state, "kael", "parry", "longsword") == ActiveDefenseAdds("STR", 8, 2, 1)
        assert active_defense_adds(state, "kael", "block", None) == ActiveDefenseAdds("RES", 8, 2, 2)
        assert active_defense_adds(state, "vesh", "parry", "knife") == ActiveDefenseAdds("AGI", 8, 2, 1)

    def test_a_condition_lowers_the_bonus_it_adds(self) -> None:
        """C28: two stacks of Fatigued (-1 to every attribute bonus per stack) take Kael's Dodge bonus from 1 to -1."""
        fight = duel()
        fight.apply_condition("kael", "Fatigued", stacks=2)
        assert active_defense_adds(fight.state, "kael", "dodge", None).bonus == -1


class TestStrikeBonus:
    def test_an_attacks_pool_and_bonuses(self) -> None:
        """C4, C5, C12: Kael's longsword: d8 STR + d6 FCS, hit bonus 2 STR + 1 weapon + 1 training = 4, damage
        bonus 2, WD 4; Vesh's finesse knife: d8 AGI, hit 2 + 1 = 3, WD 2; unarmed Vesh: d6 STR + 0, no WD."""
        state = duel().state
        assert strike_bonus(state, "kael", "longsword") == StrikeNumbers("STR", 8, 6, 4, 2, 4)
        assert strike_bonus(state, "vesh", "knife") == StrikeNumbers("AGI", 8, 6, 3, 2, 2)
        assert strike_bonus(state, "vesh", None) == StrikeNumbers("STR", 6, 6, 0, 0, 0)


class TestDefenseTotal:
    def test_a_modifier_on_the_defense_is_part_of_the_defense_rating(self) -> None:
        """C11 (Defense Rating = RES bonus + armor + modifiers): Kael's longsword at Vesh, RES die 3: base defense
        3 + Defense Rating 2 (RES 1 + armor 1) = 5; with an ally's ability adding its Block Rating 2 ("Shield
        Wall"), the Defense Rating is 4 and the base and total defense 7; the RES die and bonus (the RES portion
        of C7) are unchanged."""
        fight = Fight.start(MemoryStore(), "duel", dice=ScriptedDice([5, 4, 3]),
                            combatants=[load_sheet(SHEETS / "kael.toml"), load_sheet(SHEETS / "vesh.toml")])
        fight.attack("kael", "vesh")
        frame = fight.state.stack[-1]
        assert isinstance(frame, AttackFrame)
        plain = defense_total(fight.state, frame)
        assert (plain.res_die, plain.res_bonus, plain.armor, plain.defense_rating, plain.base, plain.total) == (
            3, 1, 1, 2, 5, 5)
        wall = (Modifier(source="Shield Wall", value=2),)
        helped = defense_total(fight.state, frame, wall)
        assert (helped.res_die, helped.res_bonus, helped.armor, helped.modifiers) == (3, 1, 1, wall)
        assert (helped.defense_rating, helped.base, helped.total) == (4, 7, 7)

    def test_no_modifiers_write_no_bytes(self) -> None:
        """A defense without modifiers is written without the field (schema version 5: defaults left out), as
        every defense recorded before the field existed."""
        defense = DefenseTotal(res_die=3, res_bonus=1, armor=1, armor_applies=True, defense_rating=2, base=5,
                               total=5)
        assert b"modifiers" not in msgspec.json.encode(defense)
