"""scripts/live-fight.sh plays a whole fight from the shell (omen run, omen do with typed-in faces, an undo, omen
verify); these tests run it as the docs show it and check the log it leaves."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from omen_cli import app

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "live-fight.sh"
BASH = shutil.which("bash")

pytestmark = pytest.mark.skipif(BASH is None, reason="bash is not available to run scripts/live-fight.sh")

runner = CliRunner()


def omen(*args: str) -> Result:
    """Run the CLI in-process and return the result."""
    return runner.invoke(app, list(args))


def run_script(work: Path) -> subprocess.CompletedProcess[str]:
    """Run the script with OMEN set to this Python's omen and the repository on PYTHONPATH."""
    env = {**os.environ, "OMEN": f"{shlex.quote(sys.executable)} -m omen_cli", "PYTHON": sys.executable,
           "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    assert BASH is not None
    return subprocess.run([BASH, str(SCRIPT), str(work)], env=env, capture_output=True, text=True, timeout=600,
                          check=False)


@pytest.fixture(scope="module")
def fight(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    """One run of the script in a fresh work dir, and the log it wrote."""
    work = tmp_path_factory.mktemp("live-fight")
    return run_script(work), work / "ford.jsonl"


def test_script_plays_the_fight_and_exits_0(fight: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    """The script exits 0, echoing each step as the command a GM would type, the refused dice-less command too."""
    done, _log = fight
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    said = " ".join(done.stdout.split())
    for words in ("$ omen run", "$ omen do", "$ omen undo", "$ omen verify", "roll those dice",
                  "(the fight waits for: interrupt vesh)", "The fight is over: raiders are defeated",
                  "verified fight 'ford'"):
        assert words in said
    assert "this command rolls 3 dice and 0 faces were given" in " ".join(done.stderr.split())


def test_final_log_verifies_clean(fight: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    """`omen verify --json` finds the log clean, its head the last line's."""
    _done, log = fight
    result = omen("verify", str(log), "--json")
    report = json.loads(result.stdout)
    last = json.loads(log.read_text().splitlines()[-1])
    assert result.exit_code == 0 and report["clean"] is True
    assert report["head"] == {"seq": last["seq"], "hash": last["hash"]}


def test_the_undo_is_in_the_log(fight: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    """The misread die's undo is recorded (the voided events stay in the log) and verify lists it."""
    _done, log = fight
    events = [json.loads(line)["event"] for line in log.read_text().splitlines()]
    undos = [e for e in events if e["type"] == "undone"]
    assert [u["reason"] for u in undos] == ["misread Vesh's d8: it showed a 3"]
    assert undos[0]["from_seq"] <= undos[0]["to_seq"]
    report = json.loads(omen("verify", str(log), "--json").stdout)
    assert [u["reason"] for u in report["undone"]] == ["misread Vesh's d8: it showed a 3"]


def test_the_fight_ended(fight: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    """`omen replay --json` shows the fight ended: the raiders defeated, Vesh at 0 HP."""
    _done, log = fight
    result = omen("replay", str(log), "--json")
    end = json.loads(result.stdout)
    assert result.exit_code == 0 and end["ended"] is True
    assert (end["end_reason"], end["end_side"]) == ("defeated", "raiders")
    standing = {c["id"]: (c["hp"], c["conditions"]) for c in end["combatants"]}
    assert standing["vesh"] == (0, {"Dying": 1}) and standing["kael"][0] > 0


def test_script_refuses_to_overwrite_a_log(tmp_path: Path) -> None:
    """Run where its log already exists, the script stops (exit 2) and leaves the log alone."""
    log = tmp_path / "ford.jsonl"
    log.write_text("mine\n")
    done = run_script(tmp_path)
    assert done.returncode == 2 and "exists already" in done.stderr and log.read_text() == "mine\n"
