"""The engine's code, its tests and its benchmarks type-check (mypy --strict) and lint (ruff) clean: the test command
runs both."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: Where the project's Python lives: the packages, the tests, the benchmarks, the examples, the test set-up and dev.py.
CHECKED = ["omen_core", "omen_replay", "omen_server", "omen_cli", "tests", "benchmarks", "examples", "conftest.py",
           "dev.py"]


def run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, timeout=600)


def python_files() -> list[Path]:
    """Every Python file under CHECKED."""
    return [f for top in CHECKED for f in ([ROOT / top] if top.endswith(".py") else (ROOT / top).rglob("*.py"))]


def test_mypy_checks_everything_in_one_run() -> None:
    """pyproject.toml's [tool.mypy] names every place the project's Python lives, so that a bare ``mypy`` (this test,
    a developer, CI) checks the tests and the benchmarks with the packages, in one run."""
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]["files"] == CHECKED


@pytest.mark.slow
def test_mypy_strict_is_clean_on_the_packages_the_tests_and_the_benchmarks() -> None:
    """mypy --strict finds nothing in omen_core, omen_replay, omen_server, omen_cli, the tests, the benchmarks, the
    examples, conftest.py and dev.py, and it read every one of their files."""
    result = run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr
    found = re.search(r"Success: no issues found in (\d+) source files", result.stdout)
    assert found is not None, result.stdout
    assert int(found[1]) == len(python_files()), result.stdout


def test_ruff_is_clean_on_the_packages_the_tests_and_the_benchmarks() -> None:
    """ruff (the [tool.ruff] section of pyproject.toml) finds nothing in omen_core, omen_replay, omen_server, omen_cli,
    the tests, the benchmarks and the examples."""
    result = run("ruff", "check", *CHECKED)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_every_python_example_in_the_docs_type_checks_as_copied(tmp_path: Path) -> None:
    """README: omen ships its types, so `mypy --strict` on a tool built on it is clean: every ```python block of the
    README and docs/ is, copied as it stands (a block that goes on from the one before it, as docs/live.md's "From
    Python" blocks go on from the first's `fight`, after it), type-checked strict (two failed: `end_turn` given
    `state.turn`, which may be None, and an unannotated function: a tester embedding omen)."""
    copied = []  # (its own mypy cache: a run beside the project's own mypy test writes none of that one's)
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        blocks = re.findall(r"```python\n(.*?)```", doc.read_text(), re.S)
        kept = ""
        for i, block in enumerate(blocks):
            kept = kept + "\n" + block if "fight" in block and "fight =" not in block and kept else block
            path = tmp_path / f"{doc.stem.replace('-', '_')}_{i}.py"
            path.write_text(kept)
            copied.append(str(path))
    assert len(copied) >= 8, copied
    result = run("mypy", "--strict", "--no-warn-unused-configs", "--cache-dir", str(tmp_path / "cache"), *copied)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_file_a_package_holds_besides_its_python_is_in_its_package_data() -> None:
    """Every file of omen's packages that is not Python (the rulesets, templates, the page's script, the engine's
    words, the OpenAPI examples) matches a pattern of pyproject.toml's package-data, so an installed omen holds
    it (the OpenAPI examples, read at import, were left out of a wheel: a reviewer)."""
    from fnmatch import fnmatch

    shipped = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    missing = [f"{package}/{path}" for package in ("omen_core", "omen_replay", "omen_server", "omen_cli")
               for path in (p.relative_to(ROOT / package).as_posix() for p in (ROOT / package).rglob("*")
                            if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts)
               if not any(fnmatch(path, pattern) for pattern in shipped.get(package, ()))]
    assert missing == [], missing
