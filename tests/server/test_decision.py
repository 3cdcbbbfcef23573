"""Tests for omen_server.decision: the facts of the open decision point, as one seat's decision box shows them."""

from __future__ import annotations

import msgspec

from omen_core import Modifier
from omen_core.commands import CheckSpec, UseAbility
from omen_core.engine import Fight
from omen_core.options import options
from omen_server.decision import decision_facts, needed_face
from omen_server.views import Sight
from tests.fights import new_fight
from tests.sheets import sheet

GM = Sight(kind="gm")


def facts(fight: Fight) -> list[str]:
    """The GM's decision-box lines for the decision open now."""
    offered = options(fight.state)
    return decision_facts(fight.state, offered.waiting, list(offered.offers), GM).facts


def test_a_decision_during_an_attack_names_the_attack() -> None:
    """C38: Hellish Rebuke, offered once the orc's hit (5 + 1 = 6 > 2, 5 damage) has landed on Ana, is answered
    "during Orc's attack on Ana"."""
    ana = msgspec.structs.replace(sheet("ana"), abilities=("hellish_rebuke",))
    fight = new_fight(ana, sheet("orc", side="raiders"), faces=[5, 1, 2])
    fight.attack("orc", "ana", unarmed=True)
    fight.defend("ana", None)
    assert "Ana may answer, during Orc's attack on Ana" in facts(fight)


def test_a_decision_during_a_save_names_the_saver_and_the_caller() -> None:
    """C15, C38: Stubborn (a heal: offered only to one it would heal), offered once Ana, hurt by the orc's blow (5 +
    1 = 6 > 2, 5 damage), fails her STR 2 against the orc's Shove (5), is answered "during their own save, called
    by Orc" (Ana's own: "Ana may answer, during Ana's save" read oddly, a tester), not during an anonymous
    action."""
    ana = msgspec.structs.replace(sheet("ana"), abilities=("stubborn",))
    orc = msgspec.structs.replace(sheet("orc", side="raiders"), abilities=("shove",))
    fight = new_fight(ana, orc, faces=[5, 1, 2, 2, 5])
    fight.attack("orc", "ana", unarmed=True)
    fight.defend("ana", None)
    fight.engage("orc", "ana")
    fight.execute(UseAbility(who="orc", ability="shove", target="ana"))
    assert "Ana may answer, during their own save, called by Orc" in facts(fight)


def test_a_decision_on_ones_own_attack_says_their_own() -> None:
    """C38: Steady Aim (owner: the attacker, at attack.rolled) is answered "during their own attack on Orc" (it
    read "Ana may answer, during Ana's attack on Orc": a tester)."""
    ana = msgspec.structs.replace(sheet("ana"), abilities=("steady_aim",))
    fight = new_fight(ana, sheet("orc", side="raiders"), faces=[1, 1, 6])
    fight.engage("ana", "orc")
    fight.attack("ana", "orc", unarmed=True)
    assert "Ana may answer, during their own attack on Orc" in facts(fight), facts(fight)

def test_a_decision_on_a_condition_applied_says_what_the_action_applied() -> None:
    """C38 "a condition applied": Quick Recovery, offered once Ana's failed save against the orc's Shove (2
    against 5) has knocked her Prone, says the save applied Prone to Ana."""
    ana = msgspec.structs.replace(sheet("ana"), abilities=("quick_recovery",))
    orc = msgspec.structs.replace(sheet("orc", side="raiders"), abilities=("shove",))
    fight = new_fight(ana, orc, faces=[2, 5])
    fight.engage("orc", "ana")
    fight.execute(UseAbility(who="orc", ability="shove", target="ana"))
    said = facts(fight)
    assert "Ana may answer, during their own save, called by Orc" in said and "it applied Prone to Ana" in said


def test_a_decision_at_a_contest_names_whose_contest_and_how_it_went() -> None:
    """C16, C38: an ability answering a check: the orc's Stealth 3 against Ana's Perception 3 (a tie goes to the
    defender): the orc is asked "during Orc's contest against Ana (failed)"."""
    lesson = {"id": "lesson", "name": "Lesson", "use": "trigger",
              "trigger": {"moment": "check.resolved", "owner": "self", "outcome": "failure"},
              "effects": [{"kind": "condition", "to": "actor", "condition": "Fatigued"}]}
    orc = msgspec.convert({**msgspec.to_builtins(sheet("orc", side="raiders")), "abilities": [lesson]},
                          type(sheet("orc")))
    fight = new_fight(sheet("ana"), orc, faces=[3, 3])
    fight.contest(CheckSpec(who="orc", skill="Stealth"), CheckSpec(who="ana", skill="Perception"))
    assert "Orc may answer, during Orc's contest against Ana (failed)" in facts(fight)


def test_the_face_an_active_defense_die_needs() -> None:
    """§Hit Determination (the defender wins ties): against a hit total of 9, a defense of 4 with +2 added needs 3
    or more on a d6 (4 + 2 + 3 = 9 ties); against 20 it would need 16; against 3 any face will do."""
    assert needed_face(9, 4, 2, 6) == "turns the hit on a 3 or more on the d6"
    assert needed_face(20, 4, 0, 6) == "cannot turn the hit (it would need 16 on a d6)"
    assert needed_face(3, 4, 0, 6) == "turns the hit whatever the die shows"


def test_an_initiative_tie_is_told_only_to_a_seat_that_sees_every_tied_combatant() -> None:
    """C19: Skarn and a raider the GM hides tie on initiative (4 and 4; Kael 1): the GM's decision box names both;
    a player's says nothing of the tie (a tie of Skarn alone would tell of the hidden one: the initiative_tied event
    is withheld from it whole), nor does a seat that sees none of the tied."""
    lurker = msgspec.structs.replace(sheet("skarn"), id="zqtie", name="ZQTIENAME")
    fight = new_fight(sheet("kael"), sheet("skarn", side="raiders"),
                      msgspec.structs.replace(lurker, side="raiders"), faces=[1, 4, 4])
    fight.roll_initiative()
    offered = options(fight.state)
    assert offered.waiting is not None and offered.waiting.kind == "initiative_tie"
    said = decision_facts(fight.state, offered.waiting, list(offered.offers), GM).facts
    assert any("tied: Skarn, ZQTIENAME" in line for line in said), said
    player = Sight(kind="player", own=frozenset({"kael"}), hidden=frozenset({"zqtie"}))
    said = decision_facts(fight.state, offered.waiting, [], player).facts
    assert not any("tied" in line or "zqtie" in line or "ZQTIE" in line for line in said), said
    blind = Sight(kind="spectator", hidden=frozenset({"skarn", "zqtie"}))
    assert not any("tied" in line for line in decision_facts(fight.state, offered.waiting, [], blind).facts)


def test_an_active_defense_against_a_hidden_attacker_shows_no_totals() -> None:
    """C8, seat secrecy: the hidden Skarn's unarmed 5 + 4 = 9 beats Kael's base defense 2: Kael's player's decision
    box says an attack hits without its total or Kael's base defense (both withheld in her events), and the decline
    says only "it hits"; each die's needed face stays (the odds the options give); another player's box has no total
    either; the GM's box shows the numbers."""
    fight = new_fight(sheet("kael"), sheet("skarn", side="raiders"), faces=[5, 4, 2])
    fight.attack("skarn", "kael", unarmed=True)
    offered = options(fight.state)
    player = Sight(kind="player", own=frozenset({"kael"}), hidden=frozenset({"skarn"}))
    told = decision_facts(fight.state, offered.waiting, list(offered.offers), player)
    said = " ".join(told.facts) + " ".join(f"{c.adds} {c.turns}" for c in told.choices.values())
    assert "someone's attack hits Kael's base defense" in said and "9" not in said and "stays" not in said
    assert any("7 on a d6" in c.turns for c in told.choices.values()) and "Kael has 2 Bonus Actions" in told.facts
    bob = Sight(kind="player", own=frozenset({"brin"}), hidden=frozenset({"skarn"}))
    assert decision_facts(fight.state, offered.waiting, [], bob).facts == ["someone's attack hits Kael's base defense"]
    gm = decision_facts(fight.state, offered.waiting, list(offered.offers), GM).facts
    assert any("Skarn's attack 9 against Kael's defense 2" in line for line in gm), gm


def test_an_active_defense_shows_the_hit_totals_terms_to_the_gm_and_the_attacker_not_the_defender() -> None:
    """C5, C26, C27: Skarn's unarmed attack on Kael with high ground and Encircled 2 vs 1, 5 + 4 = 9 on the dice
    and + 2 + 2 claimed: the GM's decision box (and Skarn's player's) says "the hit total 13 = 5 primary + 4 FCS + 2
    high ground (C27) + 2 encircled, 2 vs 1 (C26)", and the damage modifier claimed, "on a hit the damage adds + 2
    charge", so the claims are checked before Kael spends a Bonus Action
    (it said the total alone: a tester); Kael's player, who does not play Skarn, is not told Skarn's terms, nor is
    Skarn's player where Kael is hidden from it (a prone target's term would tell of the hidden target)."""
    fight = new_fight(sheet("kael"), sheet("skarn", side="raiders"), sheet("vesh", side="raiders"), faces=[5, 4, 2])
    fight.attack("skarn", "kael", unarmed=True, high_ground=True, encircled=(2, 1),  # C26: Skarn and Vesh
                 damage_modifiers=(Modifier(source="charge", value=2),))
    offered = options(fight.state)
    said = "the hit total 13 = 5 primary + 4 FCS + 2 high ground (C27) + 2 encircled, 2 vs 1 (C26)"
    for sight, shown in ((GM, True), (Sight(kind="player", own=frozenset({"skarn"})), True),
                         (Sight(kind="player", own=frozenset({"kael"})), False),
                         (Sight(kind="player", own=frozenset({"skarn"}), hidden=frozenset({"kael"})), False)):
        told = decision_facts(fight.state, offered.waiting, list(offered.offers), sight).facts
        assert (said in told) is shown, (sight, told)
        assert ("on a hit the damage adds + 2 charge" in told) is shown, (sight, told)


def test_the_face_to_turn_a_hit_takes_the_article_of_its_sound() -> None:
    """"turns the hit on an 8" (eight, eleven, eighteen take "an"), "on a 3", as the tester read it wrong."""
    assert needed_face(15, 2, 5, 8) == "turns the hit on an 8 or more on the d8"
    assert needed_face(20, 2, 7, 12) == "turns the hit on an 11 or more on the d12"
    assert needed_face(15, 9, 3, 8) == "turns the hit on a 3 or more on the d8"


def test_a_decision_inside_an_attack_tells_the_gm_the_totals_it_turns_on() -> None:
    """C5, C38: Warding Word is asked of Bram once the orc's 4 + 1 = 5 would hit Ana's base defense 3 + 0 (no
    Active Defense yet): the GM's box says so in numbers; Bram's player, who does not own Ana, is not told her
    defense (a defender's dice are its owner's and the GM's)."""
    from tests.test_abilities import having

    fight = new_fight(having(sheet("bram"), "warding_word"), sheet("ana"), sheet("orc", side="raiders"),
                      faces=[4, 1, 3])
    fight.engage("bram", "ana")
    fight.attack("orc", "ana", unarmed=True)
    said = "Orc's hit total 5 against Ana's defense 3: a hit, as it stands (the defender wins ties, §Hit Determination)"
    assert said in facts(fight)
    offered = options(fight.state)
    bram = Sight(kind="player", own=frozenset({"bram"}))
    assert not any("defense 3" in line for line in decision_facts(fight.state, offered.waiting, [], bram).facts)


def test_a_decision_inside_an_attack_tells_each_seat_the_totals_it_may_see() -> None:
    """C5, C38, seat secrecy: Warding Word is asked of Bram while the orc's 4 + 1 = 5 stands against Ana's base
    defense 3 (hook ``attack.rolled``: before the hit is determined): Bram's player reads the hit total alone (Ana's
    defense is her owner's and the GM's: ``base_defense`` is ``own:defender``), Ana's player the whole line, a seat
    that does not see the orc neither; Bram's player is told the attack hits as it stands, which the offer of a
    defense bonus tells it anyway (a player asked to reroll was not told why: a tester); and Bram's player reads
    the 2 Bonus Actions Bram has against the answer's 1 (found by a GM tester: a player's box showed no numbers)."""
    from tests.test_abilities import having

    fight = new_fight(having(sheet("bram"), "warding_word"), sheet("ana"), sheet("orc", side="raiders"),
                      faces=[4, 1, 3])
    fight.engage("bram", "ana")
    fight.attack("orc", "ana", unarmed=True)
    offered = options(fight.state)

    def told(sight: Sight) -> tuple[list[str], list[str]]:
        said = decision_facts(fight.state, offered.waiting, list(offered.offers), sight)
        return said.facts, [c.turns for c in said.choices.values()]

    bram, bram_turns = told(Sight(kind="player", own=frozenset({"bram"})))
    assert bram[1:] == ["Orc's hit total 5, as it stands; Ana's defense is its owner's and the GM's to see",
                        "as it stands the attack hits: Warding Word is offered only then (C38)"]
    assert bram_turns == ["2 of 2 Bonus Actions left now; 1 left after it, enough for an Active Defense", ""]
    ana, ana_turns = told(Sight(kind="player", own=frozenset({"ana"})))
    assert ana[1:] == ["Orc's hit total 5 against Ana's defense 3: a hit, as it stands (the defender wins ties, "
                       "§Hit Determination)"] and ana_turns == ["", ""]
    blind, _ = told(Sight(kind="player", own=frozenset({"bram"}), hidden=frozenset({"orc"})))
    assert blind == ["Bram may answer, during someone's attack on Ana"]


def test_a_decision_after_the_hit_is_determined_shows_both_totals_to_every_seat_that_sees_them() -> None:
    """C38, §Hit Determination: Hellish Rebuke is offered once the orc's 5 + 1 = 6 has hit Ana's defense 2: the
    hit is determined (``hit_determined``'s totals are public), so a spectator reads both totals too."""
    ana = msgspec.structs.replace(sheet("ana"), abilities=("hellish_rebuke",))
    fight = new_fight(ana, sheet("orc", side="raiders"), faces=[5, 1, 2])
    fight.attack("orc", "ana", unarmed=True)
    fight.defend("ana", None)
    offered = options(fight.state)
    said = decision_facts(fight.state, offered.waiting, [], Sight(kind="spectator")).facts
    assert said[1:] == ["Orc's hit total 6 against Ana's defense 2: a hit, determined (the defender wins ties, "
                        "§Hit Determination)"]


def test_letting_an_attack_of_opportunity_pass_lets_the_move_complete() -> None:
    """C23: Orc leaves Ana's reach on its turn; Ana's box says letting the window pass is free and the move completes
    (it said "the Action goes on", an Interrupt's words; found by a tester on the table page)."""
    fight = new_fight(sheet("ana"), sheet("orc", side="raiders"), faces=[6, 1])
    fight.engage("ana", "orc")
    fight.roll_initiative()
    fight.end_turn("ana")
    fight.move("orc", leaves=["ana"])
    offered = options(fight.state)
    found = decision_facts(fight.state, offered.waiting, list(offered.offers), GM)
    assert found.facts == ["Orc moves out of reach: an Attack of Opportunity strikes before the move completes (C23)"]
    assert (found.choices[("pass_reaction", "ana", 0)].adds, found.choices[("pass_reaction", "ana", 0)].turns) == (
        "free", "the move completes")


def test_two_responders_strikes_each_say_their_own_numbers() -> None:
    """C24: Brin (STR d4 +0) and Kael (STR d8 +2), both beside Vesh and past their first turns, may each Interrupt
    Vesh's attack: each one's Strike says its own hit and damage dice (the GM's box put the second responder's
    numbers on the first's buttons, its answers keyed by command and index alone: a tester)."""
    fight = new_fight(sheet("kael", STR=(8, 2)), sheet("brin", AGI=(10, 1), STR=(4, 0)), sheet("vesh", side="raiders"),
                      faces=[6, 5, 1])
    fight.engage("vesh", "kael")
    fight.engage("vesh", "brin")
    fight.roll_initiative()  # Brin, Kael, Vesh
    fight.end_turn("brin")
    fight.end_turn("kael")
    fight.attack("vesh", "kael", unarmed=True)
    offered = options(fight.state)
    assert offered.waiting is not None and offered.waiting.who == ("brin", "kael")
    found = decision_facts(fight.state, offered.waiting, list(offered.offers), GM)
    assert found.choices[("react", "brin", 0)].adds == \
        "hit d4 STR + d6 FCS + 0 bonus; damage the same d4 (unarmed, C12)"
    assert found.choices[("react", "kael", 0)].adds == \
        "hit d8 STR + d6 FCS + 2 bonus; damage the same d8 (unarmed, C12)"


def test_an_active_defense_says_what_conditions_took_off_its_bonus() -> None:
    """C28, C9: Kael (AGI d6 +1 on his sheet) is Fatigued (-1 to his attribute bonuses) when Skarn's unarmed 5 + 4
    hits his base defense: the Dodge says "+ d6 AGI + 1 AGI bonus − 1 conditions (Fatigued x1)", the sheet's
    value and the change, the conditions named, as explain says it (it read "+ 0 AGI bonus" beside a sheet's +1:
    testers)."""
    fight = new_fight(sheet("kael", AGI=(6, 1)), sheet("skarn", side="raiders"), faces=[5, 4, 2])
    fight.apply_condition("kael", "Fatigued")
    fight.attack("skarn", "kael", unarmed=True)
    offered = options(fight.state)
    told = decision_facts(fight.state, offered.waiting, list(offered.offers), GM)
    dodge = next(c for (command, _who, _i), c in told.choices.items() if c.adds.startswith("+ d6 AGI"))
    assert dodge.adds == "+ d6 AGI + 1 AGI bonus − 1 conditions (Fatigued x1)", dodge.adds
