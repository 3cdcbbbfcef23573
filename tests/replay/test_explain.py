"""Tests for omen_replay.explain: every number of an attack, save or check, where it came from, and that it adds up."""

from __future__ import annotations

import json

import msgspec
import pytest

from omen_core.content import Armor, Features, RageDice, SaveEffect, Weapon
from omen_core.errors import BadInput
from omen_core.events import encode_line
from omen_replay.cli import app
from omen_replay.explain import explain
from tests.fights import new_fight
from tests.sheets import sheet


def brute_fight():
    """Ash (Exhausted x1, rage d6) crits Bo (armor 2, Dodge) with an axe: every kind of term appears."""
    ash = msgspec.structs.replace(sheet("ash", STR=(8, 3), FCS=(6, 2)), weapons=(Weapon(id="axe", weapon_damage=4),),
                                  features=Features(rage=RageDice(die="d6")))
    bo = msgspec.structs.replace(sheet("bo", side="b", RES=(6, 1), AGI=(6, 1)), armor=Armor(rating=2), hp=30)
    fight = new_fight(ash, bo, faces=[7, 6, 2, 3, 5])
    fight.apply_condition("ash", "Exhausted")
    fight.attack("ash", "bo", rage=True, high_ground=True)
    # hit: 7 + 6 + (3 - 1) + 2 high ground = 17 vs base 2 + 1 + 2 = 5; Dodge 3 + 1 = 4 -> 9: hit
    # crit: FCS 6 + (2 - 1) = 7 vs RES 2 + 1 = 3: crit; damage 7 + 2 + 2 + 4 + rage 5 = 20, - 2 armor = 18
    fight.defend("bo", "dodge")
    return fight


def declared(fight) -> int:
    """The seq of the fight's first attack declaration."""
    return next(e.seq for e in fight.events if e.event.__class__.__name__ == "AttackDeclared")


class TestAttack:
    def test_every_part_adds_up(self):
        """Each part's terms sum to its total: hit, defense, crit portions, damage, mitigation."""
        fight = brute_fight()
        found = explain(fight.events, declared(fight))
        assert found.kind == "attack"
        for part in found.parts:
            assert sum(t.value for t in part.terms) == part.total, part.name

    def test_numbers_match_the_hand_computation(self):
        """C5, C7, C12, C13: hit 17 vs defense 9, FCS 7 vs RES 3, damage 20 then 18 after armor."""
        fight = brute_fight()
        totals = {p.name: p.total for p in explain(fight.events, declared(fight)).parts}
        assert (totals["hit total"], totals["total defense"], totals["FCS portion"], totals["RES portion"]) == (
            17, 9, 7, 3)
        assert totals["damage (axe)"] == 20 and totals["after mitigation"] == 18

    def test_bonuses_name_their_sources(self):
        """The STR bonus is split into the sheet's +3 and Exhausted's -1 (C28); high ground is situational."""
        fight = brute_fight()
        hit = next(p for p in explain(fight.events, declared(fight)).parts if p.name == "hit total")
        terms = {(t.label, t.value) for t in hit.terms}
        assert {("STR bonus", 3), ("conditions", -1), ("high ground (C27)", 2)} <= terms
        assert any("Exhausted" in t.source for t in hit.terms)

    def test_any_event_of_the_attack_explains_the_whole_attack(self):
        """Asking about the hit roll, the window or the damage gives the same attack explanation."""
        fight = brute_fight()
        whole = explain(fight.events, declared(fight))
        assert all(explain(fight.events, e.seq) == whole for e in fight.events[5:] if e.event.__class__.__name__
                   in ("DiceRolled", "HitDetermined", "DamageResolved"))

    def test_dice_are_listed_in_c29_order(self):
        """The dice: primary, FCS, RES, the Dodge die, then the rage die (C29), each scripted."""
        fight = brute_fight()
        dice = explain(fight.events, declared(fight)).dice
        assert [(d.pool, d.face, d.source) for d in dice] == [
            ("primary", 7, "scripted"), ("fcs", 6, "scripted"), ("res", 2, "scripted"), ("active", 3, "scripted"),
            ("damage", 5, "scripted")]


class TestOtherEvents:
    def test_save(self):
        """A save's two sides add up and the verdict cites C15."""
        fight = new_fight(sheet("ash", INT=(8, 2)), sheet("bo", side="b", AGI=(6, 1)), faces=[4, 3])
        fight.call_save("ash", "bo", SaveEffect(name="hex", save="AGI", against="INT"))
        found = explain(fight.events, 4)
        assert found.kind == "save" and [p.total for p in found.parts] == [5, 5]
        assert "saved" in found.verdicts[0] and "C15" in found.verdicts[0]

    def test_check(self):
        """A static check shows the roll primitive and the C16 outcome."""
        from omen_core import CheckSpec

        fight = new_fight(sheet("ash", skills={"Climb": ("STR", 2)}, STR=(8, 1)), faces=[5])
        fight.static_check(CheckSpec(who="ash", skill="Climb"), 8)
        found = explain(fight.events, 4)
        assert found.parts[0].total == 8 and "tie" in found.verdicts[0]

    def test_unknown_seq_is_bad_input(self):
        """A seq beyond the log is refused as bad input."""
        with pytest.raises(BadInput, match="no event with seq 99"):
            explain(brute_fight().events, 99)


class TestSeed:
    def test_seeded_dice_are_confirmed_or_not(self, tmp_path):
        """With the revealed seed every seeded die is confirmed; with a wrong --seed the status says so."""
        from typer.testing import CliRunner

        from omen_core import MemoryStore
        from omen_replay.demo import run_demo

        log = tmp_path / "d.jsonl"
        log.write_bytes(b"".join(encode_line(e) + b"\n" for e in run_demo(MemoryStore(), clock=lambda: 0).events))
        runner = CliRunner()
        result = runner.invoke(app, ["explain", str(log), "20", "--json"])
        found = json.loads(result.stdout)
        assert result.exit_code == 0 and all(d["seed_confirms"] for d in found["dice"])
        wrong = runner.invoke(app, ["explain", str(log), "20", "--seed", "00" * 32, "--json"])
        assert "NOT match" in json.loads(wrong.stdout)["seed"]
        text = runner.invoke(app, ["explain", str(log), "20"])
        assert "seed confirms" in text.output and "hit total" in text.output
        assert runner.invoke(app, ["explain", str(log), "999"]).exit_code == 2


class TestConsequencesAndAmbush:
    def test_on_hit_damage_consequence_is_its_own_roll(self):
        """An on-hit damage consequence (C25) is explained as the consequence's own roll, after the weapon's
        damage: 1d4 = 3 poison, not the hit roll's primary dice (C12)."""
        from omen_core.content import Branches, DamageDice, DealDamage

        ash = msgspec.structs.replace(sheet("ash", STR=(8, 3)), weapons=(Weapon(id="axe", weapon_damage=4),))
        bo = msgspec.structs.replace(sheet("bo", side="b"), hp=40)
        fight = new_fight(ash, bo, faces=[7, 5, 1, 3])
        poison = DealDamage(dice=DamageDice(count=1, die="d4"), damage_type="poison")
        fight.attack("ash", "bo", branches=Branches(on_hit=(poison,)))  # hit 7 + 5 + 3 = 15 vs base 1 + 0
        fight.defend("bo", None)                                           # declines: the d4 rolls 3
        parts = explain(fight.events, declared(fight)).parts
        names = [p.name for p in parts]
        assert names.index("damage (axe)") < names.index("damage (attack 1: a consequence)")
        consequence = parts[names.index("damage (attack 1: a consequence)")]
        assert [(t.label, t.value) for t in consequence.terms] == [("damage dice", 3)] and consequence.rule == "C25"

    def test_no_armor_is_not_called_armor_that_does_not_apply(self):
        """A defender without armor gets 'no armor worn' in the defense terms, not the C13 spell note (C11)."""
        fight = brute_fight()
        bo_unarmored = explain(fight.events, declared(fight))
        armor = next(t for p in bo_unarmored.parts if p.name == "total defense" for t in p.terms if t.label == "armor")
        assert "armor applies" in armor.source                      # Bo wears armor 2 here
        ash = msgspec.structs.replace(sheet("ash"), weapons=(Weapon(id="axe", weapon_damage=4),))
        plain = new_fight(ash, sheet("bo", side="b"), faces=[1, 1, 6])
        plain.attack("ash", "bo")          # 1 + 1 does not beat 6: a miss, no window, the defense still explained
        armor = next(t for p in explain(plain.events, declared(plain)).parts if p.name == "total defense"
                     for t in p.terms if t.label == "armor")
        assert (armor.value, armor.source) == (0, "no armor worn (C11)")

    def test_ambush_difficulty_shows_each_stealth_and_the_table_row(self):
        """C17 (C2: no Stealth skill, AGI at level 0): Stealth totals 6 + 1 = 7 and 4 + 1 = 5, waited 1-2 minutes:
        the average rounded down, (7 + 5) // 2 = 6, + 3 = an Ambush Difficulty of 9; the parts add up."""
        vesh = sheet("vesh", side="raiders", AGI=(6, 1))
        wren = sheet("wren", side="raiders", AGI=(6, 1))
        kael = sheet("kael")
        fight = new_fight(vesh, wren, kael, faces=[6, 4, 6])
        fight.ambush(["vesh", "wren"], ["kael"], time_waited="one_to_two_minutes")
        seq = next(r.seq for r in fight.events if r.event.__class__.__name__ == "AmbushDifficultySet")
        found = explain(fight.events, seq)
        table = next(p for p in found.parts if p.name == "Ambush Difficulty")
        assert [t.value for t in table.terms] == [(7 + 5) // 2, 3] and table.total == 9
        for part in found.parts:
            assert sum(t.value for t in part.terms) == part.total, part.name
