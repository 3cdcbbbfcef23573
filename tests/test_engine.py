"""Tests for omen_core.engine (the Fight façade) with decide and the projection, using scripted dice (C29)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omen_core import (
    CheckSpec,
    Fight,
    ManualDice,
    MemoryStore,
    Modifier,
    ScriptedDice,
    SeededDice,
)
from omen_core.commands import ApplyConditionCommand, DeclareAttack
from omen_core.content import ApplyCondition, DealDamage, SaveEffect
from omen_core.decide import CallSave, Command, Contest, StaticCheck
from omen_core.dice import FacesNeeded, commitment
from omen_core.errors import (
    DiceExhausted,
    InvalidDieFace,
    OmenError,
    RuleViolation,
    SeedMismatch,
    UnknownCombatant,
)
from omen_core.events import (
    CommandIssued,
    ContestResolved,
    DiceRolled,
    FightStarted,
    SaveResolved,
    SeedCommitted,
    SeedRevealed,
    StaticCheckResolved,
)
from omen_core.walk import project
from tests.fights import as_, scripted
from tests.sheets import sheet

KAEL = sheet("kael", STR=(8, 2), AGI=(6, 1), FCS=(6, 1),
             skills={"Athletics": ("STR", 1), "Perception": ("FCS", 2)})
VESH = sheet("vesh", side="raiders", AGI=(8, 2), INT=(8, 2), skills={"Stealth": ("AGI", 3)})


def fight_with(faces: list[int], store: MemoryStore | None = None) -> Fight:
    """A started fight with Kael and Vesh joined, rolling ``faces`` in order."""
    fight = Fight.start(store or MemoryStore(), "test-fight", dice=ScriptedDice(faces), clock=lambda: 1000)
    fight.join(KAEL)
    fight.join(VESH)
    return fight


class TestStart:
    def test_seeded_fight_records_only_the_commitment(self) -> None:
        """Seeded dice: the first event holds sha256(seed), and the seed itself appears nowhere."""
        dice = SeededDice(bytes(range(32)))
        store = MemoryStore()
        fight = Fight.start(store, "f", dice=dice, clock=lambda: 0)
        first = fight.events[0]
        assert isinstance(first.event, FightStarted) and first.event.seed_commitment == dice.commitment
        assert bytes(range(32)).hex() not in str(fight.events)

    def test_envelope_fields_come_from_the_fight_and_clock(self) -> None:
        """Each event carries the fight id, seq 1, 2, 3... and the injected clock's time."""
        fight = fight_with([])
        assert [(e.fight_id, e.seq, e.recorded_at) for e in fight.events] == [
            ("test-fight", 1, 1000), ("test-fight", 2, 1000), ("test-fight", 3, 1000)]

    def test_starting_an_existing_fight_fails_without_writing(self) -> None:
        """A second start of the same fight id is refused by the store; nothing is appended."""
        store = MemoryStore()
        fight_with([], store)
        with pytest.raises(OmenError):
            Fight.start(store, "test-fight", dice=ScriptedDice([]))
        assert store.version("test-fight") == 3

    @pytest.mark.parametrize("fight_id", ["../x", "", "a b", "x" * 129])
    def test_a_fight_id_that_is_not_one_is_invalid_fight_id(self, fight_id: str) -> None:
        """Fight.start on "../x" raises InvalidFightId, the error docs/stores.md names (bad input, and a BadAppend
        as a store's append refuses it: it raised a bare BadAppend; found by a tester); nothing is written."""
        from omen_core.errors import BadAppend, BadInput, InvalidFightId

        store = MemoryStore()
        with pytest.raises(InvalidFightId) as info:
            Fight.start(store, fight_id, dice=ScriptedDice([]))
        assert isinstance(info.value, BadAppend) and isinstance(info.value, BadInput) and store.fights() == []
        assert str(info.value) == (f"{fight_id!r} is not a fight id: a fight id is 1-128 letters, digits, '.', '_' "
                                   "or '-', starting with a letter or digit; nothing was written")


class TestStaticCheck:
    def test_skill_check_total_and_success(self) -> None:
        """C2, C16: Athletics = d8 6 + STR 2 + level 1 - 1 slick = 8 > difficulty 7: success."""
        fight = fight_with([6])
        result = fight.static_check(CheckSpec(who="kael", skill="Athletics",
                                              modifiers=(Modifier(source="slick", value=-1),)), 7)
        assert (result.check.face, result.check.total, result.outcome) == (6, 8, "success")

    def test_tie_is_recorded_as_tie(self) -> None:
        """C16: Athletics 5 + 2 + 1 = 8 against difficulty 8 is a tie, not a success."""
        assert fight_with([5]).static_check(CheckSpec(who="kael", skill="Athletics"), 8).outcome == "tie"

    def test_skill_missing_from_sheet_uses_ruleset_default(self) -> None:
        """C2 defaults: Vesh has no Perception on the sheet, so it rolls FCS (d6 +0) at level 0: 4 vs 4 ties."""
        result = fight_with([4]).static_check(CheckSpec(who="vesh", skill="Perception"), 4)
        assert (result.check.attribute, result.check.skill_level, result.outcome) == ("FCS", 0, "tie")

    def test_attribute_check_has_no_level(self) -> None:
        """C1: a bare AGI check on Kael is d6 3 + AGI 1 = 4, failing difficulty 5."""
        result = fight_with([3]).static_check(CheckSpec(who="kael", attribute="AGI"), 5)
        assert (result.check.total, result.check.skill_level, result.outcome) == (4, 0, "failure")

    def test_roll_event_precedes_the_result(self) -> None:
        """The die is its own event (purpose, roller, pool tag, sides, face, source) before the result."""
        fight = fight_with([4])
        fight.static_check(CheckSpec(who="kael", skill="Perception"), 5)
        rolled, resolved = (e.event for e in fight.events[-2:])
        assert isinstance(rolled, DiceRolled) and isinstance(resolved, StaticCheckResolved)
        assert (rolled.purpose, rolled.roller, rolled.source, rolled.counter) == ("check", "kael", "scripted", 1)
        assert [(d.pool, d.sides, d.face) for d in rolled.dice] == [("check", 6, 4)]


class TestCommandRecord:
    def test_a_commands_batch_opens_with_the_command_that_produced_it(self) -> None:
        """Every batch but a set-up one opens with its command_issued (the command as given, and by whom), and the
        envelope says where the batch starts and how many events it holds (issue #10, 5a); Fight.execute returns
        the whole batch."""
        fight = fight_with([6])
        command = StaticCheck(check=CheckSpec(who="kael", skill="Athletics"), difficulty=7)
        stored = fight.execute(command, by="gm")
        assert [type(r.event) for r in stored] == [CommandIssued, DiceRolled, StaticCheckResolved]
        issued = stored[0].as_(CommandIssued)
        assert (issued.command, issued.by) == (command, "gm")
        assert [(r.seq, r.batch, r.batch_size) for r in stored] == [(4, 4, 3), (5, 4, 3), (6, 4, 3)]
        assert fight.events[-3:] == stored
        assert [(r.batch, r.batch_size) for r in fight.events[:3]] == [(1, 1), (2, 1), (3, 1)]  # set-up events

    def test_the_method_api_returns_what_the_command_produced(self) -> None:
        """The Fight methods return the events a command produced, without its command_issued record."""
        fight = fight_with([1, 8])
        events = fight.call_save("vesh", "kael", FLASK)
        assert events and not any(isinstance(e, CommandIssued) for e in events)
        assert events == [r.event for r in fight.events[3:] if not isinstance(r.event, CommandIssued)]
        assert isinstance(fight.events[3].event, CommandIssued)


class TestContest:
    def test_initiator_rolls_first(self) -> None:
        """C29: the initiator's die is consumed first: Vesh Stealth 5+2+3 = 10 vs Kael Perception 4+1+2 = 7."""
        result = fight_with([5, 4]).contest(CheckSpec(who="vesh", skill="Stealth"),
                                            CheckSpec(who="kael", skill="Perception"))
        assert (result.initiator.total, result.defender.total, result.winner, result.tie) == (10, 7, "vesh", False)

    def test_tie_goes_to_the_defender(self) -> None:
        """C16: Vesh 2+2+3 = 7 vs Kael 4+1+2 = 7: the defender, Kael, wins the tie."""
        result = fight_with([2, 4]).contest(CheckSpec(who="vesh", skill="Stealth"),
                                            CheckSpec(who="kael", skill="Perception"))
        assert (result.winner, result.tie) == ("kael", True)

    def test_contest_against_oneself_is_refused(self) -> None:
        """C16: a contest needs two sides."""
        with pytest.raises(RuleViolation, match=r"\[C16\]"):
            fight_with([1, 1]).contest(CheckSpec(who="kael", attribute="STR"), CheckSpec(who="kael", attribute="STR"))


FLASK = SaveEffect(name="cinder flask", save="AGI", against="INT")


def saved(fight: Fight) -> SaveResolved:
    """The last save result of a fight."""
    return [e.event for e in fight.events if isinstance(e.event, SaveResolved)][-1]


class TestSave:
    def test_saver_wins_ties(self) -> None:
        """C15: Kael's AGI save 5+1 = 6 vs Vesh's INT 4+2 = 6 succeeds on the tie."""
        fight = fight_with([5, 4])
        fight.call_save("vesh", "kael", FLASK)
        result = saved(fight)
        assert (result.saver.total, result.opposing.total, result.success) == (6, 6, True)

    def test_saver_die_then_opposing_die(self) -> None:
        """C29: saver die first: Kael 1+1 = 2 vs Vesh 8+2 = 10 fails."""
        fight = fight_with([1, 8])
        fight.call_save("vesh", "kael", FLASK)
        result = saved(fight)
        assert (result.saver.face, result.opposing.face, result.success) == (1, 8, False)

    def test_one_die_per_side(self) -> None:
        """C15: a save never uses the two-die attack pool: each side's roll has exactly one die."""
        fight = fight_with([3, 3])
        fight.call_save("vesh", "kael", FLASK)
        rolls = [e.event for e in fight.events if isinstance(e.event, DiceRolled)]
        assert [len(r.dice) for r in rolls] == [1, 1] and {r.purpose for r in rolls} == {"save"}


class TestRefusals:
    @pytest.mark.parametrize("command, error, rule", [
        (StaticCheck(check=CheckSpec(who="nobody", attribute="STR"), difficulty=5), UnknownCombatant, "setup"),
        (StaticCheck(check=CheckSpec(who="kael", skill="Sailing"), difficulty=5), RuleViolation, "C2"),
        (StaticCheck(check=CheckSpec(who="kael"), difficulty=5), RuleViolation, "C1"),
        (StaticCheck(check=CheckSpec(who="kael", skill="Athletics", attribute="STR"), difficulty=5),
         RuleViolation, "C1"),
        (Contest(initiator=CheckSpec(who="vesh", skill="Stealth"), defender=CheckSpec(who="ghost", attribute="FCS")),
         UnknownCombatant, "setup"),
        (CallSave(caller="vesh", saver="kael", effect=SaveEffect(
            name="x", save="AGI", against="INT", on_failure=(ApplyCondition(condition="Burning"),))),
         RuleViolation, "C28"),
        (CallSave(caller="vesh", saver="kael", effect=SaveEffect(
            name="x", save="AGI", against="INT", on_failure=(DealDamage(flat=2, damage_type="sonic"),))),
         RuleViolation, "C14"),
    ])
    def test_rule_violation_names_rule_and_appends_nothing(self, command: Command, error: type[RuleViolation],
                                                           rule: str) -> None:
        """A command that breaks a rule raises with the rule id; the log and the dice are untouched."""
        fight = fight_with([6, 6, 6])
        before = fight.events
        with pytest.raises(error) as info:
            fight.execute(command)
        assert info.value.rule == rule
        assert fight.events == before and scripted(fight).remaining == 3

    @pytest.mark.parametrize("command, field", [
        (StaticCheck(check=CheckSpec(who="nobody", attribute="STR"), difficulty=5), "$.check.who"),
        (Contest(initiator=CheckSpec(who="vesh", skill="Stealth"), defender=CheckSpec(who="ghost", attribute="FCS")),
         "$.defender.who"),
        (CallSave(caller="vesh", saver="nobody", effect=FLASK), "$.saver"),
        (ApplyConditionCommand(who="kael", condition="Prone", by="vesh", until="end_of_next_turn", of="zed"),
         "$.of"),
    ])
    def test_an_unknown_combatant_is_refused_at_the_field_naming_it(self, command: Command, field: str) -> None:
        """A command naming a combatant who has not joined is refused at the field that names it (the first, in the
        command's field order), as every refusal names its place; nothing is appended."""
        fight = fight_with([6, 6, 6])
        before = fight.events
        with pytest.raises(UnknownCombatant) as info:
            fight.execute(command)
        assert info.value.facts["field"] == field and info.value.field_under("$.command") == "$.command" + field[1:]
        assert fight.events == before

    def test_exhausted_script_rewinds_and_appends_nothing(self) -> None:
        """C29: a contest with one scripted die left fails naming the defender's roll; the die is not lost."""
        fight = fight_with([4])
        with pytest.raises(DiceExhausted, match=r"roll #2 \(check by kael"):
            fight.contest(CheckSpec(who="vesh", skill="Stealth"), CheckSpec(who="kael", skill="Perception"))
        assert fight.version == 3 and scripted(fight).remaining == 1

    def test_invalid_manual_face_records_nothing(self) -> None:
        """A typed-in 9 on a d8 is refused with a clear error and nothing is recorded."""
        fight = Fight.start(MemoryStore(), "f", dice=ManualDice(lambda req: [9]), clock=lambda: 0)
        fight.join(KAEL)
        with pytest.raises(InvalidDieFace, match="d8"):
            fight.static_check(CheckSpec(who="kael", attribute="STR"), 5)
        assert fight.version == 2

    def test_duplicate_combatant_is_refused(self) -> None:
        """The same combatant id cannot join twice."""
        with pytest.raises(RuleViolation, match="already joined"):
            fight_with([]).join(KAEL)


class TestSeed:
    def test_reveal_seed_appends_the_matching_seed(self) -> None:
        """Revealing the seeded source's seed appends it; it matches the commitment. The fight goes on, so the same
        command commits to a fresh seed (C42), which the fight's dice now come from."""
        dice = SeededDice(bytes(range(32)), [bytes(range(1, 33))])
        fight = Fight.start(MemoryStore(), "f", dice=dice, clock=lambda: 0)
        assert fight.reveal_seed() == bytes(range(32)).hex()
        revealed, committed = (r.event for r in fight.events[-2:])
        assert isinstance(revealed, SeedRevealed) and revealed.seed == bytes(range(32)).hex()
        assert isinstance(committed, SeedCommitted) and committed.commitment == commitment(bytes(range(1, 33)))
        assert fight.state.seed_commitment == committed.commitment and fight.state.revealed_seed is None
        assert as_(fight.dice, SeededDice).seed == bytes(range(1, 33))

    def test_reveal_after_the_end_commits_to_nothing(self) -> None:
        """C42: in a fight that has ended the reveal is the last word on the dice: no fresh seed."""
        fight = Fight.start(MemoryStore(), "f", dice=SeededDice(bytes(range(32))), clock=lambda: 0)
        fight.end_fight("gm")
        fight.reveal_seed()
        assert isinstance(fight.events[-1].event, SeedRevealed)
        assert fight.state.revealed_seed == bytes(range(32)).hex()

    def test_after_the_last_reveal_a_refusal_no_longer_offers_undo(self) -> None:
        """C42: once the ended fight's seed is revealed nothing can be undone, so a command refused then says
        "legal now: nothing", where before the reveal it offers the reveal and undo (it offered "undo and redo at
        any time", and the undo was then refused)."""
        fight = Fight.start(MemoryStore(), "f", dice=SeededDice(bytes(range(32))), clock=lambda: 0)
        fight.join(KAEL)
        fight.end_fight("gm")
        with pytest.raises(RuleViolation) as before:
            fight.roll_initiative()
        assert str(before.value).endswith("legal now: reveal the seed; undo and redo at any time")
        fight.reveal_seed()
        with pytest.raises(RuleViolation) as after:
            fight.roll_initiative()
        assert str(after.value) == ("[phase] the fight has ended: cannot act (attack, save, check, move) in the ended "
                                    "phase; legal now: nothing")
        with pytest.raises(RuleViolation, match=r"\[C42\] nothing can be undone"):
            fight.undo()

    def test_a_reveal_command_without_its_seed_takes_the_seeded_dices_own(self) -> None:
        """C42: ``execute`` of a ``reveal_seed`` with no ``seed`` (as options() offers it: the seed a free
        argument) reveals the seeded dice's own seed, as ``Fight.reveal_seed()`` does; with no seeded dice to take
        it from, the refusal says no seed was given (it read as a wrong seed hashing to sha256 of nothing)."""
        from omen_core.commands import RevealSeed

        fight = Fight.start(MemoryStore(), "f", dice=SeededDice(bytes(range(32))), clock=lambda: 0)
        fight.end_fight("gm")
        fight.execute(RevealSeed())
        assert fight.state.revealed_seed == bytes(range(32)).hex()
        other = Fight.start(MemoryStore(), "g", dice=SeededDice(bytes(range(32))), clock=lambda: 0)
        other.end_fight("gm")
        other.dice, version = ScriptedDice([]), other.version
        with pytest.raises(RuleViolation, match=r"^\[dice\] no seed given: give the seed the dice are drawn under "
                                                r"now \(seed: its hex\), which must hash to the commitment$"):
            other.execute(RevealSeed())
        assert other.version == version

    def test_wrong_seed_is_refused(self) -> None:
        """A seed that does not hash to the commitment is refused and not recorded."""
        fight = Fight.start(MemoryStore(), "f", dice=SeededDice(bytes(range(32))), clock=lambda: 0)
        with pytest.raises(SeedMismatch):
            fight.reveal_seed(bytes(32))
        assert fight.version == 1

    def test_second_reveal_is_refused(self) -> None:
        """Once the fight is over, the seed is revealed once."""
        fight = Fight.start(MemoryStore(), "f", dice=SeededDice(bytes(range(32))), clock=lambda: 0)
        fight.end_fight("gm")
        fight.reveal_seed()
        with pytest.raises(RuleViolation, match="already been revealed"):
            fight.reveal_seed()

    def test_a_second_reveal_mid_fight_reveals_the_fresh_seed(self) -> None:
        """C42: after a reveal mid-fight, the next reveal discloses the fresh seed (it matches the new
        commitment) and commits to a third."""
        seeds = [bytes(range(1, 33)), bytes(range(2, 34))]
        fight = Fight.start(MemoryStore(), "f", dice=SeededDice(bytes(range(32)), seeds), clock=lambda: 0)
        fight.reveal_seed()
        assert fight.reveal_seed() == seeds[0].hex()
        assert fight.state.seed_commitment == commitment(seeds[1])

    def test_unseeded_fight_has_nothing_to_reveal(self) -> None:
        """Scripted or manual fights have no commitment, so no seed can be revealed."""
        with pytest.raises(RuleViolation, match="not seeded"):
            fight_with([]).reveal_seed(bytes(32))


class TestReplay:
    def test_load_rebuilds_the_live_state(self) -> None:
        """Loading a fight from its store folds the events into exactly the live state."""
        store = MemoryStore()
        fight = fight_with([5, 4, 6], store)
        fight.contest(CheckSpec(who="vesh", skill="Stealth"), CheckSpec(who="kael", skill="Perception"))
        fight.static_check(CheckSpec(who="kael", skill="Athletics"), 7)
        assert Fight.load(store, "test-fight").state == fight.state

    def test_loaded_fight_plays_on(self) -> None:
        """A loaded fight given dice continues the roll counter and the chain."""
        store = MemoryStore()
        fight_with([5], store).static_check(CheckSpec(who="kael", attribute="STR"), 3)
        again = Fight.load(store, "test-fight", dice=ScriptedDice([2]), clock=lambda: 0)
        again.static_check(CheckSpec(who="kael", attribute="STR"), 3)
        rolls = [e.event.counter for e in again.events if isinstance(e.event, DiceRolled)]
        assert rolls == [1, 2]

    def test_loaded_fight_without_dice_refuses_to_roll(self) -> None:
        """Without a dice source a loaded fight can still be read, but a roll names the dice to give as faces."""
        store = MemoryStore()
        fight_with([], store)
        with pytest.raises(OmenError, match=r"kael.s check: check d8"):
            Fight.load(store, "test-fight").static_check(CheckSpec(who="kael", attribute="STR"), 3)

    @settings(max_examples=30)
    @given(st.lists(st.tuples(st.sampled_from(["check", "contest", "save"]), st.integers(1, 6),
                              st.integers(1, 6), st.integers(-3, 12)), max_size=8))
    def test_replay_equals_live_state(self, script: list[tuple[str, int, int, int]]) -> None:
        """For any sequence of checks, contests and saves, replaying the log gives the live state."""
        store = MemoryStore()
        fight = fight_with([], store)
        for kind, a, b, difficulty in script:
            scripted(fight).feed([a, b])
            if kind == "check":
                fight.static_check(CheckSpec(who="kael", attribute="AGI"), difficulty)
            elif kind == "contest":
                fight.contest(CheckSpec(who="kael", attribute="AGI"), CheckSpec(who="vesh", attribute="AGI"))
            else:
                fight.call_save("kael", "vesh", SaveEffect(name="x", save="AGI", against="INT"))
        assert project(store.read("test-fight")) == fight.state
        results = [e.event for e in fight.events if isinstance(e.event, (StaticCheckResolved, ContestResolved,
                                                                           SaveResolved))]
        assert len(results) == len(script)


def test_lowest_dice_can_still_hit() -> None:
    """§Failure and Fumbles: no fumble on an attack: primary 1 + FCS 1 + STR 6 = 8 beats a helpless
    defender's Defense Rating 0 + 0 (C10), and the attack simply resolves."""
    from omen_core.events import HitDetermined

    fight = fight_with([1, 1])
    strong = msgspec.structs.replace(sheet("brute", side="raiders", STR=(8, 6)), weapons=())
    fight.join(strong)
    fight.apply_condition("kael", "Incapacitated")
    fight.attack("brute", "kael", unarmed=True)
    hit = [e.event for e in fight.events if isinstance(e.event, HitDetermined)][-1]
    assert (hit.attack.total, hit.defense.total, hit.hit) == (8, 0 + 0, True)


class TestCatchUp:
    def test_a_fight_takes_in_what_another_appended(self) -> None:
        """Fight.catch_up: a second Fight on the same store folds the check and the contest the first one
        appended (from the state it held), to exactly the first one's state, and plays on from there."""
        store = MemoryStore()
        first = fight_with([5, 4, 6, 3], store)
        second = Fight.load(store, "test-fight", dice=ScriptedDice([2]), clock=lambda: 0)
        first.contest(CheckSpec(who="vesh", skill="Stealth"), CheckSpec(who="kael", skill="Perception"))
        first.static_check(CheckSpec(who="kael", skill="Athletics"), 7)
        assert second.catch_up() == first.version - 3
        assert second.state == first.state
        assert second.catch_up() == 0
        second.static_check(CheckSpec(who="kael", attribute="STR"), 3)
        assert Fight.load(store, "test-fight").state == second.state

    def test_an_undo_appended_elsewhere_is_walked_from_the_store(self) -> None:
        """Fight.catch_up: an undo appended by another Fight reaches back past the state held, so the fight is
        walked again from the store: the state the undo leaves, as loading gives it."""
        store = MemoryStore()
        first = fight_with([5, 4], store)
        first.static_check(CheckSpec(who="kael", attribute="STR"), 3)
        second = Fight.load(store, "test-fight")
        first.static_check(CheckSpec(who="kael", attribute="STR"), 3)
        second.catch_up()
        first.undo(reason="misread")
        first.undo(reason="misread again")
        assert second.catch_up() > 0
        assert second.state == first.state == Fight.load(store, "test-fight").state
        first.redo()
        second.catch_up()
        assert second.state == first.state

    def test_a_line_that_breaks_the_chain_is_refused(self) -> None:
        """Fight.catch_up checks the hash chain: a line another writer appended whose body no longer matches its
        hash (the check's difficulty changed from 3 to 4 after sealing) is refused (ChainBroken, seq 4), and the
        state held is unchanged."""
        from omen_core.errors import ChainBroken

        store = MemoryStore()
        first = fight_with([5, 4], store)
        second = Fight.load(store, "test-fight")
        first.static_check(CheckSpec(who="kael", attribute="STR"), 3)
        held = second.state
        lines = store._lines["test-fight"]
        assert b'"difficulty":3' in lines[held.version]
        lines[held.version] = lines[held.version].replace(b'"difficulty":3', b'"difficulty":4')
        with pytest.raises(ChainBroken, match="seq 4"):
            second.catch_up()
        assert second.state == held


class TestValidated:
    def test_the_same_json_is_decoded_once_and_gives_the_same_command(self) -> None:
        """A command validated again (the same type and JSON: an ``end_turn`` by the same combatant) is the
        command decoded the first time; an equal command of another JSON is decoded afresh."""
        from omen_core.commands import EndTurn
        from omen_core.engine import CommandMemo, validated

        memo = CommandMemo()
        first = validated(EndTurn(who="kael"), memo)
        assert first == EndTurn(who="kael") and validated(EndTurn(who="kael"), memo) is first
        assert validated(EndTurn(who="vesh"), memo) == EndTurn(who="vesh")
        assert validated(EndTurn(who="kael")) is not first  # no memo given: decoded afresh

    @pytest.mark.parametrize("difficulty", [5.0, True])
    def test_a_value_equal_in_python_but_not_in_json_is_still_refused(self, difficulty: Any) -> None:
        """``5.0`` and ``True`` equal ``5`` and ``1`` in Python, and a command holding them compares equal to one
        validated before, but their JSON differs and the integer field refuses them, naming it."""
        from omen_core.engine import CommandMemo, validated
        from omen_core.errors import InvalidCommand

        memo = CommandMemo()
        good = StaticCheck(check=CheckSpec(who="kael", attribute="STR"), difficulty=int(difficulty))
        validated(good, memo)
        bad = StaticCheck(check=CheckSpec(who="kael", attribute="STR"), difficulty=difficulty)
        assert bad == good
        with pytest.raises(InvalidCommand) as info:
            validated(bad, memo)
        assert info.value.path == "$.difficulty"

    @pytest.mark.parametrize(("given", "field"), [({"origin": "condition"}, "origin"), ({"owner": "kael"}, "owner"),
                                                   ({"origin": "ability:Taunt", "owner": "kael"}, "origin")])
    def test_a_commands_modifier_claiming_what_made_it_is_refused(self, given: dict[str, str], field: str) -> None:
        """A command's modifiers are the GM's situational word (docs/events.md, "Every total's terms"): one giving
        an ``origin`` (a condition's, an ability's) or an ``owner`` is refused at its path (C5, a 422 over HTTP: the
        schema allows the field, which the engine fills in), nothing written; the same modifier without them is
        taken."""
        from omen_core.errors import RuleViolation
        from omen_core.parts import Modifier

        fight = Fight.start(MemoryStore(), "f", dice=ScriptedDice([4]), combatants=[sheet("kael")])
        before = list(fight.store.read("f"))
        claimed = StaticCheck(check=CheckSpec(who="kael", attribute="STR", modifiers=(
            Modifier(source="slick stones", value=-1), Modifier(source="slick stones", value=-1, **given))),
            difficulty=5)
        with pytest.raises(RuleViolation) as info:
            fight.execute(claimed)
        assert info.value.facts["field"] == f"$.check.modifiers[1].{field}" and "situational" in str(info.value)
        assert list(fight.store.read("f")) == before
        fight.execute(StaticCheck(check=CheckSpec(who="kael", attribute="STR", modifiers=(
            Modifier(source="slick stones", value=-1),)), difficulty=5))
        assert len(list(fight.store.read("f"))) > len(before)

    def test_who_typed_a_commands_faces_is_recorded_where_another_did(self) -> None:
        """``faces_by`` (runs of who typed the command's faces) is recorded in its ``command_issued`` where another
        than ``by`` typed some, left out where ``by`` typed them all; runs that do not add up to its faces are
        refused (InvalidArgument), nothing written; a re-sealed log whose runs do not add up is a finding."""
        from omen_core import ManualDice
        from omen_core.commands import RollInitiative
        from omen_core.errors import InvalidArgument
        from omen_core.events import FacesGiven, seal
        from omen_replay.verify import verify

        fight = Fight.start(MemoryStore(), "f", dice=ManualDice(), combatants=[sheet("kael"), sheet("vesh")])
        before = list(fight.events)
        for runs in ([("gm", 1)], [("gm", 1), ("player:Alice", 2)], [("gm", 0), ("gm", 2)], [("gm", "2")], "gm"):
            with pytest.raises(InvalidArgument):
                fight.execute(RollInitiative(dice=(4, 5)), by="player:Alice", faces_by=runs)  # type: ignore[arg-type]
        assert fight.events == before
        fight.execute(RollInitiative(dice=(4, 5)), by="player:Alice", faces_by=[("player:Alice", 1), ("gm", 1)])
        issued = next(r for r in fight.events if isinstance(r.event, CommandIssued))
        assert isinstance(issued.event, CommandIssued)
        assert issued.event.faces_by == (FacesGiven(by="player:Alice", faces=1), FacesGiven(by="gm", faces=1))
        assert not verify(fight.events).problems
        other = Fight.start(MemoryStore(), "g", dice=ManualDice(), combatants=[sheet("kael"), sheet("vesh")])
        other.execute(RollInitiative(dice=(4, 5)), by="gm", faces_by=[("gm", 2)])
        assert all(not r.event.faces_by for r in other.events if isinstance(r.event, CommandIssued))
        at = fight.events.index(issued)
        wrong = msgspec.structs.replace(issued.event, faces_by=(FacesGiven(by="gm", faces=3),))
        log, prev = list(fight.events[:at]), fight.events[at - 1].hash
        for rec in [msgspec.structs.replace(issued, event=wrong), *fight.events[at + 1:]]:
            log.append(seal(rec.fight_id, rec.seq, rec.recorded_at, prev, rec.event, rec.batch, rec.batch_size,
                            rec.salt))
            prev = log[-1].hash
        found = [f for f in verify(log).problems if f.seq == issued.seq]
        assert [f.rule for f in found] == ["dice"] and "who typed 3 face(s)" in found[0].what, found

    def test_the_memo_stays_bounded(self) -> None:
        """Past its bound the memo of validated commands is emptied, not grown."""
        from omen_core import engine
        from omen_core.commands import EndTurn

        memo = engine.CommandMemo(kept=16)
        for i in range(16 + 10):
            engine.validated(EndTurn(who=f"c{i}"), memo)
        assert 0 < len(memo) <= 16


def test_each_fight_owns_its_command_memo_unless_given_one() -> None:
    """No memo is shared between fights through the module (DESIGN.md: no module-level caches): each Fight has its
    own, and a caller running many fights may give them one to share."""
    from omen_core.engine import CommandMemo

    a = Fight.start(MemoryStore(), "a", dice=ScriptedDice([]), clock=lambda: 0)
    b = Fight.start(MemoryStore(), "b", dice=ScriptedDice([]), clock=lambda: 0)
    assert a.commands is not b.commands and len(a.commands) == 1  # the start_fight command
    shared = CommandMemo()
    c = Fight.start(MemoryStore(), "c", dice=ScriptedDice([]), clock=lambda: 0, commands=shared)
    d = Fight.start(MemoryStore(), "d", dice=ScriptedDice([]), clock=lambda: 0, commands=shared)
    assert c.commands is d.commands is shared and len(shared) == 1  # the same start_fight, decoded once


def test_a_live_fights_state_is_the_reloaded_ones_byte_for_byte() -> None:
    """Every surface agrees with the log: each fixture's fight, played live from its scenario (its ruleset and
    sheets read from TOML, in the files' order), holds a state that encodes to the same bytes as the fight reloaded
    from the log (whose lines hold mappings in sorted order); the ruleset's skill_attributes came out in the file's
    order live and sorted reloaded (a finding of the last stop)."""
    from pathlib import Path

    import msgspec

    from omen_core import Fight, MemoryStore
    from omen_replay.scenario import load_scenario, run_scenario

    root = Path(__file__).resolve().parents[1] / "fixtures"
    for scenario in sorted(root.glob("*/scenario.toml")):
        store = MemoryStore()
        live = run_scenario(load_scenario(scenario), store, clock=lambda: 0)
        again = Fight.load(store, live.fight_id)
        assert msgspec.json.encode(live.state) == msgspec.json.encode(again.state), scenario.parent.name


class TestPhysicalDice:
    """A seeded fight some of whose combatants roll physical dice (``physical``; docs/server.md, "Physical dice in a
    seeded fight"): their rolls take the command's faces wherever C29 puts them; every other roll is the seed's."""

    SEED = bytes(range(32))

    def duel(self) -> Fight:
        """Kael and Vesh, seeded dice."""
        return Fight.start(MemoryStore(), "duel", dice=SeededDice(self.SEED), combatants=[KAEL, VESH],
                           clock=lambda: 0)

    def test_a_physical_defenders_die_is_asked_for_between_the_attackers_seeded_dice(self) -> None:
        """Kael attacks Vesh, whose dice are physical: C29 rolls Kael's primary and FCS dice first (the seed's), then
        Vesh's RES die (base defense), for which no face was given: FacesNeeded names that roll alone, 0 faces
        given, and nothing is appended."""
        fight = self.duel()
        before = [r.hash for r in fight.events]
        with pytest.raises(FacesNeeded) as short:
            fight.execute(DeclareAttack(attacker="kael", target="vesh"), physical={"vesh"})
        assert [(r.roller, r.purpose) for r in short.value.needed] == [("vesh", "base_defense")]
        assert short.value.given == 0
        assert [r.hash for r in fight.events] == before

    def test_given_its_face_the_others_dice_are_the_seeds_and_the_audit_decides_it_again(self) -> None:
        """The same attack with Vesh's face 3: Kael's hit dice are the seed's faces for their counter (recorded
        seeded), Vesh's RES die is [3] (recorded manual, after them); once the seed is revealed the audit decides
        the command again clean and lists Vesh's die alone as dice provenance (docs/verify.md, item 10)."""
        from omen_core.dice import seeded_face
        from omen_replay.verify import verify_store

        fight = self.duel()
        fight.execute(DeclareAttack(attacker="kael", target="vesh", dice=(3,)), physical={"vesh"})
        hit, defense = [r.event for r in fight.events if isinstance(r.event, DiceRolled)][:2]
        assert (hit.roller, hit.source) == ("kael", "seeded")
        assert [d.face for d in hit.dice] == [seeded_face(self.SEED, "duel", hit.counter, i, d.sides)
                                              for i, d in enumerate(hit.dice)]
        assert (defense.roller, defense.purpose, defense.source) == ("vesh", "base_defense", "manual")
        assert [d.face for d in defense.dice] == [3]
        report = verify_store(fight.store, "duel", seed=self.SEED)
        assert report.clean and report.redecided > 0 and report.seeded_checked == report.seeded_dice > 0
        assert [(f.kind, f.seq) for f in report.findings] == [
            ("dice provenance", next(r.seq for r in fight.events if r.event == defense))]

    def test_a_roll_of_one_not_physical_never_takes_the_faces(self) -> None:
        """Only Kael is physical and the command carries two faces for Kael's two hit dice: Vesh's base defense is
        the seed's, not the faces' (a face left over would be SurplusFaces)."""
        fight = self.duel()
        fight.execute(DeclareAttack(attacker="kael", target="vesh", dice=(5, 4)), physical=("kael",))
        hit, defense = [r.event for r in fight.events if isinstance(r.event, DiceRolled)][:2]
        assert ([d.face for d in hit.dice], hit.source) == ([5, 4], "manual")
        assert defense.source == "seeded"

    def test_physical_given_as_a_string_is_an_invalid_argument(self) -> None:
        """``physical="vesh"`` would be five one-letter ids: InvalidArgument naming ``physical``."""
        from omen_core.errors import InvalidArgument

        with pytest.raises(InvalidArgument, match="physical"):
            self.duel().execute(DeclareAttack(attacker="kael", target="vesh"), physical="vesh")
