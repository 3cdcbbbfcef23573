"""Tests for omen_replay.verify: chain, seed commitment, seeded dice and recomputed totals."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omen_core import CheckSpec, Fight, MemoryStore, ScriptedDice, SeededDice
from omen_core.content import SaveEffect, Weapon
from omen_core.events import (
    DiceRolled,
    Die,
    RollTotal,
    StaticCheckResolved,
    StoredEvent,
    seal,
)
from omen_replay.demo import run_demo
from omen_replay.verify import verify
from tests.sheets import sheet

SEED = bytes(range(32))


def seeded_log(reveal: bool = True) -> list[StoredEvent]:
    """A seeded fight with a check and a save, the seed revealed at the end if ``reveal``."""
    fight = Fight.start(MemoryStore(), "audit", dice=SeededDice(SEED), clock=lambda: 0)
    fight.join(sheet("kael", AGI=(20, 1), skills={"Climb": ("STR", 2)}))
    fight.join(sheet("vesh", side="raiders", INT=(12, 2)))
    fight.static_check(CheckSpec(who="kael", skill="Climb"), 5)
    fight.call_save("vesh", "kael", SaveEffect(name="fire", save="AGI", against="INT"))
    if reveal:
        fight.reveal_seed()
    return fight.events


def reseal(log: list[StoredEvent], index: int, event) -> list[StoredEvent]:
    """Replace one event and re-seal the whole chain after it, as a careful forger would."""
    out = log[:index]
    prev = out[-1].hash if out else "0" * 64
    for rec in [msgspec.structs.replace(log[index], event=event), *log[index + 1:]]:
        out.append(seal(rec.fight_id, rec.seq, rec.recorded_at, prev, rec.event))
        prev = out[-1].hash
    return out


class TestCleanLogs:
    def test_seeded_log_is_clean(self):
        """A played seeded log verifies: chain sound, seed matches, all three dice recomputed."""
        report = verify(seeded_log())
        assert report.clean and report.seed_revealed and report.seeded_dice == 3 and report.events == 12

    def test_demo_log_is_clean(self):
        """The demo's own log verifies."""
        assert verify(run_demo(MemoryStore(), clock=lambda: 0).events).clean

    def test_unrevealed_seed_can_be_supplied(self):
        """Before the reveal, the dice can be checked against a seed supplied by the auditor."""
        report = verify(seeded_log(reveal=False), seed=SEED)
        assert report.clean and report.seed_revealed


class TestTampering:
    def test_changed_face_breaks_the_chain(self):
        """Editing a die face in place is a chain break at that seq."""
        log = seeded_log()
        i = next(i for i, r in enumerate(log) if isinstance(r.event, DiceRolled))
        rolled = log[i].event
        forged = msgspec.structs.replace(rolled, dice=(Die(pool="check", sides=6, face=rolled.dice[0].face % 6 + 1),))
        log[i] = msgspec.structs.replace(log[i], event=forged)
        assert [(f.seq, f.rule) for f in verify(log).findings][:1] == [(log[i].seq, "chain")]

    def test_resealed_face_is_caught_by_the_seed(self):
        """A forger who re-seals the chain after changing a die is still caught by the revealed seed."""
        log = seeded_log()
        i = next(i for i, r in enumerate(log) if isinstance(r.event, DiceRolled))
        rolled = log[i].event
        face = rolled.dice[0].face % rolled.dice[0].sides + 1
        forged = msgspec.structs.replace(rolled, dice=(Die(pool="check", sides=rolled.dice[0].sides, face=face),))
        findings = verify(reseal(log, i, forged)).findings
        assert any(f.seq == log[i].seq and f.rule == "dice" and f.found == str(face) for f in findings)

    def test_wrong_seed_is_reported(self):
        """A supplied seed that does not match the commitment is a finding; so are the dice it disagrees with."""
        findings = verify(seeded_log(reveal=False), seed=bytes(32)).findings
        assert findings[0].rule == "dice" and "commitment" in findings[0].what

    def test_resealed_total_is_recomputed(self):
        """A changed check total, even re-sealed, is caught by recomputing the roll primitive (C2, C16)."""
        log = seeded_log()
        i = next(i for i, r in enumerate(log) if isinstance(r.event, StaticCheckResolved))
        check: RollTotal = log[i].event.check
        forged = msgspec.structs.replace(log[i].event, check=msgspec.structs.replace(check, total=check.total + 5))
        rules = {f.rule for f in verify(reseal(log, i, forged)).findings}
        assert "roll primitive" in rules

    def test_wrong_bonus_is_checked_against_the_sheet(self):
        """An attribute bonus that is not the sheet's is a C1 finding."""
        log = seeded_log()
        i = next(i for i, r in enumerate(log) if isinstance(r.event, StaticCheckResolved))
        check = log[i].event.check
        forged_check = msgspec.structs.replace(check, attribute_bonus=check.attribute_bonus + 1,
                                               total=check.total + 1)
        forged = msgspec.structs.replace(log[i].event, check=forged_check)
        assert "C1" in {f.rule for f in verify(reseal(log, i, forged)).findings}

    def test_every_finding_is_reported(self):
        """The audit does not stop at the first problem: two forged events give findings at both seqs."""
        fight = Fight.start(MemoryStore(), "f", dice=ScriptedDice([3, 4]), clock=lambda: 0)
        fight.join(sheet("kael"))
        fight.static_check(CheckSpec(who="kael", attribute="STR"), 2)
        fight.static_check(CheckSpec(who="kael", attribute="STR"), 2)
        log = fight.events
        for i in (3, 5):
            ev = log[i].event
            log = reseal(log, i, msgspec.structs.replace(ev, outcome="failure"))
        assert {f.seq for f in verify(log).findings} == {4, 6}

    @pytest.mark.parametrize("drop", [1, 2, 3])
    def test_dropped_event_is_reported(self, drop):
        """Dropping an event from the middle is a chain finding."""
        log = seeded_log()
        assert any(f.rule == "chain" for f in verify(log[:drop] + log[drop + 1:]).findings)


def attack_log() -> list[StoredEvent]:
    """A scripted fight with one attack that hits: Ash (STR d8+2, sword WD 4) against Bo (RES d6+1, armor 2)."""
    from omen_core.content import Armor, Weapon

    ash = msgspec.structs.replace(sheet("ash", STR=(8, 2)), weapons=(Weapon(id="sword", weapon_damage=4),))
    bo = msgspec.structs.replace(sheet("bo", side="raiders", RES=(6, 1)), armor=Armor(rating=2))
    fight = Fight.start(MemoryStore(), "atk", dice=ScriptedDice([7, 3, 2]), clock=lambda: 0)
    fight.join(ash)
    fight.join(bo)
    fight.attack("ash", "bo")          # hit 7 + 3 + 2 = 12 vs base 2 + 1 + 2 = 5: the window opens
    fight.defend("bo", None)
    return fight.events


class TestAttackAudit:
    def test_attack_log_is_clean(self):
        """A played attack verifies: totals, defense, crit, damage and mitigation all recompute."""
        assert verify(attack_log()).clean

    def test_resealed_damage_is_caught(self):
        """A changed final damage, even with the chain re-sealed, is a C13 finding at its seq."""
        from omen_core.events import DamageResolved

        log = attack_log()
        i = next(i for i, r in enumerate(log) if isinstance(r.event, DamageResolved))
        forged = msgspec.structs.replace(log[i].event, final=log[i].event.final + 3)
        findings = verify(reseal(log, i, forged)).findings
        assert (log[i].seq, "C13") in {(f.seq, f.rule) for f in findings}

    def test_resealed_hit_total_is_caught(self):
        """A changed hit total is a C5 finding; a flipped hit flag is a §Hit Determination finding."""
        from omen_core.events import HitDetermined

        log = attack_log()
        i = next(i for i, r in enumerate(log) if isinstance(r.event, HitDetermined))
        ev = log[i].event
        forged = msgspec.structs.replace(ev, attack=msgspec.structs.replace(ev.attack, total=ev.attack.total + 1),
                                         hit=not ev.hit)
        rules = {f.rule for f in verify(reseal(log, i, forged)).findings}
        assert {"C5", "§Hit Determination"} <= rules

    def test_events_in_an_illegal_order_are_caught(self):
        """Two events of an attack swapped and re-sealed are reported as out of order (lifecycle)."""
        log = attack_log()
        i = next(i for i, r in enumerate(log) if r.event.__class__.__name__ == "CostPaid")
        swapped = [*log[:i], log[i + 1], log[i], *log[i + 2:]]
        out, prev = [], "0" * 64
        for n, rec in enumerate(swapped, 1):
            out.append(seal(rec.fight_id, n, rec.recorded_at, prev, rec.event))
            prev = out[-1].hash
        findings = verify(out).findings
        assert findings and findings[0].rule == "lifecycle" and findings[0].seq == i + 1

    def test_changed_sheet_is_caught_by_its_hash(self):
        """A sheet edited after the fact no longer matches its recorded hash."""
        from omen_core.events import CombatantJoined

        log = attack_log()
        i = next(i for i, r in enumerate(log) if isinstance(r.event, CombatantJoined))
        ev = log[i].event
        forged = msgspec.structs.replace(ev, sheet=msgspec.structs.replace(ev.sheet, hp=ev.sheet.hp + 10))
        assert "content" in {f.rule for f in verify(reseal(log, i, forged)).findings}


def ember_ford_log() -> list[StoredEvent]:
    """The Ember Ford scenario's log (seeded, with an ambush, initiative and four rounds)."""
    from pathlib import Path

    from omen_replay.scenario import load_scenario, run_scenario

    path = Path(__file__).resolve().parents[2] / "fixtures" / "ember-ford" / "scenario.toml"
    return run_scenario(load_scenario(path), MemoryStore(), clock=lambda: 0).events


class TestFlowAudit:
    def test_whole_fight_is_clean(self):
        """A whole fight verifies, seeded dice included."""
        report = verify(ember_ford_log())
        assert report.clean and report.seed_revealed and report.seeded_dice > 50

    def test_forged_surprise_tier_is_caught(self):
        """A Completely Surprised defender rewritten as Alert is a C18 finding at that seq."""
        from omen_core.events import SurpriseDetermined

        log = ember_ford_log()
        i = next(i for i, r in enumerate(log) if isinstance(r.event, SurpriseDetermined))
        tier = "alert" if log[i].event.tier != "alert" else "complete"
        findings = verify(reseal(log, i, msgspec.structs.replace(log[i].event, tier=tier))).findings
        assert (log[i].seq, "C18") in {(f.seq, f.rule) for f in findings}

    def test_forged_initiative_order_is_caught(self):
        """A reordered initiative is a C19 finding, and so is every turn then taken out of the rolled order."""
        from omen_core.events import InitiativeOrderSet

        log = ember_ford_log()
        i = next(i for i, r in enumerate(log) if isinstance(r.event, InitiativeOrderSet))
        forged = msgspec.structs.replace(log[i].event, order=tuple(reversed(log[i].event.order)))
        findings = verify(reseal(log, i, forged)).findings
        assert findings[0].seq == log[i].seq and findings[0].rule == "C19"

    def test_forged_ambush_difficulty_is_caught(self):
        """An Ambush Difficulty that is not the time-waited table's is a C17 finding."""
        from omen_core.events import AmbushDifficultySet

        log = ember_ford_log()
        i = next(i for i, r in enumerate(log) if isinstance(r.event, AmbushDifficultySet))
        forged = msgspec.structs.replace(log[i].event, difficulty=log[i].event.difficulty - 3)
        assert "C17" in {f.rule for f in verify(reseal(log, i, forged)).findings}


class TestRawBytes:
    """Byte-level auditing of JSON Lines logs: every edited byte is found (verify_lines)."""

    _lines: list[bytes] = []

    @classmethod
    def lines(cls) -> list[bytes]:
        """The demo's log as JSON Lines bytes (a fresh copy of a list made once)."""
        from omen_core.events import encode_line

        if not cls._lines:
            cls._lines = [encode_line(e) + b"\n" for e in run_demo(MemoryStore(), clock=lambda: 0).events]
        return list(cls._lines)

    def test_clean_bytes_verify(self):
        """The untouched bytes of a log verify clean."""
        from omen_replay.verify import verify_lines

        assert verify_lines(self.lines()).clean

    def test_whitespace_edit_is_found(self):
        """A space added inside a line decodes to the same values, but is not canonical: found at that line."""
        from omen_replay.verify import verify_lines

        lines = self.lines()
        lines[5] = lines[5].replace(b'"seq":6,', b'"seq": 6,')
        findings = verify_lines(lines).findings
        assert [(f.line, f.rule) for f in findings] == [(6, "format")]

    def test_undecodable_line_is_reported_and_the_rest_audited(self):
        """A garbled line is a format finding; the audit goes on and also reports the broken chain after it."""
        from omen_replay.verify import verify_lines

        lines = self.lines()
        lines[3] = b"{garbage\n"
        findings = verify_lines(lines).findings
        assert findings[0].line == 4 and findings[0].rule == "format"
        assert any(f.rule == "chain" for f in findings)

    @settings(max_examples=200)
    @given(st.data())
    def test_any_mutated_byte_is_detected(self, data):
        """Changing any single byte of a valid log to any other value is always detected."""
        from omen_core.errors import BadInput
        from omen_replay.verify import verify_lines

        blob = b"".join(self.lines())
        i = data.draw(st.integers(0, len(blob) - 1))
        new = data.draw(st.integers(0, 255).filter(lambda b: b != blob[i]))
        mutated = blob[:i] + bytes([new]) + blob[i + 1:]
        lines = mutated.splitlines(keepends=True)
        try:
            assert not verify_lines(lines).clean
        except BadInput:
            pass  # nothing readable is left: detected as well

    @settings(max_examples=100)
    @given(st.data())
    def test_any_dropped_swapped_or_repeated_line_is_detected(self, data):
        """Dropping, swapping or repeating whole lines (events) is always detected."""
        from omen_replay.verify import verify_lines

        lines = self.lines()
        i, j = sorted(data.draw(st.lists(st.integers(0, len(lines) - 1), min_size=2, max_size=2, unique=True)))
        change = data.draw(st.sampled_from(["drop", "swap", "repeat"]))
        if change == "drop":
            del lines[i]
        elif change == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        else:
            lines.insert(j, lines[i])
        assert not verify_lines(lines).clean


class TestUndoAndBranchesAudit:
    """Legal logs that the audit once misread (found by the random fights of tests/test_random_fights.py)."""

    SWORD = (msgspec.structs.replace(sheet("ash"), weapons=(Weapon(id="sword", weapon_damage=3),)),)

    def test_on_miss_branch_damage_is_not_the_attacks_own_damage(self):
        """C25, C12: a miss (1 + 1 + 0 vs 6 + 0) whose on-miss branch burns the attacker for 1 flat fire is clean:
        the branch's damage is a consequence, not the weapon damage formula."""
        from omen_core.content import Branches, DealDamage
        from tests.fights import new_fight

        fight = new_fight(*self.SWORD, sheet("bo", side="b"), faces=[1, 1, 6])
        fight.attack("ash", "bo", branches=Branches(on_miss=(DealDamage(flat=1, damage_type="fire", to="actor"),)))
        assert fight.state.combatants["ash"].hp == fight.state.combatants["ash"].sheet.hp - 1
        assert verify(fight.events).findings == ()

    def test_turn_order_rewinds_with_an_undo(self):
        """C19: ending Ash's turn, undoing it and ending it again is clean: the audit's turn count rewinds."""
        from tests.fights import new_fight

        fight = new_fight(sheet("ash", AGI=(6, 3)), sheet("bo", side="b"), faces=[6, 1])
        fight.roll_initiative()
        fight.end_turn("ash")
        fight.undo()
        fight.end_turn("ash")
        assert verify(fight.events).findings == ()

    def test_redo_over_an_earlier_undo_keeps_that_one_undone(self):
        """A redo of an undo whose range holds an earlier undo brings back only what the later undo voided; the
        audit agrees with the projection instead of raising."""
        from omen_core.walk import project
        from tests.fights import new_fight

        fight = new_fight(*self.SWORD, sheet("bo", side="b"), faces=[4, 6, 6, 1, 5])
        fight.static_check(CheckSpec(who="ash", attribute="STR"), 3)
        first = fight.version - 1
        fight.attack("ash", "bo")
        fight.undo()
        fight.static_check(CheckSpec(who="bo", attribute="STR"), 3)
        fight.undo(to_seq=first)
        fight.redo()
        assert project(fight.events) == fight.state
        assert verify(fight.events).findings == ()

    def test_a_tampered_log_with_an_undo_is_reported_not_raised(self):
        """Dropping a combatant's joining line before an undo gives findings (with seqs), never an exception."""
        from tests.fights import new_fight

        fight = new_fight(sheet("ash"), sheet("bo", side="b"), faces=[3])
        fight.apply_condition("ash", "Prone")
        fight.static_check(CheckSpec(who="ash", attribute="STR"), 3)
        fight.undo()
        events = [e for e in fight.events if e.seq != 2]
        report = verify(events)
        assert report.findings and {f.rule for f in report.findings} >= {"chain"}
        assert any(f.rule == "audit" for f in report.findings)
