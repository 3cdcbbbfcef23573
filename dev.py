#!/usr/bin/env python3
"""Set up a local virtual environment and run omen's main job or its tests.

Usage (needs only Python >= 3.11 and pip):

    python3 dev.py demo [ARGS...]   # set up .venv if needed, then run `omen demo`
    python3 dev.py test [ARGS...]   # set up .venv if needed, then run the test suite
    python3 dev.py omen ARGS...     # any other omen command inside .venv

`demo` and `omen` install omen alone; `test` also installs the test tools
(pytest, hypothesis, mypy, ruff, playwright...). The environment is
reinstalled whenever pyproject.toml changes or a job needs more than it holds
(a stamp file in .venv records the hash of the pyproject it was built from and
the extras installed).
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


#: How omen is installed into .venv: editable, as a path entry (a ``.pth`` naming the checkout) rather than
#: setuptools' default import finder, which mypy cannot follow: a tool type-checked with ``.venv/bin/mypy``
#: from another folder finds ``omen_core`` (part of the stamp, so a .venv installed otherwise is reinstalled).
EDITABLE = ("--config-settings", "editable_mode=compat")


def _pyproject_hash() -> str:
    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + " ".join(EDITABLE).encode()).hexdigest()


def ensure_venv(test: bool) -> None:
    """Create .venv and install omen (with its test extras for the tests), unless already current."""
    stamp = STAMP.read_text().split() if STAMP.exists() else []
    current = bool(stamp) and stamp[0] == _pyproject_hash()
    if current and (not test or "test" in stamp[1:]):
        return
    if not (BIN / "python").exists():
        print("dev.py: creating .venv", file=sys.stderr)
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    test = test or (current and "test" in stamp[1:])
    print(f"dev.py: installing omen{' and its test tools' if test else ''} into .venv", file=sys.stderr)
    pip = [str(BIN / "python"), "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "install", *EDITABLE, "-e", f"{ROOT}[test]" if test else str(ROOT)], check=True)
    STAMP.write_text(_pyproject_hash() + (" test" if test else ""))


def _parallel(rest: list[str]) -> list[str]:
    """pytest-xdist's options: the suite on every CPU, idle workers taking tests from busy ones (``worksteal``),
    unless the caller chose (``-n``, ``--numprocesses``, ``-p no:xdist``) or asked for a debugger (``--pdb``)."""
    chosen = any(a in ("-n", "--numprocesses", "--pdb", "no:xdist") or a.startswith(("-n", "--numprocesses="))
                 for a in rest)
    return [] if chosen else ["-n", "auto", "--dist", "worksteal"]


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"demo", "test", "omen"}:
        print(__doc__, file=sys.stderr)
        return 2
    job, rest = argv[0], argv[1:]
    ensure_venv(test=job == "test")
    if job == "test":
        cmd = [str(BIN / "python"), "-m", "pytest", *_parallel(rest), *rest]
    elif job == "demo":
        cmd = [str(BIN / "omen"), "demo", *rest]
    else:
        cmd = [str(BIN / "omen"), *rest]
    return subprocess.run(cmd, cwd=ROOT, check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
