"""Tests for omen_replay.fixtures: golden fights replay exactly, and a changed rule is caught at its first
divergence."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from omen_core.events import SCHEMA_VERSION, decode_line
from omen_replay.fixtures import check, fixture_dirs, orphans, record

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


def test_the_audit_finding_count_is_omen_verifys(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/fixtures.md (the check audits the recorded log, omen verify's checks): every roll total 100 higher makes
    3 integrity findings in ember-ford's log, as omen verify counts them; its 2 undo re-rolls, notices, are not
    counted (it said 5)."""
    from omen_core import derive
    from omen_core.rules.checks import roll_total as real

    monkeypatch.setattr(derive, "roll_total", lambda face, bonus, level=0, modifiers=(): real(face, bonus, level,
                                                                                            modifiers) + 100)
    result = check(ROOT / "ember-ford")
    assert not result.ok and not result.broken
    assert result.problems[0].startswith("the recorded log has 3 audit finding(s): seq ")
    assert result.problems[0].count(" [") == 3 and "more (omen verify lists them)" not in result.problems[0]


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
    made = record(copy)
    change, count, was = made.change, made.events, made.was
    assert change is not None and count > 0 and change.seq > 0 and was == "changed"


def test_record_says_whether_the_end_state_changed_too(tmp_path: Path) -> None:
    """docs/fixtures.md: `omen fixtures record` says the first event that changed and then whether the end state
    (fingerprint.json) changed too, at its first field with both values: Kael's armor rating 2 raised to 3
    (armor mitigates the blows he takes, C13) ends with him at 11 HP, not 10; an undo's reason reworded (an event
    changed, no number) keeps the end state."""
    from typer.testing import CliRunner

    from omen_cli import app

    root = tmp_path / "fx"
    shutil.copytree(ROOT / "ember-ford", root / "ember-ford")
    sheet = root / "ember-ford" / "sheets" / "kael.toml"
    text = sheet.read_text()
    assert "\nrating = 2\n" in text
    sheet.write_text(text.replace("\nrating = 2\n", "\nrating = 3\n", 1))
    run = CliRunner().invoke(app, ["fixtures", "record", "ember-ford", "--dir", str(root)])
    assert run.exit_code == 0, run.output
    said = run.stdout.splitlines()
    assert said[0].startswith("recorded ember-ford: ") and "; changed from seq 2, $.event.sheet.armor.rating: " \
        "was 2, now 3" in said[0]
    assert said[1] == "  the end state changed too (fingerprint.json): at $.combatants[0].hp, was 10, now 11"
    scenario = root / "ember-ford" / "scenario.toml"
    text = scenario.read_text()
    scenario.write_text(text.replace('reason = "vesh was', 'reason = "Vesh was', 1))
    run = CliRunner().invoke(app, ["fixtures", "record", "ember-ford", "--dir", str(root)])
    assert run.exit_code == 0, run.output
    assert "; changed from seq " in run.stdout
    assert run.stdout.splitlines()[1:] == ["  the end state is the same (fingerprint.json unchanged)"]


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


@pytest.mark.parametrize("spoil", ["syntax", "sheet"])
def test_a_scenario_that_cannot_be_loaded_is_broken_not_a_regression(tmp_path: Path, spoil: str) -> None:
    """A fixture whose scenario.toml is not valid TOML, or names a sheet file that is gone, could not be
    checked at all: BROKEN, exit 2, the loader's error (file, line) and what to do (docs/fixtures.md); it was FAIL,
    exit 1, "expected N events, got 0 events", which CI reads as the rules no longer reproducing it (a tester)."""
    from typer.testing import CliRunner

    from omen_cli import app

    fx = tmp_path / "fx"
    shutil.copytree(ROOT / "party-abilities", fx / "party")
    scenario = fx / "party" / "scenario.toml"
    text = scenario.read_text(encoding="utf-8")
    if spoil == "syntax":
        scenario.write_text(text + "garbage = [\n", encoding="utf-8")
    else:
        (fx / "party" / "sheets" / "bram.toml").unlink()
    result = check(fx / "party")
    assert result.broken and not result.ok and len(result.problems) == 1
    assert result.problems[0].startswith(f"{scenario} cannot be loaded (")
    assert result.problems[0].endswith("): mend the file the error names, then check again")
    assert ("not valid TOML" if spoil == "syntax" else "bram.toml") in result.problems[0]
    run = CliRunner().invoke(app, ["fixtures", "check", "--dir", str(fx)])
    assert run.exit_code == 2 and "BROKEN party" in run.output and "FAIL" not in run.output


def test_a_recording_without_its_scenario_is_broken(tmp_path: Path) -> None:
    """A fixture directory that lost its scenario.toml is reported broken (exit 2), not skipped unseen, saying what
    to do (docs/fixtures.md: each broken fixture says what and how; it cannot be recorded again without its
    scenario, and said nothing of what to do)."""
    from typer.testing import CliRunner

    from omen_cli import app

    shutil.copytree(ROOT / "ember-ford", tmp_path / "fx" / "ember-ford")
    shutil.copytree(ROOT / "duel-interrupt-pass-dodge-miss", tmp_path / "fx" / "duel")
    (tmp_path / "fx" / "duel" / "scenario.toml").unlink()
    run = CliRunner().invoke(app, ["fixtures", "check", "--dir", str(tmp_path / "fx")])
    said = run.output.replace("\n", "")  # the console wraps long lines
    assert run.exit_code == 2 and "BROKEN duel" in said and "scenario.toml is missing" in said
    problem = f"{tmp_path / 'fx' / 'duel' / 'scenario.toml'} is missing: a fixture holds scenario.toml, fight.jsonl " \
              "and fingerprint.json, and is recorded from its scenario, so it cannot be recorded again without it: " \
              f"restore scenario.toml (from version control), or remove {tmp_path / 'fx' / 'duel'} if it is no " \
              "fixture any more"
    assert orphans(tmp_path / "fx")[0].problems == (problem,)
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
    assert record(duel).was == "new" and record(duel).was == "unchanged"
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


def _damage(kind: str, log: Path) -> None:
    """Damage a recorded log the way ``kind`` says: a line missing, repeated or out of order, a torn last batch, a
    newer schema, the lines from 20 on given to another fight."""
    lines = log.read_bytes().splitlines(keepends=True)
    if kind == "missing":
        del lines[9]
    elif kind == "repeated":
        lines.append(lines[-1])
    elif kind == "swapped":
        lines[10], lines[11] = lines[11], lines[10]
    elif kind == "torn":
        del lines[-1]
    elif kind == "newer":
        lines = [line.replace(b'"schema_version":%d' % SCHEMA_VERSION, b'"schema_version":99') for line in lines]
    else:
        lines[19:] = [re.sub(rb'"fight_id":"[^"]*"', b'"fight_id":"another"', line) for line in lines[19:]]
    log.write_bytes(b"".join(lines))


@pytest.mark.parametrize(("kind", "first"), [
    ("missing", "seq 11, line 10 [chain] seq 11 where 10 was expected (events missing, repeated or out of order)"),
    ("repeated", "seq 38, line 39 [chain] seq 38 where 39 was expected (events missing, repeated or out of order)"),
    ("swapped", "seq 11, line 12 [chain] seq 11 where 13 was expected (events missing, repeated or out of order)"),
    ("torn", "seq 37, line 37 [batch] torn batch: the command starting at seq 33 wrote 5 of its 6 events (a crash "
             "mid-write; omen repair removes it)"),
    ("newer", None),
    ("another", "seq 20, line 20 [chain] event of fight 'another' in the log of fight 'duel-at-dawn'"),
])
def test_a_recording_the_walk_cannot_replay_is_broken_and_the_others_go_on(tmp_path: Path, kind: str,
                                                                            first: str | None) -> None:
    """A fixture whose fight.jsonl has a line missing, repeated or out of order, a torn last batch, a newer schema
    or another fight's events is BROKEN with the audit's findings, each as omen verify says it (seq, line, rule:
    docs/fixtures.md; it was a traceback that ended the run); the fixture beside it is still checked; exit 2, and
    --json says the same."""
    import json

    from typer.testing import CliRunner

    from omen_cli import app

    shutil.copytree(ROOT / "duel-interrupt-pass-dodge-miss", tmp_path / "fx" / "bad")
    shutil.copytree(ROOT / "duel-interrupt-pass-dodge-miss", tmp_path / "fx" / "good")
    _damage(kind, tmp_path / "fx" / "bad" / "fight.jsonl")
    result = check(tmp_path / "fx" / "bad")
    assert result.broken and not result.ok
    assert result.problems[0].startswith(f"{tmp_path / 'fx' / 'bad' / 'fight.jsonl'} cannot ")
    if first is None:
        assert f"schema version 99 is newer than {SCHEMA_VERSION}: upgrade omen to read it" in result.problems[0]
    else:
        assert result.problems[1] == first
    run = CliRunner().invoke(app, ["fixtures", "check", "--dir", str(tmp_path / "fx")])
    assert run.exit_code == 2 and "Traceback" not in run.output, run.output
    assert "BROKEN bad" in run.output and "ok   good (38 events)" in run.output
    run = CliRunner().invoke(app, ["fixtures", "check", "--dir", str(tmp_path / "fx"), "--json"])
    results = {r["name"]: r for r in json.loads(run.stdout)}
    assert run.exit_code == 2 and results["bad"]["broken"] and results["good"]["ok"]
    assert results["bad"]["problems"] == list(result.problems)


@pytest.mark.parametrize("which", ["fight.jsonl", "fingerprint.json"])
@pytest.mark.parametrize("special", ["device", "fifo"])
def test_a_device_or_a_pipe_is_broken_at_once(tmp_path: Path, which: str, special: str) -> None:
    """fight.jsonl or fingerprint.json that is /dev/zero (through a link out of the folder) or a FIFO nobody writes
    is BROKEN, unread (it hung, or filled memory): the link not followed, the FIFO "cannot be read (not a regular
    file)", exit 2."""
    import os

    from typer.testing import CliRunner

    from omen_cli import app

    fixture = tmp_path / "fx" / "x"
    shutil.copytree(ROOT / "duel-interrupt-pass-dodge-miss", fixture)
    (fixture / which).unlink()
    if special == "device":
        (fixture / which).symlink_to("/dev/zero")
        said = f"{fixture / which} is a symbolic link to /dev/zero, outside the fixture's folder {fixture}: omen " \
               "does not read through it (remove the link)"
    else:
        os.mkfifo(fixture / which)
        said = f"{fixture / which} cannot be read (not a regular file)"
    assert check(fixture).problems == (
        f"{said}: record it again with `omen fixtures record x --dir {fixture.parent}` if its scenario is right",)
    run = CliRunner().invoke(app, ["fixtures", "check", "--dir", str(tmp_path / "fx")])
    assert run.exit_code == 2 and "BROKEN x" in run.output


@pytest.mark.parametrize("which", ["fight.jsonl", "fingerprint.json"])
def test_record_refuses_a_link_out_of_the_fixture(tmp_path: Path, which: str) -> None:
    """A fixture's fight.jsonl or fingerprint.json that links to a file outside its folder is refused (exit 2, one
    line), the file outside untouched (record wrote through it); a link to a file inside the folder is
    followed."""
    from typer.testing import CliRunner

    from omen_cli import app

    fixture = tmp_path / "fx" / "x"
    fixture.mkdir(parents=True)
    shutil.copy(ROOT / "duel-interrupt-pass-dodge-miss" / "scenario.toml", fixture / "scenario.toml")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (fixture / which).symlink_to(Path("..") / ".." / "victim.txt")
    run = CliRunner().invoke(app, ["fixtures", "record", "x", "--dir", str(tmp_path / "fx")])
    assert run.exit_code == 2 and run.stdout == "" and len(run.stderr.splitlines()) == 1
    assert run.stderr.startswith(f"omen: error: {fixture / which} is a symbolic link to {victim}, outside the "
                                 "fixture's folder")
    assert victim.read_text() == "precious\n"
    assert sorted(p.name for p in fixture.iterdir()) == sorted(["scenario.toml", which])
    (fixture / which).unlink()
    (fixture / "kept").write_text("")
    (fixture / which).symlink_to("kept")
    assert CliRunner().invoke(app, ["fixtures", "record", "x", "--dir", str(tmp_path / "fx")]).exit_code == 0
    assert (fixture / "kept").stat().st_size > 0


@pytest.mark.parametrize("which", ["fight.jsonl", "fingerprint.json"])
def test_check_does_not_read_through_a_link_out_of_the_fixture(tmp_path: Path, which: str) -> None:
    """docs/stores.md (no command follows a symbolic link out): a fixture's fight.jsonl or fingerprint.json that
    links to a good copy outside its folder is BROKEN, not read (check read through it); a link to a file inside
    the folder is followed and the fixture passes."""
    fixture = tmp_path / "fx" / "x"
    shutil.copytree(ROOT / "duel-interrupt-pass-dodge-miss", fixture)
    outside = tmp_path / "outside"
    shutil.move(fixture / which, outside)
    (fixture / which).symlink_to(outside)
    result = check(fixture)
    assert not result.ok and result.problems[0].startswith(
        f"{fixture / which} is a symbolic link to {outside}, outside the fixture's folder")
    (fixture / which).unlink()
    shutil.move(outside, fixture / "kept")
    (fixture / which).symlink_to("kept")
    assert check(fixture).ok


@pytest.mark.parametrize("name", ["../../victim3", "/abs/victim", "a/b", "..", "."])
def test_record_refuses_a_name_that_is_a_path(tmp_path: Path, name: str) -> None:
    """NAME is one folder under --dir: a path (``../../victim3``, an absolute one) would record outside --dir, so
    it is refused in one line, exit 2, nothing written."""
    from typer.testing import CliRunner

    from omen_cli import app

    (tmp_path / "fx").mkdir()
    run = CliRunner().invoke(app, ["fixtures", "record", name, "--dir", str(tmp_path / "fx")])
    assert run.exit_code == 2 and len(run.stderr.splitlines()) == 1
    assert f"fixture name {name!r} is not a folder name: NAME is one folder under --dir" in run.stderr
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["fx"]


def test_record_reveals_a_seeded_fights_seed_at_its_end_as_run_does(tmp_path: Path) -> None:
    """A seeded scenario that ends the fight without a reveal_seed is recorded with the reveal appended, as ``omen
    run`` appends it (C42: a seed is revealed at the end of a fight unless the GM chooses otherwise; it recorded
    40 events and left its 6 seeded dice unchecked); the recording checks clean and its audit checks every die."""
    from omen_replay.verify import verify

    duel = tmp_path / "fx" / "duel"
    duel.mkdir(parents=True)
    text = (ROOT / "duel-interrupt-pass-dodge-miss" / "scenario.toml").read_text()
    seeded = re.sub(r"\ndice = \[[^\]]*\]", "", text.replace('dice = "scripted"',
                                                              f'dice = "seeded"\nseed = "{"ab" * 32}"', 1))
    (duel / "scenario.toml").write_text(seeded + '\n[[commands]]\ncommand = "end_fight"\nnote = "enough"\n')
    from omen_core.events import CommandIssued, SeedRevealed, decode_line

    made = record(duel)
    change, count, was = made.change, made.events, made.was
    events = [decode_line(line) for line in (duel / "fight.jsonl").read_bytes().splitlines()]
    assert (change, count, was) == (None, 42, "new") and len(events) == 42
    assert isinstance(events[-2].event, CommandIssued) and isinstance(events[-1].event, SeedRevealed)
    report = verify(events)
    assert report.clean and report.seed_revealed and report.seeded_checked == report.seeded_dice == 6
    assert check(duel).ok


def _findings_verify_prints(log: Path) -> list[str]:
    """The findings ``omen verify LOG`` prints, one a line (the console's wrapping undone)."""
    from typer.testing import CliRunner

    from omen_cli import app

    said = CliRunner().invoke(app, ["verify", str(log)], env={"COLUMNS": "1000"})
    assert said.exit_code == 1, said.output
    return [line.strip() for line in said.stdout.splitlines()[1:]]


@pytest.mark.parametrize("edit", ["recorded_at", "last hash"])
def test_a_hash_chain_that_does_not_hold_is_broken_not_a_regression(tmp_path: Path, edit: str) -> None:
    """docs/fixtures.md (exit 1: the rules no longer reproduce it; exit 2: its fight.jsonl cannot be replayed): a
    line edited by hand and not re-sealed (its recorded_at 0 -> 1), or the last line's hash changed, is a hash
    chain omen replay refuses: BROKEN, exit 2, with the audit's finding as omen verify says it (it was FAIL, exit
    1, "the recorded log has 1 audit finding(s)")."""
    from typer.testing import CliRunner

    from omen_cli import app

    copy = tmp_path / "fx" / "duel"
    shutil.copytree(ROOT / "duel-interrupt-pass-dodge-miss", copy)
    log = copy / "fight.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    if edit == "recorded_at":
        lines[9] = lines[9].replace(b'"recorded_at":0', b'"recorded_at":1', 1)
    else:
        lines[-1] = lines[-1][:-4] + (b"0" if lines[-1][-4:-3] != b"0" else b"1") + lines[-1][-3:]
    log.write_bytes(b"".join(lines))
    seq = 10 if edit == "recorded_at" else 38
    said = f"seq {seq}, line {seq} [chain] hash does not match the event's content"
    result = check(copy)
    assert result.broken and not result.ok and result.divergence is None
    assert result.problems == (
        f"{log} cannot be replayed (1 audit finding(s), below): record it again with `omen fixtures record duel "
        f"--dir {copy.parent}` if its scenario is right", said)
    assert _findings_verify_prints(log) == [said]
    run = CliRunner().invoke(app, ["fixtures", "check", "--dir", str(tmp_path / "fx")])
    assert run.exit_code == 2 and "BROKEN duel" in run.output and "FAIL" not in run.output
    assert CliRunner().invoke(app, ["replay", str(log)]).exit_code == 2


def test_an_empty_recording_is_broken_not_a_regression(tmp_path: Path) -> None:
    """docs/fixtures.md (exit 2: its fight.jsonl is empty or cannot be replayed): an empty fight.jsonl, which omen
    replay and omen verify refuse (it holds no fight), is BROKEN saying so (it was FAIL, exit 1, "expected 0
    events, got 38 events")."""
    copy = tmp_path / "fx" / "duel"
    shutil.copytree(ROOT / "duel-interrupt-pass-dodge-miss", copy)
    (copy / "fight.jsonl").write_bytes(b"")
    result = check(copy)
    assert result.broken and not result.ok and result.divergence is None and result.problems == (
        f"{copy / 'fight.jsonl'} is empty: it holds no fight: record it again with `omen fixtures record duel --dir "
        f"{copy.parent}` if its scenario is right",)


def test_a_torn_last_line_lists_the_findings_omen_verify_gives(tmp_path: Path) -> None:
    """docs/fixtures.md (a broken fixture's audit findings follow, each `seq N [rule] what` as omen verify says
    it): a fight.jsonl whose last 30 bytes are cut off is BROKEN with the torn tail and the torn batch it leaves,
    the very lines omen verify prints (it said "cannot be read: Input data was truncated", the decoder's words)."""
    copy = tmp_path / "fx" / "duel"
    shutil.copytree(ROOT / "duel-interrupt-pass-dodge-miss", copy)
    log = copy / "fight.jsonl"
    whole = log.read_bytes()
    log.write_bytes(whole[:-30])
    torn = len(whole.splitlines()[-1]) + 1 - 30
    result = check(copy)
    assert result.broken and result.problems == (
        f"{log} cannot be replayed (2 audit finding(s), below): record it again with `omen fixtures record duel "
        f"--dir {copy.parent}` if its scenario is right",
        "seq 37, line 37 [batch] torn batch: the command starting at seq 33 wrote 5 of its 6 events (a crash "
        "mid-write; omen repair removes it)",
        f"seq 38, line 38 [format] torn tail: the last line ({torn} bytes) was cut off mid-write; earlier events are "
        "intact")  # by seq (docs/verify.md), the torn batch before the torn tail that left it
    assert _findings_verify_prints(log) == list(result.problems[1:])


def test_a_salt_not_the_fixtures_own_is_a_regression_and_record_says_changed(tmp_path: Path) -> None:
    """docs/fixtures.md, docs/events.md: a fixture's salts come from a public key, so its recording is the same
    byte for byte every time; one salt changed and the chain sealed again is FAIL naming that seq and ``$.salt``
    (check passed it, and record rewrote it saying "unchanged": a tester), and record says it changed."""
    from omen_core.events import decode_line, encode_line, seal

    copy = tmp_path / "duel"
    shutil.copytree(ROOT / "duel-interrupt-pass-dodge-miss", copy)
    log = copy / "fight.jsonl"
    events = [decode_line(line) for line in log.read_bytes().splitlines()]
    resealed, prev = [], events[0].prev_hash
    for e in events:
        salt = "00" * 16 if e.seq == 10 else e.salt
        made = seal(e.fight_id, e.seq, e.recorded_at, prev, e.event, e.batch, e.batch_size, salt)
        resealed.append(made)
        prev = made.hash
    log.write_bytes(b"".join(encode_line(e) + b"\n" for e in resealed))
    result = check(copy)
    assert not result.ok and not result.broken and result.divergence is not None
    assert (result.divergence.seq, result.divergence.field) == (10, "$.salt")
    again = record(copy)
    change, was, end_state = again.change, again.was, again.end_state
    assert was == "changed" and change is not None and change.field == "$.salt" and end_state is None
    assert check(copy).ok


def test_a_changed_sheet_file_is_named_beside_the_divergence(tmp_path: Path) -> None:
    """docs/fixtures.md: Kael's armor rating edited in the fixture's sheets/kael.toml: the check fails at Kael's
    joining, the field and both values, and names the sheet file that writes it (a maintainer read only "seq 2,
    $.event.sheet.armor.rating" and had to find the file: a tester)."""
    copy = tmp_path / "ember-ford"
    shutil.copytree(ROOT / "ember-ford", copy)
    sheet = copy / "sheets" / "kael.toml"
    text = sheet.read_text()
    rating = re.search(r"^rating = (\d+)$", text, re.M)
    assert rating is not None
    sheet.write_text(text.replace(rating.group(), f"rating = {int(rating.group(1)) + 1}", 1))
    result = check(copy)
    assert not result.ok and result.divergence is not None
    assert result.divergence.field == "$.event.sheet.armor.rating"
    assert Path(result.divergence.written) == sheet


def _record(*args: str) -> Any:
    """``omen fixtures record`` with ``args``, in process."""
    from typer.testing import CliRunner

    from omen_cli import app

    return CliRunner().invoke(app, ["fixtures", "record", *args], env={"COLUMNS": "400"})


def test_record_calls_a_log_damaged_by_hand_unreadable_not_a_change_of_the_rules(tmp_path: Path) -> None:
    """docs/fixtures.md: a line of fight.jsonl deleted by hand (``check`` calls the fixture broken) is re-recorded
    as an old recording that could not be replayed, saying why, not as a change from seq 21 (a maintainer read
    "changed from seq 41, $.seq: was 41, now 40" and thought the rules had moved)."""
    root = tmp_path / "fx"
    shutil.copytree(ROOT / "duel-interrupt-pass-dodge-miss", root / "duel")
    log = root / "duel" / "fight.jsonl"
    recorded = log.read_bytes()
    lines = recorded.splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:19] + lines[20:]))
    assert check(root / "duel").broken
    run = _record("duel", "--dir", str(root))
    assert run.exit_code == 0, run.output
    assert run.stdout.splitlines() == [
        "recorded duel: 38 events (the old recording could not be replayed (seq 21, line 20 [chain] seq 21 where 20 "
        "was expected (events missing, repeated or out of order)): replaced)"]
    assert log.read_bytes() == recorded and check(root / "duel").ok


def test_record_says_what_was_wrong_with_the_old_fingerprint(tmp_path: Path) -> None:
    """An end state edited in fingerprint.json, its sha256 left (broken), is said and written again, not called
    "unchanged" alone; edited and re-hashed, the events unchanged, the old end state and the new are said, not
    "unchanged" then "changed too" (a maintainer read both)."""
    import hashlib
    import json

    root = tmp_path / "fx"
    shutil.copytree(ROOT / "duel-interrupt-pass-dodge-miss", root / "duel")
    where = root / "duel" / "fingerprint.json"
    sound = where.read_bytes()
    printed = json.loads(sound)
    hp = printed["summary"]["combatants"][0]["hp"]
    printed["summary"]["combatants"][0]["hp"] = hp + 1
    where.write_text(json.dumps(printed))
    run = _record("duel", "--dir", str(root))
    assert run.stdout.splitlines() == [
        "recorded duel: 38 events (unchanged)",
        f"  the old fingerprint.json was broken ({where}: its summary does not match its sha256 (one of them was "
        "edited)): written again"], run.output
    assert where.read_bytes() == sound
    printed["sha256"] = hashlib.sha256(json.dumps(printed["summary"], sort_keys=True,
                                                  separators=(",", ":")).encode()).hexdigest()
    where.write_text(json.dumps(printed))
    assert check(root / "duel").problems and not check(root / "duel").broken
    run = _record("duel", "--dir", str(root))
    assert run.stdout.splitlines()[1] == (
        "  the events are the same, but the old fingerprint.json recorded another end state (fingerprint.json): at "
        f"$.combatants[0].hp, was {hp + 1}, now {hp}"), run.output


def test_record_takes_several_names_or_all_and_records_the_others_past_a_refusal(tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch
                                                                                ) -> None:
    """docs/fixtures.md: ``record --all`` records every fixture under ``--dir`` in turn; with ties going to the
    attacker, the fixture whose script no longer fits is refused and left as it was, said, the others recorded,
    exit 3 (written, but not all as asked: README's exit codes), saying what was written; names and ``--all``
    together, or neither, are refused (exit 2)."""
    from omen_core.rules import attack

    root = tmp_path / "fx"
    for name in ("duel-interrupt-pass-dodge-miss", "crit-tie-crit-damage-cancelled-crit"):
        shutil.copytree(ROOT / name, root / name)
    tied = (root / "crit-tie-crit-damage-cancelled-crit" / "fight.jsonl").read_bytes()
    assert _record("--all", "--dir", str(root)).stdout.count("(unchanged)") == 2
    monkeypatch.setattr(attack, "hits", lambda attack_total, total_defense: attack_total >= total_defense)
    run = _record("crit-tie-crit-damage-cancelled-crit", "duel-interrupt-pass-dodge-miss", "--dir", str(root))
    assert run.exit_code == 3
    said = run.stdout.splitlines()
    assert said[0].startswith("refused crit-tie-crit-damage-cancelled-crit: crit-tie-crit-damage-cancelled-crit: "
                              "the scenario does not run under the current rules"), said
    assert said[-1].startswith("recorded duel-interrupt-pass-dodge-miss: 38 events"), said
    assert "1 of 2 fixtures refused (above), left as they were; the others are recorded" in run.stderr
    assert "but omen had written: fixture duel-interrupt-pass-dodge-miss recorded (38 events)" in run.stderr
    assert (root / "crit-tie-crit-damage-cancelled-crit" / "fight.jsonl").read_bytes() == tied
    for args in (["--all", "x"], []):
        refused = _record(*args, "--dir", str(root))
        assert refused.exit_code == 2 and "--all" in refused.stderr, refused.output


def test_a_change_of_the_core_ruleset_names_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/fixtures.md: every fight records the ruleset at its start, so a condition's number changed in the core
    ruleset moves a fixture at seq 1; the divergence names the file (omen's core ruleset; a scenario's own
    ``ruleset`` file where it names one), and ``check`` says it as recorded and now."""
    import msgspec
    from typer.testing import CliRunner

    from omen_cli import app
    from omen_core import content

    core = content.CORE_RULESET
    fatigued = core.conditions["Fatigued"]
    changed = msgspec.structs.replace(core, conditions={**core.conditions, "Fatigued": msgspec.structs.replace(
        fatigued, attribute_bonus=fatigued.attribute_bonus - 1)})
    monkeypatch.setattr(content, "CORE_RULESET", changed)
    d = check(ROOT / "duel-interrupt-pass-dodge-miss").divergence
    assert d is not None and (d.seq, d.field, d.written) == (
        1, "$.event.ruleset.conditions.Fatigued.attribute_bonus", "omen's core ruleset (omen_core/data/core.toml)")
    root = tmp_path / "fx"
    shutil.copytree(ROOT / "duel-interrupt-pass-dodge-miss", root / "duel")
    said = CliRunner().invoke(app, ["fixtures", "check", "--dir", str(root)], env={"COLUMNS": "400"}).stdout
    assert (f"first divergence at seq 1, $.event.ruleset.conditions.Fatigued.attribute_bonus: recorded "
            f"{fatigued.attribute_bonus}, now {fatigued.attribute_bonus - 1} (written in omen's core ruleset "
            "(omen_core/data/core.toml))") in said, said


def test_an_end_state_change_to_or_from_an_empty_field_names_the_field() -> None:
    """An empty list or object where the other fingerprint has nothing is a change at that field (it was found at
    no field: "at $, fingerprint.json says "<missing>", the log gives "<missing>"")."""
    from omen_replay.fixtures import end_state_change

    old = {"sha256": "a", "summary": {"combatants": [{"hp": 10}]}}
    new = {"sha256": "b", "summary": {"combatants": [{"hp": 10, "engaged_with": []}]}}
    assert end_state_change(old, new) == ("$.combatants[0].engaged_with", '"<missing>"', "[]")
    assert end_state_change(new, old) == ("$.combatants[0].engaged_with", "[]", '"<missing>"')


def test_a_fingerprint_leaves_out_how_long_conditions_last(tmp_path: Path) -> None:
    """docs/fixtures.md: the fingerprint is the end state less how long each condition lasts (the recorded log
    pins each tick), so a fingerprint recorded before the summary said it still holds: the fixture that ends with
    a Fatigued combatant has its ticks left in `omen replay --json` and not in fingerprint.json."""
    from omen_replay.fixtures import UNFINGERPRINTED, fingerprint
    from omen_replay.replay import replay_records, summarise

    directory = ROOT / "finesse-agi-extra-die-exhaustion"
    events = [decode_line(line) for line in (directory / "fight.jsonl").read_bytes().splitlines()]
    ticking = [c for c in summarise(replay_records(events)).combatants if c.remaining]
    assert ticking and ticking[0].remaining.get("Fatigued") == 2
    made = fingerprint(events)
    assert all(field not in c for c in made["summary"]["combatants"] for field in UNFINGERPRINTED)
    assert made == json.loads((directory / "fingerprint.json").read_text())
