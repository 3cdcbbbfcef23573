"""The simulator's policies (omen_replay/simulate/policies.py): what each built-in chooses, what a policy sees, and
loading a policy of one's own."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

from omen_core import Fight, MemoryStore, ScriptedDice
from omen_core.commands import AnswerActiveDefense, DeclareAttack, Disengage, Draw, EndTurn, Move, UseAbility
from omen_core.content import CORE_RULESET, DealDamage, Ruleset, SaveEffect, Weapon
from omen_core.events import CommandIssued, DecisionAnswered
from omen_core.state import FightState
from omen_replay.simulate.encounter import load_encounter
from omen_replay.simulate.play import Rules, _decider, _decision, play
from omen_replay.simulate.policies import (
    Aggressive,
    Cautious,
    Decision,
    PolicyError,
    RandomPolicy,
    harms,
    load_policy,
)
from tests.fights import as_, present, scripted
from tests.replay.simulate.encounters import caster_duel, mutual_knockout
from tests.sheets import sheet

ROOT = Path(__file__).resolve().parents[3]
SWORD = Weapon(id="sword", weapon_damage=3, parry_rating=1)
STAFF = Weapon(id="staff", weapon_damage=1)
BOW = Weapon(id="bow", weapon_damage=2, properties=frozenset({"ranged"}))


def decision(state: FightState, who: str, kind: str = "turn", display: str = "banded") -> Decision:
    """What the simulator asks ``who``'s side in ``state`` (the function it uses)."""
    side = state.combatants[who].side
    return _decision(state, who, side, kind, display, random.Random(1), {})  # type: ignore[arg-type]


def two_on_one(kael_loses: int = 0, weapons: tuple[Weapon, ...] = (SWORD, STAFF),
               wielding: tuple[str, ...] | None = None, ruleset: Ruleset = CORE_RULESET) -> Fight:
    """Kael (heroes) against Vesh and Skarn (raiders), round 1, Kael's turn (initiative 6 + 3, 1, 2; then an
    attack's faces, 1 and 1 against a RES die 6, and a spare 6 and 6: scripted). With ``kael_loses``, before
    initiative Vesh's blow (a save Kael fails, 1 against 6, C15) takes that much of his HP. Kael carries
    ``weapons`` and holds ``wielding`` (by default the first weapon)."""
    cast = [replace(sheet("kael", "heroes", AGI=(6, 3)), weapons=weapons, wielding=wielding),
            sheet("vesh", "raiders"), sheet("skarn", "raiders")]
    fight = Fight.start(MemoryStore(), "p", dice=ScriptedDice([1, 6] if kael_loses else []), clock=lambda: 0,
                        combatants=cast, ruleset=ruleset)
    if kael_loses:
        fight.call_save("vesh", "kael", SaveEffect(name="blow", save="AGI", against="STR", action_cost=0, on_failure=(
            DealDamage(flat=kael_loses, damage_type="crushing"),)))
    scripted(fight).feed([6, 1, 2, 1, 1, 6, 6, 6])
    fight.roll_initiative()
    assert fight.state.turn == "kael"
    return fight


def hurt(state: FightState, **hp: int) -> FightState:
    return replace(state, combatants={w: replace(c, hp=hp.get(w, c.hp)) for w, c in state.combatants.items()})


class TestAggressive:
    def test_it_attacks_the_weakest_looking_enemy_with_its_strongest_weapon(self) -> None:
        """Focus fire: with Skarn bloodied (8 of 20, banded) and Vesh unhurt, Kael attacks Skarn, with the sword
        (weapon damage 3) rather than the staff (1) or fists."""
        state = hurt(two_on_one().state, skarn=8)
        chosen = Aggressive().decide(decision(state, "kael"))
        assert chosen == DeclareAttack(attacker="kael", target="skarn", weapon="sword")

    def test_holding_no_weapon_it_draws_its_strongest_then_attacks_with_it(self) -> None:
        """C35: Kael holds nothing (a set-up draw dropped, C18, say): a draw being free on his own turn, he draws
        the sword (weapon damage 3) rather than the staff (1), then attacks with it; he attacked with his fists."""
        fight = two_on_one(wielding=())
        assert {c for c in decision(fight.state, "kael").choices if isinstance(c, DeclareAttack)} == {
            DeclareAttack(attacker="kael", target=t, unarmed=True) for t in ("vesh", "skarn")}
        first = Aggressive().decide(decision(fight.state, "kael"))
        assert first == Draw(who="kael", weapon="sword")
        fight.execute(first)
        assert fight.state.turn_actions == 1
        assert Aggressive().decide(decision(fight.state, "kael")) == DeclareAttack(attacker="kael", target="vesh",
                                                                                   weapon="sword")

    def test_a_draw_that_costs_the_action_is_paid_and_the_attack_waits(self) -> None:
        """C35: with the ruleset's draw at an Action, Kael holding nothing still draws the sword (the Action
        spent), then, with no Action left, ends his turn."""
        fight = two_on_one(wielding=(), ruleset=replace(CORE_RULESET, economy=replace(CORE_RULESET.economy,
                                                                                         draw="action")))
        drawn = Aggressive().decide(decision(fight.state, "kael"))
        assert drawn == Draw(who="kael", weapon="sword")
        fight.execute(drawn)
        assert fight.state.turn_actions == 0
        assert Aggressive().decide(decision(fight.state, "kael")) == EndTurn(who="kael")

    def test_with_nothing_left_to_do_it_ends_its_turn(self) -> None:
        """C20: once the Action is spent, it ends its turn."""
        fight = two_on_one()
        fight.execute(Aggressive().decide(decision(fight.state, "kael")))
        while fight.waiting_for is not None:  # whoever must answer does, as an aggressive one would
            who, kind = _decider(fight.state)
            fight.execute(Aggressive().decide(decision(fight.state, who, kind)))
        assert fight.state.turn == "kael" and fight.state.turn_actions == 0
        assert Aggressive().decide(decision(fight.state, "kael")) == EndTurn(who="kael")

    def test_it_defends_only_when_a_defense_can_turn_the_hit(self) -> None:
        """C8: a hit of 20 against a base defense of 2: Vesh's Dodge (d6 + 0) cannot reach it (odds 0), so the
        aggressive Vesh keeps her Bonus Action and declines; the cautious one Dodges anyway."""
        fight = Fight.start(MemoryStore(), "w", dice=ScriptedDice([6, 6, 1]), clock=lambda: 0, combatants=[
            replace(sheet("kael", "heroes", STR=(6, 8)), weapons=(SWORD,)), sheet("vesh", "raiders")])
        fight.attack("kael", "vesh")
        asked = decision(fight.state, "vesh", "active_defense")
        assert [present(o).miss for o in asked.odds] == ["0", "0"]
        assert Aggressive().decide(asked) == AnswerActiveDefense(defender="vesh")
        assert Cautious().decide(asked) == AnswerActiveDefense(defender="vesh", defense="dodge")


class TestCautious:
    def test_at_low_hp_within_reach_it_disengages_then_moves_out_of_reach(self) -> None:
        """C22, C23: Kael at 5 of 20 HP (a third or less, after a failed save's 15 damage), engaged with both
        raiders, Disengages first, then moves leaving both; with no ranged weapon, it then ends its turn."""
        fight = two_on_one(kael_loses=15)
        fight.engage("kael", "vesh", "skarn")
        assert fight.state.combatants["kael"].hp == 5
        first = Cautious().decide(decision(fight.state, "kael"))
        assert first == Disengage(who="kael")
        fight.execute(first)
        second = Cautious().decide(decision(fight.state, "kael"))
        assert second == Move(who="kael", leaves=("skarn", "vesh"))
        fight.execute(second)
        assert Cautious().decide(decision(fight.state, "kael")) == EndTurn(who="kael")

    def test_at_low_hp_out_of_reach_it_draws_a_ranged_weapon_and_shoots(self) -> None:
        """C35: Kael at 5 of 20 HP holding only his sword, carrying a bow, once out of reach draws the bow and
        shoots the weakest-looking raider with it."""
        fight = two_on_one(kael_loses=15, weapons=(SWORD, BOW))
        fight.engage("kael", "vesh", "skarn")
        for _ in range(2):  # Disengage, then move out of reach
            fight.execute(Cautious().decide(decision(fight.state, "kael")))
        assert fight.state.engaged_with("kael") == []
        drawn = Cautious().decide(decision(fight.state, "kael"))
        assert drawn == Draw(who="kael", weapon="bow")
        fight.execute(drawn)
        assert Cautious().decide(decision(fight.state, "kael")) == DeclareAttack(attacker="kael", target="vesh",
                                                                                 weapon="bow")

    def test_holding_no_weapon_it_draws_as_the_aggressive_one(self) -> None:
        """C35: unhurt and holding nothing, the cautious policy draws its strongest weapon first too."""
        state = two_on_one(wielding=()).state
        assert Cautious().decide(decision(state, "kael")) == Draw(who="kael", weapon="sword")

    def test_unhurt_it_fights_as_the_aggressive_one(self) -> None:
        """Above a third of its HP, the cautious policy attacks as the aggressive one does."""
        state = two_on_one().state
        assert Cautious().decide(decision(state, "kael")) == Aggressive().decide(decision(state, "kael"))


class TestRandom:
    def test_it_picks_every_legal_command_about_as_often(self) -> None:
        """Uniform over the legal commands: over 3,000 draws each of Kael's choices (attacks on every combatant
        with each arm, moves, Disengage, end_turn) comes up within 30 % of its fair share."""
        asked = decision(two_on_one().state, "kael")
        rng = random.Random(7)
        counts = Counter(RandomPolicy().decide(replace_rng(asked, rng)) for _ in range(3000))
        fair = 3000 / len(asked.choices)
        assert set(counts) == set(asked.choices)
        assert all(abs(n - fair) < 0.3 * fair for n in counts.values())


    def test_holding_no_weapon_its_draws_are_among_its_choices(self) -> None:
        """C35: the random policy, choosing among every legal command, may draw either weapon Kael carries."""
        asked = decision(two_on_one(wielding=()).state, "kael")
        picked = {RandomPolicy().decide(replace_rng(asked, random.Random(i))) for i in range(200)}
        assert {Draw(who="kael", weapon="sword"), Draw(who="kael", weapon="staff")} <= picked


def replace_rng(asked: Decision, rng: random.Random) -> Decision:
    from dataclasses import replace as dc_replace

    return dc_replace(asked, rng=rng)


class TestWhatAPolicySees:
    @given(st.integers(1, 20), st.integers(1, 20), st.sampled_from(("banded", "hidden")))
    def test_a_players_policy_never_sees_an_enemys_hp(self, a: int, b: int, display: str) -> None:
        """Non-interference: two states that differ only in Vesh's HP give Kael's policy the same decision (the
        same choices, the same view) whenever the two fall in one HP band, and always with the HP hidden; the
        view never holds Vesh's HP, only its band (docs/server.md's HP display)."""
        base = two_on_one().state
        seen = [decision(hurt(base, vesh=hp), "kael", display=display) for hp in (a, b)]
        views = [(d.choices, d.view) for d in seen]
        from omen_core.seats import hp_band

        if display == "hidden" or hp_band(a, 20) == hp_band(b, 20):
            assert views[0] == views[1]
        vesh = seen[0].view.combatant("vesh")
        assert vesh is not None and vesh.hp is None and vesh.max_hp is None
        assert seen[0].me.hp == 20 and seen[0].sheet.id == "kael"

    def test_an_unseen_enemy_is_not_in_the_view(self) -> None:
        """C27: an Unseen raider is hidden from the heroes' seat, and so from their policy: not in the view, and
        no choice names it (as a player's seat is offered nothing naming whom it cannot see)."""
        fight = two_on_one()
        fight.apply_condition("skarn", "Unseen")
        asked = decision(fight.state, "kael")
        assert asked.view.combatant("skarn") is None
        assert "skarn" not in repr(asked.choices) and any(isinstance(c, DeclareAttack) for c in asked.choices)
        assert as_(Aggressive().decide(asked), DeclareAttack).target == "vesh"  # the weakest-looking enemy it can see


class TestLoading:
    def test_the_built_in_ones_by_name(self) -> None:
        """random, aggressive and cautious are built in, each made fresh."""
        assert [load_policy(n).name for n in ("random", "aggressive", "cautious")] == ["random", "aggressive",
                                                                                          "cautious"]
        assert load_policy("aggressive") is not load_policy("aggressive")

    def test_one_of_ones_own_from_a_file(self) -> None:
        """The example of docs/simulate.md loads from its file, as path:attribute."""
        made = load_policy(f"{ROOT}/examples/policies/hold_the_line.py:HoldTheLine")
        assert made.name == "hold-the-line"

    @pytest.mark.parametrize(("name", "said"), [
        ("bold", "unknown policy 'bold': built in are random, aggressive, cautious"),
        ("no_such_module:Bold", "cannot import 'no_such_module'"),
        ("omen_replay.simulate.policies:Bold", "has no 'Bold'"),
        ("omen_replay.simulate.policies:BUILT_IN", "is not a class or function"),
        ("omen_replay.simulate.policies:SeatView", "policy 'omen_replay.simulate.policies:SeatView'"),
        ("/no/such/file.py:Bold", "no such file"),
    ])
    def test_a_policy_that_cannot_be_loaded_is_said(self, name: str, said: str) -> None:
        """An unknown name, a module or file that cannot be imported, a missing attribute or one that makes no
        policy: each is a PolicyError saying which."""
        with pytest.raises(PolicyError, match=said):
            load_policy(name)


    def test_a_policy_missing_its_name_is_told_which_half_it_lacks(self, tmp_path: Path) -> None:
        """A policy class with decide() but no name is told it has no name attribute, and only that (it read "has
        no name and decide(decision) method", as if both were missing: found by a tester)."""
        (tmp_path / "pols.py").write_text("class NoName:\n    def decide(self, decision):\n        return None\n")
        with pytest.raises(PolicyError) as refused:
            load_policy(f"{tmp_path}/pols.py:NoName")
        assert str(refused.value) == (f"policy '{tmp_path}/pols.py:NoName': NoName has no name attribute (a policy "
                                      "has both: docs/simulate.md, \"Policies\")")


class TestTriggeredAbilities:
    @pytest.mark.parametrize(("name", "cost", "used"), [
        ("cautious", "", True), ("cautious", "{ will = 1 }", False), ("cautious", "{ bonus_actions = 1 }", False),
        ("aggressive", "{ will = 1 }", True), ("aggressive", "", True),
    ])
    def test_cautious_uses_an_ability_only_when_it_costs_nothing(self, tmp_path: Path, name: str, cost: str,
                                                                 used: bool) -> None:
        """docs/simulate.md: at a triggered ability's decision point, ``cautious`` uses it only if that costs
        nothing (it paid Will and Bonus Actions for them), ``aggressive`` always; over 12 fights of a duel at
        20 HP in which Bo hits Ash, Strike Back is offered, and used (or passed) every time."""
        encounter = load_encounter(mutual_knockout(tmp_path, hp=20, cost=cost))
        answers = Counter(e.choice for i in range(12)
                          for e in (r.event for r in play(encounter, Rules(policies={"north": name}), i,
                                                          bytes(range(16)), 0).fight.events)
                          if isinstance(e, DecisionAnswered))
        assert answers and set(answers) == ({"use"} if used else {"pass"})


class TestAbilitiesOnOnesTurn:
    def test_aggressive_uses_a_harmful_ability_on_a_foe_while_it_can_pay(self, tmp_path: Path) -> None:
        """C37, C15: Ash, aggressive, with Bolt (a save, 1 Will) and Mend (a heal), bolts Bo on his turns while
        his 4 Will last, never mends; he attacks with his sword once it is spent. Over 20 fights: 54 uses, every
        one Bolt on Bo, at most 4 a fight."""
        encounter = load_encounter(caster_duel(tmp_path))
        uses: Counter[tuple[str, str | None]] = Counter()
        most = 0
        for i in range(20):
            played = play(encounter, Rules(policies={}), i, bytes(range(16)), 0)
            mine = [e.command for e in (r.event for r in played.fight.events)
                    if isinstance(e, CommandIssued) and isinstance(e.command, UseAbility)]
            uses.update((c.ability, c.target) for c in mine)
            most = max(most, len(mine))
        assert uses == Counter({("bolt", "bo"): 54}) and most == 4

    def test_cautious_and_the_harmful_ability_finder(self, tmp_path: Path) -> None:
        """Bolt harms (a save), Mend does not (a heal); cautious uses neither on its turn (each costs an Action)."""
        encounter = load_encounter(caster_duel(tmp_path))
        bolt, mend = encounter.combatants[0].written_abilities()
        assert (harms(bolt), harms(mend)) == (True, False)
        played = play(encounter, Rules(policies={"north": "cautious"}), 0, bytes(range(16)), 0)
        assert not any(isinstance(r.event, CommandIssued) and isinstance(r.event.command, UseAbility)
                       for r in played.fight.events)
