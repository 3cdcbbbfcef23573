"""The decision-point registry (omen_core/decisions.py): its rows agree with the command union, the lifecycle
machine and its transition table; each point, opened in a real fight with scripted dice (C29), lists candidate
answers of its own answer commands for its own responders; a Will-conversion choice cannot be called off (C31)
though ending the fight still ends it (C33); and refusals say what is legal now in command words.

The fights reuse the sheets of tests/decide (each module's docstring has their table and arithmetic):
``attack`` is tests/decide/test_attack.py, ``reactions`` tests/decide/test_reactions.py, ``flow``
tests/decide/test_flow.py.
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omen_core import Fight
from omen_core.commands import CancelAction, Command, CommandBase, EndFight, UseAbility
from omen_core.content import Features, Weapon
from omen_core.decisions import DECISION_POINTS, DecisionPoint, arms, legal_now, point_at, transitions, waiting_point
from omen_core.errors import RuleViolation
from omen_core.events import ActionCancelled, FightEnded
from omen_core.machine import TRANSITIONS, IllegalOrder, Phase, Step
from tests.decide import test_attack as attack
from tests.decide import test_flow as flow
from tests.decide import test_reactions as reactions
from tests.fights import assert_legal_order, assert_replays, new_fight, payloads, present
from tests.random_fights import RandomFight, fights
from tests.sheets import CORE, sheet


def key(point: DecisionPoint) -> str:
    """A point's name here: its kind, and the step it waits at where another point of its kind comes first (the
    Interrupt waits at an ability used for an Action as at a declared one, C24)."""
    first = next(p for p in DECISION_POINTS if p.kind == point.kind)
    return point.kind if first is point else f"{point.kind} at {point.step}"


KINDS = [key(point) for point in DECISION_POINTS]
POINTS = {key(point): point for point in DECISION_POINTS}


def tag(command: type[CommandBase]) -> str:
    """A command class's tag, as the JSON and options() name it."""
    return str(command.__struct_config__.tag)


# -- one fight waiting at each point --------------------------------------------------------------


def at_active_defense() -> Fight:
    """attack: Kael's sword 6 + 3 + 3 = 12 against Vesh's base 2 + 1 = 3 opens Vesh's Active Defense (C8)."""
    fight = new_fight(attack.kael(), attack.vesh(), faces=[6, 3, 2])
    fight.attack("kael", "vesh")
    return fight


def at_interrupt() -> Fight:
    """reactions: in round 2 (both had a turn), engaged Vesh may Interrupt Kael's attack (C24)."""
    fight = new_fight(reactions.kael(), reactions.vesh(), faces=[15, 5])
    fight.engage("kael", "vesh")
    fight.roll_initiative()
    reactions.through_round_1(fight)
    fight.attack("kael", "vesh")
    return fight


def at_ability_interrupt() -> Fight:
    """reactions: in round 2 engaged Vesh may Interrupt Kael's Sear, an ability used for an Action (C24, C37)."""
    from omen_core.content import Ability, DealDamage

    sear = Ability(id="sear", name="Sear", use="action", target="enemy",
                   effects=(DealDamage(to="target", flat=2, damage_type="fire"),))
    fight = new_fight(msgspec.structs.replace(reactions.kael(), abilities=(sear,)), reactions.vesh(), faces=[15, 5])
    fight.engage("kael", "vesh")
    fight.roll_initiative()
    reactions.through_round_1(fight)
    fight.execute(UseAbility(who="kael", ability="sear", target="vesh"))
    return fight


def at_attack_of_opportunity() -> Fight:
    """reactions: in round 2 Kael's Movement Action out of Vesh's reach opens Vesh's window (C23)."""
    fight = new_fight(reactions.kael(), reactions.vesh(), faces=[15, 5])
    fight.engage("kael", "vesh")
    fight.roll_initiative()
    reactions.through_round_1(fight)
    fight.move("kael", leaves=["vesh"])
    return fight


def at_catch() -> Fight:
    """reactions: Kael's javelin 6 + 1 + 2 = 9 against Vesh's base 1 + 1 = 2, declined: Vesh may Catch (C22)."""
    fight = new_fight(reactions.kael(weapons=(reactions.JAVELIN,)), reactions.vesh(), faces=[15, 5, 6, 1, 1])
    fight.roll_initiative()
    fight.attack("kael", "vesh")
    fight.defend("vesh", None)
    return fight


def at_routing() -> Fight:
    """attack: the Unseen Rogue Kael hits (2 + 3 + 1 + 3 = 9 against 4 + 1 = 5), Vesh declines: routing (C12)."""
    fight = new_fight(attack.kael(features=Features(rogue_routing=True)), attack.vesh(), faces=[2, 3, 1, 4])
    fight.apply_condition("kael", "Unseen")
    fight.attack("kael", "vesh")
    fight.defend("vesh", None)
    return fight


def at_will_conversion() -> Fight:
    """attack: Kael's sword hits Vesh (10 against 2) for 12; Vesh, with 5 Will and the choice, is asked (C31)."""
    fight = new_fight(attack.kael(), attack.vesh(will=5, features=Features(will_conversion="choice")),
                      faces=[6, 1, 1])
    fight.attack("kael", "vesh")
    fight.defend("vesh", None)
    return fight


def at_initiative_tie() -> Fight:
    """flow: Kael 9 + 1 and Mira 9 + 1 tie at 10 as allies (AGI +1 each), Vesh 4 + 1 = 5 (C19)."""
    fight = new_fight(flow.kael(), flow.mira(), flow.vesh(), faces=[9, 9, 4])
    fight.roll_initiative()
    return fight


#: For each point: a fight waiting there, and who answers it.
OPEN: dict[str, tuple[Callable[[], Fight], tuple[str, ...]]] = {
    "active_defense": (at_active_defense, ("vesh",)),
    "interrupt": (at_interrupt, ("vesh",)),
    "interrupt at ABILITY_REACTIONS_OPEN": (at_ability_interrupt, ("vesh",)),
    "attack_of_opportunity": (at_attack_of_opportunity, ("vesh",)),
    "catch": (at_catch, ("vesh",)),
    "routing": (at_routing, ("kael",)),
    "will_conversion": (at_will_conversion, ("vesh",)),
    "initiative_tie": (at_initiative_tie, ("kael", "mira")),
}


# -- the rows ---------------------------------------------------------------------------------------


class TestRegistry:
    def test_kinds_are_unique_and_each_has_a_fight_here(self) -> None:
        """Every decision point has its own kind, or its own step where two share a kind (the Interrupt, C24), and
        this file opens each one in a fight."""
        assert len(set(KINDS)) == len(KINDS)
        assert set(OPEN) == set(KINDS)

    def test_every_answer_command_is_in_the_command_union(self) -> None:
        """Each point is answered with commands a caller can send: members of the ``Command`` union."""
        union = set(typing.get_args(Command))
        for point in DECISION_POINTS:
            assert point.answers, point.kind
            for answer in point.answers:
                assert answer.command in union, (point.kind, answer.command)

    def test_every_step_named_is_a_lifecycle_step(self) -> None:
        """Each point's step, the steps it opens from and those its answers lead to are members of ``Step``."""
        for point in DECISION_POINTS:
            named = [point.step, *(a.to for a in point.answers)]
            if point.opened_by is not None:
                named += list(point.opened_by[1])
            for name in named:
                assert name is None or name in Step.__members__, (point.kind, name)

    def test_only_the_initiative_tie_waits_outside_any_action(self) -> None:
        """C19: the allies' tie is the one point outside an action (no step, no window); all others are windows."""
        assert [p.kind for p in DECISION_POINTS if p.step is None] == ["initiative_tie"]
        for point in DECISION_POINTS:
            assert (point.step is None) == (point.window is None) == (point.opened_by is None), point.kind

    def test_answer_labels_and_costs_are_given(self) -> None:
        """Each answer says what it does, and each point what it costs under the core ruleset (C22: 1 Bonus Action
        for Active Defense and Catch and an Attack of Opportunity, 2 for an Interrupt; routing, Will and ties are
        free)."""
        costs = {p.kind: p.cost(CORE) for p in DECISION_POINTS}
        assert costs == {"active_defense": "1 Bonus Action", "interrupt": "2 Bonus Actions",
                         "attack_of_opportunity": "1 Bonus Action", "catch": "1 Bonus Action", "routing": "free",
                         "will_conversion": "free", "initiative_tie": "free"}
        assert all(a.label for p in DECISION_POINTS for a in p.answers)

    def test_only_the_will_conversion_cannot_be_called_off(self) -> None:
        """C31: the damage is already determined at the Will choice, so it is the one point not cancellable."""
        assert [p.kind for p in DECISION_POINTS if not p.cancellable] == ["will_conversion"]


class TestTransitions:
    @staticmethod
    def as_steps(row: dict[str, Any]) -> dict[str, Any]:
        """A row with its step names turned into ``Step`` members, as the machine's table holds them."""
        def step(value: Any) -> Any:
            if isinstance(value, list):
                return [Step[v] for v in value]
            return Step[value] if value in Step.__members__ else value
        return {k: step(v) if k in ("source", "dest") else v for k, v in row.items()}

    def test_every_row_is_in_the_machine_table(self) -> None:
        """The machine's TRANSITIONS carry every row the decision points declare, exactly."""
        for row in transitions():
            assert self.as_steps(row) in TRANSITIONS, row

    def test_rows_come_once(self) -> None:
        """A row two points share (Interrupt and Attack of Opportunity open at the same step) comes once."""
        rows = transitions()
        assert all(rows.count(row) == 1 for row in rows)

    def test_each_window_opens_is_answered_and_may_be_cancelled(self) -> None:
        """Each point with a step has its opening row, a row per answer trigger and the GM's cancel row (kept
        for the Will choice too: ending the fight calls off any action, C33)."""
        rows = transitions()
        for point in DECISION_POINTS:
            if point.step is None:
                continue
            trigger, sources = present(point.opened_by)
            assert {"trigger": trigger, "source": list(sources), "dest": point.step} in rows, point.kind
            for answer in point.answers:
                assert {"trigger": answer.trigger, "source": point.step, "dest": answer.to or "="} in rows
            assert {"trigger": "cancel", "source": point.step, "dest": "CANCELLED"} in rows, point.kind

    def test_the_reaction_window_closes(self) -> None:
        """C23, C24: once every responder has answered, the reaction window closes."""
        assert {"trigger": "close_reactions", "source": "REACTIONS_OPEN", "dest": "REACTIONS_CLOSED"} \
            in transitions()


class TestPointAt:
    def test_each_window_is_found_at_its_step(self) -> None:
        """Each point with a step is the one found there (a reaction window by its reaction)."""
        for point in DECISION_POINTS:
            if point.step is not None:
                assert point_at(point.step, point.reaction) is point

    def test_nothing_waits_where_no_point_is(self) -> None:
        """At rest, mid-resolution, or at a reaction step with no reaction named, no point is found; nor for the
        step-less tie."""
        for step in ("IDLE", "DECLARED", "HIT_ROLLED", "SETTLED", "CANCELLED"):
            assert point_at(step, None) is None
        assert point_at("REACTIONS_OPEN", None) is None
        assert point_at(None, None) is None

    def test_interrupt_and_attack_of_opportunity_share_a_step(self) -> None:
        """C23, C24: the two reaction windows wait at the same step and are told apart by their reaction."""
        assert present(point_at("REACTIONS_OPEN", "interrupt")).kind == "interrupt"
        assert present(point_at("REACTIONS_OPEN", "attack_of_opportunity")).kind == "attack_of_opportunity"


# -- the points, open in real fights ------------------------------------------------------------------


def responder_of(command: CommandBase) -> str | None:
    """Whoever a candidate answer is given by (its who, defender or attacker field), None for the GM's."""
    fields = msgspec.to_builtins(command)
    for name in ("who", "defender", "attacker"):
        if name in fields:
            given: str = fields[name]
            return given
    return None


@pytest.mark.parametrize("kind", KINDS)
class TestOpenPoints:
    def test_waiting_point_is_this_point_with_its_responders(self, kind: str) -> None:
        """Each scripted fight waits at the point it was built for, with the expected responders (C8, C12, C19,
        C22, C23, C24, C31)."""
        build, who = OPEN[kind]
        fight = build()
        point, responders, action = present(waiting_point(fight.state))
        assert (key(point), responders) == (kind, who)
        assert action == (present(fight.state.pending).action if point.step is not None else None)
        assert_replays(fight)
        assert_legal_order(fight.events)

    def test_candidates_are_answers_of_this_point_given_by_the_responder(self, kind: str) -> None:
        """Each point's candidates are commands of its answers' types, given by the responder asked (none named for
        the tie, C19: one answer settles it for all)."""
        build, who = OPEN[kind]
        fight = build()
        point = POINTS[kind]
        types = tuple(a.command for a in point.answers)
        for responder in (None,) if point.step is None else who:
            candidates = point.candidates(fight.state, responder)
            assert candidates, (kind, responder)
            assert {type(c) for c in candidates} <= set(types)
            assert {responder_of(c) for c in candidates} == {responder}

    def test_every_answer_type_has_a_candidate(self, kind: str) -> None:
        """Each of the point's answer commands is among the candidates (so options() can offer each)."""
        build, who = OPEN[kind]
        fight = build()
        point = POINTS[kind]
        responder = None if point.step is None else who[0]
        assert {a.command for a in point.answers} == {type(c) for c in point.candidates(fight.state, responder)}

    def test_options_waits_on_the_same_point(self, kind: str) -> None:
        """options().waiting is this point: its kind, rule, responders and answer commands."""
        build, who = OPEN[kind]
        fight = build()
        point = POINTS[kind]
        waiting = present(fight.options().waiting)
        assert (waiting.kind, waiting.rule, waiting.who, waiting.title) == (point.kind, point.rule, who, point.title)
        assert waiting.answers == tuple(dict.fromkeys(tag(a.command) for a in point.answers))

    def test_a_refusal_says_what_is_legal_in_the_points_words(self, kind: str) -> None:
        """A command that does not fit the open decision is refused (IllegalOrder, or OutOfPhase for the tie,
        C19) and the log is unchanged; legal_now names the point's answer commands, who gives them, its title and
        rule, the GM's cancel_action only where the point is cancellable (C31), and end_fight or undo (C33)."""
        build, who = OPEN[kind]
        fight = build()
        point = POINTS[kind]
        before = fight.events
        with pytest.raises(RuleViolation) as info:
            fight.execute(_a_new_action(fight))
        assert fight.events == before
        answers = " or ".join(dict.fromkeys(tag(a.command) for a in point.answers))
        by = f" by {', '.join(who)}" if point.step is not None else ""
        expected = [f"{answers}{by} ({point.title}, {point.rule})"]
        if point.step is not None and point.cancellable:
            expected.append("the GM's cancel_action")
        expected.append("the GM's end_fight or undo")
        assert legal_now(fight.state) == expected
        if isinstance(info.value, IllegalOrder):
            assert info.value.legal_now == expected


def _a_new_action(fight: Fight) -> Command:
    """A fresh static check by the first combatant: never an answer to any window."""
    from omen_core.commands import CheckSpec, StaticCheck

    return StaticCheck(check=CheckSpec(who=next(iter(fight.state.combatants)), attribute="STR"), difficulty=10,
                       dice=(1,))


class TestEveryStateOfRandomFights:
    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                    HealthCheck.data_too_large])
    @given(fights(max_commands=30))
    def test_an_open_point_lists_its_own_answers_for_its_own_responders(self, rf: RandomFight) -> None:
        """In every state of random fights (tests/random_fights.py): where a point is open, its responders have
        joined, its candidates are of its answer types and given by the responder, and legal_now names it first
        (its title and rule); where none is, legal_now says so."""
        for state in rf.states.values():
            found = waiting_point(state)
            if found is None:
                assert legal_now(state)[0].startswith("no decision is open")
                continue
            point, who, action = found
            assert set(who) <= set(state.combatants)
            assert (action is None) == (point.step is None)
            types = {a.command for a in point.answers}
            for responder in (None,) if point.step is None else who:
                candidates = point.candidates(state, responder)
                assert {type(c) for c in candidates} <= types
                assert {responder_of(c) for c in candidates} <= {responder}
            assert legal_now(state)[0].endswith(f"({point.title}, {point.rule})")

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                    HealthCheck.data_too_large])
    @given(fights(max_commands=30))
    def test_a_refusal_offers_cancel_action_exactly_where_options_offer_it(self, rf: RandomFight) -> None:
        """In every state of random fights with a decision open: legal_now names the GM's cancel_action exactly
        where options() offers cancel_action (a refusal during the Active Defense window of a reaction named it,
        and the cancel was then refused: a reaction is finished or undone first; found by a tester)."""
        from omen_core.options import options

        for state in rf.states.values():
            if waiting_point(state) is None:
                continue
            offered = any(o.command == "cancel_action" for o in options(state).offers)
            assert ("the GM's cancel_action" in legal_now(state)) == offered, legal_now(state)


class TestLegalNowAtRest:
    def test_at_rest_nothing_is_open(self) -> None:
        """With no window and no tie open, legal_now says so and points to options()."""
        fight = new_fight(attack.kael(), attack.vesh())
        assert waiting_point(fight.state) is None
        assert legal_now(fight.state) == [
            "no decision is open (omen status, or Fight.options(), lists every command accepted now)"]


# -- the Will choice cannot be called off, but the fight can end --------------------------------------------


class TestWillConversionIsNotCancellable:
    def test_cancel_action_is_refused_and_changes_nothing(self) -> None:
        """C31: the GM's cancel_action at the Will choice is refused naming C31; the log and the choice stay."""
        fight = at_will_conversion()
        before = fight.events
        with pytest.raises(RuleViolation) as info:
            fight.execute(CancelAction(reason="the GM calls it off"))
        assert info.value.rule == "C31"
        assert fight.events == before and present(fight.state.pending).step is Step.WILL_CHOICE_OPEN
        assert present(waiting_point(fight.state))[0].kind == "will_conversion"

    def test_end_fight_still_ends_it_calling_the_action_off(self) -> None:
        """C33: ending the fight at the Will choice calls the attack off first, then ends the fight: nothing waits
        any more, no damage landed, and no cancel_action is offered or needed."""
        fight = at_will_conversion()
        action = present(fight.state.pending).action
        fight.execute(EndFight())
        tail = payloads(fight)[-2:]
        assert isinstance(tail[0], ActionCancelled) and tail[0].action == action
        assert isinstance(tail[1], FightEnded) and tail[1].reason == "gm"
        assert fight.state.phase is Phase.ENDED and fight.state.pending is None
        assert waiting_point(fight.state) is None and fight.options().waiting is None
        assert fight.state.combatants["vesh"].hp == 20 and fight.state.combatants["vesh"].will == 5
        assert_replays(fight)
        assert_legal_order(fight.events)

    def test_cancel_is_offered_at_a_cancellable_window_only(self) -> None:
        """C8, C31: options() offers the GM's cancel_action at the Active Defense window, not at the Will choice."""
        offered = {o.command for o in at_active_defense().options().offers}
        assert "cancel_action" in offered
        assert "cancel_action" not in {o.command for o in at_will_conversion().options().offers}
        assert "end_fight" in {o.command for o in at_will_conversion().options().offers}


# -- what a combatant may attack with ---------------------------------------------------------------------

SWORD = Weapon(id="sword", weapon_damage=3)
BOW = Weapon(id="bow", weapon_damage=2, properties=frozenset({"ranged"}))
STAFF = Weapon(id="staff", weapon_damage=1, damage_type="arcane", properties=frozenset({"spell"}))
WAND = Weapon(id="wand", damage_type="fire", properties=frozenset({"spell", "ranged"}))


class TestArms:
    def fight(self, wielding: tuple[str, ...]) -> Fight:
        """Ana with a sword, a bow, a staff and a wand (spells), holding ``wielding``, against Bram."""
        ana = msgspec.structs.replace(sheet("ana"), weapons=(SWORD, BOW, STAFF, WAND), wielding=wielding)
        return new_fight(ana, sheet("bram", "raiders"))

    def test_weapons_in_hand_and_every_spell_then_unarmed(self) -> None:
        """C35: what is in hand (the bow), every spell (needing no hand), and unarmed last; the sheathed sword not."""
        fight = self.fight(("bow",))
        assert arms(fight.state, "ana") == [{"weapon": "bow"}, {"weapon": "staff"}, {"weapon": "wand"},
                                            {"unarmed": True}]

    def test_a_reaction_is_melee_only(self) -> None:
        """C23, C24: a reaction's basic attack is a melee attack: the bow and the ranged wand are left out."""
        fight = self.fight(("sword", "bow"))
        assert arms(fight.state, "ana", melee_only=True) == [{"weapon": "sword"}, {"weapon": "staff"},
                                                             {"unarmed": True}]

    def test_empty_handed_is_unarmed_and_spells(self) -> None:
        """C12, C35: with nothing in hand Ana may still cast or strike unarmed."""
        fight = self.fight(())
        assert arms(fight.state, "ana") == [{"weapon": "staff"}, {"weapon": "wand"}, {"unarmed": True}]
        assert arms(fight.state, "bram") == [{"unarmed": True}]


def tied_allies(n: int) -> Fight:
    """``n`` allies of one side, AGI d6 +1 each, all rolling 4 for initiative (tied at 5, C19), and one foe
    rolling 6 (+0): the allies' tie waits for an order."""
    allies = [sheet(f"a{i:02d}", "heroes", AGI=(6, 1)) for i in range(n)]
    fight = new_fight(*allies, sheet("zed", "raiders"), faces=[4] * n + [6])
    fight.roll_initiative()
    assert fight.state.tie_open == tuple(s.id for s in allies)
    return fight


class TestTiesWithoutEnumeratingOrders:
    """Issue #26, item 5: a tie among 12 allies made every n! order (479 million) before keeping 24: the offers
    give two orders and the roll-off, and any order is the command's argument, checked when given (C19)."""

    def test_twelve_tied_allies_are_offered_two_orders_and_the_order_argument(self) -> None:
        """The tie as rolled and reversed, the roll-off, and the ``order`` argument taking any order."""
        fight = tied_allies(12)
        offers = {o.command: o for o in fight.options().offers}
        tied = list(fight.state.tie_open)
        assert [list(c.args["order"]) for c in offers["agree_initiative"].choices] == [tied, tied[::-1]]
        assert [a.name for a in offers["agree_initiative"].free] == ["order"]
        assert "roll_off" in offers

    @settings(max_examples=25, deadline=None)
    @given(order=st.permutations([f"a{i:02d}" for i in range(12)]))
    def test_any_order_of_them_is_accepted_as_given(self, order: list[str]) -> None:
        """Any of the 12! orders is accepted, and the initiative order is the foe (6 beats 5), then the agreed one."""
        fight = tied_allies(12)
        fight.agree_initiative(order)
        assert fight.state.order == ("zed", *order)

    @pytest.mark.parametrize("order", [["a00"], [f"a{i:02d}" for i in range(11)] + ["a00"],
                                       [f"a{i:02d}" for i in range(12)] + ["zed"]])
    def test_an_order_that_is_not_exactly_the_tied_allies_is_refused(self, order: list[str]) -> None:
        """Some left out, one twice, a foe added: refused under C19, nothing written."""
        fight = tied_allies(12)
        version = fight.version
        with pytest.raises(RuleViolation, match="C19"):
            fight.agree_initiative(order)
        assert fight.version == version
