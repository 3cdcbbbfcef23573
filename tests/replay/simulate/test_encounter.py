"""Encounter files (omen_replay/simulate/encounter.py): a scenario's set-up, refused with its line when it is more."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from omen_core.commands import BeginAmbush, Draw, Engage, RollInitiative
from omen_replay.scenario import ScenarioError
from omen_replay.simulate.encounter import load_encounter
from tests.replay.simulate.encounters import EMBER_FORD_2V2, fighter, mirror_duel, surprised_unarmed


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
    ('seed = "' + "ab" * 16 + '"\n', "$.fight.seed", "gives no seed"),  # said "only for dice = seeded": a tester
    ('dice = "seeded"\nnext_seeds = ["' + "ab" * 16 + '"]\n', "$.fight.next_seeds", "gives no next_seeds"),
])
def test_dice_of_its_own_are_refused(tmp_path: Path, extra: str, field: str, said: str) -> None:
    """An encounter's dice are seeded per fight: scripted dice or a seed of its own is refused, naming the file,
    the line the field is written on (the third) and the field."""
    path = tmp_path / "e.toml"
    path.write_text('[fight]\nid = "e"\n' + extra + fighter("ash", "north", 9) + fighter("bo", "south", 9))
    line = 4 if "seed" in field and "dice" in extra else 3
    with pytest.raises(ScenarioError, match=f"e.toml:{line}: .*{said}.*at \\{field}"):
        load_encounter(path)


def test_a_sheet_table_under_sheet_is_refused_at_its_line(tmp_path: Path) -> None:
    """An encounter's ``[combatants.sheet]`` table is no path (a scenario's rule, docs/scenarios.md): refused at
    its line and field, where it was read as the path "{'id': 'bo', ...}"."""
    path = tmp_path / "e.toml"
    path.write_text('[fight]\nid = "e"\n' + fighter("ash", "north", 9)
                    + fighter("bo", "south", 9).replace("[[combatants]]\n", "[[combatants]]\n[combatants.sheet]\n"))
    line = path.read_text().splitlines().index("[combatants.sheet]") + 1
    with pytest.raises(ScenarioError, match=f"e.toml:{line}: `sheet` must be a path string .*, not a table: an "
                                            "inline sheet's fields go directly in the \\[\\[combatants\\]\\] "
                                            "table.* \\(at \\$.combatants\\[1\\].sheet\\)"):
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



def test_a_combatant_listed_twice_on_one_side_is_named(tmp_path: Path) -> None:
    """One sheet listed twice (one side, then) is refused as the set-up refuses a combatant listed twice, at the
    second's id and its line (it said only that an encounter needs two sides, naming no duplicate; found by a
    tester)."""
    path = tmp_path / "e.toml"
    text = '[fight]\nid = "e"\n' + fighter("ash", "north", 9) + "\n[[combatants]]\n"
    path.write_text(text + fighter("ash", "north", 9).split("[[combatants]]\n", 1)[1])
    with pytest.raises(ScenarioError) as info:
        load_encounter(path)
    assert str(info.value) == (f"{path}:{text.count(chr(10)) + 1}: the rules refuse this combatant: [setup] a "
                               "combatant with id 'ash' has already joined (at $.combatants[1].id)")


class TestTheSetUpIsTriedOnce:
    """The set-up is played once when the file is read: what the rules refuse is named where it is written, before
    any fight (it said `fight 0: [setup] no combatant 'nobody'`, or a bare rule, with no file, line or field)."""

    def test_a_set_up_command_naming_one_who_never_joined(self, tmp_path: Path) -> None:
        """An engage naming nobody: the file, the line of the field naming it and $.commands[1].others[0], in omen
        run's words (a scenario's commands name combatants that have joined by then)."""
        path = tmp_path / "e.toml"
        text = ('[fight]\nid = "e"\n' + fighter("ash", "north", 9) + fighter("bo", "south", 9)
                + '[[commands]]\ncommand = "engage"\nwho = "ash"\nothers = ["bo"]\n[[commands]]\n')
        path.write_text(text + 'command = "engage"\nwho = "ash"\nothers = ["nobody"]\n')
        with pytest.raises(ScenarioError) as info:
            load_encounter(path)
        assert str(info.value) == (f"{path}:{text.count(chr(10)) + 3}: no combatant 'nobody' has joined by this "
                                   "command (joined: ash, bo) (at $.commands[1].others[0])")

    def test_a_combatant_twice(self, tmp_path: Path) -> None:
        """A second combatant with Ash's id: its [[combatants]] entry's id, with its line."""
        path = tmp_path / "e.toml"
        text = '[fight]\nid = "e"\n' + fighter("ash", "north", 9) + fighter("bo", "south", 9) + "\n[[combatants]]\n"
        path.write_text(text + fighter("ash", "south", 9).split("[[combatants]]\n", 1)[1])
        with pytest.raises(ScenarioError) as info:
            load_encounter(path)
        assert str(info.value) == (f"{path}:{text.count(chr(10)) + 1}: the rules refuse this combatant: [setup] a "
                                   "combatant with id 'ash' has already joined (at $.combatants[2].id)")

    def test_one_sheet_file_listed_twice_is_named_in_the_encounter(self, tmp_path: Path) -> None:
        """Kael's sheet file listed a second time among four: the encounter's entry, its line and
        $.combatants[4].id (the refusal named the sheet's own file, which both entries share: a tester)."""
        sheets = Path(__file__).resolve().parents[3] / "fixtures" / "ember-ford" / "sheets"
        path = tmp_path / "e.toml"
        text = '[fight]\nid = "e"\n' + "".join(f'[[combatants]]\nsheet = "{sheets / name}.toml"\n'
                                                for name in ("kael", "brin", "vesh", "skarn"))
        path.write_text(text + f'[[combatants]]\nsheet = "{sheets / "kael"}.toml"\n')
        with pytest.raises(ScenarioError) as info:
            load_encounter(path)
        assert str(info.value) == (f"{path}:{text.count(chr(10)) + 1}: the rules refuse this combatant: [setup] a "
                                   "combatant with id 'kael' has already joined (at $.combatants[4].id)")

    def test_a_damage_type_the_ruleset_does_not_know(self, tmp_path: Path) -> None:
        """C14: an "ooze" sword: the weapon's damage_type, on the line the weapons are written."""
        path = tmp_path / "e.toml"
        text = '[fight]\nid = "e"\n' + fighter("ash", "north", 9).replace('"slashing"', '"ooze"') \
            + fighter("bo", "south", 9)
        path.write_text(text)
        line = text.splitlines().index(next(x for x in text.splitlines() if "ooze" in x)) + 1
        with pytest.raises(ScenarioError, match=rf"^{path}:{line}: the rules refuse this combatant: \[C14\] unknown "
                                                r"damage type 'ooze' in ash's weapon 'sword' .*\(at "
                                                r"\$\.combatants\[0\]\.weapons\[0\]\.damage_type\)$"):
            load_encounter(path)

    def test_a_draw_of_what_the_drawer_does_not_carry_but_not_a_surprised_one(self, tmp_path: Path) -> None:
        """C35: drawing an axe Ash does not carry is refused at its line; a draw refused because its drawer is
        Completely Surprised (C18, the ambush's dice) is not: the encounter loads, and the draw is kept."""
        path = tmp_path / "e.toml"
        text = '[fight]\nid = "e"\n' + fighter("ash", "north", 9) + fighter("bo", "south", 9) + "[[commands]]\n"
        path.write_text(text + 'command = "draw"\nwho = "ash"\nweapon = "axe"\n')
        with pytest.raises(ScenarioError, match=rf"e\.toml:{text.count(chr(10))}: draw: \[C35\] 'ash' carries no "
                                                r"weapon or shield 'axe' .*\(at \$\.commands\[0\]\)"):
            load_encounter(path)
        surprised = load_encounter(surprised_unarmed(tmp_path))
        assert Draw(who="ash", weapon="sword") in surprised.setup
