"""The fight's flow through the ``Fight`` façade with scripted dice (C29): ambush, initiative, turns, conditions, the
end.

Every expected number is worked out by hand from combat.txt,
rolls-and-resolution.txt and CLARIFICATIONS.md (C17-C21, C25, C28); no test
calls the engine's own rule functions to get a number.

The sheets used throughout (d20 AGI so initiative faces are easy to script):

=========  ======  =======  ======  ======  =======  ==========================
           STR     AGI      INT     RES     FCS      skills
=========  ======  =======  ======  ======  =======  ==========================
kael       d8 +2   d20 +1   d6 +0   d6 +0   d12 +1   Perception (FCS) level 1
vesh       d8 +1   d20 +1   d6 +0   d6 +1   d6 +0    Stealth (AGI) level 2
mira       d6 +0   d20 +1   d6 +0   d6 +0   d20 +0   none
wren       d6 +0   d10 +2   d6 +0   d6 +0   d6 +0    none
=========  ======  =======  ======  ======  =======  ==========================

kael and mira are heroes, vesh and wren raiders; each carries a sword (WD 4,
slashing, no hit bonus). Initiative = AGI face + AGI bonus (C19), so for kael,
vesh and mira it is face + 1, for wren face + 2. Dice are consumed in C29 order:
ambush = each ambusher's Stealth in declared order, then each defender's
Perception; initiative = combatants in the order they joined; roll-offs = the
tied group in that order; an attack = attacker primary, attacker FCS, defender
RES, Active Defense die.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import pytest
from msgspec.structs import replace

from omen_core import CheckSpec, Fight, MemoryStore, Modifier, ScriptedDice
from omen_core.commands import EndTurn
from omen_core.content import (
    Ability,
    CombatantSheet,
    ConditionDef,
    DealDamage,
    Ruleset,
    SaveEffect,
    Weapon,
    decode_content,
)
from omen_core.errors import RuleViolation
from omen_core.events import (
    ActionSettled,
    ActiveDefenseWindowOpened,
    AmbushDifficultySet,
    AmbushStarted,
    AttackDeclared,
    BonusActionsRefilled,
    CommandIssued,
    ConditionApplied,
    ConditionCleared,
    ConditionTicked,
    DiceRolled,
    Event,
    FightEnded,
    HitDetermined,
    InitiativeAgreed,
    InitiativeOrderSet,
    InitiativeRolled,
    InitiativeRollOff,
    InitiativeTied,
    Moved,
    MovementDeclared,
    ReactionWindowOpened,
    ResourceChanged,
    RoundEnded,
    RoundStarted,
    SaveResolved,
    SurpriseDetermined,
    TurnEnded,
    TurnSkipped,
    TurnStarted,
    WeaponDrawn,
    encode_line,
)
from omen_core.machine import OutOfPhase, Phase
from omen_core.rules.ambush import TimeWaited
from tests.fights import as_, assert_legal_order, assert_replays, last, new_fight, of, payloads, scripted
from tests.sheets import CORE, sheet

# -- sheets -----------------------------------------------------------------------------------

SWORD = Weapon(id="sword", weapon_damage=4, damage_type="slashing")


def _armed(s: CombatantSheet, drawn: bool) -> CombatantSheet:
    return replace(s, weapons=(SWORD,), wielding=None if drawn else ())


def kael(drawn: bool = True, hp: int = 20) -> CombatantSheet:
    """Hero: STR d8+2, AGI d20+1, RES d6+0, FCS d12+1, Perception (FCS) 1, a sword (in hand unless ``drawn=False``)."""
    return _armed(sheet("kael", "heroes", hp=hp, skills={"Perception": ("FCS", 1)},
                        STR=(8, 2), AGI=(20, 1), RES=(6, 0), FCS=(12, 1)), drawn)


def vesh(drawn: bool = True, hp: int = 20) -> CombatantSheet:
    """Raider: STR d8+1, AGI d20+1, RES d6+1, FCS d6+0, Stealth (AGI) 2, a sword."""
    return _armed(sheet("vesh", "raiders", hp=hp, skills={"Stealth": ("AGI", 2)},
                        STR=(8, 1), AGI=(20, 1), RES=(6, 1)), drawn)


def mira(drawn: bool = True) -> CombatantSheet:
    """Hero with no skills on the sheet: AGI d20+1, FCS d20+0 (Perception defaults to FCS, C2), a sword."""
    return _armed(sheet("mira", "heroes", AGI=(20, 1), FCS=(20, 0)), drawn)


def wren(drawn: bool = True, hp: int = 20) -> CombatantSheet:
    """Raider with no skills on the sheet: AGI d10+2 (Stealth defaults to AGI, C2), a sword."""
    return _armed(sheet("wren", "raiders", hp=hp, AGI=(10, 2)), drawn)


# -- every fight is checked against its replay and the lifecycle order ---------------------------

Play = Callable[..., Fight]


@pytest.fixture
def play() -> Iterator[Play]:
    """Start a fight with scripted faces; at teardown check replay, legal order and the dice left over.

    ``spare`` is how many scripted faces must still be unused at the end (None: not checked).
    """
    made: list[tuple[Fight, int | None]] = []

    def start(*sheets: CombatantSheet, faces: list[int], spare: int | None = 0,
              ruleset: Ruleset | None = None) -> Fight:
        if ruleset is None:
            fight = new_fight(*sheets, faces=faces)
        else:
            fight = Fight.start(MemoryStore(), "t", dice=ScriptedDice(faces), clock=lambda: 0, ruleset=ruleset)
            for s in sheets:
                fight.join(s)
        made.append((fight, spare))
        return fight

    yield start
    for fight, spare in made:
        assert_replays(fight)
        assert_legal_order(fight.events)
        if spare is not None:
            assert scripted(fight).remaining == spare, "scripted dice not consumed as C29 expects"


def refused(fight: Fight, command: Callable[[], object], rule: str) -> RuleViolation:
    """The command raises RuleViolation naming ``rule``; the log, its version and the dice are untouched."""
    before, version, remaining = fight.events, fight.version, scripted(fight).remaining
    with pytest.raises(RuleViolation) as info:
        command()
    assert info.value.rule == rule
    assert fight.events == before and fight.version == version and scripted(fight).remaining == remaining
    return info.value


def out_of_phase(fight: Fight, command: Callable[[], object], phase: Phase) -> OutOfPhase:
    """The command is refused as out of phase (rule "phase"), naming ``phase``; nothing is written."""
    err = refused(fight, command, "phase")
    assert isinstance(err, OutOfPhase) and err.phase is phase
    assert f"in the {phase.value} phase" in str(err)
    return err


def since(fight: Fight, mark: int) -> list[Event]:
    """The events appended after the first ``mark`` ones."""
    return payloads(fight)[mark:]


def bare(events: list[Event]) -> list[Event]:
    """Events with their free-text ``reason`` (conditions, skipped turns) or ``note`` (the end) blanked:
    tests compare the facts, not the wording."""
    out: list[Event] = []
    for event in events:
        if isinstance(event, FightEnded):
            out.append(replace(event, note=""))
        elif isinstance(event, (ConditionApplied, ConditionCleared, TurnSkipped)):
            out.append(replace(event, reason=""))
        else:
            out.append(event)
    return out


def kinds(events: list[Event]) -> list[str]:
    return [type(e).__name__ for e in events]


def ba(fight: Fight, who: str) -> int:
    return fight.state.combatants[who].bonus_actions


# -- ambush -----------------------------------------------------------------------------------


class TestAmbushDifficulty:
    # Stealth: vesh d20 9 + AGI 1 + Stealth 2 = 12; wren (no Stealth on the sheet) d10 7 + AGI 2 + level 0 = 9.
    # Perception: kael d12 7 + FCS 1 + Perception 1 = 9; mira (no Perception) d20 15 + FCS 0 = 15.
    @pytest.mark.parametrize("time_waited, difficulty, kael_tier, mira_tier", [
        ("under_a_minute", 11, "partial", "alert"),          # lowest 9 + 2 = 11; 9 is in 7..11
        ("one_to_two_minutes", 13, "partial", "alert"),      # (12 + 9) / 2 = 10.5 -> 10, + 3 = 13; 9 in 9..13
        ("three_minutes_or_more", 16, "complete", "partial"),  # highest 12 + 4 = 16; 9 <= 11; 15 in 12..16
    ], ids=["under-a-minute", "one-to-two-minutes", "three-minutes-or-more"])
    def test_difficulty_for_each_time_waited_row(self, play: Play, time_waited: TimeWaited, difficulty: int,
                                                 kael_tier: str, mira_tier: str) -> None:
        """C17: less than a minute lowest + 2, 1-2 minutes average (rounded down) + 3, 3+ minutes highest + 4."""
        fight = play(vesh(), wren(), kael(), mira(), faces=[9, 7, 7, 15])
        fight.ambush(["vesh", "wren"], ["kael", "mira"], time_waited=time_waited)
        started = last(fight, AmbushStarted)
        assert (started.ambushers, started.defenders, started.time_waited, started.preset_difficulty) \
            == (("vesh", "wren"), ("kael", "mira"), time_waited, None)
        chosen = last(fight, AmbushDifficultySet)
        assert [(s.roller, s.face, s.total) for s in chosen.stealth] == [("vesh", 9, 12), ("wren", 7, 9)]
        assert (chosen.time_waited, chosen.difficulty) == (time_waited, difficulty)
        surprise = of(payloads(fight), SurpriseDetermined)
        assert [(s.who, s.perception.total, s.difficulty, s.tier) for s in surprise] \
            == [("kael", 9, difficulty, kael_tier), ("mira", 15, difficulty, mira_tier)]
        assert fight.state.surprise == {"kael": kael_tier, "mira": mira_tier}
        assert fight.state.phase is Phase.AMBUSH

    def test_dice_follow_c29_order(self, play: Play) -> None:
        """C29: each ambusher's Stealth in declared order (wren before vesh here), then each defender's Perception."""
        fight = play(vesh(), wren(), kael(), mira(), faces=[7, 9, 15, 7])
        fight.ambush(["wren", "vesh"], ["mira", "kael"], time_waited="under_a_minute")
        assert [(e.purpose, e.roller, e.dice[0].sides, e.dice[0].face) for e in of(payloads(fight), DiceRolled)] \
            == [("stealth", "wren", 10, 7), ("stealth", "vesh", 20, 9),
                ("perception", "mira", 20, 15), ("perception", "kael", 12, 7)]
        assert last(fight, AmbushDifficultySet).difficulty == 11   # lowest of wren 9 and vesh 12, + 2

    def test_missing_skill_uses_the_ruleset_default_attribute_at_level_0(self, play: Play) -> None:
        """C2: wren has no Stealth (rolls AGI d10, level 0) and mira no Perception (rolls FCS d20, level 0)."""
        fight = play(wren(), mira(), faces=[4, 12])
        fight.ambush(["wren"], ["mira"], time_waited="under_a_minute")
        stealth = last(fight, AmbushDifficultySet).stealth[0]
        assert (stealth.skill, stealth.attribute, stealth.skill_level, stealth.attribute_bonus, stealth.total) \
            == ("Stealth", "AGI", 0, 2, 6)                   # d10 4 + AGI 2 + level 0
        perception = last(fight, SurpriseDetermined).perception
        assert (perception.skill, perception.attribute, perception.skill_level, perception.total) \
            == ("Perception", "FCS", 0, 12)                  # d20 12 + FCS 0 + level 0
        assert [e.dice[0].sides for e in of(payloads(fight), DiceRolled)] == [10, 20]
        # D = 6 + 2 = 8; 12 > 8: Alert.
        assert (last(fight, SurpriseDetermined).difficulty, last(fight, SurpriseDetermined).tier) == (8, "alert")

    def test_skill_on_the_sheet_uses_its_attribute_and_level(self, play: Play) -> None:
        """C2: vesh's Stealth is AGI d20 + AGI 1 + level 2; kael's Perception is FCS d12 + FCS 1 + level 1."""
        fight = play(vesh(), kael(), faces=[5, 5])
        fight.ambush(["vesh"], ["kael"], time_waited="three_minutes_or_more")
        stealth = last(fight, AmbushDifficultySet).stealth[0]
        perception = last(fight, SurpriseDetermined).perception
        assert (stealth.attribute, stealth.skill_level, stealth.total) == ("AGI", 2, 8)          # 5 + 1 + 2
        assert (perception.attribute, perception.skill_level, perception.total) == ("FCS", 1, 7)  # 5 + 1 + 1
        # D = 8 + 4 = 12; D - 5 = 7 >= 7: Complete Surprise.
        assert (last(fight, AmbushDifficultySet).difficulty, last(fight, SurpriseDetermined).tier) == (12, "complete")

    def test_gm_preset_difficulty_rolls_no_stealth(self, play: Play) -> None:
        """C17: the GM may preset the difficulty; no ambusher rolls, only the defender's Perception die is used."""
        fight = play(vesh(), mira(), faces=[13])
        fight.ambush(["vesh"], ["mira"], difficulty=14)
        chosen = last(fight, AmbushDifficultySet)
        assert (chosen.stealth, chosen.time_waited, chosen.difficulty) == ((), None, 14)
        assert last(fight, AmbushStarted).preset_difficulty == 14
        assert [e.purpose for e in of(payloads(fight), DiceRolled)] == ["perception"]
        assert last(fight, SurpriseDetermined).tier == "partial"   # 13 in 10..14

    def test_both_or_neither_of_time_and_preset_is_refused(self, play: Play) -> None:
        """C17: the difficulty comes either from the time waited or from a GM preset, not both and not neither."""
        fight = play(vesh(), mira(), faces=[])
        refused(fight, lambda: fight.ambush(["vesh"], ["mira"], time_waited="under_a_minute", difficulty=10), "C17")
        refused(fight, lambda: fight.ambush(["vesh"], ["mira"]), "C17")


class TestTimeWaitedInMinutes:
    # Stealth: vesh d20 9 + AGI 1 + Stealth 2 = 12; wren d10 7 + AGI 2 + 0 = 9 (as in TestAmbushDifficulty).
    @pytest.mark.parametrize("minutes, band, difficulty", [
        (0, "under_a_minute", 11),                # lowest 9 + 2
        (0.5, "under_a_minute", 11),
        (1, "one_to_two_minutes", 13),            # 1 minute opens the 1-2 band: (12 + 9) // 2 + 3
        (2.5, "one_to_two_minutes", 13),          # between 2 and 3: still 1-2 minutes (no gap)
        (2.99, "one_to_two_minutes", 13),
        (3, "three_minutes_or_more", 16),         # highest 12 + 4
        (90, "three_minutes_or_more", 16),
    ])
    def test_minutes_fall_in_a_band_without_gaps(self, play: Play, minutes: float, band: str, difficulty: int) -> None:
        """C30: under 1 minute is the first band; from 1 up to, not including, 3 the second; 3 or more the third.
        The event keeps both the band and the minutes given."""
        fight = play(vesh(), wren(), kael(), mira(), faces=[9, 7, 7, 15])
        fight.ambush(["vesh", "wren"], ["kael", "mira"], time_waited=minutes)
        started = last(fight, AmbushStarted)
        assert (started.time_waited, started.minutes) == (band, minutes)
        assert (last(fight, AmbushDifficultySet).time_waited, last(fight, AmbushDifficultySet).difficulty) \
            == (band, difficulty)

    def test_a_band_name_records_no_minutes(self, play: Play) -> None:
        """C30: given as a band, the time waited is that band and no minutes are recorded."""
        fight = play(vesh(), mira(), faces=[9, 15])
        fight.ambush(["vesh"], ["mira"], time_waited="under_a_minute")
        assert (last(fight, AmbushStarted).time_waited, last(fight, AmbushStarted).minutes) == ("under_a_minute", None)

    def test_negative_minutes_are_refused_before_anything_is_written(self, play: Play) -> None:
        """C30: a time waited below 0 minutes is invalid input, named by its field; nothing is written."""
        from omen_core.errors import InvalidCommand

        fight = play(vesh(), mira(), faces=[])
        before = fight.events
        with pytest.raises(InvalidCommand) as info:
            fight.ambush(["vesh"], ["mira"], time_waited=-1)
        assert "time_waited" in str(info.value)
        assert fight.events == before

    def test_ambushers_lie_in_wait_on_one_side_against_another(self, play: Play) -> None:
        """C17: the ambushers are one side; a defender on their side, or ambushers from two sides, is refused."""
        fight = play(vesh(), wren(), kael(), mira(), faces=[])
        refused(fight, lambda: fight.ambush(["vesh", "kael"], ["mira"], time_waited=1), "C17")
        refused(fight, lambda: fight.ambush(["vesh"], ["wren", "kael"], time_waited=1), "C17")


class TestSurpriseTiers:
    @pytest.mark.parametrize("difficulty, face, tier", [
        (10, 11, "alert"),      # D + 1: succeeds
        (10, 10, "partial"),    # D: a tie is Partial Surprise
        (10, 6, "partial"),     # D - 4: fails by 5
        (10, 5, "complete"),    # D - 5: fails by 6, "more than 5"
        (15, 10, "complete"),   # the text's own example: difficulty 15, roll 10
    ], ids=["D+1-alert", "D-partial", "D-4-partial", "D-5-complete", "text-example"])
    def test_tier_at_each_boundary(self, play: Play, difficulty: int, face: int, tier: str) -> None:
        """C18: roll > D Alert; D - 4 <= roll <= D Partial Surprise; roll <= D - 5 Complete Surprise."""
        fight = play(vesh(), mira(), faces=[face])   # mira's Perception = d20 face + 0
        fight.ambush(["vesh"], ["mira"], difficulty=difficulty)
        determined = last(fight, SurpriseDetermined)
        assert (determined.who, determined.perception.total, determined.difficulty, determined.tier) \
            == ("mira", face, difficulty, tier)
        assert fight.state.surprise["mira"] == tier


class TestPartialSurprise:
    def test_minus_5_on_the_initiative_roll(self, play: Play) -> None:
        """C18, C19: Partial Surprise takes -5 on Initiative, recorded as a Modifier in the InitiativeRolled check."""
        # Ambush: D 10, mira d20 8 -> partial. Initiative (joined order vesh, mira):
        # vesh d20 10 + 1 = 11; mira d20 14 + 1 - 5 = 10 -> vesh first (without the -5 mira's 15 would lead).
        fight = play(vesh(), mira(), faces=[8, 10, 14])
        fight.ambush(["vesh"], ["mira"], difficulty=10)
        fight.roll_initiative()
        rolled = {e.who: e.check for e in of(payloads(fight), InitiativeRolled)}
        assert rolled["mira"].modifiers == (Modifier(source="Partial Surprise (C18)", value=-5),)
        assert (rolled["mira"].face, rolled["mira"].attribute_bonus, rolled["mira"].total) == (14, 1, 10)
        assert (rolled["vesh"].modifiers, rolled["vesh"].total) == ((), 11)
        assert last(fight, InitiativeOrderSet).order == ("vesh", "mira")

    def test_may_draw_before_combat(self, play: Play) -> None:
        """C18: a Partially Surprised character may draw weapons before combat begins."""
        fight = play(vesh(), mira(drawn=False), faces=[8])   # 8 vs D 10: partial
        fight.ambush(["vesh"], ["mira"], difficulty=10)
        assert not fight.state.combatants["mira"].wielding
        fight.draw("mira", "sword")
        assert last(fight, WeaponDrawn) == WeaponDrawn(who="mira", weapon="sword")
        assert fight.state.combatants["mira"].wielding == ("sword",)


class TestCompleteSurprise:
    # Ambush: vesh preset D 15; kael Perception d12 2 + 1 + 1 = 4 <= 10: Complete; mira d20 17 > 15: Alert.
    # Initiative (joined order vesh, kael, mira): vesh 17 + 1 = 18, kael 12 + 1 = 13, mira 4 + 1 = 5.
    AMBUSH_AND_INITIATIVE = [2, 17, 17, 12, 4]

    def ready(self, play: Play, faces: list[int], spare: int | None = 0, kael_drawn: bool = True) -> Fight:
        fight = play(vesh(), kael(drawn=kael_drawn), mira(), faces=self.AMBUSH_AND_INITIATIVE + faces, spare=spare)
        fight.ambush(["vesh"], ["kael", "mira"], difficulty=15)
        assert fight.state.surprise == {"kael": "complete", "mira": "alert"}
        fight.roll_initiative()
        assert fight.state.order == ("vesh", "kael", "mira") and fight.state.turn == "vesh"
        return fight

    def test_no_initiative_penalty(self, play: Play) -> None:
        """C18, C19: Complete Surprise costs the first-round turn, not Initiative: kael's roll carries no modifier."""
        fight = self.ready(play, [])
        kael_roll = next(e.check for e in of(payloads(fight), InitiativeRolled) if e.who == "kael")
        assert (kael_roll.modifiers, kael_roll.total) == ((), 13)

    def test_bonus_actions_defend_before_the_skipped_turn_then_refill(self, play: Play) -> None:
        """C20, C21: kael Dodges with 1 of its 2 Bonus Actions before its turn; when the turn would come it is
        skipped (TurnSkipped) and the Bonus Actions refill 1 -> 2."""
        # vesh's attack: STR d8 5 + FCS d6 2 + STR 1 = 8 vs kael's base RES d6 3 + 0 = 3: the window opens.
        # Dodge: AGI d20 12 + 1 = 13; defense 3 + 13 = 16; 8 > 16 fails: a miss.
        fight = self.ready(play, [5, 2, 3, 12])
        fight.attack("vesh", "kael")
        assert isinstance(fight.waiting_for, ActiveDefenseWindowOpened) and fight.waiting_for.defender == "kael"
        fight.defend("kael", "dodge")
        assert last(fight, HitDetermined).hit is False and ba(fight, "kael") == 1
        mark = len(payloads(fight))
        fight.end_turn("vesh")
        assert bare(since(fight, mark)) == [
            CommandIssued(command=EndTurn(who="vesh")),
            TurnEnded(round=1, who="vesh"),
            BonusActionsRefilled(who="kael", before=1, after=2),
            TurnSkipped(round=1, who="kael", reason=""),
            TurnStarted(round=1, who="mira"),
        ]
        assert "C21" in last(fight, TurnSkipped).reason
        assert (fight.state.turn, ba(fight, "kael")) == ("mira", 2)
        refused(fight, lambda: fight.end_turn("kael"), "§Your Turn")

    def test_gets_its_turn_in_round_2(self, play: Play) -> None:
        """C21: only the first-round turn is lost; in round 2 kael's turn starts (no refill: it is at 2)."""
        fight = self.ready(play, [])
        fight.end_turn("vesh")
        fight.end_turn("mira")
        mark = len(payloads(fight))
        fight.end_turn("vesh")
        assert since(fight, mark) == [CommandIssued(command=EndTurn(who="vesh")), TurnEnded(round=2, who="vesh"),
                                      TurnStarted(round=2, who="kael")]
        assert [e.who for e in of(payloads(fight), TurnSkipped)] == ["kael"]
        assert (fight.state.round, fight.state.turn) == (2, "kael")

    def test_no_interrupt_until_the_first_turn_in_round_2(self, play: Play) -> None:
        """C20, C21, C24, §The First Round: kael's skipped round-1 turn is not a first turn, so when vesh closes in
        at the start of round 2 (before kael's turn) kael, refilled to 2 Bonus Actions, still gets no Interrupt
        window. vesh: STR 1 + FCS 1 + 1 = 3 vs kael's base RES 6 + 0 = 6: a miss."""
        fight = self.ready(play, [1, 1, 6])
        fight.end_turn("vesh")
        fight.end_turn("mira")
        assert (fight.state.round, fight.state.turn, ba(fight, "kael")) == (2, "vesh", 2)
        events = fight.attack("vesh", "kael")
        assert not of(events, ReactionWindowOpened) and last(fight, HitDetermined).hit is False
        assert not fight.state.had_a_turn("kael")

    def test_cannot_draw_in_the_first_round_but_may_in_the_second(self, play: Play) -> None:
        """C18: a Completely Surprised character cannot draw equipment not already equipped (first round)."""
        fight = self.ready(play, [], kael_drawn=False)
        refused(fight, lambda: fight.draw("kael", "sword"), "C18")
        fight.end_turn("vesh")                     # kael's round-1 turn is skipped; mira's turn
        refused(fight, lambda: fight.draw("kael", "sword"), "C18")
        fight.end_turn("mira")
        fight.end_turn("vesh")                     # round 2: kael's turn
        fight.draw("kael", "sword")
        assert last(fight, WeaponDrawn) == WeaponDrawn(who="kael", weapon="sword")
        assert fight.state.combatants["kael"].wielding == ("sword",)

    def test_cannot_draw_before_combat_either(self, play: Play) -> None:
        """C18: before combat only the Partially Surprised may draw; a Completely Surprised one may not."""
        fight = play(vesh(), kael(drawn=False), faces=[2])   # kael 2 + 1 + 1 = 4 <= 15 - 5: complete
        fight.ambush(["vesh"], ["kael"], difficulty=15)
        refused(fight, lambda: fight.draw("kael", "sword"), "C18")


# -- initiative -------------------------------------------------------------------------------


class TestInitiativeOrder:
    def test_highest_first(self, play: Play) -> None:
        """C19: order is highest total first: vesh 15 + 1 = 16, mira 10 + 1 = 11, kael 5 + 1 = 6."""
        fight = play(kael(), vesh(), mira(), faces=[5, 15, 10])
        events = fight.roll_initiative()
        assert [(e.who, e.check.attribute, e.check.face, e.check.total) for e in of(events, InitiativeRolled)] \
            == [("kael", "AGI", 5, 6), ("vesh", "AGI", 15, 16), ("mira", "AGI", 10, 11)]
        assert kinds(events)[-3:] == ["InitiativeOrderSet", "RoundStarted", "TurnStarted"]
        assert events[-3:] == [InitiativeOrderSet(order=("vesh", "mira", "kael")), RoundStarted(round=1),
                               TurnStarted(round=1, who="vesh")]
        assert not of(events, InitiativeTied)
        assert (fight.state.phase, fight.state.round, fight.state.turn) == (Phase.ROUNDS, 1, "vesh")

    def test_dice_in_joined_order(self, play: Play) -> None:
        """C29: initiative dice are taken in the order the combatants joined (wren's d10 second here)."""
        fight = play(mira(), wren(), kael(), faces=[3, 4, 5])
        fight.roll_initiative()
        assert [(e.roller, e.dice[0].sides) for e in of(payloads(fight), DiceRolled)] \
            == [("mira", 20), ("wren", 10), ("kael", 20)]
        assert fight.state.order == ("wren", "kael", "mira")      # 6, 6 (AGI +2 beats +1), 4

    def test_tie_broken_by_higher_agi_bonus(self, play: Play) -> None:
        """C19: kael d20 8 + 1 = 9 ties wren d10 7 + 2 = 9; wren's AGI bonus +2 beats +1: wren first, no roll-off."""
        fight = play(kael(), wren(), faces=[8, 7])
        events = fight.roll_initiative()
        assert not of(events, InitiativeTied) and not of(events, InitiativeRollOff)
        assert last(fight, InitiativeOrderSet).order == ("wren", "kael")
        assert fight.state.turn == "wren"

    def test_tie_break_uses_the_agi_bonus_after_conditions(self, play: Play) -> None:
        """C19, C28: kael AGI +3 with 2 Exhausted stacks has AGI bonus +1: 10 + 1 = 11 ties vesh 9 + 2 = 11; +2 > +1."""
        fight = play(sheet("kael", AGI=(20, 3)), sheet("vesh", "raiders", AGI=(20, 2)), faces=[10, 9])
        fight.apply_condition("kael", "Exhausted", 2)
        fight.roll_initiative()
        rolled = {e.who: e.check for e in of(payloads(fight), InitiativeRolled)}
        assert (rolled["kael"].attribute_bonus, rolled["kael"].total, rolled["vesh"].total) == (1, 11, 11)
        assert last(fight, InitiativeOrderSet).order == ("vesh", "kael")

    def test_foes_still_tied_roll_off_until_broken(self, play: Play) -> None:
        """C19: foes kael and vesh tie at 11 with AGI +1 each: they roll off (tied again at 7, then 4 vs 13)."""
        # Initiative: kael 10 + 1 = 11, vesh 10 + 1 = 11, mira 17 + 1 = 18.
        # Roll-off 1 (group in joined order): kael 6 + 1 = 7, vesh 6 + 1 = 7: tied again.
        # Roll-off 2: kael 3 + 1 = 4, vesh 12 + 1 = 13: vesh before kael.
        fight = play(kael(), vesh(), mira(), faces=[10, 10, 17, 6, 6, 3, 12])
        events = fight.roll_initiative()
        assert kinds(events) == [
            "DiceRolled", "InitiativeRolled", "DiceRolled", "InitiativeRolled", "DiceRolled", "InitiativeRolled",
            "InitiativeTied", "DiceRolled", "DiceRolled", "InitiativeRollOff",
            "InitiativeTied", "DiceRolled", "DiceRolled", "InitiativeRollOff",
            "InitiativeOrderSet", "RoundStarted", "TurnStarted"]
        assert of(events, InitiativeTied) == [InitiativeTied(group=("kael", "vesh"), allies=False)] * 2
        offs = of(events, InitiativeRollOff)
        assert [[(r.roller, r.attribute, r.face, r.total) for r in o.rolls] for o in offs] == [
            [("kael", "AGI", 6, 7), ("vesh", "AGI", 6, 7)],
            [("kael", "AGI", 3, 4), ("vesh", "AGI", 12, 13)]]
        assert [e.purpose for e in of(events, DiceRolled)][3:] == ["roll_off"] * 4
        assert last(fight, InitiativeOrderSet).order == ("mira", "vesh", "kael")
        assert fight.state.turn == "mira" and fight.waiting_for is None


    def test_dice_that_tie_foes_every_time_are_refused_after_the_limit(self) -> None:
        """C32, omen_core/limits.py MAX_ROLL_OFFS: kael and vesh (AGI +1 each) given a 10 for every die tie at 11
        and again at 11 in every roll-off; after 100 roll-offs the command is refused naming C32 and the limit,
        and nothing is written (a program answering every roll with one face would otherwise roll forever)."""
        from omen_core.limits import MAX_ROLL_OFFS

        store = MemoryStore()
        fight = Fight.start(store, "ties", dice=ScriptedDice([10] * (2 + 2 * MAX_ROLL_OFFS + 2)), clock=lambda: 0,
                            combatants=[kael(), vesh()])
        before = (list(store.read_lines("ties", 0)), fight.state)
        with pytest.raises(RuleViolation, match=r"\[C32\] kael, vesh still tie after 100 roll-offs"):
            fight.roll_initiative()
        assert (list(store.read_lines("ties", 0)), fight.state) == before


class TestSurplusFacesAtATie:
    def test_faces_past_a_roll_off_that_ties_again_name_the_window_it_waits_at(self) -> None:
        """C19, C29: allies kael and mira tie at 11 (d20 10 + 1 each); a roll_off given 4 faces rolls 6 and 6 (7 and
        7: tied again) and waits at the tie among allies again: refused, naming that window in words ("the
        initiative tie among allies window", not "the an initiative ...", and "kael, mira answer") once its two
        dice are rolled (it said "stops first", read as rolling none: a rules lawyer), nothing written."""
        from omen_core.commands import RollInitiative, RollOff
        from omen_core.dice import ManualDice, SurplusFaces

        store = MemoryStore()
        fight = Fight.start(store, "ties", dice=ManualDice(), clock=lambda: 0, combatants=[kael(), mira(), vesh()])
        fight.execute(RollInitiative(dice=(10, 10, 15)))
        before = list(store.read_lines("ties", 0))
        with pytest.raises(SurplusFaces) as refused:
            fight.execute(RollOff(dice=(6, 6, 3, 3)))
        said = str(refused.value)
        assert "once they are rolled, it stops at the initiative tie among allies window (C19), where kael, mira " \
               "answer with agree_initiative or roll_off" in said and "2 faces too many" in said
        assert list(store.read_lines("ties", 0)) == before


class TestRollOffRepeatsTheInitiativeRoll:
    def test_partial_surprise_minus_5_holds_in_the_roll_off(self, play: Play) -> None:
        """C32: a roll-off repeats the initiative roll with its modifiers: mira, Partially Surprised, keeps -5."""
        # Ambush: D 10, mira d20 8 -> partial. Initiative: vesh 10 + 1 = 11; mira 15 + 1 - 5 = 11: tied foes.
        # Roll-off: vesh 9 + 1 = 10; mira 13 + 1 - 5 = 9 -> vesh first (without the -5 mira's 14 would lead).
        fight = play(vesh(), mira(), faces=[8, 10, 15, 9, 13])
        fight.ambush(["vesh"], ["mira"], difficulty=10)
        events = fight.roll_initiative()
        off = of(events, InitiativeRollOff)[0]
        rolls = {r.roller: r for r in off.rolls}
        assert rolls["mira"].modifiers == (Modifier(source="Partial Surprise (C18)", value=-5),)
        assert (rolls["mira"].face, rolls["mira"].total, rolls["vesh"].face, rolls["vesh"].total) == (13, 9, 9, 10)
        assert last(fight, InitiativeOrderSet).order == ("vesh", "mira")

    def test_a_modifier_given_with_the_initiative_roll_holds_in_the_roll_off(self, play: Play) -> None:
        """C32: a modifier given with the initiative roll (+3 for kael) is applied again when kael rolls off."""
        # Initiative: kael 7 + 1 + 3 = 11, vesh 10 + 1 = 11: tied foes. Roll-off: kael 5 + 1 + 3 = 9, vesh 8 + 1 = 9:
        # tied again; kael 2 + 1 + 3 = 6, vesh 4 + 1 = 5: kael first (without the +3 vesh would lead both times).
        fight = play(kael(), vesh(), faces=[7, 10, 5, 8, 2, 4])
        bonus = Modifier(source="Alert spell", value=3)
        fight.roll_initiative(modifiers={"kael": (bonus,)})
        offs = of(payloads(fight), InitiativeRollOff)
        assert [[(r.roller, r.face, r.total) for r in o.rolls] for o in offs] == [
            [("kael", 5, 9), ("vesh", 8, 9)], [("kael", 2, 6), ("vesh", 4, 5)]]
        assert all(r.modifiers == ((bonus,) if r.roller == "kael" else ()) for o in offs for r in o.rolls)
        assert last(fight, InitiativeOrderSet).order == ("kael", "vesh")


class TestInitiativeAlliesTied:
    # Initiative: kael 9 + 1 = 10, mira 9 + 1 = 10 (allies, both AGI +1), vesh 4 + 1 = 5.
    TIE = [9, 9, 4]

    def tied(self, play: Play, faces: Sequence[int] = (), spare: int = 0) -> Fight:
        fight = play(kael(), mira(), vesh(), faces=self.TIE + list(faces), spare=spare)
        events = fight.roll_initiative()
        assert events[-1] == InitiativeTied(group=("kael", "mira"), allies=True)
        return fight

    def test_waits_for_the_allies(self, play: Play) -> None:
        """C19: a tie among allies is left open (waiting_for is the InitiativeTied); no order, no round yet."""
        fight = self.tied(play)
        assert fight.waiting_for == InitiativeTied(group=("kael", "mira"), allies=True)
        assert fight.state.tie_open == ("kael", "mira")
        assert (fight.state.phase, fight.state.order, fight.state.round, fight.state.turn) \
            == (Phase.INITIATIVE, (), 0, None)
        assert not of(payloads(fight), InitiativeOrderSet) and not of(payloads(fight), InitiativeRollOff)

    def test_nothing_proceeds_until_they_decide(self, play: Play) -> None:
        """C19: while the allies' tie is open, turns and actions are out of phase; the log is unchanged."""
        fight = self.tied(play)
        out_of_phase(fight, lambda: fight.attack("kael", "vesh"), Phase.INITIATIVE)
        out_of_phase(fight, lambda: fight.end_turn("kael"), Phase.INITIATIVE)
        out_of_phase(fight, lambda: fight.move("mira"), Phase.INITIATIVE)
        refused(fight, fight.roll_initiative, "C19")

    def test_a_refusal_while_the_allies_decide_names_their_answers(self, play: Play) -> None:
        """C19: ending a turn while the allies' tie is open is refused naming what is legal now: agree_initiative or
        roll_off (not "roll initiative, start a round", which are refused or no command)."""
        fight = self.tied(play)
        with pytest.raises(OutOfPhase) as info:
            fight.end_turn("kael")
        said = str(info.value)
        assert "legal now: agree_initiative or roll_off (an initiative tie among allies, C19)" in said, said
        assert "roll initiative" not in said and "start a round" not in said

    def test_agreed_order_is_honoured(self, play: Play) -> None:
        """C19: allies may simply agree who goes first: mira before kael, then vesh; round 1 starts with mira."""
        fight = self.tied(play)
        events = fight.agree_initiative(["mira", "kael"])
        assert events == [InitiativeAgreed(order=("mira", "kael")),
                          InitiativeOrderSet(order=("mira", "kael", "vesh")),
                          RoundStarted(round=1), TurnStarted(round=1, who="mira")]
        assert fight.waiting_for is None and fight.state.tie_open == ()

    def test_agreement_must_name_exactly_the_tied_allies(self, play: Play) -> None:
        """C19: an agreed order that is not exactly the tied group is refused; the log is unchanged."""
        fight = self.tied(play)
        refused(fight, lambda: fight.agree_initiative(["mira"]), "C19")
        refused(fight, lambda: fight.agree_initiative(["mira", "vesh"]), "C19")
        fight.agree_initiative(["kael", "mira"])

    def test_allies_may_roll_off_instead(self, play: Play) -> None:
        """C19: the tied allies roll off after all: kael 2 + 1 = 3, mira 16 + 1 = 17: mira first."""
        fight = self.tied(play, [2, 16])
        events = fight.roll_off()
        off = events[2]
        assert isinstance(off, InitiativeRollOff) and off.group == ("kael", "mira")
        assert [(r.roller, r.total) for r in off.rolls] == [("kael", 3), ("mira", 17)]
        assert events[3:] == [InitiativeOrderSet(order=("mira", "kael", "vesh")), RoundStarted(round=1),
                              TurnStarted(round=1, who="mira")]

    def test_allies_tied_again_after_a_roll_off_may_still_agree(self, play: Play) -> None:
        """C19: a roll-off that ties again (5 + 1 = 6 each) leaves the allies' tie open once more."""
        fight = self.tied(play, [5, 5])
        events = fight.roll_off()
        assert events[-1] == InitiativeTied(group=("kael", "mira"), allies=True)
        assert fight.waiting_for == InitiativeTied(group=("kael", "mira"), allies=True)
        fight.agree_initiative(["kael", "mira"])
        assert fight.state.order == ("kael", "mira", "vesh")

    def test_agreement_then_a_foes_tie_further_down_is_rolled_off(self, play: Play) -> None:
        """C19: kael and mira (16) agree; vesh and tam (10, foes) then roll off at once: vesh 2 + 1 = 3, tam 11 + 1 =
        12."""
        tam = _armed(sheet("tam", "heroes", AGI=(20, 1)), True)
        fight = play(kael(), mira(), vesh(), tam, faces=[15, 15, 9, 9, 2, 11])
        assert fight.roll_initiative()[-1] == InitiativeTied(group=("kael", "mira"), allies=True)
        assert scripted(fight).remaining == 2
        events = fight.agree_initiative(["mira", "kael"])
        assert kinds(events) == ["InitiativeAgreed", "InitiativeTied", "DiceRolled", "DiceRolled", "InitiativeRollOff",
                                 "InitiativeOrderSet", "RoundStarted", "TurnStarted"]
        assert events[1] == InitiativeTied(group=("vesh", "tam"), allies=False)
        assert [(r.roller, r.total) for r in as_(events[4], InitiativeRollOff).rolls] == [("vesh", 3), ("tam", 12)]
        assert events[5:] == [InitiativeOrderSet(order=("mira", "kael", "tam", "vesh")), RoundStarted(round=1),
                              TurnStarted(round=1, who="mira")]

    def test_no_open_tie_nothing_to_agree(self, play: Play) -> None:
        """C19: agreeing or rolling off with no allies' tie open is refused."""
        fight = play(kael(), vesh(), faces=[15, 5])
        fight.roll_initiative()
        refused(fight, lambda: fight.agree_initiative(["kael", "vesh"]), "C19")
        refused(fight, fight.roll_off, "C19")


# -- turns and the action economy ---------------------------------------------------------------


class TestTurns:
    # Initiative: kael 15 + 1 = 16, vesh 5 + 1 = 6, mira 10 + 1 = 11 -> kael, mira, vesh.
    ORDER = [15, 5, 10]

    def test_end_turn_advances_in_order_and_rounds_roll_over(self, play: Play) -> None:
        """§Your Turn, C20: turns follow initiative order; after the last, RoundEnded and the next round begins."""
        fight = play(kael(), vesh(), mira(), faces=self.ORDER)
        fight.roll_initiative()
        assert fight.state.order == ("kael", "mira", "vesh")
        assert fight.end_turn("kael") == [TurnEnded(round=1, who="kael"), TurnStarted(round=1, who="mira")]
        assert fight.end_turn("mira") == [TurnEnded(round=1, who="mira"), TurnStarted(round=1, who="vesh")]
        assert fight.end_turn("vesh") == [TurnEnded(round=1, who="vesh"), RoundEnded(round=1),
                                          RoundStarted(round=2), TurnStarted(round=2, who="kael")]
        assert (fight.state.round, fight.state.turn) == (2, "kael")

    def test_everyone_has_two_bonus_actions_before_their_first_turn(self, play: Play) -> None:
        """C20: before their first turn everyone has 2 Bonus Actions; no refill is recorded."""
        fight = play(kael(), vesh(), mira(), faces=self.ORDER)
        fight.roll_initiative()
        assert {who: ba(fight, who) for who in ("kael", "mira", "vesh")} == {"kael": 2, "mira": 2, "vesh": 2}
        fight.end_turn("kael")
        fight.end_turn("mira")
        assert not of(payloads(fight), BonusActionsRefilled)

    def test_turn_owner_has_one_action_and_one_movement(self, play: Play) -> None:
        """C20: a turn starts with 1 Action and 1 Movement Action."""
        fight = play(kael(), vesh(), faces=[15, 5])
        fight.roll_initiative()
        assert (fight.state.turn, fight.state.turn_actions, fight.state.turn_movement) == ("kael", 1, 1)


class TestActionEconomy:
    def ready(self, play: Play, faces: list[int], spare: int = 0) -> Fight:
        """kael (16) before vesh (6); not engaged, so no Interrupt windows."""
        fight = play(kael(), vesh(), faces=[15, 5, *faces], spare=spare)
        fight.roll_initiative()
        return fight

    def test_second_attack_on_the_same_turn_is_refused(self, play: Play) -> None:
        """C20: one Action per turn; a second attack is refused (rule C20), no die rolled, log unchanged."""
        # STR d8 1 + FCS d12 1 + STR 2 = 4 vs vesh's base RES d6 6 + 1 = 7: a miss, window skipped.
        fight = self.ready(play, [1, 1, 6, 8, 8, 1], spare=3)
        fight.attack("kael", "vesh")
        assert last(fight, HitDetermined).hit is False and fight.state.turn_actions == 0
        refused(fight, lambda: fight.attack("kael", "vesh"), "C20")

    def test_second_movement_on_the_same_turn_is_refused(self, play: Play) -> None:
        """C20: one Movement Action per turn."""
        fight = self.ready(play, [])
        fight.move("kael")
        assert fight.state.turn_movement == 0
        refused(fight, lambda: fight.move("kael"), "C20")

    def test_movement_does_not_use_the_action(self, play: Play) -> None:
        """C20: Action and Movement Action are separate: after moving kael can still attack (and vice versa). The
        move closes in (the GM says so: a melee attack out of reach would need the Movement Action, docs/rulings.md);
        vesh, before its first turn, gets no Interrupt window (C24)."""
        fight = self.ready(play, [1, 1, 6])
        fight.move("kael")
        fight.engage("kael", "vesh")
        fight.attack("kael", "vesh")
        assert (fight.state.turn_actions, fight.state.turn_movement) == (0, 0)

    @pytest.mark.parametrize("command", [
        lambda f: f.attack("vesh", "kael"),
        lambda f: f.move("vesh"),
        lambda f: f.end_turn("vesh"),
        lambda f: f.disengage("vesh"),
        lambda f: f.draw("vesh", "sword"),
    ], ids=["attack", "move", "end_turn", "disengage", "draw"])
    def test_acting_out_of_turn_is_refused(self, play: Play, command: Callable[[Fight], object]) -> None:
        """§Your Turn: on kael's turn vesh cannot attack, move, end the turn, Disengage or draw."""
        fight = play(kael(), vesh(drawn=False), faces=[15, 5, 5, 5, 5], spare=3)
        fight.roll_initiative()
        refused(fight, lambda: command(fight), "§Your Turn")

    @pytest.mark.parametrize("condition", ["Incapacitated", "Paralysed"])
    @pytest.mark.parametrize(("command", "what"), [
        (lambda f: f.attack("kael", "vesh"), "attack"),
        (lambda f: f.move("kael"), "move"),
        (lambda f: f.disengage("kael"), "Disengage"),
        (lambda f: f.draw("kael", "sword"), "draw"),
        (lambda f: f.static_check(CheckSpec(who="kael", skill="Perception"), 10), "make a check"),
        (lambda f: f.contest(CheckSpec(who="kael", attribute="STR"), CheckSpec(who="vesh", attribute="STR")),
         "start a contest"),
    ], ids=["attack", "move", "disengage", "draw", "check", "contest"])
    def test_an_incapacitated_or_paralysed_combatant_takes_no_action_on_its_turn(
            self, play: Play, condition: str, command: Callable[[Fight], object], what: str) -> None:
        """C10, C36 ("treated as Incapacitated (C10): ... makes no action, reaction or ability use"): kael,
        Incapacitated or Paralysed on its own turn, is refused an attack, a move, Disengage, a draw, a check and
        the start of a contest (rule C10; the earlier ruling let it move, draw, Disengage and check: found by a
        tester), the log byte for byte unchanged; its turn still came, it is offered only the end of it, and ends
        it."""
        fight = play(kael(drawn=False), vesh(), faces=[15, 5], spare=None)
        fight.roll_initiative()
        fight.engage("kael", "vesh")
        fight.apply_condition("kael", condition)
        assert fight.state.turn == "kael"
        err = unwritten(fight, lambda: command(fight), "C10")
        assert str(err) == f"[C10] 'kael' is incapacitated or paralysed and cannot {what}"
        assert sorted({o.command for o in fight.options().offers if o.actor == "kael"}) == ["end_turn"]
        fight.end_turn("kael")
        assert fight.state.turn == "vesh"

    def test_acting_out_of_turn_says_who_acts_now(self, play: Play) -> None:
        """§Your Turn: the refusal says whose turn it is and where every command accepted now is listed, as a
        window's refusal says what is legal now."""
        fight = play(kael(), vesh(), faces=[15, 5])
        fight.roll_initiative()
        with pytest.raises(RuleViolation, match=r"'vesh' cannot attack: it is kael's turn \(round 1\); kael acts "
                                                r"now \(omen status, or Fight.options\(\), lists every command"):
            fight.attack("vesh", "kael")

    def test_bonus_actions_refill_at_the_start_of_the_owners_turn(self, play: Play) -> None:
        """C20: vesh Dodges on kael's turn (2 -> 1); when vesh's turn starts they refill 1 -> 2."""
        # kael: STR d8 8 + FCS d12 1 + 2 = 11 vs vesh base RES 1 + 1 = 2: window; Dodge AGI d20 19 + 1 = 20,
        # defense 22: a miss.
        fight = self.ready(play, [8, 1, 1, 19])
        fight.attack("kael", "vesh")
        fight.defend("vesh", "dodge")
        assert ba(fight, "vesh") == 1
        assert fight.end_turn("kael") == [TurnEnded(round=1, who="kael"), TurnStarted(round=1, who="vesh"),
                                          BonusActionsRefilled(who="vesh", before=1, after=2)]
        assert ba(fight, "vesh") == 2

    def test_bonus_actions_do_not_accumulate(self, play: Play) -> None:
        """C20: at 2 already, a new turn records no refill and the count stays 2 (never 4)."""
        fight = self.ready(play, [])
        fight.end_turn("kael")
        events = fight.end_turn("vesh")
        assert events[-1] == TurnStarted(round=2, who="kael")
        assert not of(payloads(fight), BonusActionsRefilled)
        assert (ba(fight, "kael"), ba(fight, "vesh")) == (2, 2)

    def test_disengage_costs_a_bonus_action_on_ones_turn_once(self, play: Play) -> None:
        """C22, C23: Disengage costs 1 Bonus Action; a second in the same turn is refused (the first already keeps
        this turn's movement from provoking), nothing spent (it was taken twice, for 2 Bonus Actions)."""
        fight = self.ready(play, [])
        fight.disengage("kael")
        assert ba(fight, "kael") == 1
        refused(fight, lambda: fight.disengage("kael"), "C23")
        assert ba(fight, "kael") == 1

    def test_disengage_needs_a_movement_action_left_to_take_after_it(self, play: Play) -> None:
        """combat.txt §Reactions ("provided you take a Movement Action right after"), C20: once kael has moved, its
        one Movement Action is spent and Disengage is refused, no Bonus Action spent (it was accepted, for
        nothing)."""
        fight = self.ready(play, [])
        fight.move("kael")
        refused(fight, lambda: fight.disengage("kael"), "C20")
        assert ba(fight, "kael") == 2

    def test_disengage_with_too_few_bonus_actions_is_refused(self, play: Play) -> None:
        """C22: with Disengage costing 3 Bonus Actions (a ruleset's reaction cost) and kael holding 2, it is
        refused."""
        from omen_core.content import load_ruleset

        core = load_ruleset()
        costly = replace(core, reaction_costs=replace(core.reaction_costs, disengage=3))
        fight = play(kael(), vesh(), faces=[15, 5], ruleset=costly)
        fight.roll_initiative()
        refused(fight, lambda: fight.disengage("kael"), "C22")


# -- conditions -------------------------------------------------------------------------------


class TestConditionStacks:
    def test_exhausted_stacks_and_caps_at_5(self, play: Play) -> None:
        """C28: Exhausted stacks up to 5: 2 stacks, then 4 more adds only 3."""
        fight = play(kael(), vesh(), faces=[])
        fight.apply_condition("kael", "Exhausted", 2)
        assert bare([last(fight, ConditionApplied)]) == [
            ConditionApplied(action=None, who="kael", condition="Exhausted", added=2, stacks=2)]
        fight.apply_condition("kael", "Exhausted", 4)
        applied = last(fight, ConditionApplied)
        assert (applied.added, applied.stacks) == (3, 5)
        assert fight.state.combatants["kael"].conditions == {"Exhausted": 5}

    def test_non_stacking_condition_stays_at_1(self, play: Play) -> None:
        """C28: Prone has max 1 stack: applying it again adds nothing."""
        fight = play(kael(), vesh(), faces=[])
        fight.apply_condition("vesh", "Prone")
        fight.apply_condition("vesh", "Prone")
        assert (last(fight, ConditionApplied).added, last(fight, ConditionApplied).stacks) == (0, 1)

    def test_each_exhausted_stack_lowers_the_hit_total(self, play: Play) -> None:
        """C5, C28: 3 Exhausted stacks make kael's STR bonus 2 - 3 = -1: hit 6 + 2 - 1 = 7 (10 unexhausted)."""
        # vesh base RES d6 1 + 1 = 2: window; declined: hit. Crit: FCS 2 + (1 - 3) = 0 vs 1 + 1 = 2: no.
        # Damage: 6 + STR bonus -1 + WD 4 = 9 -> HP 11.
        fight = play(kael(), vesh(), faces=[15, 5, 6, 2, 1])
        fight.apply_condition("kael", "Exhausted", 3)
        fight.roll_initiative()
        fight.attack("kael", "vesh")
        fight.defend("vesh", None)
        hit = last(fight, HitDetermined)
        assert (hit.attack.attribute_bonus, hit.attack.total) == (-1, 7)
        assert (hit.crit_check.fcs_bonus, hit.crit) == (-2, False)
        assert fight.state.combatants["vesh"].hp == 11

    def test_exhausted_and_fatigued_stacks_lower_a_check_total(self, play: Play) -> None:
        """C1, C28: 2 Exhausted + 1 Fatigued = -3 to every bonus: AGI check d20 10 + (1 - 3) = 8 fails difficulty 9."""
        fight = play(kael(), vesh(), faces=[10])
        fight.apply_condition("kael", "Exhausted", 2)
        fight.apply_condition("kael", "Fatigued")
        result = fight.static_check(CheckSpec(who="kael", attribute="AGI"), difficulty=9)
        assert (result.check.attribute_bonus, result.check.total, result.outcome) == (-2, 8, "failure")


class TestConditionTicks:
    def test_paralysed_clears_at_the_end_of_its_owners_turn(self, play: Play) -> None:
        """C25, C28: Paralysed (turn_end, duration 1) on mira does not tick at kael's turn end, clears at hers."""
        # Initiative: kael 15 + 1 = 16, vesh 5 + 1 = 6, mira 10 + 1 = 11 -> kael, mira, vesh.
        fight = play(kael(), vesh(), mira(), faces=[15, 5, 10])
        fight.roll_initiative()
        fight.apply_condition("mira", "Paralysed")
        assert fight.state.combatants["mira"].remaining == {"Paralysed": 1}
        assert fight.end_turn("kael") == [TurnEnded(round=1, who="kael"), TurnStarted(round=1, who="mira")]
        assert bare(fight.end_turn("mira")) == [
            ConditionTicked(who="mira", condition="Paralysed", remaining=0),
            ConditionCleared(action=None, who="mira", condition="Paralysed"),
            TurnEnded(round=1, who="mira"), TurnStarted(round=1, who="vesh")]
        assert not fight.state.combatants["mira"].has("Paralysed")
        assert fight.state.ending is None

    def test_fatigued_ticks_at_each_round_end_and_clears_after_3(self, play: Play) -> None:
        """C25, C28: Fatigued (round_end, duration 3) ticks 3 -> 2 -> 1 -> 0 at three round ends, then clears."""
        fight = play(kael(), vesh(), faces=[15, 5])
        fight.roll_initiative()
        fight.apply_condition("vesh", "Fatigued")
        assert fight.state.combatants["vesh"].remaining == {"Fatigued": 3}
        # a turn end is not a round end: no tick
        assert fight.end_turn("kael") == [TurnEnded(round=1, who="kael"), TurnStarted(round=1, who="vesh")]
        for rnd, left in [(1, 2), (2, 1)]:
            assert fight.end_turn("vesh") == [
                TurnEnded(round=rnd, who="vesh"), ConditionTicked(who="vesh", condition="Fatigued", remaining=left),
                RoundEnded(round=rnd), RoundStarted(round=rnd + 1), TurnStarted(round=rnd + 1, who="kael")]
            fighter = fight.state.combatants["vesh"]
            assert (fighter.conditions, fighter.remaining) == ({"Fatigued": 1}, {"Fatigued": left})
            fight.end_turn("kael")
        assert bare(fight.end_turn("vesh")) == [
            TurnEnded(round=3, who="vesh"), ConditionTicked(who="vesh", condition="Fatigued", remaining=0),
            ConditionCleared(action=None, who="vesh", condition="Fatigued"),
            RoundEnded(round=3), RoundStarted(round=4), TurnStarted(round=4, who="kael")]
        assert not fight.state.combatants["vesh"].has("Fatigued")

    def test_turn_start_condition_ticks_when_its_owners_turn_begins(self, play: Play) -> None:
        """C25, C28: a house 'Burning' (turn_start, duration 2) ticks as vesh's turns begin, and clears on the
        second."""
        ruleset = replace(CORE, conditions={**CORE.conditions, "Burning": ConditionDef(tick="turn_start", duration=2)})
        fight = play(kael(), vesh(), faces=[15, 5], ruleset=ruleset)
        fight.roll_initiative()
        fight.apply_condition("vesh", "Burning")
        assert fight.end_turn("kael") == [TurnEnded(round=1, who="kael"), TurnStarted(round=1, who="vesh"),
                                          ConditionTicked(who="vesh", condition="Burning", remaining=1)]
        fight.end_turn("vesh")
        assert bare(fight.end_turn("kael")) == [
            TurnEnded(round=2, who="kael"), TurnStarted(round=2, who="vesh"),
            ConditionTicked(who="vesh", condition="Burning", remaining=0),
            ConditionCleared(action=None, who="vesh", condition="Burning")]
        assert not fight.state.combatants["vesh"].has("Burning")

    def test_condition_without_duration_never_ticks(self, play: Play) -> None:
        """C28: Exhausted (no duration) lasts through round ends untouched."""
        fight = play(kael(), vesh(), faces=[15, 5])
        fight.roll_initiative()
        fight.apply_condition("vesh", "Exhausted", 2)
        for _ in range(3):
            fight.end_turn("kael")
            fight.end_turn("vesh")
        assert not of(payloads(fight), ConditionTicked)
        assert fight.state.combatants["vesh"].conditions == {"Exhausted": 2}

    def test_timed_condition_without_a_duration_never_ticks(self, play: Play) -> None:
        """C28: a condition declared to tick at round end but with no duration is never ticked nor cleared."""
        ruleset = replace(CORE, conditions={**CORE.conditions, "Marked": ConditionDef(tick="round_end")})
        fight = play(kael(), vesh(), faces=[15, 5], ruleset=ruleset)
        fight.roll_initiative()
        fight.apply_condition("vesh", "Marked")
        for _ in range(2):
            fight.end_turn("kael")
            fight.end_turn("vesh")
        assert not of(payloads(fight), ConditionTicked) and not of(payloads(fight), ConditionCleared)
        assert fight.state.combatants["vesh"].has("Marked")

    def test_dying_is_set_when_hp_reaches_0(self, play: Play) -> None:
        """C28: kael's hit for 6 + 2 + 4 = 12 takes vesh from 5 HP to 0: Dying is applied; wren still stands."""
        # Initiative: kael 15 + 1 = 16, vesh 5 + 1 = 6, wren d10 1 + 2 = 3.
        # Hit: STR 6 + FCS 1 + 2 = 9 vs base RES 1 + 1 = 2: window, declined. Crit: 1 + 1 = 2 vs 1 + 1 = 2: no.
        fight = play(kael(), vesh(hp=5), wren(), faces=[15, 5, 1, 6, 1, 1])
        fight.roll_initiative()
        fight.attack("kael", "vesh")
        attack = last(fight, AttackDeclared).action
        events = fight.defend("vesh", None)
        assert ResourceChanged(action=attack, who="vesh", resource="hp", before=5, after=0) in events
        assert ConditionApplied(action=attack, who="vesh", condition="Dying", added=1, stacks=1) in bare(events)
        assert fight.state.combatants["vesh"].conditions == {"Dying": 1}
        assert fight.state.ending is None


    def test_dying_is_never_applied_or_cleared_by_hand(self, play: Play) -> None:
        """C28, C36: Dying follows HP, so the GM's apply_condition of Dying on vesh at 5 HP is refused, as is the
        clear_condition of Dying on vesh at 0 HP (kael's hit of 12, as above): nothing is written, and vesh stays
        Dying (a tester made a healthy combatant "Dying" and a combatant at 0 HP not, both accepted)."""
        fight = play(kael(), vesh(hp=5), wren(), faces=[15, 5, 1, 6, 1, 1])
        fight.roll_initiative()
        with pytest.raises(RuleViolation, match=r"\[C36\] Dying follows HP: it is set when HP reaches 0 \(C28\) and "
                                                r"ends when HP rises above 0 \(C36\), never applied by hand \('vesh' "
                                                r"is at 5 HP\)"):
            fight.apply_condition("vesh", "Dying")
        fight.attack("kael", "vesh")
        fight.defend("vesh", None)
        version = fight.version
        with pytest.raises(RuleViolation, match=r"\[C36\] Dying ends when HP rises above 0 \(C36\), never cleared "
                                                r"by hand: 'vesh' is at 0 HP, so still Dying"):
            fight.clear_condition("vesh", "Dying")
        assert fight.version == version and fight.state.combatants["vesh"].conditions == {"Dying": 1}


    def test_no_effect_written_in_a_command_sets_or_ends_dying(self, play: Play) -> None:
        """C28, C36: a save's failure branch applying Dying, an attack's hit branch applying it, and a save's branch
        clearing it are refused before any die is rolled, nothing written (a tester made a combatant at full HP
        Dying through a save and through a branch, and one at 0 HP not Dying)."""
        from omen_core.content import ApplyCondition, Branches, ClearCondition

        fight = play(kael(), vesh(), faces=[15, 5], spare=0)
        fight.roll_initiative()
        version = fight.version
        dying = (ApplyCondition(condition="Dying"),)
        commands: tuple[tuple[Callable[[], object], str], ...] = (
                (lambda: fight.call_save("kael", "vesh", SaveEffect(name="hex", save="RES", against="INT",
                                                                    action_cost=0, on_failure=dying)), "applies"),
                (lambda: fight.call_save("kael", "vesh", SaveEffect(
                    name="hex", save="RES", against="INT", action_cost=0,
                    on_success=(ClearCondition(condition="Dying"),))), "clears"),
                (lambda: fight.attack("kael", "vesh", branches=Branches(on_hit=dying)), "applies"))
        for command, done in commands:
            with pytest.raises(RuleViolation, match=rf"^\[C36\] .* {done} Dying, which follows HP: it is set when HP "
                                                    r"reaches 0 \(C28\) and ends when HP rises above 0 \(C36\)"):
                command()
            assert fight.version == version

    def test_disengage_before_the_rounds_is_the_gms_to_resolve(self, play: Play) -> None:
        """Before initiative single actions are the GM's to resolve (docs/machine.md): a Disengage then is not
        refused for a Movement Action no turn has given (a tester found it refused saying "no Movement Action left
        this turn" with no turn yet)."""
        fight = play(kael(), vesh(), faces=[])
        fight.engage("kael", "vesh")
        fight.disengage("kael")
        assert fight.state.disengaged


# -- phases and the end -------------------------------------------------------------------------


class TestPhases:
    def test_attacking_during_the_ambush_is_out_of_phase(self, play: Play) -> None:
        """§Preparing for Combat: no blows are exchanged during the ambush; the attack is OutOfPhase('ambush')."""
        fight = play(vesh(), mira(), faces=[8, 5, 5, 5], spare=3)
        fight.ambush(["vesh"], ["mira"], difficulty=10)
        out_of_phase(fight, lambda: fight.attack("vesh", "mira"), Phase.AMBUSH)

    def test_ambush_after_the_rounds_began_is_out_of_phase(self, play: Play) -> None:
        """combat.txt §Preparing for Combat: the ambush comes before initiative, not after."""
        fight = play(vesh(), mira(), faces=[15, 5, 5], spare=1)
        fight.roll_initiative()
        out_of_phase(fight, lambda: fight.ambush(["vesh"], ["mira"], difficulty=10), Phase.ROUNDS)

    def test_rolling_initiative_twice_is_out_of_phase(self, play: Play) -> None:
        """§Determine Initiative: once the rounds have begun, rolling initiative again is out of phase."""
        fight = play(kael(), vesh(), faces=[15, 5, 3, 3], spare=2)
        fight.roll_initiative()
        out_of_phase(fight, fight.roll_initiative, Phase.ROUNDS)

    def test_gm_ends_the_fight_a_side_yields(self, play: Play) -> None:
        """§Your Turn: combat continues until one side yields; end_fight records who."""
        fight = play(kael(), vesh(), faces=[15, 5])
        fight.roll_initiative()
        assert fight.end_fight("yielded", side="raiders", note="vesh throws down the sword") == [
            FightEnded(reason="yielded", side="raiders", note="vesh throws down the sword")]
        assert fight.state.phase is Phase.ENDED and fight.waiting_for is None

    def test_yielding_needs_a_known_side(self, play: Play) -> None:
        """§Your Turn: a side that yields must be named and must be in the fight."""
        fight = play(kael(), vesh(), faces=[15, 5])
        fight.roll_initiative()
        refused(fight, lambda: fight.end_fight("yielded"), "§Your Turn")
        unknown = refused(fight, lambda: fight.end_fight("fled", side="goblins"), "§Your Turn")
        assert "no side 'goblins' in this fight (sides: heroes, raiders)" in str(unknown)

    @pytest.mark.parametrize("command", [
        lambda f: f.attack("kael", "vesh"),
        lambda f: f.move("kael"),
        lambda f: f.disengage("kael"),
        lambda f: f.end_turn("kael"),
        lambda f: f.engage("kael", "vesh"),
        lambda f: f.apply_condition("kael", "Prone"),
        lambda f: f.draw("kael", "sword"),
        lambda f: f.roll_initiative(),
        lambda f: f.ambush(["vesh"], ["kael"], difficulty=10),
        lambda f: f.end_fight(),
        lambda f: f.static_check(CheckSpec(who="kael", attribute="AGI"), 5),
        lambda f: f.join(mira()),
    ], ids=["attack", "move", "disengage", "end_turn", "engage", "apply_condition", "draw", "roll_initiative",
            "ambush", "end_fight", "static_check", "join"])
    def test_nothing_is_accepted_after_the_fight_ended(self, play: Play, command: Callable[[Fight], object]) -> None:
        """§Your Turn: after FightEnded every command is OutOfPhase('ended'); the log is unchanged."""
        fight = play(kael(drawn=False), vesh(), faces=[15, 5, 4, 4, 4], spare=3)
        fight.roll_initiative()
        fight.end_fight("gm")
        out_of_phase(fight, lambda: command(fight), Phase.ENDED)

    def test_a_side_all_down_is_defeated_automatically(self, play: Play) -> None:
        """§Your Turn: when vesh, the raiders' only combatant, drops to 0 HP the fight ends, raiders defeated."""
        # Hit 6 + 1 + 2 = 9 vs 1 + 1 = 2, declined; no crit (2 vs 2); damage 6 + 2 + 4 = 12 >= 5.
        fight = play(kael(), vesh(hp=5), faces=[15, 5, 6, 1, 1])
        fight.roll_initiative()
        fight.attack("kael", "vesh")
        events = fight.defend("vesh", None)
        assert kinds(events)[-3:] == ["ConditionApplied", "ActionSettled", "FightEnded"]
        ended = events[-1]
        assert isinstance(ended, FightEnded) and (ended.reason, ended.side) == ("defeated", "raiders")
        assert fight.state.phase is Phase.ENDED
        out_of_phase(fight, lambda: fight.end_turn("kael"), Phase.ENDED)

    def test_a_side_with_one_standing_is_not_defeated(self, play: Play) -> None:
        """§Your Turn: vesh at 0 HP does not end the fight while wren stands (vesh's turn is skipped, C36); wren's
        fall does."""
        # Initiative: kael 15 + 1 = 16, vesh 5 + 1 = 6, wren d10 1 + 2 = 3: kael, vesh, wren.
        # Round 1: kael hits vesh (5 HP) for 12: 0, Dying, no end; vesh takes no turn (C36). Round 2: kael closes
        # in on wren (5 HP), who lets the Interrupt window pass (C24), and hits:
        # STR 6 + FCS 1 + 2 = 9 vs wren base RES 1 + 0 = 1; declined; crit 1 + 1 = 2 > 1 + 0: damage
        # 6 + 2 + 2 + 4 = 14 -> 0: the raiders are defeated.
        fight = play(kael(), vesh(hp=5), wren(hp=5), faces=[15, 5, 1, 6, 1, 1, 6, 1, 1])
        fight.roll_initiative()
        fight.attack("kael", "vesh")
        fight.defend("vesh", None)
        assert fight.state.ending is None
        skipped = fight.end_turn("kael")
        assert TurnSkipped(round=1, who="vesh", reason="at 0 HP, Dying: treated as Incapacitated (C36)") in skipped
        fight.end_turn("wren")
        fight.attack("kael", "wren")        # closing in on wren, who has had its first turn: it may Interrupt
        fight.pass_reaction("wren")
        events = fight.defend("wren", None)
        assert last(fight, HitDetermined).crit is True
        assert bare(events[-1:]) == [FightEnded(reason="defeated", side="raiders")]

    def test_of_two_sides_down_in_one_blow_the_first_all_down_is_defeated(self, play: Play) -> None:
        """C33 (docs/rulings.md): vesh (raiders, 3 HP) hits kael (heroes, 5 HP), whose Strike Back fells vesh as
        the blow lands, before vesh's blow fells kael: both sides are down after the command, and the side named
        defeated is the raiders, all down first in the log's order (not the heroes, met first)."""
        # Initiative: kael 5 + 1 = 6, vesh 15 + 1 = 16: vesh first. vesh: STR 6 + FCS 1 + 1 = 8 vs kael's RES 1;
        # declined; crit 1 vs 1: none. Strike Back: 3 crushing, vesh 3 -> 0; then the sword: 6 + 1 + 4 = 11,
        # kael 5 -> 0.
        strike_back = decode_content(
            'id = "strike_back"\nname = "Strike Back"\nsummary = "When hit, the attacker takes 3 crushing."\n'
            'use = "trigger"\ntrigger = { moment = "attack.determined", owner = "target", outcome = "hit" }\n'
            'effects = [{ kind = "damage", to = "target", flat = 3, damage_type = "crushing" }]\n',
            Ability, source="strike_back.toml", fmt="toml")
        fight = play(replace(kael(hp=5), abilities=(strike_back,)), vesh(hp=3), faces=[5, 15, 6, 1, 1])
        fight.roll_initiative()
        fight.attack("vesh", "kael")
        fight.defend("kael", None)
        events = fight.answer_decision("strike_back", "kael", "use")
        fallen = [e.who for e in events if isinstance(e, ResourceChanged) and e.after == 0]
        assert fallen == ["vesh", "kael"]
        assert events[-1] == FightEnded(reason="defeated", side="raiders",
                                        note="every combatant of raiders is down; then every combatant of heroes too")


# -- C33: who is down, leaving the fight, ending it at any time --------------------------------


class TestWhenAFightEnds:
    # Initiative faces 15, 5, 1: kael 16, vesh 6, wren d10 1 + 2 = 3 (when wren is in the fight).

    def test_incapacitated_and_paralysed_are_not_down(self, play: Play) -> None:
        """C33: vesh, the raiders' only combatant, Incapacitated and then Paralysed too, does not end the fight,
        and can still be attacked (C10)."""
        # kael STR 6 + FCS 1 + 2 = 9 against helpless vesh: no base defense die, no window (C10): a hit.
        fight = play(kael(), vesh(), faces=[15, 5, 6, 1])
        fight.roll_initiative()
        fight.apply_condition("vesh", "Incapacitated")
        fight.apply_condition("vesh", "Paralysed")
        assert fight.state.ending is None and not fight.state.combatants["vesh"].down
        fight.attack("kael", "vesh")
        assert last(fight, HitDetermined).hit is True
        assert fight.state.ending is None

    def test_a_combatant_who_flees_is_out_of_the_fight(self, play: Play) -> None:
        """C33: vesh flees: recorded as combatant_left; it cannot be attacked, cannot act, leaves every reach,
        and its turn is skipped; wren fights on, so the fight goes on."""
        from omen_core.events import CombatantLeft, EngagementChanged

        fight = play(kael(), vesh(), wren(), faces=[15, 5, 1])
        fight.engage("kael", "vesh")
        fight.roll_initiative()
        events = fight.leave_fight("vesh", "fled", note="runs for the ford")
        assert bare(events) == [CombatantLeft(who="vesh", reason="fled", note="runs for the ford")]
        assert not fight.state.engaged("kael", "vesh") and fight.state.ending is None
        refused(fight, lambda: fight.attack("kael", "vesh"), "C33")
        fight.end_turn("kael")
        skipped = last(fight, TurnSkipped)
        assert (skipped.who, skipped.round) == ("vesh", 1) and "C33" in skipped.reason
        assert fight.state.turn == "wren"
        refused(fight, lambda: fight.engage("wren", "vesh"), "C33")
        assert not [e for e in payloads(fight) if isinstance(e, EngagementChanged) and "vesh" in e.others][1:]

    def test_leaving_on_ones_own_turn_ends_it(self, play: Play) -> None:
        """C33: kael yields on its own turn: the turn ends and vesh's begins."""
        fight = play(kael(), vesh(), mira(), faces=[15, 5, 1])
        fight.roll_initiative()
        assert fight.state.turn == "kael"
        events = fight.leave_fight("kael", "yielded")
        assert kinds(events)[:3] == ["CombatantLeft", "TurnEnded", "TurnStarted"]
        assert fight.state.turn == "vesh"   # initiative: kael 15 + 1 = 16, vesh 5 + 1 = 6, mira 1 + 1 = 2
        refused(fight, lambda: fight.leave_fight("kael", "fled"), "C33")

    @pytest.mark.parametrize("reason, ended", [("fled", "fled"), ("yielded", "yielded"), ("dead", "defeated")])
    def test_a_side_all_gone_ends_the_fight(self, play: Play, reason: str, ended: str) -> None:
        """C33: when the raiders' last combatant leaves, the fight ends: as fled or yielded if they all did so,
        else defeated."""
        fight = play(kael(), vesh(), faces=[15, 5])
        fight.roll_initiative()
        fight.leave_fight("vesh", reason)
        end = last(fight, FightEnded)
        assert (end.reason, end.side) == (ended, "raiders") and fight.state.phase is Phase.ENDED

    def test_one_at_0_hp_and_one_fled_is_a_defeat(self, play: Play) -> None:
        """C33: vesh at 0 HP (Dying) and wren fled: every raider is down, the raiders are defeated."""
        # kael hits vesh (5 HP): STR 6 + FCS 1 + 2 = 9 vs 1 + 1 = 2, declined, no crit: 12 -> 0.
        fight = play(kael(), vesh(hp=5), wren(), faces=[15, 5, 1, 6, 1, 1])
        fight.roll_initiative()
        fight.leave_fight("wren", "fled")
        assert fight.state.ending is None
        fight.attack("kael", "vesh")
        fight.defend("vesh", None)
        end = last(fight, FightEnded)
        assert (end.reason, end.side) == ("defeated", "raiders")

    def test_leaving_waits_for_the_action_in_progress(self, play: Play) -> None:
        """C33: a combatant leaves between actions: while kael's attack waits on vesh's Active Defense window,
        leave_fight is refused (the GM may cancel the action first)."""
        fight = play(kael(), vesh(), faces=[15, 5, 6, 1, 1], spare=0)
        fight.roll_initiative()
        fight.attack("kael", "vesh")
        refused(fight, lambda: fight.leave_fight("vesh", "fled"), "lifecycle")
        fight.defend("vesh", None)

    def test_the_gm_ends_the_fight_in_the_middle_of_an_action(self, play: Play) -> None:
        """C33: the GM may end the fight at any time: kael's attack waiting on vesh's window is called off
        (costs paid stay paid), then the fight ends."""
        from omen_core.events import ActionCancelled

        fight = play(kael(), vesh(), faces=[15, 5, 6, 1, 1])
        fight.roll_initiative()
        fight.attack("kael", "vesh")
        action = last(fight, AttackDeclared).action
        events = fight.end_fight("gm", note="the bridge collapses")
        assert events == [ActionCancelled(action=action, reason="the fight ended (C33)"),
                          FightEnded(reason="gm", note="the bridge collapses")]
        assert fight.state.phase is Phase.ENDED and fight.state.at_rest


# -- C36: at 0 HP, Dying, treated as Incapacitated --------------------------------------------

DYING = "at 0 HP, Dying: treated as Incapacitated (C36)"


def unwritten(fight: Fight, command: Callable[[], object], rule: str) -> RuleViolation:
    """``refused``, and the stored log is byte for byte what it was before the command."""
    before = b"".join(encode_line(rec) for rec in fight.events)
    err = refused(fight, command, rule)
    assert b"".join(encode_line(rec) for rec in fight.events) == before
    return err


class TestDying:
    # Initiative: kael 15 + 1 = 16, vesh 5 + 1 = 6, wren d10 1 + 2 = 3: kael, vesh, wren.
    # kael's sword on vesh (5 HP): STR 6 + FCS 1 + 2 = 8 + 1 = 9 vs base RES 1 + 1 = 2: the window opens.
    # Crit: FCS 1 + 1 = 2 vs RES 1 + 1 = 2: none. Damage 6 + 2 + 4 = 12 >= 5: HP 0, Dying.

    def test_a_side_down_before_initiative_ends_the_fight_after_the_initiative_roll(self, play: Play) -> None:
        """C33 as ruled (docs/rulings.md): kael's sword takes vesh (5 HP), the raiders' only combatant, to 0 before
        initiative (8 + 1 = 9 vs 2; 6 + 2 + 4 = 12): the fight is still being set up and does not end; the
        initiative roll (kael 15 + 1, vesh 5 + 1) is the first command of the rounds, and the fight ends after it,
        the raiders defeated."""
        fight = play(kael(), vesh(hp=5), faces=[6, 1, 1, 15, 5])
        fight.attack("kael", "vesh")
        fight.defend("vesh", None)
        assert fight.state.combatants["vesh"].hp == 0 and fight.state.ending is None
        fight.roll_initiative()
        assert fight.state.ending is not None and (fight.state.ending.reason, fight.state.ending.side) == (
            "defeated", "raiders")

    def test_a_combatant_at_0_hp_takes_no_turn(self, play: Play) -> None:
        """C36: vesh, at 0 HP after Dodging with 1 of its 2 Bonus Actions, takes no turn: each time the order
        reaches it the turn is recorded as skipped (turn_skipped, naming C36), nothing refills (it stays at 1
        Bonus Action) and it cannot end a turn it does not have (refused naming C36, its helplessness, before whose
        turn it is); wren's turn follows."""
        # Dodge: AGI d20 1 + 1 = 2; defense 2 + 2 = 4 < 9: still a hit.
        fight = play(kael(), vesh(hp=5), wren(), faces=[15, 5, 1, 6, 1, 1, 1])
        fight.roll_initiative()
        fight.attack("kael", "vesh")
        fight.defend("vesh", "dodge")
        assert (fight.state.combatants["vesh"].hp, ba(fight, "vesh")) == (0, 1)
        assert fight.end_turn("kael") == [TurnEnded(round=1, who="kael"), TurnSkipped(round=1, who="vesh",
                                                                                      reason=DYING),
                                          TurnStarted(round=1, who="wren")]
        unwritten(fight, lambda: fight.end_turn("vesh"), "C36")
        assert fight.end_turn("wren") == [TurnEnded(round=1, who="wren"), RoundEnded(round=1),
                                          RoundStarted(round=2), TurnStarted(round=2, who="kael")]
        assert fight.end_turn("kael") == [TurnEnded(round=2, who="kael"), TurnSkipped(round=2, who="vesh",
                                                                                      reason=DYING),
                                          TurnStarted(round=2, who="wren")]
        assert ba(fight, "vesh") == 1 and not [e for e in of(payloads(fight), BonusActionsRefilled) if e.who == "vesh"]

    def test_dropping_to_0_hp_on_its_own_turn_ends_the_turn(self, play: Play) -> None:
        """C36: vesh leaves kael's reach on its turn and kael's Attack of Opportunity takes it to 0 HP; the
        movement completes (it was paid for), then vesh's turn ends by itself and wren's begins; an end_turn it
        gives now is refused naming C36."""
        fight = play(kael(), vesh(hp=5), wren(), faces=[15, 5, 1, 6, 1, 1])
        fight.engage("kael", "vesh")
        fight.roll_initiative()
        fight.end_turn("kael")
        fight.move("vesh", leaves=["kael"])
        fight.react("kael")
        events = fight.defend("vesh", None)
        move = last(fight, MovementDeclared).action
        assert events[-4:] == [Moved(action=move, who="vesh", left=("kael",)), ActionSettled(action=move),
                               TurnEnded(round=1, who="vesh"), TurnStarted(round=1, who="wren")]
        assert fight.state.combatants["vesh"].hp == 0 and fight.state.turn == "wren"
        unwritten(fight, lambda: fight.end_turn("vesh"), "C36")

    @pytest.mark.parametrize("what, command", [
        ("attack", lambda f: f.attack("vesh", "kael")),
        ("move", lambda f: f.move("vesh")),
        ("draw", lambda f: f.draw("vesh", "sword")),
        ("Disengage", lambda f: f.disengage("vesh")),
        ("act", lambda f: f.call_save("vesh", "kael", SaveEffect(name="hex", save="RES", against="INT",
                                                                 action_cost=0))),
        ("make a check", lambda f: f.static_check(CheckSpec(who="vesh", attribute="AGI"), 10)),
        ("start a contest", lambda f: f.contest(CheckSpec(who="vesh", attribute="STR"),
                                                CheckSpec(who="kael", attribute="STR"))),
    ])
    def test_at_0_hp_it_can_do_nothing(self, play: Play, what: str,
                                       command: Callable[[Fight], object]) -> None:
        """C36: before initiative (where anyone may act), vesh at 0 HP may not attack, move, draw, Disengage, call
        for a save, make a check or start a contest (it makes no action): each is refused naming C36, and the log
        is byte for byte as it was."""
        fight = play(kael(), vesh(drawn=False, hp=5), faces=[6, 1, 1])
        fight.attack("kael", "vesh")
        fight.defend("vesh", None)
        assert fight.state.combatants["vesh"].hp == 0 and fight.state.ending is None  # not in the rounds yet
        err = unwritten(fight, lambda: command(fight), "C36")
        assert str(err).endswith(f"'vesh' is at 0 HP, Dying: treated as Incapacitated and cannot {what}")

    def test_at_0_hp_it_can_still_be_made_to_save_and_be_contested(self, play: Play) -> None:
        """C36, C15, C16: what is done to vesh at 0 HP still happens: kael's save against it rolls vesh's RES d6
        then kael's INT d6 (2 + 1 = 3 against 4 + 0: a failure), and kael's STR contest against it rolls both dice
        (kael 5 + 2 = 7 against vesh 3 + 1 = 4: kael wins)."""
        fight = play(kael(), vesh(hp=5), faces=[6, 1, 1, 2, 4, 5, 3])
        fight.attack("kael", "vesh")
        fight.defend("vesh", None)
        fight.call_save("kael", "vesh", SaveEffect(name="hex", save="RES", against="INT", action_cost=0))
        assert last(fight, SaveResolved).success is False
        assert fight.contest(CheckSpec(who="kael", attribute="STR"), CheckSpec(who="vesh", attribute="STR")).winner \
            == "kael"

    def test_no_turn_begins_when_nobody_left_can_take_one(self, play: Play) -> None:
        """C36, C33: in a fight of one side (no defeat can end it), kael's hex takes mira to 0 HP, then kael flees
        on its turn: nobody left can take a turn, so none begins (no endless round of skipped turns); the GM ends
        the fight."""
        # Initiative: kael 15 + 1 = 16, mira 5 + 1 = 6. Save: mira RES d6 1 + 0 vs kael INT d6 6 + 0: fails;
        # 25 fire on 20 HP: 0, Dying.
        hex_ = SaveEffect(name="hex", save="RES", against="INT", on_failure=(DealDamage(flat=25, damage_type="fire"),))
        fight = play(kael(), mira(), faces=[15, 5, 1, 6])
        fight.roll_initiative()
        fight.call_save("kael", "mira", hex_)
        assert fight.state.combatants["mira"].hp == 0 and fight.state.ending is None
        events = fight.leave_fight("kael", "fled")
        assert kinds(events) == ["CombatantLeft", "TurnEnded"]
        assert (fight.state.turn, fight.state.ending, fight.state.phase) == (None, None, Phase.ROUNDS)
        assert bare(fight.end_fight("gm")) == [FightEnded(reason="gm")]


# -- C35: drawing gear ---------------------------------------------------------------------------


def _ruleset_drawing_for(cost: str) -> Ruleset:
    """The core ruleset with drawing costing ``cost`` on one's turn."""
    from omen_core.content import load_ruleset

    core = load_ruleset()
    return replace(core, economy=replace(core.economy, draw=cost))


class TestDrawing:
    def test_drawing_is_free_by_default_and_on_ones_own_turn(self, play: Play) -> None:
        """C35: in the rounds kael draws on its own turn at the default cost (a Free Action): nothing is spent;
        vesh may not draw on kael's turn."""
        fight = play(kael(drawn=False), vesh(drawn=False), faces=[15, 5])
        fight.roll_initiative()
        refused(fight, lambda: fight.draw("vesh", "sword"), "§Your Turn")
        drawn = fight.draw("kael", "sword")
        assert drawn == [WeaponDrawn(who="kael", weapon="sword", cost="free")]
        assert (fight.state.turn_actions, fight.state.turn_movement, fight.state.combatants["kael"].bonus_actions) \
            == (1, 1, 2)

    @pytest.mark.parametrize("cost, spent", [
        ("bonus_action", (1, 1, 1)), ("action", (0, 1, 2)), ("movement_action", (1, 0, 2))])
    def test_drawing_costs_what_the_ruleset_says(self, play: Play, cost: str, spent: tuple[int, int, int]) -> None:
        """C35: a ruleset may make drawing cost a Bonus Action, the Action or the Movement Action; the event
        records the cost and the state spends it: (Actions, Movement Actions, Bonus Actions) left after."""
        fight = play(kael(drawn=False), vesh(), faces=[15, 5], ruleset=_ruleset_drawing_for(cost))
        fight.roll_initiative()
        assert as_(fight.draw("kael", "sword")[0], WeaponDrawn).cost == cost
        kael_now = fight.state.combatants["kael"]
        assert (fight.state.turn_actions, fight.state.turn_movement, kael_now.bonus_actions) == spent
        assert kael_now.wielding == ("sword",)

    def test_drawing_with_nothing_left_to_pay_is_refused(self, play: Play) -> None:
        """C35: with drawing at an Action, kael, its Action spent on an attack, cannot draw its second weapon."""
        axe = Weapon(id="axe", weapon_damage=5, damage_type="slashing")
        fight = play(replace(kael(), weapons=(SWORD, axe)), vesh(), faces=[15, 5, 1, 1, 6],
                     ruleset=_ruleset_drawing_for("action"))
        fight.roll_initiative()
        fight.attack("kael", "vesh")   # STR 1 + FCS 1 + 2 = 4 vs vesh's RES 6 + 1 = 7: a miss already, no window
        assert fight.waiting_for is None and fight.state.turn_actions == 0
        refused(fight, lambda: fight.draw("kael", "axe"), "C35")

    def test_before_the_rounds_drawing_is_free_whatever_the_ruleset(self, play: Play) -> None:
        """C35: before initiative there are no turns to spend: a draw costs nothing."""
        fight = play(kael(drawn=False), vesh(), faces=[], ruleset=_ruleset_drawing_for("action"))
        assert as_(fight.draw("kael", "sword")[0], WeaponDrawn).cost == "free"

    def test_the_shield_is_drawn_by_its_id(self, play: Play) -> None:
        """C35: a carried shield is drawn like a weapon, by its id; gear the sheet lacks is refused."""
        from omen_core.content import Shield

        fighter = replace(kael(), shield=Shield(id="buckler", block_rating=2), wielding=("sword",))
        fight = play(fighter, vesh(), faces=[])
        refused(fight, lambda: fight.draw("kael", "tower-shield"), "C35")
        fight.draw("kael", "buckler")
        assert fight.state.combatants["kael"].wielding == ("sword", "buckler")
        refused(fight, lambda: fight.draw("kael", "buckler"), "C35")


def test_the_rounds_start_with_every_combatants_bonus_actions_full() -> None:
    """C20 ("before their first turn everyone has 2 Bonus Actions for defence"): Ana Dodges the orc's attack before
    the rounds (1 Bonus Action: 2 -> 1; STR 5 + FCS 1 = 6 against RES 2 + the Dodge's AGI 1 = 3: still a hit);
    initiative AGI 1 (Ana) against 6 (the orc): the orc's turn is first, and Ana has 2 again from the round's
    start, before her turn (a bonus_actions_refilled after round_started)."""
    fight = new_fight(sheet("ana"), sheet("orc", side="raiders"), faces=[5, 1, 2, 1, 1, 6])
    fight.attack("orc", "ana", unarmed=True)
    fight.defend("ana", "dodge")
    assert fight.state.combatants["ana"].bonus_actions == 1
    fight.roll_initiative()
    assert fight.state.turn == "orc" and fight.state.combatants["ana"].bonus_actions == 2
    started = next(i for i, r in enumerate(fight.events) if isinstance(r.event, RoundStarted))
    assert any(isinstance(r.event, BonusActionsRefilled) and r.event.who == "ana" for r in fight.events[started:])
    assert_replays(fight)


def test_acting_when_no_turn_has_begun_says_so_in_words() -> None:
    """§Your Turn: in the rounds phase with no turn begun (a state only a forged log reaches: verify re-decides
    it), acting out of turn is refused saying "no one's turn has begun", not "it is None's turn"."""
    from omen_core.commands import Move
    from omen_core.decide import decide

    fight = new_fight(sheet("kael"), sheet("vesh", "raiders"), faces=[6, 1])
    fight.roll_initiative()
    state = replace(fight.state, turn=None)
    with pytest.raises(RuleViolation, match=r"'vesh' cannot move: no one's turn has begun \(round 1\)"):
        decide(state, Move(who="vesh"), ScriptedDice([]))
