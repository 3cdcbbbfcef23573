"""Tests for the live CLI: ``omen status`` and ``omen do`` on a stored fight (docs/live.md), with undo and verify.

The fight: Kael (wardens) and Vesh (raiders) from the Ember Ford sheets, set up by ``omen run`` with
``dice = "manual"``, then played one ``omen do`` at a time with the faces in each command's ``dice``.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner, Result

from omen_cli import app

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
SHEETS = ROOT / "omen_replay" / "data" / "ember-ford" / "sheets"
OPTIONS_SCHEMA = ROOT / "docs" / "schema" / "options.schema.json"
DO_SCHEMA = ROOT / "docs" / "schema" / "do.schema.json"
SEED = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
HEAD = re.compile(r"head (\d+):([0-9a-f]{64})")

# Kael 5 + 1 = 6 beats Vesh 2 + 2 = 4: Kael's turn first.
INITIATIVE = {"command": "roll_initiative", "dice": [5, 2]}
INITIATIVE_WITHOUT_FACES = {"command": "roll_initiative"}
# Kael's STR d8 4, FCS d6 2, Vesh's RES d6 3: hit 10 against base defense 5, Vesh's Active Defense window opens.
KAEL_ATTACKS = {"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword",
                "dice": [4, 2, 3]}
VESH_DODGES = {"command": "answer_active_defense", "defender": "vesh", "defense": "dodge", "dice": [6]}


def omen(*args: str) -> Result:
    """Run the CLI in-process and return the result."""
    return runner.invoke(app, list(args))


def text(result: Result) -> str:
    """Stdout and stderr with the console's line wrapping undone."""
    return " ".join(result.output.split())


def do(log: Path, command: dict[str, Any] | str, *extra: str) -> Result:
    """``omen do LOG COMMAND`` with the command as JSON (a dict) or as given (a string)."""
    return omen("do", str(log), command if isinstance(command, str) else json.dumps(command), *extra)


def played(log: Path, *commands: dict[str, Any]) -> Path:
    """Give each command with ``omen do``, each one accepted."""
    for command in commands:
        result = do(log, command)
        assert result.exit_code == 0, result.output
    return log


def write_scenario(directory: Path, dice: str = "manual", fight_id: str = "ford") -> Path:
    """A scenario with no commands: the fight and its two combatants, Kael and Vesh."""
    seed = f'\nseed = "{SEED}"' if dice == "seeded" else ""
    path = directory / f"{fight_id}.toml"
    path.write_text(f'[fight]\nid = "{fight_id}"\ntitle = "Steel at the ford"\ndice = "{dice}"{seed}\n\n'
                    f'[[combatants]]\nsheet = "{SHEETS / "kael.toml"}"\n\n'
                    f'[[combatants]]\nsheet = "{SHEETS / "vesh.toml"}"\n')
    return path


def set_up(directory: Path, dice: str = "manual", fight_id: str = "ford") -> Path:
    """``omen run`` the scenario into a fresh log: the set-up only (3 events)."""
    log = directory / f"{fight_id}.jsonl"
    result = omen("run", str(write_scenario(directory, dice, fight_id)), "--log", str(log), "--quiet")
    assert result.exit_code == 0, result.output
    return log


def files_in(directory: Path) -> dict[str, bytes]:
    """Every file under ``directory`` (the log and anything beside it), by name, with its bytes."""
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def lines(log: Path) -> list[dict[str, Any]]:
    """The log's stored events as JSON objects."""
    return [json.loads(line) for line in log.read_text().splitlines()]


def schema_validator(path: Path) -> jsonschema.Draft202012Validator:
    """A validator for one of the published schemas."""
    schema = json.loads(path.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def verified_head(log: Path) -> str:
    """The head ``omen verify --json`` reaches, as SEQ:HASH (the log verifying clean)."""
    result = omen("verify", str(log), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["clean"] is True
    return f"{report['head']['seq']}:{report['head']['hash']}"


def status_json(log: Path) -> dict[str, Any]:
    """``omen status LOG --json``, parsed."""
    result = omen("status", str(log), "--json")
    assert result.exit_code == 0, result.output
    found: dict[str, Any] = json.loads(result.stdout)
    return found


@pytest.fixture
def setup_log(tmp_path: Path) -> Path:
    """A manual-dice fight, set up and nothing more."""
    return set_up(tmp_path)


@pytest.fixture
def turn_log(setup_log: Path) -> Path:
    """Round 1, Kael's turn, nothing in progress."""
    return played(setup_log, INITIATIVE)


@pytest.fixture
def window_log(turn_log: Path) -> Path:
    """Kael's attack waits for Vesh's Active Defense."""
    return played(turn_log, KAEL_ATTACKS)


@pytest.fixture
def interrupt_log(window_log: Path) -> Path:
    """Round 2: Kael's second attack waits on Vesh's Interrupt (she has had her turn and both Bonus Actions)."""
    return played(window_log, VESH_DODGES, {"command": "end_turn", "who": "kael"},
                  {"command": "end_turn", "who": "vesh"},
                  {"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword"})


def refused(log: Path, command: dict[str, Any] | str, *extra: str) -> str:
    """Give a command that must be refused: exit 2, nothing on stdout, every file byte for byte as it was; returns
    the message (stderr, unwrapped)."""
    before = files_in(log.parent)
    result = do(log, command, *extra)
    assert result.exit_code == 2, result.output
    assert files_in(log.parent) == before
    assert result.stdout == ""
    return " ".join(result.stderr.split())


class TestStatus:
    def test_text_names_where_the_fight_is_every_actor_and_the_head(self, turn_log: Path) -> None:
        """`omen status --all` says phase, round, turn and dice, lists each actor's commands, and ends with the
        head."""
        result = omen("status", str(turn_log), "--all")
        assert result.exit_code == 0, result.output
        said = text(result)
        seq = len(lines(turn_log))
        assert f"ford at seq {seq}: rounds, round 1, kael's turn; manual dice" in said
        for words in ("kael:", "declare_attack (1 Action;", "end_turn (free;", "the GM:", "end_fight", "undo"):
            assert words in said
        assert "dice: kael's hit (primary d8 + fcs d6); vesh's base defense (res d6)" in said
        last = lines(turn_log)[-1]
        assert result.output.splitlines()[-1] == f"head {last['seq']}:{last['hash']}"

    def test_text_says_what_the_fight_waits_for(self, window_log: Path) -> None:
        """With a decision open, `omen status --all` names it, who answers, with which command and at what cost (a
        Dodge or a Parry with her knife: Vesh has no shield to Block with, C9)."""
        said = text(omen("status", str(window_log), "--all"))
        assert ("waiting for vesh: Active Defense (C8), answer with answer_active_defense; to Dodge or Parry "
                "costs 1 Bonus Action, to decline (defense left out) is free" in said)
        assert "cancel_action" in said and "declare_attack" not in said

    @pytest.mark.parametrize("stage", ["setup_log", "turn_log", "window_log", "interrupt_log"])
    def test_json_is_valid_against_the_published_schema(self, stage: str, request: pytest.FixtureRequest) -> None:
        """`omen status --json` validates against docs/schema/options.schema.json at every stage of a fight."""
        log = request.getfixturevalue(stage)
        found = status_json(log)
        schema_validator(OPTIONS_SCHEMA).validate(found)
        last = lines(log)[-1]
        assert found["seq"] == last["seq"] and found["head"] == f"{last['seq']}:{last['hash']}"
        assert found["dice"] == "manual" and {c["who"] for c in found["combatants"]} == {"kael", "vesh"}

    def test_json_waiting_names_the_decision(self, window_log: Path) -> None:
        """The JSON's `waiting` gives the open decision's kind, who answers and the answer commands."""
        ad = status_json(window_log)["waiting"]
        assert (ad["kind"], ad["who"], ad["answers"]) == ("active_defense", ["vesh"], ["answer_active_defense"])
        declared = [e["seq"] for e in lines(window_log) if e["event"]["type"] == "attack_declared"]
        assert ad["action"] == declared[-1]

    def test_the_active_defense_odds_are_in_the_json_and_the_text(self, window_log: Path) -> None:
        """C7, C8: Kael's 10 against Vesh's base 5 (a gap of 5). Vesh's Dodge (AGI d8 + 2) needs 3 or more: 6
        faces of 8, 3/4; her Parry with the finesse knife (AGI d8 + 2, Parry Rating 1) needs 2: 7/8; declining
        never misses. Kael's FCS 2 + 1 against Vesh's RES 3 + 1 is no crit, so no crit to remove. `omen status
        --json` gives each answer's odds, the text one line of them, each choice once (the Parry not naming its
        weapon is the knife's)."""
        offer = next(o for o in status_json(window_log)["offers"] if o["command"] == "answer_active_defense")
        odds = {(c["args"].get("defense"), c["args"].get("weapon")): c["odds"] for c in offer["choices"]}
        assert odds[None, None] == {"needs": 5, "miss": "0", "crit": False, "removes_crit": "0"}
        assert odds["dodge", None] == {"needs": 3, "miss": "3/4", "crit": False, "removes_crit": "0"}
        assert odds["parry", "knife"] == {"needs": 2, "miss": "7/8", "crit": False, "removes_crit": "0"}
        shown = text(omen("status", str(window_log)))
        assert "odds of a miss: decline 0, dodge 3/4, parry knife 7/8 ▶" in shown  # each choice once

    def test_all_names_the_arguments_left_to_the_caller_and_what_tells_dice_apart(self, turn_log: Path) -> None:
        """`omen status --all` prints an offer's free arguments (`call_save`'s required `effect`, refused without
        it) and note, as --json has them, and names the two sets of dice of `call_save` by the `action_cost` that
        tells them apart (both read "saver=vesh"), in round 2 on Kael's turn, the two engaged."""
        played(turn_log, {"command": "engage", "who": "kael", "others": ["vesh"]},
               {"command": "end_turn", "who": "kael"}, {"command": "end_turn", "who": "vesh"})
        shown = [line.strip() for line in omen("status", str(turn_log), "--all").stdout.splitlines()]
        at = shown.index("call_save (the effect's cost in Actions (action_cost); C15, C25) saver: vesh")
        assert shown[at + 1:at + 5] == [
            "give effect: the effect that calls for the save: save and against attributes, spell, action_cost, "
            "on_success / on_failure consequences (C25)",
            "note: the choices show the effect with action_cost 1 and 0; any effect may be given",
            "dice (effect.action_cost=(default)): none",
            "dice (effect.action_cost=0): vesh's save (save d8); kael's save (save d6)"]
        assert "may give situational: claimed situational modifiers: {high_ground: bool, encircled: {attackers, " \
               "defenders}} (C26, C27)" in shown

    def test_json_waiting_names_an_interrupt(self, interrupt_log: Path) -> None:
        """An Interrupt window is answered by react or pass_reaction, by the combatant offered it."""
        interrupt = status_json(interrupt_log)["waiting"]
        assert interrupt["kind"] == "interrupt" and interrupt["who"] == ["vesh"]
        assert set(interrupt["answers"]) == {"react", "pass_reaction"}

    def test_an_offered_choice_is_a_command_omen_do_accepts(self, window_log: Path) -> None:
        """A choice from `omen status --json`, built as docs/live.md says (command + args + a face per die listed),
        is accepted by `omen do`."""
        offer = next(o for o in status_json(window_log)["offers"] if o["command"] == "answer_active_defense")
        choice = next(c for c in offer["choices"] if c["args"].get("defense") == "dodge")
        faces = [d["sides"] for roll in choice["dice"] for d in roll["dice"]]  # the highest face of each die
        result = do(window_log, {"command": offer["command"], **choice["args"], "dice": faces})
        assert result.exit_code == 0, result.output
        assert "Vesh the Cinder-Hand dodges" in text(result) and "MISS" in text(result)

    @pytest.mark.parametrize("name", ["missing.jsonl", "missing-dir/"])
    def test_status_on_a_missing_log_exits_2_and_creates_nothing(self, tmp_path: Path, name: str) -> None:
        """`omen status` on a log that does not exist exits 2 naming it, and creates no file or directory."""
        result = omen("status", f"{tmp_path}/{name}")
        assert result.exit_code == 2
        assert name in result.stderr and "no such" in text(result)
        assert list(tmp_path.iterdir()) == []

    def test_status_on_an_empty_log_exits_2_and_leaves_it_empty(self, tmp_path: Path) -> None:
        """`omen status` on an empty file exits 2 saying it holds no fight, and leaves it as it was."""
        empty = tmp_path / "empty.jsonl"
        empty.write_bytes(b"")
        result = omen("status", str(empty))
        assert result.exit_code == 2 and "empty.jsonl holds no fight yet" in text(result)
        assert files_in(tmp_path) == {"empty.jsonl": b""}

    def test_status_on_a_missing_log_does_not_suggest_fight(self, tmp_path: Path) -> None:
        """The message for a log that does not exist says so, and does not send the GM to --fight."""
        said = text(omen("status", str(tmp_path / "missing.jsonl")))
        assert "--fight" not in said and ("does not exist" in said or "no such" in said or "not found" in said)

    def test_status_on_a_missing_sqlite_db_creates_nothing(self, tmp_path: Path) -> None:
        """`omen status` on a SQLite URL naming no database exits 2 and creates no file."""
        result = omen("status", f"sqlite:///{tmp_path}/missing.db")
        assert result.exit_code == 2
        assert list(tmp_path.iterdir()) == []

    def test_status_on_a_sqlite_db_in_a_missing_directory_is_bad_input(self, tmp_path: Path) -> None:
        """`omen status sqlite:///no/such/dir/x.db` is bad input: exit 2 and an error message, no traceback."""
        result = omen("status", f"sqlite:///{tmp_path}/no/such/dir/x.db")
        assert result.exit_code == 2 and result.stderr.startswith("omen: error:")

    def test_status_of_an_unknown_fight_exits_2(self, setup_log: Path) -> None:
        """`--fight` naming a fight the log does not hold is refused with exit 2, naming the fights it holds."""
        result = omen("status", str(setup_log), "--fight", "other")
        assert result.exit_code == 2 and "no fight 'other'" in text(result) and "ford" in text(result)


class TestDoHappyPaths:
    def test_inline_json_appends_narrates_and_prints_options_and_head(self, setup_log: Path) -> None:
        """A JSON command is appended, told (the session log's lines), and followed by the options and new head."""
        result = do(setup_log, INITIATIVE)
        assert result.exit_code == 0, result.output
        said = text(result)
        for words in ("roll (initiative, manual) by Kael Arden: check d6 → 5",
                      "Initiative order: Kael Arden, Vesh the Cinder-Hand", "Round 1", "Kael Arden's turn",
                      "rounds, round 1, kael's turn; manual dice", "omen status"):
            assert words in said
        last = lines(setup_log)[-1]
        assert last["seq"] == 11 and last["event"]["type"] == "turn_started"
        assert HEAD.findall(result.output)[-1] == ("11", last["hash"])

    def test_inline_toml(self, turn_log: Path) -> None:
        """A command written as TOML (a table with `command = ...`) is accepted like its JSON."""
        seq = len(lines(turn_log)) + 1
        result = do(turn_log, 'command = "declare_attack"\nattacker = "kael"\ntarget = "vesh"\ndice = [4, 2, 3]')
        assert result.exit_code == 0, result.output
        assert "Active Defense window for Vesh the Cinder-Hand: attack 10 beats base defense 5" in text(result)
        issued = next(e["event"] for e in lines(turn_log) if e["seq"] == seq)
        assert issued["type"] == "command_issued" and issued["command"]["command"] == "declare_attack"
        assert issued["command"]["dice"] == [4, 2, 3]

    @pytest.mark.parametrize("suffix", [".toml", ".json"])
    def test_command_from_a_file(self, turn_log: Path, tmp_path: Path, suffix: str) -> None:
        """`--file` reads the command from a .toml or .json file."""
        body = ('command = "declare_attack"\nattacker = "kael"\ntarget = "vesh"\nweapon = "longsword"\n'
                'dice = [4, 2, 3]\n') if suffix == ".toml" else json.dumps(KAEL_ATTACKS)
        file = tmp_path / f"attack{suffix}"
        file.write_text(body)
        result = omen("do", str(turn_log), "--file", str(file))
        assert result.exit_code == 0, result.output
        assert status_json(turn_log)["waiting"]["kind"] == "active_defense"

    def test_by_is_recorded_in_the_command_issued_event(self, window_log: Path) -> None:
        """`--by WHO` is recorded as the command_issued event's `by`; without it, `by` is empty, and so left out of
        the line (schema version 5: a field at its default is not written)."""
        result = do(window_log, VESH_DODGES, "--by", "Vesh's player")
        assert result.exit_code == 0, result.output
        issued = [e["event"] for e in lines(window_log) if e["event"]["type"] == "command_issued"]
        assert issued[-1]["by"] == "Vesh's player" and issued[-1]["command"]["command"] == "answer_active_defense"
        assert {e.get("by", "") for e in issued[:-1]} == {""} and all("by" not in e for e in issued[:-1])

    def test_json_output_validates_and_is_what_was_stored(self, window_log: Path) -> None:
        """`omen do --json` validates against docs/schema/do.schema.json: its events are the lines appended, its
        options what `omen status --json` says now."""
        before = len(lines(window_log))
        result = do(window_log, VESH_DODGES, "--json")
        assert result.exit_code == 0, result.output
        printed = json.loads(result.stdout)
        schema_validator(DO_SCHEMA).validate(printed)
        assert printed["events"] == lines(window_log)[before:]
        assert [e["event"]["type"] for e in printed["events"]][:2] == ["command_issued", "active_defense_chosen"]
        assert printed["options"] == status_json(window_log)

    def test_printed_head_is_the_head_verify_reaches(self, window_log: Path) -> None:
        """The head `omen do` prints (text and JSON) and `omen status` reports is the head `omen verify` reaches."""
        result = do(window_log, VESH_DODGES)
        assert result.exit_code == 0, result.output
        seq, digest = HEAD.findall(result.output)[-1]
        assert f"{seq}:{digest}" == verified_head(window_log) == status_json(window_log)["head"]
        result = do(window_log, {"command": "end_turn", "who": "kael"}, "--json")
        assert json.loads(result.stdout)["options"]["head"] == verified_head(window_log)

    def test_verify_says_each_witnessed_head_matched(self, window_log: Path) -> None:
        """`omen verify LOG --head SEQ:HASH` says, for each head witnessed earlier that the log passes through, that
        it matches (it said nothing of a head it checked, only of one that failed: found by a tester); a head that
        does not match is a finding, exit 1, and no such line."""
        witnessed = verified_head(window_log)
        played(window_log, VESH_DODGES, {"command": "end_turn", "who": "kael"})
        seq, digest = witnessed.split(":")
        result = omen("verify", str(window_log), "--head", witnessed)
        assert result.exit_code == 0, result.output
        assert f"witnessed head {seq}:{digest[:16]}\u2026 matches: the log passes through it" in text(result)
        wrong = omen("verify", str(window_log), "--head", f"{seq}:{'0' * 64}")
        assert wrong.exit_code == 1 and "witnessed head" not in text(wrong) and "not the head witnessed" in text(wrong)

    def test_undo_mid_action_goes_back_to_the_declaration_and_play_goes_on(self, turn_log: Path) -> None:
        """`omen undo` while an attack waits voids it back to its declaration; play goes on and verifies clean."""
        window_log, declared = turn_log, len(lines(turn_log)) + 1
        played(window_log, KAEL_ATTACKS)
        last = len(lines(window_log))
        result = omen("undo", str(window_log), "--reason", "misread a die")
        assert result.exit_code == 0, result.output
        assert f"undone: seq {declared} to {last}" in text(result)
        assert status_json(window_log)["waiting"] is None
        played(window_log, {**KAEL_ATTACKS, "dice": [4, 2, 4]}, VESH_DODGES)
        report = json.loads(omen("verify", str(window_log), "--json").stdout)
        assert report["clean"] and [(u["from_seq"], u["to_seq"], u["reason"]) for u in report["undone"]] == [
            (declared, last, "misread a die")]

    def test_undo_lists_the_commands_it_took_back_as_given(self, turn_log: Path) -> None:
        """A GM who undoes a mistaken answer learns that the whole attack went with it (an undo goes back to the
        declaration, C8): the confirmation lists each command taken back, its seq and fields as given, its faces
        counted, and names the log in the witness hint (a tester read only ``undone: seq 66 to 75``); a command an
        earlier undo took back is not listed again."""
        declared = len(lines(turn_log)) + 1
        played(turn_log, KAEL_ATTACKS)
        answered = len(lines(turn_log)) + 1
        played(turn_log, VESH_DODGES)
        said = text(omen("undo", str(turn_log), "--reason", "vesh meant to parry"))
        assert (f"seq {declared}: declare_attack {{\"attacker\":\"kael\",\"target\":\"vesh\",\"weapon\":"
                f"\"longsword\"}} with {len(KAEL_ATTACKS['dice'])} faces") in said, said
        assert f"seq {answered}: answer_active_defense {{\"defender\":\"vesh\",\"defense\":\"dodge\"}} with 1 face" \
            in said, said
        assert f"(witness it: omen verify {turn_log} --head " in said, said
        assert omen("redo", str(turn_log)).exit_code == 0
        played(turn_log, {"command": "undo"}, {"command": "end_turn", "who": "kael"})
        initiative = next(e["seq"] for e in lines(turn_log) if e["event"]["type"] == "command_issued"
                          and e["event"]["command"]["command"] == "roll_initiative")
        again = text(omen("undo", str(turn_log), "--to", str(initiative)))
        assert f"seq {initiative}: roll_initiative with 2 faces" in again, again
        assert re.findall(r"seq \d+: ([a-z_]+)[ {]", again) == ["roll_initiative", "end_turn"], again

    def test_seeded_fight_rolls_with_the_right_seed(self, tmp_path: Path) -> None:
        """In a seeded fight `--seed HEX` rolls the fight's own dice (recorded as seeded; verify confirms them)."""
        log = set_up(tmp_path, "seeded")
        result = do(log, {"command": "roll_initiative"}, "--seed", SEED)
        assert result.exit_code == 0, result.output
        rolled = [e["event"] for e in lines(log) if e["event"]["type"] == "dice_rolled"]
        assert [r["source"] for r in rolled] == ["seeded", "seeded"]
        checked = omen("verify", str(log), "--seed", SEED, "--json")
        assert checked.exit_code == 0 and json.loads(checked.stdout)["seeded_dice"] == 2

    def test_seeded_fight_takes_physical_faces_too(self, tmp_path: Path) -> None:
        """Without `--seed`, a seeded fight's command may carry physical faces, recorded as manual."""
        log = set_up(tmp_path, "seeded")
        played(log, INITIATIVE)
        rolled = [e["event"] for e in lines(log) if e["event"]["type"] == "dice_rolled"]
        assert [(r["source"], r["dice"][0]["face"]) for r in rolled] == [("manual", 5), ("manual", 2)]
        verified_head(log)


class TestDoRefusals:
    def test_a_seed_for_a_manual_fight_says_it_has_none(self, turn_log: Path) -> None:
        """``--seed`` given for a manual fight is refused saying the fight has manual dice and no seed commitment
        to match (it said the seed "does not hash to the seed commitment", as if it had one); status says the
        same, and OMEN_SEED set in the shell does not stop status of a manual fight."""
        said = refused(turn_log, {"command": "end_turn", "who": "kael"}, "--seed", "00" * 16)
        assert said == (f"omen: error: {turn_log}: fight 'ford' has manual dice, not seeded: it has no seed (no seed "
                        "commitment) for --seed to match; leave it out")
        result = omen("status", str(turn_log), "--seed", "00" * 16)
        assert result.exit_code == 2 and " ".join(result.stderr.split()) == (
            f"omen: error: {turn_log}: fight 'ford' has manual dice, not seeded: it has no seed (no seed commitment) "
            "for the seed given (--seed) to match; leave it out")
        assert runner.invoke(app, ["status", str(turn_log)], env={"OMEN_SEED": "00" * 16}).exit_code == 0

    def test_too_few_faces_count_the_dice_they_lead_to_as_a_floor(self, interrupt_log: Path) -> None:
        """C24, C29: Vesh's Interrupt given 3 faces (1, 1 to hit, Kael's 8 to defend: a miss) leads on to Kael's
        attack, whose hit and Vesh's base defense are then certain; the count is a floor, the same given 3 faces
        or 5 (it said "rolls 5 dice" and then, given 5, "rolls 6"; then, given 3, it said Vesh's base defense
        depended on the dice)."""
        react = {"command": "react", "who": "vesh", "weapon": "knife"}
        three = refused(interrupt_log, {**react, "dice": [1, 1, 8]})
        assert three.startswith("omen: error: the command:1: this command rolls at least 6 dice as the 3 faces given "
                                "fall; ")
        assert three.endswith("kael's hit: primary d8, fcs d6; vesh's base defense: res d6 (at $.dice)")
        five = refused(interrupt_log, {**react, "dice": [1, 1, 8, 2, 2]})
        assert five.startswith("omen: error: the command:1: this command rolls at least 6 dice as the 5 faces given "
                               "fall; ")

    def test_a_value_outside_a_fixed_few_names_them_and_the_closest(self, turn_log: Path) -> None:
        """A field that takes one of a fixed few (a reason to leave, a defense, a save's attribute) refused names
        every value it takes, and the one meant when the value given is close to it."""
        said = refused(turn_log, {"command": "leave_fight", "who": "vesh", "reason": "ran"})
        assert said == "omen: error: the command:1: Invalid enum value 'ran'; one of: dead, fled, yielded (at $.reason)"
        said = refused(turn_log, {"command": "answer_active_defense", "defender": "vesh", "defense": "doge"})
        assert said.endswith("Invalid enum value 'doge'; one of: block, dodge, parry (did you mean 'dodge'?) "
                             "(at $.defense)")
        said = refused(turn_log, {"command": "call_save", "caller": "kael", "saver": "vesh",
                                  "effect": {"save": "AGIX", "against": "INT"}})
        assert said.endswith("'AGIX'; one of: AGI, FCS, INT, RES, STR (did you mean 'AGI'?) (at $.effect.save)")

    def test_unknown_command_name(self, turn_log: Path) -> None:
        """A command name that does not exist is refused naming the field and the name."""
        said = refused(turn_log, {"command": "fireball", "who": "kael"})
        assert "'fireball'" in said and "$.command" in said

    def test_unknown_field_is_named(self, turn_log: Path) -> None:
        """A field the command does not have is refused naming that field."""
        said = refused(turn_log, {"command": "end_turn", "who": "kael", "wait": True})
        assert "unknown field `wait`" in said

    def test_unknown_field_in_toml_is_named(self, turn_log: Path) -> None:
        """The same in TOML."""
        assert "unknown field `wait`" in refused(turn_log, 'command = "end_turn"\nwho = "kael"\nwait = true')

    def test_wrong_field_type_names_the_path(self, turn_log: Path) -> None:
        """A field of the wrong type is refused naming its path."""
        assert "$.who" in refused(turn_log, {"command": "end_turn", "who": 5})

    def test_combatant_not_in_the_fight(self, turn_log: Path) -> None:
        """A combatant the fight does not have is refused, listing those who joined."""
        said = refused(turn_log, {"command": "end_turn", "who": "brin"})
        assert "no combatant 'brin'" in said and "kael, vesh" in said

    def test_not_this_combatants_turn(self, turn_log: Path) -> None:
        """Vesh cannot end Kael's turn, nor attack on it."""
        assert "it is kael's turn" in refused(turn_log, {"command": "end_turn", "who": "vesh"})
        assert "cannot attack" in refused(turn_log, {"command": "declare_attack", "attacker": "vesh",
                                                     "target": "kael", "dice": [1, 1, 1]})

    def test_answer_by_the_wrong_defender(self, window_log: Path) -> None:
        """The Active Defense window is Vesh's: Kael's answer is refused naming the rule and whose it is."""
        said = refused(window_log, {"command": "answer_active_defense", "defender": "kael", "defense": "dodge",
                                    "dice": [3]})
        assert "[C8]" in said and "vesh's" in said

    def test_a_defense_the_defender_cannot_make(self, window_log: Path) -> None:
        """Vesh has no shield: a Block is refused naming the rule."""
        said = refused(window_log, {"command": "answer_active_defense", "defender": "vesh", "defense": "block",
                                    "dice": [3]})
        assert "[C9]" in said and "shield" in said

    def test_command_out_of_phase_in_setup(self, setup_log: Path) -> None:
        """Ending a turn before initiative is refused naming the phase and what it allows."""
        said = refused(setup_log, {"command": "end_turn", "who": "kael"})
        assert "[phase]" in said and "setup phase" in said and "roll initiative" in said

    def test_command_out_of_phase_in_the_rounds(self, turn_log: Path) -> None:
        """Rolling initiative again in the rounds is refused naming the phase."""
        said = refused(turn_log, {"command": "roll_initiative", "dice": [1, 1]})
        assert "[phase]" in said and "rounds phase" in said

    def test_command_while_a_decision_waits_says_what_is_legal(self, window_log: Path) -> None:
        """While Vesh's Active Defense waits, ending the turn is refused with what is legal now, in command words."""
        said = refused(window_log, {"command": "end_turn", "who": "kael"})
        assert "[lifecycle]" in said and "answer_active_defense by vesh" in said and "cancel_action" in said

    def test_command_on_an_ended_fight(self, turn_log: Path) -> None:
        """After end_fight, an attack is refused: the fight is over."""
        played(turn_log, {"command": "end_fight", "reason": "yielded", "side": "raiders"})
        assert "ended phase" in refused(turn_log, KAEL_ATTACKS)

    def test_missing_faces_lists_the_dice_to_roll(self, setup_log: Path) -> None:
        """A roll with no faces is refused listing every die to roll, in C29 order."""
        said = refused(setup_log, {"command": "roll_initiative"})
        assert ("rolls 2 dice and 0 faces were given" in said
                and "kael's initiative: check d6; vesh's initiative: check d8" in said)

    def test_missing_faces_lists_the_dice_that_depend_on_the_faces(self, interrupt_log: Path) -> None:
        """An Interrupt with no faces lists its own dice, then those of the attack it interrupts."""
        said = refused(interrupt_log, {"command": "react", "who": "vesh", "weapon": "knife"})
        assert ("vesh's hit: primary d8, fcs d6; kael's base defense: res d8; then, depending on the dice: "
                "kael's hit: primary d8, fcs d6; vesh's base defense: res d6") in said

    def test_partial_faces_list_every_die_still_to_roll(self, interrupt_log: Path) -> None:
        """With only the Interrupt's faces given (a miss), the refusal still names every die still to roll: the
        rolls the faces led to, up to Kael's hit that found none, then Vesh's base defense, certain as they fall
        (C24, C29: 6 dice)."""
        said = refused(interrupt_log, {"command": "react", "who": "vesh", "weapon": "knife", "dice": [2, 1, 4]})
        assert said.startswith("omen: error: the command:1: this command rolls at least 6 dice as the 3 faces given "
                               "fall; ")
        assert said.endswith("kael's hit: primary d8, fcs d6; vesh's base defense: res d6 (at $.dice)")

    def test_too_many_faces(self, setup_log: Path) -> None:
        """More faces than the command rolls is refused, saying how many too many."""
        said = refused(setup_log, {**INITIATIVE, "dice": [5, 2, 1]})
        assert "3 faces given, but this command rolls 2" in said and "1 face too many" in said

    def test_faces_for_a_command_that_rolls_nothing(self, turn_log: Path) -> None:
        """Faces given to a command that rolls no dice are refused."""
        assert "too many" in refused(turn_log, {"command": "end_turn", "who": "kael", "dice": [3]})

    def test_face_outside_its_die(self, setup_log: Path) -> None:
        """A 9 on Vesh's d8 is refused naming the die; a 0 is refused by the command's schema."""
        assert "9 is not possible on a d8" in refused(setup_log, {**INITIATIVE, "dice": [5, 9]})
        assert "$.dice[1]" in refused(setup_log, {**INITIATIVE, "dice": [5, 0]})

    @pytest.mark.parametrize("command", ['{"command": ', 'command = ', '"end_turn"'])
    def test_malformed_command(self, turn_log: Path, command: str) -> None:
        """A command that is neither a JSON object nor a TOML table is refused as bad input."""
        assert "the command:" in refused(turn_log, command)

    def test_command_and_file_both_or_neither(self, turn_log: Path, tmp_path: Path) -> None:
        """The command comes as an argument or with --file: both, or neither, is refused."""
        file = tmp_path / "end.json"
        file.write_text(json.dumps({"command": "end_turn", "who": "kael"}))
        before = files_in(tmp_path)
        both = omen("do", str(turn_log), '{"command": "end_turn", "who": "kael"}', "--file", str(file))
        neither = omen("do", str(turn_log))
        assert both.exit_code == neither.exit_code == 2 and "not both or neither" in text(both)
        assert files_in(tmp_path) == before

    def test_missing_command_file(self, turn_log: Path, tmp_path: Path) -> None:
        """A --file that does not exist is refused naming it."""
        before = files_in(tmp_path)
        result = omen("do", str(turn_log), "--file", str(tmp_path / "nope.toml"))
        assert result.exit_code == 2 and "nope.toml" in text(result) and files_in(tmp_path) == before

    def test_do_on_a_missing_log_creates_nothing(self, tmp_path: Path) -> None:
        """`omen do` on a log that does not exist exits 2 and creates nothing."""
        result = do(tmp_path / "missing.jsonl", {"command": "end_turn", "who": "kael"})
        assert result.exit_code == 2 and list(tmp_path.iterdir()) == []

    def test_wrong_seed(self, tmp_path: Path) -> None:
        """`--seed` that does not hash to the fight's commitment is refused; the log is untouched."""
        log = set_up(tmp_path, "seeded")
        said = refused(log, {"command": "roll_initiative"}, "--seed", "ff" * 32)
        assert "commitment" in said

    def test_seed_not_hex_or_too_short(self, tmp_path: Path) -> None:
        """A `--seed` that is not hex, or too short to be a seed, is refused as bad input."""
        log = set_up(tmp_path, "seeded")
        assert "hex" in refused(log, {"command": "roll_initiative"}, "--seed", "xyz")
        assert "16 bytes" in refused(log, {"command": "roll_initiative"}, "--seed", "00ff")

    def test_seeded_fight_without_seed_or_faces_lists_the_dice(self, tmp_path: Path) -> None:
        """A seeded fight's roll with neither `--seed` nor faces is refused listing the dice to roll."""
        log = set_up(tmp_path, "seeded")
        assert "kael's initiative: check d6" in refused(log, {"command": "roll_initiative"})

    def test_refusal_with_json_prints_the_error_as_json(self, window_log: Path) -> None:
        """A refused command under `--json` prints its error as JSON on stdout, and nothing else (no events, no
        options): `{"error": {"kind": "IllegalOrder", "rule": "lifecycle", ...}}` (docs/live.md, "Errors for a
        script"); its line on stderr as ever; nothing written."""
        before = files_in(window_log.parent)
        result = do(window_log, {"command": "end_turn", "who": "kael"}, "--json")
        assert result.exit_code == 2 and files_in(window_log.parent) == before
        error = json.loads(result.stdout)
        assert list(error) == ["error"] and (error["error"]["kind"], error["error"]["rule"]) == (
            "IllegalOrder", "lifecycle")
        assert result.stderr.startswith("omen: error: [lifecycle] the turn cannot end")

    def test_refusal_names_no_seq_beyond_the_log(self, setup_log: Path) -> None:
        """A refusal does not point at a seq the log does not have."""
        said = refused(setup_log, {"command": "end_turn", "who": "kael"})
        assert not any(int(seq) > 3 for seq in re.findall(r"seq (\d+)", said))


JOIN = ('command = "join"\n\n[sheet]\nid = "bob"\nname = "Bob"\nside = "wardens"\nhp = 10\nwill = 2\n'
        'abilities = ["riposte", "nonesuch"]\n\n[sheet.attributes]\n'
        + "".join(f'{a} = {{ die = "d6" }}\n' for a in ("STR", "AGI", "INT", "RES", "FCS"))
        + '\n[[sheet.weapons]]\nid = "club"\nweapon_damage = 2\ndamage_type = "crushing"\n')


class TestJoinRefusedWhereWritten:
    """A join the rules refuse names the command's file, the line and the field, as a scenario names a sheet."""

    @pytest.mark.parametrize("changes, line, path, says", [
        ((), 9, "$.sheet.abilities[1]", "[C37] bob's abilities list 'nonesuch'"),
        ((('"nonesuch"', '"battle_focus"'), ('"crushing"', '"ooze"')), 21, "$.sheet.weapons[0].damage_type",
         "[C14] unknown damage type 'ooze' in bob's weapon 'club'"),
        ((('"nonesuch"', '{ id = "grit", name = "Grit", use = "passive", when = { owner_has = ["Burnin"] }, '
                         'effects = [{ kind = "modifier", total = "defense", value = 1 }] }'),), 9,
         "$.sheet.abilities[1].when.owner_has[0]", "[C28] unknown condition 'Burnin' in bob's ability 'grit'"),
    ])
    def test_from_a_toml_file(self, setup_log: Path, tmp_path: Path, changes: tuple[tuple[str, str], ...],
                              line: int, path: str, says: str) -> None:
        """C37, C14, C28: ``omen do LOG --file join.toml`` refused names ``join.toml:LINE``, the rule and ``(at
        $.sheet...)``, the field's path in the command; nothing is written."""
        text = JOIN
        for old, new in changes:
            text = text.replace(old, new)
        file = tmp_path / "join.toml"
        file.write_text(text)
        said = _refused_file(setup_log, file)
        assert said.startswith(f"omen: error: {file}:{line}: the rules refuse this combatant: {says}")
        assert said.endswith(f"(at {path})")

    def test_from_a_json_file(self, setup_log: Path, tmp_path: Path) -> None:
        """The same in a JSON command: the line of the field in the JSON text."""
        import tomllib

        file = tmp_path / "join.json"
        file.write_text(json.dumps(tomllib.loads(JOIN), indent=1))
        said = _refused_file(setup_log, file)
        assert said.startswith(f"omen: error: {file}:11: the rules refuse this combatant: [C37]")
        assert said.endswith("(at $.sheet.abilities[1])")
        assert file.read_text().splitlines()[10].strip() == '"nonesuch"'

    def test_an_id_already_taken_is_at_the_sheet_s_id(self, turn_log: Path, tmp_path: Path) -> None:
        """A sheet whose id is already in the fight is refused at the line of its ``id`` (``$.sheet.id``)."""
        file = tmp_path / "join.toml"
        file.write_text(JOIN.replace('id = "bob"', 'id = "kael"').replace(', "nonesuch"', ""))
        said = _refused_file(turn_log, file)
        assert said.startswith(f"omen: error: {file}:4: the rules refuse this combatant: [setup] a combatant with "
                               "id 'kael' has already joined")
        assert said.endswith("(at $.sheet.id)")


class TestARefusedFieldIsNamed:
    """A command the rules refuse at one of its fields names it: the file's line and the field's path, as a join
    does (it said only the rule: found by a tester writing a client)."""

    def test_a_weapon_the_sheet_lacks_from_a_file(self, turn_log: Path, tmp_path: Path) -> None:
        """C4: Kael's attack with a maul his sheet has not: ``attack.toml:4: [C4] ... (at $.weapon)``."""
        file = tmp_path / "attack.toml"
        file.write_text('command = "declare_attack"\nattacker = "kael"\ntarget = "vesh"\nweapon = "maul"\n')
        said = _refused_file(turn_log, file)
        assert said.startswith(f"omen: error: {file}:4: [C4] 'kael' has no weapon 'maul'") and \
            said.endswith("(at $.weapon)"), said

    def test_an_unknown_condition_typed_in(self, turn_log: Path) -> None:
        """C28: a condition the ruleset does not know, given on the command line: its path in the command."""
        before = turn_log.read_bytes()
        result = omen("do", str(turn_log), '{"command":"apply_condition","who":"kael","condition":"Sleepy"}')
        assert result.exit_code == 2 and turn_log.read_bytes() == before
        said = " ".join(result.stderr.split())
        assert said.startswith("omen: error: the command:1: [C28] unknown condition 'Sleepy'") and \
            said.endswith("(at $.condition)"), said


class TestFacesAreNamedAtTheDice:
    """Too few or too many faces are named at the command's ``dice``, its line and path, as the server names
    ``$.command.dice`` (found by a tester)."""

    def test_too_many_faces_from_a_file(self, turn_log: Path, tmp_path: Path) -> None:
        """C29: twelve faces for an attack that rolls far fewer: ``attack.toml:5: ... too many ... (at $.dice)``."""
        file = tmp_path / "attack.toml"
        file.write_text('command = "declare_attack"\nattacker = "kael"\ntarget = "vesh"\nweapon = "longsword"\n'
                        "dice = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n")
        said = _refused_file(turn_log, file)
        assert said.startswith(f"omen: error: {file}:5: 12 faces given, but this command rolls") and \
            said.endswith("(at $.dice)"), said

    def test_too_few_faces_typed_in(self, turn_log: Path) -> None:
        """C29: an empty ``dice`` for an attack that rolls: ``the command:1: ... 0 faces were given ... (at
        $.dice)``; nothing written."""
        before = turn_log.read_bytes()
        result = omen("do", str(turn_log), '{"command":"declare_attack","attacker":"kael","target":"vesh",'
                                           '"weapon":"longsword","dice":[]}')
        assert result.exit_code == 2 and turn_log.read_bytes() == before
        said = " ".join(result.stderr.split())
        assert said.startswith("omen: error: the command:1: ") and "0 faces were given" in said and \
            said.endswith("(at $.dice)"), said


def _refused_file(log: Path, file: Path) -> str:
    """``omen do LOG --file FILE``, refused: exit 2, nothing written; the message, unwrapped."""
    before = files_in(log.parent)
    result = omen("do", str(log), "--file", str(file))
    assert result.exit_code == 2, result.output
    assert files_in(log.parent) == before and result.stdout == ""
    return " ".join(result.stderr.split())


class TestNextCommandsRunAsPasted:
    def test_a_seeded_fight_whose_seed_is_not_known_shows_where_the_seed_goes(self, tmp_path: Path) -> None:
        """A seeded fight's seed not given here: `next:` prints a command that rolls with `--seed HEX` and says
        the seed is the GM's (or the faces for the table's dice); after the end, `reveal_seed` likewise (pasted
        without the seed it failed: "reveal_seed needs the seed")."""
        log = set_up(tmp_path, "seeded")
        shown = omen("status", str(log)).stdout
        assert "next: (this seeded fight's seed is not known here: replace HEX with it)" in shown
        assert (f"""omen do {log} '{{"command":"roll_initiative"}}' --seed HEX   # the seed is the GM's: give it """
                """with --seed (or set OMEN_SEED); or, for the table's dice, leave it out and add "dice": the faces """
                """of kael's initiative: check d6; vesh's initiative: check d8""") in shown
        played(log, {"command": "end_fight"})
        shown = omen("status", str(log)).stdout
        assert (f"""  omen do {log} '{{"command":"reveal_seed"}}' --seed HEX   # the seed is the GM's: give it with """
                "--seed (or set OMEN_SEED)") in shown.splitlines()
        pasted = omen("do", str(log), '{"command":"reveal_seed"}', "--seed", SEED)
        assert pasted.exit_code == 0, pasted.output

    def test_a_store_of_several_fights_names_the_fight_in_every_command(self, tmp_path: Path) -> None:
        """A directory holding 12 fights: without --fight it is refused naming the first 10 and how many more;
        `omen status --fight F` prints every `next:` command and its footer with `--fight F`, and the first runs
        as pasted (it failed: "holds 12 fights; choose one with --fight"); `omen do --fight F`'s footer names it."""
        store = tmp_path / "fights"
        store.mkdir()
        for n in range(12):
            ran = omen("run", str(write_scenario(tmp_path, fight_id=f"f{n:02}")), "--log", f"{store}/", "--quiet")
            assert ran.exit_code == 0, ran.output
        said = " ".join(omen("status", str(store)).stderr.split())
        assert said == (f"omen: error: {store} holds 12 fights (f00, f01, f02, f03, f04, f05, f06, f07, f08, f09, "
                        "and 2 more); choose one with --fight")
        done = omen("do", str(store), json.dumps(INITIATIVE), "--fight", "f03")
        assert done.exit_code == 0 and done.stdout.splitlines()[-1].endswith(
            f"(omen status {store} --fight f03 --all lists every command accepted now)")
        shown = omen("status", str(store), "--fight", "f03").stdout.splitlines()
        commands = [c.strip() for c in shown[shown.index("next:") + 1:-1]]
        assert len(commands) == 2 and all(c.split("   #")[0].endswith(" --fight f03") for c in commands)
        assert commands[1] == f"""omen do {store} '{{"command":"end_turn","who":"kael"}}' --fight f03"""
        assert shown[-1].endswith(f"(omen status {store} --fight f03 --all lists every command accepted now)")
        pasted = omen(*shlex.split(commands[1])[1:])
        assert pasted.exit_code == 0, pasted.output


TIE = """[fight]
id = "tie"
dice = "manual"
""" + "".join(f"""
[[combatants]]
id = "{who}"
name = "{who.title()}"
side = "{side}"
hp = 10
attributes = {{ STR = {{ die = "d6" }}, AGI = {{ die = "{die}", bonus = {bonus} }}, INT = {{ die = "d4" }}, \
RES = {{ die = "d6" }}, FCS = {{ die = "d6" }} }}
""" for who, side, die, bonus in (("kael", "wardens", "d6", 1), ("brin", "wardens", "d8", 1),
                                  ("vesh", "raiders", "d6", 0)))


class TestWording:
    def test_an_initiative_tie_costs_nothing_in_words(self, tmp_path: Path) -> None:
        """C19: Kael and Brin (allies, AGI +1) both at 5: `omen do` and `omen status` say the tie is settled at no
        cost (they said "costs free")."""
        (tmp_path / "tie.toml").write_text(TIE)
        log = tmp_path / "tie.jsonl"
        assert omen("run", str(tmp_path / "tie.toml"), "--log", str(log), "--quiet").exit_code == 0
        tied = do(log, {"command": "roll_initiative", "dice": [4, 4, 2]})
        assert "answer with agree_initiative or roll_off; at no cost" in text(tied) and "costs free" not in text(tied)
        assert omen("status", str(log)).stdout.splitlines()[1] == (
            "awaited: Kael, Brin: an initiative tie among allies (C19), with agree_initiative or roll_off; at no cost")

    def test_after_the_end_nobody_has_the_turn(self, turn_log: Path) -> None:
        """After end_fight `omen status` marks no combatant with the turn and gives none its Action and Movement
        (Kael kept "▶" and "Action 1 Move 1")."""
        played(turn_log, {"command": "end_fight"})
        shown = omen("status", str(turn_log)).stdout
        assert "▶" not in shown and "Action 1" not in shown
        assert "  Kael Arden (kael, wardens)  HP 24/24  Will 10/10  BA 2  in hand: longsword, shield" in shown

    def test_replay_steps_names_an_event_the_narrative_leaves_silent(self, turn_log: Path) -> None:
        """`omen replay --steps` gives each command_issued its seq and command (it printed a bare state line)."""
        shown = omen("replay", str(turn_log), "--steps").stdout.splitlines()
        at = shown.index("#4   (command issued: roll_initiative)")
        assert shown[at + 1].strip().startswith("└ setup |") and not shown[at - 1].strip().startswith("#4")


class TestDoOutput:
    def test_do_is_short_unless_asked_for_the_options(self, setup_log: Path, tmp_path: Path) -> None:
        """`omen do` tells what happened, where the fight stands and the head, pointing at `omen status` for
        every option; `--options` lists them too."""
        short = do(setup_log, INITIATIVE)
        assert short.exit_code == 0, short.output
        assert "omen status" in text(short) and "declare_attack" not in text(short)
        longer = do(setup_log, {"command": "end_turn", "who": "kael"}, "--options")
        assert longer.exit_code == 0, longer.output
        assert "declare_attack" in text(longer) and "the GM:" in text(longer)

    def test_do_sent_to_a_pipe_never_wraps_and_points_at_status_all(self, setup_log: Path) -> None:
        """Standard output that is not a terminal is never wrapped: the footer, a head and the log's path copy
        whole from one line, and it names `omen status LOG --all` (the command that lists every command)."""
        result = do(setup_log, INITIATIVE)
        assert result.exit_code == 0, result.output
        footer = result.stdout.splitlines()[-1]
        assert re.fullmatch(r"head \d+:[0-9a-f]{64}  \(omen status \S+ --all lists every command accepted now\)",
                            footer), footer
        assert str(setup_log) in footer

    def test_missing_faces_in_a_seeded_fight_point_at_the_seed(self, tmp_path: Path) -> None:
        """In a seeded fight, a command given neither faces nor --seed is refused, and the message says that
        --seed would roll the fight's own dice."""
        log = set_up(tmp_path, "seeded")
        said = refused(log, INITIATIVE_WITHOUT_FACES)
        assert "--seed" in said and "kael's initiative" in said

    def test_verify_of_a_manual_fight_mentions_no_seed(self, turn_log: Path) -> None:
        """`omen verify` of a fight with no seeded dice says so, instead of a seed that was never revealed."""
        result = omen("verify", str(turn_log))
        assert result.exit_code == 0, result.output
        assert "no seeded dice" in text(result) and "not been revealed" not in text(result)


class TestRevealMidFight:
    NEXT = "ff" * 32

    def test_a_reveal_in_a_fight_that_goes_on_commits_to_the_next_seed_given(self, tmp_path: Path) -> None:
        """C42: `omen do reveal_seed --seed S --next-seed N` in a fight that goes on reveals S and commits to N in
        the same command; the fight's dice then roll from N (`--seed N`), and --seed S no longer fits."""
        log = set_up(tmp_path, dice="seeded")
        played(log, INITIATIVE)
        result = do(log, {"command": "reveal_seed"}, "--seed", SEED, "--next-seed", self.NEXT)
        assert result.exit_code == 0, result.output
        kinds = [e["event"]["type"] for e in lines(log)[-2:]]
        assert kinds == ["seed_revealed", "seed_committed"]
        assert lines(log)[-1]["event"]["commitment"] == hashlib.sha256(bytes.fromhex(self.NEXT)).hexdigest()
        check = {"command": "static_check", "check": {"who": "kael", "attribute": "FCS"}, "difficulty": 3}
        assert do(log, check, "--seed", SEED).exit_code == 2
        assert do(log, check, "--seed", self.NEXT).exit_code == 0

    def test_the_next_seed_cannot_be_a_seed_revealed(self, tmp_path: Path) -> None:
        """C42 (found by a forging tester: --seed S --next-seed S was accepted, the later dice predictable from the
        log): --next-seed equal to the seed revealed now, or to one revealed before, is refused naming --next-seed,
        exit 2, nothing written."""
        log = set_up(tmp_path, dice="seeded")
        played(log, INITIATIVE)
        said = refused(log, {"command": "reveal_seed"}, "--seed", SEED, "--next-seed", SEED)
        assert said == ("omen: error: --next-seed is the seed this reveal_seed reveals: a revealed seed is spent "
                        "(C42): dice drawn under it again would be predictable by anyone holding the log; give a "
                        "fresh seed (or leave --next-seed out: omen makes one)")
        assert do(log, {"command": "reveal_seed"}, "--seed", SEED, "--next-seed", self.NEXT).exit_code == 0
        again = refused(log, {"command": "reveal_seed"}, "--seed", self.NEXT, "--next-seed", SEED)
        assert again.startswith("omen: error: --next-seed is the seed revealed at seq 13: a revealed seed is spent")

    def test_a_next_seed_that_is_not_hex_is_named_as_next_seed(self, tmp_path: Path) -> None:
        """`--next-seed zz` is refused naming --next-seed, exit 2, nothing written (it said "--seed must be hex ...
        got 'zz'", the wrong option; found by a tester)."""
        log = set_up(tmp_path, dice="seeded")
        played(log, INITIATIVE)
        said = refused(log, {"command": "reveal_seed"}, "--seed", SEED, "--next-seed", "zz")
        assert said == "omen: error: --next-seed must be hex (two digits a byte), got 'zz' (see 'omen do --help')"

    def test_a_next_seed_where_none_follows_is_refused(self, tmp_path: Path) -> None:
        """C42: --next-seed beside a command other than reveal_seed, or beside a reveal in a fight that has ended (no
        fresh seed follows it), is refused saying why, exit 2, nothing written (it was silently ignored, exit 0;
        found by a tester)."""
        log = set_up(tmp_path, dice="seeded")
        played(log, INITIATIVE)
        said = refused(log, {"command": "end_turn", "who": "kael"}, "--next-seed", self.NEXT)
        assert said == ("omen: error: --next-seed is for reveal_seed only (the fresh seed the dice are drawn from "
                        "after the seed is revealed, C42), not for end_turn: leave it out")
        played(log, {"command": "end_fight"})
        said = refused(log, {"command": "reveal_seed"}, "--seed", SEED, "--next-seed", self.NEXT)
        assert said == ("omen: error: --next-seed: fight 'ford' is over, so no fresh seed follows this reveal (C42: a "
                        "fight that has ended commits to none): leave --next-seed out")
        assert do(log, {"command": "reveal_seed"}, "--seed", SEED).exit_code == 0

    def test_reveal_seed_in_a_fight_without_a_seed_says_so_first(self, tmp_path: Path) -> None:
        """reveal_seed with no seed, in a manual fight: refused saying the fight has no seed to reveal, exit 2 (it
        asked for the seed, whose giving was then refused as matching nothing: a circle; found by a tester)."""
        log = set_up(tmp_path)
        said = refused(log, {"command": "reveal_seed"})
        assert said == f"omen: error: {log}: fight 'ford' has manual dice, not seeded: it has no seed to reveal"

    def test_a_next_seed_and_another_next_commitment_are_refused(self, tmp_path: Path) -> None:
        """C42: --next-seed beside a command whose next_commitment it does not hash to names two fresh seeds: refused,
        exit 2, nothing written (it was silently ignored, the log committed to the command's; found by a tester); one
        that hashes to it is the same seed twice, and accepted."""
        log = set_up(tmp_path, dice="seeded")
        played(log, INITIATIVE)
        other = {"command": "reveal_seed", "next_commitment": "0" * 64}
        said = refused(log, other, "--seed", SEED, "--next-seed", self.NEXT)
        assert said == ("omen: error: --next-seed and the command's next_commitment both name the fresh seed (C42), "
                        "and they differ: --next-seed does not hash to it; give one of them")
        same = {"command": "reveal_seed", "next_commitment": hashlib.sha256(bytes.fromhex(self.NEXT)).hexdigest()}
        assert do(log, same, "--seed", SEED, "--next-seed", self.NEXT).exit_code == 0

    def test_a_malformed_next_commitment_is_said_in_words(self, tmp_path: Path) -> None:
        """A next_commitment that is not a sha256 in hex is refused naming its field, in words, not msgspec's regex
        (it said "Expected `str` matching regex '^[0-9a-f]{64}$(?!\\n)'"), exit 2, nothing written."""
        log = set_up(tmp_path, dice="seeded")
        said = refused(log, {"command": "reveal_seed", "seed": SEED, "next_commitment": "ABC"})
        assert said == ("omen: error: the command:1: Expected 64 lowercase hex digits (a sha256, as omen writes it) "
                        "(at $.next_commitment)")

    def test_a_stale_omen_seed_is_named_with_where_it_was_revealed_and_the_fight_still_shows(
            self, tmp_path: Path) -> None:
        """C42: OMEN_SEED still holding the seed revealed mid-fight: `omen do` of a command that rolls nothing
        goes on with a warning naming OMEN_SEED (it said "--seed"), the seq of the reveal and of the fresh
        commitment; `omen status` shows the fight with that warning (it exited 2 showing nothing); `--seed` with
        the spent seed is refused with the same reasons."""
        log = set_up(tmp_path, dice="seeded")
        played(log, INITIATIVE)
        assert do(log, {"command": "reveal_seed"}, "--seed", SEED, "--next-seed", self.NEXT).exit_code == 0
        why = (f"{log}: OMEN_SEED does not hash to the seed commitment of fight 'ford': it is the seed revealed at "
               "seq 13, spent (C42); the fight's dice come from the fresh seed committed to at seq 14: give that one")
        ended = runner.invoke(app, ["do", str(log), json.dumps({"command": "end_turn", "who": "kael"})],
                              env={"OMEN_SEED": SEED})
        assert ended.exit_code == 0, ended.output
        assert " ".join(ended.stderr.split()) == (f"omen: warning: {why}; going on without it (a command that rolls "
                                                  "dice needs the seed in force or its faces)")
        shown = runner.invoke(app, ["status", str(log)], env={"OMEN_SEED": SEED})
        assert shown.exit_code == 0 and "Vesh the Cinder-Hand's turn" in shown.stdout
        assert " ".join(shown.stderr.split()) == \
            f"omen: warning: {why.replace('OMEN_SEED', 'the seed given (OMEN_SEED)')}; shown without it"
        said = refused(log, {"command": "end_turn", "who": "vesh"}, "--seed", SEED)
        assert said == f"omen: error: {why.replace('OMEN_SEED', '--seed')}"

    def test_after_two_reveals_a_spent_seed_names_the_commitment_in_force(self, tmp_path: Path) -> None:
        """C42: the first seed revealed (seq 13, the fresh one committed at 14), then the fresh one revealed too
        (seq 16, a third committed at 17): --seed with the first is refused naming the commitment in force, seq 17
        (it named seq 14, whose seed is spent as well; found by a tester)."""
        log = set_up(tmp_path, dice="seeded")
        played(log, INITIATIVE)
        third = "ee" * 32
        assert do(log, {"command": "reveal_seed"}, "--seed", SEED, "--next-seed", self.NEXT).exit_code == 0
        assert do(log, {"command": "reveal_seed"}, "--seed", self.NEXT, "--next-seed", third).exit_code == 0
        said = refused(log, {"command": "end_turn", "who": "vesh"}, "--seed", SEED)
        assert said == (f"omen: error: {log}: --seed does not hash to the seed commitment of fight 'ford': it is the "
                        "seed revealed at seq 13, spent (C42); the fight's dice come from the fresh seed committed to "
                        "at seq 17: give that one")

    def test_a_fresh_seed_made_for_you_is_said_once_on_standard_error(self, tmp_path: Path) -> None:
        """C42: without --next-seed, omen do makes the fresh seed and says it once, with what to do with it; with
        it, the fight rolls on and verifies."""
        log = set_up(tmp_path, dice="seeded")
        played(log, INITIATIVE)
        result = do(log, {"command": "reveal_seed"}, "--seed", SEED)
        assert result.exit_code == 0, result.output
        said = re.search(r"fresh seed, committed to at seq \d+: ([0-9a-f]{64})\. Keep it secret", text(result))
        assert said is not None, text(result)
        check = {"command": "static_check", "check": {"who": "kael", "attribute": "FCS"}, "difficulty": 3}
        assert do(log, check, "--seed", said[1]).exit_code == 0
        assert omen("verify", str(log), "--seed", said[1]).exit_code == 0


class TestForScripts:
    """What a script driving ``omen do`` reads (docs/live.md, "From a script"): the command on standard input, a
    fresh seed in the JSON, a retry that raced its first try, faces named where they are written."""

    def test_a_command_on_standard_input(self, turn_log: Path) -> None:
        """`--file -` reads the command from standard input (a command between 128 KiB, a single argument's most
        on Linux, and 1 MiB had to go through a file: a bot tester); refused there, it is named "the command" with
        its line and field, nothing written."""
        result = runner.invoke(app, ["do", str(turn_log), "--file", "-"],
                               input='command = "end_turn"\nwho = "kael"\n')
        assert result.exit_code == 0, result.output
        assert lines(turn_log)[-1]["event"]["type"] == "turn_started"
        before = turn_log.read_bytes()
        result = runner.invoke(app, ["do", str(turn_log), "--file", "-"], input='command = "end_turn"\nwho = "ash"\n')
        assert result.exit_code == 2 and turn_log.read_bytes() == before
        said = " ".join(result.stderr.split())
        assert said.startswith("omen: error: the command:2: [setup] no combatant 'ash'") and said.endswith(
            "(at $.who)"), said
        both = runner.invoke(app, ["do", str(turn_log), '{"command":"end_turn","who":"vesh"}', "--file", "-"],
                             input="")
        assert both.exit_code == 2 and "not both or neither" in both.stderr

    def test_a_fresh_seed_is_in_the_json(self, tmp_path: Path) -> None:
        """C42: `omen do reveal_seed --seed S --json` in a fight that goes on prints the fresh seed omen drew as
        `next_seed` (it was only in words on standard error: a bot tester); it hashes to the commitment the log
        holds, and rolls the fight's dice from then on; with --next-seed given, `next_seed` is null."""
        log = set_up(tmp_path, dice="seeded")
        played(log, INITIATIVE)
        result = do(log, {"command": "reveal_seed"}, "--seed", SEED, "--json")
        assert result.exit_code == 0, result.output
        printed = json.loads(result.stdout)
        schema_validator(DO_SCHEMA).validate(printed)
        fresh = printed["next_seed"]
        assert lines(log)[-1]["event"]["commitment"] == hashlib.sha256(bytes.fromhex(fresh)).hexdigest()
        check = {"command": "static_check", "check": {"who": "kael", "attribute": "FCS"}, "difficulty": 3}
        assert do(log, check, "--seed", fresh).exit_code == 0
        again = do(log, {"command": "reveal_seed"}, "--seed", fresh, "--next-seed", "ee" * 32, "--json")
        assert again.exit_code == 0 and json.loads(again.stdout)["next_seed"] is None

    def test_a_retry_that_raced_its_first_try_is_found_done(self, turn_log: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
        """docs/live.md (Retries): a retry under the same idempotency key that loses the race to its own first try
        (two processes at once: the first appends while the second decides) is found done, exit 0,
        `already_done`, nothing appended twice (it exited 1, "at version 20, not the expected 17": a bot tester);
        another command that loses a race still exits 1."""
        from omen_core import Fight
        from omen_core.store import JsonlStore

        real = Fight.execute
        raced = {"left": 1}

        def first_try_lands_meanwhile(self: Any, command: Any, **kw: Any) -> Any:
            if raced["left"]:
                raced["left"] -= 1
                other = Fight.load(JsonlStore.single(turn_log), "ford")
                real(other, command, **kw)  # the other process's try, appended while this one decided
            return real(self, command, **kw)

        monkeypatch.setattr(Fight, "execute", first_try_lands_meanwhile)
        end = {"command": "end_turn", "who": "kael"}
        result = do(turn_log, end, "--idempotency-key", "k1", "--json")
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["already_done"] is True
        assert [e["event"]["type"] for e in lines(turn_log)].count("turn_ended") == 1
        raced["left"] = 1
        lost = do(turn_log, {"command": "end_turn", "who": "vesh"}, "--json")
        assert lost.exit_code == 1
        assert json.loads(lost.stdout)["error"]["kind"] == "ConcurrencyError"

    def test_a_chosen_reroll_names_the_die_it_rerolls(self, tmp_path: Path) -> None:
        """C39: Kael's attack would miss (1 and 1 against Vesh's 6 + 2); his Second Chance, answered with `omen do`
        and the face 8, is told as the whole log tells it: whose die, the face it showed and the roll's seq (it said
        "rerolls die 0 of roll 6" alone: a rules tester)."""
        source = (SHEETS / "kael.toml").read_text()
        cut = source.index("\n[")
        (tmp_path / "kael.toml").write_text(source[:cut] + '\nabilities = ["second_chance"]\n' + source[cut:])
        scenario = tmp_path / "ford.toml"
        scenario.write_text(f'[fight]\nid = "ford"\ndice = "manual"\n\n[[combatants]]\n'
                            f'sheet = "{tmp_path / "kael.toml"}"\n\n[[combatants]]\nsheet = "{SHEETS / "vesh.toml"}"\n')
        log = tmp_path / "ford.jsonl"
        assert omen("run", str(scenario), "--log", str(log), "--quiet").exit_code == 0
        played(log, INITIATIVE, {"command": "engage", "who": "kael", "others": ["vesh"]},
               {"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword",
                "dice": [1, 1, 6]})
        hit_at = next(e["seq"] for e in lines(log) if e["event"]["type"] == "dice_rolled"
                      and e["event"]["purpose"] == "hit")
        result = do(log, {"command": "answer_decision", "decision": "second_chance", "who": "kael", "choice": "use",
                          "dice": [8]})
        assert result.exit_code == 0, result.output
        said = " ".join(result.stdout.split())
        assert (f"primary d8 → 8 (rerolls Kael Arden's hit primary d8, which showed 1: die 0 of the roll at "
                f"#{hit_at}, dice counted from 0") in said, said

    def test_an_expected_version_not_the_head_is_a_lost_race(self, turn_log: Path) -> None:
        """docs/live.md (Retries and races): `--expected-version SEQ`, the head's seq the caller saw, refuses a command
        once the fight has moved on: exit 1, the ConcurrencyError under --json, every file byte for byte as it was
        (two bots' undos from one state both went through, each deciding on a state it never saw: a bot tester);
        at the head it is appended; a retry under its key is found done whatever SEQ it gives."""
        head = status_json(turn_log)["seq"]
        before = files_in(turn_log.parent)
        stale = do(turn_log, {"command": "undo"}, "--expected-version", str(head - 1), "--json")
        assert stale.exit_code == 1, stale.output
        error = json.loads(stale.stdout)["error"]
        assert (error["kind"], error["exit"]) == ("ConcurrencyError", 1), error
        assert error["message"] == (f"fight 'ford' is at version {head}, not the expected {head - 1}; nothing was "
                                    "written (reload and try again)")
        assert files_in(turn_log.parent) == before
        end = {"command": "end_turn", "who": "kael"}
        done = do(turn_log, end, "--expected-version", str(head), "--idempotency-key", "e1", "--json")
        assert done.exit_code == 0, done.output
        again = do(turn_log, end, "--expected-version", str(head), "--idempotency-key", "e1", "--json")
        assert again.exit_code == 0 and json.loads(again.stdout)["already_done"] is True, again.output

    def test_a_retry_of_a_command_undone_since_says_so(self, turn_log: Path) -> None:
        """docs/live.md (Retries): a retry under the key of a command that was undone since is found done, nothing
        appended, and says so: `undone_at`, the undo's seq, under --json (null for one that stands), and in words
        (it said `already_done` alone, with the fight back where it was: a bot tester)."""
        end = {"command": "end_turn", "who": "kael"}
        first = json.loads(do(turn_log, end, "--idempotency-key", "e1", "--json").stdout)
        assert first["already_done"] is False and first["undone_at"] is None
        again = json.loads(do(turn_log, end, "--idempotency-key", "e1", "--json").stdout)
        assert again["already_done"] is True and again["undone_at"] is None
        undo = json.loads(do(turn_log, {"command": "undo"}, "--json").stdout)
        undone_at = next(e["seq"] for e in undo["events"] if e["event"]["type"] == "undone")
        retried = do(turn_log, end, "--idempotency-key", "e1", "--json")
        printed = json.loads(retried.stdout)
        schema_validator(DO_SCHEMA).validate(printed)
        assert (printed["already_done"], printed["undone_at"]) == (True, undone_at)
        said = " ".join(do(turn_log, end, "--idempotency-key", "e1").stdout.split())
        assert f"nothing appended now; it was undone since (the undo at seq {undone_at}): the fight stands as if it " \
               "had not been given" in said, said

    def test_faces_in_a_seeded_fight_without_the_seed_and_a_face_too_big_are_placed(self, tmp_path: Path) -> None:
        """Too few faces in a seeded fight given without --seed, and a face its die cannot show, are named where
        the command is written, its line and field, as other faces are (they were not: a bot tester); a command
        without faces is refused as FacesNeeded, C29, under --json too, placed at the command's line and
        ``$.dice`` (it was not placed: a docs tester), with the dice it needs as data (``needed_dice``)."""
        log = set_up(tmp_path, dice="seeded")
        said = refused(log, {"command": "roll_initiative", "dice": [1]})
        assert said.startswith("omen: error: the command:1: ") and said.endswith(
            "(or give --seed HEX to roll this seeded fight's own dice) (at $.dice)"), said
        # without faces, --json still says its kind and rule (it said BadInput, no rule), and where they go
        bare = do(log, {"command": "roll_initiative"}, "--json")
        assert bare.exit_code == 2
        error = json.loads(bare.stdout)["error"]
        assert (error["kind"], error["rule"], error.get("field"), error.get("line")) \
            == ("FacesNeeded", "C29", "$.dice", 1), error
        assert error["message"].endswith("(or give --seed HEX to roll this seeded fight's own dice) (at $.dice)"), \
            error
        # the dice it still needs as data, one at a time in C29 order, as the server's problem gives them (a client of
        # the CLI had to read them out of the message: an OpenAPI client author)
        assert error["needed_dice"] == [{"roller": "kael", "purpose": "initiative", "pool": "check", "sides": 6},
                                        {"roller": "vesh", "purpose": "initiative", "pool": "check", "sides": 8}]
        (tmp_path / "m").mkdir()
        manual = set_up(tmp_path / "m")
        said = refused(manual, {"command": "roll_initiative", "dice": [2, 9]})
        assert said.startswith("omen: error: the command:1: die face 9 is not possible on a d8") and said.endswith(
            "(at $.dice[1])"), said

    def test_faces_given_with_the_seed_roll_first_and_the_seed_the_rest(self, tmp_path: Path) -> None:
        """docs/live.md: in a seeded fight given its seed, a command's faces roll its first dice and the seed the
        rest, as the server does: Kael's hit typed (4 on the STR d8, 2 on the FCS d6), Vesh's base defense die
        the seed's at its counter (it was refused for want of a third face: a tester); verify decides it again and
        lists the typed roll as dice provenance. Without the seed the faces are all the command's dice."""
        from omen_core.dice import seeded_face

        log = set_up(tmp_path, dice="seeded")
        played(log, INITIATIVE)
        attack = {"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword",
                  "dice": [4, 2]}
        without = do(log, attack)
        assert without.exit_code == 2 and "FacesNeeded" not in without.stdout
        assert "give --seed HEX to roll this seeded fight's own dice" in text(without)
        given = do(log, attack, "--seed", SEED)
        assert given.exit_code == 0, given.output
        rolls = [e["event"] for e in lines(log) if e["event"]["type"] == "dice_rolled"][-2:]
        hit, defense = rolls
        assert (hit["purpose"], hit["source"], [d["face"] for d in hit["dice"]]) == ("hit", "manual", [4, 2])
        assert (defense["purpose"], defense["source"], defense["roller"]) == ("base_defense", "seeded", "vesh")
        assert defense["dice"][0]["face"] == seeded_face(bytes.fromhex(SEED), "ford", defense["counter"], 0,
                                                         defense["dice"][0]["sides"])
        audit = omen("verify", str(log))
        assert audit.exit_code == 0, audit.output
        assert "dice provenance: seq" in audit.output and "kael's hit roll [4, 2] is manual" in audit.output

    def test_ctrl_c_under_json_is_an_error_object_too(self, tmp_path: Path) -> None:
        """docs/live.md ("Errors for a script"): a Ctrl-C as `omen do --json` decides its command exits 130 with
        `{"error": {"kind": "Interrupted", "exit": 130, ...}}` on standard output, as any failure under --json (it
        said a notice on standard error only, standard output empty), and nothing is appended."""
        import subprocess
        import sys

        log = played(set_up(tmp_path), INITIATIVE)
        size = len(lines(log))
        command = json.dumps({"command": "end_turn", "who": "kael"})
        script = ("import os, signal, sys\nimport omen_core.engine as engine\nreal = engine.Fight.execute\n"
                  "def execute(self, *a, **k):\n    os.kill(os.getpid(), signal.SIGINT)\n"
                  "    return real(self, *a, **k)\n"
                  f"engine.Fight.execute = execute\nsys.argv = ['omen', 'do', {str(log)!r}, {command!r}, '--json']\n"
                  "from omen_cli import main\nmain()\n")
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                              cwd=ROOT)  # (this checkout's omen_cli, as the test's own imports)
        assert done.returncode == 130, done.stderr
        error = json.loads(done.stdout)["error"]
        assert (error["kind"], error["exit"]) == ("Interrupted", 130), error
        assert error["message"].startswith("interrupted (Ctrl-C): what was written is whole") and "written" not in error
        assert done.stderr.startswith("omen: interrupted (Ctrl-C)") and len(lines(log)) == size

    def test_a_reveal_retried_under_its_key_is_found_done(self, tmp_path: Path) -> None:
        """docs/live.md (Retries): `reveal_seed --seed S --idempotency-key K` in a fight that goes on, run again, is
        found done, exit 0, nothing appended (the fresh seed's commitment omen filled in made the recorded command
        another than the retry's: "idempotency key 'K' was given to another command", exit 2, a bot tester)."""
        log = set_up(tmp_path, dice="seeded")
        played(log, INITIATIVE)
        first = do(log, {"command": "reveal_seed"}, "--seed", SEED, "--idempotency-key", "RK", "--json")
        assert first.exit_code == 0, first.output
        size = len(lines(log))
        again = do(log, {"command": "reveal_seed"}, "--seed", SEED, "--idempotency-key", "RK", "--json")
        assert again.exit_code == 0, again.output
        assert json.loads(again.stdout)["already_done"] is True and len(lines(log)) == size

    def test_the_seed_given_in_the_command_is_revealed_as_with_seed(self, tmp_path: Path) -> None:
        """C42: `{"command": "reveal_seed", "seed": S}` (as omen's own error for a reveal without a seed says to give
        it) in a fight that goes on reveals S and commits to a fresh seed, as `--seed S` does (it was refused: "commit
        to a fresh seed in the same command", a bot tester)."""
        log = set_up(tmp_path, dice="seeded")
        played(log, INITIATIVE)
        result = do(log, {"command": "reveal_seed", "seed": SEED}, "--json")
        assert result.exit_code == 0, result.output
        fresh = json.loads(result.stdout)["next_seed"]
        assert [e["event"]["type"] for e in lines(log)[-2:]] == ["seed_revealed", "seed_committed"]
        assert lines(log)[-1]["event"]["commitment"] == hashlib.sha256(bytes.fromhex(fresh)).hexdigest()

    def test_status_json_refuses_a_seed_that_is_not_the_fights(self, tmp_path: Path) -> None:
        """`omen status LOG --seed S --json` with a seed the fight's commitment does not match is refused, exit 2,
        as the text form is (it printed the options, exit 0: a bot checking its seed was told nothing was wrong);
        the fight's own seed is taken."""
        log = set_up(tmp_path, dice="seeded")
        for form in ("--json", "--all"):
            wrong = omen("status", str(log), "--seed", "00" * 32, form)
            assert wrong.exit_code == 2 and "does not hash to the seed commitment" in wrong.stderr, form
        assert omen("status", str(log), "--seed", SEED, "--json").exit_code == 0
