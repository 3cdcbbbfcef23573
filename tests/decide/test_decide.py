"""Tests for omen_core.decide: commands become events without any store, or raise naming the rule."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from omen_core.content import CombatantSheet
from omen_core.decide import (
    CheckSpec,
    Command,
    Join,
    RevealSeed,
    StartFight,
    StaticCheck,
    decide,
)
from omen_core.dice import ScriptedDice, commitment
from omen_core.errors import RuleViolation
from omen_core.events import (
    CommandIssued,
    DiceRolled,
    FightStarted,
    StaticCheckResolved,
)
from omen_core.state import FightState, evolve
from tests.sheets import CORE, joined, sheet


def started(*sheets: CombatantSheet) -> FightState:
    """A state with the fight started and ``sheets`` joined."""
    state = evolve(FightState(fight_id="f"), FightStarted(ruleset=CORE, ruleset_hash=CORE.content_hash(),
                                                          dice="scripted"), 1)
    for seq, s in enumerate(sheets, 2):
        state = evolve(state, joined(s), seq)
    return state


class TestDecide:
    def test_start(self) -> None:
        """StartFight becomes FightStarted with the same header."""
        events = decide(FightState(), StartFight(ruleset=CORE, dice_source="manual", title="T"), ScriptedDice([]))
        assert events == [FightStarted(ruleset=CORE, ruleset_hash=CORE.content_hash(), dice="manual", title="T")]

    def test_commitment_only_for_seeded_dice(self) -> None:
        """A commitment without seeded dice (or seeded dice without one) is refused."""
        with pytest.raises(RuleViolation, match="seed commitment"):
            decide(FightState(), StartFight(ruleset=CORE, dice_source="manual", seed_commitment="a" * 64),
                   ScriptedDice([]))
        with pytest.raises(RuleViolation, match="seed commitment"):
            decide(FightState(), StartFight(ruleset=CORE, dice_source="seeded"), ScriptedDice([]))

    def test_nothing_before_start(self) -> None:
        """Any command but StartFight before the fight starts is refused."""
        with pytest.raises(RuleViolation, match="not started"):
            decide(FightState(), Join(sheet=sheet("kael")), ScriptedDice([]))

    def test_check_yields_roll_then_result(self) -> None:
        """A static check is its command_issued, a DiceRolled event and then the result, counters continuing the
        state's."""
        state = msgspec.structs.replace(started(sheet("kael", STR=(8, 2))), rolls=6)
        check = StaticCheck(check=CheckSpec(who="kael", attribute="STR"), difficulty=9)
        events = decide(state, check, ScriptedDice([7]))
        assert len(events) == 3 and events[0] == CommandIssued(command=check, by="")
        assert isinstance(events[1], DiceRolled) and events[1].counter == 7
        assert isinstance(events[2], StaticCheckResolved) and events[2].check.total == 9
        assert events[2].outcome == "tie" and events[2].check.counter == 7

    def test_reveal_needs_hex(self) -> None:
        """A seed that is not hex is refused as a rule error, not a crash."""
        state = evolve(FightState(), FightStarted(ruleset=CORE, ruleset_hash=CORE.content_hash(), dice="seeded",
                                                  seed_commitment=commitment(bytes(32))), 1)
        with pytest.raises(RuleViolation, match="hex"):
            decide(state, RevealSeed(seed="zz"), ScriptedDice([]))

    def test_commands_decode_from_json(self) -> None:
        """Commands are tagged Structs, so tools can send them as JSON."""
        cmd = msgspec.json.decode(b'{"command": "static_check", "check": {"who": "kael", "skill": "Climb"},'
                                  b' "difficulty": 12}', type=Command)
        assert cmd == StaticCheck(check=CheckSpec(who="kael", skill="Climb"), difficulty=12)


def _probe_counting(monkeypatch: pytest.MonkeyPatch, command: Command) -> tuple[bool, list[str], list[str], int]:
    """probe ``command`` in a fresh fight of Kael's: accepted, the purposes of its certain and possible rolls, and
    how many times it was decided."""
    import omen_core.decide as decide_module
    from omen_core import Fight, ManualDice, MemoryStore
    from omen_core.decide import probe

    fight = Fight.start(MemoryStore(), "t", dice=ManualDice(), clock=lambda: 0, combatants=[sheet("kael")])
    decided: list[object] = []
    original = decide_module._decided
    def recording(*a: Any) -> Any:
        decided.append(a)
        return original(*a)

    monkeypatch.setattr(decide_module, "_decided", recording)
    ok, certain, maybe = probe(fight.state, command)
    return ok, [r.purpose for r in certain], [r.purpose for r in maybe], len(decided)


def test_probe_does_not_decide_a_run_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """omen_core.decide.probe: a probe that would give a run already made the same faces is skipped (decide is a
    function of the state and the faces): a command rolling one die (a static check, taken out of the face-blind
    registry here), so the bottom face repeats the low cycling run and the alternating runs repeat the top or
    bottom one: 3 decisions instead of 6, and the die is still listed as rolled whatever the faces."""
    import omen_core.decide as decide_module
    from omen_core.commands import StaticCheck
    from omen_core.decide import CheckSpec

    monkeypatch.setattr(decide_module, "_FACE_BLIND", {})
    check = StaticCheck(check=CheckSpec(who="kael", attribute="STR"), difficulty=5)
    assert _probe_counting(monkeypatch, check) == (True, ["check"], [], 3)


def test_a_face_blind_command_is_decided_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """omen_core.decide.face_blind (C1, C16): a static check rolls the same die whatever it shows, so probing
    decides it once, and lists its die as rolled whatever the faces."""
    from omen_core.commands import StaticCheck
    from omen_core.decide import CheckSpec

    check = StaticCheck(check=CheckSpec(who="kael", attribute="STR"), difficulty=5)
    assert _probe_counting(monkeypatch, check) == (True, ["check"], [], 1)


def test_a_save_dealing_damage_is_not_face_blind() -> None:
    """omen_core.decide.face_blind (C15, C25): a save with no damage in its branches rolls the same two dice
    whatever they show; one whose failure deals damage rolls the damage dice on one branch only."""
    from omen_core.commands import CallSave, Contest
    from omen_core.content import DamageDice, DealDamage, SaveEffect
    from omen_core.decide import CheckSpec, face_blind

    plain = SaveEffect(name="glare", save="RES", against="INT")
    hurts = SaveEffect(name="fire", save="AGI", against="INT",
                       on_failure=(DealDamage(damage_type="fire", dice=DamageDice(count=1, die="d6")),))
    assert face_blind(CallSave(caller="a", saver="b", effect=plain))
    assert not face_blind(CallSave(caller="a", saver="b", effect=hurts))
    assert face_blind(Contest(initiator=CheckSpec(who="a", skill="Stealth"), defender=CheckSpec(who="b",
                                                                                                  skill="Stealth")))


def test_too_few_faces_for_a_roll_off_name_its_dice_in_the_order_the_engine_rolls_them() -> None:
    """C19, C29 (initiative: combatants in the order they joined), C32: Ash, Cara, Bo and Dan all total 5 on the
    faces 4, 4, 4, 5 (Dan last, AGI bonus 0); Ash, Cara and Bo, a foe among them, roll off, Ash's face missing:
    the dice that follow are Cara's d6, then Bo's d8, as the engine rolls them (it said Bo's before Cara's), and
    all three are certain as the faces given fall (it said Cara's and Bo's depended on the dice)."""
    from omen_core.commands import RollInitiative
    from omen_core.dice import FacesNeeded

    state = started(sheet("ash", "north", AGI=(6, 1)), sheet("cara", "north", AGI=(6, 1)),
                    sheet("bo", "south", AGI=(8, 1)), sheet("dan", "south", AGI=(8, 0)))
    with pytest.raises(FacesNeeded) as refused:
        decide(state, RollInitiative(dice=(4, 4, 4, 5)), ScriptedDice([]))
    assert str(refused.value) == (
        "this command rolls at least 7 dice as the 4 faces given fall; give the faces in the command's dice, in this "
        "order (C29): ash's initiative: check d6; cara's initiative: check d6; bo's initiative: check d8; dan's "
        "initiative: check d8; ash's roll off: check d6; cara's roll off: check d6; bo's roll off: check d8")


@pytest.mark.parametrize("faces", [(5, 3, 5, 3), (5, 3, 5, 3, 4)])
def test_too_few_faces_count_a_certain_roll_off_whole(faces: tuple[int, ...]) -> None:
    """C19, C29: Bram and Vex (foes, AGI bonus 2 each) both total 7 on the faces 5, 3, 5, 3, so their roll-off
    is certain: given those 4 faces, or a 5th for Bram's roll-off die, the command rolls at least 6 dice, Vex's
    roll-off die among those certain (given 4 it said at least 5, Vex's die "depending on the dice")."""
    from omen_core.commands import RollInitiative
    from omen_core.dice import FacesNeeded

    state = started(sheet("bram", "north", AGI=(8, 2)), sheet("ana", "north", AGI=(6, 1)),
                    sheet("vex", "south", AGI=(8, 2)), sheet("grok", "south", AGI=(6, 0)))
    with pytest.raises(FacesNeeded) as refused:
        decide(state, RollInitiative(dice=faces), ScriptedDice([]))
    assert str(refused.value) == (
        f"this command rolls at least 6 dice as the {len(faces)} faces given fall; give the faces in the command's "
        "dice, in this order (C29): bram's initiative: check d8; ana's initiative: check d6; vex's initiative: check "
        "d8; grok's initiative: check d6; bram's roll off: check d8; vex's roll off: check d8")
    assert (refused.value.given, len(refused.value.needed), refused.value.then) == (len(faces), 6, [])


def test_a_roll_off_that_may_follow_is_listed_once_per_roller() -> None:
    """C19, C29: Brin and Vesh (foes, AGI d8 + 2 each) may tie for initiative: the roll-off dice the command may
    roll are each one's once, not once per tie the probing faces made again and again (the probe's endless ties
    listed them 196 times, and the GM's Roll initiative form grew past the first screen: found by a tester).
    A roll a run makes twice on its own is still listed twice (tests/test_abilities.py: two primary dice each
    rerolled, C39)."""
    from omen_core.commands import RollInitiative
    from omen_core.decide import probe

    state = started(sheet("brin", "north", AGI=(8, 2)), sheet("vesh", "south", AGI=(8, 2)))
    ok, certain, maybe = probe(state, RollInitiative())
    assert ok and [(r.roller, r.purpose) for r in certain] == [("brin", "initiative"), ("vesh", "initiative")]
    assert [(r.roller, r.purpose) for r in maybe] == [("brin", "roll_off"), ("vesh", "roll_off")]
