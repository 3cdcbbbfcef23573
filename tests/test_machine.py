"""Tests for omen_core.machine: the action lifecycle and phase machines, the ORDER and PHASE_ORDER tables derived
from them, the events outside both (UNORDERED), and live fights obeying them."""

from __future__ import annotations

from collections.abc import Callable

import msgspec.inspect as mi
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace
from transitions import MachineError

from omen_core import CheckSpec, OmenError
from omen_core.commands import AnswerActiveDefense, RevealSeed
from omen_core.content import (
    ApplyCondition,
    Armor,
    Branches,
    ClearCondition,
    DamageDice,
    DealDamage,
    Features,
    IncomingDamage,
    RageDice,
    SaveEffect,
    Shield,
    Training,
    Weapon,
)
from omen_core.engine import Fight
from omen_core.events import (
    EVENT_TYPES,
    AbilityUsed,
    ActionCancelled,
    ActionSettled,
    ActiveDefenseChosen,
    ActiveDefenseDeclined,
    ActiveDefenseWindowOpened,
    ActiveDefenseWindowSkipped,
    AmbushDifficultySet,
    AmbushStarted,
    AttackDeclared,
    BonusActionsRefilled,
    CatchAnswered,
    CatchWindowOpened,
    CombatantJoined,
    CombatantLeft,
    CommandIssued,
    ConditionApplied,
    ConditionCleared,
    ConditionTicked,
    ContestResolved,
    CostPaid,
    DamageResolved,
    DamageRouted,
    DamageTerms,
    DecisionAnswered,
    DecisionClosed,
    DecisionOpened,
    DiceRolled,
    DiceSourceChanged,
    Disengaged,
    EngagementChanged,
    Event,
    EventBase,
    FightEnded,
    FightStarted,
    HitDetermined,
    InitiativeAgreed,
    InitiativeOrderSet,
    InitiativeRolled,
    InitiativeRollOff,
    InitiativeTied,
    MomentReached,
    Moved,
    MovementDeclared,
    ReactionPassed,
    ReactionWindowClosed,
    ReactionWindowOpened,
    Redone,
    ResourceChanged,
    RollPurpose,
    RoundEnded,
    RoundStarted,
    RoutingWindowOpened,
    SaveCalled,
    SaveResolved,
    SeedCommitted,
    SeedRevealed,
    StaticCheckResolved,
    SurpriseDetermined,
    TurnEnded,
    TurnSkipped,
    TurnStarted,
    Undone,
    WeaponDrawn,
    WillConversionChosen,
    WillConversionOffered,
)
from omen_core.machine import (
    AT_REST,
    ORDER,
    PHASE_ORDER,
    PHASE_TRANSITIONS,
    TRANSITIONS,
    UNORDERED,
    FightFlow,
    IllegalOrder,
    Lifecycle,
    OutOfPhase,
    Phase,
    Step,
    legal_triggers,
    next_phase,
    next_step,
    phase_trigger_for,
    phase_trigger_of,
    trigger_for,
    trigger_of,
)
from omen_core.rules.attack import ActiveDefense
from omen_core.state import evolve
from tests.fights import assert_legal_order, assert_replays, new_fight, payloads, scripted
from tests.sheets import sheet
from tests.strategies import from_type_info

S = Step
TRIGGERS = sorted({row["trigger"] for row in TRANSITIONS})
PHASE_TRIGGERS = sorted({row["trigger"] for row in PHASE_TRANSITIONS})


class TestOrderTable:
    @pytest.mark.parametrize("step", list(Step), ids=lambda s: s.name)
    @pytest.mark.parametrize("trigger", TRIGGERS)
    def test_order_is_what_the_machine_allows(self, step: Step, trigger: str) -> None:
        """ORDER is derived from the machine: firing succeeds iff (step, trigger) is in ORDER, landing where it says."""
        lifecycle = Lifecycle(step)
        if (step, trigger) in ORDER:
            assert lifecycle.fire(trigger) is ORDER[(step, trigger)]
            assert lifecycle.step is ORDER[(step, trigger)]
        else:
            with pytest.raises(IllegalOrder):
                lifecycle.fire(trigger)
            assert lifecycle.step is step

    @pytest.mark.parametrize("step", list(Step), ids=lambda s: s.name)
    def test_legal_triggers_match_the_machine(self, step: Step) -> None:
        """The derived table and a live machine agree on the legal next triggers of every step."""
        assert legal_triggers(step) == Lifecycle(step).legal()

    def test_table_uses_only_declared_triggers(self) -> None:
        """Every ORDER entry comes from a row of TRANSITIONS, and every row's trigger appears in ORDER."""
        assert {t for (_, t) in ORDER} == set(TRIGGERS)

    def test_every_step_is_reachable_from_idle(self) -> None:
        """combat.txt §How a Single Action Resolves: each step of the lifecycle can be reached from rest."""
        seen, frontier = {S.IDLE}, [S.IDLE]
        while frontier:
            step = frontier.pop()
            for (source, _), dest in ORDER.items():
                if source is step and dest not in seen:
                    seen.add(dest)
                    frontier.append(dest)
        assert seen == set(Step)

    def test_every_step_can_come_to_rest(self) -> None:
        """No dead ends: from every step some path leads to settled, cancelled or idle."""
        resting = set(AT_REST)
        changed = True
        while changed:
            changed = False
            for (source, _), dest in ORDER.items():
                if dest in resting and source not in resting:
                    resting.add(source)
                    changed = True
        assert resting == set(Step)

    @pytest.mark.parametrize("step", [S.WINDOW_OPEN, S.ROUTING_OPEN, S.SAVER_ROLLED], ids=lambda s: s.name)
    def test_no_new_action_mid_action(self, step: Step) -> None:
        """§How a Single Action Resolves: an action cannot be declared while another is unresolved."""
        assert (step, "declare") not in ORDER

    @pytest.mark.parametrize("step", AT_REST, ids=lambda s: s.name)
    def test_rest_steps_accept_a_new_action(self, step: Step) -> None:
        """The rest steps (idle, settled, cancelled) accept a declaration, a check and set-up."""
        assert {"declare", "roll_check", "setup"} <= set(legal_triggers(step))


class TestPhaseOrderTable:
    @pytest.mark.parametrize("phase", list(Phase), ids=lambda p: p.name)
    @pytest.mark.parametrize("trigger", PHASE_TRIGGERS)
    def test_phase_order_is_what_the_machine_allows(self, phase: Phase, trigger: str) -> None:
        """PHASE_ORDER is derived from the phase machine: firing succeeds iff (phase, trigger) is in PHASE_ORDER,
        landing where it says."""
        flow = FightFlow(phase)
        if (phase, trigger) in PHASE_ORDER:
            flow.trigger(trigger)  # type: ignore[attr-defined]  # added by transitions
            assert flow.phase is PHASE_ORDER[(phase, trigger)]
        else:
            with pytest.raises(MachineError):
                flow.trigger(trigger)  # type: ignore[attr-defined]
            assert flow.phase is phase

    @pytest.mark.parametrize("phase", list(Phase), ids=lambda p: p.name)
    def test_legal_phase_triggers_match_the_machine(self, phase: Phase) -> None:
        """The derived phase table and a live phase machine agree on what is legal in every phase."""
        assert sorted(t for (p, t) in PHASE_ORDER if p is phase) == FightFlow(phase).legal()

    def test_phase_table_uses_only_declared_triggers(self) -> None:
        """Every PHASE_ORDER entry comes from a row of PHASE_TRANSITIONS, and every row's trigger appears in it."""
        assert {t for (_, t) in PHASE_ORDER} == set(PHASE_TRIGGERS)


class TestNoAutoTransitions:
    def test_auto_transitions_are_off(self) -> None:
        """The machine is built with auto_transitions=False."""
        assert Lifecycle().machine.auto_transitions is False

    @pytest.mark.parametrize("step", list(Step), ids=lambda s: s.name)
    def test_no_to_triggers(self, step: Step) -> None:
        """No ``to_<state>`` shortcut exists from any step, so no step can be jumped to."""
        lifecycle = Lifecycle(step)
        assert not [t for t in lifecycle.machine.get_triggers(step.name) if t.startswith("to_")]
        assert not hasattr(lifecycle, f"to_{S.SETTLED.name}")

    def test_a_to_trigger_is_illegal(self) -> None:
        """Firing ``to_SETTLED`` from idle is an IllegalOrder, not a jump."""
        lifecycle = Lifecycle()
        with pytest.raises(IllegalOrder):
            lifecycle.fire("to_SETTLED")
        assert lifecycle.step is S.IDLE


class TestIllegalOrder:
    def test_names_step_and_legal_triggers(self) -> None:
        """Rolling the hit before paying is refused, naming the step 'declared' and the legal cancel, pay, roll_save."""
        lifecycle = Lifecycle()
        lifecycle.fire("declare")
        with pytest.raises(IllegalOrder) as info:
            lifecycle.fire("roll_hit")
        err = info.value
        legal = ["cancel", "decide", "open_reactions", "pay", "roll_save"]
        assert (err.step, err.trigger, err.legal, err.rule) == (S.DECLARED, "roll_hit", legal, "lifecycle")
        said = str(err)
        assert "'declared'" in said and "cancel, decide, open_reactions, pay, roll_save" in said and "roll hit" in said
        assert lifecycle.step is S.DECLARED

    def test_unknown_trigger(self) -> None:
        """A trigger the machine does not know is refused the same way and leaves the step unchanged."""
        lifecycle = Lifecycle(S.WINDOW_OPEN)
        with pytest.raises(IllegalOrder) as info:
            lifecycle.fire("fly")
        legal = ["cancel", "choose_defense", "decide", "decline", "pay"]  # an extension's decision and its cost too
        assert info.value.legal == legal and lifecycle.step is S.WINDOW_OPEN

    def test_is_a_rule_violation(self) -> None:
        """An illegal order is a RuleViolation (and so an OmenError)."""
        with pytest.raises(OmenError):
            Lifecycle().fire("settle")

    def test_next_step_names_the_seq(self) -> None:
        """Replay's check: an ActionSettled at idle is refused at its seq with the legal triggers."""
        with pytest.raises(IllegalOrder) as info:
            next_step(S.IDLE, ActionSettled(action=1), seq=7)
        assert info.value.seq == 7 and "seq 7: cannot settle now" in str(info.value)
        assert info.value.legal == legal_triggers(S.IDLE)


#: The trigger each event type fires, from the lifecycle of combat.txt §How a Single Action Resolves.
EXPECTED_TRIGGER = {
    FightStarted: "setup", CombatantJoined: "setup", SeedRevealed: "setup", SeedCommitted: "setup",
    StaticCheckResolved: "resolve_check", ContestResolved: "resolve_check",
    AttackDeclared: "declare", SaveCalled: "declare", CostPaid: "pay",
    ActiveDefenseWindowOpened: "open_window", ActiveDefenseWindowSkipped: "skip_window",
    ActiveDefenseChosen: "choose_defense", ActiveDefenseDeclined: "decline",
    HitDetermined: "determine_hit", RoutingWindowOpened: "open_routing", DamageRouted: "route",
    WillConversionOffered: "offer_will_conversion", WillConversionChosen: "choose_will_conversion",
    SaveResolved: "resolve_save", DamageResolved: "resolve_damage", ResourceChanged: "change_resource",
    ConditionApplied: "apply_condition", ConditionCleared: "clear_condition",
    ActionSettled: "settle", ActionCancelled: "cancel",
    MovementDeclared: "declare", Moved: "resolve_move", AbilityUsed: "use", MomentReached: "reach",
    ReactionWindowOpened: "open_reactions",
    ReactionPassed: "pass_reaction", ReactionWindowClosed: "close_reactions", CatchWindowOpened: "open_catch",
    DecisionOpened: "decide", DecisionAnswered: "decide", DecisionClosed: "decide",
    **dict.fromkeys((AmbushStarted, AmbushDifficultySet, SurpriseDetermined, InitiativeRolled, InitiativeTied,
                     InitiativeRollOff, InitiativeAgreed, InitiativeOrderSet, RoundStarted, RoundEnded, TurnStarted,
                     TurnSkipped, TurnEnded, BonusActionsRefilled, ConditionTicked, EngagementChanged, WeaponDrawn,
                     Disengaged, CombatantLeft, FightEnded), "flow"),
}
#: The event types that, outside any action (``action`` None), are a condition taking effect (C40): ``tick``.
TICKS = (DiceRolled, DamageResolved, SaveResolved)
#: Outside every lifecycle and phase: the command opening a batch, a change of dice source, the undo markers.
OUTSIDE = {CommandIssued, DiceSourceChanged, Undone, Redone}

PURPOSE_TRIGGER = {"hit": "roll_hit", "base_defense": "roll_base_defense", "active_defense": "roll_active_defense",
                   "damage": "roll_damage", "ability_damage": "roll_damage", "healing": "roll_damage",
                   "reroll": "reroll", "save": "roll_save", "check": "roll_check", "stealth": "roll_check",
                   "perception": "roll_check", "initiative": "roll_check", "roll_off": "roll_check"}


class TestTriggerOf:
    def test_table_covers_every_event_type(self) -> None:
        """Every event type but DiceRolled, CatchAnswered and the UNORDERED ones has a fixed trigger; theirs depend
        on a field, and the UNORDERED ones have none."""
        assert set(EXPECTED_TRIGGER) | {DiceRolled, CatchAnswered} | set(UNORDERED) == set(EVENT_TYPES)
        assert not set(UNORDERED) & (set(EXPECTED_TRIGGER) | {DiceRolled, CatchAnswered})

    def test_unordered_events(self) -> None:
        """UNORDERED is exactly command_issued, dice_source_changed and the undo and redo markers."""
        assert set(UNORDERED) == OUTSIDE and len(UNORDERED) == len(OUTSIDE)

    @pytest.mark.parametrize("kind", EVENT_TYPES, ids=lambda k: k.__name__)
    @settings(max_examples=5, deadline=None)
    @given(data=st.data())
    def test_every_event_type_maps(self, kind: type[EventBase], data: st.DataObject) -> None:
        """Every event of every ordered type maps to a trigger of the machine; an UNORDERED one has none (KeyError)."""
        event = data.draw(from_type_info(mi.type_info(kind)))
        if kind in UNORDERED:
            with pytest.raises(KeyError):
                trigger_of(event)
            return
        trigger = trigger_of(event)
        assert trigger in TRIGGERS
        if kind in TICKS and event.action is None and getattr(event, "purpose", "damage") in ("damage", "save"):
            assert trigger == "tick"  # a condition's damage or save at its timing, outside any action (C40)
        elif kind is DiceRolled:
            assert trigger == PURPOSE_TRIGGER[event.purpose]
        elif kind is CatchAnswered:
            assert trigger == ("catch" if event.caught else "decline_catch")
        else:
            assert trigger == EXPECTED_TRIGGER[kind]

    @pytest.mark.parametrize("kind", [k for k in EVENT_TYPES if k not in UNORDERED], ids=lambda k: k.__name__)
    @settings(max_examples=5, deadline=None)
    @given(data=st.data())
    def test_the_per_type_tables_agree_with_the_rules_of_each_event(self, kind: type[EventBase],
                                                                    data: st.DataObject) -> None:
        """The triggers looked up per event type are those ``trigger_for`` and ``phase_trigger_for`` give the event,
        and ``next_phase`` goes where PHASE_ORDER says from every phase, or refuses (OutOfPhase) where it has no row."""
        event = data.draw(from_type_info(mi.type_info(kind)))
        assert trigger_of(event) == trigger_for(kind, event)
        phase_trigger = phase_trigger_for(kind, event)
        for phase in Phase:
            if (phase, phase_trigger) in PHASE_ORDER:
                assert next_phase(phase, event) is PHASE_ORDER[(phase, phase_trigger)]
            else:
                with pytest.raises(OutOfPhase) as refused:
                    next_phase(phase, event, 7)
                assert (refused.value.phase, refused.value.trigger, refused.value.seq) == (phase, phase_trigger, 7)

    @pytest.mark.parametrize("purpose", sorted(PURPOSE_TRIGGER))
    def test_roll_purposes(self, purpose: RollPurpose) -> None:
        """C29: each roll fires the trigger of its place in the lifecycle; checks, ambush and initiative are checks."""
        rolled = DiceRolled(counter=1, purpose=purpose, roller="kael", dice=(), source="scripted", action=3)
        assert trigger_of(rolled) == PURPOSE_TRIGGER[purpose]

    @pytest.mark.parametrize("purpose", ["damage", "save"])
    def test_a_conditions_dice_outside_any_action_tick(self, purpose: RollPurpose) -> None:
        """C25, C40: a condition's damage or save dice at its timing carry no action: they fire ``tick``, legal at
        rest and only in the rounds (phase trigger ``turn``); inside an action the same purpose fires its own."""
        rolled = DiceRolled(counter=1, purpose=purpose, roller="kael", dice=(), source="scripted")
        assert (trigger_of(rolled), phase_trigger_of(rolled)) == ("tick", "turn")
        assert next_step(S.IDLE, rolled) is S.IDLE and next_step(S.SETTLED, rolled) is S.SETTLED
        with pytest.raises(IllegalOrder):
            next_step(S.SAVE_RESOLVED, rolled)
        with pytest.raises(OutOfPhase):
            next_phase(Phase.SETUP, rolled)
        assert next_phase(Phase.ROUNDS, rolled) is Phase.ROUNDS

    def test_a_conditions_damage_and_save_outside_any_action_tick(self) -> None:
        """C40: a damage_resolved or save_resolved with no action is a condition's, and fires ``tick``; with an
        action, its lifecycle trigger as before."""
        burn = DamageResolved(action=None, target="kael", damage_type="fire", source="Burning",
                              terms=DamageTerms(dice=3, raw=3), steps=(), final=3, resource="hp")
        assert (trigger_of(burn), phase_trigger_of(burn)) == ("tick", "turn")
        assert trigger_of(replace(burn, action=4)) == "resolve_damage"
        with pytest.raises(IllegalOrder):
            next_step(S.HIT_DETERMINED, burn)


def walk(triggers: list[str], start: Step = S.IDLE) -> list[Step]:
    """The steps a live machine passes through, firing ``triggers`` from ``start``."""
    lifecycle = Lifecycle(start)
    return [lifecycle.fire(t) for t in triggers]


def declared_at(fight: Fight) -> int:
    """The seq of the fight's first declaration (attack or save): the action id its events carry."""
    return next(rec.seq for rec in fight.events if isinstance(rec.event, (AttackDeclared, SaveCalled)))


def log_path(fight: Fight, action: int) -> tuple[list[str], list[Step]]:
    """The triggers and steps of one action of a fight's log (its events and the rolls among them), via ORDER;
    the UNORDERED events (the command opening each batch) are no step of it and are passed over."""
    step, triggers, steps, inside = S.IDLE, [], [], False
    for payload in payloads(fight):
        if isinstance(payload, UNORDERED):
            continue
        trigger = trigger_of(payload)
        step = ORDER[(step, trigger)]
        mine = getattr(payload, "action", None) == action
        inside = inside or mine
        if mine or (inside and isinstance(payload, DiceRolled)):
            triggers.append(trigger)
            steps.append(step)
        if mine and isinstance(payload, (ActionSettled, ActionCancelled)):
            inside = False
    return triggers, steps


ATTACK_TRIGGERS = ["declare", "pay", "roll_hit", "roll_base_defense", "open_window", "choose_defense", "pay",
                   "roll_active_defense", "determine_hit", "resolve_damage", "change_resource",
                   "apply_condition", "settle"]
ATTACK_STEPS = [S.DECLARED, S.COSTS_PAID, S.HIT_ROLLED, S.BASE_DEFENSE_ROLLED, S.WINDOW_OPEN, S.DEFENSE_CHOSEN,
                S.DEFENSE_PAID, S.WINDOW_CLOSED, S.HIT_DETERMINED, S.DAMAGE_RESOLVED, S.DAMAGE_RESOLVED,
                S.DAMAGE_RESOLVED, S.SETTLED]
SAVE_TRIGGERS = ["declare", "pay", "roll_save", "roll_save", "resolve_save", "roll_damage", "resolve_damage",
                 "change_resource", "apply_condition", "settle"]
SAVE_STEPS = [S.DECLARED, S.COSTS_PAID, S.SAVER_ROLLED, S.OPPOSING_ROLLED, S.SAVE_RESOLVED, S.SAVE_RESOLVED,
              S.DAMAGE_RESOLVED, S.DAMAGE_RESOLVED, S.DAMAGE_RESOLVED, S.SETTLED]

#: Kael defends with a shield (Block Rating 1); Vesh swings a sword (WD 2). All dice d6, all bonuses 0.
KAEL = replace(sheet("kael", hp=20), shield=Shield(block_rating=1))
VESH = replace(sheet("vesh", side="raiders", hp=20), weapons=(Weapon(id="sword", weapon_damage=2),))


class TestPaths:
    def test_full_attack_on_the_machine(self) -> None:
        """§Resolving an Attack: declare, pay, hit, base defense, window, Block paid, rolled, hit, damage, settle."""
        assert walk(ATTACK_TRIGGERS) == ATTACK_STEPS

    def test_full_attack_in_a_fight(self) -> None:
        """§Resolving an Attack: hit 6 + 6 = 12 beats base 1, and 1 + Block 2 (12 > 3); 6 + WD 2 = 8 lands."""
        fight = new_fight(KAEL, VESH, faces=[6, 6, 1, 1])
        fight.attack("vesh", "kael", branches=Branches(on_hit=(ApplyCondition(condition="Prone"),)))
        assert fight.waiting_for is not None
        fight.defend("kael", "block")
        action = declared_at(fight)
        assert next(e for e in payloads(fight) if isinstance(e, AttackDeclared)).action == action
        assert log_path(fight, action) == (ATTACK_TRIGGERS, ATTACK_STEPS)
        assert fight.state.combatants["kael"].hp == 12
        assert_legal_order(fight.events)
        assert_replays(fight)

    def test_missed_attack_skips_the_window(self) -> None:
        """C8: hit 1 + 1 = 2 does not beat base 6: the window is skipped, a miss is determined, the action settles."""
        fight = new_fight(KAEL, VESH, faces=[1, 1, 6])
        fight.attack("vesh", "kael")
        assert log_path(fight, declared_at(fight)) == (
            ["declare", "pay", "roll_hit", "roll_base_defense", "skip_window", "determine_hit", "settle"],
            [S.DECLARED, S.COSTS_PAID, S.HIT_ROLLED, S.BASE_DEFENSE_ROLLED, S.WINDOW_CLOSED, S.HIT_DETERMINED,
             S.SETTLED])
        assert_legal_order(fight.events)
        assert_replays(fight)

    def test_helpless_target_rolls_no_base_defense(self) -> None:
        """C10: against an incapacitated target no RES die is rolled: from the hit roll straight to a skipped window."""
        fight = new_fight(KAEL, VESH, faces=[3, 3])
        fight.apply_condition("kael", "Incapacitated")
        fight.attack("vesh", "kael")
        triggers, steps = log_path(fight, declared_at(fight))
        assert triggers[:5] == ["declare", "pay", "roll_hit", "skip_window", "determine_hit"]
        assert steps[:5] == [S.DECLARED, S.COSTS_PAID, S.HIT_ROLLED, S.WINDOW_CLOSED, S.HIT_DETERMINED]
        assert_legal_order(fight.events)
        assert_replays(fight)

    def test_save_on_the_machine(self) -> None:
        """combat.txt §Resolving a Save: declared, paid, saver's die, opposing die, resolved, consequences, settled."""
        assert walk(SAVE_TRIGGERS) == SAVE_STEPS

    def test_save_in_a_fight(self) -> None:
        """C15, C25, C29: Kael fails 1 vs 6; 1d6 (4) fire lands, then Prone, in written order."""
        fight = new_fight(KAEL, VESH, faces=[1, 6, 4])
        fight.call_save("vesh", "kael", SaveEffect(name="flask", save="AGI", against="INT", on_failure=(
            DealDamage(dice=DamageDice(die="d6"), damage_type="fire"), ApplyCondition(condition="Prone"))))
        assert log_path(fight, declared_at(fight)) == (SAVE_TRIGGERS, SAVE_STEPS)
        assert fight.state.combatants["kael"].hp == 16
        assert_legal_order(fight.events)
        assert_replays(fight)

    def test_free_save_skips_paying(self) -> None:
        """A save with no Action cost goes straight from declared to the saver's die."""
        assert walk(["declare", "roll_save", "roll_save", "resolve_save", "settle"]) == [
            S.DECLARED, S.SAVER_ROLLED, S.OPPOSING_ROLLED, S.SAVE_RESOLVED, S.SETTLED]

    def test_cancelled_action(self) -> None:
        """C24: a declared and paid action may be cancelled; costs stay paid and a new action may follow."""
        assert walk(["declare", "pay", "cancel", "declare"]) == [S.DECLARED, S.COSTS_PAID, S.CANCELLED, S.DECLARED]

    def test_rogue_routing(self) -> None:
        """C12: after hit and crit are determined a routing window may open; the route returns to damage."""
        assert walk(["open_routing", "route", "resolve_damage", "settle"], S.HIT_DETERMINED) == [
            S.ROUTING_OPEN, S.HIT_DETERMINED, S.DAMAGE_RESOLVED, S.SETTLED]


class TestUnordered:
    """Events outside every lifecycle and phase come at any step and in any phase, and move neither."""

    def test_a_command_opens_its_batch_mid_action(self) -> None:
        """The defend command's command_issued comes while the attack waits at its window, between the window
        and the defense chosen, and the log is still in legal order."""
        fight = new_fight(KAEL, VESH, faces=[6, 6, 1, 1])
        fight.attack("vesh", "kael")
        assert fight.state.step is S.WINDOW_OPEN
        fight.defend("kael", "block")
        kinds = [type(rec.event) for rec in fight.events]
        at = kinds.index(ActiveDefenseWindowOpened)
        assert kinds[at + 1:at + 3] == [CommandIssued, ActiveDefenseChosen]
        assert fight.events[at + 1].seq == fight.events[at + 1].batch
        assert_legal_order(fight.events)
        assert_replays(fight)

    def test_command_issued_and_dice_source_changed_move_no_step(self) -> None:
        """Folded at an open Active Defense window, command_issued and dice_source_changed leave the step, the
        phase and the frames as they were; the dice source change only sets the dice mode."""
        fight = new_fight(KAEL, VESH, faces=[6, 6, 1])
        fight.attack("vesh", "kael")
        state = fight.state
        issued = evolve(state, CommandIssued(command=AnswerActiveDefense(defender="kael", defense="block")),
                        state.version + 1)
        changed = evolve(issued, DiceSourceChanged(before="scripted", after="manual"), state.version + 2,
                         state.version + 1)
        for after in (issued, changed):
            assert (after.step, after.phase, after.stack) == (S.WINDOW_OPEN, state.phase, state.stack)
        assert (issued.dice_mode, changed.dice_mode) == ("scripted", "manual")

    def test_command_issued_in_any_phase(self) -> None:
        """After the fight ended (where no action may come) a command_issued still folds, the phase unchanged."""
        fight = new_fight(KAEL, VESH)
        fight.end_fight(note="done")
        state = fight.state
        assert state.phase is Phase.ENDED
        after = evolve(state, CommandIssued(command=RevealSeed(seed="00")), state.version + 1)
        assert (after.phase, after.step) == (Phase.ENDED, S.IDLE)

    @pytest.mark.parametrize("marker", [Undone(from_seq=4, to_seq=5), Redone(undo_seq=6)], ids=["undone", "redone"])
    def test_undo_markers_are_not_folded(self, marker: Event) -> None:
        """Undo markers are applied by the walk, not folded: evolve refuses them as an IllegalOrder."""
        fight = new_fight(KAEL, VESH)
        with pytest.raises(IllegalOrder):
            evolve(fight.state, marker, fight.state.version + 1)


# -- random command sequences against a real fight ---------------------------------------------------

#: Three d6-everywhere combatants with every kind of gear, so scripted faces 1..6 always fit.
ANA = replace(sheet("ana", hp=14, STR=(6, 2), RES=(6, 1)),
              weapons=(Weapon(id="sword", weapon_damage=2, hit_bonus=1, parry_rating=1),),
              armor=Armor(rating=1), shield=Shield(block_rating=2), training=Training(hit_bonus=1, veteran_shield=True))
BRAM = replace(sheet("bram", side="raiders", hp=12, AGI=(6, 2)),
               weapons=(Weapon(id="dagger", properties=frozenset({"finesse", "magical"}), damage_type="piercing",
                               weapon_damage=1),
                        Weapon(id="bow", properties=frozenset({"ranged"}), damage_type="piercing", weapon_damage=2)),
               features=Features(rogue_routing=True, rage=RageDice(count=2, die="d6")), resistances={"physical": 1})
CYRA = replace(sheet("cyra", side="raiders", hp=10, will=8, INT=(6, 3)),
               weapons=(Weapon(id="staff", properties=frozenset({"spell", "magical"}), damage_type="arcane",
                               weapon_damage=1),
                        Weapon(id="wand", properties=frozenset({"spell", "ranged"}), damage_type="fire")),
               wielding=("staff", "wand"), armor=Armor(rating=1, magical=True),
               shield=Shield(block_rating=1, magical=True),
               features=Features(will_conversion=True), incoming_damage=IncomingDamage(multiply=0.5, add=1))
FIGHTERS = ("ana", "bram", "cyra")
SHEETS = {s.id: s for s in (ANA, BRAM, CYRA)}
WEAPONS = (None, "sword", "dagger", "bow", "staff", "wand")
CONDITIONS = ("Prone", "Unseen", "Incapacitated", "Paralysed", "Exhausted", "Dying", "Burning")

EFFECTS = (
    SaveEffect(name="flask", save="AGI", against="INT",
               on_failure=(DealDamage(dice=DamageDice(count=2, die="d6"), damage_type="fire"),
                           ApplyCondition(condition="Prone"))),
    SaveEffect(name="shove", save="STR", against="STR", spell=False, action_cost=0,
               on_success=(ClearCondition(condition="Prone", to="actor"),),
               on_failure=(DealDamage(flat=3, damage_type="crushing"),
                           ApplyCondition(condition="Exhausted", stacks=2))),
    SaveEffect(name="backlash", save="RES", against="FCS",
               on_failure=(DealDamage(flat=2, damage_type="psychic", to="actor"),)),
    SaveEffect(name="bad", save="AGI", against="INT", on_failure=(ApplyCondition(condition="Burning"),)),
    SaveEffect(name="worse", save="AGI", against="INT", on_success=(DealDamage(flat=1, damage_type="sonic"),)),
)
BRANCHES = (
    Branches(),
    Branches(on_hit=(ApplyCondition(condition="Prone"),),
             on_miss=(DealDamage(flat=1, damage_type="fire", to="actor"),)),
    Branches(on_crit=(ApplyCondition(condition="Exhausted"),)),
)

fighter = st.sampled_from(FIGHTERS)
defenses = st.sampled_from(list[ActiveDefense | None](["dodge", "parry", "block", None]))


def command(data: st.DataObject, fight: Fight) -> tuple[str, Callable[[], object]]:
    """Draw one random command (biased towards answering an open window) as a label and a thunk."""
    window = fight.waiting_for
    if window is not None and data.draw(st.booleans(), label="answer the window"):
        if isinstance(window, ActiveDefenseWindowOpened):
            choice = data.draw(defenses, label="defense")
            return f"defend {choice}", lambda: fight.defend(window.defender, choice)
        die = data.draw(st.none() | st.integers(0, 3), label="die")
        assert isinstance(window, RoutingWindowOpened), window
        return f"route {die}", lambda: fight.route(window.attacker, die)
    kind = data.draw(st.sampled_from(["attack", "defend", "route", "save", "apply", "clear", "check", "contest",
                                      "cancel"]), label="command")
    if kind == "attack":
        attacker = data.draw(fighter, label="attacker")
        others = tuple(f for f in FIGHTERS if f != attacker)
        target = data.draw(st.sampled_from(others) | fighter, label="target")
        own = tuple(w.id for w in SHEETS[attacker].weapons)
        weapon = data.draw(st.sampled_from((None, *own)) | st.sampled_from(WEAPONS), label="weapon")
        unarmed, high = data.draw(st.booleans(), label="unarmed"), data.draw(st.booleans(), label="high ground")
        rage = data.draw(st.sampled_from([False, False, True]), label="rage")
        circle = data.draw(st.none() | st.tuples(st.integers(1, 5), st.integers(1, 3)), label="encircled")
        branches = data.draw(st.sampled_from(BRANCHES), label="branches")
        return (f"attack {attacker}->{target} {weapon}",
                lambda: fight.attack(attacker, target, weapon=weapon, unarmed=unarmed, rage=rage, high_ground=high,
                                     encircled=circle, branches=branches))
    if kind == "defend":
        who = data.draw(fighter, label="defender")
        choice = data.draw(defenses, label="defense")
        return f"defend {who} {choice}", lambda: fight.defend(who, choice)
    if kind == "route":
        who, die = data.draw(fighter), data.draw(st.none() | st.integers(0, 3))
        return f"route {who} {die}", lambda: fight.route(who, die)
    if kind == "save":
        caller, saver = data.draw(fighter, label="caller"), data.draw(fighter, label="saver")
        effect = data.draw(st.sampled_from(EFFECTS), label="effect")
        return f"save {effect.name} {caller}->{saver}", lambda: fight.call_save(caller, saver, effect)
    if kind in ("apply", "clear"):
        who, condition = data.draw(fighter), data.draw(st.sampled_from(CONDITIONS), label="condition")
        if kind == "apply":
            stacks = data.draw(st.integers(1, 3), label="stacks")
            return f"apply {condition} x{stacks} {who}", lambda: fight.apply_condition(who, condition, stacks)
        return f"clear {condition} {who}", lambda: fight.clear_condition(who, condition)
    if kind == "check":
        who, difficulty = data.draw(fighter), data.draw(st.integers(0, 12), label="difficulty")
        return f"check {who}", lambda: fight.static_check(CheckSpec(who=who, attribute="AGI"), difficulty)
    if kind == "contest":
        a, b = data.draw(fighter), data.draw(fighter)
        return f"contest {a} {b}", lambda: fight.contest(CheckSpec(who=a, skill="Stealth"),
                                                         CheckSpec(who=b, skill="Perception"))
    return "cancel", lambda: fight.cancel("changed my mind")


class TestRandomCommands:
    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(data=st.data())
    def test_rejected_commands_change_nothing_and_the_log_replays(self, data: st.DataObject) -> None:
        """Each command appends or raises an OmenError changing nothing; the log is in legal order and replays."""
        fight = new_fight(ANA, BRAM, CYRA)
        for _ in range(data.draw(st.integers(1, 30), label="commands")):
            scripted(fight).feed(data.draw(st.lists(st.integers(1, 6), min_size=6, max_size=6), label="faces"))
            label, run = command(data, fight)
            before, version, remaining, state = fight.events, fight.version, scripted(fight).remaining, fight.state
            try:
                run()
            except OmenError as exc:
                event(f"{label.split()[0]} refused ({type(exc).__name__})")
                assert fight.events == before, label
                assert (fight.version, scripted(fight).remaining) == (version, remaining), label
                assert fight.state == state, label
            else:
                event(f"{label.split()[0]} accepted")
                assert fight.version > version, label
        assert_legal_order(fight.events)
        assert_replays(fight)


def test_a_command_after_the_end_says_the_fight_has_ended() -> None:
    """§Your Turn, C33: any command but undo, redo and reveal_seed after fight_ended is refused saying the fight has
    ended, then what is legal (it read only "cannot act ... in the ended phase")."""
    from omen_core.machine import OutOfPhase, Phase

    said = str(OutOfPhase(Phase.ENDED, "act"))
    assert said.startswith("[phase] the fight has ended: cannot act (attack, save, check, move) in the ended phase")
