"""Encounter files (omen_replay/simulate/encounter.py): a scenario's set-up, refused with its line when it is more."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from omen_core.commands import BeginAmbush, Engage, RollInitiative
from omen_replay.scenario import ScenarioError
from omen_replay.simulate.encounter import load_encounter
from tests.replay.simulate.encounters import EMBER_FORD_2V2, fighter, mirror_duel


def test_roll_initiative_comes_last_by_itself() -> None:
    """An encounter without commands is set up by rolling initiative (C19); its sides are in joining order."""
    encounter = load_encounter(EMBER_FORD_2V2)
    assert encounter.setup == (RollInitiative(),) and encounter.sides == ("wardens", "raiders")
    assert len(encounter.digest) == 64


def test_set_up_commands_are_kept_in_order(tmp_path: Path) -> None:
    """C17, C23: positions and an ambush come before the initiative roll, as written."""
    path = tmp_path / "ambush.toml"
    path.write_text('[fight]\nid = "a"\n' + fighter("ash", "north", 9) + fighter("bo", "south", 9)
                    + '[[commands]]\ncommand = "engage"\nwho = "ash"\nothers = ["bo"]\n'
                    + '[[commands]]\ncommand = "begin_ambush"\nambushers = ["ash"]\ndefenders = ["bo"]\n'
                    + 'time_waited = "three_minutes_or_more"\n')
    setup = load_encounter(path).setup
    assert [type(c) for c in setup] == [Engage, BeginAmbush, RollInitiative]


def test_the_digest_is_of_what_is_played_not_where_it_was_read(tmp_path: Path) -> None:
    """The same encounter in two files has one digest; another Bo another."""
    a = load_encounter(mirror_duel(tmp_path, name="a"))
    b = load_encounter(mirror_duel(tmp_path, name="a2"))
    assert a.digest != b.digest  # the fight id differs
    same = tmp_path / "copy"
    same.mkdir()
    assert load_encounter(mirror_duel(same, name="a")).digest == a.digest


def test_the_digest_is_the_same_in_every_process() -> None:
    """The Ember Ford's hatchet has two properties (a set): the digest no longer follows the process's hash seed (a
    comparison's run recorded another digest than the encounter loaded again)."""
    code = ("import sys; from omen_replay.simulate.encounter import load_encounter; "
            "print(load_encounter(sys.argv[1]).digest)")
    digests = {subprocess.run([sys.executable, "-c", code, str(EMBER_FORD_2V2)], capture_output=True, text=True,
                              check=True, env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout
               for seed in (1, 2, 3, 4)}
    assert digests == {load_encounter(EMBER_FORD_2V2).digest + "\n"}


@pytest.mark.parametrize(("extra", "field", "said"), [
    ('dice = "scripted"\n', "$.fight.dice", "seeded from the run's --seed"),
    ('dice = "seeded"\nseed = "' + "ab" * 16 + '"\n', "$.fight.seed", "gives no seed"),
    ('dice = "seeded"\nnext_seeds = ["' + "ab" * 16 + '"]\n', "$.fight.next_seeds", "gives no next_seeds"),
])
def test_dice_of_its_own_are_refused(tmp_path: Path, extra: str, field: str, said: str) -> None:
    """An encounter's dice are seeded per fight: scripted dice or a seed of its own is refused, naming the file,
    the line the field is written on (the third) and the field."""
    path = tmp_path / "e.toml"
    path.write_text('[fight]\nid = "e"\n' + extra + fighter("ash", "north", 9) + fighter("bo", "south", 9))
    line = 4 if "seed" in field else 3
    with pytest.raises(ScenarioError, match=f"e.toml:{line}: .*{said}.*at \\{field}"):
        load_encounter(path)


def test_an_encounter_may_say_its_dice_are_seeded(tmp_path: Path) -> None:
    """docs/simulate.md: the file leaves dice out or says "seeded" (and gives no seed: the run's --seed gives each
    fight's); it said "a seeded fight needs seed = ..." and refused every such file."""
    path = tmp_path / "e.toml"
    path.write_text('[fight]\nid = "e"\ndice = "seeded"\n' + fighter("ash", "north", 9) + fighter("bo", "south", 9))
    assert load_encounter(path).setup == (RollInitiative(),)


@pytest.mark.parametrize(("command", "said"), [
    ('command = "end_turn"\nwho = "ash"\n', "end_turn: an encounter's commands only set the fight up"),
    ('command = "roll_initiative"\ndice = [3, 4]\n', "roll_initiative: an encounter's dice are seeded per fight"),
])
def test_commands_beyond_the_set_up_are_refused_with_their_line(tmp_path: Path, command: str, said: str) -> None:
    """A command that plays the fight, or carries faces, is refused naming the file, its line and the field."""
    path = tmp_path / "e.toml"
    text = '[fight]\nid = "e"\n' + fighter("ash", "north", 9) + fighter("bo", "south", 9) + "[[commands]]\n"
    line = text.count("\n")
    path.write_text(text + command)
    with pytest.raises(ScenarioError, match=f"e.toml:{line}: {said}") as info:
        load_encounter(path)
    assert "$.commands[0]" in str(info.value)


def test_one_side_is_no_encounter(tmp_path: Path) -> None:
    """C33: a fight needs two sides to end in a defeat: refused at the first [[combatants]] line."""
    path = tmp_path / "e.toml"
    path.write_text('[fight]\nid = "e"\n' + fighter("ash", "north", 9) + fighter("bo", "north", 9))
    with pytest.raises(ScenarioError, match=r"e\.toml:4: an encounter needs combatants on at least two sides"):
        load_encounter(path)
