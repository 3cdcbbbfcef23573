"""One simulated fight (omen_replay/simulate/play.py): derived from the run's seed and its index, recorded truly,
played again event for event."""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omen_core import Fight, MemoryStore, ScriptedDice
from omen_core.commands import Command, DeclareAttack, EndTurn
from omen_core.content import DealDamage, SaveEffect, Weapon
from omen_core.events import (
    ActionCancelled,
    AttackDeclared,
    CommandIssued,
    DamageResolved,
    FightEnded,
    HitDetermined,
    ResourceChanged,
    RoundStarted,
    SurpriseDetermined,
    TurnStarted,
    WeaponDrawn,
)
from omen_core.parts import Encircled, Modifier, Situational
from omen_replay.simulate.encounter import Encounter, load_encounter
from omen_replay.simulate.play import (
    Played,
    Rules,
    SimulationError,
    encircled_claim,
    fight_seed,
    play,
    sources,
)
from omen_replay.simulate.policies import Aggressive, Decision
from omen_replay.verify import verify_store
from tests.replay.simulate.encounters import (
    EMBER_FORD_2V2,
    interrupted_last,
    mutual_knockout,
    smiter_duel,
    surprised_unarmed,
    wolves_and_troll,
)
from tests.sheets import sheet as make_sheet

SEED = bytes(range(16))


@pytest.fixture(scope="module")
def ember_ford() -> Encounter:
    return load_encounter(EMBER_FORD_2V2)


def content(played: Played) -> list[bytes]:
    """A fight's log by content: each event's seq, batch and body (not its envelope's clock or hashes)."""
    return [msgspec.json.encode((r.seq, r.batch, r.event)) for r in played.fight.events]


class TestSources:
    def test_a_fights_seed_is_the_hmac_of_the_runs_seed_over_its_index(self) -> None:
        """Fight 42's seed is HMAC-SHA256(run seed, "omen simulate fight 42"), its id sim-42, its clock the run's
        start for every event."""
        src = sources(SEED, 42, 1_700_000_000_000)
        assert src.seed == hmac.new(SEED, b"omen simulate fight 42", hashlib.sha256).digest() == fight_seed(SEED, 42)
        assert (src.fight_id, src.clock(), src.clock()) == ("sim-42", 1_700_000_000_000, 1_700_000_000_000)

    def test_each_side_has_its_own_random_source_per_fight(self) -> None:
        """The policies' random sources differ by side and by fight, and are the same every time."""
        a, b = sources(SEED, 1, 0), sources(SEED, 2, 0)
        draws = {(x, side): x.rng(side).random() for x in (a, b) for side in ("north", "south")}
        assert len(set(draws.values())) == 4
        assert a.rng("north").random() == draws[a, "north"]


class TestAFight:
    @settings(max_examples=8, deadline=None)
    @given(st.integers(0, 10_000), st.sampled_from(("aggressive", "cautious", "random")))
    def test_the_record_is_what_the_log_says(self, index: int, name: str) -> None:
        """C33, C13: a fight's record agrees with its log: the winner is the side standing when the other was
        defeated (fight_ended), the rounds are the last round started, each combatant's damage taken is the sum
        of the final damage the log deals it, HP and Will are the end state's, and the log verifies."""
        encounter = load_encounter(EMBER_FORD_2V2)
        played = play(encounter, Rules(policies={"wardens": name}), index, SEED, 0)
        rec, events = played.record, [r.event for r in played.fight.events]
        ended = next(e for e in events if isinstance(e, FightEnded))
        loser = ended.side
        assert rec.defeated == loser and rec.winner == next(s for s in encounter.sides if s != loser)
        assert rec.rounds == max(e.round for e in events if isinstance(e, RoundStarted))
        state = played.fight.state
        for sheet, c in zip(encounter.combatants, rec.combatants, strict=True):
            taken = sum(e.final for e in events if isinstance(e, DamageResolved) and e.target == sheet.id)
            assert (c.taken, c.hp, c.will) == (taken, state.combatants[sheet.id].hp, state.combatants[sheet.id].will)
            assert (c.down is not None) == state.combatants[sheet.id].down
        assert sum(c.dealt for c in rec.combatants) == sum(c.taken for c in rec.combatants)
        assert rec.first_down in {s.id for s in encounter.combatants}
        assert verify_store(played.fight.store, played.fight.fight_id).clean

    def test_the_same_index_is_the_same_fight_event_for_event(self, ember_ford: Encounter) -> None:
        """Fight 5 played twice gives the same log, event for event (content: seq, batch and every field), and
        the same record; fight 6 is another fight."""
        rules = Rules(policies={})
        first, again, other = (play(ember_ford, rules, i, SEED, 0) for i in (5, 5, 6))
        assert content(first) == content(again) and first.record == again.record
        assert content(other) != content(first)

    def test_the_policies_give_their_name_to_the_commands_they_choose(self, ember_ford: Encounter) -> None:
        """Every command a policy chose is recorded as given by ``simulate:NAME``; the set-up by ``simulate``."""
        played = play(ember_ford, Rules(policies={"raiders": "cautious"}), 3, SEED, 0)
        by = {r.event.by for r in played.fight.events if isinstance(r.event, CommandIssued)}
        assert by == {"simulate", "simulate:aggressive", "simulate:cautious"}

    def test_a_fight_no_side_wins_in_time_is_a_draw(self, ember_ford: Encounter) -> None:
        """With a limit of 1 round, a fight still going after it ends as the GM's call: no winner, no side
        defeated, 1 round."""
        records = [play(ember_ford, Rules(policies={}, max_rounds=1), i, SEED, 0).record for i in range(12)]
        draws = [r for r in records if r.winner is None]
        assert draws and all((r.defeated, r.ended, r.rounds) == (None, "round_limit", 1) for r in draws)

    def test_a_draw_ends_in_the_last_round_the_log_plays(self, ember_ford: Encounter) -> None:
        """With a limit of 2 rounds, a draw is ended by the GM at the end of round 2, before round 3 starts: the
        log's last round is the record's, and no turn starts after the limit."""
        played = [play(ember_ford, Rules(policies={}, max_rounds=2), i, SEED, 0) for i in range(4)]
        draws = [p for p in played if p.record.ended == "round_limit"]
        assert [p.record.index for p in draws] == [2, 3]
        for p in draws:
            events = [r.event for r in p.fight.events]
            assert max(e.round for e in events if isinstance(e, RoundStarted)) == p.record.rounds == 2
            assert events[-3] == FightEnded(reason="gm", note="no side defeated in 2 rounds")

    def test_a_last_turn_ending_by_itself_ends_the_fight_within_the_limit(self, tmp_path: Path) -> None:
        """C36, C24: with a limit of 1 round, in fights 4 and 10 Ash, last in the order, attacks Bo, whose
        Interrupt would drop him to 0 HP and so end his turn, and the round, by itself (round 2 began, its first
        turn and Bonus Actions with it, before the GM's end): the GM ends the fight in place of the command that
        would, the Interrupt and Ash's attack called off; no fight of twelve starts round 2, each record says 1
        round."""
        encounter = load_encounter(interrupted_last(tmp_path))
        played = [play(encounter, Rules(policies={}, max_rounds=1), i, SEED, 0,
                       policies={"north": Lurker(), "south": Lurker()}) for i in range(12)]
        for p in played:
            events = [r.event for r in p.fight.events]
            assert [e for e in events if isinstance(e, RoundStarted)] == [RoundStarted(round=1)]
            assert not [e for e in events if isinstance(e, TurnStarted) and e.round != 1]
            assert (p.record.ended, p.record.rounds) == ("round_limit", 1)
        cut = [p.record.index for p in played if isinstance(p.fight.events[-4].event, ActionCancelled)]
        assert cut == [4, 10]
        events = [r.event for r in played[4].fight.events]
        ash, bo = [e for e in events if isinstance(e, AttackDeclared)][-2:]
        assert (ash.attacker, bo.attacker, bo.reaction, bo.reacting_to) == ("ash", "bo", "interrupt", ash.action)
        assert events[-5:-2] == [ActionCancelled(action=bo.action, reason="the fight ended (C33)"),
                                 ActionCancelled(action=ash.action, reason="the fight ended (C33)"),
                                 FightEnded(reason="gm", note="no side defeated in 1 round")]

    def test_a_fight_in_which_every_side_falls_at_once_is_no_draw(self, tmp_path: Path) -> None:
        """C33: when Strike Back fells Bo before Bo's blow fells Ash, the log ends the fight with south, all down
        first, defeated (fight_ended) and nobody standing: the record says every side down (``all_down``), south
        defeated, no winner, in the round it happened; a fight Ash wins outright stays a win."""
        encounter = load_encounter(mutual_knockout(tmp_path))
        records = [play(encounter, Rules(policies={}), i, SEED, 0).record for i in range(3)]
        assert [(r.winner, r.defeated, r.ended, r.rounds) for r in records] == [
            (None, "south", "all_down", 3), ("north", "south", "defeated", 1), (None, "south", "all_down", 1)]
        assert [(c.hp, c.down) for c in records[2].combatants] == [(0, 1), (0, 1)]

    def test_the_first_down_is_the_first_in_the_log(self, tmp_path: Path) -> None:
        """C33: in fight 2, Strike Back takes Bo to 0 HP before Bo's blow takes Ash there, in the same command:
        the first down is Bo, as the log has it (Ash comes first among the combatants, and went down second)."""
        encounter = load_encounter(mutual_knockout(tmp_path))
        played = play(encounter, Rules(policies={}), 2, SEED, 0)
        fallen = [r.event.who for r in played.fight.events
                  if isinstance(r.event, ResourceChanged) and r.event.resource == "hp" and r.event.after == 0]
        assert (fallen, played.record.first_down) == (["bo", "ash"], "bo")

    def test_a_triggered_abilitys_damage_is_its_owners(self, tmp_path: Path) -> None:
        """C37, C13: Strike Back's damage to Bo is dealt by Ash, its owner, not by Bo, whose attack it answered:
        in fight 2 (Bo hits Ash once; Strike Back's 3 crushing, 2 after Bo's Leathers, then Bo's sword, 6) Ash
        dealt 2 and took 6, Bo dealt 6 and took 2 (Bo was credited 8 and Ash 0)."""
        encounter = load_encounter(mutual_knockout(tmp_path))
        played = play(encounter, Rules(policies={}), 2, SEED, 0)
        dealt = [(r.event.source, r.event.target, r.event.final) for r in played.fight.events
                 if isinstance(r.event, DamageResolved)]
        assert dealt == [("Strike Back", "bo", 2), ("sword", "ash", 6)]
        ash, bo = played.record.combatants
        assert (ash.dealt, ash.taken, bo.dealt, bo.taken) == (2, 6, 6, 2)

    def test_an_abilitys_damage_on_its_users_turn_is_its_users(self, tmp_path: Path) -> None:
        """C37, C13: Smite (used on Ash's turn, its damage dealt with no save) is dealt by Ash, who used it
        (``ability_used``): Ash's damage dealt is the sum of the final damage of his Smites and sword blows, and
        what each dealt is what the other took."""
        played = play(load_encounter(smiter_duel(tmp_path)), Rules(policies={}), 0, SEED, 0)
        events = [r.event for r in played.fight.events]
        smites = [e.final for e in events if isinstance(e, DamageResolved) and e.source == "Smite"]
        by_ash = {e.action for e in events if isinstance(e, AttackDeclared) and e.attacker == "ash"}
        blows = [e.final for e in events if isinstance(e, DamageResolved) and e.action in by_ash]
        ash, bo = played.record.combatants
        assert smites and (ash.dealt, bo.taken) == (sum(smites) + sum(blows), sum(smites) + sum(blows))
        assert bo.dealt == ash.taken

    def test_a_policy_giving_a_refused_command_stops_the_fight_saying_so(self, ember_ford: Encounter) -> None:
        """A user's policy that gives a command the rules refuse stops the fight with a SimulationError naming
        the fight, the policy, the side, the command and the rule."""

        class Stubborn:
            name = "stubborn"

            def decide(self, decision: Decision) -> Command:
                return EndTurn(who="nobody")

        refused = (r"fight 0: the 'stubborn' policy of \w+ gave \w+'s .*end_turn.*refused: \[setup\] "
                   r"no combatant 'nobody'")
        with pytest.raises(SimulationError, match=refused):
            play(ember_ford, Rules(policies={}), 0, SEED, 0, policies={"wardens": Stubborn(), "raiders": Stubborn()})

    @pytest.mark.parametrize("name", ["aggressive", "cautious"])
    def test_one_whose_set_up_draw_was_dropped_draws_on_its_first_turn(self, tmp_path: Path, name: str) -> None:
        """C18, C35: Ash, Completely Surprised, cannot draw at set-up (the draw is left out) nor before his first
        turn (round 2, C21); on it he draws his sword (free on his own turn) and every attack he makes is with
        it (he fought with his fists all fight)."""
        played = play(load_encounter(surprised_unarmed(tmp_path)), Rules(policies={"north": name}), 0, SEED, 0)
        events = [r.event for r in played.fight.events]
        assert [e.tier for e in events if isinstance(e, SurpriseDetermined)] == ["complete"]
        drawn = [i for i, e in enumerate(events) if isinstance(e, WeaponDrawn)]
        assert [events[i] for i in drawn] == [WeaponDrawn(who="ash", weapon="sword", cost="free")]
        assert events.index(RoundStarted(round=2)) < drawn[0]
        swings = [(e.weapon, e.kind) for e in events if isinstance(e, AttackDeclared) and e.attacker == "ash"]
        assert swings and set(swings) == {("sword", "melee")}

    def test_a_simulation_error_survives_pickling(self) -> None:
        """A worker process sends a SimulationError back whole (index and message)."""
        import pickle

        error = pickle.loads(pickle.dumps(SimulationError(7, "no choice")))
        assert (error.index, str(error)) == (7, "fight 7: no choice")


class Lurker:
    """Ends its turns at once (but Ash's: he attacks), and answers every decision point as ``aggressive`` does:
    its Interrupts strike."""

    name = "lurker"

    def decide(self, decision: Decision) -> Command:
        if decision.kind == "turn" and decision.who != "ash":
            return next(c for c in decision.choices if isinstance(c, EndTurn))
        return Aggressive().decide(decision)


BOW = Weapon(id="bow", weapon_damage=2, properties=frozenset({"ranged"}))


def pack(*engaged: tuple[str, ...], down: tuple[str, ...] = ()) -> Fight:
    """Wolves w1 to w4 (north, w4 with a bow in hand) and a troll and an ogre (south), engaged as given (each
    tuple: who, then the others), those in ``down`` at 0 HP (Dying, C36); before initiative."""
    archer = msgspec.structs.replace(make_sheet("w4", "north"), weapons=(BOW,))
    cast = [*(make_sheet(w, "north") for w in ("w1", "w2", "w3")), archer, make_sheet("troll", "south"),
            make_sheet("ogre", "south")]
    fight = Fight.start(MemoryStore(), "e", dice=ScriptedDice([1, 6] * len(down)), clock=lambda: 0,
                        combatants=cast)
    for who, *others in engaged:
        fight.engage(who, *others)
    for who in down:  # a blow the wolf fails to save against (1 against 6, C15) takes all 20 of its HP
        fight.call_save("troll", who, SaveEffect(name="blow", save="AGI", against="STR", action_cost=0,
                                                 on_failure=(DealDamage(flat=20, damage_type="crushing"),)))
    assert all(fight.state.combatants[w].hp == 0 for w in down)
    return fight


class TestEncircled:
    @pytest.mark.parametrize(("engaged", "attack", "claim"), [
        ((("troll", "w1", "w2", "w3"),), ("w1", "troll"), (3, 1)),   # A 3 >= 2 x 1: +min(6, 2 x 2) = +4
        ((("troll", "w1", "w2"),), ("w2", "troll"), (2, 1)),          # A 2 >= 2 x 1: +2
        ((("troll", "w1", "w2", "w3"),), ("troll", "w1"), None),      # A 1 < 2 x 3: the troll is the one outnumbered
        ((("troll", "w1", "w2"), ("ogre", "w1")), ("w1", "troll"), None),  # A 2 < 2 x D 2 (troll, ogre by w1)
        ((("troll", "w1", "w2"), ("ogre", "w1")), ("w2", "troll"), (2, 1)),  # the ogre is not by w2
        ((("troll", "w1", "w2"),), ("w3", "troll"), (3, 1)),          # a melee attack engages w3 as it is declared
        ((("troll", "w1", "w2"),), ("w4", "troll"), None),            # w4 shoots from afar: not adjacent
        ((("troll", "w1", "w2", "w4"),), ("w4", "troll"), (3, 1)),    # w4 shoots from within reach: adjacent
        ((("troll", "w1", "w2", "w3"),), ("w1", "w2"), None),         # on one's own side: no claim
    ])
    def test_the_claim_follows_the_engagement(self, engaged: tuple[tuple[str, ...], ...], attack: tuple[str, str],
                                              claim: tuple[int, int] | None) -> None:
        """C26: A = the attacker's side adjacent (engaged) to the target, the attacker included; D = the target's
        side adjacent to the attacker, the target included; claimed iff A >= 2·D."""
        state = pack(*engaged).state
        found = encircled_claim(state, DeclareAttack(attacker=attack[0], target=attack[1]))
        assert found == (Encircled(attackers=claim[0], defenders=claim[1]) if claim else None)

    def test_one_down_is_not_counted(self) -> None:
        """C26, C33: w2 at 0 HP (Dying) beside the troll does not outnumber it: w1 and w2 on the troll is 1 to 1,
        no claim; w1, w2 and w3 is 2 to 1."""
        assert encircled_claim(pack(("troll", "w1", "w2"), down=("w2",)).state,
                               DeclareAttack(attacker="w1", target="troll")) is None
        assert encircled_claim(pack(("troll", "w1", "w2", "w3"), down=("w2",)).state,
                               DeclareAttack(attacker="w1", target="troll")) == Encircled(attackers=2, defenders=1)

    def test_three_wolves_on_a_troll_hit_at_plus_4(self, tmp_path: Path) -> None:
        """C26: three wolves engaged with one troll: every wolf's attack the simulator gives claims encircled 3 to
        1, and the engine adds min(6, 2 x (3 - 1)) = +4 to its hit total (it was never claimed)."""
        played = play(load_encounter(wolves_and_troll(tmp_path)), Rules(policies={}), 0, SEED, 0)
        events = [r.event for r in played.fight.events]
        wolves = {e.action: e for e in events if isinstance(e, AttackDeclared) and e.attacker.startswith("wolf")}
        first = next(iter(wolves.values()))
        assert first.situational == Situational(encircled=Encircled(attackers=3, defenders=1))
        hit = next(e for e in events if isinstance(e, HitDetermined) and e.action == first.action)
        assert hit.attack.situational == (Modifier(source="encircled, 3 vs 1 (C26)", value=4),)
        troll = [e for e in events if isinstance(e, AttackDeclared) and e.attacker == "troll"]
        assert troll and all(e.situational.encircled is None for e in troll)
