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
    assert said[2][0] == "ContentError" and said[2][2] == "$.dice[0]"


def test_bad_input_without_an_exception_is_json_too(tmp_path: Path) -> None:
    """A log that does not exist, asked for --json: `BadInput`, exit 2, its words; no rule or field."""
    result = CliRunner().invoke(app, ["status", str(tmp_path / "nowhere.jsonl"), "--json"])
    assert result.exit_code == 2
    error = _error(result.stdout)["error"]
    assert error["kind"] == "BadInput" and error["exit"] == 2 and "nowhere.jsonl" in error["message"]
    assert "rule" not in error and "field" not in error


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
