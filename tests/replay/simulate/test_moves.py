"""The simulator's legal moves (omen_replay/simulate/moves.py), held to what ``options()`` offers."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omen_core.commands import Command
from omen_core.options import options
from omen_core.seats import PLAYER_COMMANDS
from omen_core.state import FightState
from omen_replay.simulate.moves import legal_commands
from omen_replay.simulate.play import Played
from tests.random_fights import RandomFight, fights


def offered(state: FightState, who: str) -> list[tuple[str, dict[str, Any]]]:
    """What ``options()`` offers ``who`` among a player's commands, choice by choice, in order."""
    return [(o.command, c.args) for o in options(state).offers
            if o.actor == who and o.command in PLAYER_COMMANDS for c in o.choices]


def listed(state: FightState, who: str) -> list[tuple[str, dict[str, Any]]]:
    """What :func:`legal_commands` lists for ``who``, in the same form."""
    return [(str(type(c).__struct_config__.tag), _args(c)) for c in legal_commands(state, who)]


def _args(command: Command) -> dict[str, Any]:
    return {k: v for k, v in msgspec.to_builtins(command).items() if k != "command"}


def assert_same_everywhere(states: list[FightState]) -> None:
    for state in states:
        for who in state.combatants:
            assert listed(state, who) == offered(state, who), (state.version, who)


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(fights(max_commands=30))
def test_the_legal_moves_are_the_offers_at_every_state_of_random_fights(rf: RandomFight) -> None:
    """C8, C9, C18, C20-C24, C33, C35: at every state a random fight went through (set-up, ambush, initiative,
    turns, every kind of window, after undos, after the end), for every combatant, the legal moves are exactly
    the player's commands ``options()`` offers it, choice for choice and in the same order."""
    assert_same_everywhere(list(rf.states.values()))


def heads(played: Played) -> list[FightState]:
    """The state after each command of a played fight (where the simulator asks for the next one)."""
    from omen_core.walk import StoreSource, step_through

    fight = played.fight
    return [s.after for s in step_through(StoreSource(fight.store, fight.fight_id))
            if s.rec.seq == s.rec.batch + s.rec.batch_size - 1]


@settings(max_examples=6, deadline=None)
@given(st.integers(0, 100_000), st.sampled_from(("random", "cautious", "aggressive")))
def test_the_legal_moves_are_the_offers_at_every_head_of_simulated_fights(index: int, name: str) -> None:
    """At every head of a simulated Ember Ford fight (the states the policies are asked at: turns, Active Defense,
    Interrupts, Attacks of Opportunity, Catches, with the random policy's odd moves, draws and Disengages among
    them), for every combatant, the legal moves are exactly the player's commands ``options()`` offers it."""
    from omen_replay.simulate.encounter import load_encounter
    from omen_replay.simulate.play import Rules, play
    from tests.replay.simulate.encounters import EMBER_FORD_2V2

    played = play(load_encounter(EMBER_FORD_2V2), Rules(policies={"wardens": name, "raiders": "random"}), index,
                  bytes(16), 0)
    assert_same_everywhere(heads(played))
