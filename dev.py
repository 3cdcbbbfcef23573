#!/usr/bin/env python3
"""Set up a local virtual environment and run omen's main job or its tests.

Usage (needs only Python >= 3.11 and pip):

    python3 dev.py demo [ARGS...]   # set up .venv if needed, then run `omen demo`
    python3 dev.py test [ARGS...]   # set up .venv if needed, then run the test suite
    python3 dev.py omen ARGS...     # any other omen command inside .venv

The environment is reinstalled whenever pyproject.toml changes (a stamp file
in .venv records the hash of the pyproject it was built from).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
STAMP = VENV / ".omen-installed"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")


def _wanted_stamp() -> str:
    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()


def ensure_venv() -> None:
    """Create .venv and install omen with its test extras, unless already current."""
    if STAMP.exists() and STAMP.read_text() == _wanted_stamp():
        return
    if not (BIN / "python").exists():
        print("dev.py: creating .venv", file=sys.stderr)
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    print("dev.py: installing omen and its test dependencies into .venv", file=sys.stderr)
    pip = [str(BIN / "python"), "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "install", "-e", f"{ROOT}[test]"], check=True)
    STAMP.write_text(_wanted_stamp())


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"demo", "test", "omen"}:
        print(__doc__, file=sys.stderr)
        return 2
    ensure_venv()
    job, rest = argv[0], argv[1:]
    if job == "test":
        cmd = [str(BIN / "python"), "-m", "pytest", *rest]
    elif job == "demo":
        cmd = [str(BIN / "omen"), "demo", *rest]
    else:
        cmd = [str(BIN / "omen"), *rest]
    return subprocess.run(cmd, cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
