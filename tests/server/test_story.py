"""Tests for omen_server.story: the table page's log cards, read from a seat's own view of the events."""

from __future__ import annotations

from pathlib import Path

import msgspec

from omen_core import Fight, MemoryStore, SeededDice
from omen_server.story import story
from omen_server.views import Sight, seen_event
from tests.sheets import sheet

SEED, FRESH = bytes(range(32)), bytes(range(1, 33))


def cards_for(fight: Fight, sight: Sight) -> list[tuple[str, list[str]]]:
    """Each card's headline and lines, as ``sight`` sees the fight."""
    names = {who: c.sheet.name for who, c in fight.state.combatants.items()}
    return [(card.headline, card.lines) for card in story((seen_event(r, sight) for r in fight.events), names)]


def test_a_reveal_mid_fight_says_the_seed_is_spent_to_every_seat() -> None:
    """C42: the card of a reveal in a fight that goes on says which dice the revealed seed checks (those rolled
    under it) and that the dice from here on come from a fresh seed; the GM's names the seed itself (the GM's page
    showed it nowhere; found by a tester), a player's reads the same without it (the seed is the GM's until the
    log is published: docs/rulings.md), and says so: it said the dice "can be checked" though its seat has no seed
    to check them with (found by a tester)."""
    fight = Fight.start(MemoryStore(), "c42", dice=SeededDice(SEED, [FRESH]), clock=lambda: 0,
                        combatants=[sheet("kael"), sheet("vesh", side="raiders")])
    fight.reveal_seed()
    gm = cards_for(fight, Sight(kind="gm"))
    player = cards_for(fight, Sight(kind="player", own=frozenset({"kael"}), sides=frozenset({"wardens", "raiders"})))
    spent = ("The revealed seed is spent (C42): the dice from here on come from a fresh seed, committed to now and "
             "revealed in its turn")
    assert gm[-1] == ("The seed", [f"The seed is revealed ({SEED.hex()}): every seeded die rolled under it can be "
                                   "checked", spent])
    assert player[-1] == ("The seed", ["The seed is revealed to the GM: every seeded die rolled under it can be "
                                       "checked with the log once the GM publishes it (the seed comes with it)", spent])
    assert SEED.hex() not in str(player)


def test_a_reveal_after_the_end_commits_to_nothing() -> None:
    """C42: revealed once the fight is over, the seed's card says only that it is revealed."""
    fight = Fight.start(MemoryStore(), "c42", dice=SeededDice(SEED), clock=lambda: 0,
                        combatants=[sheet("kael"), sheet("vesh", side="raiders")])
    fight.end_fight("gm")
    fight.reveal_seed()
    assert cards_for(fight, Sight(kind="gm"))[-1] == (
        "The seed", [f"The seed is revealed ({SEED.hex()}): every seeded die rolled under it can be checked"])


def test_a_save_called_by_an_ability_another_seat_owns_is_told_without_its_name() -> None:
    """C15, docs/abilities.md "At the table": the orc's Shove calls for Ana's STR save; the GM's card names it, a
    player who plays Ana (not the orc) reads the call without the ability's name, never "against a save"."""
    import msgspec

    from omen_core.commands import UseAbility

    orc = msgspec.structs.replace(sheet("orc", side="raiders"), abilities=("shove",))
    fight = Fight.start(MemoryStore(), "shove", dice=SeededDice(SEED), clock=lambda: 0,
                        combatants=[sheet("ana"), orc])
    fight.engage("orc", "ana")
    fight.execute(UseAbility(who="orc", ability="shove", target="ana"))
    gm = cards_for(fight, Sight(kind="gm"))
    player = cards_for(fight, Sight(kind="player", own=frozenset({"ana"}), sides=frozenset({"heroes", "raiders"})))
    assert gm[-1][0] == "Orc calls for Ana's STR save against Shove"
    assert player[-1][0] == "Orc calls for Ana's STR save"


def test_an_initiative_of_a_lone_die_says_its_term_as_the_others_do() -> None:
    """The GM's initiative card gives every total its terms, a lone die's too (AGI bonus 0): "Skarn: initiative 3
    (3 AGI die)", not the number alone."""
    from omen_core import ManualDice
    from omen_core.commands import RollInitiative

    fight = Fight.start(MemoryStore(), "init", dice=ManualDice(), clock=lambda: 0,
                        combatants=[sheet("kael"), sheet("skarn", side="raiders")])
    fight.execute(RollInitiative(dice=(6, 3)))
    lines = cards_for(fight, Sight(kind="gm"))[-1][1]
    assert "Skarn: initiative 3 (3 AGI die)" in lines and "Kael: initiative 6 (6 AGI die)" in lines


def test_an_abilitys_damage_names_its_own_dice_not_the_primary_dice() -> None:
    """C12, C38: Ana's unarmed 5 + 6 = 11 crits the orc (FCS 6 > RES 2); her Flame Lash's own d6 (4) burns him:
    its line says "4 on Flame Lash's d6" (found by a GM tester: it read "on the primary dice"), and the blow's
    own damage still "5 on the primary die"."""
    from tests.fights import new_fight
    from tests.test_abilities import having

    fight = new_fight(having(sheet("ana"), "flame_lash"), sheet("orc", side="raiders"), faces=[5, 6, 2, 4])
    fight.attack("ana", "orc", unarmed=True)
    fight.defend("orc", None)
    fight.answer_decision("flame_lash", "ana", "use")
    lines = cards_for(fight, Sight(kind="gm"))[-1][1]
    assert "4 fire damage to Orc's HP (4 on Flame Lash's d6)" in lines
    assert "5 crushing damage to Orc's HP (5 on the primary die)" in lines


def test_a_heal_that_restores_nothing_says_whom_and_the_hp_line() -> None:
    """C36 (never above the sheet's HP): Ana's Healing Word on herself at her full 20 HP rolls 3 and changes no HP:
    her card says so, "Ana's HP 20 → 20", to the GM and to Ana's player (who see her sheet), without the number to
    the orc's player (found by a GM tester: the card said the roll alone, and Ana's player healed her at full HP)."""
    from omen_core.commands import UseAbility
    from tests.fights import new_fight
    from tests.test_abilities import having

    fight = new_fight(having(sheet("ana"), "healing_word"), sheet("orc", side="raiders"), faces=[3])
    fight.execute(UseAbility(who="ana", ability="healing_word", target="ana"))
    said = "Ana's HP 20 \u2192 20: at the sheet's HP already, the heal restores none"
    assert cards_for(fight, Sight(kind="gm"))[-1] == ("Ana uses Healing Word",
                                                      ["Ana's healing: 3 (d6) + 1 flat = 4", said])
    assert cards_for(fight, Sight(kind="player", own=frozenset({"ana"})))[-1][1][-1] == said
    assert cards_for(fight, Sight(kind="player", own=frozenset({"orc"})))[-1][1] == [
        "Ana's HP: at the sheet's HP already, the heal restores none"]


def test_a_stand_up_is_told_as_standing_up_not_as_a_move() -> None:
    """C20, C28: Prone Kael standing up on his turn is a card "Kael stands up from Prone (a Movement Action)",
    verdict STOOD UP (it read "Kael moves", "has moved", MOVED, as narration and explain no longer do); a move of
    his later is still "moves" and MOVED, to the GM and to a spectator alike."""
    from tests.test_options import stood_then_moved

    fight = stood_then_moved()
    names = {who: c.sheet.name for who, c in fight.state.combatants.items()}
    for sight in (Sight(kind="gm"), Sight(kind="spectator")):
        cards = story((seen_event(r, sight) for r in fight.events), names)
        moves = [(c.headline, c.verdict) for c in cards if c.verdict in ("STOOD UP", "MOVED")]
        assert moves == [(f"{names['kael']} stands up from Prone (a Movement Action)", "STOOD UP"),
                         (f"{names['kael']} moves", "MOVED")], moves


def _drain(heal: str, cost: int = 0) -> Fight:
    """Ana (20 HP) pays ``cost`` HP and uses Drain on the orc: 1 fire to it, then ``heal`` (a heal's TOML table)
    to her, as docs/abilities.md writes abilities (C37)."""
    import msgspec

    from omen_core.commands import UseAbility
    from omen_core.content import Ability, decode_content
    from tests.fights import new_fight

    paid = f"cost = {{ hp = {cost} }}\n" if cost else ""
    drain = msgspec.structs.replace(decode_content(
        f'name = "Drain"\nuse = "free"\n{paid}effects = [{{ kind = "damage", to = "target", flat = 1, '
        f'damage_type = "fire" }}, {heal}]\n', Ability, fmt="toml"), id="drain")
    fight = new_fight(msgspec.structs.replace(sheet("ana"), abilities=(drain,)), sheet("orc", side="raiders"),
                      faces=[3])
    fight.execute(UseAbility(who="ana", ability="drain", target="orc"))
    return fight


def test_an_abilitys_hp_or_will_cost_is_a_line_of_its_card_to_those_who_see_that_pool() -> None:
    """C41: Ana pays 2 HP for Drain: her card says "Ana spends 2 HP (Drain)" to the GM and to her player, as the
    session log says it (the live card said nothing, and a GM saw 8 Will become 6 unexplained: a tester); the orc's
    player reads "Ana spends 2 HP" where the HP display is exact, and nothing of it where it is banded or hidden (her
    HP is not shown to that seat: the amount was public, a reviewer), nor what it was for."""
    fight = _drain('{ kind = "heal", to = "actor", flat = 2 }', cost=2)
    for sight in (Sight(kind="gm"), Sight(kind="player", own=frozenset({"ana"}))):
        assert "Ana spends 2 HP (Drain)" in cards_for(fight, sight)[-1][1]
    lines = cards_for(fight, Sight(kind="player", own=frozenset({"orc"}), hp="exact"))[-1][1]
    assert "Ana spends 2 HP" in lines and not any("Drain" in line for line in lines), lines
    for hp in ("banded", "hidden"):
        lines = cards_for(fight, Sight(kind="player", own=frozenset({"orc"}), hp=hp))[-1][1]
        assert not any("spends" in line or "Drain" in line for line in lines), lines


def test_a_will_cost_is_said_to_the_owner_alone() -> None:
    """C41: a Will cost (Ana's 2 Will for Drain) is on her card to the GM and her player; to the orc's player and a
    spectator, whatever the HP display, nothing of it (Will is its owner's, as the combatant's Will is)."""
    import msgspec

    from omen_core.commands import UseAbility
    from omen_core.content import Ability, decode_content
    from tests.fights import new_fight

    drain = msgspec.structs.replace(decode_content(
        'name = "Drain"\nuse = "free"\ncost = { will = 2 }\neffects = [{ kind = "damage", to = "target", flat = 1, '
        'damage_type = "fire" }]\n', Ability, fmt="toml"), id="drain")
    fight = new_fight(msgspec.structs.replace(sheet("ana"), abilities=(drain,)), sheet("orc", side="raiders"))
    fight.execute(UseAbility(who="ana", ability="drain", target="orc"))
    for sight in (Sight(kind="gm"), Sight(kind="player", own=frozenset({"ana"}))):
        assert "Ana spends 2 Will (Drain)" in cards_for(fight, sight)[-1][1]
    for sight in (Sight(kind="player", own=frozenset({"orc"}), hp="exact"), Sight(kind="spectator", hp="exact")):
        assert not any("Will" in line for line in cards_for(fight, sight)[-1][1])


class TestAHealThatRestoresNothing:
    """C36, C37: a heal's line names its own recipient (``to``), flat heals included, as omen_replay/explain.py
    does."""

    GM, ANA, ORC = Sight(kind="gm"), Sight(kind="player", own=frozenset({"ana"})), \
        Sight(kind="player", own=frozenset({"orc"}))
    NONE = "Ana's HP 20 \u2192 20: at the sheet's HP already, the heal restores none"

    def test_a_flat_heal_to_its_user_names_her_not_the_target(self) -> None:
        """Drain burns the orc for 1 and heals Ana herself (``to = "actor"``) a flat 2 at her full 20 HP: her card
        says she is at the sheet's HP already, to the GM and to her player (it said nothing: a flat heal rolls no
        die, and the line named the ability's target, the orc); the orc's player, who does not see her sheet, is
        told nothing of a heal it cannot know of."""
        fight = _drain('{ kind = "heal", to = "actor", flat = 2 }')
        for sight in (self.GM, self.ANA):
            assert cards_for(fight, sight)[-1][1][-1] == self.NONE
        assert not any("heal" in line for line in cards_for(fight, self.ORC)[-1][1])

    def test_a_flat_heal_that_restores_something_says_no_more(self) -> None:
        """Ana pays 2 HP first (20 -> 18): Drain's flat 2 brings her back to 20, and no line says it restored
        none."""
        fight = _drain('{ kind = "heal", to = "actor", flat = 2 }', cost=2)
        lines = cards_for(fight, self.GM)[-1][1]
        assert "Ana's HP: 18 \u2192 20" in lines and not any("restores none" in line for line in lines)

    def test_a_rolled_heal_to_its_user_names_her_and_to_another_seat_names_no_one(self) -> None:
        """Drain heals Ana herself 1d4 (3) at her full HP: her card names her, not the orc (the ability's target,
        whose HP it said was at the sheet's); the orc's player, who sees the roll but not the sheet that says whom
        it heals, reads that the one it heals was at the sheet's HP, naming no one."""
        fight = _drain('{ kind = "heal", to = "actor", dice = { count = 1, die = "d4" } }')
        for sight in (self.GM, self.ANA):
            assert cards_for(fight, sight)[-1][1][-1] == self.NONE
        assert cards_for(fight, self.ORC)[-1][1][-1] == \
            "the heal restores none: the one it heals is at the sheet's HP already"


def test_a_rolled_heals_flat_amount_is_said_with_its_die_where_the_seat_sees_the_sheet() -> None:
    """C37: Ana pays 4 HP (20 -> 16) and Drain heals her 1d4 + 1: her roll of 3 and the flat 1 make 4, and her
    card says so, "Ana's healing: 3 (d4) + 1 flat = 4", before "Ana's HP: 16 -> 20", to the GM and to her player (it
    said "3 (d4)" and then 4 HP more, the +1 nowhere: a tester); the orc's player, who does not see her sheet, is
    told of no flat amount."""
    fight = _drain('{ kind = "heal", to = "actor", flat = 1, dice = { count = 1, die = "d4" } }', cost=4)
    for sight in (TestAHealThatRestoresNothing.GM, TestAHealThatRestoresNothing.ANA):
        lines = cards_for(fight, sight)[-1][1]
        said = lines.index("Ana's healing: 3 (d4) + 1 flat = 4")
        assert lines[said + 1] == "Ana's HP: 16 \u2192 20", lines
    orc = cards_for(fight, TestAHealThatRestoresNothing.ORC)[-1][1]
    assert not any("flat" in line for line in orc), orc


def test_an_abilitys_answer_is_said_by_the_abilitys_name_where_the_seat_sees_it() -> None:
    """C38: hit by the orc a second time, Ana uses Second Wind: the line of her answer reads "Ana uses Second
    Wind" to the GM and to her player (it read "Ana: use (Once per fight, ...)", the choice's id and the summary);
    to the orc's player, who is not shown the decision's name, "Ana may answer with something this seat is not
    shown" and "Ana uses it" (they read "Ana may answer a decision" and "Ana: use": found by a tester)."""
    from tests.fights import new_fight
    from tests.test_abilities import having

    fight = new_fight(sheet("orc", side="raiders"), having(sheet("ana"), "second_wind"),
                      faces=[5, 1, 2, 5, 1, 2, 3])
    for _ in range(2):  # at her full HP she is not asked (a heal would do nothing, C38): hit twice
        fight.attack("orc", "ana", unarmed=True)
        fight.defend("ana", None)
    fight.answer_decision("second_wind", "ana", "use")
    for sight in (Sight(kind="gm"), Sight(kind="player", own=frozenset({"ana"}))):
        lines = cards_for(fight, sight)[-1][1]
        assert "Ana uses Second Wind" in lines and not any(line.startswith("Ana: use") for line in lines)
    orcs = cards_for(fight, Sight(kind="player", own=frozenset({"orc"})))[-1][1]
    assert "Ana may answer with something this seat is not shown" in orcs and "Ana uses it" in orcs
    assert not any("Second Wind" in line or line.startswith("Ana: ") for line in orcs)


def test_the_engines_note_on_an_end_it_made_is_not_called_the_gms() -> None:
    """C33: Vesh, the raiders' only combatant, flees (leave_fight) and the fight ends by itself: the end's card gives
    the engine's note as such; the GM's own end_fight note is still "The GM's note" (the card said so of both;
    found by a tester). A side's yield names the side left standing, the heroes (a spectator read only who lost);
    the engine's end says "still standing" already, and is not told twice."""
    fight = Fight.start(MemoryStore(), "end", dice=SeededDice(SEED), clock=lambda: 0,
                        combatants=[sheet("kael"), sheet("vesh", side="raiders")])
    fight.roll_initiative()
    fight.leave_fight("vesh", "fled")
    lines = [line for headline, card in cards_for(fight, Sight(kind="gm")) for line in (headline, *card)]
    assert "The fight is over (fled: raiders): every combatant of raiders is down; heroes still standing" in lines
    other = Fight.start(MemoryStore(), "end", dice=SeededDice(SEED), clock=lambda: 0,
                        combatants=[sheet("kael"), sheet("vesh", side="raiders")])
    other.end_fight("yielded", side="raiders", note="Vesh throws down the knife")
    lines = [line for headline, card in cards_for(other, Sight(kind="gm")) for line in (headline, *card)]
    assert "The fight is over, heroes won (yielded: raiders). The GM's note: Vesh throws down the knife" in lines
    unseen = Sight(kind="spectator", hidden=frozenset({"kael"}), sides=frozenset({"raiders"}))
    ends = [line for headline, card in cards_for(other, unseen) for line in (headline, *card) if "is over" in line]
    assert ends == ["The fight is over (yielded: raiders)"]  # the heroes unseen: no side named as the winner


def test_a_hit_on_a_dying_combatant_says_its_hp_stays_at_0() -> None:
    """C36: a cinder flask's 4 fire takes Vesh (4 HP) to 0, Dying; Kael's unarmed hit on Vesh then lands with no
    HP change recorded (HP cannot go below 0), and its card says so rather than stopping at the damage (found by a
    tester: a crit on a Dying foe left no HP line). Kael's player reads it too: Dying is public."""
    from omen_core import ScriptedDice
    from omen_core.content import DealDamage, SaveEffect

    fire = SaveEffect(name="cinder flask", save="AGI", against="INT", action_cost=0,
                      on_failure=(DealDamage(flat=4, damage_type="fire"),))
    fight = Fight.start(MemoryStore(), "dying", dice=ScriptedDice([1, 6, 6, 1]), clock=lambda: 0,
                        combatants=[sheet("kael", STR=(6, 0)), sheet("vesh", side="raiders", hp=4)])
    fight.call_save("kael", "vesh", fire)
    assert fight.state.combatants["vesh"].dying
    fight.attack("kael", "vesh", unarmed=True)
    for sight in (Sight(kind="gm"), Sight(kind="player", own=frozenset({"kael"}),
                                          sides=frozenset({"heroes", "raiders"}))):
        last = cards_for(fight, sight)[-1][1]
        assert [line for line in last if "damage to Vesh's HP" in line][-1].endswith(
            "; Vesh is Dying: its HP stays at 0 (C36)"), last


def _settled_deferred(name: str, owed: str) -> Fight:
    """Kael (first) uses his ability ``name`` (a Bonus Action on himself: 2 HP healed now, and ``owed``, a deferred
    effect written in TOML, at the start of his next turn, C41), ends his turn, and Vesh ends hers: it settles."""
    from omen_core import ScriptedDice
    from omen_core.commands import UseAbility
    from omen_core.content import AbilityLibrary, decode_content

    ability = decode_content(
        f'[abilities.owing]\nname = "{name}"\nuse = "bonus_action"\ntarget = "self"\n'
        'effects = [{ kind = "heal", to = "actor", flat = 2 }]\n'
        f'deferred = {{ at = "start_of_next_turn", effects = [{owed}] }}\n', AbilityLibrary, source="owing.toml",
        fmt="toml").get("owing")
    kael = msgspec.structs.replace(sheet("kael", AGI=(20, 0), hp=20), abilities=(ability,))
    fight = Fight.start(MemoryStore(), "owed", dice=ScriptedDice([20, 1]), clock=lambda: 0,
                        combatants=[kael, sheet("vesh", side="raiders")])
    fight.roll_initiative()
    fight.execute(UseAbility(who="kael", ability="owing", target="kael"))
    fight.end_turn("kael")
    fight.end_turn("vesh")
    return fight


def test_a_deferred_cost_is_said_when_owed_and_named_when_it_settles() -> None:
    """C41: Kael uses Blood Price (free now: 2 HP healed; 3 necrotic owed at the start of his next turn). His card
    says what is owed (it said only the use: found by a tester), and the damage, when it settles, names Blood
    Price's deferred cost; Vesh's player reads neither the owing nor the ability's name (C37: it is Kael's),
    the damage's source "an ability's deferred cost (C41)"."""
    fight = _settled_deferred("Blood Price", '{ kind = "damage", to = "actor", flat = 3, damage_type = "necrotic" }')
    gm = [line for _h, lines in cards_for(fight, Sight(kind="gm")) for line in lines]
    assert "owed: 3 necrotic damage at the start of Kael's next turn (C41)" in gm, gm
    assert any(line.startswith("Blood Price's deferred cost (C41): 3 necrotic damage to Kael's HP") for line in gm)
    vesh = [line for _h, lines in cards_for(fight, Sight(kind="player", own=frozenset({"vesh"}),
                                                         sides=frozenset({"heroes", "raiders"}),
                                                         secrets=("owing", "Blood Price")))
            for line in lines]
    assert not [line for line in vesh if "owed" in line or "Blood Price" in line], vesh
    assert any(line.startswith("an ability's deferred cost (C41): ") for line in vesh), vesh


def test_an_end_of_turn_save_stays_under_its_command_when_the_next_turn_opens_a_moment() -> None:
    """C38, C40: Kael ends his turn and saves against Poisoned (RES 6 - 1 = 5 against Vesh's INT 1 + 0 = 1: it
    clears); Vesh's turn starts and its Vigil answers the start: the save is on the card of Kael's end_turn, not
    under the headline of the start of Vesh's turn (found by a tester), which is a card of its own."""
    from pathlib import Path

    from omen_core import ScriptedDice
    from omen_core.content import AbilityLibrary, decode_content, load_ruleset

    vigil = decode_content('[abilities.vigil]\nname = "Vigil"\nuse = "trigger"\n'
                           'trigger = { moment = "turn.start", owner = "self" }\n'
                           'effects = [{ kind = "condition", to = "actor", condition = "Marked" }]\n',
                           AbilityLibrary, source="vigil.toml", fmt="toml").get("vigil")
    ruleset = load_ruleset(Path(__file__).parents[1] / "data" / "c40-ruleset.toml")
    fight = Fight.start(MemoryStore(), "save", dice=ScriptedDice([20, 1, 6, 1]), clock=lambda: 0, ruleset=ruleset,
                        combatants=[sheet("kael", AGI=(20, 0)),
                                    msgspec.structs.replace(sheet("vesh", side="raiders"), abilities=(vigil,))])
    fight.roll_initiative()
    fight.apply_condition("kael", "Poisoned", by="vesh")
    fight.end_turn("kael")
    cards = cards_for(fight, Sight(kind="gm"))
    saved = next((head, lines) for head, lines in cards if any("SAVED" in line or "save" in line for line in lines))
    assert "start of" not in saved[0] and any("no longer Poisoned" in line for line in saved[1]), cards[-3:]
    assert ("save against Poisoned (save ends, C40): 5 (6 RES die − 1 conditions) against 1 (1 INT die): SAVED"
            in saved[1])
    assert cards[-1][0].startswith("The start of Vesh's turn"), cards[-1]


def test_a_bonus_lowered_by_a_condition_says_the_sheets_and_the_conditions_apart() -> None:
    """C28: Kael (RES d6 +1) is Poisoned (every attribute bonus -1, a save ends it: RES against Vesh's INT) and
    fails its save at his turn's end, RES 1 + 0 against INT 5 + 2: his seat's card says "1 RES die + 1 RES bonus
    - 1 conditions", the sheet's +1 and the condition's -1 apart (it read "+ 0 RES bonus" against a sheet saying
    +1, Poisoned folded in: a tester); Vesh's terms, whose sheet Kael's seat does not hold, are not said."""
    from omen_core import ScriptedDice
    from omen_core.content import load_ruleset

    ruleset = load_ruleset(Path(__file__).parents[1] / "data" / "c40-ruleset.toml")
    fight = Fight.start(MemoryStore(), "poison", dice=ScriptedDice([6, 1, 1, 5]), clock=lambda: 0, ruleset=ruleset,
                        combatants=[sheet("kael", RES=(6, 1)), sheet("vesh", side="raiders", INT=(8, 2))])
    fight.roll_initiative()
    fight.apply_condition("kael", "Poisoned", by="vesh")
    fight.end_turn("kael")
    kael = Sight(kind="player", own=frozenset({"kael"}), sides=frozenset({"heroes", "raiders"}))
    lines = [line for _h, said in cards_for(fight, kael) for line in said if line.startswith("save")]
    assert lines == ["save against Poisoned (save ends, C40): 1 (1 RES die + 1 RES bonus \u2212 1 conditions) "
                     "against 7: FAILED"], lines
    # its turn's card is badged as the save's, not "FAILED End of turn: Kael", which read as if the turn failed
    (ended,) = [c for c in story((seen_event(r, kael) for r in fight.events), {"kael": "Kael", "vesh": "Vesh"})
                if c.headline == "End of turn: Kael"]
    assert ended.verdict == "SAVE FAILED"


def test_a_cancelled_actions_card_says_the_answer_used_during_the_interrupt() -> None:
    """C24, C38: Kael's Interrupt hits Vesh (6 + 6 against 1), Vesh's Thorns answers the damage (2 piercing back),
    and Vesh's attack is cancelled: its card tells the Interrupt's outcome with "Vesh uses Thorns" before the 2
    piercing (the damage stood there with no word of whose answer it was: a tester)."""
    from omen_core import ManualDice
    from omen_core.content import Ability, decode_content

    thorns = decode_content('id = "thorns"\nname = "Thorns"\nuse = "trigger"\n'
                            'trigger = { moment = "attack.damaged", owner = "target" }\n'
                            'effects = [{ kind = "damage", flat = 2, damage_type = "piercing", to = "target" }]\n',
                            Ability, fmt="toml")
    fight = Fight.start(MemoryStore(), "thorns", dice=ManualDice(), clock=lambda: 0, combatants=[
        sheet("kael", AGI=(20, 0)), msgspec.structs.replace(sheet("vesh", side="raiders"), abilities=(thorns,))])
    fight.roll_initiative(dice=[20, 1])
    fight.engage("kael", "vesh")
    fight.end_turn("kael")
    fight.attack("vesh", "kael", unarmed=True)
    fight.react("kael", unarmed=True, dice=[6, 6, 1])
    fight.defend("vesh", None)
    fight.answer_decision("thorns", "vesh", "use")
    (lines,) = [said for headline, said in cards_for(fight, Sight(kind="gm")) if headline == "Vesh attacks Kael"]
    assert lines[lines.index("Vesh uses Thorns") + 1] == "2 piercing damage to Kael's HP (2 flat)", lines
    assert lines[-1] == "the action is cancelled: Kael's Interrupt hit (C24); its Action is still spent"


def test_two_interrupts_at_one_window_are_told_in_the_order_they_came() -> None:
    """C24: Vesh attacks Kael; Kael, then Brin answer the one Interrupt window, each missing (2 against 6): the
    attack's card tells Kael's Interrupt (#28) before Brin's (#36), right after the window (it told Brin's
    first: a tester)."""
    from tests.fights import interrupt_window

    fight = interrupt_window()
    fight.react("kael", unarmed=True, dice=[1, 1, 6])
    fight.react("brin", unarmed=True, dice=[1, 1, 6, 1, 1, 6])
    (lines,) = [said for headline, said in cards_for(fight, Sight(kind="gm")) if headline == "Vesh attacks Kael"]
    window = lines.index("Interrupt window for Brin, Kael")
    assert lines[window + 1:window + 3] == ["MISS: Interrupt: Kael attacks Vesh (#28)",
                                            "MISS: Interrupt: Brin attacks Vesh (#36)"], lines


def test_a_conditions_dice_lines_say_whose_and_for_which_condition() -> None:
    """C40: Burning ticks on Kael as his turn starts (1d4 = 3) and Poisoned's save-ends save comes as it ends (Kael's
    RES 6 against Vesh's INT 1): the dice lines read "Kael's Burning damage: 3 (d4)" (it read "Kael's damage", as if
    Kael dealt it), "Kael's save against Poisoned: 6 (d6)" and "Vesh's die against Kael's save (Poisoned): 1 (d8)"
    (it read "Vesh's save", as if Vesh saved: testers)."""
    from omen_core import ScriptedDice
    from omen_core.content import load_ruleset

    ruleset = load_ruleset(Path(__file__).parents[1] / "data" / "c40-ruleset.toml")
    fight = Fight.start(MemoryStore(), "burn", dice=ScriptedDice([1, 6, 3, 6, 1]), clock=lambda: 0, ruleset=ruleset,
                        combatants=[sheet("kael"), sheet("vesh", side="raiders", AGI=(20, 0), INT=(8, 0))])
    fight.roll_initiative()  # Vesh first
    fight.apply_condition("kael", "Burning", by="vesh")
    fight.apply_condition("kael", "Poisoned", by="vesh")
    fight.end_turn("vesh")
    fight.end_turn("kael")
    lines = [line for _h, said in cards_for(fight, Sight(kind="gm")) for line in said]
    assert "Kael's Burning damage: 3 (d4)" in lines and "Kael's damage: 3 (d4)" not in lines, lines
    assert "Kael's save against Poisoned: 6 (d6)" in lines, lines
    assert "Vesh's die against Kael's save (Poisoned): 1 (d8)" in lines, lines


def test_a_condition_a_deferred_cost_applies_says_so() -> None:
    """C41: Kael's Second Breath (free now: 2 HP healed; Fatigued at the start of his next turn) settles as his next
    turn starts: the GM's card says "Kael is Fatigued: Second Breath's deferred cost (C41)" (it said "Kael is
    Fatigued" alone: a tester), Kael's player the same, and Vesh's player "an ability's deferred cost (C41)" (the
    ability is Kael's, C37)."""
    fight = _settled_deferred("Second Breath", '{ kind = "condition", to = "actor", condition = "Fatigued" }')
    sides = frozenset({"heroes", "raiders"})

    def said(sight: Sight) -> list[str]:
        return [line for _h, lines in cards_for(fight, sight) for line in lines if line.startswith("Kael is Fatigued")]

    assert said(Sight(kind="gm")) == ["Kael is Fatigued: Second Breath's deferred cost (C41)"]
    assert said(Sight(kind="player", own=frozenset({"kael"}), sides=sides)) == [
        "Kael is Fatigued: Second Breath's deferred cost (C41)"]
    assert said(Sight(kind="player", own=frozenset({"vesh"}), sides=sides, secrets=("owing", "Second Breath"))) == [
        "Kael is Fatigued: an ability's deferred cost (C41)"]


def test_a_damage_line_the_dealer_reads_adds_up_without_the_targets_steps() -> None:
    """C12, C13: Kael's unarmed 6 (crit check lost: no crit) on Vesh (armor 2) deals 6 raw, 4 after armor: Kael's
    seat, which sees his terms and not Vesh's armor step, reads "6 on the primary die, the target's mitigation
    − 2 = 4" (it read the terms "= 6" beside 4 dealt, which did not add up: a tester); the GM's names the armor."""
    from omen_core import ScriptedDice
    from omen_core.content import Armor

    vesh = msgspec.structs.replace(sheet("vesh", side="raiders", hp=20), armor=Armor(rating=2))
    fight = Fight.start(MemoryStore(), "armor", dice=ScriptedDice([6, 1, 6, 1, 1, 6]), clock=lambda: 0,
                        combatants=[sheet("kael"), vesh])
    fight.roll_initiative()
    fight.attack("kael", "vesh", unarmed=True)
    fight.defend("vesh", None)

    def damage(sight: Sight) -> list[str]:
        return [line for _h, lines in cards_for(fight, sight) for line in lines if "damage to Vesh" in line]

    from omen_server.views import participants_of

    parties = dict(found for r in fight.events if (found := participants_of(r)) is not None)
    kael = Sight(kind="player", own=frozenset({"kael"}), sides=frozenset({"heroes", "raiders"}), hp="exact",
                 participants=parties)
    assert damage(kael) == [
        "4 crushing damage to Vesh's HP (6 on the primary die, the target's mitigation \u2212 2 = 4)"]
    assert damage(Sight(kind="gm")) == ["4 crushing damage to Vesh's HP (6 on the primary die, armor \u2212 2 = 4)"]


def test_a_condition_applied_by_a_combatant_says_by_whom_where_the_seat_sees_it() -> None:
    """C40: the GM makes the orc Fatigued by Ana until the end of Ana's next turn: the card says who applied it
    (a tester: the event records ``by`` and the card never said it), to a seat that sees Ana; a seat for which Ana
    is hidden is told the condition alone."""
    from omen_core.commands import ApplyConditionCommand
    from tests.fights import new_fight

    fight = new_fight(sheet("ana"), sheet("orc", side="raiders"), faces=[])
    fight.execute(ApplyConditionCommand(who="orc", condition="Fatigued", by="ana", until="end_of_next_turn"))
    told = "Orc is Fatigued (applied by Ana) until the end of Ana's next turn"
    assert told in cards_for(fight, Sight(kind="gm"))[-1][1]
    assert told in cards_for(fight, Sight(kind="player", own=frozenset({"orc"})))[-1][1]
    hidden = cards_for(fight, Sight(kind="player", own=frozenset({"orc"}), hidden=frozenset({"ana"})))[-1][1]
    assert not any("Ana" in line for line in hidden), hidden


def test_a_conditions_save_in_the_batch_of_a_cancelled_attack_leaves_its_verdict_cancelled() -> None:
    """C24, C40: a fight a tester played on the table page (tests/data/interrupt-drops-poisoned-attacker.jsonl, to
    seq 170): Kael's Interrupt drops Vesh and cancels Vesh's attack; Vesh's turn ends in the same batch and his
    Poisoned save (a condition's, outside any action) succeeds. The top card says CANCELLED, not SAVED (the
    condition's save led it: "SAVED Vesh the Cinder-Hand attacks Kael Arden", found by that tester)."""
    from omen_core.events import CombatantJoined
    from omen_core.store import JsonlStore
    from omen_server.story import top_card

    store = JsonlStore.single(Path(__file__).parents[1] / "data" / "interrupt-drops-poisoned-attacker.jsonl")
    records = list(store.read("fight-c6fa6e70"))
    names = {r.event.sheet.id: r.event.sheet.name for r in records if isinstance(r.event, CombatantJoined)}
    top = top_card(story((seen_event(r, Sight(kind="gm")) for r in records), names), records[-1].batch)
    assert top is not None and top.headline == "Vesh the Cinder-Hand attacks Kael Arden with axe"
    assert top.verdict == "CANCELLED" and any("save against Poisoned" in line for line in top.lines), top


def test_a_save_called_in_an_action_says_whose_die_opposes_it() -> None:
    """C15: Kael calls a save (Cinder breath, AGI against FCS) on Vesh: the card says "Kael's die against Vesh's
    save (Cinder breath)" for Kael's own die, and "Vesh's save against Cinder breath" for Vesh's; Kael's player's,
    "Kael's die against Vesh's save" (it read "Kael's save", as if Kael saved: found by a tester)."""
    from omen_core.commands import CallSave, EndTurn, RollInitiative
    from omen_core.content import DealDamage, SaveEffect

    fight = Fight.start(MemoryStore(), "save", dice=SeededDice(SEED), clock=lambda: 0,
                        combatants=[sheet("kael"), sheet("vesh", side="raiders")])
    fight.execute(RollInitiative())
    if fight.state.turn != "kael":
        fight.execute(EndTurn(who=str(fight.state.turn)))
    fight.execute(CallSave(caller="kael", saver="vesh", effect=SaveEffect(
        name="Cinder breath", save="AGI", against="FCS", on_failure=(DealDamage(flat=3, damage_type="fire"),))))
    _headline, lines = cards_for(fight, Sight(kind="gm"))[-1]
    assert any(line.startswith("Kael's die against Vesh's save (Cinder breath): ") for line in lines), lines
    assert any(line.startswith("Vesh's save against Cinder breath: ") for line in lines), lines
    mine = Sight(kind="player", own=frozenset({"kael"}), sides=frozenset({"wardens", "raiders"}))
    _headline, lines = cards_for(fight, mine)[-1]
    assert any(line.startswith("Kael's die against Vesh's save: ") for line in lines), lines  # its name the GM's
    assert not any(line.startswith("Kael's save") for line in lines), lines


def test_a_reroll_says_the_die_it_rolled_again_and_the_face_it_replaced() -> None:
    """C39: Lucky Strikes rolls Ana's primary 1 again; her card's dice line says which die it rolled again and the
    face it replaced, beside the new one ("Ana's reroll: 4 (d6)" said neither: found by a tester)."""
    from tests.fights import new_fight

    ana = msgspec.structs.replace(sheet("ana"), abilities=("lucky_strikes",))
    fight = new_fight(ana, sheet("orc", side="raiders"), faces=[1, 5, 4, 2, 3, 3, 3, 3])
    fight.attack("ana", "orc", unarmed=True)
    lines = [line for _headline, told in cards_for(fight, Sight(kind="gm")) for line in told]
    assert "Ana's reroll of the hit d6, which showed 1: 4 (d6)" in lines, lines
