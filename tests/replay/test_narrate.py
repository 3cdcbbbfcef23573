"""Tests for omen_replay.narrate: every event type has a readable line, numbers shown term by term."""

from __future__ import annotations

import msgspec

from omen_core import CheckSpec, Fight, MemoryStore, Modifier, ScriptedDice
from omen_core.content import Ability, AbilityLibrary, decode_content
from omen_core.events import Event, RollTotal
from omen_replay.demo import run_demo
from omen_replay.narrate import describe_total, narrate
from tests.sheets import sheet


def test_describe_total_shows_every_term() -> None:
    """The roll primitive is spelled out: die, attribute bonus, skill level, each modifier, total."""
    side = RollTotal(roller="vesh", attribute="AGI", skill="Stealth", counter=1, face=6, attribute_bonus=2,
                     skill_level=3, modifiers=(Modifier(source="darkness", value=-2),), total=9)
    assert describe_total(side, "Vesh") == "Vesh rolls Stealth: 6 (die) + 2 AGI + 3 Stealth level - 2 darkness = 9"


def test_every_event_of_the_demo_is_narrated() -> None:
    """Each event of the demo gives at least one line, tagged with its seq; a command's command_issued record is
    told by the events it produced, not by a line of its own."""
    from omen_core.events import CommandIssued

    events = run_demo(MemoryStore(), clock=lambda: 0).events
    lines = list(narrate(events))
    commands = {e.seq for e in events if isinstance(e.event, CommandIssued)}
    assert commands and {line.seq for line in lines} == {e.seq for e in events} - commands


def test_names_replace_ids() -> None:
    """Combatants are called by their sheet names once they have joined."""
    fight = Fight.start(MemoryStore(), "f", dice=ScriptedDice([4]), clock=lambda: 0)
    fight.join(sheet("kael"))
    fight.static_check(CheckSpec(who="kael", attribute="STR"), 4)
    texts = [line.text for line in narrate(fight.events)]
    assert "Kael rolls STR check: 4 (die) + 0 STR = 4" in texts
    assert any("ties" in t and "C16" in t for t in texts)


def test_a_condition_applied_by_a_combatant_names_who_applied_it() -> None:
    """docs/scenarios.md: ``by`` is who applied the condition: the GM's apply_condition naming Ash is told "applied by
    Ash" (it said "applied by the GM", the reason the command records when none is given), a reason given is kept
    beside it, and a condition naming no one is still the GM's; the session log's note and explain say it too."""
    from omen_replay.explain import explain_records
    from omen_replay.render import render_records

    fight = Fight.start(MemoryStore(), "f", dice=ScriptedDice([]), clock=lambda: 0)
    fight.join(sheet("ash"))
    fight.join(sheet("bo", side="b"))
    fight.apply_condition("bo", "Prone", by="ash")
    prone = fight.version
    fight.apply_condition("ash", "Prone", reason="tripped on the ford stones", by="bo")
    fight.apply_condition("bo", "Unseen")
    texts = [line.text.strip() for line in narrate(fight.events) if " is " in line.text]
    assert texts == ["Bo is Prone: applied by Ash", "Ash is Prone: tripped on the ford stones (applied by Bo)",
                     "Bo is Unseen: applied by the GM"]
    assert f"#{prone}      Bo is Prone: applied by Ash" in render_records(fight.events)
    assert explain_records(fight.events, prone).verdicts == ("bo is Prone (1 stack, C28): applied by ash",)


def test_a_condition_from_an_attacks_branch_names_the_attack_not_a_bare_number() -> None:
    """C25: the Ember Ford fixture's Prone from the attack's branch (recorded with reason "attack 154", the attack's
    seq) is told "Brin Hollowmere is Prone: the attack at #154 (C25)" (it read "Prone: attack 154", a raw
    number)."""
    from pathlib import Path

    from omen_core.store import JsonlStore

    log = Path(__file__).resolve().parents[2] / "fixtures" / "ember-ford" / "fight.jsonl"
    texts = [line.text.strip() for line in narrate(list(JsonlStore.single(log).read("ember-ford")))]
    assert "Brin Hollowmere is Prone: the attack at #154 (C25)" in texts
    assert not any(t.endswith(": attack 154") for t in texts)


class TestPrimaryBonusLoweredByConditions:
    """C12, C28: where conditions changed the attacker's primary bonus, the narrative states the hit total's
    attribute bonus and the weapon damage's primary bonus (and a crit's extra one) as the sheet's value and the
    conditions' change, as omen explain splits them (it said one number: "1 STR", "1 bonus + 1 crit bonus")."""

    def test_a_crit_splits_the_hit_the_primary_bonus_and_the_crits(self) -> None:
        """Ash (STR +3, Fatigued x2) crits Bo with the axe (WD 4): hit 5 + 6 + 3 - 2 = 12; damage 5 + (3 - 2) +
        (3 - 2) + 4 = 11, the terms of explain's "damage (axe)"."""
        from tests.replay.test_explain import fatigued_fight

        fight = fatigued_fight(stacks=2, STR=(8, 3), FCS=(6, 2), faces=[5, 6, 2])
        texts = [line.text.strip() for line in narrate(fight.events)]
        assert "hit total 12 = 5 (primary) + 6 (FCS) + 3 STR - 2 conditions (Fatigued x2)" in texts
        assert ("axe: 11 slashing (5 die + 3 bonus - 2 conditions (Fatigued x2) + 3 crit bonus - 2 conditions "
                "(Fatigued x2) + 4 WD) = 11 to Bo's HP (C12, C13)") in texts

    def test_unarmed_only_the_crits_extra_bonus_is_split(self) -> None:
        """Unarmed, the damage has no primary bonus (C12): only the crit's extra one is split, 5 + (3 - 2) = 6."""
        from tests.replay.test_explain import fatigued_fight

        fight = fatigued_fight(stacks=2, STR=(8, 3), FCS=(6, 2), faces=[5, 6, 2], unarmed=True)
        texts = [line.text.strip() for line in narrate(fight.events)]
        assert ("unarmed: 6 crushing (5 die + 3 crit bonus - 2 conditions (Fatigued x2)) = 6 to Bo's HP (C12, C13)"
                in texts)

    def test_a_sheets_zero_that_conditions_changed_is_written(self) -> None:
        """Ember Ford, seq 145-146: Brin (STR +0, Fatigued x1) hits Vesh with the Ashwood bow: the sheet's 0 is
        written beside the -1 it became (it said "4 die - 1 conditions"), as explain lists "+0 primary bonus"."""
        from pathlib import Path

        from omen_core.events import decode_line

        fixture = Path(__file__).resolve().parents[2] / "fixtures" / "ember-ford" / "fight.jsonl"
        texts = [line.text.strip() for line in narrate(
            [decode_line(raw) for raw in fixture.read_bytes().splitlines()]) if line.seq in (145, 146)]
        assert texts[0] == "hit total 7 = 4 (primary) + 4 (FCS) + 0 STR - 1 conditions (Fatigued x1)"
        assert texts[-1] == ("Ashwood bow: 6 piercing (4 die + 0 bonus - 1 conditions (Fatigued x1) + 3 WD) - 1 armor "
                             "= 5 to Vesh the Cinder-Hand's HP (C12, C13)")

    def test_the_defenders_bonuses_are_split_too(self) -> None:
        """C11, C28: Fatigued Bo (RES +1, AGI +1) dodges Ash's axe: the defense line says the sheet's +1 RES and
        +1 AGI and the conditions' -1 apart, as the hit line does for the attacker (it read "0 RES" and "0 AGI",
        Fatigued unnamed: a tester): base 3 + (1 - 1) = 3, Dodge 4 + (1 - 1) = 4, defense 7 against hit 10."""
        from omen_core.content import Weapon
        from tests.fights import new_fight

        ash = msgspec.structs.replace(sheet("ash", STR=(8, 2)), weapons=(Weapon(id="axe", weapon_damage=4),))
        bo = msgspec.structs.replace(sheet("bo", side="b", RES=(6, 1), AGI=(6, 1)), hp=30)
        fight = new_fight(ash, bo, faces=[6, 2, 3, 4])
        fight.apply_condition("bo", "Fatigued", stacks=1)
        fight.attack("ash", "bo")
        fight.defend("bo", "dodge")
        texts = [line.text.strip() for line in narrate(fight.events)]
        assert "hit total 10 = 6 (primary) + 2 (FCS) + 2 STR" in texts
        assert ("defense 7 = 3 RES die + Defense Rating 0 (1 RES - 1 conditions (Fatigued x1) + 0 armor) + dodge 4 "
                "(4 die + 1 AGI - 1 conditions (Fatigued x1))") in texts

    def test_a_live_narrator_splits_the_hit_of_an_attack_declared_before(self) -> None:
        """omen do's narrator, given the state before the answer to the Active Defense window (the attack declared
        in an earlier command), splits the hit and the damage the answer resolves: 6 + 2 + 2 - 1 = 9, 6 + 2 - 1 + 4
        = 11 (told event by event without the state before each, it does not name the conditions)."""
        from omen_core.content import Weapon
        from omen_replay.narrate import Narrator
        from tests.fights import new_fight

        ash = msgspec.structs.replace(sheet("ash", STR=(8, 2)), weapons=(Weapon(id="axe", weapon_damage=4),))
        bo = msgspec.structs.replace(sheet("bo", side="b", RES=(6, 1)), hp=30)
        fight = new_fight(ash, bo, faces=[6, 2, 1])
        fight.apply_condition("ash", "Fatigued", stacks=1)
        fight.attack("ash", "bo")
        before, version = fight.state, fight.version
        fight.defend("bo", None)
        texts = [line.text.strip() for line in Narrator(state=before).lines(fight.events[version:])]
        assert "hit total 9 = 6 (primary) + 2 (FCS) + 2 STR - 1 conditions" in texts
        assert "axe: 11 slashing (6 die + 2 bonus - 1 conditions + 4 WD) = 11 to Bo's HP (C12, C13)" in texts


def test_every_event_type_has_a_writer() -> None:
    """The narrator has a writer for every event type of the union."""
    from omen_core.events import EVENT_TYPES
    from omen_replay.narrate import _WRITERS

    assert set(_WRITERS) == set(EVENT_TYPES)


def test_narration_never_fails_on_any_event() -> None:
    """Any single event of any type, whatever its values, narrates without raising (told on its own, as a live
    fight hands the narrator its events, and marked undone), with at least one line unless it is a command's
    record."""
    from hypothesis import given, settings

    from omen_core.events import GENESIS_HASH, CommandIssued, seal
    from omen_replay.narrate import Narrator
    from tests.strategies import events

    @settings(max_examples=300)
    @given(events)
    def check(event: Event) -> None:
        rec = seal("f", 1, 0, GENESIS_HASH, event)
        told = list(Narrator().lines([rec]))
        assert told or isinstance(event, CommandIssued)
        assert all(line.seq == 1 for line in told)
        assert [line.kind for line in Narrator().tell(rec, undone=True)] == ["undone"] * len(told)

    check()


def test_refill_at_a_skipped_turn_cites_c21() -> None:
    """A Completely Surprised combatant's refill, when its skipped first-round turn would have come, cites C21;
    a refill at the start of a turn cites C20 (the ambush fixture has both)."""
    from pathlib import Path

    from omen_core.store import JsonlStore

    path = Path(__file__).resolve().parents[2] / "fixtures" / "ambush-surprise-tiers-first-round" / "fight.jsonl"
    store = JsonlStore.single(path)
    refills = [line.text for line in narrate(store.read(store.fights()[0])) if "Bonus Actions refill" in line.text]
    assert any("Kael" in t and "(C21" in t for t in refills)
    assert any("(C20)" in t and "Kael" not in t for t in refills)


def test_a_moment_of_the_round_is_told() -> None:
    """C38: the start of a turn that an ability answers is told as a moment of its own, by the combatant's name (Ana
    hurt first by the orc's unarmed 5, so that Regeneration, a heal, is offered)."""
    import msgspec

    from tests.fights import new_fight

    ana = msgspec.structs.replace(sheet("ana"), abilities=("regeneration",))
    fight = new_fight(ana, sheet("orc", side="raiders"), faces=[5, 1, 2, 6, 1, 3])
    fight.attack("orc", "ana", unarmed=True)
    fight.defend("ana", None)
    fight.roll_initiative()
    fight.answer_decision("regeneration", "ana", "use")
    texts = [line.text for line in narrate(fight.events)]
    assert "The start of Ana's turn: abilities answer it (C38)" in texts


def test_a_reroll_names_the_die_as_route_damage_counts_dice() -> None:
    """C39: Lucky Strikes rolls Ana's primary 1 again; the narrative says which die it was in words (Ana's hit
    primary d6, which showed 1: "roll 4" alone was a number the reader meets nowhere else, found by a tester), then
    the die from 0 (as route_damage and the event's ``die`` count) and the roll by its seq (it said "roll 4", its
    counter, where every other reference is a seq: a rules tester); the session log's card says the face the reroll
    replaced beside the one that counts."""
    import msgspec

    from omen_core.events import DiceRolled
    from tests.fights import new_fight

    ana = msgspec.structs.replace(sheet("ana"), abilities=("lucky_strikes",))
    fight = new_fight(ana, sheet("orc", side="raiders"), faces=[1, 5, 4, 2, 3, 3, 3, 3])
    fight.attack("ana", "orc", unarmed=True)
    reroll = next(r.event for r in fight.events if isinstance(r.event, DiceRolled) and r.event.purpose == "reroll")
    hit_at = next(r.seq for r in fight.events if isinstance(r.event, DiceRolled) and r.event.counter == reroll.rerolls)
    texts = [line.text for line in narrate(fight.events)]
    assert reroll.die == 0 and any(f"(rerolls Ana's hit primary d6, which showed 1: die 0 of the roll at #{hit_at}, "
                                   "dice counted from 0" in t for t in texts), texts
    from omen_replay.cards import Card, entries

    fight.defend("orc", None)  # the hit is determined (and the card told) once the window closes
    hit = next(r for c in entries(fight.events)[0] if isinstance(c, Card) for r in c.rolls if r.name == "hit")
    assert hit.terms[0].die == "d6, rerolled from 1" and hit.terms[0].value == reroll.dice[0].face


def test_flat_damage_is_told_without_a_die_of_zero() -> None:
    """A flat amount an ability deals (Hellish Rebuke's kin, C25) is told as its terms: ``3 flat``, not ``0 (dice) +
    3 flat``; damage with dice still shows them."""
    thorns = decode_content('[abilities.thorns]\nname = "Thorns"\nuse = "trigger"\n'
                            'trigger = { moment = "attack.damaged", owner = "target" }\n'
                            'effects = [{ kind = "damage", to = "target", flat = 3, damage_type = "piercing" }]\n',
                            AbilityLibrary, fmt="toml").get("thorns")
    assert isinstance(thorns, Ability)
    fight = Fight.start(MemoryStore(), "t", dice=ScriptedDice([5, 1, 2]), clock=lambda: 0)
    fight.join(msgspec.structs.replace(sheet("ana"), abilities=(thorns,)))
    fight.join(sheet("orc", side="raiders"))
    fight.attack("orc", "ana", unarmed=True)
    fight.defend("ana", None)
    fight.answer_decision("thorns", "ana", "use")
    told = "\n".join(line.text for line in narrate(fight.events))
    assert "Thorns: 3 piercing (3 flat)" in told and "0 (dice)" not in told
    assert "unarmed: 5 crushing (5 die)" in told


def test_an_encircled_claim_that_gives_no_bonus_is_not_told_as_encircling() -> None:
    """C26 (t29): 3 attackers against 2 defenders is not 2 to 1: the attack is told as not encircling, with no
    bonus (it said "encircling (3 vs 2)", found by a tester); 4 against 2 is encircling, +min(6, 2 x 2) = +4."""
    from tests.fights import new_fight

    fight = new_fight(sheet("ash", "north"), sheet("bo", "south"), *(sheet(f"n{i}", "north") for i in range(3)),
                      sheet("s1", "south"), faces=[1, 1, 1, 1, 1, 1])  # C26 counts combatants in the fight
    fight.attack("ash", "bo", unarmed=True, encircled=(3, 2))
    fight.defend("bo", None)
    fight.attack("ash", "bo", unarmed=True, encircled=(4, 2))
    told = [line.text for line in narrate(fight.events) if line.kind == "header" and "attacks" in line.text]
    assert told == ["Ash attacks Bo unarmed (unarmed, not encircling: 3 vs 2 is not 2 to 1, no bonus (C26))",
                    "Ash attacks Bo unarmed (unarmed, encircling (4 vs 2))"]


def test_a_dodge_is_told_without_a_rating() -> None:
    """§Active Defense: a Dodge is AGI die + AGI bonus; the defense line tells its die and bonus, no "0 rating"
    (found by a tester): 1 RES die + Defense Rating 0 + dodge 3 (1 die + 2 AGI) = 4."""
    from tests.fights import new_fight

    fight = new_fight(sheet("ash", "north", STR=(8, 4)), sheet("bo", "south", AGI=(8, 2)), faces=[4, 2, 1, 1])
    fight.attack("ash", "bo", unarmed=True)
    fight.defend("bo", "dodge")
    told = [line.text for line in narrate(fight.events) if line.text.startswith("  defense ")]
    assert told == ["  defense 4 = 1 RES die + Defense Rating 0 (0 RES + 0 armor) + dodge 3 (1 die + 2 AGI)"]


def test_bonus_actions_refilled_as_the_rounds_begin_cite_c20_not_c21() -> None:
    """C20: Ana Dodges the orc's attack before initiative (2 -> 1 Bonus Actions); when round 1 begins her Bonus
    Actions refill "as everyone begins the rounds", not "when the skipped turn would have come" (C21: nobody is
    surprised here). The orc's 6 + 6 = 12 beats her base RES 1; her Dodge d6 2 + 0 is not enough."""
    from tests.fights import new_fight

    fight = new_fight(sheet("orc", side="raiders"), sheet("ana"), faces=[6, 6, 1, 2, 6, 1])
    fight.attack("orc", "ana", unarmed=True)
    fight.defend("ana", "dodge")
    fight.roll_initiative()
    texts = [line.text for line in narrate(fight.events)]
    said = [t for t in texts if "Bonus Actions refill" in t]
    assert said and all("C20: everyone begins the rounds with full Bonus Actions" in t for t in said), said


def test_a_condition_applied_again_at_its_cap_is_told_as_renewed() -> None:
    """C28, C40 (docs/rulings.md): Prone (max_stacks 1) applied to Ana again adds no stack and renews it: the line
    says so, not "Ana is Prone" as if it began."""
    from tests.fights import new_fight

    fight = new_fight(sheet("ana"))
    fight.apply_condition("ana", "Prone", reason="tripped")
    fight.apply_condition("ana", "Prone", reason="tripped again")
    texts = [line.text.strip() for line in narrate(fight.events)]
    assert "Ana is Prone: tripped" in texts
    assert "Ana's Prone is renewed (at its most stacks: none added, its duration starts again): tripped again" \
        in texts, texts


def test_stacks_past_a_conditions_most_are_said_not_added() -> None:
    """C28: Exhausted (max_stacks 5 in the core ruleset) given 6 stacks lands with 5, and the line says 1 of those
    given was not added (it said "Ana is Exhausted (5 stacks)" alone: found by a tester)."""
    from tests.fights import new_fight

    fight = new_fight(sheet("ana"))
    fight.apply_condition("ana", "Exhausted", stacks=6)
    texts = [line.text.strip() for line in narrate(fight.events)]
    assert "Ana is Exhausted (5 stacks) (its most: 5 of the 6 stacks given added): applied by the GM" in texts, texts


def test_a_negative_defense_term_reads_as_a_subtraction() -> None:
    """C11, C28: Ana Exposed (a house condition: `modifiers = { defense = -2 }`) defends: her Defense Rating's
    terms read "0 RES + 0 armor - 2 Exposed", never "+ -2" (found by a tester)."""
    from omen_core.content import Ruleset, decode_content, load_ruleset

    core = load_ruleset()
    exposed = decode_content('name = "house"\n[conditions.Exposed]\nmodifiers = { defense = -2 }\n', Ruleset,
                             fmt="toml").conditions["Exposed"]
    house = msgspec.structs.replace(core, conditions={**core.conditions, "Exposed": exposed})
    fight = Fight.start(MemoryStore(), "f", dice=ScriptedDice([6, 6, 1]), clock=lambda: 0, ruleset=house)
    fight.join(sheet("orc", side="raiders"))
    fight.join(sheet("ana"))
    fight.apply_condition("ana", "Exposed")
    fight.attack("orc", "ana", unarmed=True)
    fight.defend("ana", None)
    line = next(t.text for t in narrate(fight.events) if "Defense Rating" in t.text)
    assert "+ -" not in line and "- 2 Exposed" in line, line


def test_damage_spilling_past_will_cites_its_rules_once() -> None:
    """C31: damage taken on Will with more than the Will left says where it goes and cites C12, C13 and C31 in one
    parenthesis (it read "... to HP (C31) (C12, C13)"); with no Will left, all of it is said to go to HP (it read
    "to Kael's WILL, 0 of it": found by a tester)."""
    from omen_core.events import DamageResolved, DamageTerms
    from omen_replay.narrate import _damage, _Names

    names = _Names()
    names.names["kael"] = "Kael"
    event = DamageResolved(action=5, target="kael", damage_type="fire", source="Flame Burst",
                           terms=DamageTerms(dice=7, raw=7), steps=(), final=7, resource="will", overflow=3)
    assert [text for _, text in _damage(event, names)] == [
        "  Flame Burst: 7 fire (7 die) = 7 to Kael's WILL, 4 of it, and 3 beyond the Will left to HP (C12, C13, C31)"]
    spent = msgspec.structs.replace(event, overflow=7)  # no Will left at all: none of it goes to Will
    assert [text for _, text in _damage(spent, names)] == [
        "  Flame Burst: 7 fire (7 die) = 7 to Kael's HP (converted to Will, but no Will is left: all of it to HP) "
        "(C12, C13, C31)"]
    # outside any action: a condition's damage as it ticks cites C25, C40 (C12 is an attack's: a tester), a
    # deferred cost's C41
    tick = msgspec.structs.replace(event, action=None, source="Burning", resource="hp", overflow=0)
    assert [text for _, text in _damage(tick, names)] == ["  Burning: 7 fire (7 die) = 7 to Kael's HP (C25, C40, C13)"]
    owed = msgspec.structs.replace(tick, source="Blood Price's deferred cost (C41)")
    assert [text for _, text in _damage(owed, names)] == [
        "  Blood Price's deferred cost (C41): 7 fire (7 die) = 7 to Kael's HP (C41, C13)"]


def test_a_consequences_damage_of_two_dice_names_each_die() -> None:
    """C25: Flame Burst's own 2d6 (3 and 4) is told "7 fire (3 + 4 (2d6))" (it said "(7 die)")."""
    from omen_core.commands import UseAbility
    from tests.fights import new_fight

    ana = msgspec.structs.replace(sheet("ana"), abilities=("flame_burst",))
    fight = new_fight(sheet("orc", side="raiders"), ana, faces=[1, 2, 3, 4])
    fight.execute(UseAbility(who="ana", ability="flame_burst", target="orc"))
    assert [line.text for line in narrate(fight.events) if "fire" in line.text] == [
        "  Flame Burst: 7 fire (3 + 4 (2d6)) = 7 to Orc's HP (C12, C13)"]


def _crit_fight(faces: list[int], dodge: bool) -> Fight:
    """Ash's unarmed blow on Bo, whose armor (5) lifts his defense but not his RES portion (C7, C11)."""
    from omen_core.content import Armor
    from tests.fights import new_fight

    bo = msgspec.structs.replace(sheet("bo", side="b"), armor=Armor(rating=5))
    fight = new_fight(sheet("ash"), bo, faces=faces)
    fight.attack("ash", "bo", unarmed=True)
    if dodge:
        fight.defend("bo", "dodge")
    return fight


def test_a_plain_miss_is_no_crit_and_a_dodged_hit_cancels_the_crit() -> None:
    """C7 (a crit matters only if the attack hits; an Active Defense that turns the hit into a miss cancels it):
    Ash's 1 + 4 = 5 against Bo's 1 + 5 armor = 6 misses, no window (C8), though FCS 4 > RES 1: "no crit: the attack
    missed" (it said "crit cancelled by the miss"); 6 + 5 = 11 beats 6, Bo Dodges 6 (12) and it misses: the crit
    (5 > 1) is cancelled by the Active Defense. The story, explain (C7 cited once) and the card say the same."""
    from omen_core.events import HitDetermined
    from omen_replay.cards import Card, entries
    from omen_replay.explain import explain_records

    for faces, dodge, said, why in (
            ([1, 4, 1], False, "no crit: the attack missed", "a crit matters only if the attack hits"),
            ([6, 5, 1, 6], True, "crit cancelled by the Active Defense",
             "an Active Defense that turns a hit into a miss cancels the crit")):
        fight = _crit_fight(faces, dodge)
        hit = next(r for r in fight.events if isinstance(r.event, HitDetermined))
        told = [line.text for line in narrate(fight.events) if line.seq == hit.seq]
        fcs, res = faces[1], faces[2]
        assert told[-1].endswith(f"MISS; crit check: FCS {fcs} vs RES {res} \u2192 {said} (C7)"), told
        verdicts = explain_records(fight.events, hit.seq).verdicts
        assert f"crit: FCS portion {fcs} vs RES portion {res}: {said} (C7: {why})" in verdicts
        assert sum(v.count("C7") for v in verdicts) == 1
        card = next(e for e in entries(fight.events)[0] if isinstance(e, Card) and e.kind == "attack")
        assert [v.label for v in card.verdicts] == ["MISS", said]


def test_a_hit_on_one_at_0_hp_shows_hp_0_to_0_in_the_story_explain_and_the_card() -> None:
    """C28, C36: Bo, 3 HP, is hit unarmed for 5 (6 against 1, declined: HP 3 -> 0, Dying), then hit again at 0 HP
    (no base defense die, C10): 4 + 1 = 5 against his Defense Rating 0, 4 crushing; the engine records no change of
    HP, and the story, explain and the card say "HP 0 -> 0" as after every other hit (they said nothing)."""
    from omen_core.events import DamageResolved
    from omen_replay.cards import Card, entries
    from omen_replay.explain import explain_records
    from tests.fights import new_fight

    fight = new_fight(sheet("ash"), sheet("bo", side="b", hp=3), faces=[5, 1, 1, 4, 1])
    fight.attack("ash", "bo", unarmed=True)
    fight.defend("bo", None)
    fight.attack("ash", "bo", unarmed=True)
    first, second = [r for r in fight.events if isinstance(r.event, DamageResolved)]
    assert (first.as_(DamageResolved).final, second.as_(DamageResolved).final) == (5, 4)
    told = {line.seq: line.text for line in narrate(fight.events) if "HP" in line.text and "\u2192" in line.text}
    assert list(told.values()) == ["  Bo: HP 3 \u2192 0", "  Bo: HP 0 \u2192 0"]
    assert min(told) == first.seq + 1 and max(told) == second.seq
    second_attack = second.as_(DamageResolved).action
    assert second_attack is not None
    verdicts = explain_records(fight.events, second_attack).verdicts
    assert verdicts[-2:] == ("4 crushing damage to bo's HP", "bo: HP 0 -> 0")
    cards = [e for e in entries(fight.events)[0] if isinstance(e, Card) and e.kind == "attack"]
    assert [[(r.who, r.before, r.after) for r in c.resources] for c in cards] == [[("bo", 3, 0)], [("bo", 0, 0)]]


def test_standing_up_is_told_as_standing_up() -> None:
    """C20, C23: Prone Kael standing up on his turn is told as standing up (his Movement Action, leaving no one's
    reach), not as a move that "completes the move"; a move of his after it is still a move."""
    from tests.test_options import stood_then_moved

    told = [line.text for line in narrate(stood_then_moved().events)]
    assert "Kael stands up from Prone (a Movement Action, C20)" in told
    assert "  (standing up leaves no one's reach: no Attack of Opportunity, C23)" in told
    assert [t for t in told if "moves" in t or "completes the move" in t] == [
        "Kael moves", "  (Kael completes the move)"]


def test_a_dying_combatants_turn_that_ended_by_itself_is_told_so() -> None:
    """C36 (docs/rulings.md, "At 0 HP: what Dying takes away"): Burning takes Vesh to 0 HP as its turn starts and
    its turn ends by itself, told so (it read "(Vesh ends the turn)", though Vesh gave no end_turn); Kael's own
    end_turn is still "Kael ends the turn"."""
    from tests.replay.test_explain import _burning_to_zero

    told = [line.text for line in narrate(_burning_to_zero().events)]
    assert "  (Vesh's turn ends by itself: at 0 HP, Dying: a combatant takes no more of its turn (C36))" in told
    assert "  (Vesh ends the turn)" not in told and "  (Kael ends the turn)" in told


def test_one_ambusher_lies_in_wait_and_two_lie() -> None:
    """The ambush's header agrees with its ambushers: one "lies in wait", two "lie in wait" (found by a tester)."""
    for ambushers, said in ((("vesh",), "Ambush! Vesh lies in wait for Kael"),
                            (("vesh", "skarn"), "Ambush! Vesh, Skarn lie in wait for Kael")):
        fight = Fight.start(MemoryStore(), "f", dice=ScriptedDice([]), clock=lambda: 0)
        for who, side in (("kael", "a"), ("vesh", "b"), ("skarn", "b")):
            fight.join(sheet(who, side=side))
        fight.ambush(list(ambushers), ["kael"], difficulty=10, dice=[3])
        assert said in [line.text for line in narrate(fight.events)]


def test_a_turn_its_owner_ended_is_not_told_as_ended_by_itself_when_an_answer_to_its_end_downs_it() -> None:
    """C36, C38: Kael's end_turn opens the turn.end moment; Kael answers with Burnout (5 fire to itself: 5 HP -> 0,
    Dying) and the turn ends in that answer's batch: Kael ended it, so it is "(Kael ends the turn)", not "ends by
    itself" (found by a tester); a Dying combatant's turn that ends with no end_turn of its own still is."""
    from msgspec.structs import replace

    from omen_core.commands import AnswerDecision

    burnout = decode_content(
        '[abilities.burnout]\nname = "Burnout"\nuse = "trigger"\ntrigger = { moment = "turn.end", owner = "self" }\n'
        'effects = [{ kind = "damage", to = "actor", flat = 5, damage_type = "fire" }]\n',
        AbilityLibrary, source="burnout.toml", fmt="toml").get("burnout")
    assert burnout is not None
    fight = Fight.start(MemoryStore(), "f", dice=ScriptedDice([6, 1]), clock=lambda: 0)
    fight.join(replace(sheet("kael", hp=5), abilities=(burnout,)))
    fight.join(sheet("vesh", "raiders"))
    fight.roll_initiative()
    fight.end_turn("kael")
    fight.execute(AnswerDecision(decision="burnout", who="kael", choice="use"))
    ending = fight.state.ending  # Kael's side is down as his turn ends: no turn begins after it (C33)
    assert fight.state.combatants["kael"].dying and ending is not None and ending.side == "heroes"
    told = [line.text for line in narrate(fight.events)]
    assert "  (Kael ends the turn)" in told and not [t for t in told if "ends by itself" in t]


def test_a_combatant_raised_from_dying_is_said_once_to_be_no_longer_dying() -> None:
    """C36: Ana, Dying at 0 HP, is healed 2 by Bram's Guardian's Vow: the narration says "Ana is no longer Dying:
    raised above 0 HP by Guardian's Vow (C36)", not "... by Guardian's Vow: no longer Dying (C36)" as the event's
    reason has it (said twice: found by a tester)."""
    from tests.fights import new_fight
    from tests.test_abilities import having

    fight = new_fight(msgspec.structs.replace(sheet("ana"), hp=4), having(sheet("bram"), "guardians_vow"),
                      sheet("orc", side="raiders"), faces=[5, 1, 2])
    fight.engage("bram", "ana")
    fight.attack("orc", "ana", unarmed=True)
    fight.defend("ana", None)
    fight.answer_decision("guardians_vow", "bram", "use")
    said = [line.text.strip() for line in narrate(fight.events) if "no longer Dying" in line.text]
    assert said == ["Ana is no longer Dying: raised above 0 HP by Guardian's Vow (C36)"], said


def test_a_rolls_bonus_that_conditions_lowered_is_told_apart() -> None:
    """C28, C1: Kael (AGI d6 +1) Exhausted twice (every attribute bonus -1 a stack) rolls initiative 5: "5 (die) + 1
    AGI - 2 conditions (Exhausted x2) = 4", the sheet's +1 and the conditions' -2 apart, and which conditions, as the
    attack's hit total says them (it read "+ -1 AGI": a tester; a save's said "- 2 conditions" where the attack's
    named Hexed x2: another)."""
    fight = Fight.start(MemoryStore(), "f", dice=ScriptedDice([5, 1]), clock=lambda: 0)
    fight.join(sheet("kael", AGI=(6, 1)))
    fight.join(sheet("vesh", "raiders"))
    fight.apply_condition("kael", "Exhausted", 2)
    fight.roll_initiative()
    said = [line.text.strip() for line in narrate(fight.events) if line.text.strip().startswith("initiative: Kael")]
    assert said == ["initiative: Kael rolls AGI check: 5 (die) + 1 AGI - 2 conditions (Exhausted x2) = 4"], said


def test_a_tie_the_agi_bonus_settles_is_told() -> None:
    """C19: Kael (AGI +2) rolls 4 and Vesh (AGI +1) rolls 5: both 6, and the higher AGI bonus puts Kael first; the
    narration says so before the order ("Kael and Vesh tied at 6: Kael goes first, on the higher AGI bonus (+2
    against +1, C19)"; only omen explain said it: a tester)."""
    fight = Fight.start(MemoryStore(), "f", dice=ScriptedDice([4, 5]), clock=lambda: 0)
    fight.join(sheet("kael", AGI=(6, 2)))
    fight.join(sheet("vesh", "raiders", AGI=(6, 1)))
    fight.roll_initiative()
    texts = [line.text.strip() for line in narrate(fight.events)]
    said = "Kael and Vesh tied at 6: Kael goes first, on the higher AGI bonus (+2 against +1, C19)"
    assert texts.index(said) + 1 == texts.index("Initiative order: Kael, Vesh"), texts


def test_a_reaction_windows_cost_is_the_rulesets() -> None:
    """C22: under house rules where an Interrupt costs 1 Bonus Action, the window Vesh's attack opens for Kael and
    Brin is told as costing 1 (it said "2 Bonus Actions" whatever the ruleset: a house-rules tester)."""
    from omen_core.content import CORE_RULESET, ReactionCosts
    from tests.fights import interrupt_window

    fight = interrupt_window(msgspec.structs.replace(CORE_RULESET, name="house",
                                                     reaction_costs=ReactionCosts(interrupt=1)))
    told = [line.text for line in narrate(fight.events)]
    assert any(text.strip().startswith("Interrupt (1 Bonus Action, C24) window for ") for text in told), told
    assert not any("2 Bonus Actions" in text for text in told), told


def test_a_house_ruleset_named_core_is_said_not_to_be_the_shipped_one() -> None:
    """docs/content.md: a ruleset copied from the core one, a condition added, and still named "core" is said not to
    be the shipped core ruleset where the fight begins (it read "under ruleset 'core'", as the shipped one does: a
    tester); the shipped one is named alone."""
    from omen_core.content import CORE_RULESET, ConditionDef

    house = msgspec.structs.replace(CORE_RULESET, conditions={**CORE_RULESET.conditions, "Marked": ConditionDef()})
    for ruleset, said in ((CORE_RULESET, "begins under ruleset 'core' with scripted dice"),
                          (house, "begins under ruleset 'core' (not the core ruleset this omen ships: a ruleset of its "
                                  "own under that name) with scripted dice")):
        fight = Fight.start(MemoryStore(), "f", dice=ScriptedDice([]), ruleset=ruleset, clock=lambda: 0)
        assert narrate(fight.events)[0].text == f"Fight {said}"


def test_a_tie_of_four_says_where_each_stands() -> None:
    """C19: Ana (+2), Bo (+1), Cy (+1) and Orc (+0) all total 6; the AGI bonus puts Ana first and Orc last, and Bo
    and Cy, foes, roll off (6 + 1 = 7 against 1 + 1 = 2): the line says every one's place by the bonus and that Bo
    and Cy were settled otherwise (it said "Ana and Orc tied at 6: Ana goes first", and nothing of Bo and Cy: a
    rules tester)."""
    fight = Fight.start(MemoryStore(), "f", dice=ScriptedDice([4, 5, 5, 6, 6, 1]), clock=lambda: 0)
    for who, side, bonus in (("ana", "heroes", 2), ("bo", "heroes", 1), ("cy", "raiders", 1), ("orc", "raiders", 0)):
        fight.join(sheet(who, side, AGI=(6, bonus)))
    fight.roll_initiative()
    assert fight.state.order == ("ana", "bo", "cy", "orc")
    said = [line.text.strip() for line in narrate(fight.events) if "tied at 6" in line.text]
    assert said == ["Ana, Bo, Cy and Orc tied at 6: by the higher AGI bonus, Ana (+2), then Bo and Cy (+1, in the "
                    "order their tie was settled), then Orc (+0) (C19)"], said


def test_worn_armor_that_does_not_apply_says_why() -> None:
    """C11, C13: Bo wears mundane armor (rating 2) and Ash strikes with a fire torch (not a spell): the defense line
    says the armor's 0 and why, as explain does (it read "0 armor" with no why: a rules tester); against a sword
    the armor's 2 stands alone."""
    from omen_core.content import Armor, Weapon
    from tests.fights import new_fight

    bo = msgspec.structs.replace(sheet("bo", side="b", RES=(6, 1)), armor=Armor(rating=2))
    for weapon, said in ((Weapon(id="torch", damage_type="fire"), "(1 RES + 0 armor (its armor does not apply: "
                                                                  "mundane armor against a spell or a non-physical "
                                                                  "attack, C13))"),
                         (Weapon(id="sword"), "(1 RES + 2 armor)")):
        ash = msgspec.structs.replace(sheet("ash", STR=(8, 2)), weapons=(weapon,))
        fight = new_fight(ash, bo, faces=[1, 1, 1])
        fight.attack("ash", "bo")
        if weapon.id == "torch":  # 4 against 1 + 1: Bo's Active Defense window, declined (C8)
            fight.defend("bo", None)
        line = next(line.text.strip() for line in narrate(fight.events) if line.text.strip().startswith("defense"))
        assert line.endswith(said), line


def test_an_incoming_multiplier_shows_its_arithmetic() -> None:
    """C13 step 5, C34: Quill's ward halves incoming damage (multiply 0.5, round down once). Morrow's greataxe deals
    13 slashing, 2 of it stopped by Quill's armor: 11 x 1/2 = 5.5, rounded down to 5, so the step is - 6 and the
    line says why (it read "- 6 incoming" alone, where explain shows the fraction)."""
    from pathlib import Path

    from omen_core.events import decode_line

    log = Path(__file__).resolve().parents[2] / "fixtures" / "damage-reduction-resistance-armor-will" / "fight.jsonl"
    records = [decode_line(line) for line in log.read_bytes().splitlines()]
    told = [line.text.strip() for line in narrate(records) if "incoming" in line.text]
    assert told[0] == ("Greataxe: 13 slashing (6 die + 2 bonus + 5 WD) - 2 armor - 6 incoming (11 x 1/2, rounded "
                       "down) = 5 to Quill Ashgrove's HP (C12, C13)"), told


def test_an_attack_and_a_parry_name_the_weapon_as_the_sheet_does() -> None:
    """The demo's Vesh attacks with his "Curved knife" and Brin parries with her "Short blade" (the ember-ford
    fixture, the demo's log): the lines name each weapon by its sheet's name, as the damage line does (they said
    "with knife", "with shortblade", the ids, beside "Curved knife: ..." in the damage: a tester)."""
    from pathlib import Path

    from omen_core.events import decode_line

    log = Path(__file__).resolve().parents[2] / "fixtures" / "ember-ford" / "fight.jsonl"
    events = [decode_line(line) for line in log.read_bytes().splitlines()]
    said = {line.seq: line.text.strip() for line in narrate(events) if "with" in line.text}
    assert said[93] == "Vesh the Cinder-Hand attacks Brin Hollowmere with Curved knife (melee)"
    assert said[131] == "Brin Hollowmere parries with Short blade"
