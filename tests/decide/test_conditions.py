"""Conditions taking effect at their timing (C25, C28, C40), through the ``Fight`` façade with scripted dice (C29).

The ruleset is tests/data/c40-ruleset.toml: Burning (1d4 fire at the afflicted's turn start, 2 ticks),
Poisoned (-1 to every bonus per stack; save ends: RES against the poisoner's INT at the afflicted's turn end),
Bleeding (1 slashing per stack at turn start, no duration), Marked (no numbers; its duration comes with the
effect that applies it), Prone and Dying. Every number below is worked out by hand from the rules text.

=======  ======  =======  ======  ======  ======  =====
         side    AGI      INT     RES     other   HP
=======  ======  =======  ======  ======  ======  =====
kael     heroes  d20 +1   d6 +0   d6 +0   d6 +0   20
vesh     raiders d20 +1   d8 +2   d6 +1   d6 +0   20
=======  ======  =======  ======  ======  ======  =====

Initiative faces 15 and 5: kael 16 goes before vesh 6 (C19).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import msgspec
import pytest
from msgspec.structs import replace
from typer.testing import CliRunner

from omen_cli import app
from omen_core import Fight, ManualDice, MemoryStore, ScriptedDice
from omen_core.commands import AnswerDecision, CancelAction, EndTurn, UseAbility
from omen_core.content import (
    AbilityLibrary,
    ApplyCondition,
    CombatantSheet,
    ConditionDef,
    Ruleset,
    TotalModifiers,
    decode_content,
    load_ruleset,
)
from omen_core.decide import decide
from omen_core.dice import FacesNeeded
from omen_core.errors import ContentError, RuleViolation
from omen_core.events import (
    ActionSettled,
    ConditionApplied,
    ConditionCleared,
    ConditionTicked,
    DamageResolved,
    DecisionAnswered,
    DecisionOpened,
    Event,
    HitDetermined,
    MomentReached,
    ResourceChanged,
    RoundEnded,
    SaveResolved,
    Ticking,
    TurnEnded,
    TurnSkipped,
    TurnStarted,
)
from omen_core.state import MomentFrame
from tests.fights import assert_legal_order, assert_replays, of, scripted
from tests.sheets import sheet

ROOT = Path(__file__).resolve().parents[2]
RULESET_FILE = ROOT / "tests" / "data" / "c40-ruleset.toml"
RULESET = load_ruleset(RULESET_FILE)
GUIDE = (ROOT / "docs" / "abilities.md").read_text()
#: The guide's examples of "Conditions with durations" (docs/abilities.md), as one library.
GUIDE_LIBRARY = decode_content(
    "\n".join(b for b in re.findall(r"```toml\n(.*?)```", GUIDE.split("## Conditions with durations", 1)[1]
                                    .split("\n## ", 1)[0], re.S) if b.startswith("[abilities.")),
    AbilityLibrary, source="docs/abilities.md", fmt="toml")


def kael(*abilities: str) -> CombatantSheet:
    """Hero: AGI d20 +1, the rest d6 +0; the guide's abilities named."""
    written = tuple(a for name in abilities if (a := GUIDE_LIBRARY.get(name)) is not None)
    return replace(sheet("kael", "heroes", AGI=(20, 1)), abilities=written)


def vesh() -> CombatantSheet:
    """Raider: AGI d20 +1, INT d8 +2, RES d6 +1."""
    return sheet("vesh", "raiders", AGI=(20, 1), INT=(8, 2), RES=(6, 1))


Play = Callable[..., Fight]


@pytest.fixture
def play() -> Iterator[Play]:
    """A fight under the C40 ruleset with scripted faces, initiative rolled (kael, then vesh); at teardown its
    replay equals its live state, its events are in legal order and every scripted face was used."""
    made: list[Fight] = []

    def start(*sheets: CombatantSheet, faces: list[int]) -> Fight:
        fight = Fight.start(MemoryStore(), "c40", dice=ScriptedDice([15, 5, *faces]), clock=lambda: 0,
                            ruleset=RULESET)
        for s in sheets or (kael(), vesh()):
            fight.join(s)
        fight.roll_initiative()
        made.append(fight)
        return fight

    yield start
    for fight in made:
        assert_replays(fight)
        assert_legal_order(fight.events)
        assert scripted(fight).remaining == 0, "scripted dice not consumed as C29 expects"


def applied(events: list[Event]) -> ConditionApplied:
    """The last condition applied among ``events``."""
    return of(events, ConditionApplied)[-1]


def damage(events: list[Event]) -> list[tuple[str, str, int]]:
    """Each damage dealt: its source, type and final amount."""
    return [(e.source, e.damage_type, e.final) for e in of(events, DamageResolved)]


class TestTickingDamage:
    def test_two_conditions_tick_at_turn_start_in_the_order_they_were_applied(self, play: Play) -> None:
        """C25, C40: Bleeding (2 stacks: 1 slashing per stack = 2) applied before Burning (1d4 = 3 fire): as vesh's
        turn starts Bleeding deals 2 (20 -> 18), then Burning 3 (18 -> 15) and counts down to 1; outside any
        action, each damage names its condition."""
        fight = play(faces=[3])
        fight.apply_condition("vesh", "Bleeding", 2)
        fight.apply_condition("vesh", "Burning")
        events = fight.end_turn("kael")
        assert damage(events) == [("Bleeding", "slashing", 2), ("Burning", "fire", 3)]
        assert all(e.action is None for e in of(events, DamageResolved))
        assert [(e.before, e.after) for e in of(events, ResourceChanged)] == [(20, 18), (18, 15)]
        assert events[0] == TurnEnded(round=1, who="kael") and events[1] == TurnStarted(round=1, who="vesh")
        assert events[-1] == ConditionTicked(who="vesh", condition="Burning", remaining=1)
        assert fight.state.combatants["vesh"].hp == 15

    def test_the_other_order_of_application_gives_the_other_order(self, play: Play) -> None:
        """C40: Burning applied first ticks first: 1d4 = 1 fire, its count down, then Bleeding's 1 (one stack)."""
        fight = play(faces=[1])
        fight.apply_condition("vesh", "Burning")
        fight.apply_condition("vesh", "Bleeding")
        events = fight.end_turn("kael")
        assert damage(events) == [("Burning", "fire", 1), ("Bleeding", "slashing", 1)]
        ticked = next(i for i, e in enumerate(events) if isinstance(e, ConditionTicked))
        after = events[ticked + 1]
        assert isinstance(after, DamageResolved) and after.source == "Bleeding"

    def test_more_stacks_keep_a_conditions_place_in_the_order(self, play: Play) -> None:
        """C40 (docs/rulings.md): a condition's place is where it began; a second stack of Bleeding after Burning
        does not move it behind Burning: Bleeding 2, then Burning 1d4 = 4."""
        fight = play(faces=[4])
        fight.apply_condition("vesh", "Bleeding")
        fight.apply_condition("vesh", "Burning")
        fight.apply_condition("vesh", "Bleeding")
        # and the state lists it where it began (the tick order was right, the list moved it last: a tester)
        assert list(fight.state.combatants["vesh"].conditions) == ["Bleeding", "Burning"]
        assert damage(fight.end_turn("kael")) == [("Bleeding", "slashing", 2), ("Burning", "fire", 4)]

    def test_burning_burns_twice_then_clears(self, play: Play) -> None:
        """C28, C40: Burning lasts 2 ticks: 1d4 = 2 at vesh's first turn start, 1d4 = 4 at its second, then its
        duration runs out and it clears (20 - 2 - 4 = 14)."""
        fight = play(faces=[2, 4])
        fight.apply_condition("vesh", "Burning")
        fight.end_turn("kael")
        fight.end_turn("vesh")
        events = fight.end_turn("kael")
        assert damage(events) == [("Burning", "fire", 4)]
        assert events[-2:] == [ConditionTicked(who="vesh", condition="Burning", remaining=0),
                               ConditionCleared(action=None, who="vesh", condition="Burning",
                                                reason="its duration ran out (C28)")]
        assert fight.state.combatants["vesh"].hp == 14 and not fight.state.combatants["vesh"].has("Burning")

    def test_resistance_mitigates_a_ticking_damage(self, play: Play) -> None:
        """C13: fire resistance 2 takes 2 off Burning's 1d4 = 3: 1 damage."""
        fight = play(kael(), replace(vesh(), resistances={"fire": 2}), faces=[3])
        fight.apply_condition("vesh", "Burning")
        (burn,) = of(fight.end_turn("kael"), DamageResolved)
        assert (burn.terms.raw, burn.final) == (3, 1)

    def test_a_tick_that_drops_the_afflicted_to_0_ends_the_fight(self, play: Play) -> None:
        """C28, C33, C36: vesh at 2 HP burns for 1d4 = 4 as its turn starts: 0 HP, Dying, and its side is down."""
        fight = play(kael(), replace(vesh(), hp=2), faces=[4])
        fight.apply_condition("vesh", "Burning")
        events = fight.end_turn("kael")
        assert any(isinstance(e, ConditionApplied) and e.condition == "Dying" for e in events)
        assert fight.state.ending is not None and fight.state.ending.side == "raiders"

    @pytest.mark.parametrize("timing", ["round_end", "turn_end"])
    def test_a_tick_at_an_end_that_downs_a_side_begins_nothing_after(self, timing: str) -> None:
        """C33, C40: vesh at 2 HP, Scorched for 5 fire as its turn (or the round) ends, then Seared (1d6 fire,
        applied after it): Scorched takes vesh to 0 HP, Dying, and the fight ends there: Seared rolls no die (it
        rolled, and its damage landed on a side already down: a tester), and no round or turn starts first (it
        started the next round and kael's turn, then ended)."""
        scorched = msgspec.convert({"tick": timing, "damage": {"flat": 5, "damage_type": "fire"}}, ConditionDef)
        seared = msgspec.convert({"tick": timing, "damage": {"dice": {"count": 1, "die": "d6"},
                                                             "damage_type": "fire"}}, ConditionDef)
        ruleset = replace(RULESET, conditions={**RULESET.conditions, "Scorched": scorched, "Seared": seared})
        fight = Fight.start(MemoryStore(), "c33", dice=ScriptedDice([15, 5]), clock=lambda: 0, ruleset=ruleset)
        fight.join(kael())
        fight.join(replace(vesh(), hp=2))
        fight.roll_initiative()
        fight.apply_condition("vesh", "Scorched")
        fight.apply_condition("vesh", "Seared")
        fight.end_turn("kael")
        scorch = ["DamageResolved", "ResourceChanged", "ConditionApplied"]
        expected = {"round_end": ["TurnEnded", *scorch, "RoundEnded", "FightEnded"],
                    "turn_end": [*scorch, "TurnEnded", "FightEnded"]}
        assert [type(e).__name__ for e in fight.end_turn("vesh")] == expected[timing]
        assert fight.state.ending is not None and fight.state.ending.side == "raiders"
        assert scripted(fight).remaining == 0
        assert_replays(fight)
        assert_legal_order(fight.events)

    def test_the_dice_a_tick_rolls_say_which_condition_they_are_for(self, play: Play) -> None:
        """C40, C29: ending kael's turn starts vesh's, and Burning ticks on vesh: the offer to end the turn lists
        vesh's damage die as Burning's (``about``), and a command given without it is told "vesh's Burning damage"
        (a table's roll box named it "vesh's damage", as if vesh dealt it: found by a tester)."""
        fight = play(faces=[3])
        fight.apply_condition("vesh", "Burning")
        (offer,) = [o for o in fight.options().offers if o.command == "end_turn"]
        (choice,) = offer.choices
        assert [(r.roller, r.purpose, r.about) for r in choice.dice] == [("vesh", "damage", "Burning damage")]
        assert msgspec.to_builtins(choice.dice[0])["about"] == "Burning damage"
        with pytest.raises(FacesNeeded, match="vesh's Burning damage: damage d4"):
            decide(fight.state, EndTurn(who="kael"), ManualDice())
        fight.end_turn("kael")

    def test_a_save_ends_saves_dice_say_which_condition_they_are_for(self, play: Play) -> None:
        """C40, C29: Poisoned's save ends as vesh's turn ends: the offer lists vesh's RES die as the save against
        Poisoned and kael's INT die, the applier's, as opposing it (the GM's roll box read "Vesh's Poisoned save"
        for the opposing die, as if Vesh saved: a tester)."""
        fight = play(faces=[1, 6])
        fight.apply_condition("vesh", "Poisoned", by="kael")
        fight.end_turn("kael")
        (offer,) = [o for o in fight.options().offers if o.command == "end_turn"]
        assert [(r.roller, r.purpose, r.about) for r in offer.choices[0].dice] == [
            ("vesh", "save", "RES save against Poisoned"), ("kael", "save", "INT opposing the save against Poisoned")]
        fight.end_turn("vesh")


class TestTurnDurations:
    def test_until_the_end_of_the_appliers_next_turn(self, play: Play) -> None:
        """C40: Marked applied by kael on its own turn, until the end of its next turn: the end of the turn under
        way does not count; it clears as kael's round-2 turn ends, before the turn_ended."""
        fight = play(faces=[])
        marked = applied(fight.apply_condition("vesh", "Marked", by="kael", until="end_of_next_turn"))
        assert (marked.by, marked.until, marked.of) == ("kael", "end_of_next_turn", "kael")
        fight.end_turn("kael")
        fight.end_turn("vesh")
        assert fight.state.combatants["vesh"].has("Marked")
        events = fight.end_turn("kael")
        assert events[:2] == [ConditionCleared(action=None, who="vesh", condition="Marked",
                                               reason="it lasted until the end of kael's next turn, which ended "
                                                      "(C40)"),
                              TurnEnded(round=2, who="kael")]

    def test_until_the_start_of_the_appliers_next_turn(self, play: Play) -> None:
        """C40: Marked until the start of kael's next turn outlasts vesh's turn and clears as kael's round-2 turn
        starts."""
        fight = play(faces=[])
        fight.apply_condition("vesh", "Marked", by="kael", until="start_of_next_turn")
        fight.end_turn("kael")
        events = fight.end_turn("vesh")
        assert events[-1] == ConditionCleared(action=None, who="vesh", condition="Marked",
                                              reason="it lasted until the start of kael's next turn, which started "
                                                     "(C40)")
        assert events[-2] == TurnStarted(round=2, who="kael")

    def test_an_abilitys_condition_until_the_end_of_its_users_next_turn(self, play: Play) -> None:
        """C37, C40: the guide's Searing Brand (an Action) on vesh: Burning, and Marked until the end of kael's next
        turn (the actor's, by default); Burning ticks 1d4 = 2 at vesh's turn start; Marked clears as kael's next
        turn ends, not before (as vesh's second turn starts, Burning's 1d4 = 1 is its last)."""
        fight = play(kael("searing_brand"), vesh(), faces=[2, 1])
        fight.engage("kael", "vesh")
        used = [rec.event for rec in fight.execute(UseAbility(who="kael", ability="searing_brand", target="vesh"))]
        marked = next(e for e in of(used, ConditionApplied) if e.condition == "Marked")
        assert (marked.until, marked.of, marked.by) == ("end_of_next_turn", "kael", None)
        fight.end_turn("kael")
        assert fight.state.combatants["vesh"].hp == 18
        fight.end_turn("vesh")
        assert fight.state.combatants["vesh"].has("Marked")
        assert any(isinstance(e, ConditionCleared) and e.condition == "Marked" for e in fight.end_turn("kael"))

    def test_a_skipped_turn_ends_a_condition_tied_to_it(self, play: Play) -> None:
        """C33, C40: Marked lasts until the end of vesh's next turn; vesh leaves the fight, so its turn is skipped
        when it comes, and the condition on kael ends then."""
        fight = play(kael(), vesh(), sheet("mira", "raiders", AGI=(20, 0)), faces=[1])
        fight.apply_condition("kael", "Marked", by="vesh", until="end_of_next_turn")
        fight.leave_fight("vesh", "fled")
        events = fight.end_turn("kael")
        cleared = of(events, ConditionCleared)
        assert [c.condition for c in cleared] == ["Marked"] and "was skipped" in cleared[0].reason

    def test_of_without_until_is_refused(self) -> None:
        """C40: `of` names whose next turn ends a condition; without `until` it means nothing and is refused."""
        with pytest.raises(msgspec.ValidationError, match="give `until` with it"):
            msgspec.convert({"kind": "condition", "condition": "Marked", "of": "target"}, ApplyCondition)

    def test_until_with_nobody_named_is_refused(self, play: Play) -> None:
        """C40: the GM's `until` needs a combatant whose turn it is: `of`, or who applied it (`by`)."""
        fight = play(faces=[])
        version = fight.version
        with pytest.raises(RuleViolation, match="of whom"):
            fight.apply_condition("vesh", "Marked", until="end_of_next_turn")
        assert fight.version == version


#: The C40 ruleset and two conditions that take effect at a round's end: Scorched (1 fire, 3 ticks) and Hexed
#: (save ends: RES against the hexer's INT).
ROUND_END_TEXT = (RULESET_FILE.read_text() + '\n[conditions.Scorched]\nplaceholder = true\ntick = "round_end"\n'
                  'duration = 3\ndamage = { flat = 1, damage_type = "fire" }\n\n[conditions.Hexed]\nplaceholder = '
                  'true\nsave_ends = { save = "RES", against = "INT", timing = "round_end" }\n')
ROUND_END_RULESET = decode_content(ROUND_END_TEXT, Ruleset, source="round-end.toml", fmt="toml")


class TestDying:
    """What a Dying combatant's conditions do (C36: its turn is skipped; C40), as docs/content.md says."""

    def test_a_skipped_turn_ticks_nothing_a_round_end_ticks_all_an_until_counts_the_skip(self) -> None:
        """C36, C40: vesh (2 HP) burns for 1d4 = 4 as its round-1 turn starts (Burning 1 left): 0 HP, Dying, and
        its turn ends by itself, Poisoned's turn-end save made (RES 1 + 1 - 1 = 1 against kael's INT 6: fails).
        Its round-2 and round-3 turns are skipped: Burning stays at 1 left and deals nothing, Poisoned makes no
        save; but each round's end ticks for it as for anyone: Scorched's 1 fire (vesh stays at 0 HP) and its
        count 3, 2, 1, then it clears; Hexed's save each time (1 against 6). Marked, until the end of vesh's next
        turn, ends at the round-2 skip."""
        fight = Fight.start(MemoryStore(), "dying", dice=ScriptedDice([15, 5, 1, 4, 1, 6, 1, 6, 1, 6, 1, 6]),
                            clock=lambda: 0, ruleset=ROUND_END_RULESET)
        for s in (kael(), replace(vesh(), hp=2), sheet("mira", "raiders", AGI=(20, 0))):
            fight.join(s)
        fight.roll_initiative()
        fight.apply_condition("vesh", "Burning")
        fight.apply_condition("vesh", "Poisoned", by="kael")
        fight.apply_condition("vesh", "Scorched")
        fight.apply_condition("vesh", "Hexed", by="kael")
        round1 = fight.end_turn("kael")
        assert damage(round1) == [("Burning", "fire", 4)] and fight.state.combatants["vesh"].dying
        assert [(s.effect, s.success) for s in of(round1, SaveResolved)] == [("Poisoned", False)]
        assert (of(round1, TurnEnded)[-1].who, fight.state.turn) == ("vesh", "mira")
        fight.apply_condition("mira", "Marked", by="kael", until="end_of_next_turn", of="vesh")
        later = [*fight.end_turn("mira"), *fight.end_turn("kael"), *fight.end_turn("mira"), *fight.end_turn("kael"),
                 *fight.end_turn("mira")]
        assert [(s.round, s.who) for s in of(later, TurnSkipped)] == [(2, "vesh"), (3, "vesh")]
        assert damage(later) == [("Scorched", "fire", 1)] * 3
        assert [(t.condition, t.remaining) for t in of(later, ConditionTicked)] == [("Scorched", 2), ("Scorched", 1),
                                                                                     ("Scorched", 0)]
        assert [(s.effect, s.success) for s in of(later, SaveResolved)] == [("Hexed", False)] * 3
        assert [(c.who, c.condition, c.reason) for c in of(later, ConditionCleared)] == [
            ("mira", "Marked", "it lasted until the end of vesh's next turn, which was skipped (C40)"),
            ("vesh", "Scorched", "its duration ran out (C28)")]
        vesh_now = fight.state.combatants["vesh"]
        assert (vesh_now.hp, vesh_now.remaining["Burning"], vesh_now.has("Poisoned")) == (0, 1, True)
        assert_replays(fight)
        assert scripted(fight).remaining == 0


    def test_a_turn_ended_by_itself_begins_one_whose_tick_downs_the_last_foe_and_the_fight_ends(self) -> None:
        """C33, C36, C40: kael ends his turn; vesh (2 HP) burns for 4 as hers starts: Dying, her turn ends by itself;
        mira (3 HP), the last raider, burns for 3 as hers starts: Dying, and the raiders are down, so the fight ends
        there (it went on, mira's turn open at 0 HP, and a simulation then had nothing to offer her: a tester)."""
        fight = Fight.start(MemoryStore(), "c33", dice=ScriptedDice([15, 5, 1, 4, 3]), clock=lambda: 0,
                            ruleset=RULESET)
        for s in (kael(), replace(vesh(), hp=2), sheet("mira", "raiders", hp=3, AGI=(20, 0))):
            fight.join(s)
        fight.roll_initiative()
        fight.apply_condition("vesh", "Burning")
        fight.apply_condition("mira", "Burning")
        events = fight.end_turn("kael")
        assert damage(events) == [("Burning", "fire", 4), ("Burning", "fire", 3)]
        assert [type(e).__name__ for e in events][-5:] == ["DiceRolled", "DamageResolved", "ResourceChanged",
                                                            "ConditionApplied", "FightEnded"]
        assert fight.state.ending is not None and fight.state.ending.side == "raiders"
        assert_replays(fight)
        assert_legal_order(fight.events)
        assert scripted(fight).remaining == 0


class TestSaveEnds:
    def test_fail_then_succeed(self, play: Play) -> None:
        """C15, C40: Poisoned (by vesh) on kael: at kael's turn end it saves RES (d6 +0, -1 Poisoned) against vesh's
        INT (d8 +2), saver first (C29). Round 1: 3 - 1 = 2 against 4 + 2 = 6, failed, it stays. Round 2: 6 - 1 = 5
        against 3 + 2 = 5: the saver wins ties (C15), and Poisoned clears before the turn ends."""
        fight = play(faces=[3, 4, 6, 3])
        assert applied(fight.apply_condition("kael", "Poisoned", by="vesh")).by == "vesh"
        events = fight.end_turn("kael")
        (failed,) = of(events, SaveResolved)
        assert failed.action is None and failed.effect == "Poisoned"
        assert (failed.saver.roller, failed.saver.total, failed.opposing.roller, failed.opposing.total,
                failed.success) == ("kael", 2, "vesh", 6, False)
        assert fight.state.combatants["kael"].has("Poisoned")
        fight.end_turn("vesh")
        events = fight.end_turn("kael")
        (saved,) = of(events, SaveResolved)
        assert (saved.saver.total, saved.opposing.total, saved.success) == (5, 5, True)
        assert events[2:5] == [saved, ConditionCleared(action=None, who="kael", condition="Poisoned",
                                                reason="kael saved: 5 >= vesh's 5 (save ends, C40; C15)"),
                               TurnEnded(round=2, who="kael")]
        assert not fight.state.combatants["kael"].has("Poisoned")

    def test_a_save_branch_applies_poison_in_the_callers_name(self, play: Play) -> None:
        """C15, C25, C40: the guide's Venom Dart: vesh saves AGI (d20 +1) against kael's AGI: 2 + 1 = 3 < 10 + 1 =
        11, failed: Poisoned, applied by kael (the caller); at vesh's turn end it saves RES (d6 +1 - 1) against
        kael's INT (d6 +0): 6 + 0 = 6 >= 2: it clears."""
        fight = play(kael("venom_dart"), vesh(), faces=[2, 10, 6, 2])
        used = [rec.event for rec in fight.execute(UseAbility(who="kael", ability="venom_dart", target="vesh"))]
        assert next(e for e in of(used, ConditionApplied)).by == "kael"
        events = fight.end_turn("kael")
        assert events[-1] == TurnStarted(round=1, who="vesh")
        events = fight.end_turn("vesh")
        (saved,) = of(events, SaveResolved)
        assert (saved.saver.total, saved.opposing.roller, saved.opposing.total, saved.success) == (6, "kael", 2, True)

    def test_a_save_ends_condition_needs_another_applier(self, play: Play) -> None:
        """C15, C40: the GM's Poisoned without `by`, or by the afflicted itself, is refused; nothing is written."""
        fight = play(faces=[])
        version = fight.version
        with pytest.raises(RuleViolation, match="say who did"):
            fight.apply_condition("kael", "Poisoned")
        with pytest.raises(RuleViolation, match="cannot oppose its own save"):
            fight.apply_condition("kael", "Poisoned", by="kael")
        assert fight.version == version

    def test_an_ability_poisoning_its_own_owner_is_refused_at_join(self) -> None:
        """C15, C40: an ability that applies a save-ends condition to its owner is refused at join, naming it."""
        library = decode_content('[abilities.bad]\nname = "Bad"\nuse = "action"\ntarget = "self"\n'
                                 'effects = [{ kind = "condition", to = "actor", condition = "Poisoned" }]',
                                 AbilityLibrary, source="bad.toml", fmt="toml")
        fight = Fight.start(MemoryStore(), "c40", dice=ScriptedDice([]), clock=lambda: 0, ruleset=RULESET)
        with pytest.raises(RuleViolation, match="own owner") as refused:
            fight.join(replace(kael(), abilities=(replace(library.abilities["bad"], id="bad"),)))
        assert refused.value.facts["field"] == "$.abilities[0].effects[0].to"


    def test_an_ability_poisoning_whoever_it_aims_at_is_refused_on_its_owner(self, play: Play) -> None:
        """C15, C40: an ability aimed at anyone that poisons its target (Poisoned: a save ends it) is refused when
        its owner aims it at itself (nobody would oppose the save), nothing written, and not offered on it; on vesh
        it is used."""
        aimed = decode_content('[abilities.taint]\nname = "Taint"\nuse = "bonus_action"\ntarget = "any"\n'
                               'effects = [{ kind = "condition", condition = "Poisoned" }]',
                               AbilityLibrary, source="taint.toml", fmt="toml").get("taint")
        assert aimed is not None
        fight = play(replace(kael(), abilities=(aimed,)), vesh(), faces=[])
        version = fight.version
        with pytest.raises(RuleViolation, match=r"\[C40\] Taint applies Poisoned to its own actor"):
            fight.execute(UseAbility(who="kael", ability="taint", target="kael"))
        assert fight.version == version
        offered = [c.args.get("target") for o in fight.options().offers if o.command == "use_ability"
                   for c in o.choices]
        assert offered == ["vesh"]
        fight.execute(UseAbility(who="kael", ability="taint", target="vesh"))
        assert applied([r.event for r in fight.events]).who == "vesh"

#: The round-end ruleset and Seared, 1 fire as the afflicted's turn ends for 2 of its turns: a condition due at the
#: same moment as Poisoned's save, to tick after it (C40).
ANSWERED_RULESET = decode_content(
    ROUND_END_TEXT + '\n[conditions.Seared]\nplaceholder = true\ntick = "turn_end"\nduration = 2\n'
    'damage = { flat = 1, damage_type = "fire" }\n', Ruleset, source="answered.toml", fmt="toml")

#: Abilities that answer a save failed (C38) as their owner called it or applied the condition saved against.
TWISTS = decode_content(
    '[abilities.venom_twist]\nname = "Venom Twist"\nuse = "trigger"\n'
    'trigger = { moment = "save.resolved", owner = "caller", outcome = "failure" }\n'
    'effects = [{ kind = "damage", to = "target", dice = { count = 1, die = "d4" }, damage_type = "fire" }]\n\n'
    '[abilities.steady]\nname = "Steady"\nuse = "trigger"\n'
    'trigger = { moment = "save.resolved", owner = "saver", outcome = "success" }\ncost = { will = 1 }\n'
    'effects = [{ kind = "damage", to = "target", dice = { count = 1, die = "d4" }, damage_type = "fire" }]\n',
    AbilityLibrary, source="twists.toml", fmt="toml")


def twisted(base: CombatantSheet, *names: str) -> CombatantSheet:
    """``base`` with the abilities of :data:`TWISTS` named."""
    return replace(base, abilities=tuple(a for n in names if (a := TWISTS.get(n)) is not None))


def answered_fight(faces: list[int], kael_sheet: CombatantSheet | None = None,
                   vesh_sheet: CombatantSheet | None = None) -> Fight:
    """kael (first) and vesh under :data:`ANSWERED_RULESET`, initiative rolled, scripted ``faces`` after it."""
    fight = Fight.start(MemoryStore(), "answered", dice=ScriptedDice([15, 5, *faces]), clock=lambda: 0,
                        ruleset=ANSWERED_RULESET)
    fight.join(kael_sheet or kael())
    fight.join(vesh_sheet or twisted(vesh(), "venom_twist"))
    fight.roll_initiative()
    return fight


class TestSaveEndsAnswered:
    """A save-ends save is a save made or failed (C38): its ``save.resolved`` moment, the tick going on after it
    (C40)."""

    def test_a_failed_save_ends_save_waits_for_the_applier_then_the_tick_goes_on(self) -> None:
        """C38, C40, C15: Poisoned (by vesh), then Seared on kael; at kael's turn end Poisoned's save fails (RES
        3 - 1 = 2 against vesh's INT 4 + 2 = 6): the moment save.resolved opens Venom Twist to vesh and the turn
        waits. vesh uses it: 1d4 = 3 fire on kael (20 -> 17). Then Seared ticks (1 fire: 16, 1 left), the turn
        ends and vesh's begins."""
        fight = answered_fight([3, 4, 3])
        fight.apply_condition("kael", "Poisoned", by="vesh")
        fight.apply_condition("kael", "Seared")
        events = fight.end_turn("kael")
        (failed,) = of(events, SaveResolved)
        assert (failed.saver.total, failed.opposing.total, failed.success) == (2, 6, False)
        (reached,) = of(events, MomentReached)
        poisoned = fight.state.combatants["kael"].applied["Poisoned"]
        assert (reached.moment, reached.who, reached.other, reached.outcome, reached.condition, reached.ticking) == (
            "save.resolved", "kael", "vesh", "failure", "Poisoned",
            Ticking(timing="turn_end", after=poisoned, through=fight.state.applications))
        (opened,) = of(events, DecisionOpened)
        assert (opened.decision, opened.responders, opened.hook) == ("venom_twist", ("vesh",), "save.resolved")
        assert not of(events, TurnEnded) and not of(events, DamageResolved) and fight.state.turn == "kael"
        with pytest.raises(RuleViolation):
            fight.end_turn("kael")  # the turn waits on the moment
        answered = fight.execute(AnswerDecision(decision="venom_twist", who="vesh", choice="use"))
        after = [rec.event for rec in answered]
        assert damage(after) == [("Venom Twist", "fire", 3), ("Seared", "fire", 1)]
        assert [(t.condition, t.remaining) for t in of(after, ConditionTicked)] == [("Seared", 1)]
        assert after[-2:] == [TurnEnded(round=1, who="kael"), TurnStarted(round=1, who="vesh")]
        kael_now = fight.state.combatants["kael"]
        assert (kael_now.hp, kael_now.has("Poisoned"), fight.state.turn) == (16, True, "vesh")
        assert_replays(fight)
        assert_legal_order(fight.events)
        assert scripted(fight).remaining == 0

    def test_passing_goes_on_as_the_tick_would_have(self) -> None:
        """C38, C40: the same failed save; vesh passes: nothing is dealt by it, Seared ticks (20 -> 19), the turn
        ends; the events after the answer are those an unanswered tick records after the save."""
        fight = answered_fight([3, 4])
        fight.apply_condition("kael", "Poisoned", by="vesh")
        fight.apply_condition("kael", "Seared")
        fight.end_turn("kael")
        after = [rec.event for rec in fight.execute(AnswerDecision(decision="venom_twist", who="vesh", choice="pass"))]
        plain = answered_fight([3, 4], vesh_sheet=vesh())
        plain.apply_condition("kael", "Poisoned", by="vesh")
        plain.apply_condition("kael", "Seared")
        unanswered = plain.end_turn("kael")
        tail = unanswered[unanswered.index(of(unanswered, SaveResolved)[0]) + 1:]
        settled = next(i for i, e in enumerate(after) if isinstance(e, ActionSettled))
        assert after[settled + 1:] == tail
        assert fight.state.combatants["kael"].hp == plain.state.combatants["kael"].hp == 19
        assert_replays(fight)

    def test_a_success_opens_only_what_answers_a_success(self) -> None:
        """C38, C15: kael saves (RES 6 - 1 = 5 against vesh's INT 1 + 2 = 3): Poisoned clears; Venom Twist (on a
        failure) is not offered, and no moment is recorded with nobody to answer it. With Steady (kael's, on a
        success, 1 Will) the moment opens to kael after the clearing; kael uses it on vesh, who applied it: 1d4 =
        2 fire (20 -> 18), 1 Will paid."""
        fight = answered_fight([6, 1])
        fight.apply_condition("kael", "Poisoned", by="vesh")
        events = fight.end_turn("kael")
        assert not of(events, MomentReached) and events[-1] == TurnStarted(round=1, who="vesh")
        steady = answered_fight([6, 1, 2], kael_sheet=twisted(kael(), "steady"))
        steady.apply_condition("kael", "Poisoned", by="vesh")
        events = steady.end_turn("kael")
        cleared, reached = of(events, ConditionCleared)[0], of(events, MomentReached)[0]
        assert events.index(cleared) < events.index(reached) and reached.outcome == "success"
        assert of(events, DecisionOpened)[0].responders == ("kael",)
        after = [rec.event for rec in steady.execute(AnswerDecision(decision="steady", who="kael", choice="use"))]
        assert damage(after) == [("Steady", "fire", 2)]
        assert (steady.state.combatants["vesh"].hp, steady.state.combatants["kael"].will) == (18, 9)
        assert steady.state.turn == "vesh"
        assert_replays(steady)

    def test_at_the_round_end_the_tick_goes_on_across_combatants_then_the_round(self) -> None:
        """C38, C40: Hexed (by kael) on vesh, then Scorched on kael, both due at the round's end. vesh fails its
        save (RES 1 + 1 = 2 against kael's INT 6): kael's Venom Twist, 1d4 = 4 fire on vesh (20 -> 16); then
        Scorched burns kael (1 fire: 19), the round ends and the next starts with kael's turn."""
        fight = answered_fight([1, 6, 4], kael_sheet=twisted(kael(), "venom_twist"), vesh_sheet=vesh())
        fight.apply_condition("vesh", "Hexed", by="kael")
        fight.apply_condition("kael", "Scorched")
        fight.end_turn("kael")
        events = fight.end_turn("vesh")
        (reached,) = of(events, MomentReached)
        assert reached.ticking is not None and reached.ticking.timing == "round_end"
        assert not of(events, RoundEnded)
        after = [rec.event for rec in fight.execute(AnswerDecision(decision="venom_twist", who="kael", choice="use"))]
        assert damage(after) == [("Venom Twist", "fire", 4), ("Scorched", "fire", 1)]
        assert of(after, RoundEnded) == [RoundEnded(round=1)] and fight.state.turn == "kael"
        assert (fight.state.combatants["vesh"].hp, fight.state.combatants["kael"].hp) == (16, 19)
        assert_replays(fight)
        assert scripted(fight).remaining == 0

    @pytest.mark.parametrize("timing", ["turn_end", "round_end"])
    def test_called_off_the_tick_goes_on(self, timing: str) -> None:
        """C38, C40: the GM calls the moment off (cancel_action): Venom Twist goes unanswered, and the tick goes on
        as after an answer: at kael's turn end Seared ticks (1 fire: 20 -> 19) and vesh's turn begins; at the
        round's end (Hexed on vesh, then Scorched on kael) Scorched burns kael (20 -> 19) and round 2 starts with
        kael's turn (it stayed kael's turn, or the round stalled: found by a tester)."""
        if timing == "turn_end":
            fight = answered_fight([3, 4])
            fight.apply_condition("kael", "Poisoned", by="vesh")
            fight.apply_condition("kael", "Seared")
            fight.end_turn("kael")
        else:
            fight = answered_fight([1, 6], kael_sheet=twisted(kael(), "venom_twist"), vesh_sheet=vesh())
            fight.apply_condition("vesh", "Hexed", by="kael")
            fight.apply_condition("kael", "Scorched")
            fight.end_turn("kael")
            fight.end_turn("vesh")
        assert isinstance(fight.state.pending, MomentFrame)
        after = [rec.event for rec in fight.execute(CancelAction(reason="let it pass"))]
        assert damage(after) == [("Seared" if timing == "turn_end" else "Scorched", "fire", 1)]
        assert not of(after, DecisionAnswered) and fight.state.pending is None
        assert (fight.state.turn, fight.state.round) == (("vesh", 1) if timing == "turn_end" else ("kael", 2))
        assert fight.state.combatants["kael"].hp == 19
        assert_replays(fight)
        assert scripted(fight).remaining == 0

    def test_undo_of_the_answer_goes_back_before_the_turn_end(self) -> None:
        """C38, undo: the moment is an action in progress, so undoing vesh's answer goes back to the last command
        begun at rest (docs/scenarios.md, "undo point"): the end_turn, its save and the moment with it; the state is
        the one before that end_turn, and the turn is kael's to end again."""
        fight = answered_fight([3, 4, 3])
        fight.apply_condition("kael", "Poisoned", by="vesh")
        before = fight.state
        fight.end_turn("kael")
        fight.execute(AnswerDecision(decision="venom_twist", who="vesh", choice="use"))
        fight.undo()
        strip = {"version": 0, "last_hash": "", "redo_stack": (), "live_seq": 0}
        assert replace(fight.state, **strip) == replace(before, **strip)
        assert fight.state.turn == "kael" and fight.state.pending is None


class TestUndo:
    def test_undo_of_a_turn_end_with_damage_and_a_save_restores_the_state(self, play: Play) -> None:
        """C40, undo: vesh ends its turn; kael's turn starts with Burning (1d4 = 3) and Bleeding (1), and Marked
        (until the start of kael's next turn) clears; undoing that end_turn gives exactly the state before it."""
        fight = play(faces=[3])
        fight.apply_condition("kael", "Marked", by="kael", until="start_of_next_turn")
        fight.apply_condition("kael", "Burning")
        fight.apply_condition("kael", "Bleeding")
        fight.end_turn("kael")
        before = fight.state
        events = fight.end_turn("vesh")
        assert damage(events) == [("Burning", "fire", 3), ("Bleeding", "slashing", 1)]
        assert fight.state != before
        fight.undo()
        after = fight.state
        strip = {"version": 0, "last_hash": "", "redo_stack": (), "live_seq": 0}
        assert replace(after, **strip) == replace(before, **strip)
        assert after.until == before.until and after.combatants == before.combatants


class TestContent:
    def test_the_example_conditions_load(self) -> None:
        """C28, C40: the test ruleset's Burning, Poisoned and Bleeding read as the guide says."""
        burning, poisoned, bleeding = (RULESET.conditions[n] for n in ("Burning", "Poisoned", "Bleeding"))
        assert burning.damage is not None and burning.damage.dice is not None
        assert (burning.tick, burning.duration, burning.damage.dice.die, burning.damage.damage_type) == \
            ("turn_start", 2, "d4", "fire")
        assert poisoned.save_ends is not None
        assert (poisoned.attribute_bonus, poisoned.save_ends.save, poisoned.save_ends.against,
                poisoned.save_ends.timing) == (-1, "RES", "INT", "turn_end")
        assert bleeding.damage is not None and bleeding.damage.per_stack

    def test_the_content_guides_conditions_are_the_test_rulesets(self) -> None:
        """docs/content.md's example conditions are the ones this file plays (so the guide's are tested)."""
        guide = (ROOT / "docs" / "content.md").read_text()
        block = next(b for b in re.findall(r"```toml\n(.*?)```", guide, re.S) if b.startswith("[conditions.Burning]"))
        shown = decode_content('name = "x"\n' + block, Ruleset, source="docs/content.md", fmt="toml")
        assert shown.conditions == {k: v for k, v in RULESET.conditions.items() if k in shown.conditions}
        assert set(shown.conditions) == {"Burning", "Poisoned"}

    def test_damage_without_a_tick_is_refused(self) -> None:
        """C25, C40: a condition deals its damage when it ticks; one that never ticks cannot: refused at its damage's
        field and line (it was at the condition's table, line 2: a tester), under C40's id."""
        with pytest.raises(ContentError, match="give it a tick timing") as refused:
            decode_content('name = "x"\n[conditions.Hot]\nmax_stacks = 2\ndamage = { flat = 1, damage_type = "fire" }',
                           Ruleset, source="x.toml", fmt="toml")
        assert (refused.value.path, refused.value.line) == ("$.conditions.Hot.damage", 4)
        assert str(refused.value).startswith("x.toml:4: [C40] a condition deals its damage when it ticks")

    def test_damage_and_a_duration_without_a_tick_are_refused_naming_both(self) -> None:
        """C25, C40: a condition with damage and a duration but ``tick = "never"`` is refused for both: the message
        named the damage alone, though the duration needs a tick too (a tester; docs/content.md)."""
        with pytest.raises(ContentError, match=r"deals its damage and counts its duration down when it ticks: give "
                                               r"it a tick timing .*, or no damage and no duration"):
            decode_content('name = "x"\n[conditions.Hot]\ntick = "never"\nduration = 2\n'
                           'damage = { flat = 1, damage_type = "fire" }', Ruleset, source="x.toml", fmt="toml")

    def test_a_tick_damage_of_an_unknown_type_is_refused(self) -> None:
        """C14: a condition's damage type must be one the ruleset lists."""
        with pytest.raises(ContentError, match="'ooze', a damage type the ruleset does not list"):
            decode_content('name = "x"\n[conditions.Slimed]\ntick = "turn_end"\n'
                           'damage = { flat = 1, damage_type = "ooze" }', Ruleset, source="x.toml", fmt="toml")

    def test_core_conditions_keep_their_bytes(self) -> None:
        """The new keys have defaults: the core ruleset's conditions encode as before (no damage, no save_ends)."""
        core = load_ruleset()
        assert all(c.damage is None and c.save_ends is None for c in core.conditions.values())
        assert b"save_ends" not in msgspec.json.encode(core) and b'"damage"' not in msgspec.json.encode(core)
        assert ConditionDef() == msgspec.json.decode(b"{}", type=ConditionDef)


SCENARIO = """
[fight]
id = "c40"
dice = "scripted"
ruleset = "RULESET"
abilities = ["guide.toml"]

[[combatants]]
id = "kael"
name = "Kael"
side = "heroes"
hp = 20
abilities = ["searing_brand", "venom_dart"]

[combatants.attributes]
STR = { die = "d6" }
AGI = { die = "d20", bonus = 1 }
INT = { die = "d6" }
RES = { die = "d6" }
FCS = { die = "d6" }

[[combatants]]
id = "vesh"
name = "Vesh"
side = "raiders"
hp = 20

[combatants.attributes]
STR = { die = "d6" }
AGI = { die = "d20", bonus = 1 }
INT = { die = "d8", bonus = 2 }
RES = { die = "d6", bonus = 1 }
FCS = { die = "d6" }

[[commands]]
command = "engage"
who = "kael"
others = ["vesh"]

[[commands]]
command = "roll_initiative"
dice = [15, 5]

[[commands]]
command = "use_ability"      # Burning, and Marked until the end of kael's next turn
who = "kael"
ability = "searing_brand"
target = "vesh"

[[commands]]
command = "end_turn"         # vesh's turn starts: Burning 1d4 = 3
who = "kael"
dice = [3]

[[commands]]
command = "end_turn"
who = "vesh"

[[commands]]
command = "use_ability"      # Venom Dart: vesh's AGI 2 + 1 = 3 against kael's 10 + 1 = 11: Poisoned
who = "kael"
ability = "venom_dart"
target = "vesh"
dice = [2, 10]

[[commands]]
command = "end_turn"         # Marked clears; vesh's turn starts: Burning 1d4 = 1, then it runs out
who = "kael"
dice = [1]

[[commands]]
command = "end_turn"         # vesh saves RES 1 + 1 - 1 = 1 against kael's INT 5: still Poisoned
who = "vesh"
dice = [1, 5]

[[commands]]
command = "apply_condition"  # the GM: Marked on kael until the start of vesh's next turn
who = "kael"
condition = "Marked"
by = "vesh"
until = "start_of_next_turn"
"""


def test_a_scenario_using_them_runs_verifies_and_explains(tmp_path: Path) -> None:
    """C40: a scenario with the guide's abilities under the C40 ruleset runs (vesh 20 - 3 - 1 = 16 HP, still
    Poisoned, kael Marked), `omen verify` finds nothing, and `omen explain` explains a tick's damage and a
    condition's save (vesh's RES 1 + 1 - 1 Poisoned = 1 against kael's INT 5), from the damage's seq or its die's."""
    guide = "\n".join(b for b in re.findall(r"```toml\n(.*?)```", GUIDE, re.S) if b.startswith("[abilities."))
    (tmp_path / "guide.toml").write_text(guide)
    scenario = tmp_path / "c40.toml"
    scenario.write_text(SCENARIO.replace("RULESET", str(RULESET_FILE)))
    log = tmp_path / "c40.jsonl"
    runner = CliRunner()
    ran = runner.invoke(app, ["run", str(scenario), "--log", str(log), "--json"])
    assert ran.exit_code == 0, ran.output
    end = json.loads(ran.stdout)
    vesh_end = next(c for c in end["combatants"] if c["id"] == "vesh")
    kael_end = next(c for c in end["combatants"] if c["id"] == "kael")
    assert vesh_end["hp"] == 16 and "Poisoned" in vesh_end["conditions"] and "Burning" not in vesh_end["conditions"]
    assert "Marked" in kael_end["conditions"]
    verified = runner.invoke(app, ["verify", str(log)])
    assert verified.exit_code == 0, verified.output
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    save = next(r["seq"] for r in lines if r["event"]["type"] == "save_resolved" and r["event"]["action"] is None)
    explained = runner.invoke(app, ["explain", str(log), str(save)])
    assert explained.exit_code == 0, explained.output
    assert "save against Poisoned" in explained.stdout and "failed: 1 < 5" in explained.stdout
    burn = next(r["seq"] for r in lines if r["event"]["type"] == "damage_resolved" and r["event"]["action"] is None)
    explained = runner.invoke(app, ["explain", str(log), str(burn)])
    assert "3 fire damage to vesh from Burning as it ticks" in explained.stdout
    die = runner.invoke(app, ["explain", str(log), str(burn - 1)])  # its die: the tick it feeds (it showed the die)
    assert lines[burn - 2]["event"]["type"] == "dice_rolled" and die.stdout == explained.stdout


# -- per-stack modifiers on named totals (C28) ---------------------------------------------------------------------

#: Exposed: -1 to the defense of an attack on its bearer per stack (up to 3); Shaken: -1 to the hit total and -1 to
#: the damage of its bearer's attacks per stack (up to 2). One data change each, no code (issue 27).
NAMED = replace(RULESET, conditions={**RULESET.conditions,
                                     "Exposed": ConditionDef(max_stacks=3, modifiers=TotalModifiers(defense=-1)),
                                     "Shaken": ConditionDef(max_stacks=2,
                                                            modifiers=TotalModifiers(hit=-1, damage=-1))})


def named_fight(faces: list[int]) -> Fight:
    """Ana and the orc (tests.sheets: every attribute d6 +0, 20 HP) under NAMED, faces in C29 order."""
    fight = Fight.start(MemoryStore(), "named", dice=ScriptedDice(faces), clock=lambda: 0, ruleset=NAMED)
    fight.join(sheet("ana"))
    fight.join(sheet("orc", side="raiders"))
    return fight


def test_a_conditions_defense_modifier_per_stack_names_itself_in_the_defense() -> None:
    """C28: two stacks of Exposed on Ana: her defense against the orc's unarmed attack is RES die 4 + Defense Rating
    (RES +0, no armor) - 2 = 2, the term named "Exposed x2"; the hit 2 + 1 = 3 beats it (C5, C11): without the
    stacks it would have missed (3 < 4)."""
    fight = named_fight([2, 1, 4])
    fight.apply_condition("ana", "Exposed", 2)
    fight.attack("orc", "ana", unarmed=True)
    fight.defend("ana", None)
    determined = next(r.event for r in reversed(fight.events) if isinstance(r.event, HitDetermined))
    assert determined.defense.total == 2 and determined.hit
    assert ("Exposed x2", -2) in [(m.source, m.value) for m in determined.defense.modifiers]
    assert_replays(fight)


def test_a_conditions_hit_and_damage_modifiers_apply_to_its_bearers_attacks() -> None:
    """C28: one stack of Shaken on the orc: its hit total is STR 5 + FCS 1 - 1 = 5 > Ana's RES 2 (C5), and its
    damage, raw STR 5 - 1 = 4 (C12): Ana 20 -> 16; each term named "Shaken"."""
    fight = named_fight([5, 1, 2])
    fight.apply_condition("orc", "Shaken")
    fight.attack("orc", "ana", unarmed=True)
    fight.defend("ana", None)
    determined = next(r.event for r in reversed(fight.events) if isinstance(r.event, HitDetermined))
    assert determined.attack.total == 5
    assert ("Shaken", -1) in [(m.source, m.value) for m in determined.attack.situational]
    dealt = [r.event for r in fight.events if isinstance(r.event, DamageResolved)]
    assert [(d.terms.raw, d.final) for d in dealt] == [(4, 4)] and fight.state.combatants["ana"].hp == 16
    assert ("Shaken", -1) in [(m.source, m.value) for m in dealt[0].terms.modifiers]
    assert_replays(fight)


def test_a_named_total_modifier_is_written_in_the_ruleset_file() -> None:
    """C28: `modifiers = { defense = -1 }` under a condition of a ruleset file loads; an unknown total is refused
    with the file, the line and the field path."""
    text = RULESET_FILE.read_text() + "\n[conditions.Exposed]\nmax_stacks = 3\nmodifiers = { defense = -1 }\n"
    loaded = decode_content(text, Ruleset, source="house.toml", fmt="toml")
    assert loaded.conditions["Exposed"].modifiers == TotalModifiers(defense=-1)
    with pytest.raises(ContentError, match=r"house.toml:\d+: .*unknown field `luck`") as info:
        decode_content(text.replace("defense = -1", "luck = -1"), Ruleset, source="house.toml", fmt="toml")
    assert info.value.path == "$.conditions.Exposed.modifiers.luck"


def test_a_per_stack_tick_past_the_dice_bound_is_refused_before_rolling() -> None:
    """C40, docs/rulings.md "Limits on dice": Rot deals 100d6 per stack as it ticks; at 101 stacks on Kael its tick
    would roll 10,100 dice, past the 10,000 one roll may hold, and that line would not decode, leaving a log no
    reader reads (it was written): the command that would tick it (the initiative that starts Kael's turn) is
    refused, nothing written; at 100 stacks the 10,000 dice are rolled and the log reads back."""
    from omen_core import SeededDice
    from omen_core.content import ConditionDamage, ConditionDef, DamageDice
    from omen_core.errors import RuleViolation
    from omen_core.events import decode_line, encode_line
    from tests.sheets import CORE, sheet

    rot = ConditionDef(max_stacks=200, tick="turn_start", damage=ConditionDamage(
        dice=DamageDice(count=100, die="d6"), damage_type="poison", per_stack=True))
    rules = replace(CORE, conditions={**CORE.conditions, "Rot": rot})
    for stacks, refused in ((101, True), (100, False)):
        fight = Fight.start(MemoryStore(), "rot", dice=SeededDice(b"r" * 16), clock=lambda: 0, ruleset=rules,
                            combatants=[sheet("kael", hp=10**9), sheet("vesh", side="raiders", hp=10**9)])
        fight.apply_condition("kael", "Rot", stacks)
        before = fight.version
        if refused:
            with pytest.raises(RuleViolation, match=r"Rot's damage as it ticks on 'kael' would roll 10,100 dice "
                                                    r"\(100 d6 for each of 101 stacks\)"):
                fight.roll_initiative()
            assert fight.version == before
        else:
            fight.roll_initiative()
            assert all(decode_line(encode_line(rec)) == rec for rec in fight.events)
