"""Tests for omen_replay.fixtures: golden fights replay exactly, and a changed rule is caught at its first
divergence."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from omen_replay.fixtures import check, fixture_dirs, record

ROOT = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.mark.parametrize("directory", fixture_dirs(ROOT), ids=lambda d: d.name)
def test_every_fixture_replays_exactly(directory: Path) -> None:
    """Each recorded fight replays under the current rules to the same events and end state, audits clean,
    and survives a read -> write round trip byte for byte."""
    result = check(directory)
    assert result.ok, result


def test_ties_going_to_the_attacker_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """If hits let ties through (attack >= defense, against §Hit Determination), the check fails and names
    the first event that differs, the field, and what was expected and got."""
    from omen_core.rules import attack

    monkeypatch.setattr(attack, "hits", lambda attack_total, total_defense: attack_total >= total_defense)
    result = check(ROOT / "crit-tie-crit-damage-cancelled-crit")   # its seq 72: a 6 vs 6 tie, a miss
    assert not result.ok and result.divergence is not None
    d = result.divergence
    assert (d.seq, d.field, d.expected, d.got) == (    # as docs/fixtures.md shows
        72, "$.event.type", '"active_defense_window_skipped"', '"active_defense_window_opened"')


def test_record_refuses_a_script_that_no_longer_fits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Re-recording under a rule change that breaks the script is refused, and the fixture is left as it was."""
    from omen_core.errors import BadInput
    from omen_core.rules import attack

    copy = tmp_path / "crit-tie-crit-damage-cancelled-crit"
    shutil.copytree(ROOT / "crit-tie-crit-damage-cancelled-crit", copy)
    before = (copy / "fight.jsonl").read_bytes()
    monkeypatch.setattr(attack, "hits", lambda attack_total, total_defense: attack_total >= total_defense)
    with pytest.raises(BadInput, match="does not run"):
        record(copy)
    assert (copy / "fight.jsonl").read_bytes() == before


def test_record_reports_what_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Re-recording after a change that keeps the script valid reports the first changed field."""
    from omen_core import derive
    from omen_core.rules.checks import roll_total as real

    copy = tmp_path / "ember-ford"
    shutil.copytree(ROOT / "ember-ford", copy)
    monkeypatch.setattr(derive, "roll_total", lambda face, bonus, level=0, modifiers=(): real(face, bonus, level,
                                                                                            modifiers) + 100)
    change, count, was = record(copy)
    assert change is not None and count > 0 and change.seq > 0 and was == "changed"


def test_short_demo_is_its_fixture() -> None:
    """`omen demo --short` plays exactly the events of the contest-check-save-and-blows fixture."""
    from omen_core import MemoryStore
    from omen_core.events import decode_line
    from omen_replay.demo import run_demo

    demo = [e.event for e in run_demo(MemoryStore(), clock=lambda: 0).events]
    recorded = [decode_line(line).event
                for line in (ROOT / "contest-check-save-and-blows" / "fight.jsonl").read_bytes().splitlines()]
    assert demo == recorded


def test_a_fixture_not_yet_recorded_is_broken_with_what_to_do(tmp_path: Path) -> None:
    """A fixture directory with a scenario but no recording is a broken fixture naming the missing file and the
    command that records it (with its --dir), not a crash; `omen fixtures check` exits 2 (it could not be
    checked), not 1 (a regression)."""
    from typer.testing import CliRunner

    from omen_cli import app

    fresh = tmp_path / "fixtures" / "duel"
    fresh.mkdir(parents=True)
    shutil.copy(ROOT / "duel-interrupt-pass-dodge-miss" / "scenario.toml", fresh / "scenario.toml")
    result = check(fresh)
    assert result.broken and not result.ok and result.problems == (
        f"{fresh / 'fingerprint.json'} cannot be read (No such file or directory): record it again with "
        f"`omen fixtures record duel --dir {fresh.parent}` if its scenario is right",)
    run = CliRunner().invoke(app, ["fixtures", "check", "--dir", str(tmp_path / "fixtures")])
    assert run.exit_code == 2 and "BROKEN duel" in run.output and "Traceback" not in run.output


@pytest.mark.parametrize(("edit", "said"), [
    (lambda f: f.write_text("[]"), "is not a fingerprint (an object with a summary and its sha256)"),
    (lambda f: f.write_text("{"), "is not JSON"),
    (lambda f: f.write_text(re.sub(r'"hp": (\d+)', lambda m: f'"hp": {int(m[1]) + 1}', f.read_text(), count=1)),
     "its summary does not match its sha256 (one of them was edited)"),
])
def test_a_fingerprint_that_is_not_one_is_broken_not_a_regression(tmp_path: Path, edit: Any, said: str) -> None:
    """fingerprint.json that is not an object, not JSON, or whose summary was edited away from its sha256 is a
    broken fixture saying so (it was a traceback, or "the end state changed", or passed unseen); exit 2."""
    from typer.testing import CliRunner

    from omen_cli import app

    copy = tmp_path / "fx" / "ember-ford"
    shutil.copytree(ROOT / "ember-ford", copy)
    edit(copy / "fingerprint.json")
    result = check(copy)
    assert result.broken and said in result.problems[0], result
    run = CliRunner().invoke(app, ["fixtures", "check", "--dir", str(tmp_path / "fx")])
    assert run.exit_code == 2 and "Traceback" not in run.output


def test_a_fingerprint_whose_end_state_differs_names_the_field(tmp_path: Path) -> None:
    """A fingerprint re-sealed over an edited summary (Kael's HP 24 -> 23, its sha256 recomputed) no longer
    matches what the recorded log gives: the check fails naming the field and both values."""
    import json

    from omen_replay.fixtures import _summary_digest

    copy = tmp_path / "ember-ford"
    shutil.copytree(ROOT / "ember-ford", copy)
    stored = json.loads((copy / "fingerprint.json").read_text())
    kael = next(c for c in stored["summary"]["combatants"] if c["id"] == "kael")
    kael["hp"] -= 1
    stored["sha256"] = _summary_digest(stored["summary"])
    (copy / "fingerprint.json").write_text(json.dumps(stored))
    result = check(copy)
    assert not result.ok and not result.broken
    assert any("fingerprint.json says" in p and f"the log gives {kael['hp'] + 1}" in p for p in result.problems)


def test_a_recording_without_its_scenario_is_broken(tmp_path: Path) -> None:
    """A fixture directory that lost its scenario.toml is reported broken (exit 2), not skipped unseen."""
    from typer.testing import CliRunner

    from omen_cli import app

    shutil.copytree(ROOT / "ember-ford", tmp_path / "fx" / "ember-ford")
    shutil.copytree(ROOT / "duel-interrupt-pass-dodge-miss", tmp_path / "fx" / "duel")
    (tmp_path / "fx" / "duel" / "scenario.toml").unlink()
    run = CliRunner().invoke(app, ["fixtures", "check", "--dir", str(tmp_path / "fx")])
    said = run.output.replace("\n", "")  # the console wraps long lines
    assert run.exit_code == 2 and "BROKEN duel" in said and "scenario.toml is missing" in said
    assert "ok   ember-ford" in run.output


def test_record_refuses_a_scenario_that_does_not_repeat(tmp_path: Path) -> None:
    """A seeded fight revealing its seed twice with one next_seeds entry draws a random seed the second time
    (C42): no recording of it could pass, so record refuses it, naming the first difference, and writes nothing;
    a readable new fixture says it is new, then unchanged."""
    from omen_core.errors import BadInput

    duel = tmp_path / "duel"
    shutil.copytree(ROOT / "duel-interrupt-pass-dodge-miss", duel)
    (duel / "fight.jsonl").unlink()
    (duel / "fingerprint.json").unlink()
    assert record(duel)[2] == "new" and record(duel)[2] == "unchanged"
    text = (duel / "scenario.toml").read_text()
    seeds = f'dice = "seeded"\nseed = "{"ab" * 16}"\nnext_seeds = ["{"cd" * 16}"]'
    seeded = text.replace('dice = "scripted"', seeds, 1)
    seeded = re.sub(r"\ndice = \[[^\]]*\]", "", seeded) + (
        '\n[[commands]]\ncommand = "reveal_seed"\n\n[[commands]]\ncommand = "reveal_seed"\n')
    (duel / "scenario.toml").write_text(seeded)
    before = (duel / "fight.jsonl").read_bytes()
    with pytest.raises(BadInput, match="does not give the same events twice"):
        record(duel)
    assert (duel / "fight.jsonl").read_bytes() == before
