"""Tests for omen_core.state: ``evolve(state, event, seq, batch)`` folds each event, the typed frames of the actions
in progress fill their named fields as their events come, and undo's three fields move as FightState says."""

from __future__ import annotations

from pathlib import Path

import pytest
from msgspec.structs import replace

from omen_core.commands import Command, EndTurn, Redo, Undo
from omen_core.content import (
    ApplyCondition,
    CombatantSheet,
    DamageDice,
    DealDamage,
    SaveEffect,
    Shield,
    Weapon,
)
from omen_core.engine import Fight
from omen_core.events import (
    GENESIS_HASH,
    ActionCancelled,
    ActionSettled,
    ActiveDefenseChosen,
    ActiveDefenseWindowOpened,
    AttackDeclared,
    CommandIssued,
    DamageResolved,
    DiceRolled,
    DiceSourceChanged,
    Die,
    Event,
    EventBase,
    FightStarted,
    HitDetermined,
    Moved,
    MovementDeclared,
    ReactionPassed,
    ReactionWindowOpened,
    Redone,
    RollTotal,
    SaveCalled,
    SaveResolved,
    SeedRevealed,
    StaticCheckResolved,
    StoredEvent,
    Undone,
    encode_line,
    seal,
)
from omen_core.machine import IllegalOrder, Step
from omen_core.state import (
    AttackFrame,
    FightState,
    MoveFrame,
    Reaction,
    SaveFrame,
    evolve,
    is_undo_point,
)
from omen_core.walk import LinesSource, project, replay, step_through
from tests.fights import assert_replays, new_fight, pending, present
from tests.sheets import CORE, joined, sheet


def started() -> FightState:
    """The state right after a fight started (at seq 1) under the core ruleset."""
    return evolve(FightState(), FightStarted(ruleset=CORE, ruleset_hash=CORE.content_hash(), dice="manual"), 1)


def fold(fight: Fight) -> list[tuple[StoredEvent, FightState]]:
    """Each stored event of a fight without undos, with the state ``evolve`` leaves after it (folded from scratch,
    each event at its seq and batch)."""
    state, out = FightState(fight_id=fight.fight_id), []
    for rec in fight.events:
        state = evolve(state, rec.event, rec.seq, rec.batch)
        out.append((rec, state))
    return out


def after(steps: list[tuple[StoredEvent, FightState]], kind: type[EventBase], purpose: str | None = None,
          nth: int = 0) -> tuple[StoredEvent, FightState]:
    """The ``nth`` event of type ``kind`` (a roll: of ``purpose``) and the state just after it."""
    found = [(rec, state) for rec, state in steps if isinstance(rec.event, kind)
             and (purpose is None or rec.as_(DiceRolled).purpose == purpose)]
    assert len(found) > nth, f"no {kind.__name__} #{nth} in the log"
    return found[nth]


def check_replay_frames(fight: Fight, steps: list[tuple[StoredEvent, FightState]]) -> None:
    """Reading the log up to each event gives the same frames as folding it live."""
    records = fight.events
    for rec, state in steps:
        assert project(records, to_seq=rec.seq).stack == state.stack, f"seq {rec.seq}"


# -- small fights --------------------------------------------------------------------------------------------

#: The defender: all d6 +0, HP 20, a shield (Block Rating 1). The attacker: all d6 +0, a sword (WD 2).
KAEL = replace(sheet("kael", hp=20), shield=Shield(block_rating=1))
SWORD = Weapon(id="sword", weapon_damage=2)
VESH = replace(sheet("vesh", side="raiders", hp=20), weapons=(SWORD,))

#: For reactions (d20 AGI so initiative is easy to script): swords of WD 4.
BLADE = Weapon(id="sword", weapon_damage=4, damage_type="slashing")
HERO = replace(sheet("kael", "heroes", STR=(8, 2), AGI=(20, 1), RES=(6, 0), FCS=(4, 1)), weapons=(BLADE,))
RAIDER = replace(sheet("vesh", "raiders", STR=(8, 1), AGI=(20, 1), RES=(6, 1), FCS=(4, 0)), weapons=(BLADE,))


def blocked_attack() -> Fight:
    """C8, §Resolving an Attack: vesh's sword 6 + 6 = 12 beats kael's base 1 and its Block (1 + 2 = 3): 6 + WD 2
    = 8 damage (kael 20 -> 12)."""
    fight = new_fight(KAEL, VESH, faces=[6, 6, 1, 1])
    fight.attack("vesh", "kael")
    fight.defend("kael", "block")
    return fight


def duel(faces: list[int], *sheets: CombatantSheet) -> Fight:
    """kael and vesh engaged, initiative kael 15 + 1, vesh 5 + 1, round 1 played through (C20): kael's turn."""
    fight = new_fight(*(sheets or (HERO, RAIDER)), faces=[15, 5, *faces])
    fight.engage("kael", "vesh")
    fight.roll_initiative()
    while fight.state.round == 1:
        fight.end_turn(present(fight.state.turn))
    assert fight.state.turn == "kael"
    return fight


# -- evolve, event by event -------------------------------------------------------------------------------------


class TestEvolve:
    def test_fight_started_sets_the_header(self) -> None:
        """FightStarted records ruleset, dice source (and dice mode) and commitment in the state."""
        state = evolve(FightState(), FightStarted(ruleset=CORE, ruleset_hash=CORE.content_hash(), dice="seeded",
                                                  seed_commitment="a" * 64, title="T"), 1)
        assert (state.started, present(state.ruleset).name, state.dice, state.dice_mode, state.seed_commitment,
                state.title) == (True, "core", "seeded", "seeded", "a" * 64, "T")

    def test_joined_combatant_starts_at_full_resources(self) -> None:
        """C3, C20: a combatant joins with HP and Will at the maximum and 2 Bonus Actions for defence."""
        state = evolve(started(), joined(sheet("kael", hp=24, will=7)), 2)
        fighter = state.combatants["kael"]
        assert (fighter.hp, fighter.will, fighter.bonus_actions) == (24, 7, 2)

    def test_rolls_advance_the_counter(self) -> None:
        """A roll sets the fight's roll counter, which the next roll continues."""
        rolled = DiceRolled(counter=4, purpose="check", roller="kael",
                            dice=(Die(pool="check", sides=6, face=2),), source="manual")
        assert evolve(FightState(), rolled, 9).rolls == 4

    def test_seed_revealed(self) -> None:
        """SeedRevealed stores the seed."""
        assert evolve(FightState(), SeedRevealed(seed="abcd"), 1).revealed_seed == "abcd"

    def test_dice_source_changed_sets_the_dice_mode(self) -> None:
        """DiceSourceChanged moves the fight's current dice mode; the dice source it started with stays."""
        state = evolve(started(), DiceSourceChanged(before="manual", after="scripted"), 5, 4)
        assert (state.dice, state.dice_mode) == ("manual", "scripted")

    def test_evolve_is_pure(self) -> None:
        """Evolve returns a new state and leaves its input unchanged."""
        before = started()
        after_join = evolve(before, joined(sheet("kael")), 2)
        assert before.combatants == {} and "kael" in after_join.combatants

    def test_results_do_not_change_state(self) -> None:
        """A check result has no lasting effect on the state (only its roll does): mid-batch, it moves only the
        last live seq."""
        side = RollTotal(roller="kael", attribute="STR", counter=1, face=3, attribute_bonus=0, total=3)
        state = FightState()
        assert evolve(state, StaticCheckResolved(check=side, difficulty=2, outcome="success"), 6, 4) == replace(
            state, live_seq=6)

    @pytest.mark.parametrize("marker", [Undone(from_seq=2, to_seq=3), Redone(undo_seq=5)], ids=["undone", "redone"])
    def test_undo_markers_are_not_folded(self, marker: Event) -> None:
        """Undo markers are the walk's to apply: evolve refuses them."""
        with pytest.raises(IllegalOrder):
            evolve(started(), marker, 6, 5)


class TestReading:
    def test_project_tracks_position(self) -> None:
        """Reading a stored log moves the state to its last seq and hash."""
        rec = seal("f", 1, 0, GENESIS_HASH, FightStarted(ruleset=CORE, ruleset_hash=CORE.content_hash(),
                                                          dice="manual"))
        state = project([rec])
        assert (state.fight_id, state.version, state.last_hash) == ("f", 1, rec.hash)

    def test_replay_continues_from_a_state(self) -> None:
        """Reading the rest of a log on from the state of its start equals reading it all."""
        first = seal("f", 1, 0, GENESIS_HASH, FightStarted(ruleset=CORE, ruleset_hash=CORE.content_hash(),
                                                            dice="manual"))
        second = seal("f", 2, 0, first.hash, joined(sheet("kael")))
        lines = [encode_line(first), encode_line(second)]
        assert replay(LinesSource(lines), start=project([first])) == project([first, second])

    def test_a_live_fight_replays(self) -> None:
        """The state a fight keeps live (each event folded once as decided) is the state its log reads as."""
        assert_replays(blocked_attack())


# -- the typed frames -------------------------------------------------------------------------------------------


class TestAttackFrame:
    def test_declaration_opens_a_frame_with_the_weapon_from_the_sheet(self) -> None:
        """§Resolving an Attack: the declaration opens an AttackFrame holding it, with the weapon resolved from
        the attacker's sheet, its id the declaration's seq, every later step still empty."""
        steps = fold(blocked_attack())
        rec, state = after(steps, AttackDeclared)
        frame = state.pending
        assert isinstance(frame, AttackFrame) and frame.declaration == rec.event
        assert (frame.weapon, frame.actor, frame.action, frame.declared_at) == (SWORD, "vesh", rec.seq, rec.seq)
        assert (frame.step, frame.hit_roll, frame.base_defense_roll, frame.window, frame.defense,
                frame.active_defense_roll, frame.determination, frame.damage) == (
            Step.DECLARED, None, None, None, None, None, None, ())

    def test_each_step_fills_its_field(self) -> None:
        """C29, C8, C13: the hit roll, the base defense roll, the window, the defense chosen, its roll, the
        determination and the damage each land in their own field of the frame as they come."""
        fight = blocked_attack()
        steps = fold(fight)
        rec, state = after(steps, DiceRolled, "hit")
        frame = pending(state, AttackFrame)
        assert (frame.hit_roll, frame.base_defense_roll) == (rec.event, None)
        assert [d.face for d in rec.as_(DiceRolled).dice] == [6, 6]
        rec, state = after(steps, DiceRolled, "base_defense")
        frame = pending(state, AttackFrame)
        assert (frame.base_defense_roll, frame.window) == (rec.event, None)
        rec, state = after(steps, ActiveDefenseWindowOpened)
        frame = pending(state, AttackFrame)
        assert (frame.window, frame.defense, state.step) == (rec.event, None, Step.WINDOW_OPEN)
        rec, state = after(steps, ActiveDefenseChosen)
        frame = pending(state, AttackFrame)
        assert (frame.defense, present(frame.defense).defense) == (rec.event, "block")
        assert frame.active_defense_roll is None
        rec, state = after(steps, DiceRolled, "active_defense")
        frame = pending(state, AttackFrame)
        assert (frame.active_defense_roll, frame.determination) == (rec.event, None)
        rec, state = after(steps, HitDetermined)
        frame = pending(state, AttackFrame)
        assert (frame.determination, present(frame.determination).hit) == (rec.event, True)
        assert frame.damage == ()
        rec, state = after(steps, DamageResolved)
        frame = pending(state, AttackFrame)
        assert frame.damage == (rec.event,) and rec.as_(DamageResolved).final == 8
        assert (frame.hit_roll, frame.window) == (after(steps, DiceRolled, "hit")[0].event,
                                                                  after(steps, ActiveDefenseWindowOpened)[0].event)
        rec, state = after(steps, ActionSettled)
        assert state.stack == () and state.combatants["kael"].hp == 12
        check_replay_frames(fight, steps)

    def test_every_event_of_the_action_carries_its_declaration_seq(self) -> None:
        """Action ids are declaration seqs: every event that names an action names the seq of its declaration."""
        steps = fold(blocked_attack())
        declared = after(steps, AttackDeclared)[0].seq
        named = [getattr(rec.event, "action", None) for rec, _ in steps]
        named = [action for action in named if action is not None]
        assert named and set(named) == {declared}

    def test_declared_at_is_never_reused_after_an_undo(self) -> None:
        """An attack declared again after its first declaration was undone gets the seq of its new declaration."""
        fight = new_fight(KAEL, VESH, faces=[6, 6, 1, 6, 6, 1])
        fight.attack("vesh", "kael")
        first = pending(fight.state, AttackFrame).declared_at
        fight.undo()
        assert fight.state.at_rest
        fight.attack("vesh", "kael")
        frame = pending(fight.state, AttackFrame)
        seqs = [rec.seq for rec in fight.events if isinstance(rec.event, AttackDeclared)]
        assert seqs == [first, frame.declared_at] and first < frame.declared_at == frame.action
        assert project(fight.events).pending == frame


class TestSaveFrame:
    def test_saver_roll_then_opposing_roll_then_resolution(self) -> None:
        """C15, C29, C25: the saver's die fills saver_roll, the caller's opposing_roll, then the resolution; the
        failure's 1d6 fire (4) is a damage roll and damage of the save's frame."""
        effect = SaveEffect(name="flask", save="AGI", against="INT", on_failure=(
            DealDamage(dice=DamageDice(die="d6"), damage_type="fire"), ApplyCondition(condition="Prone")))
        fight = new_fight(KAEL, VESH, faces=[1, 6, 4])
        fight.call_save("vesh", "kael", effect)
        steps = fold(fight)
        rec, state = after(steps, SaveCalled)
        frame = state.pending
        assert isinstance(frame, SaveFrame) and frame.declaration == rec.event
        assert (frame.actor, frame.action, frame.declared_at, frame.saver_roll, frame.opposing_roll,
                frame.resolution) == ("vesh", rec.seq, rec.seq, None, None, None)
        saver, state = after(steps, DiceRolled, "save", 0)
        frame = pending(state, SaveFrame)
        assert (saver.as_(DiceRolled).roller, frame.saver_roll, frame.opposing_roll) == ("kael", saver.event,
                                                                                              None)
        opposing, state = after(steps, DiceRolled, "save", 1)
        frame = pending(state, SaveFrame)
        assert (opposing.as_(DiceRolled).roller, frame.saver_roll, frame.opposing_roll) == (
            "vesh", saver.event, opposing.event)
        assert frame.resolution is None
        rec, state = after(steps, SaveResolved)
        frame = pending(state, SaveFrame)
        assert (frame.resolution, rec.as_(SaveResolved).success) == (rec.event, False)
        rolled, state = after(steps, DiceRolled, "damage")
        frame = pending(state, SaveFrame)
        assert frame.damage_rolls == (rolled.event,) and frame.damage == ()
        dealt, state = after(steps, DamageResolved)
        frame = pending(state, SaveFrame)
        assert frame.damage == (dealt.event,) and dealt.as_(DamageResolved).final == 4
        assert after(steps, ActionSettled)[1].stack == ()
        check_replay_frames(fight, steps)


class TestMoveFrame:
    def test_moved_fills_the_frame_after_the_window(self) -> None:
        """C23: kael's movement out of vesh's reach opens a MoveFrame; vesh's pass is recorded, then the movement
        completes into ``moved``."""
        fight = duel([])
        fight.move("kael", leaves=["vesh"])
        fight.pass_reaction("vesh")
        steps = fold(fight)
        rec, state = after(steps, MovementDeclared)
        frame = state.pending
        assert isinstance(frame, MoveFrame) and frame.declaration == rec.event
        assert (frame.actor, frame.action, frame.declared_at, frame.moved) == ("kael", rec.seq, rec.seq, None)
        opened, state = after(steps, ReactionWindowOpened)
        frame = pending(state, MoveFrame)
        assert (frame.reaction_window, frame.answered, frame.window_done) == (
            opened.event, frozenset(), False)
        _, state = after(steps, ReactionPassed)
        frame = pending(state, MoveFrame)
        assert (frame.passed, frame.answered, frame.window_done) == (
            ("vesh",), frozenset({"vesh"}), True)
        moved, state = after(steps, Moved)
        frame = pending(state, MoveFrame)
        assert frame.moved == moved.event and moved.as_(Moved).left == ("vesh",)
        assert after(steps, ActionSettled)[1].stack == ()
        check_replay_frames(fight, steps)


class TestReactions:
    def test_attack_of_opportunity_is_recorded_on_the_movement(self) -> None:
        """C22, C23: vesh's Attack of Opportunity (6 + 1 + 1 = 8 vs 2, declined: a hit) nests on kael's movement;
        when it settles it is a Reaction with hit on the movement's frame, which then completes."""
        fight = duel([6, 1, 2])
        fight.move("kael", leaves=["vesh"])
        fight.react("vesh")
        steps = fold(fight)
        move = after(steps, MovementDeclared)[0].seq
        strike, state = after(steps, AttackDeclared)
        assert [f.action for f in state.stack] == [move, strike.seq]
        assert strike.as_(AttackDeclared).reacting_to == move
        fight.defend("kael", None)
        steps = fold(fight)
        _, state = after(steps, ActionSettled, nth=0)
        assert [f.action for f in state.stack] == [move]
        frame = pending(state, MoveFrame)
        assert frame.reactions == (Reaction(who="vesh", action=strike.seq, hit=True),)
        assert (frame.answered, frame.window_done, frame.interrupted) == (frozenset({"vesh"}), True, False)
        assert pending(after(steps, Moved)[1], MoveFrame).reactions == frame.reactions
        assert fight.state.at_rest and fight.state.combatants["kael"].hp == 9
        check_replay_frames(fight, steps)

    def test_interrupt_that_hits_interrupts_the_action(self) -> None:
        """C24: vesh's Interrupt (8 vs 2, declined: a hit) is recorded on kael's attack as a Reaction with hit,
        so the attack is interrupted and then cancelled."""
        fight = duel([6, 1, 2])
        fight.attack("kael", "vesh")
        fight.react("vesh")
        fight.defend("kael", None)
        steps = fold(fight)
        attack, _ = after(steps, AttackDeclared, nth=0)
        interrupt, _ = after(steps, AttackDeclared, nth=1)
        _, state = after(steps, ActionSettled)
        frame = state.pending
        assert isinstance(frame, AttackFrame) and frame.action == attack.seq
        assert frame.reactions == (Reaction(who="vesh", action=interrupt.seq, hit=True),)
        assert frame.interrupted and frame.window_done and frame.hit_roll is None
        cancelled, state = after(steps, ActionCancelled)
        assert cancelled.as_(ActionCancelled).action == attack.seq and state.stack == ()
        check_replay_frames(fight, steps)

    def test_interrupt_that_misses_is_recorded_without_hit(self) -> None:
        """C24: vesh's Interrupt misses (1 + 1 + 1 = 3 vs kael's base 6): a Reaction without hit, and kael's attack
        goes on (9 vs 2)."""
        fight = duel([1, 1, 6, 6, 1, 1])
        fight.attack("kael", "vesh")
        fight.react("vesh")
        steps = fold(fight)
        attack, _ = after(steps, AttackDeclared, nth=0)
        interrupt, _ = after(steps, AttackDeclared, nth=1)
        _, state = after(steps, ActionSettled, nth=0)
        frame = pending(state, AttackFrame)
        assert frame.action == attack.seq
        assert frame.reactions == (Reaction(who="vesh", action=interrupt.seq, hit=False),)
        assert not frame.interrupted and frame.window_done
        hit, state = after(steps, HitDetermined, nth=1)
        determined = hit.as_(HitDetermined)
        assert determined.action == attack.seq and pending(state, AttackFrame).determination == determined
        assert (determined.attack.total, determined.defense.total, determined.hit) == (9, 2, True)
        check_replay_frames(fight, steps)

    def test_a_caught_interrupt_is_recorded_without_hit(self) -> None:
        """C22, C24: a caught attack has none of its on-hit effects, so a caught Interrupt cancels nothing. The log
        was recorded before the Catch needed a ranged attack (docs/rulings.md "A weapon is thrown only in a ranged
        attack"): x's Interrupt (#21) with a hatchet marked only ``thrown``, 10 against y's 3, a hit, which y caught
        (#31, #32); folded, it is a Reaction without hit on y's attack (#18): the window may close and the attack is
        not interrupted (the recording went on to cancel it, #36)."""
        lines = (Path(__file__).resolve().parent / "data" / "caught-interrupt.jsonl").read_bytes().splitlines()
        state = replay(LinesSource(lines), to_seq=33)
        frame = pending(state, AttackFrame)
        assert (frame.action, frame.reactions) == (18, (Reaction(who="x", action=21, hit=False),))
        assert (frame.window_done, frame.interrupted) == (True, False)


# -- undo's fields ----------------------------------------------------------------------------------------------


def command(seq: int, what: Command) -> tuple[Event, int, int]:
    """A batch start: the command_issued of ``what`` at ``seq``, as (event, seq, batch)."""
    return CommandIssued(command=what), seq, seq


class TestIsUndoPoint:
    def test_a_batch_start_at_rest(self) -> None:
        """A command's first event, with no action in progress before it, is an undo point."""
        event, seq, batch = command(4, EndTurn(who="kael"))
        assert is_undo_point(started(), event, seq, batch)

    def test_not_the_first_event(self) -> None:
        """The fight's first event (seq 1) is no undo point: there is nothing before it to go back to."""
        event = FightStarted(ruleset=CORE, ruleset_hash=CORE.content_hash(), dice="manual")
        assert not is_undo_point(FightState(), event, 1, 1)
        assert is_undo_point(started(), joined(sheet("kael")), 2, 2)

    def test_not_inside_a_batch(self) -> None:
        """An event after the first of its batch is no undo point."""
        assert not is_undo_point(started(), joined(sheet("kael")), 5, 4)

    @pytest.mark.parametrize("event", [CommandIssued(command=Undo()), CommandIssued(command=Redo()),
                                       Undone(from_seq=2, to_seq=3), Redone(undo_seq=4)],
                             ids=["undo command", "redo command", "undone", "redone"])
    def test_not_an_undo_batch(self, event: Event) -> None:
        """An undo or redo batch is no undo point: undo never goes back to an undo."""
        assert not is_undo_point(started(), event, 6, 6)

    def test_not_mid_action(self) -> None:
        """A batch that starts while an action waits at a window (kael's defend) is no undo point."""
        fight = new_fight(KAEL, VESH, faces=[6, 6, 1, 1])
        fight.attack("vesh", "kael")
        waiting = fight.state
        assert waiting.pending is not None
        event, seq, batch = command(waiting.version + 1, EndTurn(who="kael"))
        assert not is_undo_point(waiting, event, seq, batch)

    def test_exactly_where_it_holds_in_a_log(self) -> None:
        """Over a whole log (joins, an attack answered in a second command, undos, redos, a new command) the undo
        points are exactly the batch starts at rest, not seq 1, not undo batches, not mid-action."""
        fight = blocked_attack()
        fight.undo()
        fight.undo()
        fight.redo()
        fight.apply_condition("kael", "Prone")
        lines = [encode_line(rec) for rec in fight.events]
        points, expected = [], []
        for step in step_through(LinesSource(lines)):
            rec = step.rec
            if is_undo_point(step.before, rec.event, rec.seq, rec.batch):
                points.append(rec.seq)
            undo_batch = isinstance(rec.event, CommandIssued) and isinstance(rec.event.command, (Undo, Redo))
            if rec.seq == rec.batch and rec.seq > 1 and step.before.at_rest and not undo_batch:
                expected.append(rec.seq)
        # joins 2, 3; the attack 4 (its defend batch at 11 is mid-action); undos 19, 21 and the redo 23 are not;
        # the condition at 25
        assert points == expected == [2, 3, 4, 25]


class TestUndoFields:
    def test_a_live_command_moves_live_seq_and_the_undo_point(self) -> None:
        """A live command's batch start at rest is the new undo point; each live event moves live_seq; a command
        that starts mid-action leaves the undo point where the action began."""
        fight = new_fight(KAEL, VESH, faces=[6, 6, 1, 1])
        assert (fight.state.undo_point, fight.state.live_seq) == (3, 3)
        fight.attack("vesh", "kael")
        declared = pending(fight.state, AttackFrame).declared_at
        assert (fight.state.undo_point, fight.state.live_seq) == (4, fight.version) and declared > 4
        fight.defend("kael", "block")
        assert (fight.state.undo_point, fight.state.live_seq, fight.state.redo_stack) == (4, fight.version, ())
        assert_replays(fight)

    def test_undo_goes_back_and_stacks_the_undo(self) -> None:
        """An undo voids from the undo point to live_seq; the state goes back to the one before (its undo point and
        live_seq too) with the undo on the redo stack; a second undo stacks on the first."""
        fight = blocked_attack()
        end = fight.version
        undone = fight.undo()
        first = fight.version
        assert (undone.from_seq, undone.to_seq) == (4, end)
        assert (fight.state.undo_point, fight.state.live_seq, fight.state.redo_stack) == (3, 3, (first,))
        undone = fight.undo()
        assert (undone.from_seq, undone.to_seq) == (3, 3)
        assert (fight.state.undo_point, fight.state.live_seq, fight.state.redo_stack) == (2, 2, (first, fight.version))
        assert_replays(fight)

    def test_redo_takes_the_last_undo_back(self) -> None:
        """A redo takes back the last undo on the stack, last first, restoring undo point and live_seq."""
        fight = blocked_attack()
        end = fight.version
        fight.undo()
        first = fight.version
        fight.undo()
        redone = fight.redo()
        assert redone.undo_seq == first + 2
        assert (fight.state.undo_point, fight.state.live_seq, fight.state.redo_stack) == (3, 3, (first,))
        assert fight.redo().undo_seq == first
        assert (fight.state.undo_point, fight.state.live_seq, fight.state.redo_stack) == (4, end, ())
        assert fight.state.combatants["kael"].hp == 12
        assert_replays(fight)

    def test_a_live_command_ends_what_a_redo_could_take_back(self) -> None:
        """A live command after an undo empties the redo stack: the undo can no longer be redone."""
        fight = blocked_attack()
        fight.undo()
        assert fight.state.redo_stack
        fight.apply_condition("kael", "Prone")
        batch = fight.version - 1
        assert (fight.state.undo_point, fight.state.live_seq, fight.state.redo_stack) == (batch, fight.version, ())
        assert_replays(fight)

    def test_hand_built_batches(self) -> None:
        """Evolve alone: a batch start clears the redo stack and opens an undo point, a later event of its batch
        only moves live_seq, and an undo command's batch moves none of the three."""
        state = replace(started(), redo_stack=(9,), undo_point=2, live_seq=3)
        opened = evolve(state, *command(11, EndTurn(who="kael")))
        assert (opened.undo_point, opened.live_seq, opened.redo_stack) == (11, 11, ())
        inside = evolve(state, SeedRevealed(seed="ab"), 12, 11)
        assert (inside.undo_point, inside.live_seq, inside.redo_stack) == (2, 12, (9,))
        undoing = evolve(state, *command(11, Undo()))
        assert (undoing.undo_point, undoing.live_seq, undoing.redo_stack) == (2, 3, (9,))


class TestFieldEffects:
    @pytest.mark.parametrize("path", sorted(Path(__file__).resolve().parents[1].glob("fixtures/**/fight.jsonl")),
                             ids=lambda p: p.parent.name)
    def test_field_effects_are_the_effects_as_fields(self, path: Path) -> None:
        """Along every golden fixture, an effect given as fields (set in the fold's one copy of the state) changes
        the state exactly as its function in EFFECTS does, and sets none of the fields the fold itself sets."""
        from omen_core.events import Undone, decode_line
        from omen_core.state import EFFECTS, FIELD_EFFECTS, evolve

        state, seen = FightState(), 0
        for line in path.read_bytes().splitlines():
            rec = decode_line(line)
            fields = FIELD_EFFECTS.get(type(rec.event))
            if fields is not None:
                changes = fields(state, rec.event)
                assert not set(changes) & {"phase", "stack", "live_seq", "redo_stack", "undo_point", "version"}
                assert replace(state, **changes) == EFFECTS[type(rec.event)](state, rec.event)
                seen += 1
            if isinstance(rec.event, Undone):
                break  # the walk applies undo markers; the events before are enough here
            state = evolve(state, rec.event, rec.seq, rec.batch)
        assert seen
