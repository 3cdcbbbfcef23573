"""Tests for omen_replay.explain: every number of an attack, save or check, where it came from, and that it adds up."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from omen_cli import app
from omen_core import Fight
from omen_core.content import Armor, Features, RageDice, SaveEffect, Shield, Weapon, WeaponProperty
from omen_core.errors import BadInput
from omen_core.events import (
    AbilityUsed,
    AttackDeclared,
    BonusActionsRefilled,
    DamageResolved,
    InitiativeOrderSet,
    InitiativeRollOff,
    MovementDeclared,
    StoredEvent,
    SurpriseDetermined,
    encode_line,
)
from omen_replay.explain import explain_records as explain
from tests.fights import new_fight, present
from tests.sheets import sheet

#: The Ember Ford fight as omen demo writes it.
EMBER_FORD = Path(__file__).resolve().parents[2] / "fixtures" / "ember-ford" / "fight.jsonl"


def brute_fight() -> Fight:
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


def fatigued_fight(*, stacks: int, STR: tuple[int, int], FCS: tuple[int, int], faces: list[int],
                   unarmed: bool = False) -> Fight:
    """Ash (``stacks`` of Fatigued, an axe of WD 4) attacks Bo (RES d6 +1, no armor), who declines the Active
    Defense: the hit roll and Bo's RES die are ``faces`` (C29)."""
    ash = msgspec.structs.replace(sheet("ash", STR=STR, FCS=FCS), weapons=(Weapon(id="axe", weapon_damage=4),))
    bo = msgspec.structs.replace(sheet("bo", side="b", RES=(6, 1)), hp=30)
    fight = new_fight(ash, bo, faces=faces)
    fight.apply_condition("ash", "Fatigued", stacks=stacks)
    fight.attack("ash", "bo", unarmed=unarmed)
    fight.defend("bo", None)
    return fight


def declared(fight: Fight) -> int:
    """The seq of the fight's first attack declaration."""
    return next(e.seq for e in fight.events if e.event.__class__.__name__ == "AttackDeclared")


class TestAttack:
    def test_every_part_adds_up(self) -> None:
        """Each part's terms sum to its total: hit, defense, crit portions, damage, mitigation."""
        fight = brute_fight()
        found = explain(fight.events, declared(fight))
        assert found.kind == "attack"
        for part in found.parts:
            assert sum(t.value for t in part.terms) == part.total, part.name

    def test_numbers_match_the_hand_computation(self) -> None:
        """C5, C7, C12, C13: hit 17 vs defense 9, FCS 7 vs RES 3, damage 20 then 18 after armor."""
        fight = brute_fight()
        totals = {p.name: p.total for p in explain(fight.events, declared(fight)).parts}
        assert (totals["hit total"], totals["total defense"], totals["FCS portion"], totals["RES portion"]) == (
            17, 9, 7, 3)
        assert totals["damage (axe)"] == 20 and totals["after mitigation"] == 18

    def test_bonuses_name_their_sources(self) -> None:
        """The STR bonus is split into the sheet's +3 and Exhausted's -1 (C28); high ground is situational."""
        fight = brute_fight()
        hit = next(p for p in explain(fight.events, declared(fight)).parts if p.name == "hit total")
        terms = {(t.label, t.value) for t in hit.terms}
        assert {("STR bonus", 3), ("conditions", -1), ("high ground (C27)", 2)} <= terms
        assert any("Exhausted" in t.source for t in hit.terms)

    def test_the_damages_primary_bonus_is_split_where_fatigued_lowered_it(self) -> None:
        """C12, C28: Ash (STR +2, Fatigued x1: -1 to every attribute bonus) hits Bo with the axe (WD 4), no crit:
        the damage 6 + 1 + 4 = 11 shows the primary bonus as the sheet's +2 and Fatigued's -1, as the hit total
        shows the STR bonus (before, one +1 "attribute bonus"); no crit, so no "crit bonus +0" term (docs/explain.md:
        a 0 the rules do not have is left out; a tester)."""
        fight = fatigued_fight(stacks=1, STR=(8, 2), FCS=(6, 0), faces=[6, 2, 1])
        # hit 6 + 2 + (2 - 1) = 9 vs 1 + 1 = 2; crit: FCS 2 + (0 - 1) = 1 vs RES 1 + 1 = 2: none
        damage = next(p for p in explain(fight.events, declared(fight)).parts if p.name == "damage (axe)")
        assert damage.total == 11 and [(t.label, t.value, t.origin) for t in damage.terms] == [
            ("primary dice result", 6, "dice"), ("primary bonus", 2, "sheet"), ("conditions", -1, "condition"),
            ("Weapon Damage", 4, "weapon")]
        assert [t.source for t in damage.terms[1:3]] == ["STR bonus, ash's sheet (C12)", "Fatigued x1 (C28)"]

    def test_a_crits_extra_primary_bonus_is_split_too(self) -> None:
        """C7, C12, C28: Ash (STR +3, FCS +2, Fatigued x2: -2 each) crits Bo with the axe: 5 + (3 - 2) + (3 - 2)
        + 4 = 11, the primary bonus and the crit's extra one each the sheet's +3 and Fatigued's -2."""
        fight = fatigued_fight(stacks=2, STR=(8, 3), FCS=(6, 2), faces=[5, 6, 2])
        # hit 5 + 6 + (3 - 2) = 12 vs 2 + 1 = 3; crit: FCS 6 + (2 - 2) = 6 vs RES 2 + 1 = 3
        damage = next(p for p in explain(fight.events, declared(fight)).parts if p.name == "damage (axe)")
        assert damage.total == 11 and [(t.label, t.value, t.source) for t in damage.terms] == [
            ("primary dice result", 5, "the hit roll"),
            ("primary bonus", 3, "STR bonus, ash's sheet (C12)"), ("conditions", -2, "Fatigued x2 (C28)"),
            ("crit bonus", 3, "one extra primary bonus on a crit: STR bonus, ash's sheet (C12)"),
            ("crit bonus: conditions", -2, "Fatigued x2 (C28)"), ("Weapon Damage", 4, "axe")]

    def test_an_unarmed_crit_splits_only_the_extra_bonus(self) -> None:
        """C12, C28: unarmed, the damage has no STR bonus (0, not split) but a crit adds one, split: the STR die 5
        + 0 + (3 - 2) = 6."""
        fight = fatigued_fight(stacks=2, STR=(8, 3), FCS=(6, 2), faces=[5, 6, 2], unarmed=True)
        damage = next(p for p in explain(fight.events, declared(fight)).parts if p.name == "damage (unarmed)")
        assert damage.total == 6 and [(t.label, t.value) for t in damage.terms] == [
            ("primary dice result", 5), ("primary bonus", 0), ("crit bonus", 3), ("crit bonus: conditions", -2),
            ("Weapon Damage", 0)]
        assert damage.terms[1].source == "attribute bonus (none when unarmed, C12)"

    def test_any_event_of_the_attack_explains_the_whole_attack(self) -> None:
        """Asking about the hit roll, the window, the damage or any other event of the attack (every event carrying
        its action id, the declaration's seq) gives the same attack explanation."""
        fight = brute_fight()
        whole = explain(fight.events, declared(fight))
        assert whole.seq == declared(fight)
        ours = [e for e in fight.events if getattr(e.event, "action", None) == declared(fight)]
        assert {e.event.__class__.__name__ for e in ours} >= {"DiceRolled", "HitDetermined", "DamageResolved",
                                                             "ActiveDefenseWindowOpened"}
        assert all(explain(fight.events, e.seq) == whole for e in ours)

    def test_dice_are_listed_in_c29_order(self) -> None:
        """The dice: primary, FCS, RES, the Dodge die, then the rage die (C29), each scripted."""
        fight = brute_fight()
        dice = explain(fight.events, declared(fight)).dice
        assert [(d.pool, d.face, d.source) for d in dice] == [
            ("primary", 7, "scripted"), ("fcs", 6, "scripted"), ("res", 2, "scripted"), ("active", 3, "scripted"),
            ("damage", 5, "scripted")]


def test_an_attack_still_open_says_what_it_waits_on() -> None:
    """C8, C7: Skarn's unarmed 5 + 4 hits Kael's base defense 2 (his RES die) and the Active Defense window is open:
    explaining the attack gives its dice and the window, and says it is not settled, what it waits on, whose answer
    it is, and the totals and crit check as they stand (FCS portion 4 > RES portion 2: decided before the window)
    (it listed the dice alone: testers); once Kael declines, it is settled."""
    fight = new_fight(sheet("kael"), sheet("skarn", side="raiders"), faces=[5, 4, 2])
    fight.attack("skarn", "kael", unarmed=True)
    open_ = explain(fight.events, declared(fight))
    assert open_.verdicts[-1] == ("NOT SETTLED: as the log stands this action waits on Active Defense (C8), kael to "
                                  "answer (as it stands: hit total 9 against defense 2, before any Active Defense, "
                                  "C8; the crit check already succeeds: FCS portion 4 > RES portion 2, C7); what it "
                                  "comes to is explained once it settles")
    assert len(open_.dice) == 3
    fight.defend("kael", None)
    assert not any(v.startswith("NOT SETTLED") for v in explain(fight.events, declared(fight)).verdicts)



def test_a_command_asked_about_by_its_seq_explains_the_action_it_declared() -> None:
    """The table page numbers an action's card by its command's seq (a tester's player quoted "#105" and got only
    "command_issued at seq 105 ... explain each"): explaining the seq of a command whose batch declares an action
    explains that action, the same dice, parts and verdicts as its declaration's seq, saying which seq was asked;
    a command that declares none (apply_condition) is still told as a command."""
    from omen_core.events import CommandIssued

    fight = new_fight(sheet("kael"), sheet("skarn", side="raiders"), faces=[5, 4, 2])
    fight.attack("skarn", "kael", unarmed=True)
    fight.defend("kael", None)
    action = declared(fight)
    command = next(r.batch for r in fight.events if r.seq == action)
    assert isinstance(next(r for r in fight.events if r.seq == command).event, CommandIssued)
    by_command, by_action = explain(fight.events, command), explain(fight.events, action)
    assert (by_command.seq, by_command.kind, by_command.dice, by_command.parts) == \
        (by_action.seq, by_action.kind, by_action.dice, by_action.parts)
    assert by_command.verdicts[1:] == by_action.verdicts
    assert by_command.verdicts[0].startswith(f"seq {command} is the command declare_attack") and \
        by_command.verdicts[0].endswith(f"part of the action declared at seq {action}: that action is explained here")
    fight.apply_condition("skarn", "Prone")
    told = explain(fight.events, fight.events[-1].batch)
    assert told.kind == "command_issued" and "it wrote" in told.verdicts[0], told

class TestOtherEvents:
    def test_save(self) -> None:
        """A save's two sides add up and the verdict cites C15."""
        fight = new_fight(sheet("ash", INT=(8, 2)), sheet("bo", side="b", AGI=(6, 1)), faces=[4, 3])
        fight.call_save("ash", "bo", SaveEffect(name="hex", save="AGI", against="INT"))
        called = next(e.seq for e in fight.events if e.event.__class__.__name__ == "SaveCalled")
        found = explain(fight.events, called)
        assert found.kind == "save" and found.seq == called and [p.total for p in found.parts] == [5, 5]
        assert "saved" in found.verdicts[0] and "C15" in found.verdicts[0]

    def test_a_saves_condition_says_how_long_it_lasts(self) -> None:
        """C40: bo fails ash's hex (AGI 1 + 1 = 2 against INT 4 + 2 = 6) and is Fatigued until the end of bo's next
        turn: the explanation says so, as narration does (it said "bo is Fatigued (1 stack, C28)" alone: a
        tester)."""
        from omen_core.content import ApplyCondition

        fight = new_fight(sheet("ash", INT=(8, 2)), sheet("bo", side="b", AGI=(6, 1)), faces=[1, 4])
        hex_ = SaveEffect(name="hex", save="AGI", against="INT", on_failure=(
            ApplyCondition(condition="Fatigued", until="end_of_next_turn", of="target"),))
        fight.call_save("ash", "bo", hex_)
        called = next(e.seq for e in fight.events if e.event.__class__.__name__ == "SaveCalled")
        found = explain(fight.events, called)
        assert "bo is Fatigued (1 stack, C28), until the end of bo's next turn (C40)" in found.verdicts, \
            found.verdicts

    def test_check(self) -> None:
        """A static check shows the roll primitive and the C16 outcome."""
        from omen_core import CheckSpec

        fight = new_fight(sheet("ash", skills={"Climb": ("STR", 2)}, STR=(8, 1)), faces=[5])
        fight.static_check(CheckSpec(who="ash", skill="Climb"), 8)
        resolved = fight.events[-1]
        assert resolved.event.__class__.__name__ == "StaticCheckResolved"
        found = explain(fight.events, resolved.seq)
        assert found.kind == "static_check_resolved" and found.parts[0].total == 8 and "tie" in found.verdicts[0]
        assert sum(t.value for t in found.parts[0].terms) == 8
        assert [(d.seq, d.face) for d in found.dice] == [(resolved.seq - 1, 5)]

    def test_unknown_seq_is_bad_input(self) -> None:
        """A seq beyond the log is refused as bad input."""
        with pytest.raises(BadInput, match="no event with seq 99"):
            explain(brute_fight().events, 99)


class TestSeed:
    def test_seeded_dice_are_confirmed_or_not(self, tmp_path: Path) -> None:
        """With the revealed seed every seeded die is confirmed; with a wrong --seed the status says so."""
        from typer.testing import CliRunner

        from omen_core import MemoryStore
        from omen_replay.demo import run_demo

        log = tmp_path / "d.jsonl"
        events = run_demo(MemoryStore(), clock=lambda: 0).events
        log.write_bytes(b"".join(encode_line(e) + b"\n" for e in events))
        hit = str(next(e.seq for e in events if e.event.__class__.__name__ == "HitDetermined"))  # an attack's event
        runner = CliRunner()
        result = runner.invoke(app, ["explain", str(log), hit, "--json"])
        found = json.loads(result.stdout)
        assert result.exit_code == 0 and found["kind"] == "attack" and found["dice"]
        assert all(d["seed_confirms"] for d in found["dice"])
        wrong = runner.invoke(app, ["explain", str(log), hit, "--seed", "00" * 32, "--json"])
        assert "NOT match" in json.loads(wrong.stdout)["seed"]
        text = runner.invoke(app, ["explain", str(log), hit])
        assert "seed confirms" in text.output and "hit total" in text.output
        assert runner.invoke(app, ["explain", str(log), "999"]).exit_code == 2


    def test_a_fresh_seed_given_checks_only_its_own_epoch(self) -> None:
        """C42: in a fight whose first seed is revealed mid-fight and that goes on under a fresh seed, the fresh seed
        given (--seed) checks the dice drawn under it, and a die drawn under the first seed is checked against the
        seed the log reveals (it said "the seed does NOT match", seed_confirms None; docs/verify.md "Epochs")."""
        from omen_core import CheckSpec, MemoryStore, SeededDice
        from omen_core.dice import commitment

        first, fresh = bytes(range(32)), bytes(range(64, 96))
        fight = Fight.start(MemoryStore(), "epochs", dice=SeededDice(first, [fresh]), clock=lambda: 0)
        fight.join(sheet("kael", skills={"Climb": ("STR", 2)}))
        fight.join(sheet("vesh", side="raiders"))
        fight.static_check(CheckSpec(who="kael", skill="Climb"), 5)
        before = fight.version
        fight.reveal_seed()
        fight.static_check(CheckSpec(who="kael", skill="Climb"), 5)
        after = fight.version
        assert commitment(fresh) != commitment(first)
        old = explain(fight.events, before, seed=fresh)
        assert [d.seed_confirms for d in old.dice] == [True]
        assert old.seed == ("seeded dice; the seed revealed in the log matches their commitment (the seed given, "
                            "--seed, does NOT match the commitment these dice were drawn under: it checks only the "
                            "dice of the commitment it matches, C42)")
        new = explain(fight.events, after, seed=fresh)
        assert [d.seed_confirms for d in new.dice] == [True]
        assert new.seed == "seeded dice; the seed matches its commitment"
        unknown = explain(fight.events, after)
        assert [d.seed_confirms for d in unknown.dice] == [None]
        assert unknown.seed == "seeded dice, seed not revealed yet: the faces cannot be checked"


    def test_dice_typed_by_hand_in_a_seeded_fight_are_said_beside_the_seeds_word(self) -> None:
        """A seeded fight's check whose face the command carried (manual, as a GM types a physical die): the words
        on the dice say it was not drawn from the seed, beside "the seed matches its commitment" (which covers the
        seeded dice alone: a player disputing a roll read it as covering all, a tester); a seeded check's words
        are the seed's alone."""
        from omen_core import CheckSpec, MemoryStore, SeededDice
        from omen_core.decide import StaticCheck

        seed = bytes(range(32))
        fight = Fight.start(MemoryStore(), "typed", dice=SeededDice(seed), clock=lambda: 0)
        fight.join(sheet("kael", skills={"Climb": ("STR", 2)}))
        fight.join(sheet("vesh", side="raiders"))
        fight.execute(StaticCheck(check=CheckSpec(who="kael", skill="Climb"), difficulty=5, dice=(4,)))
        typed = explain(fight.events, fight.version, seed=seed)
        assert [(d.face, d.source, d.seed_confirms) for d in typed.dice] == [(4, "manual", None)]
        assert typed.seed == ("seeded dice; the seed matches its commitment; the die here was not drawn from the seed "
                              "(1 typed by hand [manual]): the seed does not check it")
        fight.static_check(CheckSpec(who="kael", skill="Climb"), 5)
        drawn = explain(fight.events, fight.version, seed=seed)
        assert [d.source for d in drawn.dice] == ["seeded"]
        assert drawn.seed == "seeded dice; the seed matches its commitment"

    def test_a_face_the_seed_does_not_confirm_is_said_in_a_verdict(self) -> None:
        """docs/explain.md: Kael's Climb check in a seeded fight whose die's face was edited and the chain re-sealed
        (as a careful forger would): the die reads "seed DISAGREES" and a last verdict says the log was changed and
        that its numbers may not be those rolled (the term and the die contradicted each other with nothing said:
        a maintainer tester); the untouched log has no such verdict."""
        from omen_core import CheckSpec, MemoryStore, SeededDice
        from omen_core.events import DiceRolled, seal
        from omen_core.parts import Die

        seed = bytes(range(32))
        fight = Fight.start(MemoryStore(), "forged", dice=SeededDice(seed), clock=lambda: 0)
        fight.join(sheet("kael", skills={"Climb": ("STR", 2)}))
        fight.join(sheet("vesh", side="raiders"))
        fight.static_check(CheckSpec(who="kael", skill="Climb"), 5)
        fight.reveal_seed()
        log = list(fight.events)
        at = next(i for i, r in enumerate(log) if isinstance(r.event, DiceRolled))
        rolled = log[at].event
        assert isinstance(rolled, DiceRolled)
        die = rolled.dice[0]
        edited = msgspec.structs.replace(rolled, dice=(msgspec.structs.replace(
            die, face=die.face % die.sides + 1), *rolled.dice[1:]))
        forged = log[:at]
        prev = forged[-1].hash
        for rec in [msgspec.structs.replace(log[at], event=edited), *log[at + 1:]]:
            forged.append(seal(rec.fight_id, rec.seq, rec.recorded_at, prev, rec.event, rec.batch, rec.batch_size,
                               rec.salt))
            prev = forged[-1].hash
        told = explain(forged, log[at].seq)
        assert [d.seed_confirms for d in told.dice] == [False] and isinstance(die, Die)
        assert told.verdicts[-1] == (f"the log was changed: 1 die is not the seed's face (the roll at seq "
                                     f"{log[at].seq}), so the numbers here may not be those rolled; omen verify says "
                                     "what else differs")
        assert not any("the log was changed" in v for v in explain(log, log[at].seq).verdicts)


class TestTornLog:
    """A log whose last batch a crash cut short: explain says so, and refuses a seq inside the torn batch as replay
    and status refuse the log (exit 2)."""

    @staticmethod
    def torn_demo(tmp_path: Path) -> Path:
        """Ember Ford's log (what omen demo writes) cut after its seq 86: the command starting at seq 82 (Vesh's
        attack) wrote 5 of its 7 events."""
        log = tmp_path / "torn.jsonl"
        log.write_bytes(b"".join(EMBER_FORD.read_bytes().splitlines(keepends=True)[:86]))
        return log

    def test_a_seq_before_the_torn_batch_is_explained_with_a_note(self, tmp_path: Path) -> None:
        """Seq 40 is explained (exit 0) and its last verdict says the log is torn at seq 82 and omen repair removes
        it (it said nothing of the tear)."""
        from typer.testing import CliRunner

        result = CliRunner().invoke(app, ["explain", str(self.torn_demo(tmp_path)), "40", "--json"])
        assert result.exit_code == 0
        assert json.loads(result.stdout)["verdicts"][-1] == (
            "the log is torn at seq 82: torn batch: the command starting at seq 82 wrote 5 of its 7 events (a crash "
            "mid-write; omen repair removes it); this reads only the events before it")

    def test_a_seq_inside_the_torn_batch_is_refused(self, tmp_path: Path) -> None:
        """Seq 82 (the torn command's command_issued) is refused with exit 2 as replay refuses the log (it exited 0
        and said the command wrote seqs 83 to 88, of which 87 and 88 are not in the log)."""
        from typer.testing import CliRunner

        log = self.torn_demo(tmp_path)
        runner = CliRunner()
        result = runner.invoke(app, ["explain", str(log), "82"])
        assert result.exit_code == 2 == runner.invoke(app, ["replay", str(log)]).exit_code
        assert ("torn batch: the command starting at seq 82 wrote 5 of its 7 events (a crash mid-write; omen repair "
                "removes it)") in " ".join(result.output.split())

    def test_a_torn_last_line_is_named(self, tmp_path: Path) -> None:
        """A last line cut off mid-write (seq 87, in the command starting at seq 82) is named in the note, from the
        command it cuts short."""
        from typer.testing import CliRunner

        log = self.torn_demo(tmp_path)
        with log.open("ab") as f:
            f.write(EMBER_FORD.read_bytes().splitlines()[86][:40])
        result = CliRunner().invoke(app, ["explain", str(log), "40", "--json"])
        assert result.exit_code == 0
        assert json.loads(result.stdout)["verdicts"][-1] == (
            "the log is torn at seq 82: torn tail: the last line (40 bytes) was cut off mid-write; earlier events are "
            "intact; the command starting at seq 82 is cut short by it (omen repair removes it); this reads only the "
            "events before it")


class TestConsequencesAndAmbush:
    def test_on_hit_damage_consequence_is_its_own_roll(self) -> None:
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
        label = f"damage (attack {declared(fight)}: a consequence)"   # the action is its declaration's seq
        assert names.index("damage (axe)") < names.index(label)
        consequence = parts[names.index(label)]
        assert [(t.label, t.value) for t in consequence.terms] == [("damage dice", 3)] and consequence.rule == "C25"

    def test_half_damage_on_a_saves_success_says_so(self) -> None:
        """C15, C25: the shipped party fight's Flame Burst (2d6 fire, half on a success): vex saves 6 >= 5, the dice
        9, less 5 (half of 9, rounded down, is 4): that term, labelled as the log records it, is said to come from
        the save's success, not from the consequence's flat damage."""
        lines = (Path(__file__).resolve().parents[2] / "fixtures" / "party-abilities" / "fight.jsonl").read_bytes()
        records = [msgspec.json.decode(line, type=StoredEvent) for line in lines.splitlines()]
        damage = next(p for p in explain(records, 125).parts if p.name == "damage (Flame Burst: a consequence)")
        assert [(t.label, t.value, t.source) for t in damage.terms] == [
            ("damage dice", 9, "the consequence's own fire damage roll"),
            ("half (a save's success)", -5, "the save succeeded: half the damage, rounded down (C15, C25)")]
        assert damage.total == 4

    def test_no_armor_is_not_called_armor_that_does_not_apply(self) -> None:
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

    def test_ambush_difficulty_shows_each_stealth_and_the_table_row(self) -> None:
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

    def test_ambush_difficulty_works_the_average_and_names_the_minutes_band(self) -> None:
        """C17, C30: Stealth totals 7 and 4 (6 + 1, 3 + 1) over 2.5 minutes waited: the average (7 + 4) / 2 = 5.5,
        rounded down to 5, + 3 for 2.5 minutes, which C30 puts in the 1-2 minutes band (from 1 up to, not including,
        3): 8. The two steps a player would dispute are said, not only their results (a rules tester)."""
        fight = new_fight(sheet("vesh", side="raiders", AGI=(6, 1)), sheet("wren", side="raiders", AGI=(6, 1)),
                          sheet("kael"), faces=[6, 3, 6])
        fight.ambush(["vesh", "wren"], ["kael"], time_waited=2.5)
        seq = next(r.seq for r in fight.events if r.event.__class__.__name__ == "AmbushDifficultySet")
        table = next(p for p in explain(fight.events, seq).parts if p.name == "Ambush Difficulty")
        assert [(t.label, t.value, t.source) for t in table.terms] == [
            ("the average Stealth roll, rounded down", 5, "(7 + 4) / 2 = 5.5, rounded down: 5"),
            ("time waited: 1 to 2 minutes", 3,
             "2.5 minutes: 1 to 2 minutes (C30: from 1 up to, not including, 3); C17's table")]
        assert table.total == 8


class TestTheDemoAfterTheUndo:
    def test_the_attack_after_the_gms_undo_explains_correctly(self) -> None:
        """Issue #10 (done when: the demo's attack after the undo explains correctly): Vesh's knife attack on Brin
        declared after the GM's undo names Vesh, Brin and the knife and its own declaration seq, lists exactly its
        own dice (not the undone attack's on Skarn, nor Brin's Interrupt's), takes Brin's RES bonus from Brin's
        sheet, shows a conditions term only for the conditions Brin holds then (C28), and every part adds up to
        the totals the log recorded (C5, C7, C10, C11, C12, C13)."""
        from importlib.resources import files
        from pathlib import Path

        from omen_core import MemoryStore
        from omen_core.events import AttackDeclared, CombatantJoined, DiceRolled, HitDetermined, Undone
        from omen_core.walk import StoreSource, project
        from omen_replay.explain import explain as explain_source
        from omen_replay.scenario import load_scenario, run_scenario

        path = Path(str(files("omen_replay") / "data" / "ember-ford" / "scenario.toml"))
        store = MemoryStore()
        fight = run_scenario(load_scenario(path), store, clock=lambda: 0)
        records = fight.events
        undo = next(r for r in records if isinstance(r.event, Undone))
        undone = undo.as_(Undone)
        undone_attack = next(r.as_(AttackDeclared) for r in records if isinstance(r.event, AttackDeclared)
                             and undone.from_seq <= r.seq <= undone.to_seq)
        assert (undone_attack.attacker, undone_attack.target) == ("vesh", "skarn")   # the GM's slip
        decl = next(r for r in records if r.seq > undo.seq and isinstance(r.event, AttackDeclared)
                    and (r.event.attacker, r.event.target) == ("vesh", "brin"))
        assert decl.as_(AttackDeclared).action == decl.seq and decl.as_(AttackDeclared).weapon == "knife"

        found = explain_source(StoreSource(store, fight.fight_id), decl.seq)
        assert found == explain(records, decl.seq)
        assert (found.kind, found.seq, found.undone) == ("attack", decl.seq, False)
        assert found.title.startswith("vesh attacks brin with knife") and f"declared at seq {decl.seq}" in found.title
        assert "skarn" not in found.title

        own = [r for r in records if isinstance(r.event, DiceRolled) and r.event.action == decl.seq]
        assert own and all(r.seq > undo.seq for r in own)
        assert [(d.seq, d.roller, d.pool, d.face) for d in found.dice] == [
            (r.seq, r.as_(DiceRolled).roller, die.pool, die.face) for r in own for die in r.as_(DiceRolled).dice]

        hit = next(r for r in records if isinstance(r.event, HitDetermined) and r.event.action == decl.seq)
        determined = hit.as_(HitDetermined)
        there = project(records, to_seq=hit.seq - 1)                    # the state the hit was determined in
        brin_sheet = next(r.event.sheet for r in records if isinstance(r.event, CombatantJoined)
                          and r.event.sheet.id == "brin")
        held = there.combatants["brin"].conditions
        penalty = sum(present(there.ruleset).conditions[name].attribute_bonus * stacks for name, stacks in held.items())
        parts = {p.name: p for p in found.parts}
        defense = parts["total defense"]
        assert defense.total == determined.defense.total
        res = [t for t in defense.terms if t.label == "RES bonus"]
        assert [(t.value, t.source) for t in res] == [(brin_sheet.attributes.RES.bonus, "brin's sheet")]
        conditions = [t for t in defense.terms if t.label == "conditions"]
        if held:
            assert [t.value for t in conditions] == [penalty]
            assert all(f"{name} x{stacks}" in conditions[0].source for name, stacks in held.items())
        else:
            assert conditions == []
        assert not any("skarn" in t.source or "kael" in t.source for p in found.parts for t in p.terms)

        assert parts["hit total"].total == determined.attack.total
        assert parts["FCS portion"].total == present(determined.crit_check).fcs_portion
        assert parts["RES portion"].total == present(determined.crit_check).res_portion
        for part in found.parts:
            assert sum(t.value for t in part.terms) == part.total, part.name


class TestDieHistory:
    def test_an_added_and_a_rerolled_die_are_explained_with_their_history(self, tmp_path: Path) -> None:
        """C39: a die an ability added ("Lucky") and a die rerolled (a 1, then 5) are shown with their history, in
        the data and in the text; a die with none is written without either field (no bytes of its own)."""
        from typer.testing import CliRunner

        from omen_core.events import GENESIS_HASH, DiceRolled, Die, seal

        fight = new_fight(sheet("ana", "a", STR=(8, 2)), sheet("bram", "b"), faces=[5, 4, 3])
        fight.attack("ana", "bram")
        records, resealed, prev = list(fight.store.read(fight.fight_id)), [], GENESIS_HASH
        for rec in records:
            event = rec.event
            if isinstance(event, DiceRolled) and event.purpose == "hit":
                primary, fcs = event.dice
                event = msgspec.structs.replace(event, dice=(
                    Die(pool=primary.pool, sides=primary.sides, face=primary.face, rerolled=1),
                    fcs, Die(pool="primary", sides=8, face=2, origin="Lucky")))
            resealed.append(seal(rec.fight_id, rec.seq, rec.recorded_at, prev, event, rec.batch, rec.batch_size,
                                 rec.salt))
            prev = resealed[-1].hash
        hit = next(r.seq for r in resealed if isinstance(r.event, DiceRolled) and r.event.purpose == "hit")
        found = explain(resealed, hit)
        dice = {(d.pool, d.face): d for d in found.dice if d.seq == hit}
        assert (dice["primary", 5].rerolled, dice["primary", 5].origin) == (1, None)
        assert dice["primary", 5].history() == "rerolled: 1, then 5"
        assert (dice["primary", 2].origin, dice["primary", 2].history()) == ("Lucky", "added by Lucky")
        assert dice["fcs", 4].history() == "" and b"origin" not in msgspec.json.encode(records[0].event)
        assert b'"rerolled":1' in encode_line(next(r for r in resealed if r.seq == hit))
        assert b"rerolled" not in encode_line(next(r for r in records if r.seq == hit))
        log = tmp_path / "lucky.jsonl"
        log.write_bytes(b"".join(encode_line(r) + b"\n" for r in resealed))
        text = CliRunner().invoke(app, ["explain", str(log), str(hit)]).output
        assert "primary d8 = 5 (rerolled: 1, then 5)" in text and "primary d8 = 2 (added by Lucky)" in text


def test_an_ability_used_on_ones_turn_is_explained_from_any_of_its_events() -> None:
    """C37: asked about any event of Healing Word's action, explain names the action, what it cost, its die,
    the healing as its terms (the d6's 3 and the flat 1 = 4: it showed the die alone, and no total) and what it
    did (Bram, hit for 6 first: 14 HP; d6 = 3 + 1 heals him to 18, all 4 restored to him)."""
    import msgspec

    from omen_core.commands import UseAbility
    from omen_core.events import AbilityUsed
    from omen_replay.explain import explain_records
    from tests.fights import new_fight
    from tests.sheets import sheet

    ana = msgspec.structs.replace(sheet("ana"), abilities=("healing_word",))
    fight = new_fight(sheet("orc", side="raiders"), ana, sheet("bram"), faces=[6, 6, 1, 3])
    fight.attack("orc", "bram", unarmed=True)
    fight.defend("bram", None)
    fight.execute(UseAbility(who="ana", ability="healing_word", target="bram"))
    used = next(r for r in fight.events if isinstance(r.event, AbilityUsed))
    for seq in range(used.seq, fight.version + 1):
        told = explain_records(fight.events, seq)
        assert told.kind == "ability" and told.seq == used.seq and "Healing Word on bram" in told.title
        assert told.verdicts == ("ana pays 1 Bonus Action for Healing Word (C20, C37)", "bram's HP 14 -> 18",
                                 "Healing Word's healing (4) restores 4 HP to bram")
        assert [(d.purpose, d.face) for d in told.dice] == [("healing", 3)]
        assert [(p.name, p.total, [(t.label, t.value) for t in p.terms]) for p in told.parts] == [
            ("Healing Word's healing", 4, [("heal 1d6", 3), ("flat", 1)])]


def test_a_heal_on_one_at_full_hp_says_it_restores_nothing() -> None:
    """C37: Healing Word on Bram at his full 20 HP (d6 = 3): no HP changes, and explain says the healing (3 + 1
    flat = 4, as its part says) restores 0 HP, naming Bram, at his sheet's HP (it said "the healing rolled (3)
    restores no HP" beside a part of 4, then "the one it heals")."""
    import msgspec

    from omen_core.commands import UseAbility
    from omen_replay.explain import explain_records
    from tests.fights import new_fight
    from tests.sheets import sheet

    ana = msgspec.structs.replace(sheet("ana"), abilities=("healing_word",))
    fight = new_fight(sheet("orc", side="raiders"), ana, sheet("bram"), faces=[3])
    fight.execute(UseAbility(who="ana", ability="healing_word", target="bram"))
    told = explain_records(fight.events, fight.version)
    assert told.verdicts == ("ana pays 1 Bonus Action for Healing Word (C20, C37)",
                             "Healing Word's healing (4) restores 0 HP: bram is at its sheet's HP already "
                             "(healing never goes above it)")
    assert [(p.name, p.total) for p in told.parts] == [("Healing Word's healing", 4)]


def test_explain_names_the_ability_that_allowed_a_defense_the_table_refuses() -> None:
    """C37, §Which Defenses Apply: a Parry against a ranged attack is refused by the table; with Deflecting Stance
    the archer's shot (6 + 6 = 12 against Ana's 1) is parried, and explain says which ability allowed it."""
    import msgspec

    from omen_core.content import Weapon
    from omen_core.events import AttackDeclared
    from omen_replay.explain import explain_records
    from tests.fights import new_fight
    from tests.sheets import sheet

    bow = Weapon(id="bow", weapon_damage=1, properties=frozenset({"ranged"}))
    sword = Weapon(id="sword", weapon_damage=2, parry_rating=1)
    archer = msgspec.structs.replace(sheet("archer", side="raiders"), weapons=(bow,))
    ana = msgspec.structs.replace(sheet("ana"), weapons=(sword,), abilities=("deflecting_stance",))
    fight = new_fight(archer, ana, faces=[6, 6, 1, 6])
    fight.attack("archer", "ana")
    fight.defend("ana", "parry")
    seq = next(r.seq for r in fight.events if isinstance(r.event, AttackDeclared))
    told = explain_records(fight.events, seq)
    assert ("ana's parry against a ranged attack, which §Which Defenses Apply refuses, is allowed by Deflecting "
            "Stance (an eligibility override, C37)") in told.verdicts


def test_a_moment_of_the_round_is_explained_with_its_answers() -> None:
    """C38: asked about the start of Ana's turn that Regeneration answered (initiative 6 against 1; 1 Will; the
    d4's 3 heals her from 15 to 18 after the orc's unarmed 5), explain names the moment, the answer (by its id and
    the title it was asked under), the cost, the die and the healing."""
    from omen_core.events import MomentReached
    from tests.test_abilities import having

    fight = new_fight(having(sheet("ana"), "regeneration"), sheet("orc", side="raiders"), faces=[5, 1, 2, 6, 1, 3])
    fight.attack("orc", "ana", unarmed=True)
    fight.defend("ana", None)
    fight.roll_initiative()
    fight.answer_decision("regeneration", "ana", "use")
    reached = next(r for r in fight.events if isinstance(r.event, MomentReached))
    told = explain(fight.events, reached.seq)
    assert told.kind == "ability" and "the start of ana's turn, a moment abilities answer (C38)" in told.title
    assert told.verdicts == ("ana answers regeneration: use (Regeneration, C37)",
                             "ana pays 1 Will for Regeneration (use) (C37)", "ana's HP 15 -> 18",
                             "Regeneration's healing (3) restores 3 HP to ana")
    assert [(d.purpose, d.face) for d in told.dice] == [("healing", 3)]
    assert [(p.name, p.total, [(t.label, t.value) for t in p.terms]) for p in told.parts] == [
        ("Regeneration's healing", 3, [("heal 1d4", 3)])]


def test_an_abilitys_damage_before_the_weapons_is_told_as_its_own() -> None:
    """C12, C25, C38: Crit Burst (a trigger at attack.determined on a crit, 1d6 fire) deals its damage before the
    weapon's: Pia's unarmed 5 + FCS 6 + 2 = 13 against Zed's 1 hits, FCS portion 8 against RES 1 is a crit; the
    burst's d6 4 is told as the burst's own roll, and the blow's damage as the hit roll's primary dice (5), not
    the other way round (explain took the first damage of a hit for the weapon's)."""
    import msgspec

    from omen_core.content import Ability, decode_content
    from omen_replay.explain import explain_records
    from tests.fights import new_fight
    from tests.sheets import sheet

    burst = decode_content('id = "burst"\nname = "Crit Burst"\nuse = "trigger"\ntrigger = { moment = '
                           '"attack.determined", owner = "attacker", outcome = "crit" }\neffects = [{ kind = '
                           '"damage", to = "target", dice = { count = 1, die = "d6" }, damage_type = "fire" }]\n',
                           Ability, fmt="toml")
    pia = msgspec.structs.replace(sheet("pia", STR=(8, 2), FCS=(6, 2)), abilities=(burst,))
    fight = new_fight(pia, sheet("zed", side="raiders"), faces=[5, 6, 1, 4])
    fight.attack("pia", "zed", unarmed=True)
    fight.defend("zed", None)
    fight.answer_decision("burst", "pia", "use")
    told = explain_records(fight.events, declared(fight))
    names = [p.name for p in told.parts]
    assert names[4:] == ["damage (Crit Burst: a consequence)", "after mitigation", "damage (unarmed)",
                         "after mitigation"], names
    burst_part, blow = told.parts[4], told.parts[6]
    assert (burst_part.terms[0].label, burst_part.terms[0].value) == ("damage dice", 4)
    assert (blow.terms[0].label, blow.terms[0].value) == ("primary dice result", 5)



def test_an_attack_an_interrupt_cancelled_tells_the_window_the_answer_and_the_cancellation() -> None:
    """C24: Oren's attack at seq 31 of the interrupt fixture is answered by Tamsin's Interrupt (its own action,
    at seq 34), which hits: the explanation of seq 31 says the window, who answered and where, and that the attack
    is cancelled with what it paid still paid (it said only its dice, found by a tester); C23: Dain's move tells
    Hask's Attack of Opportunity the same way, and not the Movement Action its title says it spent, and why Grub,
    whose reach it also leaves, got no window: his first turn has not come (C20)."""
    from omen_core.events import decode_line

    root = Path(__file__).resolve().parents[2] / "fixtures"
    records = [decode_line(line) for line in (root / "interrupt-cancels-declared-action" / "fight.jsonl"
                                               ).read_bytes().splitlines()]
    told = explain(records, 31)
    assert told.verdicts == (
        "an Interrupt window for tamsin (C24)",
        "tamsin answers with an Interrupt on oren, the action declared at seq 34 (explain it there)",
        "CANCELLED: an Interrupt hit (C24); what it paid stays paid (C24)")
    moved = [decode_line(line) for line in (root / "attack-of-opportunity-and-disengage" / "fight.jsonl"
                                             ).read_bytes().splitlines()]
    assert explain(moved, 34).verdicts == (
        "an Attack of Opportunity window for hask (C23)",
        "hask answers with an Attack of Opportunity on dain, the action declared at seq 38 (explain it there)",
        "no Attack of Opportunity window for grub (derived from the state before seq 34; the log records no skipped "
        "window): grub's first turn has not come yet: its Bonus Actions are for defence only until then (C20), and "
        "an Attack of Opportunity is an attack")


#: Bram's Sacrifice (an Action and 1 Will: an ally heals 2d4; 2 necrotic damage to Bram at the start of his next
#: turn, C41), an ability library for :func:`cancelled_sacrifice` (a tester's, Mira's).
SACRIFICE = """
[abilities.sacrifice]
name = "Sacrifice"
summary = "An Action and 1 Will, once per fight: an ally regains 2d4 HP; you lose 2 HP at the start of your next turn."
use = "action"
target = "ally"
cost = { will = 1 }
uses = { count = 1, per = "fight" }
effects = [{ kind = "heal", to = "target", dice = { count = 2, die = "d4" } }]

[abilities.sacrifice.deferred]
at = "start_of_next_turn"
effects = [{ kind = "damage", to = "actor", flat = 2, damage_type = "necrotic" }]
"""

#: Bram uses Sacrifice on Ana in round 2; the Orc beside him Interrupts (C24) and hits (8 + 6 + 1 vs 1).
CANCELLED_SACRIFICE = """
[fight]
id = "sacrifice"
dice = "scripted"
abilities = ["lib.toml"]

[[combatants]]
id = "ana"
name = "Ana"
side = "north"
hp = 20
weapons = [{ id = "sword", weapon_damage = 3 }]

[combatants.attributes]
STR = { die = "d8", bonus = 2 }
AGI = { die = "d6" }
INT = { die = "d4" }
RES = { die = "d6", bonus = 1 }
FCS = { die = "d6" }

[[combatants]]
id = "bram"
name = "Bram"
side = "north"
hp = 30
will = 5
abilities = ["sacrifice"]

[combatants.attributes]
STR = { die = "d6" }
AGI = { die = "d6" }
INT = { die = "d6", bonus = 1 }
RES = { die = "d6" }
FCS = { die = "d6" }

[[combatants]]
id = "orc"
name = "Orc"
side = "south"
hp = 30
weapons = [{ id = "axe", weapon_damage = 4 }]

[combatants.attributes]
STR = { die = "d8", bonus = 1 }
AGI = { die = "d6" }
INT = { die = "d4" }
RES = { die = "d6" }
FCS = { die = "d6" }

[[commands]]
command = "engage"
who = "bram"
others = ["ana", "orc"]

[[commands]]
command = "roll_initiative"
dice = [2, 6, 1]

[[commands]]
command = "end_turn"
who = "bram"

[[commands]]
command = "end_turn"
who = "ana"

[[commands]]
command = "end_turn"
who = "orc"

[[commands]]
command = "use_ability"
who = "bram"
ability = "sacrifice"
target = "ana"
"""


def cancelled_sacrifice(tmp_path: Path, *, interrupt: bool = True) -> Fight:
    """Mira's fight: Bram's Sacrifice declared with its Interrupt window open; with ``interrupt``, the Orc's
    Interrupt hits (8 + 6 + 1 vs 1) and Bram declines the Active Defense: the use is cancelled (C24)."""
    from omen_core import MemoryStore
    from omen_replay.scenario import load_scenario, run_scenario

    (tmp_path / "lib.toml").write_text(SACRIFICE)
    (tmp_path / "fight.toml").write_text(CANCELLED_SACRIFICE)
    fight = run_scenario(load_scenario(tmp_path / "fight.toml"), MemoryStore(), clock=lambda: 0)
    if interrupt:
        fight.react("orc", weapon="axe", dice=(8, 6, 1))
        fight.defend("bram", None)
    return fight


def test_a_cancelled_uses_deferred_cost_is_said_dropped(tmp_path: Path) -> None:
    """C24, C41: Bram's Sacrifice, cancelled by the Orc's Interrupt, records its deferred cost (2 necrotic damage at
    the start of his next turn) and drops it with the cancel: the explanation says both (it said only that the
    cost was recorded, then that what it paid stays paid, as if the 2 damage were still to come)."""
    from omen_core.events import AbilityUsed

    fight = cancelled_sacrifice(tmp_path)
    used = next(r.seq for r in fight.events if isinstance(r.event, AbilityUsed))
    assert fight.state.deferred == ()
    told = explain(fight.events, used)
    assert told.verdicts[0] == ("bram uses Sacrifice: its deferred cost is recorded, to settle later: 2 necrotic "
                                "damage at the start of bram's next turn (C41)")
    assert told.verdicts[-1] == ("CANCELLED: an Interrupt hit (C24); what it paid stays paid (C24); its deferred cost "
                                 "is dropped with it, never to settle: 2 necrotic damage at the start of bram's next "
                                 "turn (C41)")


def test_an_abilitys_attack_is_explained_at_every_seq_of_the_attack_it_answers() -> None:
    """C38 (docs/abilities.md, the ``attack`` effect): the orc's unarmed 1 + 1 = 2 misses Ana's 6, and Ana's
    Counter Strike strikes back (5 + 1 = 6 against 2: 5 crushing, 20 -> 15). Every seq of the fight explains (it
    raised KeyError: 'ability', found by a tester); the orc's attack says who answered and where, the riposte says
    the attack it answers."""
    fight = new_fight(msgspec.structs.replace(sheet("ana"), abilities=("counter_strike",)),
                      sheet("orc", side="raiders"), faces=[1, 1, 6, 5, 1, 2])
    fight.attack("orc", "ana", unarmed=True)
    fight.answer_decision("counter_strike", "ana", "use")
    fight.defend("orc", None)
    first, riposte = [r.seq for r in fight.events if isinstance(r.event, AttackDeclared)]
    for seq in range(1, fight.version + 1):
        assert explain(fight.events, seq).seq in (seq, first, riposte)
    assert (f"ana answers with an ability's attack on orc, the action declared at seq {riposte} (explain it there)"
            in explain(fight.events, first).verdicts)
    told = explain(fight.events, riposte)
    assert told.title.endswith(f", an ability's attack answering the action at seq {first} (C38)")
    assert told.verdicts == (
        f"ana answers the action declared at seq {first} with an ability's attack on orc (C38; explain that action "
        "there)",
        "an Active Defense window for orc (C8): may dodge or decline", "orc declines the Active Defense (C8)",
        "HIT: 6 > 2 (§Hit Determination)",
        "crit: FCS portion 1 vs RES portion 2: no crit (C7: strictly more; ties are no crit)",
        "5 crushing damage to orc's HP", "orc: HP 20 -> 15"), told.verdicts


def test_an_interrupt_explained_at_its_own_seq_points_at_the_action_it_answers() -> None:
    """C24: Tamsin's Interrupt (seq 34 of the interrupt fixture) answers Oren's attack at seq 31: explained itself,
    it points there (it said "the action declared at seq 34 (explain it there)", its own seq, found by a tester)."""
    from omen_core.events import decode_line

    root = Path(__file__).resolve().parents[2] / "fixtures"
    records = [decode_line(line) for line in (root / "interrupt-cancels-declared-action" / "fight.jsonl"
                                               ).read_bytes().splitlines()]
    told = explain(records, 34)
    assert told.title.endswith(", an Interrupt answering the action at seq 31 (C24)")
    said = [v for v in told.verdicts if "answers" in v]
    assert said == ["tamsin answers the action declared at seq 31 with an Interrupt on oren (C24; explain that "
                    "action there)"]


def test_a_conditions_term_names_only_the_conditions_that_change_the_bonus() -> None:
    """C28: Ash, Fatigued (-1 to every attribute bonus) and Prone (no attribute bonus), climbs: 5 (die) + 1 STR
    - 1 conditions + 2 Climb level = 7; the conditions term names Fatigued x1 alone (it named Prone too)."""
    from omen_core import CheckSpec

    fight = new_fight(sheet("ash", skills={"Climb": ("STR", 2)}, STR=(8, 1)), faces=[5])
    fight.apply_condition("ash", "Fatigued")
    fight.apply_condition("ash", "Prone")
    fight.static_check(CheckSpec(who="ash", skill="Climb"), 8)
    found = explain(fight.events, fight.events[-1].seq)
    assert found.parts[0].total == 7
    assert [(t.value, t.source) for t in found.parts[0].terms if t.value == -1] == [(-1, "Fatigued x1 (C28)")]


def test_the_die_of_a_check_or_save_no_action_owns_explains_the_result_it_feeds() -> None:
    """Any seq of a roll explains it (README): the die of Ash's Climb check (seq of its dice_rolled) explains the
    check itself, 5 (die) + 1 STR + 2 Climb level = 8 against 8, as the check's own seq does."""
    from omen_core import CheckSpec

    fight = new_fight(sheet("ash", skills={"Climb": ("STR", 2)}, STR=(8, 1)), faces=[5])
    fight.static_check(CheckSpec(who="ash", skill="Climb"), 8)
    die, resolved = fight.events[-2], fight.events[-1]
    assert die.event.__class__.__name__ == "DiceRolled"
    assert explain(fight.events, die.seq) == explain(fight.events, resolved.seq)
    assert explain(fight.events, die.seq).parts[0].total == 8


@pytest.mark.parametrize(("face", "said"), [
    (6, "Alert against difficulty 10 (C18): 11 is above 10 (Partial Surprise in 6 to 10; Complete Surprise at 5 "
        "or less)"),
    (1, "Partial Surprise against difficulty 10 (C18): 6 is in 6 to 10 (Alert above 10; Complete Surprise at 5 or "
        "less)"),
])
def test_a_surprise_verdict_says_the_bands_of_its_difficulty(face: int, said: str) -> None:
    """C18 at the GM's preset difficulty 10: Bo's Perception, d6 + 3 FCS + 2 Perception level, is 11 (Alert: above
    10) or 6 (Partial Surprise: 6 to 10, since Complete Surprise is 5 or less); the verdict says the bands (it said
    "partial against difficulty 10")."""
    fight = new_fight(sheet("ash"), sheet("bo", side="foes", skills={"Perception": ("FCS", 2)}, FCS=(8, 3)),
                      faces=[face])
    fight.ambush(ambushers=("ash",), defenders=("bo",), difficulty=10)
    seq = _seq_of(fight, SurpriseDetermined)
    assert explain(fight.events, seq).verdicts[-1] == said


def test_the_incoming_damage_step_shows_its_exact_arithmetic() -> None:
    """C13 step 5, C34: Bo takes damage x 5/4, then -1, rounded down once. The brute fight's 18 after armor
    becomes 18 x 5/4 - 1 = 43/2 (21.5), rounded down: 21; the step says so, not only "+3 incoming"."""
    from omen_core.content import IncomingDamage

    ash = msgspec.structs.replace(sheet("ash", STR=(8, 3), FCS=(6, 2)), weapons=(Weapon(id="axe", weapon_damage=4),),
                                  features=Features(rage=RageDice(die="d6")))
    bo = msgspec.structs.replace(sheet("bo", side="b", RES=(6, 1), AGI=(6, 1)), armor=Armor(rating=2), hp=30,
                                 incoming_damage=IncomingDamage(multiply="5/4", add=-1))
    fight = new_fight(ash, bo, faces=[7, 6, 2, 3, 5])
    fight.apply_condition("ash", "Exhausted")
    fight.attack("ash", "bo", rage=True, high_ground=True)
    fight.defend("bo", "dodge")
    after = next(p for p in explain(fight.events, declared(fight)).parts if p.name == "after mitigation")
    assert after.total == 21
    assert [(t.value, t.source) for t in after.terms if t.label == "incoming"] == [
        (3, "18 x 5/4 - 1 = 43/2 (21.5), rounded down once, floor 0: after: 21 (C13, C34)")]


def test_a_modifier_named_after_a_condition_says_it_is_one() -> None:
    """C28: Ana Exposed x2 (-1 defense per stack) and the orc Shaken (-1 hit): explain's terms say each is a
    condition's (the defense's read "an ability's", the hit's "situational")."""
    from tests.decide.test_conditions import named_fight

    fight = named_fight([5, 1, 4])  # the hit 5 + 1 - 1 = 5 against 4 - 2 = 2
    fight.apply_condition("ana", "Exposed", 2)
    fight.apply_condition("orc", "Shaken")
    fight.attack("orc", "ana", unarmed=True)
    fight.defend("ana", None)
    parts = {p.name: p for p in explain(fight.events, declared(fight)).parts}
    assert [(t.label, t.source) for t in parts["total defense"].terms if t.label == "Exposed x2"] == [
        ("Exposed x2", "a condition (C28), part of the Defense Rating (C11)")]
    assert [(t.label, t.source) for t in parts["hit total"].terms if t.label == "Shaken"] == [
        ("Shaken", "a condition (C28)")]


def test_a_heal_of_a_flat_amount_is_explained_as_its_term() -> None:
    """C37, C38: Hard Lesson (written in tests/test_abilities.py: heal 2, no dice) answers Ana's failed Perception
    check after the orc's unarmed 5 (20 -> 15): explain of the moment shows the healing as its one term, the flat 2,
    and her HP 15 -> 17 (a heal rolling no dice was matched to nothing)."""
    from omen_core.commands import CheckSpec
    from omen_core.events import MomentReached
    from tests.test_abilities import HARD_LESSON, having

    fight = new_fight(having(sheet("ana"), HARD_LESSON), sheet("orc", side="raiders"), faces=[5, 1, 2, 3])
    fight.attack("orc", "ana", unarmed=True)
    fight.defend("ana", None)
    fight.static_check(CheckSpec(who="ana", skill="Perception"), difficulty=3)
    fight.answer_decision("hard_lesson", "ana", "use")
    reached = next(r for r in fight.events if isinstance(r.event, MomentReached))
    told = explain(fight.events, reached.seq)
    assert [(p.name, p.total, [(t.label, t.value, t.origin) for t in p.terms]) for p in told.parts] == [
        ("Hard Lesson's healing", 2, [("flat", 2, "ability:Hard Lesson")])]
    assert "ana's HP 15 -> 17" in told.verdicts


def _ash_and_bo(faces: list[int], *, bo_agi: tuple[int, int] = (8, 2),
                hatchet: frozenset[WeaponProperty] = frozenset({"thrown", "ranged"})) -> Fight:
    """Ash (STR d8 +2, AGI d6 +1, FCS d6 +1) with an Axe (WD 4, +1 to hit), a thrown Hatchet (WD 2) and a Bow (WD
    3); Bo (AGI d8 +2 unless ``bo_agi`` says, RES d6 +1, armor 1, a shield): the tester's scenarios (t38, t45, t33,
    t20, t25), rolling ``faces`` in C29 order."""
    axe = Weapon(id="axe", name="Axe", weapon_damage=4, hit_bonus=1)
    axe_hatchet = Weapon(id="hatchet", name="Hatchet", weapon_damage=2, properties=hatchet)
    bow = Weapon(id="bow", name="Bow", weapon_damage=3, damage_type="piercing", properties=frozenset({"ranged"}))
    ash = msgspec.structs.replace(sheet("ash", "north", STR=(8, 2), AGI=(6, 1), RES=(6, 1), FCS=(6, 1)),
                                  weapons=(axe, axe_hatchet, bow), wielding=("axe", "hatchet", "bow"))
    bo = msgspec.structs.replace(sheet("bo", "south", AGI=bo_agi, RES=(6, 1)),
                                 armor=Armor(rating=1), shield=Shield(id="shield", block_rating=2))
    return new_fight(ash, bo, faces=faces)


def _bo_disengaged_from_ash(faces: list[int], hatchet: frozenset[WeaponProperty] = frozenset({"thrown", "ranged"})
                            ) -> Fight:
    """Ash and Bo engaged; Ash's turn passes; Bo Disengages (a Bonus Action), leaves Ash's reach and ends his turn
    (C23), rolling ``faces`` in C29 order."""
    fight = _ash_and_bo(faces, hatchet=hatchet)
    fight.engage("ash", "bo")
    fight.roll_initiative()
    fight.end_turn("ash")
    fight.disengage("bo")
    fight.move("bo", leaves=["ash"])
    fight.end_turn("bo")
    return fight


def _hatchet_on_bo_at_his_last_bonus_action(hatchet: frozenset[WeaponProperty]) -> Fight:
    """Bo spends one Bonus Action on a Disengage (leaving Ash's reach) and his last on a Dodge against Ash's Hatchet
    (``hatchet``: its properties), thrown from afar or, marked thrown alone, struck in hand once Ash closes in again
    (C22, C23)."""
    fight = _bo_disengaged_from_ash([6, 1, 4, 2, 1, 1], hatchet)
    if "ranged" not in hatchet:
        fight.engage("ash", "bo")
    fight.attack("ash", "bo", weapon="hatchet")
    fight.defend("bo", "dodge")
    return fight


class TestWhatTheAttackAnswered:
    def test_a_caught_attack_says_the_catch_and_labels_each_cost(self) -> None:
        """C22 (t38): the Hatchet [4, 2] = 8 beats Bo's 1 + 1 + 1 + Dodge (1 + 2) = 6, a crit (FCS 3 vs RES 2); Bo
        catches it: the explanation says the Catch window, the catch and why no damage follows, and what each of Bo's
        two Bonus Actions paid for (it ended at the crit with two unlabelled costs, found by a tester)."""
        fight = _ash_and_bo([6, 1, 4, 2, 1, 1])
        fight.roll_initiative()
        fight.attack("ash", "bo", weapon="hatchet")
        fight.defend("bo", "dodge")
        fight.catch("bo")
        told = explain(fight.events, declared(fight))
        assert told.verdicts == (  # in the order of the events (the hit after the defense that led to it)
            "an Active Defense window for bo (C8): may dodge or decline",
            "bo pays 1 Bonus Action for the Active Defense (dodge) (C8, C22)",
            "HIT: 8 > 6 (§Hit Determination)",
            "crit: FCS portion 3 vs RES portion 2: CRITICAL (C7: strictly more; ties are no crit)",
            "a Catch window for bo: the thrown Hatchet about to hit may be caught (C22)",
            "bo catches the Hatchet: no damage and no on-hit effects (C22)",
            "bo pays 1 Bonus Action for the Catch (C22)")
        assert explain(fight.events, fight.version) == told  # the action's last event explains it whole too

    def test_a_dodge_shows_no_rating_term(self) -> None:
        """§Active Defense: a Dodge is AGI die + AGI bonus; its 0 "dodge rating" (said to be a Parry or Block Rating)
        is no term of it (found by a tester). The defense is still 1 + 1 + 1 + 1 + 2 = 6."""
        fight = _ash_and_bo([6, 1, 4, 2, 1, 1])
        fight.roll_initiative()
        fight.attack("ash", "bo", weapon="hatchet")
        fight.defend("bo", "dodge")
        defense = next(p for p in explain(fight.events, declared(fight)).parts if p.name == "total defense")
        assert [(t.label, t.value) for t in defense.terms] == [
            ("RES die", 1), ("RES bonus", 1), ("armor", 1), ("dodge die (AGI)", 1), ("dodge: AGI bonus", 2)]
        assert defense.total == 6

    def test_no_catch_window_says_why_derived_from_the_state(self) -> None:
        """C22 (t45): Bo spends one Bonus Action on a Disengage and his last on a Dodge; the Hatchet hits (8 > 6), and
        the log records no Catch window: the explanation derives why (no Bonus Action left) and says it derived it."""
        fight = _hatchet_on_bo_at_his_last_bonus_action(frozenset({"thrown", "ranged"}))
        attack = [r for r in fight.events if isinstance(r.event, AttackDeclared)][-1].seq
        told = explain(fight.events, attack)
        damage = next(r.seq for r in fight.events if isinstance(r.event, DamageResolved))
        assert told.verdicts[4] == (f"no Catch window for bo (derived from the state before seq {damage}; the log "
                                    "records no skipped window): bo has no Bonus Action left, and a Catch costs 1 "
                                    "Bonus Action (C22)")
        assert told.verdicts[0] == "an Active Defense window for bo (C8): may dodge or decline"
        assert told.verdicts[2] == "HIT: 8 > 6 (§Hit Determination)"
        assert told.verdicts[5] == "9 slashing damage to bo's HP"  # 4 + 2 + 2 crit + 2 WD = 10, - 1 armor

    def test_a_weapon_marked_thrown_in_a_melee_attack_opens_no_catch_to_explain(self) -> None:
        """C22 and docs/rulings.md "A weapon is thrown only in a ranged attack": a Hatchet marked only ``thrown``
        strikes in hand in a melee attack; when it hits Bo, who has no Bonus Action left, the explanation does not
        say why no Catch window opened (there was nothing in flight to catch)."""
        fight = _hatchet_on_bo_at_his_last_bonus_action(frozenset({"thrown"}))
        told = explain(fight.events, [r for r in fight.events if isinstance(r.event, AttackDeclared)][-1].seq)
        assert told.verdicts[3] == "HIT: 8 > 6 (§Hit Determination)" and told.verdicts[5:] == (
            "9 slashing damage to bo's HP", "bo: HP 20 -> 11")  # nothing about a Catch between the hit and damage
        # (in melee, Bo within reach with 1 Bonus Action: no Interrupt, said first, C24)
        assert told.verdicts[0].startswith("no Interrupt window for bo (derived from the state before seq ")
        assert told.verdicts[0].endswith("bo has 1 Bonus Action left, and an Interrupt costs 2 Bonus Actions (C22)")

    def test_a_skipped_active_defense_says_its_recorded_reason(self) -> None:
        """C8, C27 (t33): a Bow shot at the prone Bo allows no Active Defense; the explanation says the reason the
        engine recorded with the skipped window (only the narration said it, found by a tester)."""
        fight = _ash_and_bo([6, 1, 4, 2, 1])
        fight.apply_condition("bo", "Prone")
        fight.roll_initiative()
        fight.attack("ash", "bo", weapon="bow")
        told = explain(fight.events, declared(fight))
        assert ("no Active Defense window for bo (C8): no Active Defense is allowed: a prone defender cannot Dodge "
                "(C9, C27); ranged attacks cannot be Parried (§Which Defenses Apply); a ranged attack can be Blocked "
                "only with Veteran Shield Training (§Which Defenses Apply)") in told.verdicts


class TestNoAttackOfOpportunity:
    def test_no_bonus_action_left(self) -> None:
        """C22, C23 (t20 #38): Ash spent both Bonus Actions on an Interrupt that hit Bo's attack; Bo then moves out of
        his reach and no window opens: the move's explanation derives why, and says it derived it."""
        fight = _ash_and_bo([6, 1, 5, 3, 2, 1])
        fight.engage("ash", "bo")
        fight.roll_initiative()
        fight.end_turn("ash")
        fight.attack("bo", "ash", unarmed=True)
        fight.react("ash", weapon="axe")
        fight.defend("bo", "dodge")
        fight.move("bo", leaves=["ash"])
        moved = next(r.seq for r in fight.events if isinstance(r.event, MovementDeclared))
        assert explain(fight.events, moved).verdicts == (
            f"no Attack of Opportunity window for ash (derived from the state before seq {moved}; the log records "
            "no skipped window): ash has no Bonus Action left, and an Attack of Opportunity costs 1 Bonus Action "
            "(C22)",)

    def test_disengaged_and_no_reach_left(self) -> None:
        """C23: a Disengage earlier in the turn suppresses the window; a move that leaves no one's reach opens none."""
        fight = _bo_disengaged_from_ash([6, 1])
        fight.move("ash")
        first, second = [r.seq for r in fight.events if isinstance(r.event, MovementDeclared)]
        assert explain(fight.events, first).verdicts == (
            f"no Attack of Opportunity window for ash (derived from the state before seq {first}; the log records "
            "no skipped window): bo Disengaged earlier this turn, which suppresses these windows (C23)",)
        assert explain(fight.events, second).verdicts == (
            "no Attack of Opportunity window: ash leaves no one's reach (C23)",)


class TestInitiativeOrder:
    def test_a_tie_settled_by_the_agi_bonus(self) -> None:
        """C19 (t25): Ash 6 + 1 = 7, Bo 5 + 2 = 7: Bo goes first on his higher AGI bonus; explaining the order says
        each total, the tie and how it was settled (it listed nothing, found by a tester)."""
        fight = _ash_and_bo([6, 5])
        fight.roll_initiative()
        order = next(r.seq for r in fight.events if isinstance(r.event, InitiativeOrderSet))
        told = explain(fight.events, order)
        assert [(p.name, p.total) for p in told.parts] == [("ash's initiative", 7), ("bo's initiative", 7)]
        assert [(d.roller, d.face) for d in told.dice] == [("ash", 6), ("bo", 5)]
        assert told.verdicts == (
            "ash and bo tie at 7: the higher AGI bonus goes first (C19; the bonus after conditions, C28): ash +1, "
            "bo +2: bo before ash",
            "initiative order: bo, ash (C19: the highest total first)")

    def test_the_agi_bonus_compared_is_the_one_after_conditions(self) -> None:
        """C19, C28 (t77): Bo is Exhausted x2, so his AGI bonus is 2 - 2 = 0: Ash 6 + 1 = 7, Bo 7 + 0 = 7, and Ash
        (+1) goes first."""
        fight = _ash_and_bo([6, 7])
        fight.apply_condition("bo", "Exhausted", stacks=2)
        fight.roll_initiative()
        order = next(r.seq for r in fight.events if isinstance(r.event, InitiativeOrderSet))
        assert explain(fight.events, order).verdicts == (
            "ash and bo tie at 7: the higher AGI bonus goes first (C19; the bonus after conditions, C28): ash +1, "
            "bo +0 (sheet +2, Exhausted x2 -2, C28): ash before bo",
            "initiative order: ash, bo (C19: the highest total first)")

    def test_a_tie_the_agi_bonus_leaves_is_rolled_off(self) -> None:
        """C19, C32: Ash and Bo both AGI +1 roll 4 + 1 = 5 each; the AGI bonus leaves them tied, they roll off (3 + 1
        = 4 against 2 + 1 = 3) and Ash goes first; the undone first roll (6 and 1) is left out of the order's
        explanation."""
        fight = _ash_and_bo([6, 1, 4, 4, 3, 2], bo_agi=(6, 1))
        fight.roll_initiative()
        fight.undo(reason="rolled the wrong dice")
        fight.roll_initiative()
        order = next(r.seq for r in reversed(fight.events) if isinstance(r.event, InitiativeOrderSet))
        told = explain(fight.events, order)
        assert [(p.name, p.total) for p in told.parts] == [
            ("ash's initiative", 5), ("bo's initiative", 5), ("ash's roll-off", 4), ("bo's roll-off", 3)]
        assert told.verdicts == (
            "ash and bo tie at 5: the higher AGI bonus goes first (C19; the bonus after conditions, C28): ash +1, "
            "bo +1: the same, so the tie stands",
            "ash and bo still tie: they roll off, an AGI check each, until the tie breaks (C19, C32)",
            "roll-off between ash and bo: ash 4, bo 3: ash first (C19, C32)",
            "initiative order: ash, bo (C19: the highest total first)")

    def test_a_roll_off_explained_itself_says_who_goes_first_or_that_they_roll_again(self) -> None:
        """C19, C32: Ash and Bo (AGI +1 each) roll 5 each, roll off 3 + 1 against 3 + 1 (a tie again), then 4 + 1
        against 2 + 1: each roll-off, explained at its own seq, says its outcome (it listed the two totals alone: a
        rules tester had to find the order's seq to learn that they rolled again)."""
        fight = _ash_and_bo([4, 4, 3, 3, 4, 2], bo_agi=(6, 1))
        fight.roll_initiative()
        offs = [r.seq for r in fight.events if isinstance(r.event, InitiativeRollOff)]
        assert [explain(fight.events, seq).verdicts for seq in offs] == [
            ("roll-off between ash and bo: ash 4, bo 4: ash and bo tie again and roll again (C32)",),
            ("roll-off between ash and bo: ash 5, bo 3: ash first (C19, C32)",)]

    def test_tied_allies_agree_an_order(self) -> None:
        """C19: allies Ash and Cy (AGI +0) both roll 3 and Bo 1: the AGI bonus leaves them tied, they agree Cy first;
        the tie, the agreement and the order are each explained (the tie and the agreement with the order so far)."""
        fight = new_fight(sheet("ash", "north"), sheet("cy", "north"), sheet("bo", "south"), faces=[3, 3, 1])
        fight.roll_initiative()
        fight.agree_initiative(["cy", "ash"])
        seqs = {type(r.event).__name__: r.seq for r in fight.events}
        tie = ("ash and cy tie at 3: the higher AGI bonus goes first (C19; the bonus after conditions, C28): ash +0, "
               "cy +0: the same, so the tie stands")
        allies = "ash and cy still tie: allies, they may agree an order or roll off (C19)"
        agreed = "the allies agree the order cy, ash (C19: allies may agree instead of rolling off)"
        assert explain(fight.events, seqs["InitiativeTied"]).verdicts == (
            tie, allies, "initiative order so far: ash = cy, bo (C19: the highest total first; '=': still tied)")
        assert explain(fight.events, seqs["InitiativeAgreed"]).verdicts == (
            tie, allies, agreed, "initiative order so far: cy, ash, bo (C19: the highest total first; '=': still tied)")
        assert explain(fight.events, seqs["InitiativeOrderSet"]).verdicts == (
            tie, allies, agreed, "initiative order: cy, ash, bo (C19: the highest total first)")

    def test_the_demos_three_way_tie(self) -> None:
        """C18, C19, C32: in the demo's fight (fixtures/ember-ford) Brin (6 + 2 - 5 Partial Surprise), Vesh (1 + 2)
        and Skarn (3 + 0) all have 3: Skarn's AGI bonus +0 puts him last, Brin and Vesh (+2 each) still tie and roll
        off; Vesh wins, 6 + 2 = 8 against Brin's 2 + 2 - 5 = -1 (the roll-off keeps the initiative's modifiers,
        C32). Kael's 1 + 1 = 2 is last of all."""
        from omen_core.events import decode_line

        log = Path(__file__).resolve().parents[2] / "fixtures" / "ember-ford" / "fight.jsonl"
        events = [decode_line(line) for line in log.read_bytes().splitlines()]
        order = next(r.seq for r in events if isinstance(r.event, InitiativeOrderSet))
        told = explain(events, order)
        assert told.verdicts == (
            "brin, vesh and skarn tie at 3: the higher AGI bonus goes first (C19; the bonus after conditions, C28): "
            "brin +2, vesh +2, skarn +0: brin = vesh before skarn; brin and vesh still tie on the same AGI bonus",
            "brin and vesh still tie: they roll off, an AGI check each, until the tie breaks (C19, C32)",
            "roll-off between brin and vesh: brin -1, vesh 8: vesh first (C19, C32)",
            "initiative order: vesh, brin, skarn, kael (C19: the highest total first)")
        assert [p.total for p in told.parts] == [2, 3, 3, 3, -1, 8]


def test_an_unarmed_attack_is_titled_unarmed_once() -> None:
    """C12: an unarmed attack's explanation says "with no weapon (unarmed)" once (it said "(unarmed) (unarmed)")."""
    fight = new_fight(sheet("orc", side="raiders"), sheet("ana"), faces=[6, 6, 1])
    fight.attack("orc", "ana", unarmed=True)
    fight.defend("ana", None)
    title = explain(fight.events, declared(fight)).title
    assert "orc attacks ana with no weapon (unarmed), the action declared" in title, title


def test_a_conditions_and_an_abilitys_terms_have_their_own_origin() -> None:
    """C28, C37 (docs/explain.md: `origin` is `condition` or `ability:<name>`): the orc Blessed (a house condition,
    `modifiers = { hit = 1 }`) hits Ana Exposed (`modifiers = { defense = -2 }`): the Blessed term's origin is
    `condition` (it was `situational`), the Exposed term's `condition` (it was `ability:Exposed`)."""
    from omen_core import MemoryStore, ScriptedDice
    from omen_core.content import Ruleset, decode_content, load_ruleset

    core = load_ruleset()
    house = decode_content('name = "house"\n[conditions.Exposed]\nmodifiers = { defense = -2 }\n'
                           '[conditions.Blessed]\nmodifiers = { hit = 1 }\n', Ruleset, fmt="toml").conditions
    ruleset = msgspec.structs.replace(core, conditions={**core.conditions, **house})
    fight = Fight.start(MemoryStore(), "f", dice=ScriptedDice([6, 6, 1]), clock=lambda: 0, ruleset=ruleset)
    fight.join(sheet("orc", side="raiders"))
    fight.join(sheet("ana"))
    fight.apply_condition("orc", "Blessed")
    fight.apply_condition("ana", "Exposed")
    fight.attack("orc", "ana", unarmed=True)
    fight.defend("ana", None)
    told = explain(fight.events, declared(fight))
    origins = {t.label: t.origin for p in told.parts for t in p.terms if t.label in ("Blessed", "Exposed")}
    assert origins == {"Blessed": "condition", "Exposed": "condition"}, origins


# -- what a damage outside any action moved, deferred costs, an ally's answer, a chosen reroll (C36, C38...C41) ------


def _burning_to_zero() -> Fight:
    """Under the C40 ruleset (tests/data/c40-ruleset.toml): Kael (initiative 15), Vesh (5, 3 HP) and the orc (3);
    Vesh Burning; as Vesh's turn starts Burning's d4 = 4 takes it from 3 HP to 0 (Dying); in round 2 its turn is
    skipped."""
    from omen_core import MemoryStore, ScriptedDice
    from omen_core.content import load_ruleset

    ruleset = load_ruleset(Path(__file__).resolve().parents[1] / "data" / "c40-ruleset.toml")
    fight = Fight.start(MemoryStore(), "t", dice=ScriptedDice([15, 5, 3, 4]), clock=lambda: 0, ruleset=ruleset)
    fight.join(sheet("kael", AGI=(20, 1)))
    fight.join(sheet("vesh", "raiders", hp=3, AGI=(20, 1)))
    fight.join(sheet("orc", "raiders", AGI=(20, 0)))
    fight.roll_initiative()
    fight.apply_condition("vesh", "Burning")
    fight.end_turn("kael")
    fight.end_turn("orc")
    fight.end_turn("kael")
    return fight


def _seq_of(fight: Fight, kind: type) -> int:
    """The seq of the fight's first event of ``kind``."""
    return next(r.seq for r in fight.events if isinstance(r.event, kind))


class TestDamageOutsideAnAction:
    def test_a_ticks_damage_says_the_hp_it_moved_and_dying(self) -> None:
        """C40, C41 (docs/explain.md, "resources after"): Burning's 4 fire on Vesh at 3 HP is explained with
        "vesh: HP 3 -> 0" and Dying (C28, C36), as the story tells them, whether asked at the damage or its die
        (it ended at the damage line: only the 0 -> 0 case got a line)."""
        from omen_core.events import DiceRolled

        fight = _burning_to_zero()
        at = _seq_of(fight, DamageResolved)
        told = explain(fight.events, at)
        assert told.verdicts == ("4 fire damage to vesh from Burning as it ticks (C25, C40)", "vesh: HP 3 -> 0",
                                 "vesh is Dying (1 stack, C28)")
        assert [(d.purpose, d.face) for d in told.dice] == [("damage", 4)]
        die = explain(fight.events, at - 1)
        assert isinstance(fight.events[at - 2].event, DiceRolled) and die.verdicts == told.verdicts
        # headed in words, not by the event's type (it read "damage_resolved at seq 53": a tester)
        assert told.title == die.title == f"Burning: fire damage to vesh outside any action, at seq {at}"

    def test_the_resource_changed_and_the_skipped_turn_say_what_they_are(self) -> None:
        """C36, C40: the resource_changed after Burning's damage says the HP it moved and the damage that moved it,
        and Vesh's skipped turn says why it lost it (both explained as bare headers)."""
        from omen_core.events import ResourceChanged, TurnSkipped

        fight = _burning_to_zero()
        moved = _seq_of(fight, ResourceChanged)
        assert explain(fight.events, moved).verdicts == (
            f"vesh: HP 3 -> 0 (the 4 fire damage at seq {moved - 1}, from Burning, C40; explain it there)",)
        assert explain(fight.events, _seq_of(fight, TurnSkipped)).verdicts == (
            "vesh loses the turn: at 0 HP, Dying: treated as Incapacitated (C36)",)

    def test_a_deferred_costs_damage_settles_and_says_the_hp(self) -> None:
        """C41 (docs/abilities.md "Deferred costs"): Blood Price heals Ana 2 + 3 (15 to 20) and records 3 necrotic
        for the start of her next turn; the use says the cost it recorded, and the damage, as it settles, says
        20 -> 17 and cites C41 (it said "as it ticks (C25, C40)", with no HP, and the use said nothing of it)."""
        from omen_core.commands import UseAbility
        from omen_core.events import AbilityUsed, ResourceChanged
        from tests.test_abilities import blood_price, having

        price = blood_price()
        fight = new_fight(having(sheet("ana"), price), sheet("orc", side="raiders"), faces=[5, 1, 2, 6, 1, 2, 3])
        fight.attack("orc", "ana", unarmed=True)
        fight.defend("ana", None)
        fight.roll_initiative()
        fight.execute(UseAbility(who="ana", ability="blood_price"))
        fight.end_turn("ana")
        fight.end_turn("orc")
        used = explain(fight.events, _seq_of(fight, AbilityUsed))
        assert used.verdicts[0] == ("ana uses Blood Price: its deferred cost is recorded, to settle later: 3 necrotic "
                                    "damage at the start of ana's next turn (C41)")
        settled = [r.seq for r in fight.events if isinstance(r.event, DamageResolved)][-1]
        assert explain(fight.events, settled).verdicts == (
            "3 necrotic damage to ana from Blood Price's deferred cost as it settles (C41)", "ana: HP 20 -> 17")
        moved = [r.seq for r in fight.events if isinstance(r.event, ResourceChanged)][-1]
        assert moved == settled + 1 and explain(fight.events, moved).verdicts == (
            f"ana: HP 20 -> 17 (the 3 necrotic damage at seq {settled}, from Blood Price's deferred cost, C41; "
            "explain it there)",)


class TestAnswersInAnAttack:
    def test_an_allys_defense_ability_is_credited_to_its_owner(self) -> None:
        """C11, C37, C38: Cy's Ward Ally (+1 to Bo's Defense Rating, 1 Will) answers the orc's attack on Bo: the
        term names Cy's ability (it read "an ability's, part of the Defense Rating (C11)", no owner) and the
        verdicts say Cy's answer; defense 3 + 0 + 1 = 4 against the orc's 6 + 1 = 7."""
        from omen_core.content import Ability, decode_content
        from tests.test_abilities import having

        ward = decode_content('id = "ward_ally"\nname = "Ward Ally"\nuse = "trigger"\ntrigger = { moment = '
                              '"attack.declared", owner = "ally_of_target" }\ncost = { will = 1 }\neffects = '
                              '[{ kind = "modifier", total = "defense", value = 1 }]\n', Ability, fmt="toml")
        fight = new_fight(sheet("orc", side="raiders"), sheet("bo"), having(sheet("cy"), ward), faces=[6, 1, 3, 2])
        fight.engage("cy", "bo")
        fight.attack("orc", "bo", unarmed=True)
        fight.answer_decision("ward_ally", "cy", "use")
        fight.defend("bo", None)
        told = explain(fight.events, declared(fight))
        defense = next(p for p in told.parts if p.name == "total defense")
        assert [(t.label, t.value, t.source, t.origin) for t in defense.terms] == [
            ("RES die", 3, "base defense roll", "dice"), ("RES bonus", 0, "bo's sheet", "sheet"),
            ("armor", 0, "no armor worn (C11)", "sheet"),
            ("Ward Ally", 1, "cy's ability Ward Ally (C37), part of the Defense Rating (C11)", "ability:Ward Ally")]
        assert defense.total == 4
        assert "cy answers ward_ally: use (Ward Ally, C37)" in told.verdicts

    def test_a_triggered_abilitys_deferred_cost_is_said_with_its_answer(self) -> None:
        """C41: Ana's 2 + 1 = 3 would miss the orc's 4; Reckless Surge (+2: 5 > 4) records one stack of Fatigued
        for the end of her next turn, and the answer's verdict says so (it said the answer alone)."""
        from tests.test_abilities import having

        fight = new_fight(having(sheet("ana"), "reckless_surge"), sheet("orc", side="raiders"), faces=[6, 1, 2, 1, 4])
        fight.roll_initiative()
        fight.attack("ana", "orc", unarmed=True)
        fight.answer_decision("reckless_surge", "ana", "use")
        fight.defend("orc", None)
        told = explain(fight.events, declared(fight))
        assert ("ana answers reckless_surge: use (Reckless Surge, C37); its deferred cost is recorded, to settle "
                "later: Fatigued at the end of ana's next turn (C41)") in told.verdicts
        assert [p.total for p in told.parts if p.name in ("hit total", "total defense")] == [5, 4]

    def test_a_chosen_reroll_is_said_where_the_die_counts(self) -> None:
        """C39: Second Chance rerolls Ana's primary 2 (2 + 1 = 3 would miss the orc's 4) to 6: the hit total's
        primary die and the damage's dice result say "as rerolled (C39)" (the damage said "the hit roll, not
        re-rolled"); the FCS die, not rerolled, says "hit roll" alone. Unarmed: 6 + 0 + 0 = 6 damage."""
        from tests.test_abilities import having

        fight = new_fight(having(sheet("ana"), "second_chance"), sheet("orc", side="raiders"),
                          faces=[2, 1, 4, 6])
        fight.attack("ana", "orc", unarmed=True)
        fight.answer_decision("second_chance", "ana", "use")
        fight.defend("orc", None)
        told = explain(fight.events, declared(fight))
        hit = next(p for p in told.parts if p.name == "hit total")
        assert [(t.label, t.value, t.source) for t in hit.terms[:2]] == [
            ("primary die (STR)", 6, "hit roll, as rerolled (C39)"), ("FCS die", 1, "hit roll")]
        damage = next(p for p in told.parts if p.name.startswith("damage"))
        assert (damage.terms[0].label, damage.terms[0].value, damage.terms[0].source) == (
            "primary dice result", 6, "the hit roll, as rerolled (C39)")
        assert [(d.purpose, d.face, d.rerolled) for d in told.dice if d.rerolled is not None] == [("reroll", 6, 2)]


# -- wording: what each term and header names (the rules-lawyer's reading of docs/explain.md) ---------------------


def test_an_ability_die_names_the_ability_and_whose_it_is() -> None:
    """C12, C39 (docs/explain.md: an ability's term names it and whose it is): Savage Blow's d6 (3) in Ana's damage
    says "ana's ability Savage Blow"; it said only "rage, or the ability named" although the die's origin named it."""
    from tests.test_abilities import having

    fight = new_fight(having(sheet("ana"), "savage_blow"), sheet("orc", side="raiders"), faces=[4, 1, 2, 3])
    fight.attack("ana", "orc", unarmed=True)
    fight.defend("orc", None)
    fight.answer_decision("savage_blow", "ana", "use")
    damage = next(p for p in explain(fight.events, declared(fight)).parts if p.name == "damage (unarmed)")
    assert [(t.label, t.value, t.source, t.origin) for t in damage.terms if t.label == "ability die"] == [
        ("ability die", 3, "a die ana's ability Savage Blow (C37) added to the damage (C12, C39)",
         "ability:Savage Blow")]


def test_a_dying_combatants_turn_that_ended_by_itself_says_why() -> None:
    """C36 (docs/rulings.md, "At 0 HP: what Dying takes away"): Burning takes Vesh to 0 HP as its turn starts, and
    its turn ends by itself (the batch's command is Kael's end_turn): explain says why; Kael's own end_turn says it
    was his command (both said only "turn_ended at seq N", with nothing else)."""
    from omen_core.events import TurnEnded

    fight = _burning_to_zero()
    ended = {r.event.who: r for r in fight.events if isinstance(r.event, TurnEnded) and r.event.round == 1}
    assert explain(fight.events, ended["vesh"].seq).verdicts == (
        "vesh's turn ends by itself: at 0 HP, Dying: a combatant takes no more of its turn (C36)",)
    assert explain(fight.events, ended["kael"].seq).verdicts == (
        f"kael ends the turn (end_turn, the command at seq {ended['kael'].batch})",)


def test_standing_up_is_explained_as_standing_up() -> None:
    """C20, C28 (docs/rulings.md, "Standing up from Prone is a Movement Action"): Prone Kael's stand_up is headed
    as standing up, as the narrative tells it (it was headed "kael moves"); a move after it is still a move."""
    from omen_core.events import MovementDeclared
    from tests.test_options import stood_then_moved

    fight = stood_then_moved()
    stood, moved = [r.seq for r in fight.events if isinstance(r.event, MovementDeclared)]
    assert explain(fight.events, stood).title == (
        f"kael stands up from Prone (a Movement Action, C20, C28), the action declared at seq {stood}")
    assert explain(fight.events, moved).title.startswith("kael moves")


def test_a_tick_taken_once_per_stack_says_so(tmp_path: Path) -> None:
    """C40 (per_stack): Swarm, 2d6 piercing for each stack, ticks on Bo (3 stacks) as his turn starts: six dice,
    2 + 5 + 1 + 2 + 4 + 3 = 17, said to be 2d6 for each of 3 stacks (it said only "the consequence's own piercing
    damage roll", as the narrative said 6d6)."""
    from omen_core import MemoryStore, ScriptedDice
    from omen_core.content import load_ruleset

    toml = tmp_path / "swarm.toml"
    toml.write_text('name = "swarm"\nversion = "test"\n\n[conditions.Dying]\nplaceholder = true\n\n'
                    '[conditions.Swarm]\nplaceholder = true\nmax_stacks = 9\ntick = "turn_start"\n'
                    'damage = { dice = { count = 2, die = "d6" }, damage_type = "piercing", per_stack = true }\n')
    fight = Fight.start(MemoryStore(), "t", dice=ScriptedDice([15, 5, 2, 5, 1, 2, 4, 3]), clock=lambda: 0,
                        ruleset=load_ruleset(toml))
    fight.join(sheet("ash", AGI=(20, 1)))
    fight.join(sheet("bo", "b", hp=30, AGI=(20, 1)))
    fight.roll_initiative()
    fight.apply_condition("bo", "Swarm", stacks=3)
    fight.end_turn("ash")
    told = explain(fight.events, _seq_of(fight, DamageResolved))
    assert [(t.label, t.value, t.source) for t in told.parts[0].terms] == [
        ("damage dice", 17, "the consequence's own piercing damage roll: 2d6 for each of 3 stacks (6d6, C40)")]


def test_a_flat_tick_taken_once_per_stack_says_so() -> None:
    """C40 (per_stack): Bleeding (tests/data/c40-ruleset.toml), 1 slashing for each stack, ticks on Vesh (2 stacks)
    as her turn starts: its flat 2 is said to be 1 for each of 2 stacks (it said only "the consequence's flat
    damage"); it rolls no dice, and no term is listed for dice it does not have (a "+0 damage dice" line was: found
    by a tester)."""
    from omen_core import MemoryStore, ScriptedDice
    from omen_core.content import load_ruleset

    ruleset = load_ruleset(Path(__file__).resolve().parents[1] / "data" / "c40-ruleset.toml")
    fight = Fight.start(MemoryStore(), "t", dice=ScriptedDice([15, 5]), clock=lambda: 0, ruleset=ruleset)
    fight.join(sheet("kael", AGI=(20, 1)))
    fight.join(sheet("vesh", "raiders", AGI=(20, 1)))
    fight.roll_initiative()
    fight.apply_condition("vesh", "Bleeding", stacks=2)
    fight.end_turn("kael")
    told = explain(fight.events, _seq_of(fight, DamageResolved))
    assert [(t.value, t.source) for t in told.parts[0].terms] == [
        (2, "the consequence's flat damage: 1 for each of 2 stacks (C40)")]


def test_a_rage_die_says_whose_rage_it_is() -> None:
    """C12, C39 (docs/explain.md: an added term says whose it is): Ash's rage d6 (5) in his axe's damage says "ash's
    rage" (it said "rage, or the ability named", naming no one)."""
    fight = brute_fight()
    damage = next(p for p in explain(fight.events, declared(fight)).parts if p.name == "damage (axe)")
    assert [(t.value, t.source, t.origin) for t in damage.terms if t.label == "ability die"] == [
        (5, "a die ash's rage added to the damage (C12, C39)", "ability:rage")]


@pytest.mark.parametrize(("hp_cost", "restored"), [
    (0, "Drain's healing (2) restores 0 HP: ana is at its sheet's HP already (healing never goes above it)"),
    (1, "Drain's healing (2) restores 1 HP of it to ana: healing never goes above the sheet's HP (20)"),
    (2, "Drain's healing (2) restores 2 HP to ana")])
def test_a_heal_names_its_own_recipient_and_says_what_it_restored(hp_cost: int, restored: str) -> None:
    """C36, C37: Ana's Drain on the orc burns it for 1 and heals Ana herself (``to = "actor"``) a flat 2, after
    paying 0, 1 or 2 HP: explain names Ana (the heal's recipient, not the ability's target, the orc) and says it
    restored nothing (a flat heal at full HP records no event: it said nothing at all), 1 of the 2, or all 2."""
    import msgspec

    from omen_core.commands import UseAbility
    from omen_core.content import Ability, decode_content
    from omen_replay.explain import explain_records
    from tests.fights import new_fight
    from tests.sheets import sheet

    cost = f"cost = {{ hp = {hp_cost} }}\n" if hp_cost else ""
    drain = msgspec.structs.replace(decode_content(
        f'name = "Drain"\nuse = "free"\n{cost}effects = [{{ kind = "damage", to = "target", flat = 1, '
        'damage_type = "fire" }, { kind = "heal", to = "actor", flat = 2 }]\n', Ability, fmt="toml"), id="drain")
    fight = new_fight(msgspec.structs.replace(sheet("ana"), abilities=(drain,)), sheet("orc", side="raiders"),
                      faces=[6, 1])
    fight.execute(UseAbility(who="ana", ability="drain", target="orc"))
    told = explain_records(fight.events, fight.version)
    assert [(p.name, p.total) for p in told.parts if "healing" in p.name] == [("Drain's healing", 2)]
    assert told.verdicts[-1] == restored and fight.state.combatants["ana"].hp == 20


def test_a_fight_ended_by_a_side_down_says_why_and_how_each_combatant_stands() -> None:
    """C33: Ember Ford ends when the raiders are both at 0 HP (Dying) after the command at seq 299; the explanation
    of its fight_ended says so and how every combatant stands (it said nothing but its seq)."""
    records = [msgspec.json.decode(line, type=StoredEvent) for line in EMBER_FORD.read_bytes().splitlines()]
    ended = next(r for r in records if r.event.__class__.__name__ == "FightEnded")
    assert explain(records, ended.seq).verdicts == (
        f"raiders is defeated (C33): found after the command at seq {ended.batch}, every combatant of the side down "
        "(at 0 HP and Dying, dead, fled or yielded; Incapacitated and Paralysed are not down)",
        "raiders: vesh at 0 HP, Dying (down); skarn at 0 HP, Dying (down)",
        "wardens: kael standing, HP 10/24; brin at 0 HP, Dying (down)")


def test_a_fight_the_gm_ends_says_it_was_the_gms_command_and_note() -> None:
    """C33: the GM may end a fight at any time with a reason; the explanation names the command, its note, and
    each side as it stands, the side ended first."""
    fight = new_fight(sheet("ash"), msgspec.structs.replace(sheet("bo", side="b"), hp=12), faces=[])
    fight.end_fight("fled", side="b", note="Bo ran for the ford")
    ended = fight.events[-1]
    assert explain(fight.events, ended.seq).verdicts == (
        f"b fled (C33): the GM's end_fight, the command at seq {ended.batch}",
        "the GM's note: Bo ran for the ford",
        "b: bo standing, HP 12/12",
        f"heroes: ash standing, HP {fight.state.combatants['ash'].hp}/{fight.state.combatants['ash'].sheet.hp}")


@pytest.mark.parametrize(("kind", "said"), [
    ("Undone", "undoes seq 82 to 88: vesh was never going to strike an ally; those events stay in the log, and every "
               "projection skips them (docs/rulings.md)"),
    ("ConditionTicked", "brin's Fatigued ticks, at round end (C25, C40): 2 ticks of its 3 left"),
    ("BonusActionsRefilled", "kael's Bonus Actions refilled when its skipped turn would have come (C21): 1 -> 2 "
                             "(C20: they do not "
                             "accumulate, C21)"),
    ("SeedRevealed", "the GM reveals the seed: every seeded die drawn under its commitment can be checked against it "
                     "(omen verify); a revealed seed is spent, and no undo reaches back past it (C42)"),
])
def test_an_undo_a_tick_a_refill_and_a_reveal_say_what_they_did(kind: str, said: str) -> None:
    """docs/explain.md: the first of each kind in Ember Ford is explained in words with its numbers (each said
    nothing but its seq: a tester): the undo at seq 90 and its range and reason, Brin's Fatigued ticking at the
    round's end (3 ticks, C25), Kael's Bonus Actions refilled (C20), the seed's reveal (C42)."""
    records = [msgspec.json.decode(line, type=StoredEvent) for line in EMBER_FORD.read_bytes().splitlines()]
    def wanted(rec: StoredEvent) -> bool:
        if rec.event.__class__.__name__ != kind:
            return False
        return not isinstance(rec.event, BonusActionsRefilled) or rec.event.before != rec.event.after

    found = next(r for r in records if wanted(r))
    assert explain(records, found.seq).verdicts == (said,)


class TestADecisionPointNotOffered:
    """C38, C41: the engine records only the decision points that open; explain says, derived from the state it
    decided in and by the engine's own gates, why an owner the trigger names was not offered one (a player asked
    "why did I not get to reroll?" and no tool said: a tester)."""

    SECOND_TRY = ('id = "second_try"\nname = "Second Try"\nuse = "trigger"\n'
                  'trigger = { moment = "attack.rolled", owner = "attacker" }\ncost = { will = 1 }\n'
                  'uses = { count = 1, per = "fight" }\neffects = [{ kind = "reroll", pool = "primary" }]\n')

    def fight(self, faces: list[int], will: int = 10) -> Fight:
        """Ana (with Second Try: reroll a primary die for 1 Will, once per fight) and an orc."""
        from omen_core.content import Ability, decode_content
        from tests.test_abilities import having

        second_try = decode_content(self.SECOND_TRY, Ability, fmt="toml")
        return new_fight(having(sheet("ana", will=will), second_try), sheet("orc", side="raiders"), faces=faces)

    @staticmethod
    def said(fight: Fight) -> list[list[str]]:
        """Each attack's "not offered" lines, in order."""
        from omen_core.events import AttackDeclared

        return [[v for v in explain(fight.events, r.seq).verdicts if "not offered" in v]
                for r in fight.events if isinstance(r.event, AttackDeclared)]

    def test_a_use_spent_and_an_attack_that_hits_are_said_and_an_offer_is_not(self) -> None:
        """Ana's unarmed attack misses (1 + 1 against the orc's 6): Second Try is offered and used (the rerolled 1
        misses again): nothing said of it. Her second misses the same way: no use of it left this fight (C41).
        Her third hits as it stands (6 + 6 against 1): the first reason docs/abilities.md lists is said, the use
        spent; in another fight, her first attack hitting so, a reroll is offered only while it would miss (C38)."""
        fight = self.fight([1, 1, 6, 1, 1, 1, 6, 6, 6, 1])
        fight.attack("ana", "orc", unarmed=True)
        fight.answer_decision("second_try", "ana", "use")
        fight.attack("ana", "orc", unarmed=True)
        fight.attack("ana", "orc", unarmed=True)
        first, second, third = self.said(fight)
        assert first == []
        assert second == ["Second Try (C37) not offered to ana at attack.rolled (derived from the state before seq "
                          "24; the log records only the decision points that opened): ana has no use of Second Try "
                          "left this fight (C41)"]
        assert third == ["Second Try (C37) not offered to ana at attack.rolled (derived from the state before seq "
                         "32; the log records only the decision points that opened): ana has no use of Second Try "
                         "left this fight (C41)"]
        hits = self.fight([6, 6, 1])
        hits.attack("ana", "orc", unarmed=True)
        assert self.said(hits) == [["Second Try (C37) not offered to ana at attack.rolled (derived from the state "
                                    "before seq 10; the log records only the decision points that opened): the attack "
                                    "hits as it stands: Second Try is offered only while it would miss (C38)"]]

    def test_an_owner_is_judged_after_the_answers_before_its_place(self) -> None:
        """C38: Ana holds Aim A and Aim B (+1 to hit each, at attack.rolled); her attack stands at 2 against the
        orc's 2, a miss (the defender wins ties). She uses Aim A (3 > 2): Aim B, judged after that answer, is not
        offered, the attack hitting as it stands (it was judged before Aim A's answer, and nothing was said: a
        tester)."""
        from omen_core.content import Ability, decode_content
        from tests.test_abilities import having

        aims = [decode_content(f'id = "aim_{x}"\nname = "Aim {x.upper()}"\nuse = "trigger"\n'
                               'trigger = { moment = "attack.rolled", owner = "attacker" }\n'
                               'effects = [{ kind = "modifier", total = "hit", value = 1 }]\n', Ability, fmt="toml")
                for x in ("a", "b")]
        fight = new_fight(having(sheet("ana"), *aims), sheet("orc", side="raiders"), faces=[1, 1, 2])
        fight.attack("ana", "orc", unarmed=True)
        fight.answer_decision("aim_a", "ana", "use")
        (lines,) = self.said(fight)
        assert len(lines) == 1 and lines[0].startswith("Aim B (C37) not offered to ana at attack.rolled ")
        assert lines[0].endswith(": the attack hits as it stands: Aim B is offered only while it would miss (C38)")

    def test_a_cost_that_cannot_be_paid_is_said(self) -> None:
        """Ana has no Will: her missing attack (1 + 1 against 6) offers no Second Try, which costs 1 Will (C38:
        offered only to one who can pay for a choice besides passing); so does one that hits as it stands, the cost
        being the first reason docs/abilities.md lists."""
        fight = self.fight([1, 1, 6], will=0)
        fight.attack("ana", "orc", unarmed=True)
        (lines,) = self.said(fight)
        assert len(lines) == 1 and lines[0].startswith("Second Try (C37) not offered to ana at attack.rolled ")
        assert lines[0].endswith("): 'ana' cannot pay 1 Will: 0 Will left to spend (C37)"), lines
        hits = self.fight([6, 6, 1], will=0)  # the cost comes before what it could change (docs/abilities.md)
        hits.attack("ana", "orc", unarmed=True)
        assert [line.rsplit("): ", 1)[1] for line in self.said(hits)[0]] == ["'ana' cannot pay 1 Will: 0 Will left "
                                                                            "to spend (C37)"]

    def test_only_the_owners_given_are_told_of(self) -> None:
        """A seat's explanation (``owners``: the server's for a player, its own combatants) says nothing of another's
        ability not offered (its sheet, uses and Will are not the seat's to read): the orc's seat is told nothing of
        Ana's Second Try; Ana's seat is."""
        from omen_core.walk import StoreSource
        from omen_replay.explain import explain as explain_source

        fight = self.fight([1, 1, 6], will=0)
        fight.attack("ana", "orc", unarmed=True)
        seq = fight.events[-1].seq

        def lines(owners: set[str]) -> list[str]:
            found = explain_source(StoreSource(fight.store, fight.fight_id), seq, None, owners=owners.__contains__)
            return [v for v in found.verdicts if "not offered" in v]
        assert lines({"orc"}) == [] and len(lines({"ana"})) == 1

    def test_a_use_per_turn_is_said_to_come_back_as_its_owners_turn_starts(self) -> None:
        """C41: Ana's Ward (+2 defense when attacked, once per turn) turns the orc's 2 + 1 against her 2 into a
        miss on the orc's turn; on the goblin's turn (hers not come between) it is not offered, and explain says
        until when: her next turn's start (it said "left this turn", and this is another turn: a new one)."""
        from omen_core.content import Ability, decode_content
        from tests.test_abilities import having

        ward = decode_content('id = "ward"\nname = "Ward"\nuse = "trigger"\n'
                              'trigger = { moment = "attack.rolled", owner = "target" }\n'
                              'uses = { count = 1, per = "turn" }\n'
                              'effects = [{ kind = "modifier", total = "defense", value = 2 }]\n', Ability, fmt="toml")
        fight = new_fight(having(sheet("ana"), ward), sheet("orc", side="raiders"), sheet("gob", side="raiders"),
                          faces=[1, 6, 5, 2, 1, 2, 2, 1, 2])
        fight.roll_initiative()
        assert fight.state.order == ("orc", "gob", "ana")
        fight.attack("orc", "ana", unarmed=True)
        fight.answer_decision("ward", "ana", "use")
        fight.end_turn("orc")
        fight.attack("gob", "ana", unarmed=True)
        first, second = self.said(fight)
        assert first == []
        assert [line.rsplit("): ", 1)[1] for line in second] == [
            "ana has no use of Ward left until ana's next turn starts (C41)"]

    def test_a_moment_of_the_round_says_whom_it_passed_over(self) -> None:
        """C38: Ana and Bea both hold Catch Breath (heal 1 at the round's end, while at 15 HP or less); the orc's
        unarmed 5 takes Ana to 15, Bea stays at 20: the round's end is offered to Ana alone, and its explanation says
        why Bea was not asked (a moment of the round said nothing of those it passed over)."""
        from omen_core.content import Ability, decode_content
        from omen_core.events import MomentReached
        from tests.test_abilities import having

        breath = decode_content('id = "breath"\nname = "Catch Breath"\nuse = "trigger"\n'
                                'trigger = { moment = "round.end", owner = "self" }\n'
                                'when = { owner_hp_at_most = 15 }\n'
                                'effects = [{ kind = "heal", to = "actor", flat = 1 }]\n',
                                Ability, fmt="toml")
        fight = new_fight(having(sheet("ana"), breath), having(sheet("bea"), breath), sheet("orc", side="raiders"),
                          faces=[5, 1, 2, 6, 1, 3])
        fight.attack("orc", "ana", unarmed=True)
        fight.defend("ana", None)
        fight.roll_initiative()
        for who in ("ana", "orc", "bea"):
            fight.end_turn(who)
        fight.answer_decision("breath", "ana", "use")
        reached = next(r for r in fight.events if isinstance(r.event, MomentReached))
        told = explain(fight.events, reached.seq).verdicts
        assert told[0] == (f"Catch Breath (C37) not offered to bea at round.end (derived from the state before seq "
                           f"{reached.seq + 1}; the log records only the decision points that opened): Catch Breath "
                           "is offered only while owner at 15 HP or less (C37)")
        assert told[1:] == ("ana answers breath: use (Catch Breath, C37)", "ana's HP 15 -> 16",
                            "Catch Breath's healing (1) restores 1 HP to ana")

    def test_a_save_ends_save_says_whom_it_passed_over(self) -> None:
        """C38, C40, C41: Kael fails Poisoned's save as his turn ends (RES 3 - 1 = 2 against vesh's INT 4 + 2 = 6);
        vesh's Venom Twist answers it, and Kael's Grit (1 Will, on his own failed save) is not offered: he has no
        Will. The moment's explanation says so before vesh's answer (1d4 = 3 fire, 20 -> 17)."""
        from omen_core.content import Ability, decode_content
        from omen_core.events import MomentReached
        from tests.decide.test_conditions import answered_fight, kael

        grit = decode_content('id = "grit"\nname = "Grit"\nuse = "trigger"\ntrigger = { moment = "save.resolved", '
                              'owner = "saver", outcome = "failure" }\ncost = { will = 1 }\n'
                              'effects = [{ kind = "heal", to = "actor", flat = 1 }]\n', Ability, fmt="toml")
        fight = answered_fight([3, 4, 3], kael_sheet=msgspec.structs.replace(kael(), will=0, abilities=(grit,)))
        fight.apply_condition("kael", "Poisoned", by="vesh")
        fight.end_turn("kael")
        fight.answer_decision("venom_twist", "vesh", "use")
        reached = next(r for r in fight.events if isinstance(r.event, MomentReached))
        assert explain(fight.events, reached.seq).verdicts == (
            f"Grit (C37) not offered to kael at save.resolved (derived from the state before seq {reached.seq + 1}; "
            "the log records only the decision points that opened): 'kael' cannot pay 1 Will: 0 Will left to spend "
            "(C37)",
            "vesh answers venom_twist: use (Venom Twist, C37)", "kael takes 3 fire (raw 3, C13)", "kael's HP 20 -> 17")

    def test_an_ability_used_on_ones_turn_says_whom_its_condition_passed_over(self) -> None:
        """C20, C38: Ana (initiative 6 against 1) uses Sweep on the orc on her turn: Prone applied; the orc's Quick
        Recovery (1 Bonus Action: Prone ends, at condition.applied) is not offered, its first turn not come (Bonus
        Actions before it are for defence only, C20), and the ability's explanation says so."""
        from omen_core.commands import UseAbility
        from omen_core.content import Ability, decode_content
        from tests.test_abilities import having

        trip = decode_content('id = "sweep"\nname = "Sweep"\nuse = "action"\n'
                              'effects = [{ kind = "condition", to = "target", condition = "Prone" }]\n',
                              Ability, fmt="toml")
        fight = new_fight(having(sheet("ana"), trip), having(sheet("orc", side="raiders"), "quick_recovery"),
                          faces=[6, 1])
        fight.roll_initiative()
        fight.execute(UseAbility(who="ana", ability="sweep", target="orc"))
        used = next(r for r in fight.events if isinstance(r.event, AbilityUsed))
        lines = [v for v in explain(fight.events, used.seq).verdicts if "not offered" in v]
        assert len(lines) == 1 and lines[0].startswith("Quick Recovery (C37) not offered to orc at condition.applied ")
        assert fight.state.combatants["orc"].has("Prone")

    @staticmethod
    def paralysed_ward() -> Fight:
        """Ana, Paralysed, holds Ward (+2 defense when attacked, at attack.rolled); the orc's unarmed attack on her
        (every die a 1)."""
        from omen_core.content import Ability, decode_content
        from tests.test_abilities import having

        ward = decode_content('id = "ward"\nname = "Ward"\nuse = "trigger"\n'
                              'trigger = { moment = "attack.rolled", owner = "target" }\n'
                              'effects = [{ kind = "modifier", total = "defense", value = 2 }]\n', Ability, fmt="toml")
        fight = new_fight(having(sheet("ana"), ward), sheet("orc", side="raiders"), faces=[1, 1, 1, 1, 1, 1])
        fight.apply_condition("ana", "Paralysed")
        fight.attack("orc", "ana", unarmed=True)
        return fight

    def test_passed_over_gives_an_actions_owners_passed_over_as_data_and_only_those_asked(self) -> None:
        """C38, C10: the orc's attack on Paralysed Ana, who holds Ward (at attack.rolled): ``passed_over`` of its
        declaration gives one entry (the state before the seq it is said at, Ward, C37, ana, the hook, why), the
        same words explain says; asked of the orc's owners only, none; of the command before it (no action), none."""
        from omen_core.events import AttackDeclared, encode_line
        from omen_core.walk import LinesSource
        from omen_replay.explain import passed_over

        fight = self.paralysed_ward()
        source = LinesSource([encode_line(r) for r in fight.events])
        declared = next(r.seq for r in fight.events if isinstance(r.event, AttackDeclared))
        (passed,) = passed_over(source, declared, lambda who: who == "ana")
        assert (passed.ability, passed.rule, passed.who, passed.hook, passed.why) == (
            "Ward", "C37", "ana", "attack.rolled", "ana is Paralysed: no decision (C10)")
        assert passed.seq > declared and [passed.said()] == self.said(fight)[0]
        assert passed_over(source, declared, lambda who: who == "orc") == ()
        assert passed_over(source, declared - 1, lambda who: True) == ()

    def test_an_owner_unable_to_act_is_told_that_first(self) -> None:
        """docs/abilities.md's first gate: Ana, Paralysed, holds Ward (+2 defense when attacked, at attack.rolled);
        the orc's attack on her is explained as not offering Ward because she is Paralysed (C10), whatever the
        totals (it said the attack missed as it stood, a later gate: a tester)."""
        fight = self.paralysed_ward()
        (lines,) = self.said(fight)
        assert len(lines) == 1 and lines[0].startswith("Ward (C37) not offered to ana at attack.rolled "), lines
        assert lines[0].endswith("): ana is Paralysed: no decision (C10)"), lines


def test_an_armed_attacks_primary_bonus_names_its_attribute_and_whose_sheet() -> None:
    """C12: Ash (STR d8 +2, an axe of WD 4) hits Bo; the damage's primary bonus says which attribute and whose
    sheet ("STR bonus, ash's sheet (C12)") with no condition held, as it does when one lowered it (it read
    "attribute bonus (none when unarmed, C12)": a tester)."""
    ash = msgspec.structs.replace(sheet("ash", STR=(8, 2)), weapons=(Weapon(id="axe", weapon_damage=4),))
    fight = new_fight(ash, msgspec.structs.replace(sheet("bo", side="b", RES=(6, 1)), hp=30), faces=[5, 1, 1])
    fight.attack("ash", "bo")
    fight.defend("bo", None)
    damage = next(p for p in explain(fight.events, declared(fight)).parts if p.name.startswith("damage"))
    bonus = next(t for t in damage.terms if t.label == "primary bonus")
    assert (bonus.value, bonus.source) == (2, "STR bonus, ash's sheet (C12)")


def test_a_restoring_ability_not_offered_says_whose_hp_was_full_when_it_was_due() -> None:
    """C38: Ana holds Second Wind and is hit at full HP: explain says it would restore nothing because she was at
    her sheet's HP when it was due (before the damage landed), not "would restore nothing now" under the HP that
    fell (a tester); a heal's reason says nothing of clearing a condition."""
    from omen_core.events import AttackDeclared
    from tests.test_abilities import having

    fight = new_fight(having(sheet("ana"), "second_wind"), sheet("orc", side="raiders"), faces=[6, 6, 1])
    fight.attack("orc", "ana", unarmed=True)
    fight.defend("ana", None)
    decl = next(r.seq for r in fight.events if isinstance(r.event, AttackDeclared))
    lines = [v for v in explain(fight.events, decl).verdicts if "not offered" in v]
    assert len(lines) == 1 and lines[0].startswith("Second Wind (C37) not offered to ana at "), lines
    hp = fight.state.combatants["ana"].sheet.hp
    assert lines[0].endswith(f"): Second Wind would restore nothing: ana was at its sheet's HP ({hp} of {hp}) when "
                             "it was due, and healing never goes above it (C38)"), lines
    assert fight.state.combatants["ana"].hp < hp


def test_an_undone_action_names_the_undo_that_took_it_back() -> None:
    """An undo (rules: undo points, docs/scenarios.md): Skarn's attack on Kael, undone "wrong target", is explained
    under "[undone]" and its last verdict names the undo's seq, the seqs it took back and its reason (it said
    "[undone]" alone: a tester); redone, it says so and that the attack stands; undone again, each undo and the
    redo between are said, in order, the last verdict the undo in force (it named that one alone: a GM)."""
    from omen_core.events import AttackDeclared, Undone

    fight = new_fight(sheet("kael"), sheet("skarn", side="raiders"), faces=[5, 4, 2])
    fight.attack("skarn", "kael", unarmed=True)
    fight.defend("kael", None)
    fight.undo(reason="wrong target")
    decl = next(r.seq for r in fight.events if isinstance(r.event, AttackDeclared))
    undo = next(r for r in fight.events if isinstance(r.event, Undone))
    assert isinstance(undo.event, Undone)
    found = explain(fight.events, decl)
    assert found.undone and found.verdicts[-1] == (f"UNDONE: taken back by the undo at seq {undo.seq} (seqs "
                                                   f"{undo.event.from_seq} to {undo.event.to_seq}): wrong target")
    fight.redo(reason="it stands")
    first = (f"undone by the undo at seq {undo.seq} (seqs {undo.event.from_seq} to {undo.event.to_seq}): wrong "
             f"target; redone at seq {fight.version}")
    stands = explain(fight.events, decl)
    assert not stands.undone and stands.verdicts[-2:] == (first, "it stands: every undo of it was redone")
    again = fight.undo(reason="wrong target after all")
    undone = explain(fight.events, decl)
    assert undone.undone and undone.verdicts[-2:] == (first, f"UNDONE: taken back by the undo at seq "
                                                              f"{fight.version} (seqs {again.from_seq} to "
                                                              f"{again.to_seq}): wrong target after all")


class TestInterruptsNotOffered:
    """C24 (each enemy within reach may Interrupt an Action declared), C20, C22: an Action whose declaration gave an
    enemy within reach no Interrupt window says why, derived from the state right after the declaration (the log
    records only the windows that opened): a player asked why Kael was not offered one (the page said nothing)."""

    def _fight(self, first: str) -> Fight:
        """Kael and Vesh engaged, Vesh's knife attack declared; ``first``: who acts first (Kael 6 or 1 on his die)."""
        from omen_core.commands import Engage

        kael_die = 6 if first == "kael" else 1
        fight = new_fight(sheet("kael"), sheet("vesh", side="raiders"), faces=[kael_die, 3, 2, 1, 6])
        fight.roll_initiative()
        fight.execute(Engage(who="vesh", others=("kael",)))
        if first == "kael":
            fight.end_turn("kael")
        fight.attack("vesh", "kael", unarmed=True)
        return fight

    def said(self, fight: Fight) -> list[str]:
        from omen_core.events import AttackDeclared

        seq = next(r.seq for r in fight.events if isinstance(r.event, AttackDeclared))
        return [v for v in explain(fight.events, seq).verdicts if v.startswith("no Interrupt window")]

    def test_before_the_defenders_first_turn_it_is_said_why(self) -> None:
        """Vesh acts first: Kael's first turn has not come, so his Bonus Actions are for defence only (C20)."""
        fight = self._fight("vesh")
        from omen_core.events import AttackDeclared

        seq = next(r.seq for r in fight.events if isinstance(r.event, AttackDeclared))  # judged right after it
        assert self.said(fight) == [
            f"no Interrupt window for kael (derived from the state before seq {seq + 1}; the log records no skipped "
            "window): kael's first turn has not come yet: its Bonus Actions are for defence only until then (C20), "
            "and an Interrupt is an attack"]

    def test_after_it_the_window_opens_and_nothing_is_said(self) -> None:
        """Kael acted first: the Interrupt window opens for him, so no line says it was not offered."""
        from omen_core.events import ReactionWindowOpened

        fight = self._fight("kael")
        assert any(isinstance(r.event, ReactionWindowOpened) and r.event.responders == ("kael",)
                   for r in fight.events)
        assert self.said(fight) == []


@pytest.mark.parametrize("paralysed", [True, False])
def test_a_paralysed_will_converters_damage_on_hp_names_the_ruling(paralysed: bool) -> None:
    """C10, C31 and docs/rulings.md ("Will conversion needs an owner able to act"): Bo converts physical damage to
    Will (automatic), but Paralysed gives nothing of it: Kael's unarmed hit lands on his HP, Will untouched, and the
    explanation says why (a rules lawyer read the damage on HP, nothing said); not Paralysed, it lands on Will."""
    bo = msgspec.structs.replace(sheet("bo", side="raiders", will=20), features=Features(will_conversion=True))
    fight = new_fight(sheet("kael"), bo, faces=[6, 6, 1, 1, 6, 6])
    if paralysed:
        fight.apply_condition("bo", "Paralysed")
    fight.attack("kael", "bo", unarmed=True)
    if not paralysed:
        fight.defend("bo", None)
    damage = next(r for r in fight.events if isinstance(r.event, DamageResolved))
    assert isinstance(damage.event, DamageResolved) and damage.event.final > 0
    assert damage.event.resource == ("hp" if paralysed else "will")
    said = [v for v in explain(fight.events, damage.seq).verdicts if "damage to bo's" in v]
    ruling = ("(its Will conversion gives nothing while Paralysed (C10): docs/rulings.md, \"Will conversion needs an "
              "owner able to act\")")
    assert said == [f"{damage.event.final} crushing damage to bo's {'HP ' + ruling if paralysed else 'WILL'}"], said


def test_a_refill_says_when_it_came_as_the_story_does() -> None:
    """C20, C21: at the Ember Ford, Kael (Completely Surprised, C18) loses his round-1 turn: his Bonus Actions refill
    (seq 76) when the skipped turn would have come, as the session log says (explain said "at the start of its
    turn", a turn he never had: a reviewer); Brin's at seq 119 at the start of her turn."""
    from omen_core.events import decode_line

    records = [decode_line(line) for line in EMBER_FORD.read_bytes().splitlines()]
    said = {seq: [v for v in explain(records, seq).verdicts if "refilled" in v] for seq in (76, 119)}
    assert said == {76: ["kael's Bonus Actions refilled when its skipped turn would have come (C21): 1 -> 2 (C20: "
                         "they do not accumulate, C21)"],
                    119: ["brin's Bonus Actions refilled at the start of its turn: 0 -> 2 (C20: they do not "
                          "accumulate, C21)"]}


def test_an_attack_undone_before_its_hit_was_determined_says_its_totals_as_they_stood() -> None:
    """docs/explain.md (an undone action is explained as it was): at the Ember Ford Vesh's knife attack on Skarn
    (seq 84) is undone at its Active Defense window: the explanation gives its totals as the engine reckoned them
    then, before the undo's verdict, which stays last (a reviewer saw its dice alone). C5: 3 (d8) + 3 (d6) + 2 AGI
    + 1 knife = 9; C11: Skarn's base defense 3; C7: the crit check already succeeds (FCS portion 4 > RES portion 2)."""
    from omen_core.events import decode_line

    records = [decode_line(line) for line in EMBER_FORD.read_bytes().splitlines()]
    found = explain(records, 84)
    assert found.undone and found.verdicts[-2:] == (
        "as it stood when undone: hit total 9 against defense 3, before any Active Defense, C8; the crit check "
        "already succeeds: FCS portion 4 > RES portion 2, C7",
        "UNDONE: taken back by the undo at seq 90 (seqs 82 to 88): vesh was never going to strike an ally")


def test_totals_as_they_stand_are_not_reckoned_in_a_view_without_a_combatant_of_the_attack() -> None:
    """An attack at its Active Defense window, in a state whose target never joined (a seat's view may leave a join
    out): explain's "as it stands" totals are left out, not a KeyError (found by the random fights, rendering a
    view with events left out)."""
    from pathlib import Path

    import msgspec

    from omen_core.events import decode_line
    from omen_core.state import AttackFrame
    from omen_core.walk import project
    from omen_replay.explain import _as_it_stands

    log = Path(__file__).resolve().parents[2] / "fixtures" / "ember-ford" / "fight.jsonl"
    state = project([decode_line(line) for line in log.read_bytes().splitlines()][:88])
    frame = state.stack[-1]
    assert isinstance(frame, AttackFrame) and frame.hit_roll is not None and frame.determination is None
    assert _as_it_stands(state, frame).startswith(" (as it stands: hit total ")
    without = msgspec.structs.replace(state, combatants={k: v for k, v in state.combatants.items()
                                                         if k != frame.declaration.target})
    assert _as_it_stands(without, frame) == ""


def test_an_abilitys_and_a_moves_seeded_dice_are_checked_against_the_revealed_seed() -> None:
    """An ability's heal die (C37) and a move's dice are seeded dice like any other: once the seed is revealed in the
    log, explaining the ability says each die confirms it, as an attack's do (its die read "[seeded]" with nothing
    checked, `seed_confirms` null, though verify checked it: a tester)."""
    from omen_core import MemoryStore, SeededDice
    from omen_core.commands import UseAbility
    from omen_core.content import AbilityLibrary, decode_content
    from omen_core.events import AbilityUsed

    mend = decode_content('[abilities.mend]\nname = "Mend"\nuse = "bonus_action"\ntarget = "self"\n'
                          'effects = [{ kind = "heal", to = "actor", dice = { count = 1, die = "d6" } }]\n',
                          AbilityLibrary, source="a.toml", fmt="toml").get("mend")
    kael = msgspec.structs.replace(sheet("kael"), abilities=(mend,))
    fight = Fight.start(MemoryStore(), "mend", dice=SeededDice(bytes(range(32))), clock=lambda: 0,
                        combatants=[kael, sheet("vesh", side="raiders")])
    fight.execute(UseAbility(who="kael", ability="mend", target="kael"))
    fight.reveal_seed()
    used = next(r.seq for r in fight.events if isinstance(r.event, AbilityUsed))
    found = explain(fight.events, used)
    assert found.kind == "ability" and [d.purpose for d in found.dice] == ["healing"], found.dice
    assert [d.seed_confirms for d in found.dice] == [True], found.dice
