"""Tests for omen_replay.scenario: loading, errors that name file, line and field, and running scenarios."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omen_core import MemoryStore, OmenError
from omen_core.decide import AnswerActiveDefense
from omen_core.events import (
    ActiveDefenseChosen,
    ActiveDefenseDeclined,
    ActiveDefenseWindowOpened,
    BonusActionsRefilled,
    CommandIssued,
    DiceRolled,
    HitDetermined,
    ReactionPassed,
    ReactionWindowOpened,
)
from omen_replay.scenario import ScenarioError, load_scenario, run_scenario
from tests.fights import assert_legal_order, present

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
    def test_complete_example_runs(self, tmp_path: Path) -> None:
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

    @pytest.mark.parametrize("snippet", BLOCKS[1:], ids=lambda b: present(re.search(r'command = "(\w+)"', b))[1])
    def test_every_command_example_validates(self, tmp_path: Path, snippet: str) -> None:
        """Each command example in docs/scenarios.md is a valid scenario command, among the Ember Ford's four (a
        scenario's commands name combatants it has joined)."""
        sheets = ROOT / "omen_replay" / "data" / "ember-ford" / "sheets"
        roster = "".join(f'\n[[combatants]]\nsheet = "{sheets / name}.toml"\n' for name in ("brin", "vesh", "skarn"))
        (tmp_path / "kael.toml").write_text((ROOT / "omen_replay" / "data" / "kael.toml").read_text())
        scenario = load_scenario(write(tmp_path, MINIMAL + roster + "\n" + snippet))
        assert len(scenario.steps) == 1

    def test_every_command_is_documented(self) -> None:
        """Every command the engine accepts has an example (start and join come from [fight] and [[combatants]])."""
        from omen_core.decide import Command

        documented = set(re.findall(r'^command = "(\w+)"', DOC, re.M))
        assert {kind.__struct_config__.tag for kind in Command.__args__} - {"start_fight", "join"} <= documented

    def test_quoted_errors_are_real(self, tmp_path: Path) -> None:
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
        ('[fight]\nid = "x"\n\n[[combatants]]\nsheet = "nope.toml"\n', 5, "$.combatants[0].sheet",
         "nope.toml': No such file"),  # the path it was looked for at
        ('[fight]\nid = "x"\n\n[[commands]]\nwho = "a"\n', 4, "$.commands[0]", "needs a `command"),
        ('[fight\nid = "x"\n', 1, "$", "not valid TOML"),
        ("", 1, "$.fight", "no [fight] table"),
        ('[[combatants]]\nid = "a"\n', 1, "$.fight", "no [fight] table"),
    ])
    def test_error_names_file_line_and_field(self, tmp_path: Path, text: str, line: int, path: str, words: str) -> None:
        """A malformed scenario is a ScenarioError with the file, the line and the JSON path of the field."""
        file = write(tmp_path, text)
        with pytest.raises(ScenarioError) as info:
            load_scenario(file)
        err = info.value
        assert (err.source, err.line, err.path) == (str(file), line, path) and words in str(err)

    def test_leaving_the_defense_out_declines(self, tmp_path: Path) -> None:
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
        assert (present(fight.state.ending).reason, present(fight.state.ending).side) == ("defeated", "south")

    def test_faces_in_a_seeded_fight_are_recorded_as_manual(self, tmp_path: Path) -> None:
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

    def test_a_reveal_in_a_fight_that_goes_on_rolls_on_from_the_next_seed(self, tmp_path: Path) -> None:
        """C42: a scenario whose reveal_seed comes mid-fight commits to its [fight] next_seeds in order: its later
        dice are that seed's, the same every run, and the log verifies once the next seed is revealed too."""
        from omen_core.dice import seeded_face
        from omen_replay.verify import verify

        nxt = "cd" * 16
        head = DUEL.split("[[commands]]")[0].replace(
            'dice = "scripted"', f'dice = "seeded"\nseed = "{"ab" * 16}"\nnext_seeds = ["{nxt}"]')
        script = ('[[commands]]\ncommand = "roll_initiative"\n\n[[commands]]\ncommand = "reveal_seed"\n\n'
                  '[[commands]]\ncommand = "static_check"\ncheck = { who = "ash", attribute = "STR" }\n'
                  'difficulty = 5\n\n[[commands]]\ncommand = "end_fight"\nreason = "gm"\n\n'
                  '[[commands]]\ncommand = "reveal_seed"\n')
        fight = run_scenario(load_scenario(write(tmp_path, head + script)), MemoryStore())
        last = [r.event for r in fight.events if isinstance(r.event, DiceRolled)][-1]
        die = last.dice[0]
        assert die.face == seeded_face(bytes.fromhex(nxt), "duel-at-dawn", last.counter, 0, die.sides)
        assert verify(fight.events).clean

    def test_next_seeds_must_be_seeds(self, tmp_path: Path) -> None:
        """next_seeds are for a seeded fight, each at least 16 bytes of hex; otherwise the scenario is refused at
        its field (C42)."""
        head = DUEL.split("[[commands]]")[0].replace(
            'dice = "scripted"', f'dice = "seeded"\nseed = "{"ab" * 16}"\nnext_seeds = ["abc"]')
        with pytest.raises(ScenarioError, match="next_seeds") as info:
            load_scenario(write(tmp_path, head))
        assert info.value.path == "$.fight.next_seeds[0]"

    def test_next_seeds_must_not_repeat_a_seed_revealed_before(self, tmp_path: Path) -> None:
        """C42 (found by a forging tester: next_seeds = [the fight's seed] was accepted, and the dice after the
        reveal were predictable from the log): a next seed equal to the fight's seed, or to an earlier next seed,
        is refused at its field before anything is written, naming the seed it repeats."""
        for seeds, where, repeats in ((f'["{"AB" * 16}"]', 0, "the fight's seed"),
                                      (f'["{"cd" * 16}", "{"ef" * 16}", "{"cd" * 16}"]', 2, "next_seeds[0]")):
            head = DUEL.split("[[commands]]")[0].replace(
                'dice = "scripted"', f'dice = "seeded"\nseed = "{"ab" * 16}"\nnext_seeds = {seeds}')
            with pytest.raises(ScenarioError, match=rf"next_seeds\[{where}\] is {re.escape(repeats)}, revealed "
                                                    r"before the fight commits to this one: a revealed seed is "
                                                    r"spent \(C42\)") as info:
                load_scenario(write(tmp_path, head))
            assert info.value.path == f"$.fight.next_seeds[{where}]"

    def test_a_total_past_the_bound_names_the_command_and_its_place_once(self, tmp_path: Path) -> None:
        """A command whose events would record a whole number past 2**53 - 1 (a hit modifier of 2**53 - 2 plus the
        dice) is refused at its line with one prefix and one path, the scenario's, as docs/content.md shows (found
        by a content author: "declare_attack: declare_attack: ... nothing written (at $) (at $.commands[1])")."""
        stats = ('attributes = { STR = { die = "d6" }, AGI = { die = "d6" }, INT = { die = "d6" }, '
                 'RES = { die = "d6" }, FCS = { die = "d6" } }\n')
        text = ('[fight]\nid = "big"\n\n[[combatants]]\nid = "ash"\nname = "Ash"\nside = "a"\nhp = 10\n' + stats
                + 'abilities = [{ id = "titan", name = "Titan", use = "passive", effects = [{ kind = "modifier", '
                'total = "hit", value = 9007199254740990 }] }]\n\n[[combatants]]\nid = "orc"\nname = "Orc"\n'
                'side = "b"\nhp = 10\n' + stats + '\n[[commands]]\ncommand = "roll_initiative"\ndice = [6, 1]\n\n'
                '[[commands]]\ncommand = "declare_attack"\nattacker = "ash"\ntarget = "orc"\nunarmed = true\n'
                'dice = [6, 6, 1]\n')
        path = write(tmp_path, text)
        with pytest.raises(ScenarioError) as info:
            run_scenario(load_scenario(path), MemoryStore())
        assert str(info.value) == (
            f"{path}:23: declare_attack: its active_defense_window_opened event (seq 18) would record "
            "9007199254741002 at $.event.attack_total, a whole number beyond ±9007199254740991 (2**53 - 1: the "
            "largest every JSON reader holds exactly): the numbers it adds up or multiplies (bonuses, ratings, "
            "modifiers, stacks, damage) are too large for a log; nothing written (at $.commands[1])")
        assert info.value.path == "$.commands[1]"

    def test_unrolled_faces_are_an_error(self, tmp_path: Path) -> None:
        """Faces a command does not roll are reported at that command, not carried to the next one."""
        text, edits = re.subn(r'(command = "end_turn"[^\n]*\nwho = "ash"\n)', r'\1dice = [4]\n', DUEL)
        assert edits == 1
        store = MemoryStore()
        with pytest.raises(ScenarioError, match=r"1 face given, but this command rolls 0 .no dice.: 1 face too "
                                                r"many; nothing was written") as info:
            run_scenario(load_scenario(write(tmp_path, text)), store)
        assert info.value.path == "$.commands[6]"
        assert not any(isinstance(r.event, CommandIssued) and r.event.command.dice == (4,)
                       for r in store.read("duel-at-dawn"))

    def test_failed_command_keeps_what_came_before(self, tmp_path: Path) -> None:
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


class TestSheetRefusals:
    """Issue #26, item 7: a sheet the rules refuse at set-up is named where it is written (its file, the line and
    the field), not as the scenario's ``$.combatants``."""

    def test_a_sheet_file_with_an_unknown_damage_type_names_the_sheet_and_its_field(self, tmp_path: Path) -> None:
        """Kael's weapon deals "ooze", which the ruleset does not list (C14): the error names kael.toml, the
        line of that weapon's damage_type and its path."""
        sheet = (ROOT / "fixtures" / "ember-ford" / "sheets" / "kael.toml").read_text()
        lines = sheet.splitlines()
        at = max(i for i, line in enumerate(lines) if line.startswith("damage_type"))
        lines[at] = 'damage_type = "ooze"'
        (tmp_path / "kael.toml").write_text("\n".join(lines) + "\n")
        with pytest.raises(ScenarioError) as info:
            run_scenario(load_scenario(write(tmp_path, MINIMAL)), MemoryStore())
        err = info.value
        assert err.source == str(tmp_path / "kael.toml") and err.line == at + 1
        assert re.fullmatch(r"\$\.weapons\[\d\]\.damage_type", err.path) and "[C14]" in str(err)

    def test_one_sheet_file_listed_twice_is_named_at_the_scenarios_entry(self, tmp_path: Path) -> None:
        """Kael's sheet file listed a second time: the error names the scenario, the second entry's line and
        ``$.combatants[2].id`` (it named kael.toml, which both entries share: a tester)."""
        sheets = ROOT / "fixtures" / "ember-ford" / "sheets"
        text = ('[fight]\nid = "dup"\ndice = "seeded"\nseed = "' + "ab" * 16 + '"\n'
                + "".join(f'[[combatants]]\nsheet = "{sheets / name}.toml"\n' for name in ("kael", "vesh")))
        path = tmp_path / "dup.toml"
        path.write_text(text + f'[[combatants]]\nsheet = "{sheets / "kael"}.toml"\n')
        with pytest.raises(ScenarioError) as info:
            run_scenario(load_scenario(path), MemoryStore())
        assert str(info.value) == (f"{path}:{text.count(chr(10)) + 1}: the rules refuse this combatant: [setup] a "
                                   "combatant with id 'kael' has already joined (at $.combatants[2].id)")

    def test_an_inline_sheet_names_the_scenario_and_the_combatants_field(self, tmp_path: Path) -> None:
        """The same in a sheet written inline: the scenario's line and ``$.combatants[1].resistances.ooze``."""
        text = MINIMAL + ('\n[[combatants]]\nid = "bo"\nname = "Bo"\nside = "b"\nhp = 10\n'
                          'attributes = { STR = { die = "d6" }, AGI = { die = "d6" }, INT = { die = "d6" }, '
                          'RES = { die = "d6" }, FCS = { die = "d6" } }\nresistances = { ooze = 2 }\n')
        (tmp_path / "kael.toml").write_text((ROOT / "fixtures" / "ember-ford" / "sheets" / "kael.toml").read_text())
        with pytest.raises(ScenarioError) as info:
            run_scenario(load_scenario(write(tmp_path, text)), MemoryStore())
        err = info.value
        assert (err.source, err.path, err.line) == (str(tmp_path / "s.toml"), "$.combatants[1].resistances.ooze",
                                                    text.splitlines().index("resistances = { ooze = 2 }") + 1)

    @pytest.mark.parametrize(("written", "kind"), [
        ('[combatants.sheet]\nid = "bo"\nname = "Bo"\nside = "b"\nhp = 10\n', "a table"),
        ('sheet = { id = "bo", name = "Bo" }\n', "a table"),
        ("sheet = 5\n", "an integer"),
    ])
    def test_a_sheet_that_is_no_path_is_refused_at_its_line(self, tmp_path: Path, written: str, kind: str) -> None:
        """A table (or a number) under ``sheet`` is no path: refused at its line and ``$.combatants[1].sheet``,
        saying an inline sheet's fields go directly in [[combatants]]; it was read as the path "{'id': 'bo', ...}"
        and refused as a file that does not exist."""
        (tmp_path / "kael.toml").write_text((ROOT / "fixtures" / "ember-ford" / "sheets" / "kael.toml").read_text())
        text = MINIMAL + "\n[[combatants]]\n" + written
        with pytest.raises(ScenarioError) as info:
            load_scenario(write(tmp_path, text))
        err = info.value
        assert (err.source, err.path, err.line) == (str(tmp_path / "s.toml"), "$.combatants[1].sheet", 8)
        assert err.reason == (f"`sheet` must be a path string (a sheet file, relative to the scenario), not {kind}: "
                              "an inline sheet's fields go directly in the [[combatants]] table, with no `sheet` "
                              "key (docs/scenarios.md)")

    def test_a_sheet_path_beside_a_sheets_fields_is_refused_at_the_first_field(self, tmp_path: Path) -> None:
        """``sheet = "kael.toml"`` with ``side`` beside it is neither a sheet by path nor one inline: refused at
        ``side``'s line, not as a sheet with an unknown field ``sheet``."""
        (tmp_path / "kael.toml").write_text((ROOT / "fixtures" / "ember-ford" / "sheets" / "kael.toml").read_text())
        with pytest.raises(ScenarioError) as info:
            load_scenario(write(tmp_path, MINIMAL + 'side = "b"\n'))
        err = info.value
        assert (err.path, err.line) == ("$.combatants[0].side", 6)
        assert "not both: side beside sheet = 'kael.toml'" in err.reason

    def test_two_combatants_with_one_id_name_the_second(self, tmp_path: Path) -> None:
        """A second sheet file with Kael's id: named at its own ``$.id`` (the same file listed twice is named at the
        scenario's entry, as test_one_sheet_file_listed_twice_is_named_at_the_scenarios_entry says)."""
        (tmp_path / "kael.toml").write_text((ROOT / "fixtures" / "ember-ford" / "sheets" / "kael.toml").read_text())
        (tmp_path / "kael2.toml").write_text((tmp_path / "kael.toml").read_text())
        with pytest.raises(ScenarioError) as info:
            run_scenario(load_scenario(write(tmp_path, MINIMAL + '\n[[combatants]]\nsheet = "kael2.toml"\n')),
                         MemoryStore())
        assert (info.value.source, info.value.path) == (str(tmp_path / "kael2.toml"), "$.id")
        assert info.value.line == 1 + next(i for i, line in enumerate((tmp_path / "kael2.toml").read_text()
                                                                         .splitlines()) if line.startswith("id "))


    @pytest.mark.parametrize("fmt", ["toml", "json"])
    def test_an_ability_from_a_library_is_named_in_the_library(self, tmp_path: Path, fmt: str) -> None:
        """C28, C37: an inline sheet lists "venom" by id, and the library file party.toml (or .json) writes it out
        applying "Sleeping", which the ruleset does not know: the refusal at join names the library, the line of
        that condition and ``$.abilities.venom.effects[0].condition``, not the scenario; a library listed twice is
        named at its second listing."""
        library = ('[abilities.venom]\nname = "Venom"\nuse = "trigger"\n'
                   'trigger = { moment = "attack.determined", owner = "attacker", outcome = "hit" }\n'
                   'effects = [\n  { kind = "condition", condition = "Sleeping" },\n]\n') if fmt == "toml" else (
                  '{"abilities": {"venom": {"name": "Venom", "use": "trigger",\n'
                  ' "trigger": {"moment": "attack.determined", "owner": "attacker", "outcome": "hit"},\n'
                  ' "effects": [\n  {"kind": "condition", "condition": "Sleeping"}\n]}}}\n')
        (tmp_path / f"party.{fmt}").write_text(library)
        (tmp_path / "kael.toml").write_text((ROOT / "fixtures" / "ember-ford" / "sheets" / "kael.toml").read_text())
        text = MINIMAL.replace('id = "m"\n', f'id = "m"\nabilities = ["party.{fmt}"]\n') + (
            '\n[[combatants]]\nid = "bo"\nname = "Bo"\nside = "b"\nhp = 10\nabilities = ["venom"]\n'
            'attributes = { STR = { die = "d6" }, AGI = { die = "d6" }, INT = { die = "d6" }, '
            'RES = { die = "d6" }, FCS = { die = "d6" } }\n')
        with pytest.raises(ScenarioError) as info:
            run_scenario(load_scenario(write(tmp_path, text)), MemoryStore())
        err = info.value
        assert (err.source, err.path, err.line) == (str(tmp_path / f"party.{fmt}"),
                                                    "$.abilities.venom.effects[0].condition", 6 if fmt == "toml" else 4)
        assert "[C28] unknown condition 'Sleeping' in bo's ability 'venom'" in str(err)
        (tmp_path / f"party.{fmt}").write_text(library.replace("Sleeping", "Prone"))
        with pytest.raises(ScenarioError) as info:  # one library listed twice: named at its second listing
            load_scenario(write(tmp_path, text.replace(f'abilities = ["party.{fmt}"]',
                                                       f'abilities = ["party.{fmt}", "party.{fmt}"]')))
        assert info.value.path == "$.fight.abilities[1]" and "listed twice" in str(info.value)

    def test_a_library_ability_clashing_with_one_a_sheet_writes_is_named_at_its_table(self, tmp_path: Path) -> None:
        """C37: Bo writes out its own "thorns"; Cy lists the library's, which differs: the refusal names the
        library's ``[abilities.thorns]`` table and its line (it named ``$.abilities.thorns.id``, a field a library
        does not have; found by a tester)."""
        thorns = ('name = "Thorns"\nuse = "trigger"\n'
                  'trigger = { moment = "attack.damaged", owner = "target" }\n')
        (tmp_path / "party.toml").write_text("[abilities.thorns]\n" + thorns
                                             + 'effects = [{ kind = "damage", flat = 2, damage_type = "piercing", '
                                               'to = "target" }]\n')
        (tmp_path / "kael.toml").write_text((ROOT / "fixtures" / "ember-ford" / "sheets" / "kael.toml").read_text())
        attributes = ('attributes = { STR = { die = "d6" }, AGI = { die = "d6" }, INT = { die = "d6" }, '
                      'RES = { die = "d6" }, FCS = { die = "d6" } }\n')
        text = MINIMAL.replace('id = "m"\n', 'id = "m"\nabilities = ["party.toml"]\n') + (
            '\n[[combatants]]\nid = "bo"\nname = "Bo"\nside = "b"\nhp = 10\n' + attributes
            + '[[combatants.abilities]]\nid = "thorns"\n' + thorns.replace("Thorns", "Thorns of Bo")
            + 'effects = [{ kind = "damage", flat = 3, damage_type = "piercing", to = "target" }]\n'
            + '\n[[combatants]]\nid = "cy"\nname = "Cy"\nside = "b"\nhp = 10\nabilities = ["thorns"]\n' + attributes)
        with pytest.raises(ScenarioError) as info:
            run_scenario(load_scenario(write(tmp_path, text)), MemoryStore())
        err = info.value
        assert (err.source, err.path, err.line) == (str(tmp_path / "party.toml"), "$.abilities.thorns", 1), str(err)
        assert "[C37] cy's ability 'thorns' differs from the one bo's sheet writes under that id" in str(err)


def test_a_command_refused_at_one_of_its_fields_is_named_there(tmp_path: Path) -> None:
    """C4: a scenario's attack with a weapon Kael's sheet lacks names the command's field,
    ``$.commands[1].weapon``, with that field's line (it named ``$.commands[1]`` alone, then the command's header's
    line: found by testers)."""
    (tmp_path / "kael.toml").write_text((ROOT / "fixtures" / "ember-ford" / "sheets" / "kael.toml").read_text())
    (tmp_path / "vesh.toml").write_text((ROOT / "fixtures" / "ember-ford" / "sheets" / "vesh.toml").read_text())
    text = (MINIMAL.replace('id = "m"\n', 'id = "m"\ndice = "manual"\n') + '\n[[combatants]]\nsheet = "vesh.toml"\n'
            + '\n[[commands]]\ncommand = "roll_initiative"\ndice = [6, 1]\n'
            + '\n[[commands]]\ncommand = "declare_attack"\nattacker = "kael"\ntarget = "vesh"\nweapon = "maul"\n')
    with pytest.raises(ScenarioError) as info:
        run_scenario(load_scenario(write(tmp_path, text)), MemoryStore())
    err = info.value
    line = text.splitlines().index('weapon = "maul"') + 1
    assert (err.path, err.line) == ("$.commands[1].weapon", line), str(err)
    assert "declare_attack: [C4] 'kael' has no weapon 'maul'" in str(err)


@pytest.mark.parametrize("attack, path, said", [
    ('weapon = "longsword"\ndice = [8, 7, 1]', "$.commands[1].dice[1]", "die face 7 is not possible on a d6"),
    ('weapon = "shield"', "$.commands[1].weapon", "[C4] 'kael' has no weapon 'shield'"),
])
def test_a_face_or_a_weapon_refused_is_named_at_its_field_and_line(tmp_path: Path, attack: str, path: str,
                                                                    said: str) -> None:
    """C29, C4: a face Kael's FCS d6 cannot show in the attack's dice is named at ``$.commands[1].dice[1]`` on the
    dice's line, and at no other path (it was the command's header's line and ``$.dice[1]``, then both paths side by
    side: testers); so is a weapon, at its own line."""
    (tmp_path / "kael.toml").write_text((ROOT / "fixtures" / "ember-ford" / "sheets" / "kael.toml").read_text())
    (tmp_path / "vesh.toml").write_text((ROOT / "fixtures" / "ember-ford" / "sheets" / "vesh.toml").read_text())
    text = (MINIMAL.replace('id = "m"\n', 'id = "m"\ndice = "manual"\n') + '\n[[combatants]]\nsheet = "vesh.toml"\n'
            + '\n[[commands]]\ncommand = "roll_initiative"\ndice = [6, 1]\n'
            + f'\n[[commands]]\ncommand = "declare_attack"\nattacker = "kael"\ntarget = "vesh"\n{attack}\n')
    with pytest.raises(ScenarioError) as info:
        run_scenario(load_scenario(write(tmp_path, text)), MemoryStore())
    err = info.value
    line = len(text.splitlines()) if "dice" in path else text.splitlines().index(attack) + 1
    assert (err.path, err.line) == (path, line), str(err)
    assert said in str(err) and "$.dice" not in str(err) and str(err).count("(at $.") == 1, str(err)


class TestEveryErrorIsPlaced:
    """Issue #26, item 7: every error of a scenario or a sheet names its file, a line of it and a field path
    (``FILE:LINE: what (at $.path)``), whatever was done to the files (a fuzz test: 57 of 1,300 fuzzed files
    named no line)."""

    EMBER = ROOT / "fixtures" / "ember-ford"
    PLACED = re.compile(r"(?P<file>.+?):(?P<line>\d+): .* \(at (?P<path>\$[^ ]*)\)", re.S)

    @staticmethod
    def mutate(text: str, how: str, at: float, junk: str) -> str:
        lines = text.splitlines(keepends=True)
        i = int(at * (len(lines) - 1)) if lines else 0
        if how == "drop a line":
            del lines[i:i + 1]
        elif how == "repeat a line":
            lines[i:i + 1] = lines[i:i + 1] * 2
        elif how == "cut":
            return text[:int(at * len(text))]
        elif how == "insert junk":
            lines.insert(i, junk + "\n")
        elif how == "quote a value" and lines:
            lines[i] = re.sub(r"= (\S+)", lambda m: f'= "{m.group(1)}"', lines[i], count=1)
        elif how == "unquote a value" and lines:
            lines[i] = re.sub(r'"([^"]*)"', r"\1", lines[i], count=1)
        elif how == "rename a key" and lines:
            lines[i] = re.sub(r"^(\s*)(\w+)", r"\1\2x", lines[i], count=1)
        elif how == "change a number" and lines:
            lines[i] = re.sub(r"\d+", lambda m: str(-int(m.group()) - 1), lines[i], count=1)
        return "".join(lines)

    @settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(target=st.sampled_from(["scenario.toml", "sheets/kael.toml", "sheets/vesh.toml"]),
           edits=st.lists(st.tuples(st.sampled_from(["drop a line", "repeat a line", "cut", "insert junk",
                                                     "quote a value", "unquote a value", "rename a key",
                                                     "change a number"]),
                                    st.floats(0, 1), st.sampled_from(["x", "[", "[[commands]]", "a = ", '"', "}",
                                                                      "who = 7", "[fight]", "= 3", "\\u0000",
                                                                      "dice = [99]", "\u202e"])),
                          min_size=1, max_size=3))
    def test_any_error_names_a_file_a_line_and_a_field(self, tmp_path_factory: pytest.TempPathFactory, target: str,
                                                       edits: list[tuple[str, float, str]]) -> None:
        """Load and run the Ember Ford scenario after random edits to it or a sheet: if it fails, the error is
        ``FILE:LINE: ... (at $...)`` with a file of the scenario's, a line that file has, and a field path."""
        import shutil

        folder = tmp_path_factory.mktemp("placed")
        shutil.copytree(self.EMBER, folder / "ember", dirs_exist_ok=True)
        path = folder / "ember" / target
        text = path.read_text()
        for how, at, junk in edits:
            text = self.mutate(text, how, at, junk)
        path.write_text(text)
        try:
            run_scenario(load_scenario(folder / "ember" / "scenario.toml"), MemoryStore())
        except OmenError as exc:
            m = self.PLACED.fullmatch(str(exc))
            assert m is not None, str(exc)
            where = Path(m["file"])
            assert where.is_file() and where.resolve().is_relative_to((folder / "ember").resolve()), str(exc)
            assert 1 <= int(m["line"]) <= max(len(where.read_text().splitlines()), 1), str(exc)


def test_a_fight_id_the_stores_refuse_is_refused_at_its_line(tmp_path: Path) -> None:
    """[fight] id = "duel hand!" (a space and a '!': no store takes it) is refused when the scenario is loaded, at
    its line and $.fight.id, before anything is written (it was refused at the first append, naming no place)."""
    text = DUEL.replace('id = "duel-at-dawn"', 'id = "duel hand!"', 1)
    with pytest.raises(ScenarioError, match="fight id 'duel hand!': a fight id is 1-128 letters") as info:
        load_scenario(write(tmp_path, text))
    assert (info.value.path, info.value.line) == ("$.fight.id", 2)


@pytest.mark.parametrize(("key", "kind", "line"), [("abilities = [\"s.toml\"]", "an ability library", 3),
                                                  ("ruleset = \"s.toml\"", "a ruleset", 3),
                                                  ("[[combatants]]\nsheet = \"s.toml\"", "a sheet", 4)])
def test_a_file_read_as_a_library_ruleset_or_sheet_says_so(tmp_path: Path, key: str, kind: str, line: int) -> None:
    """A scenario that lists itself as its ability library, its ruleset or a combatant's sheet is refused at the
    field its [fight] is in the other file's eyes, saying what the file was read as and where the scenario names it
    (it said only "unknown field `fight`", which left the GM guessing; found by testers, the sheet's last)."""
    (tmp_path / "s.toml").write_text(f'[fight]\nid = "x"\n{key}\n')
    with pytest.raises(ScenarioError) as info:
        load_scenario(tmp_path / "s.toml")
    assert f"unknown field `fight` (read as {kind}, as s.toml:{line} names it)" in str(info.value)


def test_a_combatant_id_given_twice_is_said_before_a_command_naming_another(tmp_path: Path) -> None:
    """docs/scenarios.md: two combatants with one id are refused at the second's id, its line, whatever the commands
    after them name (with a command naming the other id, it said "no combatant 'bo' has joined by this command
    (joined: ash, ash)", blaming the command: a tester)."""
    text = DUEL.replace('id = "bo"', 'id = "ash"', 1)
    assert 'id = "ash"' in text and 'id = "bo"' not in text
    with pytest.raises(ScenarioError) as info:
        load_scenario(write(tmp_path, text, "twice.toml"))
    lines = text.splitlines()
    line = 1 + next(i for i, x in enumerate(lines) if x == 'id = "ash"' and i > lines.index('id = "ash"'))
    assert str(info.value) == (f"{tmp_path / 'twice.toml'}:{line}: the rules refuse this combatant: [setup] a "
                               "combatant with id 'ash' has already joined (at $.combatants[1].id)")


def test_a_command_naming_a_combatant_not_joined_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    """docs/scenarios.md: a misspelt id in a command ("bp" for "bo") is refused at load, exit 2's error naming the
    file, the command's line, the field and a close id; nothing is written (it was refused mid-run, exit 3, the
    commands before it written, and the same --log then refused the fixed file: found by a tester). A contest's
    check names its combatant too, and a ``join`` before a command makes its id known."""
    path = write(tmp_path, DUEL.replace('target = "bo"', 'target = "bp"', 1), "duel.toml")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    line = 1 + DUEL.replace('target = "bo"', 'target = "bp"', 1).splitlines().index('target = "bp"')
    assert str(info.value).startswith(f"{path}:{line}: no combatant 'bp' has joined by this command (joined: ")
    assert "did you mean 'bo'?" in str(info.value) and info.value.path.endswith(".target")
