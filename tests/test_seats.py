"""The pure per-seat views (omen_core/seats.py): what a player's seat sees of the combatants it does not own."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

from omen_core import Fight, MemoryStore, ScriptedDice
from omen_core.content import Features
from omen_core.events import keyed_salts
from omen_core.options import options
from omen_core.seats import HP_BANDS, HpDisplay, Sight, combatant_views, hp_band, scrub, seat_options, sight_of
from omen_core.state import FightState
from tests.sheets import sheet


def state_with(hp: int) -> FightState:
    """Kael (a hero, 20 HP) against Vesh (a raider at ``hp`` of 20), as a state."""
    state = Fight.start(MemoryStore(), "seats", dice=ScriptedDice([]), clock=lambda: 0, salts=keyed_salts(b"seats"),
                        combatants=[sheet("kael", "heroes"), sheet("vesh", "raiders")]).state
    return replace(state, combatants={**state.combatants, "vesh": replace(state.combatants["vesh"], hp=hp)})


class TestAPlayersSeat:
    @given(st.integers(0, 20), st.integers(0, 20), st.sampled_from(("banded", "hidden")))
    def test_the_views_of_a_foe_differ_only_by_its_band(self, a: int, b: int, display: HpDisplay) -> None:
        """Non-interference: two fights that differ only in the foe's HP give the heroes' seat the same views of
        the combatants and the same options whenever the two HP fall in one band (banded display), and always
        (hidden display): the exact HP never reaches the seat."""
        views = []
        for hp in (a, b):
            state = state_with(hp)
            sight = sight_of("player", ["kael"], state, (), display, {})
            views.append((combatant_views(state, sight), seat_options(options(state), sight)))
        same_band = hp_band(a, 20) == hp_band(b, 20)
        if display == "hidden" or same_band:
            assert views[0] == views[1]
        vesh = next(v for v in views[0][0] if v.id == "vesh")
        assert vesh.hp is None and vesh.max_hp is None
        assert vesh.hp_band == (hp_band(a, 20) if display == "banded" else None)
        assert vesh.hp_band in (*HP_BANDS, None)

    def test_the_owner_sees_exact_hp_and_will(self) -> None:
        """A seat owns its combatants: their HP, Will and Bonus Actions are shown exactly."""
        state = state_with(7)
        sight = sight_of("player", ["vesh"], state, (), "hidden", {})
        vesh = next(v for v in combatant_views(state, sight) if v.id == "vesh")
        assert (vesh.hp, vesh.max_hp, vesh.will, vesh.bonus_actions) == (7, 20, 10, 2)


    def test_before_the_rounds_a_player_is_offered_no_action_of_its_own(self) -> None:
        """docs/machine.md: in the set-up single actions are the GM's: the options offer the GM Kael's attack, move
        and the rest, and Kael's player none of them (player_may_act); an answer or a draw stays a player's at any
        time, and from the rounds on its actions are too."""
        from omen_core.seats import PLAYER_ACTIONS, player_may_act

        state = state_with(20)
        found = options(state)
        assert found.phase == "setup" and {o.command for o in found.offers if o.actor == "kael"} >= {"declare_attack",
                                                                                                   "move"}
        assert seat_options(found, sight_of("player", ["kael"], state, (), "banded", {})).offers == ()
        assert all(player_may_act(c, "setup") is (c not in PLAYER_ACTIONS) for c in
                   ("declare_attack", "use_ability", "move", "stand_up", "disengage", "end_turn",
                    "answer_active_defense", "draw", "react", "pass_reaction"))
        assert all(player_may_act(c, "rounds") for c in PLAYER_ACTIONS)


    def test_a_players_attack_offers_no_argument_that_is_the_gms_call(self) -> None:
        """combat.txt §Special Combat Conditions ("GM's call on what qualifies"), C26, C27: the GM is offered Kael's
        attack with its claims, damage modifiers and consequences free; Kael's player the same attack without them
        (GM_ARGUMENTS); ``gm_arguments`` names those a command sets, a claim left at its default not among them."""
        from omen_core.commands import DeclareAttack
        from omen_core.parts import Modifier, Situational
        from omen_core.seats import GM_ARGUMENTS, gm_arguments

        fight = Fight.start(MemoryStore(), "seats", dice=ScriptedDice([6, 1]), clock=lambda: 0,
                            salts=keyed_salts(b"seats"), combatants=[sheet("kael", "heroes"), sheet("vesh", "raiders")])
        fight.roll_initiative()
        found = options(fight.state)
        gms = set(GM_ARGUMENTS["declare_attack"])
        given = next(o for o in found.offers if o.command == "declare_attack" and o.actor == "kael")
        assert {a.name for a in given.free} >= gms
        mine = seat_options(found, sight_of("player", ["kael"], fight.state, (), "banded", {}))
        attack = next(o for o in mine.offers if o.command == "declare_attack")
        assert attack.choices and not {a.name for a in attack.free} & gms
        claimed = DeclareAttack(attacker="kael", target="vesh", situational=Situational(high_ground=True),
                                damage_modifiers=(Modifier(source="fog", value=1),))
        assert gm_arguments(claimed) == ("situational", "damage_modifiers")
        assert gm_arguments(DeclareAttack(attacker="kael", target="vesh", situational=Situational())) == ()


class TestScrubbing:
    def test_how_many_hidden_ones_a_list_holds_is_scrubbed_too(self) -> None:
        """A refusal listing a window's responders told a player how many hidden combatants may answer it
        ("(responders: (hidden), (hidden))"): a run of hidden ones reads as one, and a list of nothing but hidden
        ones goes, so the words are the same with one hidden responder, two, or another world's; beside a seen one
        a hidden one is left out, as the views leave it out of a list (that one may answer is a secret too)."""
        sight = Sight(kind="player", own=frozenset({"kael"}), hidden=frozenset({"ash", "bo"}), secrets=("ash", "bo"))
        refusal = "'kael' may not answer this window (responders: {})"
        assert {scrub(refusal.format(who), sight) for who in ("ash", "ash, bo", "bo, ash")} == {
            "'kael' may not answer this window"}
        assert scrub(refusal.format("vesh, ash, bo"), sight) == scrub(refusal.format("vesh, bo"), sight) == (
            "'kael' may not answer this window (responders: vesh)")  # whether any is hidden, too (a tester's find)

    def test_another_sheets_abilities_are_scrubbed_by_id_and_name_unless_owned_or_public(self) -> None:
        """Vesh lists Riposte (C37): to Kael's seat its id and name are secrets, scrubbed from the engine's words
        (the id Kael's player typed echoed as given); to Vesh's seat they are its own; once the GM makes the name
        public, nobody's; Kael's Will conversion by choice (a shorthand: the rulebook's term) is never one."""
        state = Fight.start(MemoryStore(), "seats", dice=ScriptedDice([]), clock=lambda: 0,
                            salts=keyed_salts(b"seats"), combatants=[
                                replace(sheet("kael", "heroes"), features=Features(will_conversion="choice")),
                                replace(sheet("vesh", "raiders"), abilities=("riposte",))]).state
        said = "answer_decision by vesh (Riposte, C37): riposte is open; no Will conversion is"
        kael = sight_of("player", ["kael"], state, (), "banded", {})
        assert scrub(said, kael) == "answer_decision by vesh ((hidden), C37): (hidden) is open; no Will conversion is"
        assert scrub(said, kael, typed=["riposte"]) == (
            "answer_decision by vesh ((hidden), C37): riposte is open; no Will conversion is")
        assert scrub(said, sight_of("player", ["vesh"], state, (), "banded", {})) == said
        assert scrub(said, sight_of("player", ["kael"], state, (), "banded", {}, public_effects=["Riposte"])) == said
