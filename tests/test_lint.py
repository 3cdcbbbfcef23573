"""The engine's own code type-checks (mypy --strict) and lints (ruff) clean: the test command runs both."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_mypy_strict_is_clean_on_the_packages() -> None:
    """mypy --strict (the [tool.mypy] section of pyproject.toml) finds nothing in omen_core, omen_replay,
    omen_server and omen_cli."""
    result = run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_is_clean_on_the_packages_the_tests_and_the_benchmarks() -> None:
    """ruff (the [tool.ruff] section of pyproject.toml) finds nothing in omen_core, omen_replay, omen_server, omen_cli,
    the tests and the benchmarks."""
    result = run("ruff", "check", "omen_core", "omen_replay", "omen_server", "omen_cli", "tests", "benchmarks",
                 "dev.py", "conftest.py")
    assert result.returncode == 0, result.stdout + result.stderr
