"""omen_core/derive.py: the numbers a decision shows before its dice are rolled (what an Active Defense adds, an
attack's pool and bonuses), worked out by hand from the Ember Ford sheets."""

from __future__ import annotations

from pathlib import Path

from omen_core import Fight, MemoryStore, ScriptedDice
from omen_core.content import load_sheet
from omen_core.derive import ActiveDefenseAdds, StrikeNumbers, active_defense_adds, strike_bonus

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
