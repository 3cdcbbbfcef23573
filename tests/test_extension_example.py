"""The extension tests (issue 27): a new window is one decision row, one hook handler and its tests; a new
command with a cost is its handler and its tests.

``tests/data/shield-wall.patch`` adds "Shield Wall" (when an adjacent ally is
attacked in melee, spend 1 Bonus Action to add your Block Rating to its
defense) the way docs/architecture.md says to add a window;
``tests/data/rallying-cry.patch`` adds "Rallying Cry" (an Action on one's
turn: each hurt ally within reach regains 1 HP) the way it says to add a
command. These tests apply each to a scratch copy of the working tree and check
it is at most three files, bumps no schema version, touches no fixture, passes
its own tests there, and leaves every golden fixture replaying to the same end
state.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: Each worked example: its patch, the extension id it registers, and its test file.
EXAMPLES = {"shield-wall": ("shield_wall", "tests/test_shield_wall.py"),
            "rallying-cry": ("rallying_cry", "tests/test_rallying_cry.py")}


def _files(patch: str) -> list[str]:
    """The paths a unified diff changes (its ``+++ b/...`` lines; a deletion's ``--- a/...``)."""
    return sorted({m.group(2) for m in re.finditer(r"^(\+\+\+ b|--- a)/(\S+)", patch, re.M)})


def _tracked() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout of omen (the scratch copy is made of the tracked files)")
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    return [p for p in out.stdout.decode().split("\0") if p]


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_the_patch_is_one_row_one_handler_and_its_tests(example: str) -> None:
    """Three files at most: the extension module (its decision row and term handler, or its action and handler),
    its tests; no event or command type, no schema version, no fixture, neither machine.py nor state.py."""
    patch = (ROOT / "tests" / "data" / f"{example}.patch").read_text()
    files = _files(patch)
    assert len(files) <= 3, files
    assert not any(f.startswith(("fixtures/", "docs/schema/")) for f in files), files
    assert not any(f in ("omen_core/events.py", "omen_core/commands.py", "omen_core/machine.py",
                         "omen_core/state.py") for f in files), files


@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_architecture_md_shows_the_patch_as_it_is(example: str) -> None:
    """docs/architecture.md's "How to add a window" and "How to add a command" show each patch's diff stat as
    `git apply --stat` gives it."""
    if shutil.which("git") is None:
        pytest.skip("needs git")
    patch = ROOT / "tests" / "data" / f"{example}.patch"
    stat = subprocess.run(["git", "apply", "--stat", str(patch)], cwd=ROOT, capture_output=True, text=True, check=True)
    assert stat.stdout.strip() in (ROOT / "docs" / "architecture.md").read_text()


@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_the_patched_copy_passes_its_tests_and_every_fixture_still_replays(example: str, tmp_path: Path) -> None:
    """Applied to a scratch copy, the extension's tests pass there, mypy --strict finds nothing in its files, and
    `omen fixtures check` is clean there."""
    patch = ROOT / "tests" / "data" / f"{example}.patch"
    kind, tests = EXAMPLES[example]
    scratch = tmp_path / "omen"
    for name in _tracked():
        source = ROOT / name
        if source.is_file():
            (scratch / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, scratch / name)
    applied = subprocess.run(["git", "apply", "--whitespace=nowarn", str(patch)], cwd=scratch, capture_output=True,
                             text=True)
    assert applied.returncode == 0, applied.stderr
    where = _run("-c", "import omen_core.extensions as e; print(e.__file__, sorted(e.BY_ID))", cwd=scratch)
    assert where.returncode == 0, where.stderr
    assert str(scratch) in where.stdout and f"'{kind}'" in where.stdout, where.stdout
    tested = _run("-m", "pytest", "-q", "-p", "no:cacheprovider", tests, cwd=scratch)
    assert tested.returncode == 0, tested.stdout[-4000:] + tested.stderr[-2000:]
    assert " passed" in tested.stdout and "failed" not in tested.stdout
    typed = _run("-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "mypy"), *_files(patch.read_text()),
                 cwd=scratch)
    assert typed.returncode == 0, typed.stdout[-4000:] + typed.stderr[-2000:]
    fixtures = _run("-m", "omen_cli", "fixtures", "check", cwd=scratch)
    assert fixtures.returncode == 0, fixtures.stdout[-4000:] + fixtures.stderr[-2000:]
