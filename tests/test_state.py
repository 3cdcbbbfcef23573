"""Tests for omen_core.state: evolve folds each event type, and fold tracks the envelope."""

from __future__ import annotations

from omen_core.events import (
    GENESIS_HASH,
    DiceRolled,
    Die,
    FightStarted,
    SeedRevealed,
    StaticCheckResolved,
    seal,
)
from omen_core.state import FightState, evolve, fold, project
from tests.sheets import CORE, joined, sheet


def started() -> FightState:
    """The state right after a fight started under the core ruleset."""
    return evolve(FightState(), FightStarted(ruleset=CORE, ruleset_hash=CORE.content_hash(), dice="manual"))


class TestEvolve:
    def test_fight_started_sets_the_header(self):
        """FightStarted records ruleset, dice source and commitment in the state."""
        state = evolve(FightState(), FightStarted(ruleset=CORE, ruleset_hash=CORE.content_hash(), dice="seeded",
                                                  seed_commitment="a" * 64, title="T"))
        assert (state.started, state.ruleset.name, state.dice, state.seed_commitment, state.title) == (
            True, "core", "seeded", "a" * 64, "T")

    def test_joined_combatant_starts_at_full_resources(self):
        """C3, C20: a combatant joins with HP and Will at the maximum and 2 Bonus Actions for defence."""
        state = evolve(started(), joined(sheet("kael", hp=24, will=7)))
        fighter = state.combatants["kael"]
        assert (fighter.hp, fighter.will, fighter.bonus_actions) == (24, 7, 2)

    def test_rolls_advance_the_counter(self):
        """A roll sets the fight's roll counter, which the next roll continues."""
        rolled = DiceRolled(counter=4, purpose="check", roller="kael",
                            dice=(Die(pool="check", sides=6, face=2),), source="manual")
        assert evolve(FightState(), rolled).rolls == 4

    def test_seed_revealed(self):
        """SeedRevealed stores the seed."""
        assert evolve(FightState(), SeedRevealed(seed="abcd")).revealed_seed == "abcd"

    def test_evolve_is_pure(self):
        """Evolve returns a new state and leaves its input unchanged."""
        before = started()
        after = evolve(before, joined(sheet("kael")))
        assert before.combatants == {} and "kael" in after.combatants


class TestFold:
    def test_fold_tracks_position(self):
        """Folding a stored event moves the state to its seq and hash."""
        rec = seal("f", 1, 0, GENESIS_HASH, FightStarted(ruleset=CORE, ruleset_hash=CORE.content_hash(), dice="manual"))
        state = fold(FightState(), rec)
        assert (state.fight_id, state.version, state.last_hash) == ("f", 1, rec.hash)

    def test_project_continues_from_a_state(self):
        """Projecting the rest of a log onto a partial state equals projecting it all."""
        first = seal("f", 1, 0, GENESIS_HASH, FightStarted(ruleset=CORE, ruleset_hash=CORE.content_hash(), dice="manual"))
        second = seal("f", 2, 0, first.hash, joined(sheet("kael")))
        assert project([second], project([first])) == project([first, second])

    def test_results_do_not_change_state(self):
        """A check result has no lasting effect on the state (only its roll does)."""
        from omen_core.events import RollTotal

        side = RollTotal(roller="kael", attribute="STR", roll=1, face=3, attribute_bonus=0, total=3)
        state = FightState()
        assert evolve(state, StaticCheckResolved(check=side, difficulty=2, outcome="success")) is state
