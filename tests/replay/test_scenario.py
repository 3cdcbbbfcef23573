"""Tests for omen_replay.scenario: loading, errors that name file, line and field, and running scenarios."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from omen_core.events import CommandIssued, DiceRolled
from omen_core import MemoryStore
from omen_core.decide import AnswerActiveDefense
from omen_core.events import (
    ActiveDefenseChosen,
    ActiveDefenseDeclined,
    ActiveDefenseWindowOpened,
    BonusActionsRefilled,
    CommandIssued,
    HitDetermined,
    ReactionPassed,
    ReactionWindowOpened,
)
from omen_replay.scenario import ScenarioError, load_scenario, run_scenario
from tests.fights import assert_legal_order

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "scenarios.md").read_text()
BLOCKS = re.findall(r"```toml\n(.*?)```", DOC, re.S)
DUEL = BLOCKS[0]
MINIMAL = '[fight]\nid = "m"\n\n[[combatants]]\nsheet = "kael.toml"\n'


def write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    """Write a scenario file and return its path."""
    path = tmp_path / name
    path.write_text(text)
    return path


class TestDocumentedScenario:
    def test_complete_example_runs(self, tmp_path):
        """The complete scenario of docs/scenarios.md runs: Bo (6 + 2 = 8) acts before Ash (3 + 1 = 4, C19), so on
        Ash's turn Bo, adjacent with 2 Bonus Actions and past his first turn, gets an Interrupt window (C24) and
        passes; Ash's 5 + 2 + 2 = 9 against Bo's 3 + 1 = 4 + Dodge 6 + 2 = 12 misses (C8); in round 2 Bo's turn
        refills his Bonus Actions 1 -> 2 (C20)."""
        fight = run_scenario(load_scenario(write(tmp_path, DUEL)), MemoryStore())
        events = [e.event for e in fight.events]
        assert fight.state.order == ("bo", "ash")
        window = next(e for e in events if isinstance(e, ReactionWindowOpened))
        assert (window.reaction, window.responders) == ("interrupt", ("bo",))
        assert [e.who for e in events if isinstance(e, ReactionPassed)] == ["bo"]
        hit = [e for e in events if isinstance(e, HitDetermined)][-1]
        assert (hit.attack.total, hit.defense.total, hit.hit) == (9, 12, False)
        assert any(isinstance(e, ActiveDefenseChosen) for e in events)
        refills = [(e.who, e.before, e.after) for e in events if isinstance(e, BonusActionsRefilled)]
        assert refills == [("bo", 1, 2)]
        assert (fight.state.round, fight.state.turn) == (2, "bo")
        assert fight.state.combatants["bo"].hp == 10 and fight.state.combatants["bo"].bonus_actions == 2
        assert_legal_order(fight.events)

    @pytest.mark.parametrize("snippet", BLOCKS[1:], ids=lambda b: re.search(r'command = "(\w+)"', b)[1])
    def test_every_command_example_validates(self, tmp_path, snippet):
        """Each command example in docs/scenarios.md is a valid scenario command."""
        (tmp_path / "kael.toml").write_text((ROOT / "omen_replay" / "data" / "kael.toml").read_text())
        scenario = load_scenario(write(tmp_path, MINIMAL + "\n" + snippet))
        assert len(scenario.steps) == 1

    def test_every_command_is_documented(self):
        """Every command the engine accepts has an example (start and join come from [fight] and [[combatants]])."""
        from omen_core.decide import Command

        documented = set(re.findall(r'^command = "(\w+)"', DOC, re.M))
        assert {kind.__struct_config__.tag for kind in Command.__args__} - {"start_fight", "join"} <= documented

    def test_quoted_errors_are_real(self, tmp_path):
        """The two errors quoted in docs/scenarios.md are what omen says, file, line and field."""
        quoted = re.findall(r"^duel\.toml:(.*)$", DOC, re.M)
        edits = [('defender = "bo"', "defender = 7"), ('defense = "dodge"', 'defense = "block"')]
        for (old, new), message in zip(edits, quoted, strict=True):
            path = write(tmp_path, DUEL.replace(old, new), "duel.toml")
            with pytest.raises(ScenarioError) as info:
                run_scenario(load_scenario(path), MemoryStore())
            assert str(info.value) == f"{path}:{message}"


class TestErrors:
    @pytest.mark.parametrize("text, line, path, words", [
        ('[fight]\nid = "x"\ndice = "loaded"\n', 3, "$.fight.dice", "Invalid enum value 'loaded'"),
        ('[fight]\nid = "x"\n\n[extra]\n', 4, "$.extra", "unknown table"),
        ('[fight]\nid = "x"\ndice = "seeded"\nseed = "abcd"\n', 4, "$.fight.seed", "16 bytes"),
        ('[fight]\nid = "x"\nseed = "00"\n', 3, "$.fight.seed", "only for"),
        ('[fight]\nid = "x"\n\n[[commands]]\ncommand = "teleport"\n', 5, "$.commands[0].command", "teleport"),
        ('[fight]\nid = "x"\n\n[[commands]]\ncommand = "end_turn"\nwho = "a"\ndice = ["six"]\n', 7,
         "$.commands[0].dice[0]", "Expected `int`, got `str`"),
        ('[fight]\nid = "x"\n\n[[combatants]]\nsheet = "nope.toml"\n', 5, "$.combatants[0].sheet", "cannot read"),
        ('[fight]\nid = "x"\n\n[[commands]]\nwho = "a"\n', 4, "$.commands[0]", "needs a `command"),
        ('[fight\nid = "x"\n', 1, "$", "not valid TOML"),
    ])
    def test_error_names_file_line_and_field(self, tmp_path, text, line, path, words):
        """A malformed scenario is a ScenarioError with the file, the line and the JSON path of the field."""
        file = write(tmp_path, text)
        with pytest.raises(ScenarioError) as info:
            load_scenario(file)
        err = info.value
        assert (err.source, err.line, err.path) == (str(file), line, path) and words in str(err)

    def test_leaving_the_defense_out_declines(self, tmp_path):
        """An answer with no ``defense`` declines the window (C8), as docs/scenarios.md says: no AGI die is
        rolled and Ash's 9 beats Bo's base defense 3 + 1 = 4 (§Hit Determination); no crit (FCS 2 + 0 vs
        RES 3 + 1, C7), so Bo takes 5 + 2 STR + 4 WD = 11 (C12), no armor: 10 -> 0, and with him the south is
        defeated (§Your Turn)."""
        before_ash_ends = DUEL.rsplit('[[commands]]\ncommand = "end_turn"', 1)[0]
        text = re.sub(r'defense = "dodge"\ndice = \[6\][^\n]*\n', '', before_ash_ends)
        assert "dodge" not in text and "pass_reaction" in text
        fight = run_scenario(load_scenario(write(tmp_path, text)), MemoryStore())
        hit = [e.event for e in fight.events if isinstance(e.event, HitDetermined)][-1]
        assert (hit.attack.total, hit.defense.total, hit.hit, hit.crit) == (9, 4, True, False)
        assert any(isinstance(e.event, ActiveDefenseDeclined) for e in fight.events)
        assert fight.state.combatants["bo"].hp == 0
        assert (fight.state.ending.reason, fight.state.ending.side) == ("defeated", "south")

    def test_faces_in_a_seeded_fight_are_recorded_as_manual(self, tmp_path):
        """Issue #11 (dice as input): in a seeded fight a command may carry faces typed in from physical dice; they
        are rolled instead of the seeded dice, recorded as manual, and the log still verifies."""
        from omen_replay.verify import verify

        head = DUEL.split("[[commands]]")[0].replace('dice = "scripted"', f'dice = "seeded"\nseed = "{"ab" * 16}"')
        script = ('[[commands]]\ncommand = "roll_initiative"\n\n'
                  '[[commands]]\ncommand = "static_check"\ncheck = { who = "ash", attribute = "STR" }\n'
                  'difficulty = 5\ndice = [7]\n')
        fight = run_scenario(load_scenario(write(tmp_path, head + script)), MemoryStore())
        rolls = [r.event for r in fight.events if isinstance(r.event, DiceRolled)]
        assert rolls[-1].source == "manual" and [d.face for d in rolls[-1].dice] == [7]
        assert {r.source for r in rolls[:-1]} == {"seeded"}
        assert verify(fight.events).clean

    def test_unrolled_faces_are_an_error(self, tmp_path):
        """Faces a command does not roll are reported at that command, not carried to the next one."""
        text, edits = re.subn(r'(command = "end_turn"[^\n]*\nwho = "ash"\n)', r'\1dice = [4]\n', DUEL)
        assert edits == 1
        store = MemoryStore()
        with pytest.raises(ScenarioError, match="1 face.s. given, but this command rolls 0 .no dice.: 1 face.s. too "
                                                "many; nothing was written") as info:
            run_scenario(load_scenario(write(tmp_path, text)), store)
        assert info.value.path == "$.commands[6]"
        assert not any(isinstance(r.event, CommandIssued) and r.event.command.dice == (4,)
                       for r in store.read("duel-at-dawn"))

    def test_failed_command_keeps_what_came_before(self, tmp_path):
        """A rule error stops the run; the events of the commands before it stay in the store."""
        store = MemoryStore()
        text = DUEL.replace('defense = "dodge"', 'defense = "block"')
        with pytest.raises(ScenarioError, match=r"\[C9\]"):
            run_scenario(load_scenario(write(tmp_path, text)), store)
        # Up to the Active Defense window: start, 2 joins, engage, initiative with round 1 and Bo's turn (7),
        # Bo's turn ended and Ash's begun (2), the declaration and its Interrupt window (2), the pass, the window
        # closed, the Action paid, 2 dice, the Active Defense window: 21, and the command_issued opening each of
        # the 5 commands that ran (engage, roll_initiative, end_turn, declare_attack, pass_reaction): 26.
        events = list(store.read("duel-at-dawn"))
        assert store.version("duel-at-dawn") == 26
        assert len([e for e in events if isinstance(e.event, CommandIssued)]) == 5
        assert not any(isinstance(e.event, CommandIssued) and isinstance(e.event.command, AnswerActiveDefense)
                       for e in events)
        assert isinstance(events[-1].event, ActiveDefenseWindowOpened)
        assert_legal_order(events)
