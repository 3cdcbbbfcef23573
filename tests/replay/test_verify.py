"""Tests for omen_replay.verify: chain, seed commitment, seeded dice, recomputed totals, every command decided
again, witnessed heads, the dice-source policy and undo re-rolls."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from omen_core import CheckSpec, Fight, MemoryStore, ScriptedDice, SeededDice
from omen_core.content import SaveEffect, Weapon
from omen_core.dice import commitment
from omen_core.events import (
    SCHEMA_VERSION,
    CombatantJoined,
    CommandIssued,
    ConditionApplied,
    DamageResolved,
    DiceRolled,
    Die,
    Event,
    ResourceChanged,
    RollTotal,
    SaveResolved,
    SeedCommitted,
    StaticCheckResolved,
    StoredEvent,
    encode_line,
    seal,
)
from omen_core.walk import CRLF_WORDS
from omen_replay.demo import run_demo
from omen_replay.render import render_records
from omen_replay.verify import Finding, Report, verify, verify_lines
from tests.sheets import sheet

SEED = bytes(range(32))


def seeded_log(reveal: bool = True) -> list[StoredEvent]:
    """A seeded fight with a check and a save, ended by the GM and the seed revealed at the end if ``reveal``."""
    fight = Fight.start(MemoryStore(), "audit", dice=SeededDice(SEED), clock=lambda: 0)
    fight.join(sheet("kael", AGI=(20, 1), skills={"Climb": ("STR", 2)}))
    fight.join(sheet("vesh", side="raiders", INT=(12, 2)))
    fight.static_check(CheckSpec(who="kael", skill="Climb"), 5)
    fight.call_save("vesh", "kael", SaveEffect(name="fire", save="AGI", against="INT"))
    if reveal:
        fight.end_fight("gm")
        fight.reveal_seed()
    return fight.events


def reseal(log: list[StoredEvent], index: int, event: Event) -> list[StoredEvent]:
    """Replace one event and re-seal the whole chain after it (batch and batch size kept), as a careful forger
    would."""
    out = log[:index]
    prev = out[-1].hash if out else "0" * 64
    for rec in [msgspec.structs.replace(log[index], event=event), *log[index + 1:]]:
        out.append(seal(rec.fight_id, rec.seq, rec.recorded_at, prev, rec.event, rec.batch, rec.batch_size, rec.salt))
        prev = out[-1].hash
    return out


_SEQ_FIELDS = ("action", "reacting_to", "from_seq", "to_seq", "undo_seq")


def rechain(records: list[StoredEvent]) -> list[StoredEvent]:
    """A whole log re-sealed after events were dropped, duplicated, inserted or moved, as a careful forger would:
    seqs renumbered 1, 2, 3...; each run of records of one original batch made a batch again (its start and
    size recomputed); every seq an event refers to (action ids, undo ranges) moved with the event it names;
    every hash recomputed from the genesis hash."""
    moved: dict[int, int] = {}
    for n, rec in enumerate(records, 1):
        moved.setdefault(rec.seq, n)
    runs: list[list[int]] = []
    for n, rec in enumerate(records):
        if runs and records[runs[-1][-1]].batch == rec.batch:
            runs[-1].append(n)
        else:
            runs.append([n])
    out: list[StoredEvent] = []
    prev = "0" * 64
    for run in runs:
        for n in run:
            rec = records[n]
            event = rec.event
            changes = {f: moved.get(getattr(event, f), getattr(event, f)) for f in _SEQ_FIELDS
                       if isinstance(getattr(event, f, None), int)}
            event = msgspec.structs.replace(event, **changes) if changes else event
            out.append(seal(rec.fight_id, n + 1, rec.recorded_at, prev, event, run[0] + 1, len(run), rec.salt))
            prev = out[-1].hash
    return out


def integrity(report: Report) -> set[str]:
    """The rules of a report's integrity findings."""
    return {f.rule for f in report.problems}


def redecided_at(report: Report, seq: int) -> list[Finding]:
    """The re-decision's findings at ``seq``: where the rules, deciding the batch's command again with its own
    dice, give other events than the log records."""
    return [f for f in report.problems if f.seq == seq and f.what.startswith("the rules")]


class TestCleanLogs:
    def test_seeded_log_is_clean(self) -> None:
        """A played seeded log verifies: chain sound, seed matches, all three dice recomputed, each of the seven
        batches (start, two joins, the check, the save, the end, the reveal) decided again."""
        report = verify(seeded_log())
        assert report.clean and report.seed_revealed and report.seeded_dice == 3 and report.events == 17
        assert report.redecided == 7 and report.schema_versions == (SCHEMA_VERSION,)

    def test_demo_log_is_clean(self) -> None:
        """The demo's own log verifies."""
        assert verify(run_demo(MemoryStore(), clock=lambda: 0).events).clean

    def test_unrevealed_seed_can_be_supplied(self) -> None:
        """Before the reveal, the dice can be checked against a seed supplied by the auditor: the report says the
        dice were checked against the seed, and a re-sealed die is caught by it."""
        log = seeded_log(reveal=False)
        report = verify(log, seed=SEED)
        assert report.clean and report.seeded_dice == 3
        i = next(i for i, r in enumerate(log) if isinstance(r.event, DiceRolled))
        die = log[i].as_(DiceRolled).dice[0]
        forged = msgspec.structs.replace(log[i].event, dice=(msgspec.structs.replace(die, face=die.face % die.sides
                                                                                      + 1),))
        assert any(f.seq == log[i].seq and f.rule == "dice" for f in verify(reseal(log, i, forged), seed=SEED).findings)
        assert report.seed_revealed


class TestTampering:
    def test_changed_face_breaks_the_chain(self) -> None:
        """Editing a die face in place is a chain break at that seq."""
        log = seeded_log()
        i = next(i for i, r in enumerate(log) if isinstance(r.event, DiceRolled))
        rolled = log[i].as_(DiceRolled)
        forged = msgspec.structs.replace(rolled, dice=(Die(pool="check", sides=6, face=rolled.dice[0].face % 6 + 1),))
        log[i] = msgspec.structs.replace(log[i], event=forged)
        assert [(f.seq, f.rule) for f in verify(log).findings][:1] == [(log[i].seq, "chain")]

    def test_resealed_face_is_caught_by_the_seed(self) -> None:
        """A forger who re-seals the chain after changing a die is still caught by the revealed seed."""
        log = seeded_log()
        i = next(i for i, r in enumerate(log) if isinstance(r.event, DiceRolled))
        rolled = log[i].as_(DiceRolled)
        face = rolled.dice[0].face % rolled.dice[0].sides + 1
        forged = msgspec.structs.replace(rolled, dice=(Die(pool="check", sides=rolled.dice[0].sides, face=face),))
        findings = verify(reseal(log, i, forged)).findings
        assert any(f.seq == log[i].seq and f.rule == "dice" and f.found == str(face) for f in findings)

    def test_wrong_seed_is_reported(self) -> None:
        """A supplied seed that does not match the commitment is a finding; so are the dice it disagrees with."""
        findings = verify(seeded_log(reveal=False), seed=bytes(32)).findings
        assert findings[0].rule == "dice" and "commitment" in findings[0].what

    def test_resealed_total_is_recomputed(self) -> None:
        """A changed check total, even re-sealed, is caught by recomputing the roll primitive (C2, C16)."""
        log = seeded_log()
        i = next(i for i, r in enumerate(log) if isinstance(r.event, StaticCheckResolved))
        check: RollTotal = log[i].as_(StaticCheckResolved).check
        forged = msgspec.structs.replace(log[i].event, check=msgspec.structs.replace(check, total=check.total + 5))
        rules = {f.rule for f in verify(reseal(log, i, forged)).findings}
        assert "roll primitive" in rules

    def test_wrong_bonus_is_checked_against_the_sheet(self) -> None:
        """An attribute bonus that is not the sheet's is a C1 finding."""
        log = seeded_log()
        i = next(i for i, r in enumerate(log) if isinstance(r.event, StaticCheckResolved))
        check = log[i].as_(StaticCheckResolved).check
        forged_check = msgspec.structs.replace(check, attribute_bonus=check.attribute_bonus + 1,
                                               total=check.total + 1)
        forged = msgspec.structs.replace(log[i].event, check=forged_check)
        assert "C1" in {f.rule for f in verify(reseal(log, i, forged)).findings}

    def test_every_finding_is_reported(self) -> None:
        """The audit does not stop at the first problem: two forged events give findings at both seqs."""
        fight = Fight.start(MemoryStore(), "f", dice=ScriptedDice([3, 4]), clock=lambda: 0)
        fight.join(sheet("kael"))
        fight.static_check(CheckSpec(who="kael", attribute="STR"), 2)
        fight.static_check(CheckSpec(who="kael", attribute="STR"), 2)
        log = fight.events
        checks = [i for i, r in enumerate(log) if isinstance(r.event, StaticCheckResolved)]
        assert len(checks) == 2
        for i in checks:
            ev = log[i].event
            log = reseal(log, i, msgspec.structs.replace(ev, outcome="failure"))
        assert {f.seq for f in verify(log).findings} == {log[i].seq for i in checks}

    @pytest.mark.parametrize("drop", [1, 2, 3])
    def test_dropped_event_is_reported(self, drop: int) -> None:
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
    def test_attack_log_is_clean(self) -> None:
        """A played attack verifies: totals, defense, crit, damage and mitigation all recompute."""
        assert verify(attack_log()).clean

    def test_resealed_damage_is_caught(self) -> None:
        """A changed final damage, even with the chain re-sealed, is a C13 finding at its seq."""
        from omen_core.events import DamageResolved

        log = attack_log()
        i = next(i for i, r in enumerate(log) if isinstance(r.event, DamageResolved))
        forged = msgspec.structs.replace(log[i].event, final=log[i].as_(DamageResolved).final + 3)
        findings = verify(reseal(log, i, forged)).findings
        assert (log[i].seq, "C13") in {(f.seq, f.rule) for f in findings}

    def test_the_weapons_damage_is_the_one_held_to_c12_when_an_ability_deals_its_own_first(self) -> None:
        """C12, C38: Crit Burst (1d6 fire at attack.determined) deals 4 before Pia's unarmed blow (5 + 2 + crit 2 =
        9). The blow's terms forged (dice 5 -> 6, raw 10) and the chain re-sealed: the audit, recomputing the batch
        event by event, holds the blow to C12's formula and says so at its seq, and holds the burst to its own roll
        alone (it compared the burst with the blow's formula, and left the blow unchecked: a tester)."""
        from omen_core.content import Ability, decode_content
        from omen_core.events import DamageResolved

        burst = decode_content('id = "burst"\nname = "Crit Burst"\nuse = "trigger"\ntrigger = { moment = '
                               '"attack.determined", owner = "attacker", outcome = "crit" }\neffects = [{ kind = '
                               '"damage", to = "target", dice = { count = 1, die = "d6" }, damage_type = "fire" }]\n',
                               Ability, fmt="toml")
        fight = Fight.start(MemoryStore(), "burst", dice=ScriptedDice([5, 6, 1, 4]), clock=lambda: 0)
        fight.join(msgspec.structs.replace(sheet("pia", STR=(8, 2), FCS=(6, 2)), abilities=(burst,)))
        fight.join(sheet("zed", side="raiders"))
        fight.attack("pia", "zed", unarmed=True)
        fight.defend("zed", None)
        fight.answer_decision("burst", "pia", "use")
        log = fight.events
        assert verify(log).clean
        first, blow = [i for i, r in enumerate(log) if isinstance(r.event, DamageResolved)]
        assert (log[first].as_(DamageResolved).source, log[blow].as_(DamageResolved).source) == ("Crit Burst",
                                                                                                 "unarmed")
        terms = log[blow].as_(DamageResolved).terms
        forged = msgspec.structs.replace(log[blow].event, terms=msgspec.structs.replace(
            terms, dice=terms.dice + 1, raw=terms.raw + 1))
        said = [(f.seq, f.rule) for f in verify(reseal(log, blow, forged)).findings if f.what == "damage terms"]
        assert said == [(log[blow].seq, "C12")]

    def test_resealed_hit_total_is_caught(self) -> None:
        """A changed hit total is a C5 finding; a flipped hit flag is a §Hit Determination finding."""
        from omen_core.events import HitDetermined

        log = attack_log()
        i = next(i for i, r in enumerate(log) if isinstance(r.event, HitDetermined))
        ev = log[i].as_(HitDetermined)
        forged = msgspec.structs.replace(ev, attack=msgspec.structs.replace(ev.attack, total=ev.attack.total + 1),
                                         hit=not ev.hit)
        rules = {f.rule for f in verify(reseal(log, i, forged)).findings}
        assert {"C5", "§Hit Determination"} <= rules

    def test_events_in_an_illegal_order_are_caught(self) -> None:
        """Two events of an attack swapped and re-sealed are reported as out of order (lifecycle)."""
        log = attack_log()
        i = next(i for i, r in enumerate(log) if r.event.__class__.__name__ == "CostPaid")
        assert log[i + 1].batch == log[i].batch            # both of one command's batch
        out = rechain([*log[:i], log[i + 1], log[i], *log[i + 2:]])
        findings = verify(out).findings
        assert findings and findings[0].rule == "lifecycle" and findings[0].seq == i + 1

    @settings(max_examples=30, deadline=None)
    @given(where=st.integers(min_value=0, max_value=12), seq=st.integers(min_value=60, max_value=2**80))
    @example(where=5, seq=2**63 - 1)  # past every int64 index, as a forger would try
    @example(where=0, seq=10**23)
    def test_a_line_claiming_a_huge_seq_is_a_finding_not_the_end_of_the_log(self, where: int, seq: int) -> None:
        """A line whose seq is far past the log's (2**63 - 1, say), the chain re-sealed after it as a careful forger
        would, is reported where it stands (its seq where the next was expected), and the lines after it are read
        too: the audit never stops early at a large number and calls what it read clean."""
        log = attack_log()
        prev = log[where - 1].hash if where else "0" * 64
        forged = log[:where]
        for n, rec in enumerate(log[where:]):
            at = seq if n == 0 else rec.seq
            forged.append(seal(rec.fight_id, at, rec.recorded_at, prev, rec.event, rec.batch, rec.batch_size,
                               rec.salt))
            prev = forged[-1].hash
        report = verify(forged)
        assert not report.clean
        assert any(f.line == where + 1 and f"seq {seq} where {where + 1} was expected" in f.what
                   for f in report.findings), report.findings[:3]
        assert report.events == len(log)

    def test_changed_sheet_is_caught_by_its_hash(self) -> None:
        """A sheet edited after the fact no longer matches its recorded hash."""
        from omen_core.events import CombatantJoined

        log = attack_log()
        i = next(i for i, r in enumerate(log) if isinstance(r.event, CombatantJoined))
        ev = log[i].as_(CombatantJoined)
        forged = msgspec.structs.replace(ev, sheet=msgspec.structs.replace(ev.sheet, hp=ev.sheet.hp + 10))
        assert "content" in {f.rule for f in verify(reseal(log, i, forged)).findings}


def ember_ford_log() -> list[StoredEvent]:
    """The Ember Ford scenario's log (seeded, with an ambush, initiative and four rounds)."""
    from pathlib import Path

    from omen_replay.scenario import load_scenario, run_scenario

    path = Path(__file__).resolve().parents[2] / "fixtures" / "ember-ford" / "scenario.toml"
    return run_scenario(load_scenario(path), MemoryStore(), clock=lambda: 0).events


class TestFlowAudit:
    def test_whole_fight_is_clean(self) -> None:
        """A whole fight verifies, seeded dice included."""
        report = verify(ember_ford_log())
        assert report.clean and report.seed_revealed and report.seeded_dice > 50

    def test_forged_surprise_tier_is_caught(self) -> None:
        """A Completely Surprised defender rewritten as Alert is a C18 finding at that seq."""
        from omen_core.events import SurpriseDetermined

        log = ember_ford_log()
        i = next(i for i, r in enumerate(log) if isinstance(r.event, SurpriseDetermined))
        tier = "alert" if log[i].as_(SurpriseDetermined).tier != "alert" else "complete"
        findings = verify(reseal(log, i, msgspec.structs.replace(log[i].event, tier=tier))).findings
        assert (log[i].seq, "C18") in {(f.seq, f.rule) for f in findings}

    def test_forged_initiative_order_is_caught(self) -> None:
        """A reordered initiative is a C19 finding, and so is every turn then taken out of the rolled order."""
        from omen_core.events import InitiativeOrderSet

        log = ember_ford_log()
        i = next(i for i, r in enumerate(log) if isinstance(r.event, InitiativeOrderSet))
        forged = msgspec.structs.replace(log[i].event, order=tuple(reversed(log[i].as_(InitiativeOrderSet).order)))
        findings = verify(reseal(log, i, forged)).findings
        assert findings[0].seq == log[i].seq and findings[0].rule == "C19"

    def test_forged_ambush_difficulty_is_caught(self) -> None:
        """An Ambush Difficulty that is not the time-waited table's is a C17 finding."""
        from omen_core.events import AmbushDifficultySet

        log = ember_ford_log()
        i = next(i for i, r in enumerate(log) if isinstance(r.event, AmbushDifficultySet))
        forged = msgspec.structs.replace(log[i].event, difficulty=log[i].as_(AmbushDifficultySet).difficulty - 3)
        assert "C17" in {f.rule for f in verify(reseal(log, i, forged)).findings}


#: The demo's fight as recorded (a fixture): 319 lines.
EMBER_FORD = Path(__file__).resolve().parents[2] / "fixtures" / "ember-ford" / "fight.jsonl"


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

    def test_clean_bytes_verify(self) -> None:
        """The untouched bytes of a log verify clean."""
        from omen_replay.verify import verify_lines

        assert verify_lines(self.lines()).clean

    def test_whitespace_edit_is_found(self) -> None:
        """A space added inside a line decodes to the same values, but is not canonical, and the hash covers the
        line's raw bytes: found at that line (format and chain), and nowhere else."""
        from omen_replay.verify import verify_lines

        lines = self.lines()
        assert b'"seq":6,' in lines[5]
        lines[5] = lines[5].replace(b'"seq":6,', b'"seq": 6,')
        findings = verify_lines(lines).findings
        assert sorted((f.line, f.seq, f.rule) for f in findings) == [(6, 6, "chain"), (6, 6, "format")]

    def test_undecodable_line_is_reported_and_the_rest_audited(self) -> None:
        """A garbled line is one format finding, not one per line after it (the chain's link and the batch after
        it are the next line's own word); the audit goes on and finds an edit further on."""
        from omen_replay.verify import verify_lines

        lines = self.lines()
        lines[3] = b"{garbage\n"
        assert [(f.line, f.rule) for f in verify_lines(lines).findings] == [(4, "format")]
        lines[9] = lines[9].replace(b'"seq":10,', b'"seq": 10,')
        assert sorted((f.line, f.rule) for f in verify_lines(lines).findings) == [(4, "format"), (10, "chain"),
                                                                                   (10, "format")]

    def test_a_batch_cut_short_and_resealed_says_it_rolls_more_than_it_records(self) -> None:
        """The demo's log cut at seq 300, inside vesh's attack of seq 299, and re-sealed with that batch's size made
        to agree: the attack rolls more dice than its batch records, said in the log's terms (it said "scripted
        dice ran out ... left in the script" of a seeded fight; found by a tester)."""
        from omen_core.events import decode_line

        records = [decode_line(line) for line in EMBER_FORD.read_bytes().splitlines()][:300]
        report = verify(rechain(records))
        assert [f.what for f in report.findings if f.rule == "re-decision"] == [
            "this command cannot be decided again with the dice the batch recorded: it rolls more than the batch "
            "records (roll #52 (hit by vesh: primary d8, fcs d6) needs 2 dice, 0 recorded left, in the order of C29)"]

    def test_a_garbled_command_line_is_one_finding_and_its_batch_audited_event_by_event(self) -> None:
        """A garbled line where a batch's command_issued stood (line 101 of the demo, which opens the batch of seq
        101) is one format finding: the batch's other lines are not each "not the batch in progress" (they were, 15
        findings), and the audit says the batch was audited event by event because its command line is unreadable,
        not that the log is of schema version 1 (it said so)."""
        from omen_replay.verify import verify_lines

        lines = EMBER_FORD.read_bytes().splitlines(keepends=True)
        assert b'"seq":101,"batch":101,' in lines[100] and b'"command_issued"' in lines[100]
        lines[100] = b"garbage\n"
        report = verify_lines(lines)
        assert [(f.line, f.rule, f.what[:20]) for f in report.findings if f.kind == "integrity"] == [
            (101, "format", "not a stored event: ")]
        assert report.audit == ("decided again (45 commands) and event by event (1 batch whose command line is "
                                "missing or unreadable: see the findings)")
        assert report.event_by_event == 1 and not any("schema version 1" in note for note in report.notes)

    def test_crlf_line_endings_are_said_once_as_such(self) -> None:
        """A log whose line endings were converted to CR LF is a finding at its first such line, saying so and that
        each hash holds without the CR, and one finding for the rest (it was two findings a line, 638 for the demo,
        neither naming the line ending); a line edited besides is still its own finding."""
        from omen_replay.verify import verify_lines

        lines = [line.replace(b"\n", b"\r\n") for line in EMBER_FORD.read_bytes().splitlines(keepends=True)]
        found = [(f.seq, f.line, f.rule, f.what) for f in verify_lines(lines).findings if f.kind == "integrity"]
        assert found == [(1, 1, "chain", CRLF_WORDS),
                         (2, 2, "chain", "318 more lines end in CR LF (the first at line 2, the last at line 319), "
                                         "each hash holding without the CR")]
        lines[9] = lines[9].replace(b'"seq":10,', b'"seq": 10,')
        edited = [(f.seq, f.line, f.rule) for f in verify_lines(lines).findings if f.kind == "integrity"]
        assert sorted(edited) == [(1, 1, "chain"), (2, 2, "chain"), (10, 10, "chain"), (10, 10, "format")]

    @pytest.mark.parametrize("blank", [b"\n", b"  \t\n"])
    def test_an_empty_line_inside_takes_no_seq(self, blank: bytes) -> None:
        """An empty line (or one of white space only) inside a log is one format finding at its line: the event
        after it is the next seq, not also "seq 101 where 102 was expected" (it was)."""
        from omen_replay.verify import finding_words, verify_lines

        lines = EMBER_FORD.read_bytes().splitlines(keepends=True)
        lines.insert(100, blank)
        what = "empty line" if blank == b"\n" else "a line of white space only"
        found = [f for f in verify_lines(lines).findings if f.kind == "integrity"]
        assert [(f.seq, f.line, f.rule, f.what) for f in found] == [(101, 101, "format", what)]
        # said by its line alone, as a line that takes no seq (it read "seq 101, line 101": a maintainer tester)
        assert finding_words(found[0]) == f"line 101 [format] {what}"

    @settings(max_examples=200)
    @given(st.data())
    def test_any_mutated_byte_is_detected(self, data: st.DataObject) -> None:
        """Changing any single byte of a valid log to any other value is always detected."""
        from omen_core.errors import BadInput
        from omen_replay.verify import verify_lines

        blob = b"".join(self.lines())
        i = data.draw(st.integers(0, len(blob) - 1))
        new = data.draw(st.integers(0, 255).filter(lambda b: b != blob[i]))
        mutated = blob[:i] + bytes([new]) + blob[i + 1:]
        lines = mutated.splitlines(keepends=True)
        with contextlib.suppress(BadInput):  # nothing readable is left: detected as well
            assert not verify_lines(lines).clean

    @settings(max_examples=100)
    @given(st.data())
    def test_any_dropped_swapped_or_repeated_line_is_detected(self, data: st.DataObject) -> None:
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

    def test_on_miss_branch_damage_is_not_the_attacks_own_damage(self) -> None:
        """C25, C12: a miss (1 + 1 + 0 vs 6 + 0) whose on-miss branch burns the attacker for 1 flat fire is clean:
        the branch's damage is a consequence, not the weapon damage formula."""
        from omen_core.content import Branches, DealDamage
        from tests.fights import new_fight

        fight = new_fight(*self.SWORD, sheet("bo", side="b"), faces=[1, 1, 6])
        fight.attack("ash", "bo", branches=Branches(on_miss=(DealDamage(flat=1, damage_type="fire", to="actor"),)))
        assert fight.state.combatants["ash"].hp == fight.state.combatants["ash"].sheet.hp - 1
        assert verify(fight.events).findings == ()

    def test_turn_order_rewinds_with_an_undo(self) -> None:
        """C19: ending Ash's turn, undoing it and ending it again is clean: the audit's turn count rewinds."""
        from tests.fights import new_fight

        fight = new_fight(sheet("ash", AGI=(6, 3)), sheet("bo", side="b"), faces=[6, 1])
        fight.roll_initiative()
        fight.end_turn("ash")
        fight.undo()
        fight.end_turn("ash")
        assert verify(fight.events).findings == ()

    def test_redo_over_an_earlier_undo_keeps_that_one_undone(self) -> None:
        """A redo of an undo whose range holds an earlier undo brings back only what the later undo voided; the
        audit agrees with the projection instead of raising."""
        from omen_core.walk import project
        from tests.fights import new_fight

        fight = new_fight(*self.SWORD, sheet("bo", side="b"), faces=[4, 6, 6, 1, 5])
        fight.static_check(CheckSpec(who="ash", attribute="STR"), 3)
        first = fight.events[-1].batch                 # where the check's command starts
        fight.attack("ash", "bo")
        fight.undo()
        attack_undone_at = fight.version
        fight.static_check(CheckSpec(who="bo", attribute="STR"), 3)
        fight.undo(to_seq=first)
        fight.redo()
        assert project(fight.events) == fight.state
        report = verify(fight.events)
        assert report.problems == () and report.clean
        # the attack's voided dice (the redone undo voided none for good) are told, nothing else
        assert sorted((f.seq, f.expected, f.found) for f in report.rerolls) == [
            (attack_undone_at, "[1] at seq 12", "no such roll after it"),
            (attack_undone_at, "[6, 6] at seq 11", "no such roll after it")]

    @pytest.mark.parametrize("dropped", ["ash", "bo"])
    def test_a_dropped_join_before_an_answered_attack_is_reported_not_raised(self, dropped: str) -> None:
        """Dropping either duelist's joining line from a log whose attack window was answered gives findings
        (with seqs), never an exception: deciding the answer again on a state without that combatant is a
        finding like any other."""
        from tests.fights import new_fight

        fight = new_fight(*self.SWORD, sheet("bo", side="b"), faces=[6, 1, 1])
        fight.attack("ash", "bo")
        fight.defend("bo", None)
        join = next(r.seq for r in fight.events if isinstance(r.event, CombatantJoined)
                    and r.event.sheet.id == dropped)
        report = verify([e for e in fight.events if e.seq != join])
        assert report.problems and "chain" in {f.rule for f in report.problems}

    def test_a_tampered_log_with_an_undo_is_reported_not_raised(self) -> None:
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


def tamper_fight() -> list[StoredEvent]:
    """A scripted fight to tamper with: Ash (STR d8+2, sword WD 4) hits Bo (RES d6+1), who declines to defend
    (hit 7 + 3 + 2 = 12 vs base 2 + 1 = 3; damage 7 + 2 + 4 = 13); then Cy's cinder (INT d8+2) calls for Ash's
    AGI save, which fails (1 + 0 < 6 + 2 = 8): 3 fire damage and Prone."""
    from omen_core.content import ApplyCondition, DealDamage
    from tests.fights import new_fight

    ash = msgspec.structs.replace(sheet("ash", STR=(8, 2)), weapons=(Weapon(id="sword", weapon_damage=4),))
    fight = new_fight(ash, sheet("bo", side="raiders", RES=(6, 1)), sheet("cy", side="raiders", INT=(8, 2)),
                      faces=[7, 3, 2, 1, 6])
    fight.attack("ash", "bo")
    fight.defend("bo", None)
    fight.call_save("cy", "ash", SaveEffect(name="cinder", save="AGI", against="INT", on_failure=(
        DealDamage(flat=3, damage_type="fire"), ApplyCondition(condition="Prone"))))
    return fight.events


def index_of(log: list[StoredEvent], kind: type, n: int = 0) -> int:
    """The index of the ``n``-th event of a type in ``log``."""
    return [i for i, r in enumerate(log) if isinstance(r.event, kind)][n]


class TestReDecision:
    """Issue #10, item 5 (a): with the hash chain recomputed after an edit, the chain check passes; what catches
    the edit is deciding every batch's recorded command again with the batch's own dice."""

    LINK_RULES = {"chain", "batch", "format"}

    def forged(self, records: list[StoredEvent]) -> Report:
        """The audit of a forged log, after checking the forger's chain holds (so no finding comes from it)."""
        out = rechain(records)
        report = verify(out)
        assert not integrity(report) & self.LINK_RULES, report.problems
        return report

    def test_the_forgers_rechain_is_faithful_and_the_log_clean(self) -> None:
        """Re-sealing an untouched log gives the very same log, which verifies clean, every batch decided again
        (issue #10, 5a)."""
        log = tamper_fight()
        assert rechain(log) == log
        report = verify(log)
        assert report.findings == () and report.redecided == sum(1 for r in log if r.seq == r.batch)

    def test_a_dropped_hp_change_is_found(self) -> None:
        """Dropping the resource_changed of the attack's damage, chain re-sealed, is a finding at the seq where
        the rules put it (issue #10, 5a; C3, C13)."""
        log = tamper_fight()
        i = index_of(log, ResourceChanged)
        report = self.forged(log[:i] + log[i + 1:])
        assert redecided_at(report, log[i].seq)

    def test_a_duplicated_damage_resolved_is_found(self) -> None:
        """A damage_resolved repeated right after itself, chain re-sealed, is a finding at the copy's seq
        (issue #10, 5a; C12, C13)."""
        log = tamper_fight()
        i = index_of(log, DamageResolved)
        report = self.forged([*log[:i + 1], log[i], *log[i + 1:]])
        assert redecided_at(report, log[i].seq + 1)

    def test_a_duplicated_condition_applied_is_found(self) -> None:
        """A condition_applied repeated (Prone applied twice by one failed save), chain re-sealed, is a finding at
        the copy's seq (issue #10, 5a; C25, C28)."""
        log = tamper_fight()
        i = index_of(log, ConditionApplied)
        report = self.forged([*log[:i + 1], log[i], *log[i + 1:]])
        assert redecided_at(report, log[i].seq + 1)

    def test_a_save_flipped_to_success_with_its_failure_damage_left_is_found(self) -> None:
        """A failed save rewritten as a success, faces and totals made consistent (Ash 6 >= Cy 1 + 2), its failure
        damage left in place, chain re-sealed: every number recomputes, yet the rules give no damage after a
        success, so the damage is a finding at its seq (issue #10, 5a; C15, C25)."""
        log = tamper_fight()
        j = index_of(log, SaveResolved)
        save, (mine, theirs) = log[j].as_(SaveResolved), (log[j - 2], log[j - 1])
        assert (mine.as_(DiceRolled).roller, theirs.as_(DiceRolled).roller, save.success) == ("ash", "cy", False)

        def face(rec: StoredEvent, value: int) -> StoredEvent:
            rolled = rec.as_(DiceRolled)
            return msgspec.structs.replace(rec, event=msgspec.structs.replace(
                rolled, dice=(msgspec.structs.replace(rolled.dice[0], face=value),)))

        flipped = msgspec.structs.replace(
            save, saver=msgspec.structs.replace(save.saver, face=6, total=6),
            opposing=msgspec.structs.replace(save.opposing, face=1, total=1 + save.opposing.attribute_bonus),
            success=True)
        out = [*log[:j - 2], face(mine, 6), face(theirs, 1), msgspec.structs.replace(log[j], event=flipped),
               *log[j + 1:]]
        damage = index_of(log, DamageResolved, 1)
        assert damage == j + 1
        report = self.forged(out)
        assert not [f for f in report.problems if f.seq <= log[j].seq]   # the save itself recomputes
        assert redecided_at(report, log[damage].seq)

    def test_an_inserted_event_is_found(self) -> None:
        """A condition_applied the rules never produced, inserted into the attack's last batch before the action
        settles, chain re-sealed, is a finding at its seq (issue #10, 5a)."""
        from omen_core.events import ActionSettled

        log = tamper_fight()
        i = index_of(log, ActionSettled)
        extra = ConditionApplied(action=log[i].as_(ActionSettled).action, who="bo", condition="Prone", added=1,
                                 stacks=1)
        report = self.forged([*log[:i], msgspec.structs.replace(log[i], event=extra), *log[i:]])
        assert redecided_at(report, log[i].seq)

    def test_a_swapped_pair_is_found(self) -> None:
        """Two events of one batch swapped (the HP change after the condition the failed save applies), in an
        order the lifecycle allows, chain re-sealed, is a finding at the first of them (issue #10, 5a)."""
        log = tamper_fight()
        i = index_of(log, ResourceChanged, 1)
        assert isinstance(log[i + 1].event, ConditionApplied) and log[i].batch == log[i + 1].batch
        report = self.forged([*log[:i], log[i + 1], log[i], *log[i + 2:]])
        assert redecided_at(report, log[i].seq)
        assert "lifecycle" not in integrity(report)


    def test_a_changed_heal_cites_the_rules_of_a_heal_not_of_mitigation(self) -> None:
        """Drain's flat 2 heals Ana from 18 to 20 (C37); the log re-sealed with 21 instead is a finding of the
        re-decision citing C3 and C37, the heal's rules (it cited C3, C13, damage's mitigation order: a tester)."""
        from tests.server.test_story import _drain

        log = _drain('{ kind = "heal", to = "actor", flat = 2 }', cost=2).events
        i = next(n for n, r in enumerate(log) if isinstance(r.event, ResourceChanged)
                 and r.event.after > r.event.before)
        healed = log[i].as_(ResourceChanged)
        assert (healed.before, healed.after) == (18, 20)
        report = self.forged([*log[:i], msgspec.structs.replace(log[i], event=msgspec.structs.replace(
            healed, after=21)), *log[i + 1:]])
        assert [f.rule for f in redecided_at(report, log[i].seq)] == ["C3, C37"]


class TestWitnessedHeads:
    """Issue #10, item 5 (b): a log checked against (seq, hash) heads seen earlier."""

    def test_the_head_reached_is_reported_and_a_matching_head_is_clean(self) -> None:
        """The report names the head it reached; heads witnessed on the way, or at the end, that match are clean
        (issue #10, 5b)."""
        from omen_replay.verify import Head

        log = tamper_fight()
        mid = log[len(log) // 2]
        report = verify(log, heads=[Head(seq=mid.seq, hash=mid.hash), Head(seq=log[-1].seq, hash=log[-1].hash)])
        assert report.clean and report.findings == ()
        assert report.head == Head(seq=log[-1].seq, hash=log[-1].hash)

    def test_a_log_cut_after_a_witnessed_head_is_found(self) -> None:
        """A log cut (at a batch boundary, so it is sound by itself) before a witnessed seq: clean without the
        head, a chain finding with it (issue #10, 5b)."""
        from omen_replay.verify import Head

        log = tamper_fight()
        witnessed = Head(seq=log[-1].seq, hash=log[-1].hash)
        cut = [r for r in log if r.batch < log[-1].batch]
        assert verify(cut).clean
        report = verify(cut, heads=[witnessed])
        assert report.head == Head(seq=cut[-1].seq, hash=cut[-1].hash)
        found = [f for f in report.problems if f.rule == "chain"]
        assert found and found[0].seq == cut[-1].seq and f"{witnessed.seq}:{witnessed.hash}" == found[0].expected
        assert found[0].what == (f"the log ends at seq {cut[-1].seq}, but a head was witnessed at seq {witnessed.seq}: "
                                 "events are missing (cut from its end, or dropped and the chain sealed again)")

    def test_a_different_hash_at_a_witnessed_seq_is_found(self) -> None:
        """A log re-sealed after a harmless-looking edit (a timestamp) is sound by itself, but its hash at a
        witnessed seq is not the one seen: a finding at that seq (issue #10, 5b)."""
        from omen_replay.verify import Head

        log = tamper_fight()
        witnessed = Head(seq=log[-1].seq, hash=log[-1].hash)
        edited = rechain([msgspec.structs.replace(r, recorded_at=5) if r.seq == 5 else r for r in log])
        assert verify(edited).clean and edited[-1].hash != witnessed.hash
        report = verify(edited, heads=[witnessed])
        assert [(f.seq, f.rule, f.expected, f.found) for f in report.problems] == [
            (witnessed.seq, "chain", witnessed.hash, edited[-1].hash)]

    @pytest.mark.parametrize("text", ["", "12", "12:", ":" + "a" * 64, "0:" + "a" * 64, "-3:" + "a" * 64,
                                      "x:" + "a" * 64, "7:" + "a" * 63, "7:" + "a" * 65,
                                      "7:" + "g" * 64, "7 :" + "a" * 64, "\u00b2:" + "a" * 64, "1\u0663:" + "a" * 64,
                                      "7\n:" + "a" * 64])
    def test_parse_head_refuses_what_is_not_seq_colon_hash(self, text: str) -> None:
        """A head is SEQ:HASH, a positive seq and 64 hex digits; anything else is bad input (issue #10,
        5b)."""
        from omen_core.errors import BadInput
        from omen_replay.verify import parse_head

        with pytest.raises(BadInput):
            parse_head(text)

    def test_parse_head_reads_a_head(self) -> None:
        """``SEQ:HASH`` parses to that head (issue #10, 5b)."""
        from omen_replay.verify import Head, parse_head

        assert parse_head("42:" + "0123456789abcdef" * 4) == Head(seq=42, hash="0123456789abcdef" * 4)

    def test_a_head_pasted_with_white_space_around_it_is_read(self) -> None:
        """White space around a head (pasted from the table page) is taken away, as ``--seed`` takes it away (a
        head with a leading space was refused: found by a tester); inside it, "7 :..." is still refused (above)."""
        from omen_replay.verify import Head, parse_head

        assert parse_head(" 42:" + "ab" * 32 + "\n") == Head(seq=42, hash="ab" * 32)

    def test_an_uppercase_head_is_read_in_lower_case(self) -> None:
        """A head's hex digits in upper or mixed case are the same head, kept in lower case as the log writes it
        (``--seed`` takes either case too; an uppercase head was refused)."""
        from omen_replay.verify import Head, parse_head

        assert parse_head("7:" + "0123456789ABCDEF" * 4) == Head(seq=7, hash="0123456789abcdef" * 4)
        assert parse_head("7:" + "aBcD" * 16) == Head(seq=7, hash="abcd" * 16)


class TestDiceSourcePolicy:
    """Issue #10, item 5 (c): in a seeded fight, a die of another source needs a recorded switch; a die labelled
    seeded needs a commitment."""

    def test_a_seeded_fight_reloaded_with_manual_dice_records_the_switch(self) -> None:
        """A seeded fight loaded again with ManualDice records dice_source_changed (seeded to manual) before the
        first manual roll, once; the log verifies clean, the seeded dice checked against the seed (issue #10,
        5c)."""
        from omen_core import ManualDice
        from omen_core.events import DiceSourceChanged

        store = MemoryStore()
        fight = Fight.start(store, "mix", dice=SeededDice(SEED), clock=lambda: 0)
        fight.join(sheet("kael"))
        fight.static_check(CheckSpec(who="kael", attribute="STR"), 3)
        seeded_until = fight.version
        again = Fight.load(store, "mix", dice=ManualDice(lambda req: [4 for _ in req.pool]), clock=lambda: 0)
        again.static_check(CheckSpec(who="kael", attribute="STR"), 3)
        again.static_check(CheckSpec(who="kael", attribute="AGI"), 3)
        log = list(store.read("mix"))
        switches = [r for r in log if isinstance(r.event, DiceSourceChanged)]
        manual = [r for r in log if isinstance(r.event, DiceRolled) and r.event.source == "manual"]
        assert len(switches) == 1 and len(manual) == 2
        switch = switches[0].as_(DiceSourceChanged)
        assert (switch.before, switch.after) == ("seeded", "manual")
        assert seeded_until < switches[0].seq < manual[0].seq and switches[0].batch == manual[0].batch
        report = verify(log, seed=SEED)
        assert report.clean and report.seeded_dice == 1

    def test_a_seeded_die_relabelled_manual_is_found(self) -> None:
        """A seeded fight's die relabelled "manual" (and re-sealed) with no dice_source_changed is a dice finding
        at its seq (issue #10, 5c)."""
        log = seeded_log()
        i = index_of(log, DiceRolled)
        forged = msgspec.structs.replace(log[i].event, source="manual")
        report = verify(reseal(log, i, forged))
        assert any(f.seq == log[i].seq and f.rule == "dice" and f.found == "manual" for f in report.problems)

    def test_a_scripted_die_relabelled_manual_says_what_was_expected_once(self) -> None:
        """In a scripted fight whose commands carry their faces, a die relabelled "manual" (and re-sealed) is a dice
        finding at its seq that says it may be relabelled and expects "scripted" (it read "scripted or scripted": a
        tester)."""
        from tests.fights import new_fight

        fight = new_fight(sheet("ash"), sheet("bo", side="raiders"), faces=[])
        fight.attack("ash", "bo", unarmed=True, dice=[5, 4, 2])
        log = fight.events
        i = index_of(log, DiceRolled)
        rolled = log[i].event
        assert isinstance(rolled, DiceRolled) and rolled.source == "scripted"
        forged = msgspec.structs.replace(rolled, source="manual")
        found = [f for f in verify(reseal(log, i, forged)).problems if f.seq == log[i].seq and f.rule == "dice"]
        assert found and all(f.expected == "scripted" and f.found == "manual" for f in found), found
        assert any("relabelled?" in f.what for f in found), found

    def test_a_die_labelled_seeded_without_a_commitment_is_found(self) -> None:
        """In a scripted fight (no seed commitment), a die relabelled "seeded" (and re-sealed) is a dice finding
        at its seq (issue #10, 5c)."""
        log = tamper_fight()
        i = index_of(log, DiceRolled)
        forged = msgspec.structs.replace(log[i].event, source="seeded")
        report = verify(reseal(log, i, forged))
        assert any(f.seq == log[i].seq and f.rule == "dice" and f.found == "seeded" and "commitment" in f.what
                   for f in report.problems)


class TestUndoRerolls:
    """Issue #10, item 5 (d): every undo that voided rolled dice is a finding of its own kind."""

    def test_an_undo_that_voided_dice_shows_them_beside_the_next_roll(self) -> None:
        """An attack that hit (6 + 5 vs 1) undone and declared again misses (1 + 1 vs 6): the audit gives one
        "undo re-roll" per roller and purpose, the voided faces beside the faces the same roller rolled next for
        the same purpose; the log stays clean (issue #10, 5d)."""
        from omen_core.events import HitDetermined
        from tests.fights import new_fight

        ash = msgspec.structs.replace(sheet("ash"), weapons=(Weapon(id="sword", weapon_damage=3),))
        fight = new_fight(ash, sheet("bo", side="b"), faces=[6, 5, 1, 1, 1, 6])
        fight.attack("ash", "bo")
        fight.undo()
        undo_seq = fight.version
        fight.attack("ash", "bo")           # 1 + 1 vs 6: a miss, no window
        log = fight.events
        assert [r.event.hit for r in log if isinstance(r.event, HitDetermined)] == [False]
        rolls: dict[tuple[str, str], list[StoredEvent]] = {
            (r.event.roller, r.event.purpose): [] for r in log if isinstance(r.event, DiceRolled)}
        for r in log:
            if isinstance(r.event, DiceRolled):
                rolls[(r.event.roller, r.event.purpose)].append(r)
        report = verify(log)
        assert report.clean and report.problems == ()
        assert all(f.kind == "undo re-roll" and f.seq == undo_seq for f in report.rerolls)
        shown = sorted((f.expected, f.found) for f in report.rerolls)
        assert shown == sorted((f"{[d.face for d in voided.as_(DiceRolled).dice]} at seq {voided.seq}",
                                f"{[d.face for d in again.as_(DiceRolled).dice]} at seq {again.seq}")
                               for voided, again in rolls.values())
        assert sorted(shown) == sorted([(f"[6, 5] at seq {rolls['ash', 'hit'][0].seq}",
                                         f"[1, 1] at seq {rolls['ash', 'hit'][1].seq}"),
                                        (f"[1] at seq {rolls['bo', 'base_defense'][0].seq}",
                                         f"[6] at seq {rolls['bo', 'base_defense'][1].seq}")])
        hit = next(f for f in report.rerolls if "hit roll" in f.what)
        assert "ash" in hit.what and f"undo at seq {undo_seq}" in hit.what

    @staticmethod
    def fished(*checks: str, faces: list[int]) -> tuple[list[StoredEvent], int]:
        """Bo's Perception check rolled and undone, then Bo's ``checks`` (skills) in order, each against 8: the
        log and the undo's seq."""
        from tests.fights import new_fight

        bo = sheet("bo", side="b", AGI=(8, 2), skills={"Perception": ("INT", 1), "Search": ("INT", 0),
                                                       "Stealth": ("AGI", 2), "Acrobatics": ("AGI", 0)})
        fight = new_fight(sheet("ash"), bo, faces=faces)
        fight.static_check(CheckSpec(who="bo", skill="Perception"), 8)
        fight.undo(reason="fishing")
        undo_seq = fight.version
        for skill in checks:
            fight.static_check(CheckSpec(who="bo", skill=skill), 8)
        return fight.events, undo_seq

    def test_the_roll_made_again_is_paired_by_its_check(self) -> None:
        """An undone Perception check is paired with the next Perception check, not with the Stealth check (d8) nor
        the Search check (the same d6 as Perception) rolled in between to move the roll counter on (found by a
        forging tester: "voided bo's check roll [6] at seq 8; bo's next check roll: [4]", a throwaway Stealth
        roll)."""
        log, undo_seq = self.fished("Stealth", "Search", "Perception", faces=[6, 4, 2, 5])
        rolled = [r.seq for r in log if isinstance(r.event, DiceRolled)]
        [finding] = verify(log).rerolls
        assert finding.what == (f"the undo at seq {undo_seq} voided bo's Perception check roll [6] at seq "
                                f"{rolled[0]}; bo's next Perception check roll: [5] at seq {rolled[3]}")
        assert (finding.expected, finding.found) == (f"[6] at seq {rolled[0]}", f"[5] at seq {rolled[3]}")

    def test_a_contests_roll_is_paired_with_the_next_contests(self) -> None:
        """An undone contest (Bo's Stealth against Ash's Perception) is paired with the next contest's rolls, not with
        a static Stealth check of Bo's rolled in between (the same skill, the same d8: found by a tester, the fished
        gain read as [4] -> [4])."""
        from tests.fights import new_fight

        bo = sheet("bo", side="b", AGI=(8, 2), skills={"Stealth": ("AGI", 2)})
        ash = sheet("ash", skills={"Perception": ("INT", 1)})
        fight = new_fight(ash, bo, faces=[4, 6, 4, 6, 1])
        contest = (CheckSpec(who="bo", skill="Stealth"), CheckSpec(who="ash", skill="Perception"))
        fight.contest(*contest)
        fight.undo(reason="fishing")
        undo_seq = fight.version
        fight.static_check(CheckSpec(who="bo", skill="Stealth"), 8)
        fight.contest(*contest)
        rolled = [r.seq for r in fight.events if isinstance(r.event, DiceRolled)]
        stealth = next(f for f in verify(fight.events).rerolls if "bo's Stealth" in f.what)
        assert stealth.what == (f"the undo at seq {undo_seq} voided bo's Stealth check roll [4] at seq {rolled[0]}; "
                                f"bo's next Stealth check roll: [6] at seq {rolled[3]}")

    def test_ember_fords_undone_attack_is_paired_with_the_attack_declared_again(self) -> None:
        """Ember Ford's undo at seq 90 voided Vesh's hit roll (primary d8 + fcs d6, seq 86) and Skarn's base defense
        (res d8, seq 87): each is paired with the next roll of that roller and purpose on the same dice, Vesh's at seq
        109 and Skarn's at seq 192, though both came in the batch of an answered window (the hit is rolled when the
        defense is answered), as README.md and docs/verify.md show (it said "[5, 3] at seq 209" and "on other
        dice")."""
        report = verify(ember_ford_log())
        assert [f.what for f in report.rerolls] == [
            "the undo at seq 90 voided vesh's hit roll [3, 3] at seq 86; vesh's next hit roll: [7, 4] at seq 109",
            "the undo at seq 90 voided skarn's base defense roll [1] at seq 87; skarn's next base defense roll: [3] "
            "at seq 192"]

    def test_a_roll_on_other_dice_is_named_as_such(self) -> None:
        """An undone sword attack (STR d8 primary + fcs d6) followed by a finesse dagger attack (AGI d6 primary): no
        hit roll on the same dice after the undo, and the dagger's hit roll is named as one on other dice."""
        from tests.fights import new_fight

        dagger = Weapon(id="dagger", weapon_damage=1, properties=frozenset({"finesse"}))
        ash = msgspec.structs.replace(sheet("ash", STR=(8, 0)), weapons=(Weapon(id="sword", weapon_damage=3), dagger),
                                      wielding=("sword", "dagger"))
        fight = new_fight(ash, sheet("bo", side="b"), faces=[6, 5, 1, 1, 1, 6])
        fight.attack("ash", "bo", weapon="sword")
        fight.undo()
        undo_seq = fight.version
        fight.attack("ash", "bo", weapon="dagger")
        rolled = [r.seq for r in fight.events if isinstance(r.event, DiceRolled) and r.event.purpose == "hit"]
        hit = next(f for f in verify(fight.events).rerolls if "hit roll" in f.what)
        assert hit.what == (f"the undo at seq {undo_seq} voided ash's hit roll [6, 5] at seq {rolled[0]}; ash made no "
                            f"hit roll on the same dice after it (ash's next hit roll: [1, 1] at seq {rolled[1]}, on "
                            "other dice)")

    def test_no_roll_of_the_same_check_is_said_so(self) -> None:
        """An undone Perception check followed by a Stealth check only: no Perception check roll after it, and the
        roll that did come is named as what it was."""
        log, undo_seq = self.fished("Stealth", faces=[6, 4])
        rolled = [r.seq for r in log if isinstance(r.event, DiceRolled)]
        [finding] = verify(log).rerolls
        assert finding.what == (f"the undo at seq {undo_seq} voided bo's Perception check roll [6] at seq "
                                f"{rolled[0]}; bo made no Perception check roll after it (bo's next check roll: a "
                                f"Stealth check, [4] at seq {rolled[1]})")
        assert finding.found == "no such roll after it"

    def test_a_check_whose_name_starts_with_a_vowel_takes_an(self) -> None:
        """The roll that came instead is named with the article its check takes: "an Acrobatics check" (it read "a
        AGI check"; found by a tester)."""
        log, _undo_seq = self.fished("Acrobatics", faces=[6, 4])
        [finding] = verify(log).rerolls
        assert "(bo's next check roll: an Acrobatics check, [4] at seq" in finding.what, finding.what

    def test_an_undo_that_voided_no_dice_gives_none(self) -> None:
        """Undoing a condition the GM applied (no dice) gives no undo re-roll, and the log is clean (issue #10,
        5d)."""
        from tests.fights import new_fight

        fight = new_fight(sheet("ash"), sheet("bo", side="b"), faces=[4])
        fight.static_check(CheckSpec(who="ash", attribute="STR"), 3)
        fight.apply_condition("bo", "Prone")
        fight.undo()
        report = verify(fight.events)
        assert len(report.undone) == 1 and report.rerolls == () and report.findings == ()


class TestSeedFromTheLog:
    """Issue #26, item 1: the audit takes the seed from the ``seed_revealed`` it meets in the log (or ``--seed``),
    never from an index beside the log; dice met before the reveal are checked when it comes."""

    def forged_face(self) -> tuple[list[StoredEvent], int]:
        """The seeded log (seed revealed at the end) with its first seeded die changed and the chain re-sealed;
        and the seq of that die."""
        log = seeded_log()
        i = index_of(log, DiceRolled)
        die = log[i].as_(DiceRolled).dice[0]
        forged = msgspec.structs.replace(log[i].event, dice=(msgspec.structs.replace(die, face=die.face % die.sides
                                                                                      + 1),))
        return reseal(log, i, forged), log[i].seq

    def test_a_die_met_before_the_reveal_is_checked_when_it_comes(self) -> None:
        """Every seeded die comes before the reveal: each is held and checked once the seed is met; the forged
        one is a finding at its own seq, and the report says all three were checked."""
        log, seq = self.forged_face()
        report = verify(log)
        assert [f.seq for f in report.problems if f.what.startswith("seeded die")] == [seq]
        assert report.seeded_dice == report.seeded_checked == 3 and report.seed_revealed
        # the die named as a player counts it (it said "seeded die 0 of roll #1": a tester), and as docs/dice.md's
        # seeded_face takes it: the roll's counter as recorded, the die's index from 0 ("(counting from 1)" read as
        # covering the counter too: another tester)
        counter = next(r.as_(DiceRolled).counter for r in log if r.seq == seq)
        assert next(f.what for f in report.problems if f.seq == seq) == (
            f"seeded die 1 of roll #{counter} (seeded_face's counter {counter}, index 0: docs/dice.md)")

    def test_the_crafted_index_forgery_is_caught(self, tmp_path: Path) -> None:
        """The forgery of issue #26: a re-sealed log with one seeded die changed, beside a landmark index that
        covers the log but omits the seed's row. verify reads the seed from the log: the die is caught, and
        ``omen verify`` exits 1 without claiming the dice match."""
        from typer.testing import CliRunner

        from omen_cli import app
        from omen_core.store import JsonlStore
        from omen_replay.verify import verify_store

        log, seq = self.forged_face()
        path = tmp_path / "forged.jsonl"
        JsonlStore.single(path).append("audit", log, 0)
        marks = path.with_name(path.name + ".marks")
        header, *rows = marks.read_text().splitlines(keepends=True)
        assert len(rows) == 1  # the seed's row
        marks.write_text(header)
        assert JsonlStore.single(path).landmarks("audit") == []  # the index says: no seed revealed
        report = verify_store(JsonlStore.single(path), "audit")
        assert [f.seq for f in report.problems if f.what.startswith("seeded die")] == [seq]
        result = CliRunner().invoke(app, ["verify", str(path)])
        assert result.exit_code == 1 and "all match the revealed seed" not in result.stdout
        assert f"seq {seq} [dice] seeded die 1" in result.stdout

    def test_findings_come_in_the_logs_order_in_the_report_the_text_and_the_json(self, tmp_path: Path) -> None:
        """The forged die at seq 5 is found only when the reveal comes, after the check's findings at seq 6: the
        report, ``omen verify`` and ``--json`` list them by seq all the same (5, 6, 6)."""
        import json

        from typer.testing import CliRunner

        from omen_cli import app
        from omen_core.store import JsonlStore

        log, seq = self.forged_face()
        report = verify(log)
        assert seq == 5 and [(f.seq, f.rule) for f in report.findings] == [(5, "dice"), (6, "C16"), (6, "dice")]
        path = tmp_path / "forged.jsonl"
        JsonlStore.single(path).append("audit", log, 0)
        runner = CliRunner()
        said = [line.split(" [")[0].strip() for line in runner.invoke(app, ["verify", str(path)]).stdout.splitlines()
                if line.startswith("  seq ")]
        assert said == ["seq 5", "seq 6", "seq 6"]
        found = json.loads(runner.invoke(app, ["verify", str(path), "--json"]).stdout)["findings"]
        assert [(f["seq"], f["rule"]) for f in found] == [(5, "dice"), (6, "C16"), (6, "dice")]

    def test_a_revealed_seed_that_does_not_match_checks_no_die(self) -> None:
        """A reveal re-sealed with another seed: one finding (it does not match the commitment), and no die is
        checked against it (the report says none was)."""
        from omen_core.events import SeedRevealed

        log = seeded_log()
        i = index_of(log, SeedRevealed)
        report = verify(reseal(log, i, SeedRevealed(seed="ab" * 32)))
        dice = [f for f in report.problems if f.rule == "dice"]
        assert [f.seq for f in dice] == [log[i].seq] and "does not match the commitment" in dice[0].what
        assert report.seeded_checked == 0 and not report.seed_revealed

    def test_a_given_seed_checks_the_dice_of_an_unrevealed_log(self) -> None:
        """--seed before the reveal: each die is checked as it is met."""
        log = seeded_log(reveal=False)
        assert verify(log).seeded_checked == 0
        report = verify(log, seed=SEED)
        assert report.clean and report.seeded_checked == report.seeded_dice == 3


def seeded_fight_with_typed_dice() -> list[StoredEvent]:
    """A seeded fight in which the GM types in physical dice for one check (its command carries the face 6)."""
    from omen_core.commands import StaticCheck

    fight = Fight.start(MemoryStore(), "typed", dice=SeededDice(SEED), clock=lambda: 0)
    fight.join(sheet("kael"))
    fight.static_check(CheckSpec(who="kael", attribute="STR"), 3)
    fight.execute(StaticCheck(check=CheckSpec(who="kael", attribute="STR"), difficulty=3, dice=(6,)))
    fight.static_check(CheckSpec(who="kael", attribute="AGI"), 3)
    fight.reveal_seed()
    return fight.events


class TestDiceProvenance:
    """Issue #26, item 2: a fight states its dice at the start; each die of another source and each change of the
    dice source is a finding of its own kind, listed (never hidden), failing only ``--strict``."""

    def test_a_die_typed_in_a_seeded_fight_is_listed(self) -> None:
        """The typed check's die (manual, its face carried by the command) is one provenance finding at its seq;
        the log is clean (the engine allows it) but not strictly clean; the seeded dice still check out."""
        log = seeded_fight_with_typed_dice()
        typed = [r for r in log if isinstance(r.event, DiceRolled) and r.event.source == "manual"]
        report = verify(log)
        assert report.clean and not report.strict_clean and report.dice == "seeded"
        assert [(f.seq, f.kind, f.expected, f.found) for f in report.provenance] == [
            (typed[0].seq, "dice provenance", "seeded", "manual")]
        assert "kael's check roll [6] is manual in a fight whose dice are seeded" in report.provenance[0].what
        assert report.seeded_checked == report.seeded_dice == 2

    def test_a_change_of_source_and_each_die_after_it_are_listed(self) -> None:
        """A seeded fight reloaded with physical dice records dice_source_changed: the change is listed, and so
        is every manual die after it."""
        from omen_core import ManualDice
        from omen_core.events import DiceSourceChanged

        store = MemoryStore()
        Fight.start(store, "mix", dice=SeededDice(SEED), clock=lambda: 0).join(sheet("kael"))
        again = Fight.load(store, "mix", dice=ManualDice(lambda req: [4 for _ in req.pool]), clock=lambda: 0)
        again.static_check(CheckSpec(who="kael", attribute="STR"), 3)
        again.static_check(CheckSpec(who="kael", attribute="AGI"), 3)
        log = list(store.read("mix"))
        report = verify(log)
        change = next(r.seq for r in log if isinstance(r.event, DiceSourceChanged))
        manual = [r.seq for r in log if isinstance(r.event, DiceRolled)]
        assert report.clean and [f.seq for f in report.provenance] == [change, *manual]
        assert "the dice source changed from seeded to manual" in report.provenance[0].what

    def test_faces_a_scripted_or_manual_fight_carries_are_no_finding(self) -> None:
        """In a scripted fight the faces every command carries are the fight's own dice: nothing is listed."""
        assert verify(tamper_fight()).findings == ()

    def test_the_cli_lists_them_and_strict_fails(self, tmp_path: Path) -> None:
        """``omen verify`` lists the provenance finding and exits 0; ``--strict`` exits 1; ``--json`` gives it with
        its kind, and ``clean`` true beside ``strict_clean`` false; the session log's verdict names it."""
        import json

        from typer.testing import CliRunner

        from omen_cli import app
        from omen_core.store import JsonlStore

        path = tmp_path / "typed.jsonl"
        JsonlStore.single(path).append("typed", seeded_fight_with_typed_dice(), 0)
        runner = CliRunner()
        plain = runner.invoke(app, ["verify", str(path)])
        assert plain.exit_code == 0 and "dice provenance: seq" in plain.stdout
        assert "1 dice provenance finding(s) listed above (--strict fails on them)" in " ".join(plain.stdout.split())
        assert runner.invoke(app, ["verify", str(path), "--strict"]).exit_code == 1
        found = json.loads(runner.invoke(app, ["verify", str(path), "--json"]).stdout)
        assert found["clean"] and not found["strict_clean"] and found["dice"] == "seeded"
        assert [f["kind"] for f in found["findings"]] == ["dice provenance"]
        for fmt in ("text", "md", "html"):
            page = runner.invoke(app, ["log", str(path), "--format", fmt]).stdout
            assert "1 dice provenance finding(s) to review" in page and "is manual in a fight whose dice are" \
                in page, fmt


def test_the_session_log_of_a_broken_log_is_written_and_counts_its_findings(tmp_path: Path) -> None:
    """Ember Ford with seq 40's hash changed: omen log writes the session log all the same and exits 0, its verdict
    counting the 2 integrity findings (seq 40's hash, seq 41's prev_hash), while omen verify lists them and exits 1
    (README's exit codes, docs/fixtures.md "Session logs")."""
    from typer.testing import CliRunner

    from omen_cli import app

    lines = (Path(__file__).resolve().parents[2] / "fixtures" / "ember-ford" / "fight.jsonl").read_bytes().splitlines(
        keepends=True)
    head, rest = lines[39].split(b'"hash":"')
    lines[39] = head + b'"hash":"' + (b"1" if rest[:1] == b"0" else b"0") + rest[1:]
    path = tmp_path / "broken.jsonl"
    path.write_bytes(b"".join(lines))
    runner = CliRunner()
    page = runner.invoke(app, ["log", str(path)])
    assert page.exit_code == 0 and page.stdout.rstrip().endswith("2 finding(s): see omen verify")
    audit = runner.invoke(app, ["verify", str(path)])
    assert audit.exit_code == 1 and "2 finding(s) in fight 'ember-ford'" in audit.stdout


# -- seeds after a reveal: each die against the commitment it was drawn under (C42) ------------------------------

NEXT_SEED = bytes(range(64, 96))


def two_epochs(second_reveal: bool = True, second_check: bool = True) -> list[StoredEvent]:
    """A seeded fight whose seed is revealed mid-fight (C42: a fresh seed committed to in the same command), with
    a check rolled under each seed (under the fresh seed only if ``second_check``); the fresh seed revealed at the
    end if ``second_reveal``."""
    fight = Fight.start(MemoryStore(), "audit", dice=SeededDice(SEED, [NEXT_SEED]), clock=lambda: 0)
    fight.join(sheet("kael", AGI=(20, 1), skills={"Climb": ("STR", 2)}))
    fight.join(sheet("vesh", side="raiders", INT=(12, 2)))
    fight.static_check(CheckSpec(who="kael", skill="Climb"), 5)
    fight.reveal_seed()
    if second_check:
        fight.static_check(CheckSpec(who="kael", skill="Climb"), 5)
    fight.end_fight("gm")
    if second_reveal:
        fight.reveal_seed()
    return fight.events


def last_roll(log: list[StoredEvent]) -> int:
    """The index of the last roll of a log."""
    return max(i for i, r in enumerate(log) if isinstance(r.event, DiceRolled))


class TestSeedEpochs:
    def test_each_die_is_checked_against_the_seed_it_was_drawn_under(self) -> None:
        """C42: the die rolled before the mid-fight reveal checks against the first seed, the one after it
        against the fresh seed revealed at the end: clean, both dice checked, every seed known."""
        report = verify(two_epochs())
        assert report.clean and report.seeded_checked == 2 and report.seeded_dice == 2 and report.seed_revealed

    def test_a_forged_die_under_the_fresh_seed_is_caught_once_it_is_revealed(self) -> None:
        """C42: a die of the second seed's epoch changed (the chain re-sealed) is a dice finding at its seq."""
        log = two_epochs()
        i = last_roll(log)
        die = log[i].as_(DiceRolled).dice[0]  # Kael's STR d6: another face is face % 6 + 1
        forged = msgspec.structs.replace(log[i].event, dice=(msgspec.structs.replace(die, face=die.face % 6 + 1),))
        findings = verify(reseal(log, i, forged)).findings
        assert any(f.seq == log[i].seq and f.rule == "dice" and "seeded die" in f.what for f in findings)

    def test_the_fresh_seeds_dice_wait_for_its_reveal(self) -> None:
        """C42: before the fresh seed is revealed its dice cannot be checked: the first epoch's die is, the second's
        is held, and the audit says not every seed is known."""
        report = verify(two_epochs(second_reveal=False))
        assert report.clean and report.seeded_checked == 1 and report.seeded_dice == 2 and not report.seed_revealed

    def test_the_words_say_which_dice_were_checked_and_which_wait(self) -> None:
        """C42: the summary of a fight whose fresh seed is not revealed yet says 1 of 2 dice checked and 1 waiting
        for its seed (it said "2 seeded dice not checked: the seed has not been revealed"); both revealed, all
        match; the session log's verdict says the same."""
        waiting = verify(two_epochs(second_reveal=False))
        assert waiting.seeded_words() == ("1 of 2 seeded dice match the seed revealed; 1 not checked: drawn under a "
                                          "seed not revealed yet (C42)")
        assert verify(two_epochs()).seeded_words() == "2 seeded dice all match the revealed seed"
        assert verify(two_epochs()[:1]).seeded_words() == "no seeded dice (seeded dice)"
        page = render_records(two_epochs(second_reveal=False), "text")
        assert "; 1 of 2 seeded dice match the seed revealed; 1 not checked" in " ".join(page.split())

    def test_a_seed_given_checks_the_epoch_it_commits_to(self) -> None:
        """C42: --seed with the fresh seed, before it is revealed, checks the dice drawn under it, and the verdict says
        the seed given matched (``seed_given``)."""
        report = verify(two_epochs(second_reveal=False), seed=NEXT_SEED)
        assert report.clean and report.seeded_checked == 2 and report.seed_revealed
        # the first die matches the seed the log reveals, the second the seed given, which the log never reveals
        assert report.seed_given and report.seeded_checked_given == 1
        assert report.seeded_words() == ("2 seeded dice all match their seeds: 1 a seed revealed in the log, 1 the "
                                         "seed given (--seed)")
        assert not verify(two_epochs()).seed_given

    def test_the_words_count_the_dice_each_seed_checked(self) -> None:
        """--seed with the fresh seed checks 1 die, the seed the log reveals the other: the summary counts each (it
        said all 2 "match the seed given"); the seed given only for the dice it checks, none if the log reveals it
        too (then the summary says so, where it said "the revealed seed" with seed_given true and no word of it);
        only the seed given (a log that reveals none) and none given keep their words."""
        given_first = verify(two_epochs(), seed=SEED)
        assert (given_first.seed_given, given_first.seeded_checked, given_first.seeded_checked_given) == (True, 2, 0)
        assert given_first.seeded_words() == ("2 seeded dice all match the revealed seed (the seed given, --seed, is "
                                              "one the log reveals)")
        waiting = verify(two_epochs(second_reveal=False), seed=SEED)
        assert waiting.seeded_words() == ("1 of 2 seeded dice match the seed revealed (the seed given, --seed, is one "
                                          "the log reveals); 1 not checked: drawn under a seed not revealed yet (C42)")

    def test_a_fresh_seed_with_no_die_drawn_yet_is_not_called_revealed(self) -> None:
        """docs/verify.md, C42: --seed with the fresh seed of a fight that went on after a reveal, no die drawn
        under it yet, matches a commitment the log does not reveal: the words say so (they said "all match the
        revealed seed (the seed given, --seed, is one the log reveals)"), and ``seed_given_revealed`` is false;
        the first seed given, which the log reveals, keeps its words and is true."""
        report = verify(two_epochs(second_reveal=False, second_check=False), seed=NEXT_SEED)
        assert (report.seed_given, report.seeded_checked, report.seeded_checked_given) == (True, 1, 0)
        assert report.seed_given_revealed is False
        assert report.seeded_words() == ("1 seeded dice all match the revealed seed; the seed given (--seed) matches "
                                         "the fresh commitment after the reveal (C42), which the log does not "
                                         "reveal: no die was drawn under it yet")
        assert verify(two_epochs(), seed=SEED).seed_given_revealed is True

    def test_no_die_waiting_for_the_fresh_seed_is_not_counted_as_zero(self) -> None:
        """C42: a fight that went on after a reveal with no die drawn under its fresh seed yet says every die
        matches and none waits (it said "1 of 1 ... match; 0 not checked: drawn under a seed not revealed yet")."""
        report = verify(two_epochs(second_reveal=False, second_check=False))
        assert (report.seed_revealed, report.seeded_checked, report.seeded_dice) == (False, 1, 1)
        assert report.seeded_words() == ("1 seeded dice all match the seed revealed; none was drawn yet under the "
                                         "fresh seed committed to after it, not revealed yet (C42)")

    def test_seed_given_revealed_is_left_out_without_a_seed_given(self) -> None:
        """``seed_given_revealed`` is in the report's JSON only where a seed given (--seed) matched a commitment:
        an audit without --seed encodes as it did."""
        assert b"seed_given_revealed" not in msgspec.json.encode(verify(two_epochs()))
        assert b'"seed_given_revealed":true' in msgspec.json.encode(verify(two_epochs(), seed=SEED))

    def test_the_cli_says_what_the_json_counts(self, tmp_path: Path) -> None:
        """``omen verify --seed`` with the fresh seed says 1 die matched the seed revealed, 1 the seed given, and its
        --json carries the same counts (seeded_checked 2, seeded_checked_given 1, seed_given true)."""
        import json

        from typer.testing import CliRunner

        from omen_cli import app
        from omen_core.events import encode_line

        path = tmp_path / "epochs.jsonl"
        path.write_bytes(b"".join(encode_line(r) + b"\n" for r in two_epochs(second_reveal=False)))
        said = CliRunner().invoke(app, ["verify", str(path), "--seed", NEXT_SEED.hex()])
        assert said.exit_code == 0 and ("2 seeded dice all match their seeds: 1 a seed revealed in the log, 1 the seed "
                                        "given (--seed)") in " ".join(said.stdout.split())
        found = json.loads(CliRunner().invoke(app, ["verify", str(path), "--seed", NEXT_SEED.hex(), "--json"]).stdout)
        assert (found["seeded_checked"], found["seeded_checked_given"], found["seed_given"]) == (2, 1, True)

    def test_a_seed_given_that_commits_to_nothing_is_a_finding(self) -> None:
        """A seed given that hashes to none of the fight's commitments is a dice finding about the log as a whole,
        said so (not "seq 0", which no log holds), and checks no die."""
        from omen_replay.verify import finding_words

        report = verify(two_epochs(second_reveal=False), seed=bytes(32))
        found = [f for f in report.findings if f.rule == "dice" and "matches no commitment" in f.what]
        assert found and finding_words(found[0]).startswith("the log as a whole [dice] the seed given (--seed) "
                                                            "matches no commitment")  # it said "seq 0": a tester

    def test_a_fresh_commitment_swapped_afterwards_is_a_finding(self) -> None:
        """C42: a seed_committed rewritten to another seed's hash (the chain re-sealed) no longer matches the
        reveal command decided again (its next_commitment): a finding at that seq."""
        log = two_epochs()
        i = next(k for k, r in enumerate(log) if isinstance(r.event, SeedCommitted))
        forged = msgspec.structs.replace(log[i].event, commitment=commitment(bytes(32)))
        report = verify(reseal(log, i, forged))
        assert not report.clean and any(f.seq == log[i].seq for f in report.findings)


def test_recorded_at_is_checked_against_nothing() -> None:
    """docs/verify.md ("does not prove": found by a forging tester): each event's recorded_at is sealed into its
    hash but checked against nothing: a log re-sealed with its times reversed (the last event written in 1970, the
    first a day later) passes with the seed and --strict."""
    log = seeded_log()
    out: list[StoredEvent] = []
    prev = "0" * 64
    for n, rec in enumerate(log):
        out.append(seal(rec.fight_id, rec.seq, 86_400_000 - n, prev, rec.event, rec.batch, rec.batch_size, rec.salt))
        prev = out[-1].hash
    assert [r.recorded_at for r in out[:2]] == [86_400_000, 86_399_999]
    assert verify(out, seed=SEED).strict_clean


def test_a_finding_says_only_the_values_it_has() -> None:
    """A finding with only what was found, or only what was expected, says that one alone (found by a forging
    tester: "(expected , found command_issued)"); with both, both; with neither, nothing."""
    from omen_replay.verify import finding_words

    assert finding_words(Finding(seq=7, rule="dice", what="w", found="f")) == "seq 7 [dice] w (found f)"
    assert finding_words(Finding(seq=7, rule="dice", what="w", expected="e")) == "seq 7 [dice] w (expected e)"
    assert finding_words(Finding(seq=7, rule="dice", what="w", expected="e", found="f")) == \
        "seq 7 [dice] w (expected e, found f)"
    assert finding_words(Finding(seq=7, line=3, rule="dice", what="w")) == "seq 7, line 3 [dice] w"


def spent_again(alter: bool = False) -> list[StoredEvent]:
    """The forgery of C42 a tester wrote with an omen that allowed it: a seed revealed mid-fight whose fresh
    commitment is the revealed seed's own (the reveal's command and its seed_committed rewritten, the chain re-sealed),
    then a check rolled under that spent seed (its die's face moved on by one if ``alter``)."""
    log = two_epochs(second_reveal=False, second_check=False)
    i = next(k for k, r in enumerate(log) if isinstance(r.event, SeedCommitted))
    log = log[:i + 1]  # up to the reveal (the end of the fight left out)
    spent = commitment(SEED)
    issued = log[i].batch - 1
    command = log[issued].as_(CommandIssued).command
    log = reseal(log, issued, msgspec.structs.replace(log[issued].event, command=msgspec.structs.replace(
        command, next_commitment=spent)))
    log = reseal(log, i, SeedCommitted(commitment=spent))
    store = MemoryStore()
    store.append("audit", log, 0)
    fight = Fight.load(store, "audit", dice=SeededDice(SEED), clock=lambda: 0)  # the dice of the spent seed
    fight.static_check(CheckSpec(who="kael", skill="Climb"), 5)
    out = fight.events
    if alter:
        k = last_roll(out)
        die = out[k].as_(DiceRolled).dice[0]
        out = reseal(out, k, msgspec.structs.replace(out[k].event, dice=(msgspec.structs.replace(
            die, face=die.face % 6 + 1),)))
    return out


class TestASpentSeedCommittedAgain:
    def test_a_fresh_commitment_that_repeats_the_revealed_one_is_a_finding(self) -> None:
        """C42 (found by a forging tester: verify said 0 findings and "3 not checked: drawn under a seed not revealed
        yet" though the log reveals that seed): a seed_committed equal to the commitment of the seed revealed just
        before is a C42 finding at its seq, and the reveal's command decided again is refused."""
        log = spent_again()
        committed = next(r.seq for r in log if isinstance(r.event, SeedCommitted))
        report = verify(log)
        assert not report.clean
        assert [(f.seq, f.rule, f.found) for f in report.findings if f.seq == committed] == [
            (committed, "C42", commitment(SEED))]
        assert f"is the seed revealed at seq {committed - 1}:" in next(f for f in report.findings
                                                                       if f.seq == committed).what
        refused = [f for f in report.findings if "the rules refuse this command here" in f.what]
        assert [(f.seq, f.rule, f.expected, f.found) for f in refused] == [
            (committed - 2, "C42", "a command the rules accept here", "reveal_seed")]

    def test_the_dice_drawn_under_it_again_are_checked_against_the_revealed_seed(self) -> None:
        """C42: the dice of the repeated commitment are checked against the seed the log reveals (both dice, every
        seed known), none "drawn under a seed not revealed yet"; one altered is a dice finding at its seq."""
        report = verify(spent_again())
        assert (report.seeded_dice, report.seeded_checked, report.seed_revealed) == (2, 2, True)
        assert report.seeded_words() == "2 seeded dice all match the revealed seed"
        altered = spent_again(alter=True)
        seq = altered[last_roll(altered)].seq
        assert [f.seq for f in verify(altered).findings if "seeded die" in f.what] == [seq]

    def test_the_seed_given_is_said_to_be_one_the_log_reveals(self) -> None:
        """C42: --seed with the spent seed checks no die as "given only" (seeded_checked_given 0) and is one the log
        reveals (it said seeded_checked_given 3 with seed_given_revealed true, contradicting docs/verify.md)."""
        report = verify(spent_again(), seed=SEED)
        assert (report.seed_given, report.seed_given_revealed, report.seeded_checked, report.seeded_checked_given) \
            == (True, True, 2, 0)


def fifth_line_versioned(version: int) -> list[bytes]:
    """The seeded log's lines, re-sealed from the fifth on, the fifth saying schema version ``version``."""
    from omen_core.events import SCHEMA_VERSION, chain_hash, encode_line

    lines = [encode_line(rec) + b"\n" for rec in seeded_log()]
    tail = len(',"hash":""}\n') + 64
    prev = lines[3][-tail + len(',"hash":"'):-3].decode()
    forged = lines[:4]
    for n, line in enumerate(lines[4:], 5):
        body = re.sub(rb'"prev_hash":"[0-9a-f]{64}"', f'"prev_hash":"{prev}"'.encode(), line[:-tail] + b"}")
        if n == 5:
            body = body.replace(f'"schema_version":{SCHEMA_VERSION}'.encode(), f'"schema_version":{version}'.encode())
        prev = chain_hash(prev, body)
        forged.append(body[:-1] + f',"hash":"{prev}"}}\n'.encode())
    return forged


def relabelled(version: int, edit: Callable[[int, bytes], bytes] = lambda _n, body: body) -> list[bytes]:
    """The seeded log's lines, each saying schema version ``version`` and edited by ``edit(line number, body)``,
    the chain re-sealed throughout, as a forger picking an older version would."""
    from omen_core.events import SCHEMA_VERSION, chain_hash, encode_line

    tail = len(',"hash":""}\n') + 64
    prev, forged = "0" * 64, []
    for n, line in enumerate((encode_line(rec) + b"\n" for rec in seeded_log()), 1):
        body = re.sub(rb'"prev_hash":"[0-9a-f]{64}"', f'"prev_hash":"{prev}"'.encode(), line[:-tail] + b"}")
        body = edit(n, body.replace(f'"schema_version":{SCHEMA_VERSION}'.encode(),
                                    f'"schema_version":{version}'.encode()))
        prev = chain_hash(prev, body)
        forged.append(body[:-1] + f',"hash":"{prev}"}}\n'.encode())
    return forged


def test_a_name_given_twice_in_a_line_of_an_older_version_is_a_finding() -> None:
    """docs/verify.md check 1: a log relabelled schema version 4 (re-sealed) is not held to today's written form,
    which it predates (white space between names passes); but a die's face given twice in one object, which readers
    take differently (the first, the last), is a format finding at its line (it verified clean, exit 0: a tester)."""
    assert verify_lines(relabelled(4)).clean
    spaced = relabelled(4, lambda n, body: body.replace(b',"seq":', b', "seq":') if n == 7 else body)
    assert verify_lines(spaced).clean
    roll = next(n for n, line in enumerate(relabelled(4), 1) if b'"face":' in line)

    def twice(n: int, body: bytes) -> bytes:
        return re.sub(rb'"face":(\d+)', rb'"face":\1,"face":\1', body, count=1) if n == roll else body
    assert [(f.seq, f.line, f.rule, f.what) for f in verify_lines(relabelled(4, twice)).problems] == [
        (roll, roll, "format", "$.event.dice[0].face is given twice in one object (readers differ on which counts): "
                               "a line of schema version 4 is not held to today's written form, but to one value "
                               "per name")]


def test_a_schema_version_that_goes_back_mid_log_is_a_finding() -> None:
    """A re-sealed log whose fifth line says an older schema version than the lines before it (no writer appends
    under an older version than the log's: found by a tester) is a format finding at that seq; the log as written
    is clean."""
    from omen_core.events import SCHEMA_VERSION, encode_line

    assert verify_lines([encode_line(rec) + b"\n" for rec in seeded_log()]).clean
    found = [(f.seq, f.rule, f.what) for f in verify_lines(fifth_line_versioned(SCHEMA_VERSION - 1)).problems]
    assert (5, "format", f"schema version {SCHEMA_VERSION - 1} after {SCHEMA_VERSION}: a log's versions never go "
            "back") in found


def test_a_log_a_newer_omen_wrote_is_refused_not_reported_line_by_line() -> None:
    """Every line re-sealed as schema version SCHEMA_VERSION + 1 (a newer omen's log): the audit refuses it with
    one error naming the version (NewerLog, exit 2 from the CLI), not a finding per line (exit 1)."""
    from omen_core.errors import NewerLog
    from omen_core.events import SCHEMA_VERSION, chain_hash, encode_line

    prev, lines = "0" * 64, []
    for rec in seeded_log():
        line = encode_line(rec)
        body = re.sub(rb'"prev_hash":"[0-9a-f]{64}"', f'"prev_hash":"{prev}"'.encode(),
                      line[:line.rindex(b',"hash":')] + b"}").replace(
            f'"schema_version":{SCHEMA_VERSION}'.encode(), f'"schema_version":{SCHEMA_VERSION + 1}'.encode())
        prev = chain_hash(prev, body)
        lines.append(body[:-1] + f',"hash":"{prev}"}}\n'.encode())
    with pytest.raises(NewerLog, match=f"schema version {SCHEMA_VERSION + 1} is newer than {SCHEMA_VERSION}"):
        verify_lines(lines)


class TestDamagedEnds:
    """A log that stops short (a torn batch, a torn tail, a store row it cannot read) or holds a line a newer omen
    wrote: one finding saying so, not a string of findings that follow from it."""

    def test_a_sqlite_row_stored_as_text_is_a_format_finding_not_a_traceback(self, tmp_path: Path) -> None:
        """A real SQLite file whose fifth row an edit stored as TEXT (``CAST(line AS TEXT)``) is audited up to it:
        a format finding naming the row and its type, and the batch it cut short, which no crash leaves in SQLite
        (its rows edited outside omen: copy the whole commands before it out); no TypeError."""
        import sqlite3

        from omen_core.store import SqliteStore
        from omen_replay.verify import verify_store

        path = tmp_path / "fights.db"
        with SqliteStore(path) as store:
            store.append("audit", seeded_log(), 0)
            with contextlib.closing(sqlite3.connect(path)) as conn:
                conn.execute("UPDATE events SET line = CAST(line AS TEXT) WHERE seq = 5")
                conn.commit()
            report = verify_store(store, "audit")
        assert [(f.seq, f.rule, f.what) for f in report.findings] == [  # in the log's order (docs/verify.md)
            (4, "batch", "torn batch: the command starting at seq 4 wrote 1 of its 3 events: this store writes each "
                         "command's events in one transaction, so no crash leaves part of one: its rows were removed "
                         "or edited outside omen (omen repair is for JSON Lines logs); copy the whole commands before "
                         "it to another store (omen copy SRC DST --fight audit --to 3) or restore this store from a "
                         "backup"),
            (5, "format", "the store cannot read on: row seq 5 holds its line as TEXT, not as the BLOB omen writes "
                          "(an edited row)")]
        assert report.events == 4 and report.redecided == 3

    def test_a_torn_batch_is_not_decided_again(self) -> None:
        """A seeded log cut after the first event of the save's seven-event batch has the one torn-batch finding:
        the batch is not decided again (its dice ran out where the log stops), its events recomputed one by one."""
        lines = [encode_line(r) + b"\n" for r in seeded_log()]
        report = verify_lines(lines[:10])
        assert [(f.seq, f.rule, f.what) for f in report.findings] == [
            (10, "batch", "torn batch: the command starting at seq 7 wrote 4 of its 7 events (a crash mid-write; omen "
                          "repair removes it)")]
        assert report.redecided == 4

    def test_a_torn_tail_adds_no_re_decision_finding(self) -> None:
        """The last line cut mid-write: the torn tail and the torn batch it leaves, nothing else."""
        lines = [encode_line(r) + b"\n" for r in seeded_log()]
        report = verify_lines([*lines[:12], lines[12][:-40]])
        assert [(f.seq, f.rule) for f in report.findings] == [(12, "batch"), (13, "format")]

    def test_a_torn_tail_is_said_as_omen_verify_says_it_of_a_file(self, tmp_path: Path) -> None:
        """docs/fixtures.md (a broken fixture's findings "as `omen verify` says it"): the audit of a torn log's
        lines has the very findings the audit of the same bytes as a file has (seq, line, rule, words: "the last
        line (N bytes) was cut off mid-write"), where it said the torn tail in words of its own."""
        from omen_core.store import JsonlStore
        from omen_replay.verify import verify_store

        lines = [encode_line(r) + b"\n" for r in seeded_log()]
        torn = [*lines[:12], lines[12][:-40]]
        (tmp_path / "torn.jsonl").write_bytes(b"".join(torn))
        report = verify_lines(torn)
        assert report.findings == verify_store(JsonlStore.single(tmp_path / "torn.jsonl"), "audit").findings
        tail = next(f for f in report.findings if f.rule == "format")
        assert (tail.seq, tail.line, tail.what) == (
            13, 13, f"torn tail: the last line ({len(lines[12]) - 40} bytes) was cut off mid-write; earlier events "
                    "are intact")

    def test_an_event_missing_at_a_batch_end_says_nothing_was_found(self) -> None:
        """A re-sealed log without the check's result (the last event of its batch, the batch size made to fit):
        the re-decision says the rules go on, and that the log has nothing there (not an empty "found")."""
        report = verify(rechain([r for r in seeded_log() if r.seq != 6]))
        assert [(f.seq, f.rule, f.expected, f.found) for f in report.findings] == [
            (5, "C16", "static_check_resolved", "nothing (the batch ends here)")]

    def test_one_line_of_a_newer_schema_mid_log_is_one_finding(self) -> None:
        """A re-sealed log whose fifth line says schema version SCHEMA_VERSION + 1: one finding at that line; the
        lines after it are compared with the last version this omen reads, not reported as going back."""
        assert [(f.seq, f.rule, f.what) for f in verify_lines(fifth_line_versioned(SCHEMA_VERSION + 1)).problems] == [
            (5, "format", f"schema version {SCHEMA_VERSION + 1} is newer than {SCHEMA_VERSION}: upgrade omen to read "
                          "it")]


V1_LOG = Path(__file__).resolve().parents[2] / "fixtures" / "formats" / "v1-ember-ford" / "fight.jsonl"


def v1_resealed(edit: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> list[bytes]:
    """The schema-version-1 Ember Ford fixture edited by ``edit`` (its lines as JSON objects) and re-sealed as a
    careful forger would: seqs renumbered, each run of one original batch made a batch again, every hash
    recomputed (the unedited log re-sealed this way is its own bytes)."""
    import hashlib
    import json

    out = [dict(e, seq=n) for n, e in enumerate(edit([json.loads(line) for line in V1_LOG.read_bytes()
                                                      .splitlines()]), 1)]
    for n, e in enumerate(out):
        runs = n and out[n - 1]["_batch"] == e["batch"]
        e["_batch"], e["batch"] = e["batch"], out[n - 1]["batch"] if runs else e["seq"]
    prev, lines = "0" * 64, []
    for e in out:
        del e["_batch"], e["hash"]
        e["prev_hash"] = prev
        body = json.dumps(e, separators=(",", ":"), ensure_ascii=False).encode()
        prev = hashlib.sha256(bytes.fromhex(prev) + body).hexdigest()
        lines.append(body[:-1] + f',"hash":"{prev}"}}\n'.encode())
    return lines


def _v1_insert_refill(log: list[dict[str, Any]]) -> list[dict[str, Any]]:
    copy = dict(log[171], batch=log[98]["batch"])  # vesh's refill (seq 172) in brin's turn, after brin's refill
    return [*log[:99], copy, *log[99:]]


class TestSchemaVersionOne:
    """A log of schema version 1 records no commands, so nothing can be decided again: it is audited event by event,
    and the report says so. Each edit below, re-sealed, verified clean before these checks (found by a tester)."""

    def test_the_re_sealer_gives_the_fixture_byte_for_byte(self) -> None:
        """Re-sealing the unedited fixture gives its own bytes: a forgery below differs only by its edit."""
        assert b"".join(v1_resealed(list)) == V1_LOG.read_bytes()

    def test_the_fixture_is_audited_event_by_event_and_its_dying_turns_found(self) -> None:
        """The fixture, recorded before C36, is sound but for the three turns the Dying Brin and Skarn take (the
        same three the versions 3 and 4 of the fight are found to take, decided again); the report says which audit
        it got: its 5 set-up batches decided again, its 47 others event by event."""
        from tests.fights import TURNS_BEFORE_C36_V1, unsound_turns

        report = verify_lines(V1_LOG.read_bytes().splitlines(keepends=True))
        assert unsound_turns(report.problems) == TURNS_BEFORE_C36_V1
        assert {f.rule for f in report.problems} == {"C36"}
        assert (report.redecided, report.event_by_event) == (5, 47)
        assert report.audit == "event by event (schema version 1: no commands recorded)"
        assert report.notes[-1] == ("audited event by event (schema version 1: no commands recorded); docs/verify.md "
                                    "says what a re-sealed log of schema version 1 can fake")

    def test_a_log_cut_just_after_a_turn_started_is_no_c20_finding(self) -> None:
        """The fixture cut right after brin's turn_started (seq 98, its refill the next line of the same batch): a
        version-1 line carries no batch_size, so a batch cut short cannot be told (docs/verify.md); the missing refill
        is not reported as a breach of C20 (found by a tester), and the prefix is clean."""
        lines = V1_LOG.read_bytes().splitlines(keepends=True)[:98]
        assert b'"turn_started"' in lines[-1]
        report = verify_lines(lines)
        assert report.clean, report.problems

    @pytest.mark.parametrize(("edit", "found"), [
        (_v1_insert_refill,
         [(100, "C20", "vesh's Bonus Actions refilled where vesh's turn does not start"),
          (100, "C20", "vesh's Bonus Actions before the refill"),
          (173, "C20", "vesh's Bonus Actions before the refill")]),
        (lambda log: [*log[:266], log[265], *log[266:]],
         [(267, "C20, C22", "kael pays the attack cost of action 18 (1 action) a second time (first paid at seq "
                            "266)"),
          (267, "C20, C22", "kael pays 1 action for attack with 0 left")]),
        (lambda log: [*log[:171], *log[172:]],
         [(171, "C20", "vesh's turn starts with 0 Bonus Action(s) of 2, and no bonus_actions_refilled follows"),
          (214, "C20, C22", "vesh pays 2 bonus_action for interrupt with 0 left"),
          (239, "C20", "vesh's Bonus Actions before the refill")]),
        (lambda log: [*log[:36], log[37], log[36], *log[38:]],
         [(38, "lifecycle", "a condition_applied of action 1, which is not in progress here (it settled, or was "
                            "never declared)")]),
    ], ids=["insert-refill", "dup-cost", "drop-refill", "swap"])
    def test_a_re_sealed_edit_is_caught_event_by_event(self, edit: Callable[[list[dict[str, Any]]],
                                                                           list[dict[str, Any]]],
                                                       found: list[tuple[int, str, str]]) -> None:
        """A refill copied into another's turn (its ``before`` false), a cost paid twice for one action (and more
        than the turn had left), a refill dropped from a turn start (a Bonus Action cost later paid with none
        left), a condition moved after its action settled: each an integrity finding naming the seq and rule (C20,
        C22, the lifecycle), besides the Dying turns the fixture has."""
        report = verify_lines(v1_resealed(edit))
        dying = "the rules give turn_skipped here where the log has turn_started"
        assert [(f.seq, f.rule, f.what) for f in report.problems if f.what != dying] == found


def test_a_long_events_difference_is_quoted_where_it_lies_its_cuts_marked() -> None:
    """A finding quotes at most CLIP characters of an event's JSON: around where the two sides first differ, each
    cut marked "…" (it was cut at 400 characters, mid-object and unmarked, before the difference: a tester); a
    short one whole."""
    from omen_replay.verify import CLIP, _clipped

    head = '{"type":"hit_determined","terms":"' + "x" * 600
    wanted, have = head + '","hit":true}', head + '","hit":false}'
    quoted = _clipped(wanted, have)
    assert quoted.startswith("…") and quoted.endswith('"hit":true}') and len(quoted) == CLIP + 1
    assert _clipped(have, wanted).endswith('"hit":false}')
    middle = _clipped("y" * 300 + "A" + "y" * 900, "y" * 300 + "B" + "y" * 900)
    assert middle.startswith("…") and middle.endswith("…") and "A" in middle and len(middle) == CLIP + 2
    assert _clipped('{"a":1}', '{"a":2}') == '{"a":1}'


def test_a_sheet_listing_an_extension_not_installed_here_is_noted(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/extensions.md ("Verifying and replaying a fight with an extension"): Brin's sheet lists arcane_ward, a
    Python extension; audited where it is installed, the log verifies with no note; where it is not (the registry
    emptied), a note names the sheet, the id and why the findings after it may come from that alone (they read like
    tampering: a roster refusal, decisions decided otherwise, a defense's terms)."""
    from types import MappingProxyType

    import omen_core.extensions

    brin = msgspec.structs.replace(sheet("brin"), abilities=("arcane_ward",))
    fight = Fight.start(MemoryStore(), "f", dice=ScriptedDice([]), clock=lambda: 0)
    fight.join(sheet("kael"))
    fight.join(brin)
    assert verify(fight.events).notes == ()
    monkeypatch.setattr(omen_core.extensions, "BY_ID", MappingProxyType({}))
    seq = next(r.seq for r in fight.events if isinstance(r.event, CombatantJoined) and r.event.sheet.id == "brin")
    assert verify(fight.events).notes == (
        f"brin's sheet (seq {seq}) lists 'arcane_ward', which neither a shipped ability nor an extension installed "
        "here provides: a fight that used a Python extension verifies only where the same extension is installed "
        "(docs/extensions.md); the findings from this seq on may come from its absence alone",)


def test_a_version_5_log_is_held_to_what_version_5_recorded_of_its_modifiers() -> None:
    """Schema version 6 records a modifier's origin and owner (docs/events.md, "Every total's terms"); a log that
    version 5 wrote (fixtures/formats/v5-party-abilities: the party-abilities fixture as version 5 recorded it, with
    Battle Focus's, Steady Aim's, Ambusher's and Commanding Presence's terms) has none, and verifies clean: each
    command decided again is compared with what its lines' own version recorded. A version-6 line without them,
    re-sealed, is a finding: there, the rules record them."""
    from omen_core.events import MODIFIER_ORIGINS, HitDetermined, decode_line

    lines = (Path(__file__).resolve().parents[2] / "fixtures" / "formats" / "v5-party-abilities" / "fight.jsonl"
             ).read_bytes().splitlines(True)
    old = verify_lines(lines)
    assert not old.problems and old.redecided == 47, old.problems
    log = [decode_line(line) for line in lines]
    assert {rec.schema_version for rec in log} == {5} and MODIFIER_ORIGINS == SCHEMA_VERSION == 6
    fight = Fight.start(MemoryStore(), "p", dice=ScriptedDice([1, 1, 6]), clock=lambda: 0)
    fight.join(msgspec.structs.replace(sheet("ana"), abilities=("battle_focus",)))
    fight.join(sheet("orc", side="raiders"))
    fight.apply_condition("orc", "Prone")
    fight.attack("ana", "orc", unarmed=True)  # C37, C27: + 4 prone target, + 2 Battle Focus
    hit_at = next(i for i, rec in enumerate(fight.events) if isinstance(rec.event, HitDetermined))
    hit = fight.events[hit_at].event
    assert isinstance(hit, HitDetermined) and [(m.origin, m.owner) for m in hit.attack.situational] \
        == [("", ""), ("ability:Battle Focus", "ana")]
    assert not verify(fight.events).problems
    bare = msgspec.structs.replace(hit, attack=msgspec.structs.replace(hit.attack, situational=tuple(
        msgspec.structs.replace(m, origin="", owner="") for m in hit.attack.situational)))
    forged = verify(reseal(fight.events, hit_at, bare))
    assert [f.rule for f in redecided_at(forged, fight.events[hit_at].seq)], forged.problems
