"""An error as data (omen_cli/errors.py): what ``--json`` prints on standard output when a command fails, and what
``--log-format json`` writes on standard error, read by a script without parsing words (docs/live.md, "Errors for
a script")."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from omen_cli import app

ROOT = Path(__file__).resolve().parents[2]
ERROR_SCHEMA = ROOT / "docs" / "schema" / "error.schema.json"
DUEL = ROOT / "fixtures" / "duel-interrupt-pass-dodge-miss" / "fight.jsonl"


@pytest.fixture
def duel(tmp_path: Path) -> Path:
    """The duel fixture's log, copied: Ash and Bo, round 2, Bo's turn."""
    log = tmp_path / "duel.jsonl"
    shutil.copy(DUEL, log)
    return log


def _error(stdout: str) -> dict[str, Any]:
    """The ``{"error": ...}`` a failed command printed, checked against the published schema."""
    printed: dict[str, Any] = json.loads(stdout)
    jsonschema.Draft202012Validator(json.loads(ERROR_SCHEMA.read_text())).validate(printed)
    return printed


def test_a_refusal_placed_in_the_command_is_json_with_its_rule_field_and_line(duel: Path) -> None:
    """docs/live.md's example: an unknown combatant named in a command given as an argument, with --json: exit 2,
    nothing written, standard output holds the error with its rule (setup), field ($.who), file ("the command")
    and line, exactly as documented; standard error still holds its one line."""
    before = duel.read_bytes()
    result = CliRunner().invoke(app, ["do", str(duel), '{"command":"end_turn","who":"vesh"}', "--json"])
    assert result.exit_code == 2 and duel.read_bytes() == before
    doc = (ROOT / "docs" / "live.md").read_text()
    shown = re.search(r"```json\n(\{\"error\".*?)\n```", doc, re.S)
    assert shown is not None
    assert _error(result.stdout) == json.loads(shown[1])
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("omen: error: the command:1: [setup]")


def test_a_rule_a_phase_and_a_face_each_say_their_rule(duel: Path) -> None:
    """C29 and the rulebook's turn: a turn ended out of turn says its rule (§Your Turn) and no field; a command out
    of its phase says `phase`; a face a die cannot show, the field of that face (`$.dice[0]`): each a JSON error
    with its kind."""
    said = []
    for command in ('{"command":"end_turn","who":"ash"}', '{"command":"roll_initiative"}',
                    '{"command":"static_check","check":{"who":"bo","attribute":"AGI"},"difficulty":3,"dice":[99]}'):
        result = CliRunner().invoke(app, ["do", str(duel), command, "--json"])
        assert result.exit_code == 2, result.output
        error = _error(result.stdout)["error"]
        said.append((error["kind"], error.get("rule"), error.get("field")))
    assert said[0] == ("RuleViolation", "§Your Turn", None)
    assert said[1] == ("OutOfPhase", "phase", None)
    assert said[2] == ("InvalidDieFace", None, "$.dice[0]")


def test_a_command_given_no_faces_is_placed_and_keeps_its_kind(duel: Path, tmp_path: Path) -> None:
    """C29, docs/live.md (faces given for fewer dice are refused, ``FacesNeeded``; ``omen do`` names the place,
    ``FILE:LINE: ... (at $.dice)``): Bo's AGI check given no ``dice`` at all is placed at the line naming the command,
    with its field, file and line in ``--json``, its kind ``FacesNeeded`` (a tester found it unplaced, while one
    face too few was placed and said to be a ``ContentError``); nothing written."""
    before = duel.read_bytes()
    file = tmp_path / "roll.toml"
    file.write_text('# the check, its face forgotten\n\ncommand = "static_check"\ndifficulty = 3\n'
                    'check = {who = "bo", attribute = "AGI"}\n')
    result = CliRunner().invoke(app, ["do", str(duel), "--file", str(file), "--json"])
    assert result.exit_code == 2 and duel.read_bytes() == before
    error = _error(result.stdout)["error"]
    assert (error["kind"], error["rule"], error["field"], error["file"], error["line"]) \
        == ("FacesNeeded", "C29", "$.dice", str(file), 3), error
    assert error["message"].startswith(f"{file}:3: this command rolls 1 die and 0 faces were given; ") \
        and error["message"].endswith(" (at $.dice)"), error["message"]


def test_a_face_its_die_cannot_show_names_its_place_once(duel: Path) -> None:
    """C1, C29: Bo's AGI check given a 99: the message names the face, its die and its roll, and its place once, at
    the end (``(at $.dice[0])``: it had said it twice, once inside the roll's words)."""
    result = CliRunner().invoke(app, ["do", str(duel), '{"command":"static_check","check":{"who":"bo","attribute":'
                                                       '"AGI"},"difficulty":3,"dice":[99]}', "--json"])
    assert result.exit_code == 2, result.output
    message = _error(result.stdout)["error"]["message"]
    assert message.count("$.dice[0]") == 1 and message.startswith("the command:1: die face 99 is not possible on a d")
    assert message.endswith("(at $.dice[0])"), message


def test_bad_input_is_json_too(tmp_path: Path) -> None:
    """A log that does not exist, asked for --json: `NoStore`, exit 2, its words, no rule or field; a refusal the
    CLI makes without an exception of the engine (two fights, none chosen): `BadInput`."""
    result = CliRunner().invoke(app, ["status", str(tmp_path / "nowhere.jsonl"), "--json"])
    assert result.exit_code == 2
    error = _error(result.stdout)["error"]
    assert error["kind"] == "NoStore" and error["exit"] == 2 and "nowhere.jsonl" in error["message"]
    assert "rule" not in error and "field" not in error
    store = tmp_path / "two"
    store.mkdir()
    for name in ("a", "b"):
        (store / f"{name}.jsonl").write_bytes(DUEL.read_bytes().replace(b'"fight_id":"duel-at-dawn"',
                                                                        f'"fight_id":"{name}"'.encode()))
    result = CliRunner().invoke(app, ["status", f"{store}/", "--json"])
    assert result.exit_code == 2, result.output
    assert _error(result.stdout)["error"]["kind"] == "BadInput"


def test_under_log_format_json_every_line_on_stderr_parses(duel: Path, tmp_path: Path) -> None:
    """README: `--log-format json` covers omen's own lines on standard error: an error is one JSON object
    (`"event": "error"`, its facts), not `omen: error: ...`; a warning (a seed in OMEN_SEED that is not the fight's)
    is `{"event": "notice", "level": "warning", ...}` (they were words among the JSON lines: a bot tester)."""
    result = CliRunner().invoke(app, ["--log-format", "json", "do", str(duel), '{"command":"end_turn","who":"vesh"}'])
    assert result.exit_code == 2 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    error = json.loads(line)
    assert (error["event"], error["level"], error["rule"], error["field"], error["exit"]) == (
        "error", "error", "setup", "$.who", 2)
    seeded = tmp_path / "seeded.jsonl"
    run = CliRunner().invoke(app, ["run", str(ROOT / "fixtures" / "ember-ford" / "scenario.toml"), "--log",
                                   str(seeded), "--keep-seed", "--quiet"])
    assert run.exit_code == 0, run.output
    result = CliRunner().invoke(app, ["--log-format", "json", "status", str(seeded)], env={"OMEN_SEED": "ab" * 32})
    assert result.exit_code == 0, result.output
    notices = [json.loads(line) for line in result.stderr.splitlines()]
    assert notices and all(n["event"] == "notice" and n["level"] == "warning" for n in notices)
    assert "OMEN_SEED" in notices[0]["message"]


def test_a_usage_error_asked_for_json_is_json_on_both_streams(duel: Path) -> None:
    """A command line that does not parse (a seq written `93.0`), with --json and --log-format json: standard output
    holds `{"error": {"kind": "UsageError", "exit": 2, ...}}` and standard error one JSON line with the same kind
    and exit (stdout was empty and the stderr line had neither: a bot tester)."""
    result = CliRunner().invoke(app, ["--log-format", "json", "explain", str(duel), "93.0", "--json"])
    assert result.exit_code == 2
    error = _error(result.stdout)["error"]
    assert (error["kind"], error["exit"]) == ("UsageError", 2)
    assert error["message"] == "SEQ must be a whole number written as digits, not '93.0' (see 'omen explain --help')"
    (line,) = result.stderr.splitlines()
    assert {k: json.loads(line)[k] for k in ("event", "kind", "exit")} == {"event": "error", "kind": "UsageError",
                                                                          "exit": 2}


def test_a_broken_log_names_its_file_line_and_seq(duel: Path) -> None:
    """A log whose fifth line was edited (its hash no longer holds): `omen replay --json` fails with the error's
    file, line and seq as fields, not only in its words (a bot tester)."""
    lines = duel.read_bytes().splitlines(keepends=True)
    lines[4] = lines[4].replace(b'"recorded_at":0', b'"recorded_at":1', 1)
    duel.write_bytes(b"".join(lines))
    result = CliRunner().invoke(app, ["replay", str(duel), "--json"])
    assert result.exit_code == 2
    error = _error(result.stdout)["error"]
    assert (error["kind"], error["file"], error["line"], error["seq"]) == ("ChainBroken", str(duel), 5, 5)


def test_an_empty_command_is_said_empty(duel: Path) -> None:
    """A command of white space alone, given as an argument or on standard input, is refused as empty, exit 2,
    nothing written (it read "Object missing required field `command`": a bot tester)."""
    before = duel.read_bytes()
    for argv, given in ((["do", str(duel), " \n"], None), (["do", str(duel), "--file", "-"], "\n\t\n")):
        result = CliRunner().invoke(app, argv, input=given)
        assert result.exit_code == 2 and duel.read_bytes() == before
        assert result.stderr.startswith("omen: error: the command is empty: give one command, as JSON")


def test_logging_never_configured_writes_nothing_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    """Where the engine failed to load before logging was configured (an extension that does not load), the CLI's
    logger writes warnings alone, to standard error: structlog's default wrote a `command_failed` info line to
    standard output, where a script reads JSON (an extension tester)."""
    import structlog

    from omen_cli.app import _log

    structlog.reset_defaults()
    try:
        _log().info("command_failed", error="ExtensionInvalid")
        _log().warning("kept")
        said = capsys.readouterr()
        assert said.out == "" and "kept" in said.err and "command_failed" not in said.err
    finally:
        structlog.reset_defaults()
