"""Tests for omen_cli: demo, schema and verify, their output and exit codes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner, Result

from omen_cli import app
from omen_core.commands import Undo
from omen_core.events import (
    EVENT_TYPES,
    CommandIssued,
    DiceRolled,
    ReactionWindowOpened,
    Undone,
    decode_line,
)

runner = CliRunner()
EMBER_FORD_DOC = Path(__file__).resolve().parents[2] / "docs" / "scenarios.md"


def omen(*args: str) -> Result:
    """Run the CLI in-process and return the result."""
    return runner.invoke(app, list(args))


@pytest.fixture
def demo_log(tmp_path: Path) -> Path:
    """A demo log written by ``omen demo``."""
    path = tmp_path / "demo.jsonl"
    assert omen("demo", "--short", "--log", str(path)).exit_code == 0
    return path


class TestDemo:
    def test_demo_prints_a_readable_verified_contest(self, tmp_path: Path) -> None:
        """The demo narrates a contest, a check, a save and attacks, verifies its log and says where it is."""
        path = tmp_path / "d.jsonl"
        result = omen("demo", "--short", "--log", str(path))
        assert result.exit_code == 0, result.output
        text = " ".join(result.output.split())
        for words in ("wins the contest", "against difficulty 8", "fails the save", "Active Defense window",
                      "blocks", "CRITICAL", "seed revealed", "verified fight 'demo'", str(path)):
            assert words in text
        lines = len(path.read_text().splitlines())
        assert f"({lines} events)" in text

    def test_demo_is_reproducible(self, tmp_path: Path) -> None:
        """With the published seed the demo rolls the same dice every time."""
        a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
        omen("demo", "--short", "--log", str(a))
        omen("demo", "--short", "--log", str(b))
        dice = [[decode_line(x).event for x in p.read_text().splitlines()] for p in (a, b)]
        assert dice[0] == dice[1]

    def test_fresh_seed_still_verifies(self, tmp_path: Path) -> None:
        """With a fresh random seed the demo's log still verifies against its revealed seed."""
        result = omen("demo", "--short", "--fresh-seed", "--log", str(tmp_path / "f.jsonl"))
        assert result.exit_code == 0 and "all match the revealed seed" in " ".join(result.output.split())


    def test_default_demo_is_a_whole_verified_fight(self, tmp_path: Path) -> None:
        """The README's first command plays a whole fight: ambush, rounds, reactions, an undo, a verified end."""
        path = tmp_path / "full.jsonl"
        result = omen("demo", "--log", str(path))
        assert result.exit_code == 0, result.output
        text = " ".join(result.output.split())
        for words in ("Ambush!", "Round 4", "Interrupt", "Attack of Opportunity", "[undone]", "UNDO of seq",
                      "The fight is over: raiders are defeated", "verified fight 'ember-ford'", "still undone"):
            assert words in text
        assert omen("verify", str(path)).exit_code == 0
        assert "<svg" in (tmp_path / "full.html").read_text() and str(tmp_path / "full.html") in text

    def test_demo_refuses_to_overwrite_another_log(self, tmp_path: Path) -> None:
        """--log pointing at a log of another fight is refused (exit 2) and the file is left alone."""
        import re

        duel = tmp_path / "duel.toml"
        duel.write_text(re.findall(r"```toml\n(.*?)```", EMBER_FORD_DOC.read_text(), re.S)[0])
        other = tmp_path / "mine.jsonl"
        assert omen("run", str(duel), "--log", str(other), "--quiet").exit_code == 0
        before = other.read_bytes()
        assert omen("demo", "--log", str(other)).exit_code == 2 and other.read_bytes() == before

    def test_fresh_seed_needs_short(self) -> None:
        """A fresh seed would not fit the whole fight's script: refused as bad input."""
        assert omen("demo", "--fresh-seed").exit_code == 2


class TestSchema:
    def test_schema_is_valid_json_schema_covering_every_event(self, demo_log: Path) -> None:
        """`omen schema` prints a valid JSON Schema with every event type, and demo lines validate against it."""
        result = omen("schema")
        schema = json.loads(result.stdout)
        jsonschema.Draft202012Validator.check_schema(schema)
        for kind in EVENT_TYPES:
            assert kind.__name__ in schema["$defs"]
        validator = jsonschema.Draft202012Validator(schema)
        for line in demo_log.read_text().splitlines():
            validator.validate(json.loads(line))

    def test_schema_rejects_a_malformed_event(self) -> None:
        """The schema is strict: an event with an unknown type tag does not validate."""
        schema = json.loads(omen("schema").stdout)
        bad = {"fight_id": "f", "seq": 1, "recorded_at": 0, "schema_version": 1, "prev_hash": "0" * 64,
               "event": {"type": "made_up"}, "hash": "0" * 64}
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)

    @pytest.mark.parametrize(("kind", "argv"), [
        ("verify", ["verify", "{log}", "--json"]),
        ("state", ["replay", "{log}", "--json"]),
        ("step", ["replay", "{log}", "--steps", "--json"]),
        ("explanation", ["explain", "{log}", "{seq}", "--json"]),
        ("fixtures", ["fixtures", "check", "--dir", "{fixtures}", "--json"]),
    ])
    def test_every_json_output_validates_against_its_published_schema(self, demo_log: Path, kind: str,
                                                                      argv: list[str]) -> None:
        """What `omen verify --json`, `omen replay --json`, `replay --steps --json` (each line), `omen explain
        --json` and `omen fixtures check --json` print validates against docs/schema/<kind>.schema.json, which
        `omen schema --of <kind>` prints (they had no schema: a bot tester); a report without `clean` does not."""
        path = ROOT / "docs" / "schema" / f"{kind}.schema.json"
        schema = json.loads(path.read_text())
        assert schema == json.loads(omen("schema", "--of", kind).stdout)
        validator = jsonschema.Draft202012Validator(schema)
        seq = next(json.loads(line)["seq"] for line in demo_log.read_text().splitlines()
                   if json.loads(line)["event"]["type"] == "hit_determined")
        result = omen(*[a.format(log=demo_log, seq=seq, fixtures=ROOT / "fixtures") for a in argv])
        assert result.exit_code == 0, result.output
        printed = [json.loads(line) for line in result.stdout.splitlines()]
        assert printed and (len(printed) == 1 or kind == "step")
        for value in printed:
            validator.validate(value)
        if kind == "verify":
            with pytest.raises(jsonschema.ValidationError):
                validator.validate({k: v for k, v in printed[0].items() if k != "clean"})

    def test_schema_to_file(self, tmp_path: Path) -> None:
        """`omen schema -o FILE` writes the same schema to a file."""
        out = tmp_path / "schema.json"
        assert omen("schema", "-o", str(out)).exit_code == 0
        assert json.loads(out.read_text()) == json.loads(omen("schema").stdout)


class TestVerify:
    def test_a_version_1_log_says_it_was_audited_event_by_event(self, tmp_path: Path) -> None:
        """A clean log of schema version 1 (no commands recorded) is not said to have had its commands decided again:
        the summary says it was audited event by event (docs/verify.md), and a version-5 log says how many commands
        were decided again."""
        fixture = Path(__file__).resolve().parents[2] / "fixtures" / "formats" / "v1-ember-ford" / "fight.jsonl"
        prefix = tmp_path / "v1.jsonl"
        prefix.write_bytes(b"".join(fixture.read_bytes().splitlines(keepends=True)[:150]))
        result = omen("verify", str(prefix))
        assert result.exit_code == 0, result.output
        summary = " ".join(result.output.split())
        assert "audited event by event (schema version 1: no commands recorded)" in summary
        assert "decided again" not in summary

    def test_clean_log_exits_0(self, demo_log: Path) -> None:
        """A sound log verifies with exit code 0."""
        result = omen("verify", str(demo_log))
        assert result.exit_code == 0 and "verified" in result.output

    def test_tampered_face_exits_1_with_the_seq(self, demo_log: Path) -> None:
        """Changing one die face in the file is a finding at that seq, exit code 1."""
        lines = demo_log.read_text().splitlines()
        # seq 5: the contest's first die (seq 4 is its command)
        assert decode_line(lines[4]).as_(DiceRolled).dice[0].face == 8
        assert lines[4].count('"face":8') == 1
        lines[4] = lines[4].replace('"face":8', '"face":7')
        demo_log.write_text("\n".join(lines) + "\n")
        result = omen("verify", str(demo_log), "--json")
        assert result.exit_code == 1
        report = json.loads(result.stdout)
        assert report["findings"][0]["seq"] == 5 and report["findings"][0]["rule"] == "chain"
        assert report["clean"] is False

    def test_unreadable_log_exits_2(self, tmp_path: Path) -> None:
        """A file that is not a log is bad input: exit code 2 and a message naming file and line."""
        bad = tmp_path / "bad.jsonl"
        bad.write_text("hello\n")
        result = omen("verify", str(bad))
        assert result.exit_code == 2 and "bad.jsonl:1" in " ".join(result.output.split())

    def test_bad_seed_argument_exits_2(self, demo_log: Path) -> None:
        """A --seed that is not hex is bad input."""
        assert omen("verify", str(demo_log), "--seed", "xyz").exit_code == 2

    def test_wrong_seed_exits_1(self, demo_log: Path) -> None:
        """A --seed that does not match the commitment is a finding."""
        result = omen("verify", str(demo_log), "--seed", "00" * 32)
        assert result.exit_code == 1 and "commitment" in result.output


class TestLogging:
    def test_json_log_format_goes_to_stderr(self, tmp_path: Path) -> None:
        """`--log-format json --log-level debug` writes JSON log lines to stderr, keeping stdout clean."""
        result = subprocess.run(
            [sys.executable, "-m", "omen_cli", "--log-format", "json", "--log-level", "debug",
             "demo", "--log", str(tmp_path / "d.jsonl")], capture_output=True, text=True, check=True)
        logs = [json.loads(line) for line in result.stderr.splitlines()]
        assert {(entry["event"], entry["level"]) for entry in logs} == {("events_appended", "debug"), ("undo", "info")}
        assert "{" not in result.stdout.splitlines()[0]

    def test_bad_log_level_exits_2(self) -> None:
        """An unknown --log-level is refused as bad input."""
        assert omen("--log-level", "loud", "schema").exit_code == 2


class TestRepair:
    def test_torn_log_is_reported_then_repaired(self, demo_log: Path) -> None:
        """A log cut mid-line is a finding (exit 1) naming the torn line; repair moves its whole batch aside."""
        data = demo_log.read_bytes()
        demo_log.write_bytes(data[:-40])
        torn = data[data.rstrip(b"\n").rfind(b"\n") + 1:-40]
        result = omen("verify", str(demo_log))
        last = len(data.splitlines())
        text = " ".join(result.output.split())
        assert result.exit_code == 1 and "torn tail" in text and f"line {last}" in text
        result = omen("repair", str(demo_log))
        assert result.exit_code == 0, result.output
        side = demo_log.with_name(demo_log.name + ".torn-1")
        lines = data.splitlines(keepends=True)
        batch = json.loads(lines[-1])["batch"]  # the torn line's batch goes whole, torn bytes and all
        assert side.read_bytes() == b"".join(lines[batch - 1:-1]) + torn
        assert demo_log.read_bytes() == b"".join(lines[:batch - 1])

    def test_a_command_cut_short_is_repaired_whole(self, demo_log: Path) -> None:
        """A crash between two lines of one command: the log cut after the first two events of its first command
        of three events or more holds a torn batch; verify reports it, repair moves both lines aside and says
        so ("2 of the N events of the command at seq S"), and the log then verifies clean up to seq S - 1."""
        lines = demo_log.read_bytes().splitlines(keepends=True)
        first = next(json.loads(line) for line in lines if json.loads(line)["batch_size"] >= 3)
        start, size = first["batch"], first["batch_size"]
        demo_log.write_bytes(b"".join(lines[:start + 1]))
        assert "torn batch" in " ".join(omen("verify", str(demo_log)).output.split())
        result = omen("repair", str(demo_log))
        said = " ".join(result.output.split())
        assert result.exit_code == 0 and f"moved 2 of the {size} events of the command at seq {start}" in said
        assert demo_log.read_bytes() == b"".join(lines[:start - 1])
        assert omen("verify", str(demo_log)).exit_code == 0

    def test_a_directory_stores_repair_names_the_fights_file(self, demo_log: Path, tmp_path: Path) -> None:
        """A torn last line in a directory store's fight: repair says the fight's own file now ends at its last
        complete command, not the directory (a maintainer tester read "d2/ now ends")."""
        store = tmp_path / "d2"
        store.mkdir()
        fight = json.loads(demo_log.read_bytes().splitlines()[0])["fight_id"]
        log = store / f"{fight}.jsonl"
        log.write_bytes(demo_log.read_bytes()[:-20])
        result = omen("repair", str(store))
        said = " ".join(result.output.split())
        assert result.exit_code == 0, said
        assert said.endswith(f"to {log}.torn-1; {log} now ends at its last complete command"), said

    def test_a_log_whose_only_line_is_torn_is_repaired_to_an_empty_log(self, demo_log: Path) -> None:
        """A crash in a new fight's first write leaves one torn line: status says to run omen repair, and repair
        moves it aside ("a torn last line (100 bytes)"), saying the log is now empty; before, repair repeated the
        advice it was called for, exit 2, and changed nothing (found by a tester)."""
        first = demo_log.read_bytes()[:100]
        demo_log.write_bytes(first)
        told = omen("status", str(demo_log))
        assert told.exit_code == 2 and "run omen repair" in " ".join(told.output.split())
        result = omen("repair", str(demo_log))
        said = " ".join(result.output.split())
        assert result.exit_code == 0, said
        assert said.startswith(f"moved a torn last line (100 bytes) to {demo_log}.torn-1; {demo_log} is now empty: "
                               "the fight's first command never completed (start it again)"), said
        assert demo_log.read_bytes() == b"" and demo_log.with_name(demo_log.name + ".torn-1").read_bytes() == first

    def test_sound_log_needs_no_repair(self, demo_log: Path) -> None:
        """Repairing a sound log changes nothing and says so."""
        before = demo_log.read_bytes()
        result = omen("repair", str(demo_log))
        assert result.exit_code == 0 and "nothing to repair" in result.output
        assert demo_log.read_bytes() == before

    @pytest.mark.parametrize(("tail", "empty"), [(b"\n", 1), (b"\n\n\n", 3), (b"   \n", 1), (b"\n \t\r\n\n", 3),
                                                 (b"\n  ", 2)])
    def test_empty_lines_at_the_end_are_moved_aside(self, demo_log: Path, tail: bytes, empty: int) -> None:
        """Empty lines after the last complete line (`echo >> LOG`: every writer refused the log, "empty line", while
        repair said "nothing to repair"; found by a tester), and lines of white space only there (they were refused
        as damage, and counted by their bytes), are moved to LOG.torn-1 and said, counted as lines, exit 0; the log
        then verifies clean (docs/stores.md: the ruling)."""
        before = demo_log.read_bytes()
        demo_log.write_bytes(before + tail)
        result = omen("repair", str(demo_log))
        assert result.exit_code == 0, result.output
        side = demo_log.with_name(demo_log.name + ".torn-1")
        assert " ".join(result.stdout.split()) == (
            f"moved {empty} empty line{'s' if empty > 1 else ''} at its end to {side}; {demo_log} now ends at its "
            "last complete command")
        assert demo_log.read_bytes() == before and side.read_bytes() == tail
        assert omen("verify", str(demo_log)).exit_code == 0

    def test_a_line_of_white_space_at_the_end_is_named_by_every_reader(self, demo_log: Path) -> None:
        """A last line of white space only is refused by a reader as "a line of white space only" at its number (it
        was "not a valid stored event: Input data was truncated")."""
        demo_log.write_bytes(demo_log.read_bytes() + b"   \n")
        n = demo_log.read_bytes().count(b"\n")
        result = omen("replay", str(demo_log))
        assert (result.exit_code, " ".join(result.stderr.split())) == (
            2, f"omen: error: {demo_log}:{n}: a line of white space only")

    @pytest.mark.parametrize(("text", "line"), [(b"Dear diary, my secret plans", 1), (b"\0" * 50, 1), (b"x", 1),
                                                (None, 0)])
    def test_a_last_line_no_crash_leaves_is_refused_and_kept(self, demo_log: Path, text: bytes | None,
                                                             line: int) -> None:
        """A last line without its newline that is not the start of an event line (a file of text, NUL bytes, one
        byte; a log with garbage appended) is no crash's doing: repair refuses it, exit 2, and changes nothing (it
        moved the whole text file aside and left it empty, saying a first command never completed; found by a
        tester); replay names it the same way, not sending the reader to repair."""
        path = demo_log if text is None else demo_log.with_name("diary.jsonl")
        before = (demo_log.read_bytes() + b"garbage") if text is None else text
        path.write_bytes(before)
        line = line or before.count(b"\n") + 1  # (0: the line after the demo log's last)
        told = "is this an omen log?" if line == 1 else "the log was edited or damaged"
        torn = len(before.rsplit(b"\n", 1)[-1])
        what = (f"omen: error: {path}:{line}: the last line ({torn} bytes) has no newline "
                "and is not the start of an event line (each begins {\"fight_id\":\"): no crash leaves that, so omen "
                f"repair does not remove it ({told})")
        for command in ("repair", "replay"):
            result = omen(command, str(path))
            assert (result.exit_code, " ".join(result.stderr.split())) == (2, what), result.output
        assert path.read_bytes() == before
        assert [p.name for p in path.parent.iterdir() if "torn" in p.name] == []

    @pytest.mark.parametrize("damage", ["an empty line inside", "a last line edited", "CR LF line endings"])
    def test_damage_repair_does_not_remove_is_refused_naming_it(self, demo_log: Path, damage: str) -> None:
        """Damage no crash leaves (an empty line before the end, a line whose hash no longer holds, CR LF line
        endings) is refused, exit 2, naming its line and what, pointing at omen verify; nothing is changed (repair
        said "nothing to repair ... ends with a complete command", exit 0, while every writer refused the log; found
        by a tester)."""
        lines = demo_log.read_bytes().splitlines(keepends=True)
        last = len(lines)
        if damage == "an empty line inside":
            lines.insert(20, b"\n")
            what = f"{demo_log}:21: empty line"
        elif damage == "a last line edited":
            lines[-1] = lines[-1].replace(b'"recorded_at":', b'"recorded_at":1', 1)
            what = f"{demo_log}:{last}: hash chain broken at seq {last}: hash does not match the event's content"
        else:
            lines = [line.replace(b"\n", b"\r\n") for line in lines]
            what = (f"{demo_log}:1: hash chain broken at seq 1: the line ends in CR LF where omen writes LF (its line "
                    "endings were converted: a text editor, a text-mode copy); the hash holds without the CR, but "
                    "covers the bytes as written: convert the line endings back to LF (dos2unix) and verify again")
        demo_log.write_bytes(b"".join(lines))
        result = omen("repair", str(demo_log))
        assert (result.exit_code, result.stdout) == (2, "")
        assert " ".join(result.stderr.split()) == (
            f"omen: error: {what}: damage omen repair does not remove (it removes only what a crash leaves at a log's "
            "end, a torn last line or a command cut short, and empty lines after the last complete line); nothing was "
            f"changed; omen verify {demo_log} lists what is wrong")
        assert demo_log.read_bytes() == b"".join(lines)
        assert sorted(p.name for p in demo_log.parent.iterdir() if "torn" in p.name) == []

    def test_repair_refuses_sqlite(self, tmp_path: Path) -> None:
        """Only JSON Lines logs can be torn; a SQLite store is refused as bad input."""
        assert omen("repair", f"sqlite:///{tmp_path}/x.db").exit_code == 2


ROOT = Path(__file__).resolve().parents[2]
EMBER_FORD = ROOT / "fixtures" / "ember-ford" / "scenario.toml"


class TestRunAndReplay:
    def test_ember_ford_runs_and_replays_to_the_same_end_state(self, tmp_path: Path) -> None:
        """The Ember Ford scenario (4 combatants, ambush, 4 rounds, AoO, Interrupts) runs from the CLI,
        ends by defeat, and replaying its log gives exactly the same end state."""
        log = tmp_path / "ef.jsonl"
        ran = omen("run", str(EMBER_FORD), "--log", str(log), "--json")
        assert ran.exit_code == 0, ran.output
        end = json.loads(ran.stdout)
        assert end["ended"] and end["end_reason"] == "defeated" and end["end_side"] == "raiders"
        assert end["round"] >= 3 and len(end["combatants"]) == 4
        replayed = omen("replay", str(log), "--json")
        assert replayed.exit_code == 0 and json.loads(replayed.stdout) == end
        kinds = [decode_line(line).event for line in log.read_text().splitlines()]
        reactions = {e.reaction for e in kinds if isinstance(e, ReactionWindowOpened)}
        assert reactions == {"interrupt", "attack_of_opportunity"}
        assert omen("verify", str(log)).exit_code == 0

    def test_run_prints_the_narrative_and_the_end_state(self, tmp_path: Path) -> None:
        """Without --json, run narrates the fight round by round and ends with the state table."""
        result = omen("run", str(EMBER_FORD), "--log", str(tmp_path / "x.jsonl"))
        text = " ".join(result.output.split())
        for words in ("Ambush!", "Round 1", "Interrupt", "Attack of Opportunity", "The fight is over",
                      "HP", "initiative order"):
            assert words in text

    def test_run_without_a_log_says_nothing_was_kept(self, tmp_path: Path) -> None:
        """``omen run SCENARIO`` without ``--log`` plays in memory: it says the log is kept nowhere and how to keep
        one, and offers no ``omen verify`` of a log that does not exist (a docs tester was told to witness its
        head); with ``--log`` the hint names that log."""
        ran = " ".join(omen("run", str(EMBER_FORD)).output.split())
        assert "nothing to witness: the log is kept nowhere" in ran and "omen verify" not in ran, ran[-400:]
        assert ran.endswith("events played in memory: and not kept (give --log FILE to keep the log)"), ran[-200:]
        log = tmp_path / "kept.jsonl"
        kept = " ".join(omen("run", str(EMBER_FORD), "--log", str(log)).output.split())
        assert f"(witness it: omen verify {log} --head " in kept and kept.endswith(f"events written to {log}")

    def test_replay_to_a_seq(self, tmp_path: Path) -> None:
        """replay --to SEQ shows the state right after that event (here: before anyone was hurt)."""
        log = tmp_path / "ef.jsonl"
        omen("run", str(EMBER_FORD), "--log", str(log), "--quiet")
        early = json.loads(omen("replay", str(log), "--to", "5", "--json").stdout)
        assert early["seq"] == 5 and early["phase"] == "setup"
        assert all(c["hp"] == c["hp_max"] for c in early["combatants"])

    def test_replay_to_a_seq_inside_an_action_says_its_step(self, tmp_path: Path) -> None:
        """replay --to SEQ at a seq where an action is in progress (Ember Ford, seq 88: Vesh's attack at Kael's
        Active Defense window) says its step after the turn, as --json's action_step and --steps do (the table
        said the turn alone: a maintainer tester); at a rest step it says none."""
        log = tmp_path / "ef.jsonl"
        omen("run", str(EMBER_FORD), "--log", str(log), "--quiet")
        step = json.loads(omen("replay", str(log), "--to", "88", "--json").stdout)["action_step"]
        assert step == "Active Defense window open"
        said = " ".join(omen("replay", str(log), "--to", "88").stdout.split())
        assert f"vesh's turn, the action in progress: {step}" in said, said
        assert "the action in progress" not in omen("replay", str(log), "--to", "5").stdout

    def test_replay_to_outside_the_log_is_bad_input(self, tmp_path: Path) -> None:
        """--to beyond the last event, or below 0, is refused with exit code 2, saying the range it may be (0, the
        state before the first event, is in it)."""
        log = tmp_path / "ef.jsonl"
        omen("run", str(EMBER_FORD), "--log", str(log), "--quiet")
        last = len(log.read_bytes().splitlines())
        for to in ("99999", "-1"):
            result = omen("replay", str(log), "--to", to)
            assert result.exit_code == 2
            assert f"--to {to} is outside the log (seq 0, before its first event, to {last})" in result.stderr
        at_zero = omen("replay", str(log), "--to", "0")
        assert at_zero.exit_code == 0 and "head 0: before the first event (nothing to witness)" in at_zero.stdout
        assert "--head 0:" not in at_zero.stdout  # no head for verify to refuse (a head's seq is from 1)

    def test_run_refuses_to_overwrite_a_fight(self, tmp_path: Path) -> None:
        """Running a scenario into a log that already holds its fight is refused; the log is untouched."""
        log = tmp_path / "ef.jsonl"
        omen("run", str(EMBER_FORD), "--log", str(log), "--quiet")
        before = log.read_bytes()
        again = omen("run", str(EMBER_FORD), "--log", str(log), "--quiet")
        assert again.exit_code == 2 and "already holds" in again.output and log.read_bytes() == before

    def test_bad_scenario_exits_2_naming_file_and_line(self, tmp_path: Path) -> None:
        """A malformed scenario is bad input: exit 2, with file and line."""
        bad = tmp_path / "bad.toml"
        bad.write_text('[fight]\nid = "x"\ndice = "loaded"\n')
        result = omen("run", str(bad))
        assert result.exit_code == 2 and f"{bad}:3" in " ".join(result.output.split())

    def test_run_into_sqlite(self, tmp_path: Path) -> None:
        """A scenario can write to SQLite and be replayed from it."""
        url = f"sqlite:///{tmp_path}/fights.db"
        assert omen("run", str(EMBER_FORD), "--log", url, "--quiet").exit_code == 0
        assert json.loads(omen("replay", url, "--json").stdout)["ended"]


@pytest.fixture
def open_log(tmp_path: Path) -> Path:
    """The short demo's log before the GM ends the fight and reveals the seed (C42: no undo reaches back past a
    reveal)."""
    from omen_core.store import JsonlStore
    from omen_replay.demo import run_demo

    path = tmp_path / "open.jsonl"
    run_demo(JsonlStore.single(path), finish=False)
    return path


class TestUndoCommands:
    def test_undo_past_the_reveal_is_refused_naming_c42(self, demo_log: Path) -> None:
        """The demo ends with the seed revealed: undo is refused (exit 2, rule C42), the log untouched."""
        before = demo_log.read_bytes()
        result = omen("undo", str(demo_log))
        assert result.exit_code == 2 and "C42" in result.output and demo_log.read_bytes() == before

    def test_undo_then_redo_from_the_cli(self, open_log: Path) -> None:
        """omen undo appends an undo (nothing erased), verify lists it, omen redo takes it back."""
        before = open_log.read_text().splitlines()
        result = omen("undo", str(open_log), "--reason", "wrong target")
        assert result.exit_code == 0 and "undone: seq" in result.output
        after = open_log.read_text().splitlines()
        assert after[:len(before)] == before and len(after) == len(before) + 2  # the undo command and its marker
        command, marker = (decode_line(line) for line in after[len(before):])
        issued = command.as_(CommandIssued).command
        assert isinstance(issued, Undo) and issued.reason == "wrong target"
        assert marker.as_(Undone).reason == "wrong target"
        checked = omen("verify", str(open_log))
        assert checked.exit_code == 0 and "wrong target" in checked.output and "still undone" in checked.output
        assert omen("redo", str(open_log)).exit_code == 0
        assert "redone at seq" in omen("verify", str(open_log)).output

    @pytest.mark.parametrize("kind", ["directory", "postgresql"])
    def test_undo_in_a_store_of_several_fights_hints_a_redo_naming_the_fight(self, open_log: Path, tmp_path: Path,
                                                                             kind: str,
                                                                             request: pytest.FixtureRequest) -> None:
        """In a directory or a PostgreSQL database holding two fights, ``omen undo STORE --fight F`` says ``omen
        redo STORE --fight F`` takes it back (it said ``omen redo STORE``, which refuses a store of several fights),
        the store quoted for a shell, and that line works."""
        import shlex

        from omen_core.events import decode_line

        store = tmp_path / "multi"
        store.mkdir()
        fight = decode_line(open_log.read_bytes().splitlines()[0]).fight_id
        (store / f"{fight}.jsonl").write_bytes(open_log.read_bytes())
        other = ROOT / "fixtures" / "duel-interrupt-pass-dodge-miss" / "fight.jsonl"
        (store / f"{decode_line(other.read_bytes().splitlines()[0]).fight_id}.jsonl").write_bytes(other.read_bytes())
        url = str(store)
        if kind == "postgresql":
            url = request.getfixturevalue("postgres").fresh_url()
            assert omen("copy", str(store), url).exit_code == 0
        result = omen("undo", url, "--fight", fight)
        said = " ".join(result.output.split())
        hint = f"omen redo {shlex.quote(url)} --fight {fight}"
        assert result.exit_code == 0 and f"`{hint}` takes it back" in said, said
        assert omen(*shlex.split(hint)[1:]).exit_code == 0

    def test_undo_to_a_bad_seq_exits_2_and_writes_nothing(self, open_log: Path) -> None:
        """Undoing back to the middle of a command is refused (exit 2), the log untouched."""
        before = open_log.read_bytes()
        result = omen("undo", str(open_log), "--to", "30")
        assert result.exit_code == 2 and "is inside a command, which starts at seq" in " ".join(result.output.split())
        assert open_log.read_bytes() == before

    def test_redo_with_nothing_to_redo_exits_2(self, demo_log: Path) -> None:
        """Redo without an undo is refused as bad input."""
        assert omen("redo", str(demo_log)).exit_code == 2

    def test_steps_view(self, open_log: Path) -> None:
        """replay --steps shows each event and the resources after it; --json gives one object per event."""
        omen("undo", str(open_log))
        text = omen("replay", str(open_log), "--steps").output
        assert "Kael Arden 24/24" in text and "[undone]" in text
        lines = [json.loads(x) for x in omen("replay", str(open_log), "--steps", "--json").stdout.splitlines()]
        assert [x["seq"] for x in lines] == list(range(1, len(lines) + 1))
        undo = decode_line(open_log.read_text().splitlines()[-1]).as_(Undone)
        assert lines[-1]["type"] == "undone" and lines[-2]["type"] == "command_issued"
        assert [x["seq"] for x in lines if x["undone"]] == list(range(undo.from_seq, undo.to_seq + 1))
        assert undo.to_seq == lines[-3]["seq"]  # the last command, just before the undo's own batch
        # the text marks the same seqs: the undone batch's command line too (it read "(command issued: ...)" alone
        # beside its batch's [undone] events: a maintainer tester)
        marked = sorted({int(m) for m in re.findall(r"^#(\d+)\s+\[undone\]", text, re.M)})
        assert marked == list(range(undo.from_seq, undo.to_seq + 1)), text[-2000:]


class TestSnapshotCommand:
    def test_snapshot_then_replay_and_clear(self, tmp_path: Path) -> None:
        """omen snapshot saves a cache beside the log; replay gives the same state with it and without it."""
        log = tmp_path / "ef.jsonl"
        omen("run", str(EMBER_FORD), "--log", str(log), "--quiet")
        plain = json.loads(omen("replay", str(log), "--json").stdout)
        assert omen("snapshot", str(log)).exit_code == 0
        assert list((tmp_path / "ef.jsonl.snapshots" / "ember-ford").glob("*.json"))
        assert json.loads(omen("replay", str(log), "--json").stdout) == plain
        cleared = omen("snapshot", str(log), "--clear")
        assert cleared.exit_code == 0
        assert cleared.stdout == "deleted the 1 snapshot of 'ember-ford'; nothing else changes\n"
        assert not (tmp_path / "ef.jsonl.snapshots").exists()  # the folders it left empty removed too
        assert json.loads(omen("replay", str(log), "--json").stdout) == plain

    def test_clear_says_when_there_were_none(self, tmp_path: Path) -> None:
        """``--clear`` on a fight without snapshots says it had none (it said "deleted the snapshots"), exit 0."""
        log = tmp_path / "ef.jsonl"
        omen("run", str(EMBER_FORD), "--log", str(log), "--quiet")
        cleared = omen("snapshot", str(log), "--clear")
        assert (cleared.exit_code, cleared.stdout) == (0, "'ember-ford' had no snapshots to delete\n")
        assert not (tmp_path / "ef.jsonl.snapshots").exists()

    def test_clear_keeps_a_folder_holding_anything_else(self, tmp_path: Path) -> None:
        """``--clear`` removes the fight's snapshots and leaves a folder that holds anything else as it was: the
        fight's folder with a file someone left in it, the cache's folder with another fight's snapshots."""
        log = tmp_path / "ef.jsonl"
        omen("run", str(EMBER_FORD), "--log", str(log), "--quiet")
        cache = tmp_path / "ef.jsonl.snapshots"
        assert omen("snapshot", str(log)).exit_code == 0
        (cache / "ember-ford" / "notes.txt").write_text("mine")
        (cache / "other").mkdir()
        (cache / "other" / "3.json").write_text("kept")
        assert omen("snapshot", str(log), "--clear").exit_code == 0
        assert sorted(p.relative_to(cache).as_posix() for p in cache.rglob("*")) == [
            "ember-ford", "ember-ford/notes.txt", "other", "other/3.json"]
        (cache / "ember-ford" / "notes.txt").unlink()
        assert omen("snapshot", str(log), "--clear").exit_code == 0
        assert sorted(p.relative_to(cache).as_posix() for p in cache.rglob("*")) == ["other", "other/3.json"]


class TestSessionLog:
    def test_log_formats(self, tmp_path: Path) -> None:
        """omen log writes text to stdout, and Markdown or HTML to a file."""
        log = tmp_path / "ef.jsonl"
        omen("run", str(EMBER_FORD), "--log", str(log), "--quiet")
        assert "The fight is over" in omen("log", str(log)).stdout
        md = tmp_path / "ef.md"
        assert omen("log", str(log), "--format", "md", "-o", str(md)).exit_code == 0
        assert md.read_text().startswith("# Ambush at the Ember Ford")
        page = tmp_path / "ef.html"
        assert omen("log", str(log), "--format", "html", "-o", str(page)).exit_code == 0
        assert "<svg" in page.read_text()

    def test_unknown_format_is_bad_input(self, tmp_path: Path) -> None:
        """An unknown --format is refused with exit 2."""
        assert omen("log", "x.jsonl", "--format", "pdf").exit_code == 2


SEEDED_END = """[fight]
id = "s2"
dice = "seeded"
seed = "00112233445566778899aabbccddeeff"

[[combatants]]
id = "ash"
name = "Ash"
side = "north"
hp = 20
[combatants.attributes]
STR = { die = "d8" }
AGI = { die = "d6", bonus = 1 }
INT = { die = "d4" }
RES = { die = "d6" }
FCS = { die = "d6" }

[[combatants]]
id = "bo"
name = "Bo"
side = "south"
hp = 20
[combatants.attributes]
STR = { die = "d6" }
AGI = { die = "d8", bonus = 2 }
INT = { die = "d4" }
RES = { die = "d6" }
FCS = { die = "d6" }

[[commands]]
command = "roll_initiative"

[[commands]]
command = "end_fight"
reason = "gm"
"""


@pytest.mark.parametrize("keep", [False, True])
def test_omen_run_reveals_the_seed_at_the_end_of_a_fight_unless_kept(tmp_path: Path, keep: bool) -> None:
    """C42 "a seed is revealed at the end of a fight unless the GM chooses otherwise": a seeded scenario that ends
    (end_fight) without a reveal_seed has omen run reveal the seed after its last command, and omen verify checks
    both initiative dice against it (it kept the seed: "2 seeded dice not checked"; found by a tester); with
    --keep-seed it stays secret."""
    scenario = tmp_path / "s2.toml"
    scenario.write_text(SEEDED_END)
    log = tmp_path / "s2.jsonl"
    ran = omen("run", str(scenario), "--log", str(log), *(["--keep-seed"] if keep else []))
    assert ran.exit_code == 0, ran.output
    types = [json.loads(line)["event"]["type"] for line in log.read_text().splitlines()]
    assert types[-1] == ("fight_ended" if keep else "seed_revealed")
    assert ("00112233445566778899aabbccddeeff" in log.read_text()) is not keep
    verified = " ".join(omen("verify", str(log)).output.split())
    assert ("2 seeded dice not checked" if keep else "2 seeded dice all match the revealed seed") in verified


def test_explain_says_each_dies_source_in_brackets() -> None:
    """docs/explain.md "Dice": each die's line ends in its source, ``[scripted]`` in a scripted fixture and
    ``[seeded] seed confirms`` once the seed is out (the brackets were read as markup and the source lost,
    leaving a trailing space: a tester)."""
    scripted = omen("explain", str(ROOT / "fixtures" / "duel-interrupt-pass-dodge-miss" / "fight.jsonl"), "22")
    seeded = omen("explain", str(ROOT / "fixtures" / "ember-ford" / "fight.jsonl"), "93")
    assert scripted.exit_code == 0 and seeded.exit_code == 0, (scripted.output, seeded.output)
    lines = [line for line in scripted.output.splitlines() if line.lstrip().startswith("die:")]
    assert lines and all(line.endswith(" [scripted]") for line in lines), lines
    assert "  die: roll at seq 109 (hit) by vesh: primary d8 = 7 [seeded] seed confirms" in seeded.output.splitlines()


def test_a_store_urls_password_is_never_printed(request: pytest.FixtureRequest) -> None:
    """docs/stores.md ("wherever omen shows the URL ... its password is ***"): a PostgreSQL URL given with a
    password (the test cluster takes any) is shown masked in an unknown fight's refusal, as text and as --json,
    and in the head's witness hint and the undo's redo hint after a copy into it (an operator tester read the
    password in `no fight 'nope' in postgresql://omen:S3cretPW@...`)."""
    url = request.getfixturevalue("postgres").fresh_url()
    secret = url.replace("://omen@", "://omen:S3cretPW@", 1)
    assert secret != url, url
    source = ROOT / "fixtures" / "duel-interrupt-pass-dodge-miss" / "fight.jsonl"
    copied = omen("copy", str(source), secret)
    refused = omen("status", secret, "--fight", "nope")
    as_json = omen("status", secret, "--fight", "nope", "--json")
    replayed = omen("replay", secret)
    for result in (copied, refused, as_json, replayed):
        assert "S3cretPW" not in result.output, result.output
    assert refused.exit_code == 2 and "no fight 'nope' in postgresql://omen:***@" in refused.output
    assert json.loads(as_json.stdout)["error"]["message"].startswith("no fight 'nope' in postgresql://omen:***@")
    assert replayed.exit_code == 0 and "omen verify 'postgresql://omen:***@" in " ".join(replayed.output.split())


def test_replay_to_a_seq_undone_later_says_so(tmp_path: Path) -> None:
    """Ember Ford's undo at seq 90 took back seqs 82 to 88 (Vesh's attack on his ally): replay --to 85 says that
    seq 85 was undone later, by which undo and why, and that the state is the fight as it stood then (it said
    nothing: a post-fight reviewer read the undone action as standing); --to 92, after the undo, says nothing of
    it; --json is the state alone."""
    log = tmp_path / "ef.jsonl"
    omen("run", str(EMBER_FORD), "--log", str(log), "--quiet")
    said = " ".join(omen("replay", str(log), "--to", "85").output.split())
    assert ('seq 85 was undone later: the undo at seq 90 took back seqs 82 to 88 ("vesh was never going to strike '
            'an ally"). This is the fight as it stood at seq 85, before that undo; the log as it stands leaves those '
            'seqs out (--to 81 is where the undo went back to).') in said, said
    assert "undone later" not in omen("replay", str(log), "--to", "92").output
    assert json.loads(omen("replay", str(log), "--to", "85", "--json").stdout)["seq"] == 85
