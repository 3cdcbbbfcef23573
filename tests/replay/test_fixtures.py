"""Tests for omen_replay.fixtures: golden fights replay exactly, and a changed rule is caught at its first
divergence."""

from __future__ import annotations

import shutil
from pathlib import Path

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
    change, count = record(copy)
    assert change is not None and count > 0 and change.seq > 0


def test_short_demo_is_its_fixture() -> None:
    """`omen demo --short` plays exactly the events of the contest-check-save-and-blows fixture."""
    from omen_core import MemoryStore
    from omen_core.events import decode_line
    from omen_replay.demo import run_demo

    demo = [e.event for e in run_demo(MemoryStore(), clock=lambda: 0).events]
    recorded = [decode_line(line).event
                for line in (ROOT / "contest-check-save-and-blows" / "fight.jsonl").read_bytes().splitlines()]
    assert demo == recorded


def test_a_fixture_not_yet_recorded_fails_with_what_to_do(tmp_path: Path) -> None:
    """A fixture directory with a scenario but no recording is a failed check naming the missing file and the
    command that records it, not a crash; `omen fixtures check` exits 1."""
    from typer.testing import CliRunner

    from omen_cli import app

    fresh = tmp_path / "fixtures" / "duel"
    fresh.mkdir(parents=True)
    shutil.copy(ROOT / "duel-interrupt-pass-dodge-miss" / "scenario.toml", fresh / "scenario.toml")
    result = check(fresh)
    assert not result.ok and result.problems == (
        "fight.jsonl cannot be read (No such file or directory): record it with `omen fixtures record duel`",)
    run = CliRunner().invoke(app, ["fixtures", "check", "--dir", str(tmp_path / "fixtures")])
    assert run.exit_code == 1 and "record it with" in run.output and "Traceback" not in run.output
