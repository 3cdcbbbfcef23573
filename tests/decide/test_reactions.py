"""Reactions through the ``Fight`` façade with scripted dice (C29): Attack of Opportunity, Interrupt, Catch.

Every expected number is worked out by hand from combat.txt §Reactions and
Interrupting the Flow, rolls-and-resolution.txt and CLARIFICATIONS.md (C8,
C20, C22-C24); no test calls the engine's own rule functions to get a number.

=========  ======  =======  ======  ======  ======
           STR     AGI      INT     RES     FCS
=========  ======  =======  ======  ======  ======
kael       d8 +2   d20 +1   d6 +0   d6 +0   d4 +1
mira       d8 +2   d20 +1   d6 +0   d6 +0   d4 +1
vesh       d8 +1   d20 +1   d6 +0   d6 +1   d4 +0
wren       d8 +1   d20 +1   d6 +0   d6 +1   d4 +0
=========  ======  =======  ======  ======  ======

kael and mira are heroes, vesh and wren raiders. Swords: WD 4, slashing, no
hit bonus. Unless a test says otherwise, initiative faces 15 (kael) and 5
(vesh) make kael 16 and vesh 6, so round 1 starts on kael's turn; reaction
tests then play round 1 through (no dice) so that everyone has had a first
turn (before it, Bonus Actions are for defence only: no Interrupt or Attack
of Opportunity, §The First Round, C20, docs/rulings.md). A sword
attack by kael: STR face + FCS face + 2, against vesh's base RES face + 1; by
vesh: STR face + FCS face + 1, against kael's base RES face + 0. Attack dice
are consumed in C29 order: attacker primary, attacker FCS, defender RES,
Active Defense die.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from omen_core import Fight
from omen_core.commands import AnswerDecision
from omen_core.content import CombatantSheet, DealDamage, SaveEffect, Weapon
from omen_core.errors import OmenError, RuleViolation
from omen_core.events import (
    ActionCancelled,
    ActionSettled,
    ActiveDefenseWindowOpened,
    ActiveDefenseWindowSkipped,
    AttackDeclared,
    CatchAnswered,
    CatchWindowOpened,
    ConditionCleared,
    CostPaid,
    DamageResolved,
    DiceRolled,
    Disengaged,
    EngagementChanged,
    Event,
    HitDetermined,
    Moved,
    MovementDeclared,
    ReactionPassed,
    ReactionWindowClosed,
    ReactionWindowOpened,
    SaveCalled,
    SaveResolved,
)
from omen_core.machine import Phase
from omen_core.rules.attack import ActiveDefense
from tests.fights import as_, assert_legal_order, assert_replays, last, new_fight, of, payloads, present, scripted
from tests.sheets import attributes, sheet

# -- gear and sheets ----------------------------------------------------------------------------

SWORD = Weapon(id="sword", weapon_damage=4, damage_type="slashing")
BOW = Weapon(id="bow", weapon_damage=3, damage_type="piercing", properties=frozenset({"ranged"}))
JAVELIN = Weapon(id="javelin", weapon_damage=3, damage_type="piercing", properties=frozenset({"thrown", "ranged"}))

HERO = {"STR": (8, 2), "AGI": (20, 1), "RES": (6, 0), "FCS": (4, 1)}
RAIDER = {"STR": (8, 1), "AGI": (20, 1), "RES": (6, 1), "FCS": (4, 0)}

#: A hex that costs the caller's Action: vesh saves RES against kael's INT, 3 fire on a failure.
HEX = SaveEffect(name="hex", save="RES", against="INT", action_cost=1,
                 on_failure=(DealDamage(flat=3, damage_type="fire"),))


def fighter(cid: str, side: str, attrs: dict[str, tuple[int, int]], weapons: tuple[Weapon, ...]) -> CombatantSheet:
    return replace(sheet(cid, side), attributes=attributes(attrs), weapons=weapons)


def kael(weapons: tuple[Weapon, ...] = (SWORD,)) -> CombatantSheet:
    return fighter("kael", "heroes", HERO, weapons)


def mira(weapons: tuple[Weapon, ...] = (SWORD,)) -> CombatantSheet:
    return fighter("mira", "heroes", HERO, weapons)


def vesh(weapons: tuple[Weapon, ...] = (SWORD,)) -> CombatantSheet:
    return fighter("vesh", "raiders", RAIDER, weapons)


def wren(weapons: tuple[Weapon, ...] = (SWORD,)) -> CombatantSheet:
    return fighter("wren", "raiders", RAIDER, weapons)


# -- every fight is checked against its replay and the lifecycle order ---------------------------

Play = Callable[..., Fight]


@pytest.fixture
def play() -> Iterator[Play]:
    """Start a fight with scripted faces; at teardown check replay, legal order and the dice left over.

    ``spare`` is how many scripted faces must still be unused at the end (None: not checked).
    """
    made: list[tuple[Fight, int | None]] = []

    def start(*sheets: CombatantSheet, faces: list[int], spare: int | None = 0) -> Fight:
        fight = new_fight(*sheets, faces=faces)
        made.append((fight, spare))
        return fight

    yield start
    for fight, spare in made:
        assert_replays(fight)
        assert_legal_order(fight.events)
        if spare is not None:
            assert scripted(fight).remaining == spare, "scripted dice not consumed as C29 expects"


def duel(play: Play, faces: list[int], attacker: CombatantSheet | None = None,
         defender: CombatantSheet | None = None, engaged: bool = True, spare: int | None = 0,
         first_turns: bool = True) -> Fight:
    """kael and vesh (engaged unless told), initiative rolled (15, 5: kael first), on kael's turn: in round 2
    after both first turns (unless ``first_turns`` is False: then round 1, before vesh's first turn)."""
    fight = play(attacker or kael(), defender or vesh(), faces=[15, 5, *faces], spare=spare)
    if engaged:
        fight.engage("kael", "vesh")
    fight.roll_initiative()
    if first_turns:
        through_round_1(fight)
    assert fight.state.turn == "kael"
    return fight


def vesh_down(play: Play, more: list[int]) -> Fight:
    """Round 2 as the C36 tests below play it: mira closes in and drops vesh (5 HP) to 0 (then ``more`` faces)."""
    fight = play(kael(), replace(vesh(), hp=5), wren(), mira(), faces=[15, 5, 3, 18, 8, 1, 1, *more])
    fight.engage("kael", "vesh")
    fight.roll_initiative()
    through_round_1(fight)
    fight.attack("mira", "vesh")
    fight.pass_reaction("vesh")
    fight.defend("vesh", None)
    return fight


def through_round_1(fight: Fight) -> Fight:
    """End every turn of round 1 (no dice: nothing ticks), so that everyone has had a first turn."""
    while fight.state.round == 1:
        fight.end_turn(present(fight.state.turn))
    return fight


def refused(fight: Fight, command: Callable[[], object], rule: str) -> RuleViolation:
    """The command raises RuleViolation naming ``rule``; the log, its version and the dice are untouched."""
    before, version, remaining = fight.events, fight.version, scripted(fight).remaining
    with pytest.raises(RuleViolation) as info:
        command()
    assert info.value.rule == rule
    assert fight.events == before and fight.version == version and scripted(fight).remaining == remaining
    return info.value


def declared(fight: Fight, kind: type) -> int:
    """The seq of the last declaration of ``kind`` in the log: the action id every event of that action carries."""
    found = [rec.seq for rec in fight.events if isinstance(rec.event, kind)]
    assert found, f"no {kind.__name__} in the log"
    return found[-1]


def kinds(events: list[Event]) -> list[str]:
    return [type(e).__name__ for e in events]


def ba(fight: Fight, who: str) -> int:
    return fight.state.combatants[who].bonus_actions


def hp(fight: Fight, who: str) -> int:
    return fight.state.combatants[who].hp


def rolls(fight: Fight) -> list[tuple[str, str, tuple[int, ...]]]:
    """Every roll after initiative as (purpose, roller, faces)."""
    return [(e.purpose, e.roller, tuple(d.face for d in e.dice)) for e in payloads(fight)
            if isinstance(e, DiceRolled) and e.purpose not in ("initiative", "roll_off")]


# -- Attack of Opportunity ----------------------------------------------------------------------


class TestAttackOfOpportunity:
    def test_leaving_reach_opens_a_window_before_the_movement_completes(self, play: Play) -> None:
        """C23: kael's Movement Action out of vesh's reach pays its cost, then waits at vesh's window."""
        fight = duel(play, [])
        events = fight.move("kael", leaves=["vesh"])
        move = declared(fight, MovementDeclared)
        assert events == [
            MovementDeclared(action=move, who="kael", leaves=("vesh",)),
            CostPaid(action=move, who="kael", resource="movement_action", amount=1, purpose="movement"),
            ReactionWindowOpened(action=move, reaction="attack_of_opportunity", responders=("vesh",))]
        assert fight.waiting_for == events[-1]
        assert fight.state.engaged("kael", "vesh") and not of(payloads(fight), Moved)
        refused(fight, lambda: fight.end_turn("kael"), "lifecycle")
        fight.pass_reaction("vesh")

    def test_an_attack_of_opportunity_claims_encircled(self, play: Play) -> None:
        """C23, C26: Encircled applies to any attack, an Attack of Opportunity's too: vesh claims A 2 against D 1
        (2 >= 2 x 1: +min(6, 2 x (2 - 1)) = +2): STR 6 + FCS 1 + 1 + 2 = 10 against kael's base RES 2 + 0 = 2."""
        fight = play(kael(), vesh(), sheet("skarn", "raiders"), faces=[15, 5, 1, 6, 1, 2])  # a second raider:
        fight.engage("kael", "vesh")  # C26 counts combatants in the fight, and vesh claims one beside it
        fight.roll_initiative()
        through_round_1(fight)
        fight.move("kael", leaves=["vesh"])
        fight.react("vesh", encircled=(2, 1))
        assert as_(fight.waiting_for, ActiveDefenseWindowOpened).attack_total == 10
        fight.defend("kael", None)
        assert [(m.source, m.value) for m in last(fight, HitDetermined).attack.situational] \
            == [("encircled, 2 vs 1 (C26)", 2)]
        assert hp(fight, "kael") == 9   # no crit (FCS 1 + 0 = 1 vs RES 2 + 0 = 2): 6 + 1 + 4 = 11, 20 -> 9

    def test_react_is_a_basic_attack_for_1_bonus_action_then_the_move_completes(self, play: Play) -> None:
        """C22, C23: vesh strikes (1 BA), kael gets its own Active Defense window, then kael's move completes."""
        # vesh: STR d8 6 + FCS d4 1 + STR 1 = 8 vs kael's base RES d6 2 + 0 = 2: kael's window opens.
        # kael declines: hit. Crit: FCS 1 + 0 = 1 vs RES 2 + 0 = 2: no. Damage 6 + 1 + 4 = 11: kael 20 -> 9.
        fight = duel(play, [6, 1, 2])
        fight.move("kael", leaves=["vesh"])
        move = declared(fight, MovementDeclared)
        fight.react("vesh")
        strike = last(fight, AttackDeclared)
        assert (strike.action, strike.attacker, strike.target, strike.weapon, strike.reaction,
                strike.reacting_to) == (declared(fight, AttackDeclared), "vesh", "kael", "sword",
                                        "attack_of_opportunity", move)
        paid = last(fight, CostPaid)
        assert (paid.who, paid.resource, paid.amount) == ("vesh", "bonus_action", 1)
        opened = fight.waiting_for
        assert isinstance(opened, ActiveDefenseWindowOpened)
        assert (opened.defender, opened.attack_total, opened.base_defense) == ("kael", 8, 2)
        events = fight.defend("kael", None)
        assert kinds(events) == ["ActiveDefenseDeclined", "HitDetermined", "DamageResolved", "ResourceChanged",
                                 "ActionSettled", "ReactionWindowClosed", "Moved", "ActionSettled"]
        assert events[-3:] == [ReactionWindowClosed(action=move), Moved(action=move, who="kael", left=("vesh",)),
                               ActionSettled(action=move)]
        assert rolls(fight) == [("hit", "vesh", (6, 1)), ("base_defense", "kael", (2,))]
        assert (last(fight, DamageResolved).final, hp(fight, "kael")) == (11, 9)
        assert (ba(fight, "vesh"), ba(fight, "kael"), fight.state.turn_movement) == (1, 2, 0)
        assert not fight.state.engaged("kael", "vesh") and fight.waiting_for is None

    def test_passing_lets_the_movement_complete(self, play: Play) -> None:
        """C23: the responder may let the window pass: no attack, no Bonus Action spent."""
        fight = duel(play, [])
        fight.move("kael", leaves=["vesh"])
        move = declared(fight, MovementDeclared)
        assert fight.pass_reaction("vesh") == [
            ReactionPassed(action=move, who="vesh"), ReactionWindowClosed(action=move),
            Moved(action=move, who="kael", left=("vesh",)), ActionSettled(action=move)]
        assert (ba(fight, "vesh"), hp(fight, "kael")) == (2, 20)
        assert not fight.state.engaged("kael", "vesh")

    def test_a_second_answer_is_refused_naming_who_is_still_asked(self, play: Play) -> None:
        """C23: kael leaves vesh's and wren's reach: one window for both; vesh passes, and passing again is refused
        saying what is legal now: wren's answer (a tester found no "legal now" there)."""
        fight = play(kael(), vesh(), wren(), faces=[15, 5, 3])
        fight.engage("kael", "vesh", "wren")
        fight.roll_initiative()
        through_round_1(fight)
        fight.move("kael", leaves=["vesh", "wren"])
        fight.pass_reaction("vesh")
        said = str(refused(fight, lambda: fight.pass_reaction("vesh"), "C23"))
        assert "'vesh' has already answered this window; legal now: react or pass_reaction by wren" in said, said

    def test_disengage_first_suppresses_the_window(self, play: Play) -> None:
        """C22, C23: Disengage (1 Bonus Action) earlier in the turn: the movement provokes no window."""
        fight = duel(play, [])
        assert fight.disengage("kael") == [Disengaged(who="kael", cost=1)]
        assert (ba(fight, "kael"), fight.state.disengaged) == (1, True)
        events = fight.move("kael", leaves=["vesh"])
        assert kinds(events) == ["MovementDeclared", "CostPaid", "Moved", "ActionSettled"]
        assert not of(payloads(fight), ReactionWindowOpened)
        assert not fight.state.engaged("kael", "vesh")

    def test_disengage_lasts_only_for_that_turn(self, play: Play) -> None:
        """C23: a Disengage in round 2 does not protect a movement in round 3."""
        fight = duel(play, [])
        fight.disengage("kael")
        fight.end_turn("kael")
        fight.end_turn("vesh")
        assert fight.state.disengaged is False
        events = fight.move("kael", leaves=["vesh"])
        assert events[-1] == ReactionWindowOpened(action=declared(fight, MovementDeclared),
                                                  reaction="attack_of_opportunity", responders=("vesh",))
        fight.pass_reaction("vesh")

    def test_enemy_without_a_bonus_action_gets_no_window(self, play: Play) -> None:
        """C23: vesh spent both Bonus Actions on an Interrupt, so kael's movement away provokes nothing."""
        # Interrupt: vesh 1 + 1 + 1 = 3 vs kael base 6 + 0 = 6: a miss (window skipped). vesh has 0 BA.
        # kael's attack goes on: 6 + 1 + 2 = 9 vs vesh base 1 + 1 = 2: hit (vesh has no BA: no window);
        # crit 1 + 1 = 2 vs 1 + 1 = 2: no; damage 6 + 2 + 4 = 12: vesh 20 -> 8.
        fight = duel(play, [1, 1, 6, 6, 1, 1])
        fight.attack("kael", "vesh")
        fight.react("vesh")
        assert ba(fight, "vesh") == 0 and hp(fight, "vesh") == 8
        events = fight.move("kael", leaves=["vesh"])
        assert kinds(events) == ["MovementDeclared", "CostPaid", "Moved", "ActionSettled"]

    @pytest.mark.parametrize("condition", ["Paralysed", "Incapacitated"])
    def test_helpless_enemy_gets_no_window(self, play: Play, condition: str) -> None:
        """C23: an enemy who cannot act (paralysed, incapacitated) gets no window; wren keeps the raiders up."""
        fight = play(kael(), vesh(), wren(), faces=[15, 5, 3])
        fight.engage("kael", "vesh")
        fight.roll_initiative()
        through_round_1(fight)
        fight.apply_condition("vesh", condition)
        assert ba(fight, "vesh") == 2 and fight.state.ending is None
        events = fight.move("kael", leaves=["vesh"])
        assert kinds(events) == ["MovementDeclared", "CostPaid", "Moved", "ActionSettled"]

    def test_enemy_at_0_hp_gets_no_window(self, play: Play) -> None:
        """C23, C36: vesh, dropped to 0 HP by mira, cannot act: kael leaves its reach unopposed (wren still
        stands)."""
        # Initiative (joined kael, vesh, wren, mira): 16, 6, 4, 19 -> mira, kael, vesh, wren. Round 2:
        # mira (closing in: a melee attack states reach; vesh, engaged with kael, is adjacent to mira now, and
        # passes the Interrupt): STR 8 + FCS 1 + 2 = 11 vs vesh base RES 1 + 1 = 2, declined; no crit (2 vs 2);
        # damage 8 + 2 + 4 = 14 >= vesh's 5 HP: 0, Dying. vesh keeps both Bonus Actions but cannot act.
        fight = vesh_down(play, [])
        assert hp(fight, "vesh") == 0 and ba(fight, "vesh") == 2 and fight.state.ending is None
        fight.end_turn("mira")
        events = fight.move("kael", leaves=["vesh"])
        assert kinds(events) == ["MovementDeclared", "CostPaid", "Moved", "ActionSettled"]

    def test_enemy_at_0_hp_gets_no_interrupt_and_rolls_no_defense(self, play: Play) -> None:
        """C24, C36: vesh, dropped to 0 HP by mira, is still within kael's reach but gets no Interrupt window when
        kael attacks it; kael's attack rolls only kael's dice and opens no Active Defense window."""
        # As above, then kael (round 2, after mira): STR 6 + FCS 1 + 2 = 9 vs vesh's Defense Rating 1 (no RES
        # die, C10): a hit, and a crit (FCS 1 + 1 = 2 > RES bonus 1); vesh stays at 0 HP.
        fight = vesh_down(play, [6, 1])
        fight.end_turn("mira")
        assert fight.state.engaged("kael", "vesh") and ba(fight, "vesh") == 2
        events = fight.attack("kael", "vesh")
        assert kinds(events) == ["AttackDeclared", "CostPaid", "DiceRolled", "ActiveDefenseWindowSkipped",
                                 "HitDetermined", "DamageResolved", "ActionSettled"]
        assert (last(fight, HitDetermined).hit, last(fight, HitDetermined).crit, hp(fight, "vesh")) == (True, True, 0)

    def test_ally_leaving_does_not_provoke(self, play: Play) -> None:
        """C23: only enemies get a window: kael leaving mira's reach opens none."""
        fight = play(kael(), mira(), vesh(), faces=[15, 10, 5])
        fight.engage("kael", "mira")
        fight.roll_initiative()
        through_round_1(fight)
        events = fight.move("kael", leaves=["mira"])
        move = declared(fight, MovementDeclared)
        assert events[2:] == [Moved(action=move, who="kael", left=("mira",)), ActionSettled(action=move)]
        assert not fight.state.engaged("kael", "mira")

    def test_each_enemy_left_gets_the_window(self, play: Play) -> None:
        """C23: leaving vesh and wren opens one window for both; it stays open until both have answered."""
        # wren: STR 1 + FCS 1 + 1 = 3 vs kael base RES 6 + 0 = 6: a miss.
        fight = play(kael(), vesh(), wren(), faces=[15, 5, 3, 1, 1, 6])
        fight.engage("kael", "vesh", "wren")
        fight.roll_initiative()
        through_round_1(fight)
        events = fight.move("kael", leaves=["vesh", "wren"])
        move = declared(fight, MovementDeclared)
        assert events[-1] == ReactionWindowOpened(action=move, reaction="attack_of_opportunity",
                                                  responders=("vesh", "wren"))
        assert fight.pass_reaction("vesh") == [ReactionPassed(action=move, who="vesh")]
        assert fight.waiting_for == events[-1]
        refused(fight, lambda: fight.pass_reaction("vesh"), "C23")
        events = fight.react("wren")
        assert last(fight, HitDetermined).hit is False
        assert events[-3:] == [ReactionWindowClosed(action=move),
                               Moved(action=move, who="kael", left=("vesh", "wren")), ActionSettled(action=move)]
        assert (ba(fight, "vesh"), ba(fight, "wren")) == (2, 1)

    def test_leaving_someone_not_engaged_is_refused(self, play: Play) -> None:
        """C23: kael is not within vesh's reach, so it cannot leave it."""
        fight = duel(play, [], engaged=False)
        refused(fight, lambda: fight.move("kael", leaves=["vesh"]), "C23")

    def test_leaving_ones_own_reach_is_refused(self, play: Play) -> None:
        """C23: ``leaves`` names the others whose reach the mover leaves: kael naming itself is refused as that, not
        as "not within kael's reach"."""
        fight = duel(play, [])
        said = str(refused(fight, lambda: fight.move("kael", leaves=["kael"]), "C23"))
        assert said == "[C23] 'kael' cannot leave its own reach: leaves names the others whose reach it leaves"

    def test_one_at_0_hp_reacting_is_refused_naming_c36(self, play: Play) -> None:
        """C36 (docs/scenarios.md: a command given to a Dying combatant is refused naming C36): vesh, dropped to 0
        HP by mira, gets no window when kael leaves its reach, and its react, its pass and an Active Defense or a
        Catch it answers are refused naming C36 (for react, not C23's "no reaction window is open")."""
        fight = vesh_down(play, [])
        fight.end_turn("mira")
        fight.move("kael", leaves=["vesh"])
        said = str(refused(fight, lambda: fight.react("vesh"), "C36"))
        assert said == "[C36] 'vesh' is at 0 HP, Dying: treated as Incapacitated and cannot react"
        refused(fight, lambda: fight.defend("vesh", "dodge"), "C36")
        refused(fight, lambda: fight.defend("vesh", None), "C36")
        refused(fight, lambda: fight.catch("vesh", True), "C36")

    def test_only_a_responder_may_answer(self, play: Play) -> None:
        """C23: wren (not engaged with kael) is not offered the window and may not react or pass."""
        fight = play(kael(), vesh(), wren(), faces=[15, 5, 3])
        fight.engage("kael", "vesh")
        fight.roll_initiative()
        through_round_1(fight)
        fight.move("kael", leaves=["vesh"])
        refused(fight, lambda: fight.react("wren"), "C23")
        refused(fight, lambda: fight.pass_reaction("wren"), "C23")
        fight.pass_reaction("vesh")

    def test_no_window_open_nothing_to_answer(self, play: Play) -> None:
        """C23: reacting or passing with no window open is refused."""
        fight = duel(play, [])
        refused(fight, lambda: fight.react("vesh"), "C23")
        refused(fight, lambda: fight.pass_reaction("vesh"), "C23")

    def test_a_responder_asked_while_an_action_inside_the_window_goes_on_is_told_what_is_legal(self,
                                                                                         play: Play) -> None:
        """C24: kael attacks vesh beside vesh and wren (round 2): an Interrupt window for both; wren strikes first
        (8 + 4 + 1 = 13 against kael's 1 + 0: a hit) and kael's Active Defense window opens inside it. vesh's
        answer now is refused naming the Interrupt (C24, not C23's "no reaction window is open": a tester read that
        as false) and what is legal now, kael's answer; an answer_decision meanwhile says what is legal too."""
        fight = play(kael(), vesh(), wren(), faces=[15, 5, 3, 8, 4, 1])
        fight.engage("kael", "vesh", "wren")
        fight.roll_initiative()
        through_round_1(fight)
        fight.attack("kael", "vesh")
        fight.react("wren")
        said = str(refused(fight, lambda: fight.react("vesh"), "C24"))
        assert "'vesh' answers the Interrupt window after the action in progress inside it" in said
        assert "legal now: answer_active_defense by kael (Active Defense, C8)" in said
        said = str(refused(fight, lambda: fight.execute(AnswerDecision(decision="riposte", who="vesh", choice="use")),
                           "C38"))
        assert "no decision point is open; legal now: answer_active_defense by kael" in said

    def test_mover_cannot_act_while_the_window_is_open(self, play: Play) -> None:
        """C23: the window is the enemies' to answer before the movement completes; the mover waits."""
        fight = duel(play, [], spare=None)
        fight.move("kael", leaves=["vesh"])
        before = fight.events
        with pytest.raises(RuleViolation):
            fight.attack("kael", "vesh")
        assert fight.events == before


# -- Interrupt ----------------------------------------------------------------------------------


class TestInterrupt:
    def test_window_opens_on_declaration_before_costs(self, play: Play) -> None:
        """C24: kael declares an attack; vesh (adjacent, 2 Bonus Actions) gets a window before kael pays."""
        fight = duel(play, [1, 1, 6])          # after the pass: 1 + 1 + 2 = 4 vs 6 + 1 = 7, a miss
        events = fight.attack("kael", "vesh")
        assert kinds(events) == ["AttackDeclared", "ReactionWindowOpened"]
        assert events[-1] == ReactionWindowOpened(action=declared(fight, AttackDeclared), reaction="interrupt",
                                                  responders=("vesh",))
        assert fight.waiting_for == events[-1]
        assert not of(payloads(fight), CostPaid) and fight.state.turn_actions == 1
        fight.pass_reaction("vesh")
        assert last(fight, CostPaid).resource == "action"

    def test_hit_cancels_the_action_which_is_still_spent(self, play: Play) -> None:
        """C22, C24: the Interrupt costs vesh 2 BA; it hits, so kael's attack is cancelled and its Action spent."""
        # vesh: STR 6 + FCS 1 + 1 = 8 vs kael base RES 2: kael's window; declined: hit, no crit (1 vs 2).
        # Damage 6 + 1 + 4 = 11: kael 20 -> 9. kael's own attack never rolls.
        fight = duel(play, [6, 1, 2])
        fight.attack("kael", "vesh")
        attack = declared(fight, AttackDeclared)
        fight.react("vesh")
        interrupt = last(fight, AttackDeclared)
        assert (interrupt.attacker, interrupt.target, interrupt.reaction, interrupt.reacting_to) \
            == ("vesh", "kael", "interrupt", attack)
        assert (last(fight, CostPaid).who, last(fight, CostPaid).amount) == ("vesh", 2)
        assert isinstance(fight.waiting_for, ActiveDefenseWindowOpened) and fight.waiting_for.defender == "kael"
        events = fight.defend("kael", None)
        assert kinds(events)[-3:] == ["ReactionWindowClosed", "CostPaid", "ActionCancelled"]
        paid, cancelled = as_(events[-2], CostPaid), as_(events[-1], ActionCancelled)
        assert (paid.action, paid.who, paid.resource, paid.amount) == (attack, "kael", "action", 1)
        assert cancelled.action == attack and "C24" in cancelled.reason
        assert (fight.state.turn_actions, ba(fight, "vesh"), hp(fight, "kael"), hp(fight, "vesh")) == (0, 0, 9, 20)
        assert rolls(fight) == [("hit", "vesh", (6, 1)), ("base_defense", "kael", (2,))]
        assert fight.waiting_for is None and fight.state.at_rest
        refused(fight, lambda: fight.attack("kael", "vesh"), "C20")

    def test_miss_lets_the_action_go_on(self, play: Play) -> None:
        """C24: vesh's Interrupt misses (3 vs 6); kael's attack is paid and resolves: 9 vs 2 hits for 12."""
        # kael: STR 6 + FCS 1 + 2 = 9 vs vesh base RES 1 + 1 = 2; vesh has 0 BA: window skipped.
        # Crit: 1 + 1 = 2 vs 1 + 1 = 2: no. Damage 6 + 2 + 4 = 12: vesh 20 -> 8.
        fight = duel(play, [1, 1, 6, 6, 1, 1])
        fight.attack("kael", "vesh")
        attack = declared(fight, AttackDeclared)
        events = fight.react("vesh")
        assert kinds(events)[:7] == ["AttackDeclared", "CostPaid", "DiceRolled", "DiceRolled",
                                     "ActiveDefenseWindowSkipped", "HitDetermined", "ActionSettled"]
        assert events[7:9] == [ReactionWindowClosed(action=attack),
                               CostPaid(action=attack, who="kael", resource="action", amount=1, purpose="attack")]
        assert not of(events, ActionCancelled)
        skipped = last(fight, ActiveDefenseWindowSkipped)
        assert skipped.defender == "vesh" and "no Bonus Action" in skipped.reason
        hit = last(fight, HitDetermined)
        assert (hit.action, hit.attack.total, hit.defense.total, hit.hit) == (attack, 9, 2, True)
        assert (hp(fight, "vesh"), hp(fight, "kael"), fight.state.turn_actions) == (8, 20, 0)
        assert rolls(fight) == [("hit", "vesh", (1, 1)), ("base_defense", "kael", (6,)),
                                ("hit", "kael", (6, 1)), ("base_defense", "vesh", (1,))]

    def test_enemy_with_one_bonus_action_gets_no_window(self, play: Play) -> None:
        """C24: vesh Dodged mira's arrow (2 -> 1 BA), so kael's attack opens no Interrupt window."""
        # Initiative (joined kael, vesh, mira): kael 10 + 1 = 11, vesh 5 + 1 = 6, mira 18 + 1 = 19.
        # mira (not engaged, so no Interrupt): bow STR 6 + FCS 1 + 2 = 9 vs vesh base 1 + 1 = 2; Dodge
        # AGI 19 + 1 = 20: defense 22, a miss. kael: STR 1 + FCS 1 + 2 = 4 vs vesh base 6 + 1 = 7: a miss.
        fight = play(kael(), vesh(), mira(weapons=(BOW,)), faces=[10, 5, 18, 6, 1, 1, 19, 1, 1, 6])
        fight.engage("kael", "vesh")
        fight.roll_initiative()
        assert fight.state.order == ("mira", "kael", "vesh")
        through_round_1(fight)
        fight.attack("mira", "vesh")
        fight.defend("vesh", "dodge")
        fight.end_turn("mira")
        assert ba(fight, "vesh") == 1
        events = fight.attack("kael", "vesh")
        assert kinds(events)[:2] == ["AttackDeclared", "CostPaid"]
        assert len(of(payloads(fight), ReactionWindowOpened)) == 0

    def test_enemy_not_adjacent_gets_no_window(self, play: Play) -> None:
        """C24: only enemies adjacent to the actor may Interrupt: wren, not within kael's reach, gets no window
        while vesh, whom kael attacks in melee, does."""
        fight = play(kael(), vesh(), wren(), faces=[15, 5, 3, 1, 1, 6])
        fight.engage("kael", "vesh")
        fight.roll_initiative()
        through_round_1(fight)
        events = fight.attack("kael", "vesh")
        assert events[-1] == ReactionWindowOpened(action=declared(fight, AttackDeclared), reaction="interrupt",
                                                  responders=("vesh",))
        fight.pass_reaction("vesh")                      # 1 + 1 + 2 = 4 vs 6 + 1 = 7: a miss

    def test_ranged_weapon_cannot_interrupt(self, play: Play) -> None:
        """C24: an Interrupt is a melee attack: vesh's bow is refused (named at the command's weapon when it gives
        one, none when the bow is the one in hand by default); vesh passes and kael's attack goes on."""
        fight = duel(play, [1, 1, 6], defender=vesh(weapons=(BOW,)))
        fight.attack("kael", "vesh")
        assert "field" not in refused(fight, lambda: fight.react("vesh"), "C24").facts
        assert refused(fight, lambda: fight.react("vesh", weapon="bow"), "C24").facts["field"] == "$.weapon"
        fight.pass_reaction("vesh")
        assert last(fight, HitDetermined).hit is False   # 1 + 1 + 2 = 4 vs 6 + 1 = 7

    def test_an_interrupt_claims_high_ground(self, play: Play) -> None:
        """C24, C27: High Ground's +2 applies to any attack, an Interrupt's too (``react`` took no claim: found by a
        tester). vesh strikes down: STR 3 + FCS 1 + 1 + 2 = 7 against kael's base RES 6 + 0 = 6 (5 without it, a
        miss); kael declines; a hit, no crit (FCS 1 + 0 vs RES 6 + 0), 3 + 1 + 4 = 8: kael 20 -> 12, and kael's
        attack is cancelled, its Action spent. options() left the claim free for the strike, as for an attack."""
        fight = duel(play, [3, 1, 6])
        fight.attack("kael", "vesh")
        attack = declared(fight, AttackDeclared)
        strike = next(o for o in fight.options().offers if o.command == "react")
        assert [(a.name, a.required) for a in strike.free] == [("situational", False)]
        fight.react("vesh", high_ground=True)
        assert last(fight, AttackDeclared).situational.high_ground is True
        assert as_(fight.waiting_for, ActiveDefenseWindowOpened).attack_total == 7
        fight.defend("kael", None)
        hit = last(fight, HitDetermined)
        assert (hit.attack.total, hit.defense.total, hit.hit, hit.crit) == (7, 6, True, False)
        assert [(m.source, m.value) for m in hit.attack.situational] == [("high ground (C27)", 2)]
        assert (hp(fight, "kael"), last(fight, ActionCancelled).action) == (12, attack)

    def test_save_costing_an_action_is_interruptible(self, play: Play) -> None:
        """C24: kael calls a hex (an Action); vesh's Interrupt hits, so the save never happens; the Action is spent."""
        # vesh: 6 + 1 + 1 = 8 vs kael base 2; declined; no crit (1 vs 2); damage 11: kael 20 -> 9.
        fight = duel(play, [6, 1, 2])
        events = fight.call_save("kael", "vesh", HEX)
        save = declared(fight, SaveCalled)
        assert kinds(events) == ["SaveCalled", "ReactionWindowOpened"]
        assert events[-1] == ReactionWindowOpened(action=save, reaction="interrupt", responders=("vesh",))
        fight.react("vesh")
        events = fight.defend("kael", None)
        assert kinds(events)[-3:] == ["ReactionWindowClosed", "CostPaid", "ActionCancelled"]
        paid = as_(events[-2], CostPaid)
        assert (paid.action, paid.who, paid.resource, paid.amount) == (save, "kael", "action", 1)
        assert not of(payloads(fight), SaveResolved)
        assert (fight.state.turn_actions, hp(fight, "kael"), hp(fight, "vesh")) == (0, 9, 20)

    def test_save_goes_on_when_the_interrupt_misses(self, play: Play) -> None:
        """C15, C24: the Interrupt misses (3 vs 6); the hex resolves: vesh RES 2 + 1 = 3 < kael INT 5 + 0: 3 fire."""
        fight = duel(play, [1, 1, 6, 2, 5])
        fight.call_save("kael", "vesh", HEX)
        events = fight.react("vesh")
        resolved = last(fight, SaveResolved)
        assert ((resolved.saver.roller, resolved.saver.total), (resolved.opposing.roller, resolved.opposing.total),
                resolved.success) == (("vesh", 3), ("kael", 5), False)
        assert CostPaid(action=declared(fight, SaveCalled), who="kael", resource="action", amount=1,
                        purpose="hex") in events
        assert (hp(fight, "vesh"), fight.state.turn_actions, ba(fight, "vesh")) == (17, 0, 0)

    def test_free_save_opens_no_window(self, play: Play) -> None:
        """C24: a save that costs no Action is not an Action declared: no Interrupt window; vesh 4 + 1 >= 2 saves."""
        fight = duel(play, [4, 2])
        events = fight.call_save("kael", "vesh", replace(HEX, action_cost=0))
        assert not of(events, ReactionWindowOpened) and isinstance(events[0], SaveCalled)
        assert last(fight, SaveResolved).success is True and fight.state.turn_actions == 1

    def test_reaction_attack_opens_no_interrupt(self, play: Play) -> None:
        """C24: an Interrupt is itself a reaction, not a declared Action: kael cannot Interrupt vesh's Interrupt."""
        fight = duel(play, [1, 1, 6, 6, 1, 1])
        fight.attack("kael", "vesh")
        events = fight.react("vesh")
        assert len(of(payloads(fight), ReactionWindowOpened)) == 1
        assert kinds(events)[:2] == ["AttackDeclared", "CostPaid"]

    def test_actor_cannot_act_while_the_interrupt_window_is_open(self, play: Play) -> None:
        """C24: the window comes before the declared Action's costs are paid; the actor waits for it."""
        fight = duel(play, [], spare=None)
        fight.attack("kael", "vesh")
        before = fight.events
        with pytest.raises(RuleViolation):
            fight.move("kael", leaves=["vesh"])
        assert fight.events == before


# -- before the first turn, and melee reach (docs/rulings.md) --------------------------------------


class TestBeforeTheFirstTurn:
    def test_no_attack_of_opportunity_before_the_enemys_first_turn(self, play: Play) -> None:
        """§The First Round, C20, C23: in round 1 vesh has not had its first turn, so its Bonus Actions are for
        defence: kael leaves its reach with no window, and vesh keeps both Bonus Actions."""
        fight = duel(play, [], first_turns=False)
        events = fight.move("kael", leaves=["vesh"])
        assert kinds(events) == ["MovementDeclared", "CostPaid", "Moved", "ActionSettled"]
        assert ba(fight, "vesh") == 2 and not fight.state.had_a_turn("vesh")

    def test_no_interrupt_before_the_first_turn_but_active_defense_is_allowed(self, play: Play) -> None:
        """§The First Round, C20, C24, C8: vesh (adjacent, 2 Bonus Actions, no turn yet) gets no Interrupt window
        when kael attacks, but may Dodge: 6 + 1 + 2 = 9 vs base 1 + 1 = 2; Dodge 19 + 1 = 20, total 22: a miss."""
        fight = duel(play, [6, 1, 1, 19], first_turns=False)
        events = fight.attack("kael", "vesh")
        assert kinds(events)[:2] == ["AttackDeclared", "CostPaid"] and not of(events, ReactionWindowOpened)
        fight.defend("vesh", "dodge")
        assert last(fight, HitDetermined).hit is False and ba(fight, "vesh") == 1

    def test_the_window_opens_once_the_first_turn_has_started(self, play: Play) -> None:
        """C20, C24: the same attack in round 2, after vesh's first turn, opens vesh's Interrupt window."""
        fight = duel(play, [1, 1, 6])
        assert fight.state.had_a_turn("vesh") and fight.state.round == 2
        events = fight.attack("kael", "vesh")
        assert events[-1] == ReactionWindowOpened(action=declared(fight, AttackDeclared), reaction="interrupt",
                                                  responders=("vesh",))
        fight.pass_reaction("vesh")                       # 1 + 1 + 2 = 4 vs 6 + 1 = 7: a miss


class TestMeleeReach:
    def test_a_melee_attack_states_that_the_attacker_is_within_reach(self, play: Play) -> None:
        """docs/rulings.md, C24: kael attacks vesh in melee from out of reach: the declaration records the
        engagement first, so vesh (adjacent now, first turn had) gets its Interrupt window."""
        fight = duel(play, [1, 1, 6], engaged=False)
        assert not fight.state.engaged("kael", "vesh")
        events = fight.attack("kael", "vesh")
        assert kinds(events) == ["EngagementChanged", "AttackDeclared", "ReactionWindowOpened"]
        assert events[0] == EngagementChanged(who="kael", others=("vesh",), engaged=True)
        assert fight.state.engaged("kael", "vesh")
        fight.pass_reaction("vesh")

    def test_engaged_already_records_nothing_more(self, play: Play) -> None:
        """docs/rulings.md: within reach already, a melee attack adds no engagement event."""
        fight = duel(play, [1, 1, 6])
        assert kinds(fight.attack("kael", "vesh"))[0] == "AttackDeclared"
        fight.pass_reaction("vesh")

    def test_a_ranged_attack_changes_no_position(self, play: Play) -> None:
        """docs/rulings.md: a bow shot from out of reach leaves positions as they were: no engagement, and vesh,
        not adjacent, gets no Interrupt window (C24). 1 + 1 + 2 = 4 vs 6 + 1 = 7: a miss."""
        fight = duel(play, [1, 1, 6], attacker=kael(weapons=(BOW,)), engaged=False)
        events = fight.attack("kael", "vesh")
        assert not of(events, EngagementChanged) and not of(events, ReactionWindowOpened)
        assert not fight.state.engaged("kael", "vesh")

    def test_with_the_movement_action_spent_a_melee_attack_out_of_reach_is_refused(self, play: Play) -> None:
        """docs/rulings.md (closing in is movement), C20: kael leaves vesh's reach (vesh passes its Attack of
        Opportunity), so its one Movement Action this turn is spent; a melee attack on vesh, out of reach, is
        refused naming C20, with the sword or unarmed: nothing is written, no die rolled."""
        fight = duel(play, [])
        fight.move("kael", leaves=["vesh"])
        fight.pass_reaction("vesh")
        assert not fight.state.engaged("kael", "vesh") and fight.state.turn_movement == 0
        said = str(refused(fight, lambda: fight.attack("kael", "vesh", weapon="sword"), "C20"))
        assert said == ("[C20] 'kael' cannot make a melee attack on 'vesh': 'vesh' is not within kael's reach and "
                        "kael's Movement Action this turn is spent (C20: 1 Movement Action per turn; closing in is "
                        "movement)")
        refused(fight, lambda: fight.attack("kael", "vesh", unarmed=True), "C20")

    def test_with_the_movement_action_spent_one_within_reach_may_still_be_attacked(self, play: Play) -> None:
        """C20, C23, C24: kael, beside vesh and wren, leaves wren's reach only (wren passes); vesh is still within
        reach, so kael's attack on it is no closing in: vesh's Interrupt window opens (it passes), then 1 + 1 + 2 =
        4 against 6 + 1 = 7: a miss."""
        fight = play(kael(), vesh(), wren(), faces=[15, 5, 3, 1, 1, 6])
        fight.engage("kael", "vesh", "wren")
        fight.roll_initiative()
        through_round_1(fight)
        fight.move("kael", leaves=["wren"])
        fight.pass_reaction("wren")
        events = fight.attack("kael", "vesh")
        assert kinds(events) == ["AttackDeclared", "ReactionWindowOpened"]
        fight.pass_reaction("vesh")
        assert last(fight, HitDetermined).hit is False and fight.state.turn_actions == 0

    def test_with_the_movement_action_spent_a_ranged_attack_needs_no_closing_in(self, play: Play) -> None:
        """docs/rulings.md: a bow shot changes no position, so after kael's move it is made from afar: no
        engagement, no Interrupt (vesh is not adjacent, C24); 1 + 1 + 2 = 4 against 6 + 1 = 7: a miss."""
        fight = duel(play, [1, 1, 6], attacker=kael(weapons=(BOW,)), engaged=False)
        fight.move("kael")
        events = fight.attack("kael", "vesh")
        assert not of(events, EngagementChanged) and not of(events, ReactionWindowOpened)
        assert last(fight, HitDetermined).hit is False

    def test_outside_the_rounds_closing_in_asks_for_no_movement(self, play: Play) -> None:
        """docs/rulings.md: before the rounds no turn counts Movement Actions (C20), so after a move kael's melee
        attack still closes in, recorded as before; 1 + 1 + 2 = 4 against 6 + 1 = 7: a miss."""
        fight = play(kael(), vesh(), faces=[1, 1, 6])
        fight.move("kael")
        events = fight.attack("kael", "vesh")
        assert events[0] == EngagementChanged(who="kael", others=("vesh",), engaged=True)
        assert last(fight, HitDetermined).hit is False

    def test_undo_takes_the_engagement_back_with_the_attack(self, play: Play) -> None:
        """The engagement is part of the attack's command: undoing the attack undoes it too."""
        fight = duel(play, [1, 1, 6], engaged=False, spare=3)
        fight.attack("kael", "vesh")
        fight.undo()
        assert not fight.state.engaged("kael", "vesh") and fight.state.at_rest


# -- Standing up --------------------------------------------------------------------------------


class TestStandUp:
    """The core ruleset's Prone is cleared by "standing up (a Movement Action)" (C28; docs/rulings.md)."""

    def test_standing_up_is_the_turns_movement_action(self, play: Play) -> None:
        """C20, C23: Prone kael stands up on its turn: a Movement Action paid through the ledger, leaving no one's
        reach (no Attack of Opportunity window from vesh, still engaged), Prone cleared; the Action and the Bonus
        Actions are untouched, and no other Movement Action is left."""
        fight = duel(play, [])
        fight.apply_condition("kael", "Prone")
        events = fight.stand_up("kael")
        action = declared(fight, MovementDeclared)
        assert events == [
            MovementDeclared(action=action, who="kael"),
            CostPaid(action=action, who="kael", resource="movement_action", amount=1, purpose="standing up"),
            Moved(action=action, who="kael"),
            ConditionCleared(action=action, who="kael", condition="Prone", reason="stood up (a Movement Action)"),
            ActionSettled(action=action)]
        fighter = fight.state.combatants["kael"]
        assert not fighter.prone and fight.state.engaged("kael", "vesh") and fight.waiting_for is None
        assert (fight.state.turn_movement, fight.state.turn_actions, ba(fight, "kael")) == (0, 1, 2)
        said = str(refused(fight, lambda: fight.move("kael"), "C20"))
        assert "no Movement Action left" in said

    def test_after_moving_one_cannot_stand_up(self, play: Play) -> None:
        """C20: Prone kael crawls (its Movement Action); standing up needs another and is refused."""
        fight = duel(play, [])
        fight.apply_condition("kael", "Prone")
        fight.move("kael")
        said = str(refused(fight, lambda: fight.stand_up("kael"), "C20"))
        assert said == ("[C20] standing up is a Movement Action: 'kael' cannot pay 1 Movement Action: 0 Movement "
                        "Actions left to spend (C20)")
        assert fight.state.combatants["kael"].prone

    def test_one_not_prone_cannot_stand_up(self, play: Play) -> None:
        """C28: only Prone is cleared by standing up; kael, standing, is refused."""
        fight = duel(play, [])
        said = str(refused(fight, lambda: fight.stand_up("kael"), "C28"))
        assert said == "[C28] 'kael' is not Prone: there is nothing to stand up from (standing up clears Prone)"

    def test_only_on_its_own_turn(self, play: Play) -> None:
        """§Your Turn: Prone vesh cannot stand up on kael's turn."""
        fight = duel(play, [])
        fight.apply_condition("vesh", "Prone")
        refused(fight, lambda: fight.stand_up("vesh"), "§Your Turn")

    @pytest.mark.parametrize("condition", ["Paralysed", "Incapacitated"])
    def test_one_who_cannot_act_cannot_stand_up(self, play: Play, condition: str) -> None:
        """C10: Prone and Incapacitated or Paralysed, kael cannot stand up."""
        fight = duel(play, [])
        fight.apply_condition("kael", "Prone")
        fight.apply_condition("kael", condition)
        said = str(refused(fight, lambda: fight.stand_up("kael"), "C10"))
        assert said == "[C10] 'kael' is incapacitated or paralysed and cannot stand up"

    def test_one_at_0_hp_cannot_stand_up(self, play: Play) -> None:
        """C36: vesh, Prone and dropped to 0 HP by mira, is refused naming C36 (before whose turn it is)."""
        fight = vesh_down(play, [])
        fight.apply_condition("vesh", "Prone")
        refused(fight, lambda: fight.stand_up("vesh"), "C36")

    def test_outside_the_rounds_it_is_free(self, play: Play) -> None:
        """C20: before the rounds no turn counts Movement Actions: standing up is free, Prone cleared outside any
        action, as the GM's clear would be; vesh, engaged, gets no window (it leaves no reach, C23)."""
        fight = play(kael(), vesh(), faces=[])
        fight.engage("kael", "vesh")
        fight.apply_condition("kael", "Prone")
        assert fight.stand_up("kael") == [ConditionCleared(action=None, who="kael", condition="Prone",
                                                           reason="stood up (free outside the rounds)")]
        assert not fight.state.combatants["kael"].prone

    def test_undo_gives_back_the_movement_action_and_prone(self, play: Play) -> None:
        """Standing up is one command: undoing it gives kael its Movement Action back, and Prone."""
        fight = duel(play, [])
        fight.apply_condition("kael", "Prone")
        fight.stand_up("kael")
        fight.undo()
        assert fight.state.combatants["kael"].prone and fight.state.turn_movement == 1

    def test_not_while_an_action_is_in_progress(self, play: Play) -> None:
        """Standing up is taken between actions: while vesh's Attack of Opportunity window waits on Prone kael's
        crawl away, it is refused by the lifecycle, saying what is legal now."""
        fight = duel(play, [])
        fight.apply_condition("kael", "Prone")
        fight.move("kael", leaves=["vesh"])
        said = str(refused(fight, lambda: fight.stand_up("kael"), "lifecycle"))
        assert "legal now: react or pass_reaction by vesh" in said
        fight.pass_reaction("vesh")


# -- Catch --------------------------------------------------------------------------------------


class TestCatch:
    # kael throws the javelin: STR 6 + FCS 1 + 2 = 9 vs vesh base RES 1 + 1 = 2: vesh's window (Dodge only,
    # ranged); no crit (FCS 1 + 1 = 2 vs RES 1 + 1 = 2). Not engaged: no Interrupt window.
    THROW = [6, 1, 1]

    def thrown(self, play: Play, extra: Sequence[int] = (), dodge: bool = False) -> Fight:
        fight = duel(play, self.THROW + list(extra), attacker=kael(weapons=(JAVELIN,)), engaged=False,
                     first_turns=False)
        fight.attack("kael", "vesh")
        fight.defend("vesh", "dodge" if dodge else None)
        return fight

    def test_thrown_weapon_that_hits_opens_the_window(self, play: Play) -> None:
        """C22: a thrown javelin about to hit opens a Catch window for its target, before any damage."""
        fight = self.thrown(play)
        assert last(fight, HitDetermined).hit is True
        assert fight.waiting_for == CatchWindowOpened(action=declared(fight, AttackDeclared), target="vesh")
        assert not of(payloads(fight), DamageResolved)
        fight.catch("vesh")

    def test_catch_costs_a_bonus_action_and_no_damage_is_dealt(self, play: Play) -> None:
        """C22: Catch costs 1 Bonus Action; the javelin deals no damage."""
        fight = self.thrown(play)
        events = fight.catch("vesh")
        throw = declared(fight, AttackDeclared)
        assert events == [CatchAnswered(action=throw, who="vesh", caught=True),
                          CostPaid(action=throw, who="vesh", resource="bonus_action", amount=1, purpose="Catch"),
                          ActionSettled(action=throw)]
        assert (hp(fight, "vesh"), ba(fight, "vesh")) == (20, 1)
        assert not of(payloads(fight), DamageResolved) and fight.waiting_for is None

    def test_letting_it_hit_deals_the_damage(self, play: Play) -> None:
        """C22: catch(..., False) lets the javelin land: 6 + STR 2 + WD 3 = 11 piercing, HP 9; no BA spent."""
        fight = self.thrown(play)
        events = fight.catch("vesh", False)
        assert events[0] == CatchAnswered(action=declared(fight, AttackDeclared), who="vesh", caught=False)
        dealt = last(fight, DamageResolved)
        assert (dealt.damage_type, dealt.terms.raw, dealt.final) == ("piercing", 11, 11)
        assert (hp(fight, "vesh"), ba(fight, "vesh")) == (9, 2)

    def test_catch_after_a_failed_dodge(self, play: Play) -> None:
        """C8, C22: vesh Dodges (AGI 2 + 1 = 3: defense 5, still hit by 9), then Catches with its last BA."""
        fight = self.thrown(play, [2], dodge=True)
        assert last(fight, HitDetermined).defense.total == 5 and ba(fight, "vesh") == 1
        assert fight.waiting_for == CatchWindowOpened(action=declared(fight, AttackDeclared), target="vesh")
        fight.catch("vesh")
        assert (hp(fight, "vesh"), ba(fight, "vesh")) == (20, 0)

    def test_a_target_at_0_hp_gets_no_window(self, play: Play) -> None:
        """C22, C36: before initiative, kael's first javelin (9 vs 2, declined, let through: 6 + 2 + 3 = 11)
        takes vesh from 5 HP to 0; the second (STR 6 + FCS 1 + 2 = 9 vs Defense Rating 1, no RES die) hits and
        opens no Catch window: vesh at 0 HP makes no reaction."""
        fight = play(kael(weapons=(JAVELIN,)), replace(vesh(), hp=5), faces=[*self.THROW, 6, 1])
        fight.attack("kael", "vesh")
        fight.defend("vesh", None)
        fight.catch("vesh", False)
        assert hp(fight, "vesh") == 0
        mark = len(payloads(fight))
        fight.attack("kael", "vesh")
        assert last(fight, HitDetermined).hit and not of(payloads(fight)[mark:], CatchWindowOpened)
        assert fight.waiting_for is None

    def test_only_the_target_catches(self, play: Play) -> None:
        """C22: the Catch window is the target's."""
        fight = self.thrown(play)
        refused(fight, lambda: fight.catch("kael"), "C22")
        fight.catch("vesh")

    def test_no_window_no_catch(self, play: Play) -> None:
        """C22: catching with no Catch window open is refused."""
        fight = duel(play, [], engaged=False)
        refused(fight, lambda: fight.catch("vesh"), "C22")

    def test_thrown_weapon_that_misses_opens_no_window(self, play: Play) -> None:
        """C22: 1 + 1 + 2 = 4 vs 6 + 1 = 7 misses: nothing to catch."""
        fight = duel(play, [1, 1, 6], attacker=kael(weapons=(JAVELIN,)), engaged=False, first_turns=False)
        fight.attack("kael", "vesh")
        assert not of(payloads(fight), CatchWindowOpened) and fight.waiting_for is None

    def test_a_weapon_marked_thrown_alone_strikes_in_hand(self, play: Play) -> None:
        """C22, docs/rulings.md "A weapon is thrown only in a ranged attack": a knife marked ``thrown`` but not
        ``ranged`` makes a melee attack (C4), struck in hand: nothing in flight, so no Catch window (it opened one:
        found by a tester). 6 + 1 + 2 = 9 against vesh's base 1 + 1 = 2, declined: a hit, no crit (FCS 1 + 1 = 2 vs
        RES 1 + 1 = 2), 6 + 2 + WD 2 = 10: vesh 20 -> 10."""
        fight = duel(play, [6, 1, 1], attacker=kael(weapons=(KNIFE,)), first_turns=False)
        fight.attack("kael", "vesh")
        assert last(fight, AttackDeclared).kind == "melee"
        fight.defend("vesh", None)
        assert not of(payloads(fight), CatchWindowOpened) and fight.waiting_for is None
        assert (last(fight, DamageResolved).final, hp(fight, "vesh"), ba(fight, "vesh")) == (10, 10, 2)

    def test_an_interrupt_with_a_weapon_marked_thrown_is_not_caught(self, play: Play) -> None:
        """C22, C24: vesh interrupts with a hatchet marked only ``thrown``: a melee attack (C24), struck in hand,
        STR 6 + FCS 3 + 1 = 10 against kael's base RES 1 + 0 = 1, declined: a hit, so kael's attack is cancelled,
        its Action spent. It opened a Catch window, and a caught Interrupt still cancelled the attack (found by a
        tester). A crit (FCS 3 + 0 = 3 vs RES 1 + 0 = 1): 6 + 1 + 1 + WD 2 = 10: kael 20 -> 10."""
        hatchet = Weapon(id="hatchet", weapon_damage=2, damage_type="slashing", properties=frozenset({"thrown"}))
        fight = duel(play, [6, 3, 1], defender=vesh(weapons=(hatchet,)))
        fight.attack("kael", "vesh")
        attack = declared(fight, AttackDeclared)
        fight.react("vesh", weapon="hatchet")
        events = fight.defend("kael", None)
        assert not of(payloads(fight), CatchWindowOpened)
        assert kinds(events)[-3:] == ["ReactionWindowClosed", "CostPaid", "ActionCancelled"]
        assert (as_(events[-1], ActionCancelled).action, hp(fight, "kael"), fight.state.turn_actions) \
            == (attack, 10, 0)

    def test_non_thrown_weapon_never_opens_it(self, play: Play) -> None:
        """C22: a sword hit (9 vs 2, declined) deals 6 + 2 + 4 = 12 at once: HP 8, no Catch window."""
        fight = duel(play, self.THROW, engaged=False, first_turns=False)   # round 1: vesh may not Interrupt yet
        fight.attack("kael", "vesh")
        fight.defend("vesh", None)
        assert not of(payloads(fight), CatchWindowOpened)
        assert hp(fight, "vesh") == 8


# -- random fights --------------------------------------------------------------------------------

KNIFE = Weapon(id="knife", weapon_damage=2, damage_type="piercing", properties=frozenset({"thrown"}))
GEAR = (SWORD, KNIFE, BOW)
#: Distinct AGI bonuses, so initiative ties always break on the bonus (no roll-off needed to start).
RANDOM_SIDES = {"kael": ("heroes", 3), "mira": ("heroes", 2), "vesh": ("raiders", 1), "wren": ("raiders", 0)}
NAMES = tuple(RANDOM_SIDES)
faces = st.lists(st.integers(1, 6), min_size=1, max_size=6)
COMMANDS = ("attack", "move", "disengage", "react", "pass", "defend", "catch", "end_turn", "engage",
            "apply_condition")
#: Commands made more likely by what the fight waits on, so random fights get somewhere.
LIKELY: dict[type | None, tuple[str, ...]] = {
    None: ("attack",) * 4 + ("move",) * 3 + ("end_turn",) * 2 + ("engage",) * 2,
    ActiveDefenseWindowOpened: ("defend",) * 6,
    ReactionWindowOpened: ("react",) * 4 + ("pass",) * 2,
    CatchWindowOpened: ("catch",) * 6,
}


def random_fight(opening: list[int]) -> Fight:
    """Four d6 combatants on two sides, each with a sword, a throwing knife and a bow (all in hand)."""
    sheets = [replace(sheet(cid, side, hp=12, AGI=(6, agi)), weapons=GEAR, wielding=("sword", "knife", "bow"))
              for cid, (side, agi) in RANDOM_SIDES.items()]
    return new_fight(*sheets, faces=opening, fight_id="random")


def parties(fight: Fight) -> list[str]:
    """Whoever the fight is waiting on: the turn's owner, a window's defender, responders or target."""
    found = [fight.state.turn] if fight.state.turn else []
    window = fight.waiting_for
    if isinstance(window, ActiveDefenseWindowOpened):
        found.append(window.defender)
    elif isinstance(window, ReactionWindowOpened):
        found.extend(window.responders)
    elif isinstance(window, CatchWindowOpened):
        found.append(window.target)
    return found


DEFENSES: tuple[ActiveDefense | None, ...] = (None, "dodge", "parry", "block")


def command(data: st.DataObject, fight: Fight) -> Callable[[], object]:
    """One random command by a random combatant (biased towards whoever the fight waits on)."""
    who = data.draw(st.sampled_from(NAMES + tuple(parties(fight)) * 8), label="who")
    other = data.draw(st.sampled_from(NAMES), label="other")
    weapon = data.draw(st.sampled_from((None, "sword", "knife", "bow")), label="weapon")
    kind = data.draw(st.sampled_from(COMMANDS + LIKELY.get(type(fight.waiting_for), LIKELY[None])), label="command")
    match kind:
        case "attack":
            return lambda: fight.attack(who, other, weapon=weapon)
        case "move":
            leaves = data.draw(st.lists(st.sampled_from(NAMES), max_size=2, unique=True), label="leaves")
            return lambda: fight.move(who, leaves=leaves)
        case "disengage":
            return lambda: fight.disengage(who)
        case "react":
            return lambda: fight.react(who, weapon=weapon)
        case "pass":
            return lambda: fight.pass_reaction(who)
        case "defend":
            defense = data.draw(st.sampled_from(DEFENSES), label="defense")
            return lambda: fight.defend(who, defense)
        case "catch":
            caught = data.draw(st.booleans(), label="caught")
            return lambda: fight.catch(who, caught)
        case "end_turn":
            return lambda: fight.end_turn(who)
        case "engage":
            engaged = data.draw(st.booleans(), label="engaged")
            return lambda: fight.engage(who, other, engaged=engaged)
        case _:
            condition = data.draw(st.sampled_from(("Prone", "Exhausted", "Fatigued", "Unseen") * 2
                                                  + ("Paralysed", "Incapacitated")), label="condition")
            stacks = data.draw(st.integers(1, 2), label="stacks")
            return lambda: fight.apply_condition(who, condition, stacks)


class TestRandomFights:
    @settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(data=st.data())
    def test_random_commands_keep_the_log_sound(self, data: st.DataObject) -> None:
        """§How a Single Action Resolves: any command either succeeds or raises OmenError leaving log, version
        and dice untouched; the log always replays to the live state and is in a legal order."""
        fight = random_fight(data.draw(st.lists(st.integers(1, 6), min_size=4, max_size=4), label="initiative"))
        for a, b in data.draw(st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(NAMES)), max_size=4),
                              label="engaged"):
            if a != b:
                fight.engage(a, b)
        fight.roll_initiative()
        assert fight.state.phase is Phase.ROUNDS and len(fight.state.order) == 4
        accepted = 0
        for _ in range(data.draw(st.integers(5, 30), label="steps")):
            scripted(fight).feed(data.draw(faces, label="faces"))
            run = command(data, fight)
            before, version, remaining, state = fight.events, fight.version, scripted(fight).remaining, fight.state
            try:
                run()
            except OmenError:
                assert fight.events == before and fight.version == version
                assert scripted(fight).remaining == remaining and fight.state is state
                continue
            accepted += 1
            for c in fight.state.combatants.values():
                assert 0 <= c.bonus_actions <= 2 and 0 <= c.hp <= 12
            assert fight.state.turn_actions in (0, 1) and fight.state.turn_movement in (0, 1)
        assert_legal_order(fight.events)
        assert_replays(fight)


# -- the GM calls an action off -------------------------------------------------------------------


class TestCancel:
    def test_gm_calls_off_an_attack_at_its_active_defense_window(self, play: Play) -> None:
        """The GM cancels kael's attack while vesh's Active Defense window is open (6 + 1 + 2 = 9 vs 1 + 1 = 2):
        no hit is determined, no damage, kael's Action stays spent, vesh keeps its Bonus Actions."""
        fight = duel(play, [6, 1, 1], first_turns=False)
        fight.attack("kael", "vesh")
        assert isinstance(fight.waiting_for, ActiveDefenseWindowOpened)
        events = fight.cancel("the bridge gives way")
        assert events == [ActionCancelled(action=declared(fight, AttackDeclared), reason="the bridge gives way")]
        assert fight.state.at_rest and fight.waiting_for is None and not of(payloads(fight), HitDetermined)
        assert (fight.state.turn_actions, ba(fight, "vesh"), hp(fight, "vesh")) == (0, 2, 20)

    def test_gm_calls_off_an_attack_at_its_interrupt_window_before_costs(self, play: Play) -> None:
        """C24: the Interrupt window comes before costs; called off there, kael's Action is not spent."""
        fight = duel(play, [])
        fight.attack("kael", "vesh")
        fight.cancel("kael thinks better of it")
        assert fight.state.at_rest and fight.state.turn_actions == 1 and not of(payloads(fight), CostPaid)

    def test_a_reaction_in_progress_is_not_cut_off(self, play: Play) -> None:
        """vesh's Interrupt waits on kael's Active Defense (6 + 1 + 1 = 8 vs 2): the action it answers cannot be
        called off under it; kael declines and the fight goes on."""
        fight = duel(play, [6, 1, 2], spare=None)
        fight.attack("kael", "vesh")
        fight.react("vesh")
        refused(fight, lambda: fight.cancel("no"), "cancel")
        fight.defend("kael", None)

    def test_nothing_to_call_off_at_rest(self, play: Play) -> None:
        """At rest there is no action to cancel: refused, nothing written."""
        fight = duel(play, [])
        with pytest.raises(OmenError):
            fight.cancel("nothing")


def test_ending_the_fight_calls_off_a_reaction_and_the_action_it_answers(play: Play) -> None:
    """C33: while vesh's Interrupt waits on kael's Active Defense window, the GM ends the fight: the Interrupt
    is called off first, then kael's attack, then the fight ends; nothing waits any more."""
    # vesh's Interrupt: STR 6 + FCS 1 + 1 = 8 vs kael's base RES 2: kael's window opens.
    fight = duel(play, [6, 1, 2])
    fight.attack("kael", "vesh")
    attack = declared(fight, AttackDeclared)
    fight.react("vesh")
    interrupt = last(fight, AttackDeclared).action
    events = fight.end_fight("gm")
    assert [(type(e).__name__, getattr(e, "action", None)) for e in events] == [
        ("ActionCancelled", interrupt), ("ActionCancelled", attack), ("FightEnded", None)]
    assert fight.waiting_for is None and fight.state.at_rest
